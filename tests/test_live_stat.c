// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Live counting (hsbpf stat), as root: side by side with perf stat on fixtures with known
 * answers, per-cgroup counting in the kernel against perf's per-cgroup events and the
 * machine's total, and bad input. Tolerances come from the runs' own spread; nothing waits
 * on a fixed sleep. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "record/cgroup.h"
#include "record/event.h"
#include "helpers.h"
#include "stat/stat_cgroup.h"

TestSuite(stat_live, .fini = cleanup_tmpdir, .timeout = 120);

static const char *json_path(const char *name)
{
	static char buf[4][512];
	static int next;
	char *b = buf[next++ % 4];

	snprintf(b, 512, "%s/%s.json", tmpdir(), name);
	return b;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	cr_assert(f, "no output '%s'", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, n + 1);
	cr_assert(buf);
	cr_assert_eq(fread(buf, 1, n, f), (size_t)n);
	fclose(f);
	return buf;
}

/* does row (one {...} of the rows array) belong to set: "target", "[idle]", "[total]", or a
 * cgroup path */
static bool row_of(const char *row, const char *end, const char *set)
{
	char want[PATH_MAX + 32];
	const char *p;

	if (set[0] == '[' || !strcmp(set, "target"))
		snprintf(want, sizeof(want), "\"set\":\"%.*s\"", (int)strcspn(set + (set[0] == '['), "]"),
			 set + (set[0] == '['));
	else
		snprintf(want, sizeof(want), "\"cgroup\":\"%s\"", set);
	p = strstr(row, want);
	return p && p < end;
}

/* a number of the first row of set and event (-1 after failing the test if none) */
static double field(const char *json, const char *set, const char *event, const char *name)
{
	char ev[128], key[64];
	const char *row = strstr(json, "\"rows\":[");

	snprintf(ev, sizeof(ev), "\"event\":\"%s\"", event);
	snprintf(key, sizeof(key), "\"%s\":", name);
	for (; row && (row = strchr(row + 1, '{')); ) {
		const char *end = strchr(row, '}'), *e = strstr(row, ev), *v = strstr(row, key);

		if (!end || !e || e > end || !row_of(row, end, set))
			continue;
		cr_assert(v && v < end, "no %s in %.*s", name, (int)(end - row), row);
		return strtod(v + strlen(key), NULL);
	}
	cr_assert_fail("no row for %s %s in %s", set, event, json);
	return -1;
}

/* the sum of an event's value over the rows of every cgroup and the idle tasks */
static double sum_of_sets(const char *json, const char *event)
{
	char ev[128];
	const char *row = strstr(json, "\"rows\":[");
	double sum = 0;

	snprintf(ev, sizeof(ev), "\"event\":\"%s\"", event);
	for (; row && (row = strchr(row + 1, '{')); ) {
		const char *end = strchr(row, '}'), *e = strstr(row, ev), *v = strstr(row, "\"value\":");

		if (!end || !e || e > end || !v || v > end)
			continue;
		if (row_of(row, end, "[total]"))
			continue;
		sum += strtod(v + 8, NULL);
	}
	return sum;
}

struct sample {
	int n;
	double v[16];
};

static void add(struct sample *s, double v)
{
	cr_assert_lt(s->n, 16);
	s->v[s->n++] = v;
}

static double mean(const struct sample *s)
{
	double m = 0;

	for (int i = 0; i < s->n; i++)
		m += s->v[i] / s->n;
	return m;
}

static double sd(const struct sample *s)
{
	double m = mean(s), q = 0;

	for (int i = 0; i < s->n; i++)
		q += (s->v[i] - m) * (s->v[i] - m);
	return s->n > 1 ? sqrt(q / (s->n - 1)) : 0;
}

static double min_of(const struct sample *s)
{
	double m = INFINITY;

	for (int i = 0; i < s->n; i++)
		m = fmin(m, s->v[i]);
	return m;
}

static double max_of(const struct sample *s)
{
	double m = -INFINITY;

	for (int i = 0; i < s->n; i++)
		m = fmax(m, s->v[i]);
	return m;
}

