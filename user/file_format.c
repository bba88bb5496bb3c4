// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The shared file container: header, section table, sections, each CRC-32 checked; and the
 * key=value text sections. Readers trust no offset and skip unknown sections. */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "file_format.h"

struct file_header {
	char magic[8];
	u16 version_major;
	u16 version_minor;
	u32 header_size;
	u64 file_size;
	u64 section_table;	/* offset */
	u32 nr_sections;
	u32 header_crc;		/* crc32 of this header with header_crc 0 */
	u32 table_crc;		/* crc32 of the section table */
	u8 reserved[20];
};
_Static_assert(sizeof(struct file_header) == 64, "file_header");

struct section_desc {
	u32 type;
	u32 crc;
	u64 offset;
	u64 size;
};
_Static_assert(sizeof(struct section_desc) == 24, "section_desc");

#define MAX_SECTIONS 64
_Static_assert(FILE_FORMAT_HEAD_MAX == sizeof(struct file_header) +
	       MAX_SECTIONS * sizeof(struct section_desc), "FILE_FORMAT_HEAD_MAX");

/* ---- key=value sections ---- */

static void put_escaped(FILE *fp, const char *s, size_t max)
{
	for (size_t i = 0; i < max && s[i]; i++) {
		if (s[i] == '\\')
			fputs("\\\\", fp);
		else if (s[i] == '\n')
			fputs("\\n", fp);
		else
			fputc(s[i], fp);
	}
}

char *kv__format(const void *obj, const struct kv_field *f, size_t n, size_t *len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *fp = open_memstream(&buf, &size);

	if (!fp)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *field = (const char *)obj + f[i].off;

		switch (f[i].kind) {
		case KV_STR:
			fprintf(fp, "%s=", f[i].key);
			/* a full field has no NUL: never more than it holds */
			put_escaped(fp, field, f[i].size - 1);
			fputc('\n', fp);
			break;
		case KV_U64:
			fprintf(fp, "%s=%" PRIu64 "\n", f[i].key, *(const u64 *)field);
			break;
		case KV_U32:
			fprintf(fp, "%s=%u\n", f[i].key, *(const u32 *)field);
			break;
		case KV_DBL:
			fprintf(fp, "%s=%.17g\n", f[i].key, *(const double *)field);
			break;
		}
	}
	if (fclose(fp)) {
		free(buf);
		return NULL;
	}
	*len = size;
	return buf;
}

/* the value v (vlen bytes) into a field of size bytes, NUL-terminated; -EINVAL if too long
 * or (escaped) not a valid escape */
static int take_string(char *field, size_t size, const char *v, size_t vlen, bool escaped)
{
	size_t o = 0;

	for (size_t i = 0; i < vlen; i++) {
		char c = v[i];

		if (escaped && c == '\\') {
			if (++i == vlen)
				return -EINVAL;
			if (v[i] == '\\')
				c = '\\';
			else if (v[i] == 'n')
				c = '\n';
			else
				return -EINVAL;
		}
		if (o + 1 >= size)
			return -EINVAL;
		field[o++] = c;
	}
	field[o] = 0;
	return 0;
}

int kv__parse(void *obj, const struct kv_field *f, size_t n, const char *buf, size_t len,
	      bool escaped)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p), *eq;
		size_t linelen;

		if (!nl)
			return -EINVAL;
		linelen = nl - p;
		eq = memchr(p, '=', linelen);
		if (!eq)
			return -EINVAL;
		for (size_t i = 0; i < n; i++) {
			char *field = (char *)obj + f[i].off;
			size_t klen = eq - p, vlen = nl - eq - 1;
			char num[64];

			if (strlen(f[i].key) != klen || memcmp(f[i].key, p, klen))
				continue;
			if (f[i].kind == KV_STR) {
				if (take_string(field, f[i].size, eq + 1, vlen, escaped))
					return -EINVAL;
				break;
			}
			if (vlen == 0 || vlen >= sizeof(num))
				return -EINVAL;
			memcpy(num, eq + 1, vlen);
			num[vlen] = 0;
			if (f[i].kind == KV_DBL) {
				char *e;

				*(double *)field = strtod(num, &e);
				if (*e)
					return -EINVAL;
			} else {
				u64 v;

				if (parse_u64(num, &v))
					return -EINVAL;
				if (f[i].kind == KV_U32) {
					if (v > UINT32_MAX)
						return -EINVAL;
					*(u32 *)field = v;
				} else {
					*(u64 *)field = v;
				}
			}
			break;
		}
		p = nl + 1;
	}
	return 0;
}

/* ---- writing ---- */

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

