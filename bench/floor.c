// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The benchmark's floor: the same per-CPU cpu-clock events hsbpf opens, with an empty BPF
 * program attached, until SIGINT/SIGTERM. Prints the program's run-time statistics. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "record/sampler.h"
#include "record/target.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct sampler_opts o = { .cgroup_fd = -1 };
	struct sampler *s;
	int *cpus, nr;
	u64 ns, cnt;

	if (argc != 2 || parse_u64(argv[1], &o.period) || !o.period) {
		fprintf(stderr, "usage: floor PERIOD_NS\n");
		return 2;
	}
	if (event__parse("cpu-clock", &o.ev) || cpus__online(&cpus, &nr))
		return 1;
	o.cpus = cpus;
	o.nr_cpus = nr;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	s = sampler__open_empty(&o);
	if (!s || sampler__attach(s))
		return 1;
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		pause();
	if (!sampler__prog_stats(s, &ns, &cnt))
		printf("run_cnt=%llu run_time_ns=%llu\n", (unsigned long long)cnt, (unsigned long long)ns);
	sampler__destroy(s);
	free(cpus);
	return 0;
}