static bool have_perf(void)
{
	struct run_result r;

	return run(&r, "perf stat -x, -e task-clock -- true") == 0;
}

/* one count of a command by hsbpf stat (JSON) and by perf stat (CSV, -x,) */
static double hsbpf_count(const char *event, const char *cmd)
{
	struct run_result r;
	double v;
	char *json;

	run(&r, "%s stat -e %s --format json -o %s -- %s", hsbpf_bin(), event, json_path("one"), cmd);
	cr_assert_eq(r.status, 0, "hsbpf stat -- %s: %s", cmd, r.err);
	json = slurp(json_path("one"));
	v = field(json, "target", event, "value");
	free(json);
	return v;
}

static double perf_count(const char *event, const char *cmd)
{
	struct run_result r;
	char ev[128];
	const char *line;

	run(&r, "perf stat -x, -e %s -- %s", event, cmd);
	cr_assert_eq(r.status, 0, "perf stat -- %s: %s", cmd, r.err);
	/* value,unit,event,... on standard error */
	snprintf(ev, sizeof(ev), ",%s,", event);
	line = strstr(r.err, ev);
	cr_assert(line, "perf stat printed no %s: %s", event, r.err);
	while (line > r.err && line[-1] != '\n')
		line--;
	return strtod(line, NULL);
}

Test(stat_live, the_per_cgroup_program_passes_the_verifier)
{
	cr_expect_eq(stat_cgroup__verify(), 0);
}

/* a known number of page faults: 20000 pages written once, over what starting the fixture
 * takes (the same fixture writing none). Both tools, three runs each, interleaved */
Test(stat_live, page_faults_side_by_side_with_perf)
{
	char big[600], none[600];
	struct sample h0 = { 0 }, h = { 0 }, p0 = { 0 }, p = { 0 };
	double tol;

	if (!have_perf())
		cr_skip_test("perf is not installed (scripts/install-deps.sh)");
	snprintf(big, sizeof(big), "%s 20000", fixture("faults"));
	snprintf(none, sizeof(none), "%s 0", fixture("faults"));
	for (int i = 0; i < 3; i++) {
		add(&h0, hsbpf_count("page-faults", none));
		add(&h, hsbpf_count("page-faults", big));
		add(&p0, perf_count("page-faults", none));
		add(&p, perf_count("page-faults", big));
	}
	/* a program's start faults the same pages each time, give or take a few: four times the
	 * spread of its runs, and at least 3 */
	tol = 4 * fmax(fmax(sd(&h0), sd(&p0)), 0.75);
	cr_expect(fabs(mean(&h) - mean(&h0) - 20000) <= tol + 20000 * 1e-4,
		  "hsbpf: %.1f faults for 20000 pages over a start of %.1f (+- %.1f)", mean(&h),
		  mean(&h0), tol);
	cr_expect(fabs(mean(&h) - mean(&p)) <= tol, "hsbpf %.1f, perf %.1f (+- %.1f)", mean(&h),
		  mean(&p), tol);
	cr_expect(fabs(mean(&h0) - mean(&p0)) <= tol, "start: hsbpf %.1f, perf %.1f", mean(&h0),
		  mean(&p0));
}

/* a known number of context switches: 200 sleeps, each giving the CPU up once, and never
 * fewer; more when a busy machine preempts it (as many for either tool) */
Test(stat_live, context_switches_side_by_side_with_perf)
{
	char cmd[600];
	struct sample h = { 0 }, p = { 0 };
	double tol;

	if (!have_perf())
		cr_skip_test("perf is not installed (scripts/install-deps.sh)");
	snprintf(cmd, sizeof(cmd), "%s 200", fixture("wakeups"));
	for (int i = 0; i < 4; i++) {
		add(&h, hsbpf_count("context-switches", cmd));
		add(&p, perf_count("context-switches", cmd));
	}
	cr_expect_geq(min_of(&h), 200, "hsbpf saw fewer switches than sleeps: %.0f", min_of(&h));
	cr_expect_geq(min_of(&p), 200, "perf saw fewer switches than sleeps: %.0f", min_of(&p));
	/* the extra switches are preemptions, a Poisson count: 4 of its standard deviations
	 * over perf's worst, and the two means within their spread */
	tol = 4 * sqrt(fmax(max_of(&p) - 200, 1)) + 2;
	cr_expect_leq(max_of(&h), max_of(&p) + tol, "hsbpf up to %.0f, perf up to %.0f",
		      max_of(&h), max_of(&p));
	cr_expect(fabs(mean(&h) - mean(&p)) <= 4 * sqrt(sd(&h) * sd(&h) / h.n + sd(&p) * sd(&p) / p.n) + 2,
		  "hsbpf %.1f (sd %.1f), perf %.1f (sd %.1f)", mean(&h), sd(&h), mean(&p), sd(&p));
}

