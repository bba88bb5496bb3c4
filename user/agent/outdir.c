// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The agent's rotating output folder (outdir.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "agent/outdir.h"
#include "lib/util.h"

void outdir__name(u64 seq, u64 realtime_ns, char *buf, size_t size)
{
	time_t sec = (time_t)(realtime_ns / 1000000000ull);
	struct tm tm;
	char stamp[32];

	gmtime_r(&sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	snprintf(buf, size, OUTDIR_PREFIX "%0*llu-%s.%06lluZ" OUTDIR_SUFFIX, OUTDIR_SEQ_DIGITS,
		 (unsigned long long)seq, stamp, (unsigned long long)(realtime_ns % 1000000000ull / 1000));
}

static int write_all(int fd, const u8 *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= n;
	}
	return 0;
}

struct entry {
	char *name;
	u64 seq;
	u64 size;
};

/* a profile's number, 0 for the unnumbered names of earlier versions
 * ("hsbpf-20261127T061530.123456Z.pb.gz"), which are older than any numbered one */
static u64 name_seq(const char *name)
{
	const char *s = name + strlen(OUTDIR_PREFIX);
	char *end;
	u64 seq;

	if (*s < '0' || *s > '9')
		return 0;
	errno = 0;
	seq = strtoull(s, &end, 10);
	return *end == '-' && !errno ? seq : 0;
}

/* the order written, whatever the wall clock did meanwhile: by number, then by name */
static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return strcmp(x->name, y->name);
}

static bool is_profile(const char *name)
{
	size_t n = strlen(name), ls = strlen(OUTDIR_SUFFIX);

	return !strncmp(name, OUTDIR_PREFIX, strlen(OUTDIR_PREFIX)) && n > ls &&
	       !strcmp(name + n - ls, OUTDIR_SUFFIX);
}

int outdir__rotate(const char *dir, u64 max_files, u64 max_bytes, size_t *removed)
{
	struct entry *e = NULL;
	size_t nr = 0, cap = 0, first = 0;
	u64 total = 0;
	struct dirent *d;
	DIR *dp;
	int err = 0;

	*removed = 0;
	if (!max_files && !max_bytes)
		return 0;
	dp = opendir(dir);
	if (!dp)
		return fail(-errno, "cannot open '%s': %s", dir, strerror(errno));
	while ((d = readdir(dp))) {
		struct stat st;

		if (!is_profile(d->d_name) || fstatat(dirfd(dp), d->d_name, &st, 0) || !S_ISREG(st.st_mode))
			continue;
		if (array__reserve((void **)&e, &cap, nr + 1, sizeof(*e)) || !(e[nr].name = strdup(d->d_name))) {
			err = fail(-ENOMEM, "cannot rotate '%s': %s", dir, strerror(ENOMEM));
			goto cleanup;
		}
		e[nr].seq = name_seq(d->d_name);
		e[nr++].size = st.st_size;
		total += st.st_size;
	}
	qsort(e, nr, sizeof(*e), cmp_entry);
	/* the oldest first; the newest stays whatever its size */
	while (nr - first > 1 && ((max_files && nr - first > max_files) || (max_bytes && total > max_bytes))) {
		if (unlinkat(dirfd(dp), e[first].name, 0) && errno != ENOENT) {
			err = fail(-errno, "cannot remove '%s/%s': %s", dir, e[first].name, strerror(errno));
			goto cleanup;
		}
		total -= e[first++].size;
		(*removed)++;
	}
cleanup:
	for (size_t i = 0; i < nr; i++)
		free(e[i].name);
	free(e);
	closedir(dp);
	return err;
}

struct outdir {
	char *dir;
	u64 next_seq;
};

struct outdir *outdir__open(const char *dir)
{
	struct outdir *o = calloc(1, sizeof(*o));
	struct dirent *d;
	DIR *dp = NULL;
	int err = 0;

	if (!o || !(o->dir = strdup(dir))) {
		err = fail(-ENOMEM, "cannot open '%s': %s", dir, strerror(ENOMEM));
		goto cleanup;
	}
	if (mkdir(dir, 0755) && errno != EEXIST) {
		err = fail(-errno, "cannot create '%s': %s", dir, strerror(errno));
		goto cleanup;
	}
	dp = opendir(dir);
	if (!dp) {
		err = fail(-errno, "cannot open '%s': %s", dir, strerror(errno));
		goto cleanup;
	}
	/* numbered on from the highest there: an earlier run's profiles stay older */
	while ((d = readdir(dp)))
		if (is_profile(d->d_name) && name_seq(d->d_name) > o->next_seq)
			o->next_seq = name_seq(d->d_name);
	o->next_seq++;
cleanup:
	if (dp)
		closedir(dp);
	if (err) {
		outdir__free(o);
		errno = -err;
		return NULL;
	}
	return o;
}

const char *outdir__dir(const struct outdir *o)
{
	return o->dir;
}

void outdir__free(struct outdir *o)
{
	if (!o)
		return;
	free(o->dir);
	free(o);
}

int outdir__write(struct outdir *o, u64 realtime_ns, const void *buf, size_t len, u64 max_files,
		  u64 max_bytes)
{
	char name[128], tmp[4096], path[4096];
	size_t removed;
	int fd, err;

	/* the folder removed meanwhile is made again */
	if (mkdir(o->dir, 0755) && errno != EEXIST)
		return fail(-errno, "cannot create '%s': %s", o->dir, strerror(errno));
	outdir__name(o->next_seq, realtime_ns, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/%s", o->dir, name);
	/* a dot file: no reader takes it for a profile, and rotation leaves it alone */
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", o->dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return fail(-errno, "cannot create '%s': %s", tmp, strerror(errno));
	err = write_all(fd, buf, len);
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		return fail(err, "cannot write '%s': %s", path, strerror(-err));
	}
	o->next_seq++;
	return outdir__rotate(o->dir, max_files, max_bytes, &removed);
}
