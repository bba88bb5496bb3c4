// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* make bench-stat, part 1: what a counter interface costs per call, measured the way the
 * literature does (the smallest region a counter can time is bounded by these): enabling,
 * disabling and reading a group of counters (ioctl and read(2)), on this task and on another
 * CPU; rdpmc where there is a PMU; and per-cgroup counting's own calls (a flush of every
 * CPU, a read of its map). Prints a markdown table: median ns per call over batches. */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "stat/stat_cgroup.h"
#include "stat/stat_counters.h"
#include "record/target.h"

#define BATCHES 15
#define CALLS 20000

static volatile u64 sink;	/* keeps the rdpmc loop */

static long perf_open(struct perf_event_attr *a, pid_t pid, int cpu, int group)
{
	return syscall(__NR_perf_event_open, a, pid, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

typedef int (*op_fn)(void *ctx);

/* median over BATCHES of the ns per call of CALLS calls; -1 when the call fails */
static double per_call(op_fn fn, void *ctx, int calls)
{
	double ns[BATCHES];

	for (int b = 0; b < BATCHES; b++) {
		u64 t0 = now_ns(CLOCK_MONOTONIC);

		for (int i = 0; i < calls; i++)
			if (fn(ctx))
				return -1;
		ns[b] = (double)(now_ns(CLOCK_MONOTONIC) - t0) / calls;
	}
	qsort(ns, BATCHES, sizeof(ns[0]), cmp_double);
	return ns[BATCHES / 2];
}

struct group {
	int fds[4];
	int n;
};

static int op_enable(void *ctx)
{
	struct group *g = ctx;

	return ioctl(g->fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
}

static int op_disable(void *ctx)
{
	struct group *g = ctx;

	return ioctl(g->fds[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
}

static int op_clock(void *ctx)
{
	(void)ctx;
	return now_ns(CLOCK_MONOTONIC) == 0;
}

static int op_read_one(void *ctx)
{
	struct group *g = ctx;
	u64 v[3];

	return read(g->fds[0], v, sizeof(v)) != sizeof(v);
}

static int op_read_group(void *ctx)
{
	struct group *g = ctx;
	u64 v[3 + 2 * 4];

	return read(g->fds[0], v, sizeof(v)) <= 0;
}

static int op_read_each(void *ctx)
{
	struct group *g = ctx;
	u64 v[3];

	for (int i = 0; i < g->n; i++)
		if (read(g->fds[i], v, sizeof(v)) != sizeof(v))
			return 1;
	return 0;
}

static int op_nothing(void *ctx)
{
	(void)ctx;
	return syscall(__NR_getppid) < 0;
}

/* a group of software counters {task-clock, context-switches, page-faults} of this task
 * (cpu -1) or of every task on one CPU (pid -1); group: read with PERF_FORMAT_GROUP */
static int open_group(struct group *g, pid_t pid, int cpu, bool group_read)
{
	static const u64 cfg[] = { PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CONTEXT_SWITCHES,
				   PERF_COUNT_SW_PAGE_FAULTS };

	g->n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(cfg); i++) {
		struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
					     .config = cfg[i], .disabled = i == 0 };

		a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
				(group_read ? PERF_FORMAT_GROUP : 0);
		g->fds[g->n] = perf_open(&a, pid, cpu, i ? g->fds[0] : -1);
		if (g->fds[g->n] < 0)
			return -errno;
		g->n++;
	}
	return 0;
}

static void close_group(struct group *g)
{
	for (int i = 0; i < g->n; i++)
		close(g->fds[i]);
	g->n = 0;
}

static void row(const char *what, double ns, const char *note)
{
	if (ns < 0)
		printf("| %s | failed | %s |\n", what, note);
	else
		printf("| %s | %.0f | %s |\n", what, ns, note);
}

/* enable and disable alternately (each of a disabled or an enabled group: a real change),
 * each call timed alone, less what reading the clock twice costs */
static void toggle_rows(const char *where, struct group *g, int calls, const char *note)
{
	double on[BATCHES], off[BATCHES], clock_ns;
	char what[160];

	clock_ns = per_call(op_clock, NULL, CALLS);
	for (int b = 0; b < BATCHES; b++) {
		u64 t_on = 0, t_off = 0;

		for (int i = 0; i < calls; i++) {
			u64 t0 = now_ns(CLOCK_MONOTONIC), t1, t2;

			op_enable(g);
			t1 = now_ns(CLOCK_MONOTONIC);
			op_disable(g);
			t2 = now_ns(CLOCK_MONOTONIC);
			t_on += t1 - t0;
			t_off += t2 - t1;
		}
		on[b] = (double)t_on / calls - clock_ns;
		off[b] = (double)t_off / calls - clock_ns;
	}
	qsort(on, BATCHES, sizeof(on[0]), cmp_double);
	qsort(off, BATCHES, sizeof(off[0]), cmp_double);
	snprintf(what, sizeof(what), "%s: enable (ioctl, group of 3)", where);
	row(what, on[BATCHES / 2], note);
	snprintf(what, sizeof(what), "%s: disable (ioctl, group of 3)", where);
	row(what, off[BATCHES / 2], note);
}

/* calls: per batch; a remote CPU's calls take 100 times longer, and need not be as many */
static void group_rows(const char *where, pid_t pid, int cpu, int calls, const char *note)
{
	struct group g;
	char what[160];

	if (open_group(&g, pid, cpu, false)) {
		printf("| %s | failed | cannot open: %s |\n", where, strerror(errno));
		return;
	}
	toggle_rows(where, &g, calls / 4, note);
	op_enable(&g);
	snprintf(what, sizeof(what), "%s: read(2), one counter", where);
	row(what, per_call(op_read_one, &g, calls), "count, time enabled, time running");
	snprintf(what, sizeof(what), "%s: read(2) of each of 3", where);
	row(what, per_call(op_read_each, &g, calls / 3), "three calls");
	close_group(&g);
	if (open_group(&g, pid, cpu, true))
		return;
	op_enable(&g);
	snprintf(what, sizeof(what), "%s: read(2), group of 3", where);
	row(what, per_call(op_read_group, &g, calls), "PERF_FORMAT_GROUP: one call");
	close_group(&g);
}

static void rdpmc_row(void)
{
	struct perf_event_attr a = { .size = sizeof(a), .type = PERF_TYPE_HARDWARE,
				     .config = PERF_COUNT_HW_INSTRUCTIONS, .exclude_kernel = 1 };
	long fd = perf_open(&a, 0, -1, -1);
	struct perf_event_mmap_page *pc;

	if (fd < 0) {
		printf("| rdpmc (user-space read) | n/a | no hardware PMU here (instructions: %s): "
		       "rdpmc reads a hardware counter, there is none |\n", strerror(errno));
		return;
	}
	pc = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);
	if (pc == MAP_FAILED || !pc->cap_user_rdpmc) {
		printf("| rdpmc (user-space read) | n/a | the kernel does not allow it "
		       "(/sys/bus/event_source/devices/cpu/rdpmc) |\n");
	} else {
		/* the read protocol of perf_event_mmap_page: seqlock, index, rdpmc */
		double ns[BATCHES];

		for (int b = 0; b < BATCHES; b++) {
			u64 t0 = now_ns(CLOCK_MONOTONIC), sum = 0;

			for (int i = 0; i < CALLS; i++) {
				u32 seq, idx, lo, hi;

				do {
					seq = pc->lock;
					__sync_synchronize();
					idx = pc->index;
					if (idx) {
						__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(idx - 1));
						sum += ((u64)hi << 32) | lo;
					}
					__sync_synchronize();
				} while (pc->lock != seq);
			}
			ns[b] = (double)(now_ns(CLOCK_MONOTONIC) - t0) / CALLS;
			sink += sum;
		}
		qsort(ns, BATCHES, sizeof(ns[0]), cmp_double);
		row("rdpmc (user-space read)", ns[BATCHES / 2], "instructions:u, with the mmap seqlock");
	}
	if (pc != MAP_FAILED)
		munmap(pc, sysconf(_SC_PAGESIZE));
	close(fd);
}

static int op_flush(void *ctx)
{
	return stat_cgroup__flush(ctx);
}

static int nothing_fn(void *ctx, u64 id, int event, const struct stat_reading *r)
{
	(void)ctx, (void)id, (void)event, (void)r;
	return 0;
}

static int op_map_read(void *ctx)
{
	return stat_cgroup__read(ctx, nothing_fn, NULL);
}

static void cgroup_rows(void)
{
	struct stat_events evs = { 0 };
	struct stat_counters *c = NULL;
	struct stat_cgroup *s = NULL;
	int *cpus = NULL, nr, fds[3 * CPUS_MAX];

	if (stat_events__parse(&evs, "task-clock,context-switches,page-faults") ||
	    cpus__online(&cpus, &nr) || nr > CPUS_MAX)
		goto out;
	c = stat_counters__open(&(struct stat_counters_opts){ .events = &evs, .cpus = cpus,
							      .nr_cpus = nr });
	if (!c)
		goto out;
	for (int e = 0; e < 3; e++)
		for (int i = 0; i < nr; i++)
			fds[e * nr + i] = stat_counters__cpu_fd(c, e, i);
	s = stat_cgroup__open(&(struct stat_cgroup_opts){ .nr_events = 3, .cpus = cpus,
							  .nr_cpus = nr, .fds = fds });
	if (!s || stat_cgroup__attach(s) || stat_counters__enable(c))
		goto out;
	row("per-cgroup: flush of every CPU (BPF_PROG_TEST_RUN each)", per_call(op_flush, s, 2000),
	    "one run of the program per CPU: an IPI to each other CPU");
	row("per-cgroup: read of the map", per_call(op_map_read, s, 200),
	    "every (cgroup, event) of this machine, summed over CPUs");
out:
	stat_cgroup__destroy(s);
	stat_counters__close(c);
	stat_events__free(&evs);
	free(cpus);
}

int main(void)
{
	int *cpus = NULL, nr = 0;
	cpu_set_t set;

	if (cpus__online(&cpus, &nr) || nr < 1)
		return 1;
	/* on the first CPU: the per-CPU counters of the last one are then a remote CPU's */
	CPU_ZERO(&set);
	CPU_SET(cpus[0], &set);
	sched_setaffinity(0, sizeof(set), &set);
	printf("| call | ns per call (median of %d batches) | note |\n|---|---|---|\n", BATCHES);
	row("a system call that does nothing (getppid)", per_call(op_nothing, NULL, CALLS),
	    "the floor of any kernel interface");
	group_rows("this task", 0, -1, CALLS, "3 software counters");
	group_rows("this CPU", -1, cpus[0], CALLS, "3 software counters, every task");
	if (nr > 1)
		group_rows("another CPU", -1, cpus[nr - 1], CALLS / 20, "an IPI to that CPU per call");
	rdpmc_row();
	cgroup_rows();
	free(cpus);
	return 0;
}
