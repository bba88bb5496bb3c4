// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cgroup v2 lookups: the mount from mountinfo, ids from file handles, paths by a tree walk. */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cgroup.h"

int cgroup__find_mount(const char *mountinfo, char *buf, size_t size)
{
	char line[4096];
	int err = -ENOENT;
	FILE *f = fopen(mountinfo, "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* id parent maj:min root mountpoint opts [optional...] - fstype source superopts */
		char mnt[PATH_MAX], *sep = strstr(line, " - ");
		char fstype[64];

		if (!sep || sscanf(sep + 3, "%63s", fstype) != 1 || strcmp(fstype, "cgroup2"))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		if (strlen(mnt) >= size) {
			err = -ENAMETOOLONG;
			break;
		}
		strcpy(buf, mnt);
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

int cgroup__id(const char *dir, u64 *id)
{
	struct {
		struct file_handle fh;
		u64 id;
	} h = { .fh.handle_bytes = sizeof(u64) };
	int mount_id;
	struct stat st;

	if (!name_to_handle_at(AT_FDCWD, dir, &h.fh, &mount_id, 0) && h.fh.handle_bytes == 8) {
		memcpy(id, h.fh.f_handle, sizeof(*id));
		return 0;
	}
	if (stat(dir, &st))
		return -errno;
	*id = st.st_ino;
	return 0;
}

int cgroup__open(const char *path, char *abs, size_t size, u64 *id, int *fd)
{
	char mnt[PATH_MAX];
	size_t mlen;
	int err;

	err = cgroup__find_mount("/proc/self/mountinfo", mnt, sizeof(mnt));
	if (err)
		return fail(err, "cannot find the cgroup v2 mount in /proc/self/mountinfo: %s",
			     strerror(-err));
	mlen = strlen(mnt);
	if (!strncmp(path, mnt, mlen) && (path[mlen] == '/' || !path[mlen]))
		err = snprintf(abs, size, "%s", path);
	else if (!path[strspn(path, "/")])
		err = snprintf(abs, size, "%s", mnt);
	else
		err = snprintf(abs, size, "%s/%s", mnt, path + strspn(path, "/"));
	if (err < 0 || (size_t)err >= size)
		return fail(-ENAMETOOLONG, "cgroup path too long: '%s'", path);
	*fd = open(abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0) {
		err = -errno;
		error("cannot open cgroup '%s': %s", abs, strerror(-err));
		return err;
	}
	err = cgroup__id(abs, id);
	if (err) {
		close(*fd);
		*fd = -1;
		error("cannot get the id of cgroup '%s': %s", abs, strerror(-err));
	}
	return err;
}

/* nftw has no user pointer: the walk's state lives here, one walk at a time */
static __thread struct {
	u64 id;
	size_t mlen;
	char *buf;
	size_t size;
	int found;
} walk;

static int walk_one(const char *fpath, const struct stat *sb, int type, struct FTW *ftw)
{
	u64 id;

	(void)sb;
	(void)ftw;
	if (type != FTW_D || cgroup__id(fpath, &id) || id != walk.id)
		return 0;
	snprintf(walk.buf, walk.size, "%s", fpath[walk.mlen] ? fpath + walk.mlen : "/");
	walk.found = 1;
	return 1;
}

int cgroup__path(u64 id, char *buf, size_t size)
{
	char mnt[PATH_MAX];
	int err;

	err = cgroup__find_mount("/proc/self/mountinfo", mnt, sizeof(mnt));
	if (err)
		return err;
	walk.id = id;
	walk.mlen = strlen(mnt);
	walk.buf = buf;
	walk.size = size;
	walk.found = 0;
	nftw(mnt, walk_one, 16, FTW_PHYS | FTW_MOUNT);
	return walk.found ? 0 : -ENOENT;
}
