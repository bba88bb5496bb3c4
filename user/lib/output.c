// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Output: the formats' names and their parser, outfiles (atomic for regular files, in place
 * for devices and FIFOs, never through a planted link), and the sink over them that the
 * commands write through. */
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "lib/output.h"

/* ---- formats ---- */

static const char *const format_names[OUT_NR_FORMATS] = {
	[OUT_TEXT] = "text",
	[OUT_JSON] = "json",
	[OUT_CSV] = "csv",
	[OUT_FOLDED] = "folded",
	[OUT_PPROF] = "pprof",
	[OUT_SPEEDSCOPE] = "speedscope",
};

const char *output_format__name(enum output_format fmt)
{
	return (unsigned int)fmt < OUT_NR_FORMATS ? format_names[fmt] : "?";
}

int output_format__parse(const char *name, unsigned int allowed, enum output_format *fmt)
{
	char known[128] = "";
	size_t len = 0;

	for (int f = 0; f < OUT_NR_FORMATS; f++) {
		if (!(allowed & OUT_SET(f)))
			continue;
		if (!strcmp(name, format_names[f])) {
			*fmt = f;
			return 0;
		}
		len += snprintf(known + len, sizeof(known) - len, "%s%s", len ? ", " : "",
				format_names[f]);
	}
	return fail(-EINVAL, "unknown format '%s' (known: %s)", name, known);
}

/* ---- files ---- */

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

/* the folder of path, for the temporary file: "." for a bare name */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, slash - path);
}

/* DIR/.hsbpf-XXXXXXXX.tmp: short, so that the output's own name may be NAME_MAX long */
static char *tmp_name(const char *dir)
{
	char *name;
	u64 r = now_ns(CLOCK_MONOTONIC) ^ ((u64)getpid() << 32);
	static unsigned counter;

	r ^= (u64)++counter * 0x9E3779B97F4A7C15ull;
	r *= 0xff51afd7ed558ccdull;
	if (asprintf(&name, "%s/.hsbpf-%08x.tmp", dir, (u32)(r >> 32)) < 0)
		return NULL;
	return name;
}

static bool proc_fd_works(void)
{
	return !access("/proc/self/fd", X_OK);
}

static int open_temp(struct outfile *o)
{
	char *dir = dir_of(o->path);
	int err = 0;

	if (!dir)
		return -ENOMEM;
	/* unnamed: a recording killed by SIGKILL leaves nothing; linked through /proc at
	 * commit, which needs no privilege (AT_EMPTY_PATH would) */
	if (proc_fd_works()) {
		o->fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
		if (o->fd >= 0) {
			o->unnamed = true;
			goto out;
		}
		if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) {
			err = -errno;
			goto out;
		}
	}
	/* a filesystem without O_TMPFILE: a short name */
	for (int tries = 0; tries < 100; tries++) {
		o->tmp = tmp_name(dir);
		if (!o->tmp) {
			err = -ENOMEM;
			goto out;
		}
		/* O_EXCL: a name planted there (a link to elsewhere) is never written through */
		o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (o->fd >= 0 || errno != EEXIST)
			break;
		free(o->tmp);
		o->tmp = NULL;
	}
	if (o->fd < 0) {
		err = -errno;
		free(o->tmp);
		o->tmp = NULL;
	}
out:
	free(dir);
	return err;
}

/* /proc/PID/fd or /proc/PID/task/TID/fd of this process (/proc/self/fd resolved): a folder
 * of its own descriptors. Another process's are not: a link to /proc/1/fd/3 is replaced */
static bool is_fd_dir(const char *real)
{
	const char *s = real;
	char *end;

	if (strncmp(s, "/proc/", 6))
		return false;
	s += 6;
	if (!isdigit((unsigned char)*s) || strtol(s, &end, 10) != getpid())
		return false;
	s = end;
	if (!strncmp(s, "/task/", 6)) {
		s += 6;
		if (!isdigit((unsigned char)*s))
			return false;
		while (isdigit((unsigned char)*s))
			s++;
	}
	return !strcmp(s, "/fd");
}

/* whether the folder of path (relative to base's folder when relative) is a descriptor folder */
static bool in_fd_dir(const char *path, const char *base)
{
	char *dir = dir_of(path), *full = NULL, *real;
	bool fd = false;

	if (!dir)
		return false;
	if (dir[0] != '/' && base) {
		char *bdir = dir_of(base);

		if (bdir && asprintf(&full, "%s/%s", bdir, dir) < 0)
			full = NULL;
		free(bdir);
	}
	real = realpath(full ? full : dir, NULL);
	fd = real && is_fd_dir(real);
	free(real);
	free(full);
	free(dir);
	return fd;
}

/* the descriptor N a link names when it is one of this process's own (/dev/stdout, /dev/fd/1,
 * /proc/self/fd/1, or a link to one): the caller's redirection, written through, never
 * replaced; -1 otherwise. A link another user made is never one: through /dev/fd/N it would
 * name whatever this process holds open as N (an object it symbolizes) */