/* CPU time of a fixed amount of work: the means of 5 interleaved runs each within four
 * standard errors of each other, the machine's noise measured by the runs themselves */
Test(stat_live, task_clock_side_by_side_with_perf)
{
	char cmd[600];
	struct sample h = { 0 }, p = { 0 };
	double se;

	if (!have_perf())
		cr_skip_test("perf is not installed (scripts/install-deps.sh)");
	snprintf(cmd, sizeof(cmd), "%s 60 1", fixture("busywork"));
	for (int i = 0; i < 5; i++) {
		add(&h, hsbpf_count("task-clock", cmd));
		add(&p, perf_count("task-clock", cmd));
	}
	se = sqrt(sd(&h) * sd(&h) / h.n + sd(&p) * sd(&p) / p.n);
	cr_expect(fabs(mean(&h) - mean(&p)) <= 4 * se + 0.002 * mean(&p),
		  "hsbpf %.2f ms (sd %.2f), perf %.2f ms (sd %.2f)", mean(&h), sd(&h), mean(&p), sd(&p));
	cr_expect_gt(min_of(&h), 1, "no work counted");
}

/* a cgroup for a test, below the cgroup v2 mount: its path, and its name below the mount */
static void make_cgroup(const char *name, char *dir, size_t size)
{
	char mnt[PATH_MAX];

	cr_assert_eq(cgroup__find_mount("/proc/self/mountinfo", mnt, sizeof(mnt)), 0);
	snprintf(dir, size, "%s/%s", mnt, name);
	cr_assert_eq(mkdir(dir, 0755), 0, "cannot create cgroup %s: %s", dir, strerror(errno));
}

static void write_script(const char *path, const char *text)
{
	write_bytes(path, text, strlen(text));
}

#define EVENTS "task-clock,context-switches,page-faults"

/* what the kernel program could not attribute for an event (0 when nothing) */
static double unattributed(const char *json, const char *event)
{
	char want[128];

	snprintf(want, sizeof(want), "\"set\":\"unattributed\",\"cgroup\":null,\"event\":\"%s\"",
		 event);
	return strstr(json, want) ? field(json, "[unattributed]", event, "value") : 0;
}

/* an event's count for set, and what went unattributed: the most that set can have had */
static double up_to(const char *json, const char *set, const char *event)
{
	return field(json, set, event, "value") + unattributed(json, event);
}

/* perf's per-cgroup events (outer) saw what the kernel program (inner) gave the cgroup, and
 * at most what went unattributed more: page faults exactly, a switch or two that the move
 * of a task to its cgroup may put on either side, CPU time to within 0.2% and a millisecond */
static void expect_bracketed(const char *inner, const char *outer, const char *set)
{
	static const struct {
		const char *event;
		double rel, abs;
	} tol[] = { { "page-faults", 0, 0 }, { "context-switches", 0, 2 }, { "task-clock", 0.002, 1 } };

	for (size_t i = 0; i < sizeof(tol) / sizeof(tol[0]); i++) {
		double in = field(inner, set, tol[i].event, "value");
		double out = field(outer, set, tol[i].event, "value");
		double u = unattributed(inner, tol[i].event), t = tol[i].rel * out + tol[i].abs;

		cr_expect(in <= out + t && out <= in + u + t, "%s %s: in the kernel %.3f (and %.3f "
			  "unattributed), perf's cgroup events %.3f", set, tol[i].event, in, u, out);
	}
}

