// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* make bench-stat's workload: context switches, many. Two processes pass a byte back and
 * forth over two pipes argv[1] times (two switches a round), the parent in cgroup argv[2] and
 * the child in cgroup argv[3] (cgroup directories; "-" stays where it is), so that with two
 * cgroups every switch between them crosses cgroups; both on CPU argv[4] when given, so that
 * each switch goes from one to the other. Prints the ns the rounds took, and the CPU time both
 * processes took: what a counting method adds to a switch is spent there, whatever else the
 * machine runs (which the wall time is not). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void join(const char *cgroup)
{
	char path[4096];
	int fd;

	if (!strcmp(cgroup, "-"))
		return;
	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, "0", 1) != 1) {	/* 0: the writer itself */
		perror(path);
		exit(1);
	}
	close(fd);
}

static long long now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ll + t.tv_nsec;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 100000;
	int to_child[2], to_parent[2], status;
	long long t0;
	struct rusage self, children;
	char c = 0;
	pid_t pid;

	if (argc < 4 || argc > 5 || rounds < 1 || pipe(to_child) || pipe(to_parent)) {
		fprintf(stderr, "usage: pingpong ROUNDS CGROUP_A CGROUP_B [CPU]\n");
		return 2;
	}
	if (argc == 5) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(atoi(argv[4]), &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("sched_setaffinity");
			return 1;
		}
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		join(argv[3]);
		if (write(to_parent[1], &c, 1) != 1)	/* ready */
			_exit(1);
		for (long i = 0; i < rounds; i++)
			if (read(to_child[0], &c, 1) != 1 || write(to_parent[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	join(argv[2]);
	if (read(to_parent[0], &c, 1) != 1)
		return 1;
	t0 = now();
	for (long i = 0; i < rounds; i++)
		if (write(to_child[1], &c, 1) != 1 || read(to_parent[0], &c, 1) != 1)
			return 1;
	t0 = now() - t0;
	waitpid(pid, &status, 0);
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &children);
	printf("%lld %lld\n", t0, (self.ru_utime.tv_sec + self.ru_stime.tv_sec + children.ru_utime.tv_sec +
				  children.ru_stime.tv_sec) * 1000000000ll + (self.ru_utime.tv_usec +
				  self.ru_stime.tv_usec + children.ru_utime.tv_usec + children.ru_stime.tv_usec) * 1000ll);
	return !WIFEXITED(status) || WEXITSTATUS(status);
}
