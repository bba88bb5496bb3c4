// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Error reporting, clocks and growable arrays shared by every module. */
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "lib/util.h"

int verbose;

static bool stderr_nonblocking;
static u64 stderr_lost, stderr_grace_ns;

/* room in a non-blocking stderr, while the grace lasts */
static bool stderr_wait(void)
{
	struct pollfd pfd = { .fd = STDERR_FILENO, .events = POLLOUT };
	u64 t0 = now_ns(CLOCK_MONOTONIC), spent;
	int n;

	if (!stderr_grace_ns)
		return false;
	n = poll(&pfd, 1, (int)((stderr_grace_ns + 999999) / 1000000));
	spent = now_ns(CLOCK_MONOTONIC) - t0;
	stderr_grace_ns = spent < stderr_grace_ns ? stderr_grace_ns - spent : 0;
	return n > 0 || (n < 0 && errno == EINTR);
}

/* one write for a whole line, so that a full pipe drops lines, not pieces of them */
static void stderr_write(const char *buf, size_t len)
{
	fflush(stderr);
	while (len) {
		ssize_t n = write(STDERR_FILENO, buf, len);

		if (n > 0) {
			buf += n;
			len -= n;
		} else if (!(n < 0 && (errno == EINTR || (errno == EAGAIN && stderr_wait())))) {
			stderr_lost++;
			return;
		}
	}
}

/* messages quote paths, names and symbols from profiles and binaries: escaped whole */
static void vreport(const char *prefix, const char *fmt, va_list ap)
{
	char *msg = NULL, *line = NULL;
	size_t len = 0;
	FILE *f;

	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	f = open_memstream(&line, &len);
	if (f) {
		fputs(prefix, f);
		str__fputs_escaped(msg, f);
		fputc('\n', f);
	}
	if (f && !fclose(f)) {
		stderr_write(line, len);
	} else {
		fputs(prefix, stderr);
		fputs("(no memory for the message)\n", stderr);
	}
	free(line);
	free(msg);
}

int stderr__set_nonblocking(void)
{
	struct stat st;
	int fd;

	if (fstat(STDERR_FILENO, &st))
		return -errno;
	if (!S_ISFIFO(st.st_mode) || stderr_nonblocking)
		return 0;
	/* opening a pipe through /proc gives a new description of it: O_NONBLOCK is its own */
	fd = open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (dup2(fd, STDERR_FILENO) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);
	stderr_nonblocking = true;
	return 0;
}

void stderr__grace(unsigned ms)
{
	stderr_grace_ns = ms * 1000000ull;
}

