// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A sink's disk spool (spool.h): the files' numbers and sizes are kept in memory, oldest
 * first, so that the bound needs no reading of the folder. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "agent/spool.h"

struct spool_file {
	u64 seq;
	u64 size;
};

struct spool {
	char *dir;
	u64 max_bytes, bytes, dropped, next_seq;
	struct spool_file *files;	/* oldest first, from head */
	size_t head, nr, cap;
};

static void file_path(const struct spool *s, u64 seq, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%020" PRIu64 SPOOL_SUFFIX, s->dir, seq);
}

static int cmp_seq(const void *a, const void *b)
{
	u64 x = ((const struct spool_file *)a)->seq, y = ((const struct spool_file *)b)->seq;

	return x < y ? -1 : x > y;
}

/* "NNN.req": its number */
static bool parse_name(const char *name, u64 *seq)
{
	size_t n = strlen(name), ls = strlen(SPOOL_SUFFIX);
	char digits[32];

	if (n <= ls || n - ls >= sizeof(digits) || strcmp(name + n - ls, SPOOL_SUFFIX))
		return false;
	memcpy(digits, name, n - ls);
	digits[n - ls] = '\0';
	return !parse_u64(digits, seq);
}

static int add_file(struct spool *s, u64 seq, u64 size)
{
	if (s->head && s->head + s->nr == s->cap) {
		memmove(s->files, s->files + s->head, s->nr * sizeof(*s->files));
		s->head = 0;
	}
	if (array__reserve((void **)&s->files, &s->cap, s->head + s->nr + 1, sizeof(*s->files)))
		return -ENOMEM;
	s->files[s->head + s->nr++] = (struct spool_file){ seq, size };
	s->bytes += size;
	return 0;
}

static int load(struct spool *s)
{
	struct dirent *d;
	DIR *dp = opendir(s->dir);
	int err = 0;

	if (!dp)
		return fail(-errno, "cannot open the spool '%s': %s", s->dir, strerror(errno));
	while ((d = readdir(dp)) && !err) {
		struct stat st;
		u64 seq;

		if (!parse_name(d->d_name, &seq) || fstatat(dirfd(dp), d->d_name, &st, 0) ||
		    !S_ISREG(st.st_mode))
			continue;
		err = add_file(s, seq, st.st_size);
		if (seq >= s->next_seq)
			s->next_seq = seq + 1;
	}
	closedir(dp);
	if (err)
		return fail(err, "cannot read the spool '%s': %s", s->dir, strerror(-err));
	if (s->nr)	/* an empty spool has no array (qsort's NULL is undefined) */
		qsort(s->files, s->nr, sizeof(*s->files), cmp_seq);
	return 0;
}

struct spool *spool__open(const char *dir, u64 max_bytes)
{
	struct spool *s = calloc(1, sizeof(*s));
	int err;

	if (!s || !(s->dir = strdup(dir))) {
		err = fail(-ENOMEM, "cannot open the spool '%s': %s", dir, strerror(ENOMEM));
		goto fail;
	}
	s->max_bytes = max_bytes;
	if (mkdir(dir, 0700) && errno != EEXIST) {
		err = fail(-errno, "cannot create the spool '%s': %s", dir, strerror(errno));
		goto fail;
	}
	err = load(s);
	if (err)
		goto fail;
	if (s->nr)
		fprintf(stderr, "hsbpf agent: %zu profiles (%" PRIu64 " bytes) in the spool '%s' from "
			"an earlier run, sent first\n", s->nr, s->bytes, dir);
	return s;
fail:
	spool__free(s);
	errno = -err;
	return NULL;
}

void spool__free(struct spool *s)
{
	if (!s)
		return;
	free(s->files);
	free(s->dir);
	free(s);
}

static void remove_oldest(struct spool *s)
{
	char path[4096];

	file_path(s, s->files[s->head].seq, path, sizeof(path));
	unlink(path);
	s->bytes -= s->files[s->head].size;
	s->head++;
	s->nr--;
	if (!s->nr)
		s->head = 0;
}

static int write_file(const char *path, const char *tmp, const void *buf, size_t len)
{
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), err = 0;
	const u8 *p = buf;

	if (fd < 0)
		return -errno;
	while (len && !err) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno != EINTR)
			err = -errno;
		if (n > 0) {
			p += n;
			len -= n;
		}
	}
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

int spool__push(struct spool *s, const void *buf, size_t len)
{
	char path[4096], tmp[4200];
	u64 seq = s->next_seq++;
	int err;

	file_path(s, seq, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s/.%020" PRIu64 ".tmp", s->dir, seq);
	err = write_file(path, tmp, buf, len);
	if (!err) {
		err = add_file(s, seq, len);
		if (err)
			unlink(path);
	}
	if (err)
		return fail(err, "cannot spool a profile in '%s': %s", s->dir, strerror(-err));
	while (s->nr && s->max_bytes && s->bytes > s->max_bytes) {
		remove_oldest(s);
		s->dropped++;
	}
	return 0;
}

int spool__peek(struct spool *s, u8 **buf, size_t *len, u64 *seq)
{
	char path[4096];
	FILE *f;
	int err = 0;

	*buf = NULL;
	if (!s->nr)
		return -ENOENT;
	*seq = s->files[s->head].seq;
	file_path(s, *seq, path, sizeof(path));
	f = fopen(path, "rb");
	*len = s->files[s->head].size;
	if (!f)
		err = -errno;
	else if (!(*buf = malloc(*len + 1)))
		err = -ENOMEM;
	else if (fread(*buf, 1, *len, f) != *len)
		err = -EIO;
	if (f)
		fclose(f);
	if (err) {
		free(*buf);
		*buf = NULL;
		error("cannot read '%s' in the spool: %s; dropped", path, strerror(-err));
		remove_oldest(s);
		s->dropped++;
	}
	return err;
}

void spool__pop(struct spool *s, u64 seq)
{
	if (s->nr && s->files[s->head].seq == seq)
		remove_oldest(s);
}

size_t spool__count(const struct spool *s)
{
	return s->nr;
}

u64 spool__bytes(const struct spool *s)
{
	return s->bytes;
}

u64 spool__dropped(const struct spool *s)
{
	return s->dropped;
}

const char *spool__dir(const struct spool *s)
{
	return s->dir;
}
