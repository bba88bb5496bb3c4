// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* stat_counters, live: counters on this task and on every CPU, read as sums with their
 * enabled and running times, and a hardware group marked not supported where there is no PMU
 * (this machine) while the software events beside it count. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "stat/stat_counters.h"
#include "record/target.h"

#define PAGES 2000

static void touch_pages(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, PAGES * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	cr_assert(p != MAP_FAILED);
	for (int i = 0; i < PAGES; i++)
		p[i * page] = 1;
	munmap(p, PAGES * page);
}

static void spin_ms(int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

Test(stat_counters, this_task_and_an_unsupported_group)
{
	struct stat_events evs = { 0 };
	struct stat_reading r[4];
	struct stat_counters *c;
	pid_t self = getpid();

	cr_assert_eq(stat_events__parse(&evs, "task-clock,page-faults,{cycles,instructions}"), 0);
	c = stat_counters__open(&(struct stat_counters_opts){ .events = &evs, .tids = &self,
							      .nr_tids = 1 });
	cr_assert(c, "need root or CAP_PERFMON: %s", strerror(errno));
	cr_assert_eq(stat_counters__enable(c), 0);
	touch_pages();
	spin_ms(20);
	cr_assert_eq(stat_counters__disable(c), 0);
	cr_assert_eq(stat_counters__read(c, 0, r), 0);
	cr_expect_geq(r[0].count, 20000000, "20 ms of CPU: %llu ns", (unsigned long long)r[0].count);
	cr_expect_geq(r[1].count, PAGES, "%llu faults", (unsigned long long)r[1].count);
	/* under ASan each 8 pages touched fault one page of shadow memory too */
	cr_expect_leq(r[1].count, PAGES + PAGES / 8 + 50, "%llu faults", (unsigned long long)r[1].count);
	cr_expect_eq(r[0].enabled, r[0].running, "software counters are never multiplexed");
	cr_expect_gt(r[0].enabled, 0);
	if (event__have_pmu()) {
		cr_expect_eq(stat_counters__status(c, 2), STAT_COUNTER_OK);
		cr_expect_eq(stat_counters__nr_ok(c), 4);
	} else {
		/* no PMU here: the group goes with its leader, the software events count */
		cr_expect_eq(stat_counters__status(c, 2), STAT_COUNTER_NOT_SUPPORTED);
		cr_expect_eq(stat_counters__status(c, 3), STAT_COUNTER_NOT_SUPPORTED);
		cr_expect_eq(stat_counters__nr_ok(c), 2);
	}
	cr_expect_eq(stat_counters__status(c, 0), STAT_COUNTER_OK);
	stat_counters__close(c);
	stat_events__free(&evs);
}

/* per CPU: every CPU's clock runs the whole time it is enabled, idle or not */
Test(stat_counters, every_cpu)
{
	struct stat_events evs = { 0 };
	struct stat_reading r[1];
	struct stat_counters *c;
	int *cpus = NULL, nr = 0;

	cr_assert_eq(stat_events__parse(&evs, "cpu-clock"), 0);
	cr_assert_eq(cpus__online(&cpus, &nr), 0);
	c = stat_counters__open(&(struct stat_counters_opts){ .events = &evs, .cpus = cpus,
							      .nr_cpus = nr });
	cr_assert(c, "need root or CAP_PERFMON: %s", strerror(errno));
	cr_assert_eq(stat_counters__enable(c), 0);
	spin_ms(20);
	cr_assert_eq(stat_counters__disable(c), 0);
	cr_assert_eq(stat_counters__read(c, 0, r), 0);
	/* enabled is the sum over CPUs: each one's cpu-clock is its enabled time */
	cr_expect_geq(r[0].count, (u64)nr * 20000000 * 95 / 100, "%llu ns on %d CPUs",
		      (unsigned long long)r[0].count, nr);
	cr_expect_leq(r[0].count, r[0].enabled + r[0].enabled / 100, "%llu ns, enabled %llu",
		      (unsigned long long)r[0].count, (unsigned long long)r[0].enabled);
	stat_counters__close(c);
	stat_events__free(&evs);
	free(cpus);
}