u64 stderr__lost(void)
{
	return stderr_lost;
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

int usage_hint(const char *cmd)
{
	fprintf(stderr, "try '%s --help' for more information\n", cmd);
	return 2;
}

void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("hsbpf: ", fmt, ap);
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

/* digits of the given base only: strtoull alone also takes blanks and signs, and with base 0
 * reads 010 as 8, which turned '-p 0123' into pid 83 */
static int parse_digits(const char *s, int base, u64 *out)
{
	const char *digits = base == 16 ? "0123456789abcdefABCDEF" : "0123456789";
	unsigned long long v;
	char *end;

	if (!s || !*s || s[strspn(s, digits)])
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_u64(const char *s, u64 *out)
{
	/* an explicit 0x stays hex, as perf's -c takes it */
	if (s && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return parse_digits(s + 2, 16, out);
	return parse_digits(s, 10, out);
}

int parse_hex_u64(const char *s, u64 *out)
{
	return parse_digits(s, 16, out);
}

int parse_seconds(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	/* strtod alone takes " 1", "inf", "nan" and "0x1p4" */
	if (!s || !*s || s[strspn(s, "0123456789.eE+-")])
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno || !isfinite(v) || !(v >= min && v <= max))
		return -EINVAL;
	*out = v;
	return 0;
}

/* how many elements, sorted by a key of key_size bytes (4 or 8) at byte offset off, have
 * it below v, or at v too */
static size_t count_before(const void *base, size_t n, size_t size, size_t off, size_t key_size,
			   u64 v, bool or_equal)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const char *at = (const char *)base + mid * size + off;
		u64 key;

		if (key_size == sizeof(u32)) {
			u32 k;

			memcpy(&k, at, sizeof(k));
			key = k;
		} else {
			memcpy(&key, at, sizeof(key));
		}
		if (key < v || (or_equal && key == v))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t array__count_le(const void *base, size_t n, size_t size, size_t off, u64 v)
{
	return count_before(base, n, size, off, sizeof(u64), v, true);
}

size_t array__count_lt_u32(const void *base, size_t n, size_t size, size_t off, u32 v)
{
	return count_before(base, n, size, off, sizeof(u32), v, false);
}

/* the length of the printable character at s: 1 to 4 bytes of UTF-8, or 0 when s starts
 * with a control character or with bytes that are not UTF-8 (overlong, surrogate, beyond
 * U+10FFFF, cut short) */
size_t str__printable_len(const unsigned char *s)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n;

	if (c >= 0x20 && c < 0x7f)
		return 1;
	if (c < 0xc2 || c > 0xf4)	/* C0, DEL, a lone continuation, an overlong lead */
		return 0;
	if (c < 0xe0) {
		n = 2;
		if (c == 0xc2)
			lo = 0xa0;	/* U+0080 to U+009F: the C1 controls */
	} else if (c < 0xf0) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (c == 0xed)
			hi = 0x9f;	/* surrogates */
	} else {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;	/* overlong */
		else if (c == 0xf4)
			hi = 0x8f;	/* beyond U+10FFFF */
	}
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

bool str__shell_quote(const char *src, char *dst, size_t size, size_t *off)
{
	size_t n = 0, o = *off;
	bool plain = *src;

	for (const char *c = src; *c; c++) {
		plain &= (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
			 strchr("_@%+=:,./-", *c);
		n += *c == '\'' ? 4 : 1;
	}
	if (!plain)
		n += 2;
	if (o + n >= size)
		return false;
	if (plain) {
		memcpy(dst + o, src, n);
		o += n;
	} else {
		dst[o++] = '\'';
		for (const char *c = src; *c; c++) {
			if (*c == '\'') {
				memcpy(dst + o, "'\\''", 4);
				o += 4;
			} else {
				dst[o++] = *c;
			}
		}
		dst[o++] = '\'';
	}
	dst[o] = 0;
	*off = o;
	return true;
}

char *str__printf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

const char *str__escape(const char *src, char *dst, size_t size)
{
	const unsigned char *s = (const unsigned char *)(src ? src : "");
	size_t off = 0;

	if (!size)
		return dst;
	while (*s) {
		size_t n = str__printable_len(s);

		if (n) {
			if (off + n >= size)
				break;
			memcpy(dst + off, s, n);
			off += n;
			s += n;
		} else {
			if (off + 4 >= size)
				break;
			snprintf(dst + off, 5, "\\x%02x", *s++);
			off += 4;
		}
	}
	dst[off] = 0;
	return dst;
}

void str__fputs_escaped(const char *src, FILE *f)
{
	const unsigned char *s = (const unsigned char *)(src ? src : "");

	while (*s) {
		size_t n = str__printable_len(s);

		if (n) {
			fwrite(s, 1, n, f);
			s += n;
		} else {
			fprintf(f, "\\x%02x", *s++);
		}
	}
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

int str__fit(const char *s, int width, char *buf, size_t size)
{
	int len = strlen(s);

	if (width < 1 || !size) {
		if (size)
			buf[0] = 0;
		return 0;
	}
	if (len <= width)
		return snprintf(buf, size, "%s", s);
	return snprintf(buf, size, "%.*s+", width - 1, s);
}

void signals__on_end(void (*fn)(int))
{
	struct sigaction sa = { .sa_handler = fn };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
}