int outfile__open_live(struct outfile *o, const char *path)
{
	struct stat st;
	int err, fd;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->path = strdup(path);
	if (!o->path)
		return fail(-ENOMEM, "cannot write '%s': %s", path, strerror(ENOMEM));
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		err = fail(-EISDIR, "cannot write '%s': it is a directory", path);
	} else if ((fd = fd_link_target(path)) >= 0) {
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
	if (err)
		outfile__discard(o);
	return err;
}

int outfile__open(struct outfile *o, const char *path, size_t reserve)
{
	struct stat st;
	int err, fd;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->path = strdup(path);
	if (!o->path)
		return fail(-ENOMEM, "cannot write '%s': %s", path, strerror(ENOMEM));
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		err = fail(-EISDIR, "cannot write '%s': it is a directory", path);
		goto fail;
	}
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

/* give the file its name (fsync, then rename over the old one, or over a link); closes. 0 or
 * -errno after reporting; on failure nothing is left behind */
static int outfile__commit(struct outfile *o)
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

int file_format__write_out(struct outfile *o, const struct file_format *f,
			 const struct file_section *secs, size_t nr)
{
	struct section_desc descs[MAX_SECTIONS];
	struct file_header hdr = {};
	u64 off;
	int err;

	if (nr > MAX_SECTIONS) {
		err = -E2BIG;
		goto cleanup;
	}
	off = sizeof(hdr) + nr * sizeof(struct section_desc);
	for (size_t i = 0; i < nr; i++) {
		descs[i].type = secs[i].type;
		descs[i].offset = off;
		descs[i].size = secs[i].size;
		descs[i].crc = crc32(0, secs[i].data, secs[i].size);
		off += secs[i].size;
	}
	memcpy(hdr.magic, f->magic, 8);
	hdr.version_major = f->major;
	hdr.version_minor = f->minor;
	hdr.header_size = sizeof(hdr);
	hdr.file_size = off;
	hdr.section_table = sizeof(hdr);
	hdr.nr_sections = nr;
	hdr.table_crc = crc32(0, (const void *)descs, nr * sizeof(descs[0]));
	hdr.header_crc = crc32(0, (const void *)&hdr, sizeof(hdr));

	err = write_all(o->fd, &hdr, sizeof(hdr));
	if (!err)
		err = write_all(o->fd, descs, nr * sizeof(descs[0]));
	for (size_t i = 0; !err && i < nr; i++)
		err = write_all(o->fd, secs[i].data, secs[i].size);
	/* the reservation may have made it longer */
	if (!err && !o->in_place && ftruncate(o->fd, off))
		err = -errno;
cleanup:
	if (err) {
		error("cannot write '%s': %s", o->path, strerror(-err));
		outfile__discard(o);
		return err;
	}
	return outfile__commit(o);
}

/* ---- reading ---- */

int file_format__bad(const char *name, const char *what)
{
	error("'%s' is corrupt: %s", name, what);
	return -EINVAL;
}

/* the header, from the file's first head_len (at most 64) bytes, against the file's size */
static int check_header(const u8 *head, size_t head_len, u64 size, const char *name,
			const struct file_format *f, struct file_header *hdr)
{
	u32 want_crc;

	if (head_len < 8 || memcmp(head, f->magic, 8)) {
		error("'%s' is not an %s", name, f->kind);
		return -EINVAL;
	}
	if (head_len < sizeof(*hdr)) {
		error("'%s' is truncated: %" PRIu64 " bytes, shorter than the header", name, size);
		return -EINVAL;
	}
	memcpy(hdr, head, sizeof(*hdr));
	if (hdr->version_major > f->major) {
		error("'%s' has format version %u.%u, newer than this hsbpf reads (%u.%u): upgrade hsbpf",
		      name, hdr->version_major, hdr->version_minor, f->major, f->minor);
		return -EPROTO;
	}
	want_crc = hdr->header_crc;
	hdr->header_crc = 0;
	if (crc32(0, (const void *)hdr, sizeof(*hdr)) != want_crc)
		return file_format__bad(name, "header checksum mismatch");
	hdr->header_crc = want_crc;
	if (hdr->file_size != size) {
		if (size < hdr->file_size)
			error("'%s' is truncated: %" PRIu64 " of %" PRIu64 " bytes", name, size,
			      (u64)hdr->file_size);
		else
			error("'%s' is corrupt: %" PRIu64 " bytes where the header says %" PRIu64, name,
			      size, (u64)hdr->file_size);
		return -EINVAL;
	}
	if (hdr->header_size < sizeof(*hdr) || hdr->nr_sections > MAX_SECTIONS ||
	    hdr->section_table > size ||
	    hdr->nr_sections * sizeof(struct section_desc) > size - hdr->section_table)
		return file_format__bad(name, "section table out of bounds");
	return 0;
}