static int fd_link_target(const char *path)
{
	char target[PATH_MAX];
	const char *name = path;
	struct stat st;
	ssize_t n;
	char *end;
	long fd;

	if (lstat(path, &st) || !S_ISLNK(st.st_mode))
		return -1;
	if (!in_fd_dir(path, NULL)) {
		if (st.st_uid != geteuid() && st.st_uid != 0)
			return -1;
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			return -1;
		target[n] = 0;
		if (!in_fd_dir(target, path))
			return -1;
		name = target;
	}
	name = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	fd = strtol(name, &end, 10);
	return isdigit((unsigned char)*name) && !*end && fd <= INT_MAX ? (int)fd : -1;
}

/* open the file the caller's descriptor fd goes to, appending; refused unless what was opened
 * is that very file (the link could have been changed between the look and the open) */
static int open_fd_link(struct outfile *o, int fd)
{
	struct stat want, got;

	if (fstat(fd, &want))
		return fail(-errno, "cannot write '%s': %s", o->path, strerror(errno));
	o->fd = open(o->path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_APPEND);
	if (o->fd < 0)
		return fail(-errno, "cannot open '%s': %s", o->path, strerror(errno));
	if (fstat(o->fd, &got) || got.st_dev != want.st_dev || got.st_ino != want.st_ino)
		return fail(-EXDEV, "cannot write '%s': it changed while it was opened", o->path);
	o->in_place = true;
	return 0;
}

static int open_in_place(struct outfile *o, int flags)
{
	o->fd = open(o->path, O_WRONLY | O_CLOEXEC | O_NOCTTY | flags, 0666);
	if (o->fd < 0)
		return fail(-errno, "cannot %s '%s': %s", flags & O_CREAT ? "create" : "open", o->path,
			    strerror(errno));
	o->in_place = true;
	return 0;
}

/* o reset for path; a folder is refused. 0, or -errno after reporting */
static int outfile_init(struct outfile *o, const char *path)
{
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->path = strdup(path);
	if (!o->path)
		return fail(-ENOMEM, "cannot write '%s': %s", path, strerror(ENOMEM));
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return fail(-EISDIR, "cannot write '%s': it is a directory", path);
	return 0;
}

int outfile__open_live(struct outfile *o, const char *path)
{
	struct stat st;
	int err, fd;

	err = outfile_init(o, path);
	if (err)
		goto out;
	if ((fd = fd_link_target(path)) >= 0) {
		err = open_fd_link(o, fd);
	} else if (!lstat(path, &st) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
		err = open_in_place(o, O_NOFOLLOW);	/* a device or a FIFO, not through a link */
	} else {
		/* a regular file or a new one, written as it goes; never through a link: one at
		 * the name is removed, one planted meanwhile makes the open fail (O_NOFOLLOW) */
		if (!lstat(path, &st) && S_ISLNK(st.st_mode) && unlink(path) && errno != ENOENT)
			err = fail(-errno, "cannot replace '%s': %s", path, strerror(errno));
		else
			err = open_in_place(o, O_CREAT | O_TRUNC | O_NOFOLLOW);
	}
out:
	if (err)
		outfile__discard(o);
	return err;
}

int outfile__open(struct outfile *o, const char *path, size_t reserve)
{
	struct stat st;
	int err, fd;

	err = outfile_init(o, path);
	if (err)
		goto fail;
	if ((fd = fd_link_target(path)) >= 0) {
		/* -o /dev/stdout: where the descriptor goes, appended to (a shell's > or >>) */
		err = open_fd_link(o, fd);
		if (err)
			goto fail;
		return 0;
	}
	if (!lstat(path, &st) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
		/* a device or a FIFO at the name (not at the end of a link: a link to /dev/sda is
		 * replaced as any link is): in place (a FIFO's open waits for its reader) */
		o->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
		if (o->fd < 0) {
			err = -errno;
			error("cannot open '%s': %s", path, strerror(-err));
			goto fail;
		}
		if (!fstat(o->fd, &st) && !S_ISREG(st.st_mode)) {
			o->in_place = true;
			return 0;
		}
		close(o->fd);	/* it became a regular file meanwhile: as one */
		o->fd = -1;
	}
	/* a regular file, a new name, or a link: replaced by the rename (a link itself, not the
	 * file it names) */
	err = open_temp(o);
	if (err) {
		error("cannot create '%s': %s", path, strerror(-err));
		goto fail;
	}
	if (reserve) {
		err = -posix_fallocate(o->fd, 0, reserve);
		if (err) {
			error("cannot write '%s': %s", path, strerror(-err));
			goto fail;
		}
	}
	return 0;
fail:
	outfile__discard(o);
	return err;
}

