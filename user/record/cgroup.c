// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cgroup v2 lookups: the mount from mountinfo, ids from file handles, names by a
 * walk of the tree. */
#include <fcntl.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "record/cgroup.h"

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

static int cmp_name(const void *a, const void *b)
{
	const struct cgroup_name *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static struct cgroup_name *lookup(struct cgroup_names *c, u64 id)
{
	struct cgroup_name key = { .id = id };

	if (c->sorted < c->n) {
		qsort(c->v, c->n, sizeof(*c->v), cmp_name);
		c->sorted = c->n;
	}
	return c->n ? bsearch(&key, c->v, c->n, sizeof(*c->v), cmp_name) : NULL;
}

static int add_name(struct cgroup_names *c, u64 id, const char *path)
{
	struct cgroup_name key = { .id = id };

	/* binary search over the part sorted before this scan; new ones are appended */
	if (c->sorted && bsearch(&key, c->v, c->sorted, sizeof(*c->v), cmp_name))
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		void *v = realloc(c->v, cap * sizeof(*c->v));

		if (!v)
			return -ENOMEM;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n].id = id;
	c->v[c->n].path = strdup(path);
	if (!c->v[c->n].path)
		return -ENOMEM;
	c->n++;
	return 0;
}

/* The directories only: a cgroup holds dozens of control files and a generic tree walk
 * (nftw) stats each of them, 25 ms a scan with 1,000 cgroups. On 64-bit kernels (5.5+) a
 * cgroup's id is its kernfs inode number, which readdir gives for free. */
static int scan_dir(struct cgroup_names *c, int dirfd, char *path, size_t len, int depth)
{
	struct dirent *de;
	DIR *d;
	int err = 0;

	d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return 0;	/* removed under us */
	}
	while (!err && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		int fd;

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    len + 1 + n >= PATH_MAX)
			continue;
		path[len] = '/';
		memcpy(path + len + 1, de->d_name, n + 1);
		err = add_name(c, de->d_ino, path);
		if (err || depth >= 64)
			continue;
		fd = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0)
			err = scan_dir(c, fd, path, len + 1 + n, depth + 1);
	}
	path[len] = 0;
	closedir(d);
	return err;
}

int cgroup_names__scan(struct cgroup_names *c)
{
	char mnt[PATH_MAX], path[PATH_MAX] = "";
	struct stat st;
	int err, fd;

	err = cgroup__find_mount("/proc/self/mountinfo", mnt, sizeof(mnt));
	if (err)
		return err;
	fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	lookup(c, 0);		/* sorts what earlier scans added */
	err = fstat(fd, &st) ? -errno : add_name(c, st.st_ino, "/");
	if (err) {
		close(fd);
		return err;
	}
	return scan_dir(c, fd, path, 0, 0);
}

const char *cgroup_names__find(struct cgroup_names *c, u64 id)
{
	struct cgroup_name *n = lookup(c, id);

	return n ? n->path : NULL;
}

void cgroup_names__free(struct cgroup_names *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].path);
	free(c->v);
	memset(c, 0, sizeof(*c));
}
