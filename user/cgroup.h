/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* cgroup v2: where it is mounted (hybrid or unified layouts), a path's id, an id's path. */
#ifndef HSBPF_CGROUP_H
#define HSBPF_CGROUP_H

#include <limits.h>
#include "util.h"

/* the cgroup2 mount point from a mountinfo file (normally /proc/self/mountinfo) */
int cgroup__find_mount(const char *mountinfo, char *buf, size_t size);
/* PATH may be absolute (inside the mount) or relative to the mount; fills the absolute
 * path, the id, and an open O_RDONLY fd of the directory (caller closes) */
int cgroup__open(const char *path, char *abs, size_t size, u64 *id, int *fd);
/* the cgroup id of a directory */
int cgroup__id(const char *dir, u64 *id);
/* the path (relative to the mount, "/" for the root) of cgroup id, by walking the tree */
int cgroup__path(u64 id, char *buf, size_t size);

#endif /* HSBPF_CGROUP_H */