int outfile__commit(struct outfile *o)
{
	int err = 0;

	if (o->fp) {
		if ((fflush(o->fp) || ferror(o->fp)) && !o->write_err)
			o->write_err = EIO;
		fclose(o->fp);	/* the stream only: the descriptor is closed below */
		o->fp = NULL;
		if (o->write_err) {
			err = -o->write_err;
			goto out;
		}
	}
	if (o->in_place) {
		if (close(o->fd) && errno != EINTR)
			err = -errno;
		o->fd = -1;
		goto out;
	}
	if (fsync(o->fd)) {
		err = -errno;
		goto out;
	}
	if (o->unnamed) {
		char *dir = dir_of(o->path), proc[64];

		if (!dir) {
			err = -ENOMEM;
			goto out;
		}
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
		for (int tries = 0; tries < 100; tries++) {
			o->tmp = tmp_name(dir);
			if (!o->tmp) {
				err = -ENOMEM;
				break;
			}
			/* fails on any name that is there (EEXIST), a planted link included */
			if (!linkat(AT_FDCWD, proc, AT_FDCWD, o->tmp, AT_SYMLINK_FOLLOW)) {
				err = 0;
				break;
			}
			err = -errno;
			free(o->tmp);
			o->tmp = NULL;
			if (err != -EEXIST)
				break;
		}
		free(dir);
		if (err)
			goto out;
	}
	if (close(o->fd) && errno != EINTR)
		err = -errno;
	o->fd = -1;
	/* rename replaces the name: a symbolic link there is replaced, its target untouched */
	if (!err && rename(o->tmp, o->path))
		err = -errno;
out:
	if (err)
		error("cannot write '%s': %s", o->path, strerror(-err));
	if (!err) {
		free(o->tmp);
		o->tmp = NULL;
	}
	outfile__discard(o);
	return err;
}

void outfile__discard(struct outfile *o)
{
	if (o->fp) {
		o->dropping = true;
		fclose(o->fp);
		o->fp = NULL;
	}
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
	free(o->path);
	o->path = NULL;
}

static ssize_t outfile_write(void *cookie, const char *buf, size_t len)
{
	struct outfile *o = cookie;
	int err;

	if (o->dropping)
		return len;
	if (o->write_err)
		return -1;
	err = write_all(o->fd, buf, len);
	if (err) {
		o->write_err = -err;
		errno = -err;
		return -1;
	}
	return len;
}

FILE *outfile__stream(struct outfile *o)
{
	static const cookie_io_functions_t io = { .write = outfile_write };

	/* text (a report, a page) is created as fopen creates it, 0666 less the umask: only
	 * profiles are private (0600) */
	if (!o->fp && !o->in_place) {
		mode_t mask = umask(077);

		umask(mask);
		if (fchmod(o->fd, 0666 & ~mask))
			return NULL;
	}
	if (!o->fp)
		o->fp = fopencookie(o, "w", io);
	return o->fp;
}

int outfile__finish(struct outfile *o, int err)
{
	/* fflush first: the failure it meets is noted (write_err) before it is read */
	if (o->fp && (fflush(o->fp) || ferror(o->fp)) && !o->write_err)
		o->write_err = EIO;
	if (o->write_err) {
		/* the writer's error is this one, said once with its errno */
		err = fail(-o->write_err, "cannot write '%s': %s", o->path, strerror(o->write_err));
		outfile__discard(o);
		return err;
	}
	if (err) {
		outfile__discard(o);
		return err;
	}
	return outfile__commit(o);
}

int outfile__check_input(const char *output, const char *input)
{
	struct stat so, si;

	if (!output || !input || !strcmp(output, "-"))
		return 0;
	if (stat(output, &so) || stat(input, &si))
		return 0;
	if (so.st_dev != si.st_dev || so.st_ino != si.st_ino)
		return 0;
	return fail(-EEXIST, "'%s' is the input '%s': not overwritten", output, input);
}

int outfile__write(struct outfile *o, const void *buf, size_t len)
{
	return write_all(o->fd, buf, len);
}

/* ---- the sink ---- */

/* the stream onto o's file once opened (err: how the open went); f stays the standard
 * stream on failure */
static int use_file(struct output *o, const char *path, int err)
{
	FILE *f;

	if (err)
		return err;
	f = outfile__stream(&o->file);
	if (!f) {
		outfile__discard(&o->file);
		return fail(-ENOMEM, "cannot write '%s': %s", path, strerror(ENOMEM));
	}
	o->f = f;
	o->is_file = true;
	return 0;
}

int output__open(struct output *o, const char *path, const char *input)
{
	int err;

	memset(o, 0, sizeof(*o));
	o->file.fd = -1;
	o->f = stdout;
	if (!path)
		return 0;
	err = outfile__check_input(path, input);
	return use_file(o, path, err ? err : outfile__open(&o->file, path, 0));
}

FILE *output__create(struct output *o, const char *path)
{
	return output__open(o, path, NULL) ? NULL : o->f;
}

int output__open_live(struct output *o, const char *path)
{
	memset(o, 0, sizeof(*o));
	o->file.fd = -1;
	o->f = stderr;
	return path ? use_file(o, path, outfile__open_live(&o->file, path)) : 0;
}

int output__close(struct output *o, int err)
{
	if (o->is_file) {
		o->is_file = false;
		o->f = NULL;
		return outfile__finish(&o->file, err);
	}
	/* a failed write on standard output is main's to say (stdout__close), once */
	if (err && err != -ENOMEM && o->f == stdout && stdout__flush())
		err = 0;
	return err;
}