/* Two containers, each a cgroup running fixtures with known CPU time (hot7030 runs until its
 * own CPU time reaches its argument), faults and sleeps. Counted in the kernel per cgroup
 * (inner) while perf's per-cgroup events count the same two (outer, around it): each cgroup
 * gets its own, as perf's events see them, and every cgroup's plus the idle tasks' add up to
 * the machine's total, as -a counts it */
Test(stat_live, per_cgroup_each_gets_its_own_and_they_add_up_to_the_machine)
{
	char a[PATH_MAX + 64], b[PATH_MAX + 64], na[64], nb[64], sa[80], sb[80], script[16384];
	char faults[1024], hot[1024], wakeups[1024];
	char *inner, *outer;
	struct run_result r;
	double total, cpus_x_elapsed;
	long nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);

	snprintf(na, sizeof(na), "hsbpf-stat-%d-a", getpid());
	snprintf(nb, sizeof(nb), "hsbpf-stat-%d-b", getpid());
	snprintf(sa, sizeof(sa), "/%s", na);
	snprintf(sb, sizeof(sb), "/%s", nb);
	make_cgroup(na, a, sizeof(a));
	make_cgroup(nb, b, sizeof(b));
	snprintf(faults, sizeof(faults), "%s", fixture("faults"));
	snprintf(hot, sizeof(hot), "%s", fixture("hot7030"));
	snprintf(wakeups, sizeof(wakeups), "%s", fixture("wakeups"));
	snprintf(script, sizeof(script),
		 "sh -c 'echo $$ > %s/cgroup.procs && %s 3000 && %s 0.3' >/dev/null &\n"
		 "sh -c 'echo $$ > %s/cgroup.procs && %s 6000 && %s 0.2 && %s 100' >/dev/null &\n"
		 "wait\n", a, faults, hot, b, faults, hot, wakeups);
	write_script(json_path("script"), script);
	run(&r, "%s stat -e " EVENTS " --cgroup %s --cgroup %s --cgroup-events --format json -o %s "
	    "-- %s stat -e " EVENTS " --per-cgroup --format json -o %s -- sh %s", hsbpf_bin(), na, nb,
	    json_path("outer"), hsbpf_bin(), json_path("inner"), json_path("script"));
	remove_cgroup(a);
	remove_cgroup(b);
	cr_assert_eq(r.status, 0, "%s", r.err);
	inner = slurp(json_path("inner"));
	outer = slurp(json_path("outer"));

	/* known: at least the fixtures' CPU time, faults and sleeps. A count in the kernel is a
	 * lower bound, and with what went unattributed (a switch the kernel did not show the
	 * program) an upper one */
	/* (the upper bounds only say that no other cgroup's CPU time is in there: writing a page
	 * the first time takes 5 to 20 us on a VM) */
	cr_expect(field(inner, sa, "task-clock", "value") < 3 * 300, "a: no one else's time");
	cr_expect(field(inner, sb, "task-clock", "value") < 3 * 200, "b: no one else's time");
	cr_expect(up_to(inner, sa, "task-clock") >= 300, "a: hot7030 took 300 ms of CPU");
	cr_expect(up_to(inner, sb, "task-clock") >= 200, "b: hot7030 took 200 ms of CPU");
	cr_expect(up_to(inner, sa, "page-faults") >= 3000, "a: 3000 pages");
	cr_expect(field(inner, sa, "page-faults", "value") < 3000 + 1000, "a: faults");
	cr_expect(up_to(inner, sb, "page-faults") >= 6000, "b: 6000 pages");
	cr_expect(field(inner, sb, "page-faults", "value") < 6000 + 1000, "b: faults");
	cr_expect(up_to(inner, sb, "context-switches") >= 100, "b: 100 sleeps");

	/* as perf's per-cgroup events count them, within what went unattributed: faults exactly,
	 * switches within the one made while a task moves itself, CPU time within the part of a
	 * millisecond a switch takes */
	for (int i = 0; i < 2; i++)
		expect_bracketed(inner, outer, i ? sb : sa);

	/* every cgroup and the idle tasks add up to the total the same counters read whole; and
	 * that total is what -a counts: every CPU's time, the whole run */
	for (int i = 0; i < 3; i++) {
		static const char *const events[] = { "task-clock", "context-switches", "page-faults" };
		double sum = sum_of_sets(inner, events[i]);

		total = field(inner, "[total]", events[i], "value");
		cr_expect(fabs(sum - total) <= 1e-6 * total + 1e-6, "%s: cgroups add up to %f, total %f",
			  events[i], sum, total);
	}
	total = field(inner, "[total]", "task-clock", "value");
	cpus_x_elapsed = nr_cpus * field(inner, "target", "elapsed", "value") * 1e3;
	cr_expect(fabs(total - cpus_x_elapsed) <= 0.01 * cpus_x_elapsed,
		  "total %.2f ms of CPU, %ld CPUs for the run: %.2f ms", total, nr_cpus, cpus_x_elapsed);
	free(inner);
	free(outer);
}

