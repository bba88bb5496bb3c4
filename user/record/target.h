/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What a recording watches: a command started here, running processes, the whole machine or
 * a cgroup; and on which CPUs. */
#ifndef HSBPF_TARGET_H
#define HSBPF_TARGET_H

#include <stdbool.h>
#include <sys/types.h>
#include "lib/util.h"

/* "12,34": 0, or -EINVAL after saying which part is wrong */
int target__parse_pids(const char *s, u32 **pids, int *nr);
/* 0 if every pid is a live process; otherwise says which is not and returns -ESRCH */
int target__check_pids(const u32 *pids, int nr);

struct command {
	pid_t pid;
	int gate;	/* write end: one byte lets the child exec */
	int status;	/* read end: EOF on a successful exec, errno otherwise */
};

/* fork a child that waits at the gate before exec; with kill_with_parent it gets SIGKILL
 * when hsbpf dies, however it dies (PR_SET_PDEATHSIG: the command itself, not what it forks,
 * and not past the exec of a set-user-ID program); 0 or -errno */
int command__spawn(char *const argv[], bool kill_with_parent, struct command *cmd);
/* open the gate; 0 if exec succeeded, -errno (reported) if it did not */
int command__start(struct command *cmd, const char *name);
/* kill and reap a child that never started */
void command__abort(struct command *cmd);

/* CPU numbers stop below this on any kernel (NR_CPUS is at most 8192) */
#define CPUS_MAX 8192

/* "0-3,6": sorted unique CPU numbers; 0, or -EINVAL after saying what is wrong */
int cpus__parse(const char *s, int **cpus, int *nr);
/* the CPUs online now, from sysfs; 0 or -errno (not reported) */
int cpus__online(int **cpus, int *nr);
/* a sorted list as "0-3,6" */
void cpus__format(const int *cpus, int nr, char *buf, size_t size);
/* 0 when every CPU of want is online; otherwise -ENODEV after saying which one is not, and
 * whether it does not exist (not present) or is offline */
int cpus__check(const int *want, int nr, const int *online, int nr_online, const int *present,
		int nr_present);
/* cpus__check against this machine's online and present CPUs */
int cpus__check_machine(const int *want, int nr);

#endif /* HSBPF_TARGET_H */
