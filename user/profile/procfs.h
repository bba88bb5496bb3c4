/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What /proc tells about processes: the mappings and comms of those older than the recording,
 * which ones are alive, their namespace PIDs. */
#ifndef HSBPF_PROCFS_H
#define HSBPF_PROCFS_H

#include "profile/profile.h"

/* mappings and comms of processes that predate the recording, from /proc */
int procfs__synthesize(struct profile *p, u32 pid);
int procfs__synthesize_all(struct profile *p);
/* the same as records of time t (CLOCK_MONOTONIC): a re-reading while the recording runs,
 * after the kernel lost records, for the images the processes have at t. Comms are no
 * exec: an image begins at its exec's record, and one that was lost stays lost.
 * *gone (may be NULL) counts the processes that went while being read */
int procfs__synthesize_at(struct profile *p, u32 pid, u64 t);
int procfs__synthesize_all_at(struct profile *p, u64 t, u32 *gone);

/* the processes alive now (their pids; *pids to free): 0 or -errno after saying why */
int procfs__pids(u32 **pids, size_t *nr);
/* the child processes of pid's threads now (appended to *kids, grown as arrays are): 0, or
 * -errno (-ENOENT when pid is gone) */
int procfs__children(u32 pid, u32 **kids, size_t *nr, size_t *cap);
/* whether pid is a process that still runs (a zombie, exited but not yet waited for, does not) */
bool procfs__alive(u32 pid);
/* record the namespace PIDs of the processes p knows (those still alive) */
/* the innermost namespace PID of a live process (0: host namespace, or gone) */
u32 procfs__nspid(u32 pid);
void procfs__fill_nspids(struct profile *p, size_t from_comm, size_t from_fork);

#endif /* HSBPF_PROCFS_H */
