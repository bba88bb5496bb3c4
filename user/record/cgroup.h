/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* cgroup v2: where it is mounted (hybrid or unified layouts), a path's id, ids' paths. */
#ifndef HSBPF_CGROUP_H
#define HSBPF_CGROUP_H

#include <limits.h>
#include "lib/util.h"

/* the cgroup2 mount point from a mountinfo file (normally /proc/self/mountinfo) */
int cgroup__find_mount(const char *mountinfo, char *buf, size_t size);
/* PATH may be absolute (inside the mount) or relative to the mount; fills the absolute
 * path, the id, and an open O_RDONLY fd of the directory (caller closes) */
int cgroup__open(const char *path, char *abs, size_t size, u64 *id, int *fd);
/* the cgroup id of a directory */
int cgroup__id(const char *dir, u64 *id);

/* id -> path for every cgroup seen by any scan: a cgroup removed while recording keeps the
 * name it had at the last scan before it went */
struct cgroup_name {
	u64 id;
	char *path;		/* relative to the mount, "/" for the root */
};

struct cgroup_names {
	struct cgroup_name *v;
	size_t n, cap;
	size_t sorted;		/* v[0..sorted) is sorted by id */
};

/* walk the cgroup v2 tree and add the cgroups not seen before */
int cgroup_names__scan(struct cgroup_names *c);
const char *cgroup_names__find(struct cgroup_names *c, u64 id);
void cgroup_names__free(struct cgroup_names *c);

#endif /* HSBPF_CGROUP_H */
