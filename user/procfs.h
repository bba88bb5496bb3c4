/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What /proc tells about processes: the mappings and comms of those older than the recording,
 * which ones are alive, their namespace PIDs. */
#ifndef HSBPF_PROCFS_H
#define HSBPF_PROCFS_H

#include "profile.h"

/* mappings and comms of processes that predate the recording, from /proc */
int procfs__synthesize(struct profile *p, u32 pid);
int procfs__synthesize_all(struct profile *p);

/* the processes alive now (their pids; *pids to free): 0 or -errno after saying why */
int procfs__pids(u32 **pids, size_t *nr);
/* the child processes of pid's threads now (appended to *kids, grown as arrays are): 0, or
 * -errno (-ENOENT when pid is gone) */
int procfs__children(u32 pid, u32 **kids, size_t *nr, size_t *cap);
/* whether pid is a process that still runs (a zombie, exited but not yet waited for, does not) */
bool procfs__alive(u32 pid);
/* record the namespace PIDs of the processes p knows (those still alive) */
void procfs__fill_nspids(struct profile *p, size_t from_comm, size_t from_fork);

#endif /* HSBPF_PROCFS_H */
