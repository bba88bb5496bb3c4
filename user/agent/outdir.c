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

void outdir__name(u64 realtime_ns, char *buf, size_t size)
{
	time_t sec = (time_t)(realtime_ns / 1000000000ull);
	struct tm tm;
	char stamp[32];

	gmtime_r(&sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	snprintf(buf, size, OUTDIR_PREFIX "%s.%06lluZ" OUTDIR_SUFFIX, stamp,
		 (unsigned long long)(realtime_ns % 1000000000ull / 1000));
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
	u64 size;
};

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
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

int outdir__write(const char *dir, const char *name, const void *buf, size_t len, u64 max_files,
		  u64 max_bytes)
{
	char tmp[4096], path[4096];
	size_t removed;
	int fd, err;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return fail(-errno, "cannot create '%s': %s", dir, strerror(errno));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	/* a dot file: no reader takes it for a profile, and rotation leaves it alone */
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
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
	return outdir__rotate(dir, max_files, max_bytes, &removed);
}
