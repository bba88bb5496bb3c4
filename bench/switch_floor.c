// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The off-CPU benchmark's floor: bpf/switch_floor.bpf.c's empty program attached to
 * sched_switch until SIGINT/SIGTERM, so that bench/offcpu.sh measures what any tool attached
 * there costs a switch-heavy load at least. Says "ready" once attached. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "switch_floor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(void)
{
	struct switch_floor_bpf *skel;
	int err;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	skel = switch_floor_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "switch_floor: cannot load: %s\n", strerror(errno));
		return 1;
	}
	err = switch_floor_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "switch_floor: cannot attach to sched_switch: %s\n", strerror(-err));
		switch_floor_bpf__destroy(skel);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		pause();
	switch_floor_bpf__destroy(skel);
	return 0;
}