/* --cgroup counts a cgroup with its descendants, in the kernel as perf's events do */
Test(stat_live, a_cgroup_counts_its_descendants)
{
	char a[PATH_MAX + 64], sub[PATH_MAX + 96], na[64], ssub[160], sa[80], script[16384];
	char faults[1024], hot[1024], wakeups[1024];
	char *bpf, *events;
	struct run_result r;

	snprintf(na, sizeof(na), "hsbpf-stat-%d-p", getpid());
	snprintf(sa, sizeof(sa), "/%s", na);
	snprintf(ssub, sizeof(ssub), "/%s/sub", na);
	make_cgroup(na, a, sizeof(a));
	snprintf(sub, sizeof(sub), "%s/sub", a);
	cr_assert_eq(mkdir(sub, 0755), 0);
	snprintf(faults, sizeof(faults), "%s", fixture("faults"));
	snprintf(hot, sizeof(hot), "%s", fixture("hot7030"));
	snprintf(wakeups, sizeof(wakeups), "%s", fixture("wakeups"));
	snprintf(script, sizeof(script),
		 "sh -c 'echo $$ > %s/cgroup.procs && %s 2000 && %s 0.2' >/dev/null &\n"
		 "sh -c 'echo $$ > %s/cgroup.procs && %s 1000 && %s 50' >/dev/null &\n"
		 "wait\n", sub, faults, hot, a, faults, wakeups);
	write_script(json_path("script"), script);
	run(&r, "%s stat -e " EVENTS " --cgroup %s --cgroup %s/sub --cgroup-events --format json -o %s "
	    "-- %s stat -e " EVENTS " --cgroup %s --cgroup %s/sub --format json -o %s -- sh %s",
	    hsbpf_bin(), na, na, json_path("events"), hsbpf_bin(), na, na, json_path("bpf"),
	    json_path("script"));
	remove_cgroup(sub);
	remove_cgroup(a);
	cr_assert_eq(r.status, 0, "%s", r.err);
	bpf = slurp(json_path("bpf"));
	events = slurp(json_path("events"));
	cr_expect_geq(up_to(bpf, ssub, "page-faults"), 2000);
	cr_expect_geq(up_to(bpf, sa, "page-faults"), 3000, "the parent has its child's too");
	cr_expect_geq(up_to(bpf, sa, "context-switches"), 50);
	cr_expect_geq(field(bpf, sa, "task-clock", "value"), field(bpf, ssub, "task-clock", "value"));
	cr_expect_geq(field(bpf, sa, "page-faults", "value"), field(bpf, ssub, "page-faults", "value"));
	expect_bracketed(bpf, events, sa);
	expect_bracketed(bpf, events, ssub);
	free(bpf);
	free(events);
}

