// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Error reporting, clocks and growable arrays shared by every module. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "util.h"

int verbose;

static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("hsbpf: ", fmt, ap);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("hsbpf: warning: ", fmt, ap);
	va_end(ap);
}

void debug(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vreport("hsbpf: debug: ", fmt, ap);
	va_end(ap);
}

u64 now_ns(int clockid)
{
	struct timespec ts;

	clock_gettime(clockid, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

int array__reserve(void **arr, size_t *cap, size_t n, size_t elem_size)
{
	size_t ncap;
	void *p;

	if (n <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < n)
		ncap *= 2;
	p = realloc(*arr, ncap * elem_size);
	if (!p)
		return -ENOMEM;
	memset((char *)p + *cap * elem_size, 0, (ncap - *cap) * elem_size);
	*arr = p;
	*cap = ncap;
	return 0;
}

int parse_u64(const char *s, u64 *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

size_t array__count_le(const void *base, size_t n, size_t size, size_t off, u64 v)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		u64 key;

		memcpy(&key, (const char *)base + mid * size + off, sizeof(key));
		if (key <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const char *path__base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path ? path : "";
}

static int regular_or_error(const struct stat *st)
{
	if (S_ISREG(st->st_mode))
		return 0;
	return S_ISDIR(st->st_mode) ? -EISDIR : -ENOTREGULAR;
}

int file__open_regular(const char *path)
{
	struct stat st;
	int fd, err;

	/* refused before opening: opening a device can have effects (a watchdog, a tape) */
	if (stat(path, &st))
		return -errno;
	err = regular_or_error(&st);
	if (err)
		return err;
	/* O_NONBLOCK: a FIFO put there meanwhile must not block the open */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
	} else {
		err = regular_or_error(&st);
		if (!err && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK))
			err = -errno;
	}
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

const char *file__strerror(int err)
{
	if (err < 0)
		err = -err;
	return err == ENOTREGULAR ? "not a regular file" : strerror(err);
}

int file__open_error(const char *path, int err)
{
	if (err == -ENOTREGULAR || err == -EISDIR)
		error("'%s' is not a regular file", path);
	else
		error("cannot open '%s': %s", path, strerror(-err));
	return err;
}

/* realpath of path's folder, then its last component */
static char *canonical(const char *path)
{
	const char *base = path__base(path);
	char *dir = base == path ? strdup(".") : strndup(path, base - path), *real, *out = NULL;

	if (!dir)
		return NULL;
	real = realpath(*dir ? dir : "/", NULL);
	if (real && asprintf(&out, "%s/%s", real, base) < 0)
		out = NULL;
	free(real);
	free(dir);
	return out;
}

bool file__same(const char *a, const char *b)
{
	struct stat sa, sb;
	char *ca, *cb;
	bool same;

	if (!stat(a, &sa) && !stat(b, &sb))
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	ca = canonical(a);
	cb = canonical(b);
	same = ca && cb ? !strcmp(ca, cb) : !strcmp(a, b);
	free(ca);
	free(cb);
	return same;
}

/* the first failed write's errno: stdio keeps only a flag, and once a failed flush has
 * dropped its buffer, a later flush succeeds with nothing to write */
static int stdout_errno;

/* standard output's writes, through a stream that notes the first failure's errno */
static ssize_t stdout_write(void *cookie, const char *buf, size_t len)
{
	size_t done = 0;

	(void)cookie;
	while (done < len) {
		ssize_t n = write(STDOUT_FILENO, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!stdout_errno)
				stdout_errno = n < 0 ? errno : EIO;
			return done ? (ssize_t)done : -1;
		}
		done += n;
	}
	return len;
}

static int stdout_close(void *cookie)
{
	(void)cookie;
	/* a file system may report a failed write only at close (NFS) */
	if (close(STDOUT_FILENO) && errno != EBADF && errno != EINTR) {
		if (!stdout_errno)
			stdout_errno = errno;
		return -1;
	}
	return 0;
}

void stdout__open(void)
{
	static const cookie_io_functions_t io = { .write = stdout_write, .close = stdout_close };
	FILE *f;

	/* a terminal keeps the real stream: line-buffered, and ncurses wants its descriptor */
	if (isatty(STDOUT_FILENO))
		return;
	f = fopencookie(NULL, "w", io);
	if (f)
		stdout = f;
}

int stdout__flush(void)
{
	int err = 0;

	if (fflush(stdout))
		err = errno;
	else if (!ferror(stdout))
		return 0;
	/* the first failure is the one to tell; a terminal's stream (not ours) may only
	 * have the flag */
	if (!stdout_errno)
		stdout_errno = err ? err : EIO;
	return -stdout_errno;
}

int stdout__close(void)
{
	int err = stdout__flush();

	/* fclose too, for the close. A stdout that was never open (EBADF) lost nothing if
	 * nothing was written to it */
	if (fclose(stdout) && !err && errno != EBADF)
		err = -(stdout_errno ? stdout_errno : errno);
	if (err)
		error("cannot write standard output: %s", strerror(-err));
	return err;
}
