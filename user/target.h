/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What a recording watches: a command started here, running processes, the whole machine or
 * a cgroup; and on which CPUs. */
#ifndef HSBPF_TARGET_H
#define HSBPF_TARGET_H

#include <sys/types.h>
#include "util.h"

/* "12,34": 0, or -EINVAL after saying which part is wrong */
int target__parse_pids(const char *s, u32 **pids, int *nr);
/* 0 if every pid is a live process; otherwise says which is not and returns -ESRCH */
int target__check_pids(const u32 *pids, int nr);

struct command {
	pid_t pid;
	int gate;	/* write end: one byte lets the child exec */
	int status;	/* read end: EOF on a successful exec, errno otherwise */
};

/* fork a child that waits at the gate before exec; 0 or -errno */
int command__spawn(char *const argv[], struct command *cmd);
/* open the gate; 0 if exec succeeded, -errno (reported) if it did not */
int command__start(struct command *cmd, const char *name);
/* kill and reap a child that never started */
void command__abort(struct command *cmd);

/* "0-3,6": sorted unique CPU numbers; 0 or -EINVAL */
int cpus__parse(const char *s, int **cpus, int *nr);
int cpus__online(int **cpus, int *nr);

#endif /* HSBPF_TARGET_H */