/* the section table: its checksum, every section within the file, no type twice */
static int check_table(const void *table, const struct file_header *hdr, u64 size,
		       const char *name)
{
	struct section_desc d[MAX_SECTIONS];

	memcpy(d, table, hdr->nr_sections * sizeof(d[0]));
	if (crc32(0, (const void *)d, hdr->nr_sections * sizeof(d[0])) != hdr->table_crc)
		return file_format__bad(name, "section table checksum mismatch");
	for (u32 i = 0; i < hdr->nr_sections; i++) {
		if (d[i].offset > size || d[i].size > size - d[i].offset)
			return file_format__bad(name, "section out of bounds");
		/* a second copy would replace the first: which one is meant? */
		for (u32 j = 0; j < i; j++)
			if (d[j].type == d[i].type) {
				error("'%s' is corrupt: section %u appears twice", name, d[i].type);
				return -EINVAL;
			}
	}
	return 0;
}

int file_format__parse(const void *buf, size_t size, const char *name,
		     const struct file_format *f, u16 *file_minor, file_section_fn fn,
		     void *ctx)
{
	const u8 *base = buf;
	const struct section_desc *descs;
	struct file_header hdr;
	int err;

	err = check_header(base, size < sizeof(hdr) ? size : sizeof(hdr), size, name, f, &hdr);
	if (err)
		return err;
	descs = (const void *)(base + hdr.section_table);
	err = check_table(descs, &hdr, size, name);
	if (err)
		return err;
	for (u32 i = 0; i < hdr.nr_sections; i++) {
		struct section_desc d;

		memcpy(&d, &descs[i], sizeof(d));
		if (crc32(0, base + d.offset, d.size) != d.crc)
			return file_format__bad(name, "section checksum mismatch");
	}
	if (file_minor)
		*file_minor = hdr.version_minor;
	for (u32 i = 0; i < hdr.nr_sections; i++) {
		struct section_desc d;

		memcpy(&d, &descs[i], sizeof(d));
		err = fn(ctx, d.type, base + d.offset, d.size);
		if (err)
			return err;
	}
	return 0;
}

/* len bytes at off, or -errno / -EIO (the file shrank) */
static int pread_all(int fd, void *buf, size_t len, u64 off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, (char *)buf + got, len - got, off + got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		got += n;
	}
	return 0;
}

/* the head check of the container format f (a struct file_format): header, section
 * table and section bounds, without reading the sections */
static int file_format__check_head(int fd, u64 size, const char *name, const void *arg)
{
	const struct file_format *f = arg;
	u8 head[sizeof(struct file_header)];
	u8 table[MAX_SECTIONS * sizeof(struct section_desc)];
	size_t head_len = size < sizeof(head) ? size : sizeof(head);
	struct file_header hdr;
	int err;

	err = pread_all(fd, head, head_len, 0);
	if (err)
		return fail(err, "cannot read '%s': %s", name, strerror(-err));
	err = check_header(head, head_len, size, name, f, &hdr);
	if (err)
		return err;
	err = pread_all(fd, table, hdr.nr_sections * sizeof(struct section_desc), hdr.section_table);
	if (err)
		return fail(err, "cannot read '%s': %s", name, strerror(-err));
	return check_table(table, &hdr, size, name);
}

int file_format__read_file(const char *path, file_head_fn head, const void *arg, void **out,
			 size_t *size)
{
	struct stat st;
	void *buf = NULL;
	int fd, err = 0;

	fd = file__open_regular(path);
	if (fd < 0)
		return file__open_error(path, fd);
	if (fstat(fd, &st)) {
		err = -errno;
		error("cannot stat '%s': %s", path, strerror(-err));
		goto cleanup;
	}
	/* what the first bytes say before the rest is read: a huge file that is not what it
	 * claims to be is refused without reading it */
	if (head) {
		err = head(fd, st.st_size, path, arg);
		if (err)
			goto cleanup;
	}
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf) {
		err = -ENOMEM;
		error("cannot read '%s': %s", path, strerror(-err));
		goto cleanup;
	}
	err = pread_all(fd, buf, st.st_size, 0);
	if (err)
		error("cannot read '%s': %s", path, strerror(-err));
cleanup:
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	*size = st.st_size;
	return 0;
}

int file_format__load(const char *path, const struct file_format *f,
		    file_format_parse_fn parse, void *out)
{
	size_t size;
	void *buf;
	int err = file_format__read_file(path, file_format__check_head, f, &buf, &size);

	if (err)
		return err;
	err = parse(buf, size, path, out);
	free(buf);
	return err;
}

int file_format__take_array(void **dst, size_t *nr, size_t *cap, const void *src, size_t size,
			  size_t elem)
{
	if (size % elem)
		return -EINVAL;
	if (!size)
		return 0;
	*dst = malloc(size);
	if (!*dst)
		return -ENOMEM;
	memcpy(*dst, src, size);
	*nr = *cap = size / elem;
	return 0;
}