/* a row per interval and event, with its time; the intervals add up to the command's count */
Test(stat_live, intervals)
{
	struct run_result r;
	const char *row;
	double sum = 0, last = 0;
	int rows = 0;
	char *json;

	run(&r, "%s stat -e task-clock,page-faults -I 100 --format json -o %s -- %s 0.5", hsbpf_bin(),
	    json_path("iv"), fixture("hot7030"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	json = slurp(json_path("iv"));
	for (row = strstr(json, "\"rows\":["); (row = strstr(row + 1, "\"event\":\"task-clock\"")); rows++) {
		const char *start = row, *v = strstr(row, "\"value\":");
		double t;

		while (start > json && *start != '{')
			start--;
		t = strtod(strstr(start, "\"time\":") + 7, NULL);
		cr_expect_gt(t, last, "times go up");
		cr_expect_leq(t - last, 10, "an interval of %f s", t - last);
		last = t;
		sum += strtod(v + 8, NULL);
	}
	cr_expect_geq(rows, 4, "0.5 s of CPU in 100 ms intervals: %d rows", rows);
	cr_expect(sum >= 500 && sum < 600, "the intervals add up to %.2f ms", sum);
	free(json);
	/* text: the time first, perf's header */
	run(&r, "%s stat -e task-clock -I 100 -- %s 0.2", hsbpf_bin(), fixture("hot7030"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "#           time             counts unit events\n"), "%s", r.err);
	cr_expect(strstr(r.err, " msec task-clock"), "%s", r.err);
}

/* -r: mean, deviation and interval of each figure, over the runs */
Test(stat_live, repeats)
{
	struct run_result r;
	char *json;
	double mean_ms, lo, hi, sd;

	run(&r, "%s stat -r 4 -e task-clock,page-faults --format json -o %s -- %s 0.1", hsbpf_bin(),
	    json_path("rep"), fixture("hot7030"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	json = slurp(json_path("rep"));
	cr_expect(strstr(json, "\"runs\":4"), "%s", json);
	mean_ms = field(json, "target", "task-clock", "value");
	lo = field(json, "target", "task-clock", "ci95_low");
	hi = field(json, "target", "task-clock", "ci95_high");
	sd = field(json, "target", "task-clock", "stddev");
	cr_expect(mean_ms >= 100 && mean_ms < 150, "mean %.2f ms", mean_ms);
	cr_expect(lo <= mean_ms && mean_ms <= hi, "%.2f in [%.2f, %.2f]", mean_ms, lo, hi);
	cr_expect_geq(sd, 0);
	/* the interval of the mean of 4 runs: t(3) * sd / 2 */
	cr_expect(fabs((hi - mean_ms) - 3.1824 * sd / 2) <= 1e-3 * (hi - mean_ms) + 1e-9,
		  "half %.4f, sd %.4f", hi - mean_ms, sd);
	cr_expect_eq(field(json, "target", "task-clock", "runs"), 4);
	cr_expect_eq(field(json, "target", "elapsed", "runs"), 4);
	free(json);
	run(&r, "%s stat -r 3 -e task-clock -- %s 0.05", hsbpf_bin(), fixture("hot7030"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "(3 runs):"), "%s", r.err);
	cr_expect(strstr(r.err, " +- "), "%s", r.err);
	cr_expect(strstr(r.err, "half the 95% interval of the mean of 3 runs"), "%s", r.err);
}

/* here no PMU: each hardware event is a <not supported> row and the others are counted; with
 * one, the same events are counted */
Test(stat_live, hardware_events_are_counted_or_said_unsupported)
{
	static const char *const hw[] = { "cycles", "instructions:u", "branches", "branch-misses",
					  "cache-misses", "r00c0" };
	struct run_result r;
	char *json;

	run(&r, "%s stat -e task-clock,cycles,instructions:u,{branches,branch-misses},cache-misses,"
	    "r00c0 --format json -o %s -- %s 0.1", hsbpf_bin(), json_path("hw"), fixture("hot7030"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	json = slurp(json_path("hw"));
	cr_expect_geq(field(json, "target", "task-clock", "value"), 100);
	for (size_t i = 0; i < sizeof(hw) / sizeof(hw[0]); i++) {
		char want[128];

		snprintf(want, sizeof(want), "\"event\":\"%s\",\"status\":\"%s\"", hw[i],
			 event__have_pmu() ? "counted" : "not supported");
		cr_expect(strstr(json, want), "%s: %s", hw[i], json);
	}
	free(json);
	run(&r, "%s stat -e cycles,task-clock -- true", hsbpf_bin());
	cr_assert_eq(r.status, 0, "%s", r.err);
	if (!event__have_pmu()) {
		cr_expect(strstr(r.err, "   <not supported>      cycles\n"), "%s", r.err);
		cr_expect(strstr(r.err, "'cycles' not supported: no hardware PMU on this machine"),
			  "%s", r.err);
	}
	/* nothing counted is an error, not an empty table */
	run(&r, "%s stat -e {cycles,instructions} -- true", hsbpf_bin());
	if (event__have_pmu()) {
		cr_expect_eq(r.status, 0, "%s", r.err);
	} else {
		cr_expect_eq(r.status, 1, "%s", r.err);
		cr_expect(strstr(r.err, "nothing to count: 'cycles', 'instructions' not supported"),
			  "%s", r.err);
	}
}

/* the machine: every CPU's time; -p: a running process, every thread */
Test(stat_live, all_cpus_and_pids)
{
	char cmd[600];
	struct run_result r;
	long nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	double t, el;
	char *json;
	pid_t pid;

	run(&r, "%s stat -a -e task-clock,context-switches --format json -o %s -- sleep 0.3",
	    hsbpf_bin(), json_path("all"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	json = slurp(json_path("all"));
	t = field(json, "target", "task-clock", "value");
	el = field(json, "target", "elapsed", "value") * 1e3;
	cr_expect(fabs(t - nr_cpus * el) <= 0.01 * nr_cpus * el, "%.2f ms of CPU in %.2f ms", t, el);
	free(json);

	snprintf(cmd, sizeof(cmd), "exec %s 30", fixture("threads"));
	pid = spawn(cmd);
	wait_descendant(pid, "threads", 3);
	run(&r, "%s stat -p %d -e task-clock --format json -o %s -- sleep 0.5", hsbpf_bin(), pid,
	    json_path("pid"));
	reap(pid);
	cr_assert_eq(r.status, 0, "%s", r.err);
	json = slurp(json_path("pid"));
	t = field(json, "target", "task-clock", "value");
	el = field(json, "target", "elapsed", "value") * 1e3;
	/* two spinning threads: more than one CPU's worth when the machine lets them, never
	 * more than the machine */
	cr_expect(t > 0.1 * el && t <= fmin(nr_cpus, 3) * el * 1.01, "%.2f ms of CPU in %.2f ms", t, el);
	free(json);
}

/* Ctrl-C (SIGINT) ends a count of the machine cleanly: its last interval is shown, exit 0 */
Test(stat_live, sigint_ends_the_count)
{
	char out[600], cmd[1400];
	int status;
	pid_t pid;

	snprintf(out, sizeof(out), "%s/sig.txt", tmpdir());
	snprintf(cmd, sizeof(cmd), "exec %s stat -a -e task-clock -I 50 -o %s", hsbpf_bin(), out);
	pid = spawn(cmd);
	cr_assert(wait_file_contains(out, "task-clock", 10000), "no interval row");
	kill(pid, SIGINT);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
}

/* names from the system are shown escaped: a cgroup named with terminal controls */
Test(stat_live, hostile_cgroup_names_are_escaped)
{
	char name[64], dir[PATH_MAX + 64], script[2048];
	struct run_result r;

	snprintf(name, sizeof(name), "hsbpf-stat-%d-\033[2J\033]0;X\007", getpid());
	make_cgroup(name, dir, sizeof(dir));
	snprintf(script, sizeof(script), "sh -c 'echo $$ > \"$1\"/cgroup.procs && exec %s 0.1' sh "
		 "\"$1\"\n", fixture("hot7030"));
	write_script(json_path("script"), script);
	run(&r, "%s stat -e task-clock --per-cgroup -- sh %s '%s'", hsbpf_bin(), json_path("script"),
	    dir);
	remove_cgroup(dir);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect_null(strchr(r.err, '\033'), "an escape reached the terminal");
	cr_expect_null(strchr(r.err, '\007'), "a bell reached the terminal");
	cr_expect(strstr(r.err, "-\\x1b[2J\\x1b]0;X\\x07"), "%s", r.err);
}

/* bad input: a clear message and a non-zero status, and no counts */
Test(stat_live, bad_input)
{
	static const struct {
		const char *args;
		int status;
		const char *msg;
	} cases[] = {
		{ "-e no-such-event -- true", 2, "unknown event 'no-such-event'" },
		{ "-e '{cycles,instructions' -- true", 2, "invalid event group in '{cycles,instructions': no closing '}'" },
		{ "-e '{cycles,{instructions}}' -- true", 2, "groups do not nest" },
		{ "-e 'cycles,,instructions' -- true", 2, "an empty event name" },
		{ "-e '{}' -- true", 2, "an empty group" },
		{ "-r 0 -- true", 2, "invalid repeat count '0'" },
		{ "-r x -- true", 2, "invalid repeat count 'x'" },
		{ "-I 0 -- true", 2, "invalid interval '0'" },
		{ "-I -5 -- true", 2, "invalid interval '-5'" },
		{ "-r 2 -I 100 -- true", 2, "-r and -I exclude each other" },
		{ "-r 2 -a", 2, "-r needs a command to repeat" },
		{ "", 2, "nothing to count" },
		{ "-a -p 1", 2, "choose one target" },
		{ "-a --per-cgroup", 2, "choose one target" },
		{ "-p 0", 2, "invalid pid '0'" },
		{ "-p 999999999", 1, "no process with pid 999999999" },
		{ "--cgroup-events -a", 2, "--cgroup-events is for --cgroup" },
		{ "--format xml -- true", 2, "unknown format 'xml'" },
		{ "-- /nonexistent/program", 1, "cannot run '/nonexistent/program': No such file or directory" },
		{ "-- /etc/passwd", 1, "cannot run '/etc/passwd': Permission denied" },
		{ "-r 3 -- /nonexistent/program", 1, "cannot run '/nonexistent/program'" },
		{ "--cgroup no-such-cgroup -- true", 1, "cannot open cgroup '" },
		{ "--cgroup no-such-cgroup --cgroup-events -- true", 1, "no-such-cgroup': No such file or directory" },
		{ "-o /nonexistent-dir/x -- true", 1, "cannot create '/nonexistent-dir/x'" },
	};
	struct run_result r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		run(&r, "%s stat %s", hsbpf_bin(), cases[i].args);
		cr_expect_eq(r.status, cases[i].status, "'%s': status %d: %s", cases[i].args, r.status,
			     r.err);
		cr_expect(strstr(r.err, cases[i].msg), "'%s': %s", cases[i].args, r.err);
		cr_expect(strstr(r.err, "hsbpf: "), "'%s': no message", cases[i].args);
		cr_expect_null(strstr(r.err, "Performance counter stats"), "'%s' printed counts: %s",
			       cases[i].args, r.err);
	}
}

/* stat exits with its command's status, as perf stat does (and record does): a script that
 * runs `hsbpf stat -- make` learns whether make failed; a command stat itself ended is not a
 * failure of the command */
Test(stat_live, stat_exits_with_the_commands_status)
{
	static const struct {
		const char *cmd;
		int status;
	} cases[] = {
		{ "false", 1 },
		{ "sh -c 'exit 7'", 7 },
		{ "sh -c 'kill -KILL $$'", 137 },
		{ "true", 0 },
		{ "-r 3 -- false", 1 },
	};
	struct run_result *r = malloc(sizeof(*r));

	cr_assert(r);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		run(r, "%s stat -e task-clock %s%s", hsbpf_bin(), strncmp(cases[i].cmd, "-r", 2) ? "-- " : "",
		    cases[i].cmd);
		cr_expect_eq(r->status, cases[i].status, "'%s': status %d: %s", cases[i].cmd, r->status, r->err);
		cr_expect(strstr(r->err, "task-clock"), "'%s': no counts: %s", cases[i].cmd, r->err);
	}
	free(r);
}
