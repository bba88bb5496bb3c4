// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Live recordings: the real BPF programs on cpu-clock, run as root, against fixtures with
 * known answers. Only the hardware-event checks depend on the machine having a PMU, and
 * both answers are checked: the clear refusal here, a recording where there is one. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "record/cgroup.h"
#include "record/event.h"
#include "helpers.h"
#include "hsbpf.h"
#include "lib/period.h"
#include "record/sampler.h"
#include "symbols/symbolizer.h"

TestSuite(live, .init = remove_stale_test_cgroups, .fini = cleanup_tmpdir, .timeout = 60);

Test(live, every_bpf_program_passes_the_verifier)
{
	cr_expect_eq(sampler__verify_all(), 0);
}

Test(live, two_functions_70_30)
{
	struct profile *p = record_profile("-F 999 -- %s 2", fixture("hot7030"));
	u64 a = samples_in_symbol(p, "work_70"), b = samples_in_symbol(p, "work_30");
	u64 total = profile__total_samples(p);

	cr_expect_gt(total, 1500, "2 s at 999 Hz gave %llu samples", (unsigned long long)total);
	cr_expect_geq(a + b, total * 95 / 100, "samples outside the two functions: %llu of %llu",
		      (unsigned long long)(total - a - b), (unsigned long long)total);
	expect_share(a, a + b, 0.70, "work_70");
	cr_expect_eq(p->stats.dropped_full, 0);
	cr_expect_str_eq(p->meta.event, "cpu-clock");
	cr_expect_eq(p->meta.period, 1000000000 / 999);
	/* fixed period: each sample weighs one period */
	cr_expect_eq(profile__total_weight(p), total * p->meta.period);
	profile__free(p);
}

/* a perf map file at path: n lines, one in ten malformed, so that a recorder that reads it
 * counts them (jit_malformed: not reset by what the profile keeps) */
static void write_junk_map(const char *path, int n)
{
	char line[128];
	FILE *f = fopen(path, "we");

	cr_assert_not_null(f);
	for (int i = 0; i < n; i++) {
		if (i % 10)
			snprintf(line, sizeof(line), "%x 10 JS:~stale_map_function_%d /junk/pad.js:1:1\n",
				 0x10000 + 16 * i, i);
		else
			snprintf(line, sizeof(line), "stale_map_malformed_line %d\n", i);
		fputs(line, f);
	}
	cr_assert_eq(fclose(f), 0);
}

/* Perf map files of processes not recorded are not read at all (once every one in /tmp was,
 * every second: two 128 MB ones of no process made record -d 2 take 7.7 s and 682 MB): of a
 * junk one of a pid no process has, and a stale one a dead process left, no malformed line
 * is counted (the access time would tell better, but other recorders on the machine read
 * /tmp too); the recording takes the samples its duration gives, and its profile holds none
 * of their names (their 2,000 names once made a 5 KB profile 90 KB) */
Test(live, other_processes_perf_maps_are_not_read)
{
	char junk[64], stale[64];
	struct profile *p;
	pid_t dead;
	long pid;
	u64 total, w70, w30;
	double want, seconds;

	for (pid = 4000000; pid > 1000 && (kill(pid, 0) == 0 || errno != ESRCH); pid--)
		;
	dead = fork();
	cr_assert_geq(dead, 0);
	if (!dead)
		_exit(0);
	cr_assert_eq(waitpid(dead, NULL, 0), dead);
	snprintf(junk, sizeof(junk), "/tmp/perf-%ld.map", pid);
	snprintf(stale, sizeof(stale), "/tmp/perf-%d.map", dead);
	write_junk_map(junk, 80000);	/* 4.5 MB */
	write_junk_map(stale, 2000);
	p = record_profile("-F 999 -d 1 -- %s 30", fixture("hot7030"));
	cr_expect_eq(p->stats.jit_malformed, 0, "the maps were read: %llu malformed lines",
		     (unsigned long long)p->stats.jit_malformed);
	unlink(junk);
	unlink(stale);
	/* cpu-clock counts CPU time: one thread for the duration gives at most 999 a second,
	 * within the period's jitter (4 sd of a Poisson count, generous); and the duration is
	 * the one asked for, not overrun by reading files */
	seconds = p->meta.duration_ns / 1e9;
	want = 999 * seconds;
	total = profile__total_samples(p);
	cr_expect_leq(total, want + 4 * sqrt(want), "%llu samples in %.3f s",
		      (unsigned long long)total, seconds);
	cr_expect_lt(seconds, 1.5, "-d 1 took %.3f s", seconds);
	/* symbolized as ever: work_70 sampled, its share right (a count floor fails when a
	 * loaded machine gives the command a fraction of a CPU) */
	w70 = samples_in_symbol(p, "work_70");
	w30 = samples_in_symbol(p, "work_30");
	cr_expect_gt(w70, 0, "no sample in work_70 of %llu", (unsigned long long)total);
	expect_share(w70, w70 + w30, 0.70, "work_70");
	cr_expect_eq(p->nr_jitsyms, 0);
	cr_expect_eq(p->stats.jit_maps, 0);
	cr_expect_eq(p->stats.jit_ignored, 0);
	cr_expect_null(memmem(p->strs.buf, p->strs.len, "stale_map_function", 18));
	cr_expect_lt(p->strs.len, 4096, "%zu bytes of strings", p->strs.len);
	profile__free(p);
}

/* children that fork, exec and exit before the recording ends are still symbolized */
Test(live, short_lived_children)
{
	struct profile *p = record_profile("-- %s %s", fixture("forker"), fixture("hot7030"));
	u64 total = profile__total_samples(p), unknown = samples_in_symbol(p, "[unknown]");

	cr_expect_gt(samples_in_symbol(p, "parent_spin"), 200);
	cr_expect_gt(samples_in_symbol(p, "child_spin"), 150, "forked child without exec");
	cr_expect_gt(samples_in_symbol(p, "work_70"), 100, "exec'd child that exited");
	cr_expect_leq(unknown, total / 50, "%llu of %llu samples unresolved",
		      (unsigned long long)unknown, (unsigned long long)total);
	profile__free(p);
}

/* the same pid before and after exec holds two images: samples go to the right one */
Test(live, exec_replaces_the_image)
{
	struct profile *p = record_profile("-- /bin/sh -c 'exec %s 1'", fixture("hot7030"));
	struct symbolizer *sy = symbolizer__new(p);
	u64 hot = 0;

	for (size_t i = 0; i < p->nr_samples; i++) {
		struct sym_result r;

		symbolizer__resolve(sy, &p->samples[i], &r);
		if (!strcmp(r.sym, "work_70") || !strcmp(r.sym, "work_30")) {
			hot += p->samples[i].count;
			cr_expect_neq(p->samples[i].exec_ns, 0, "hot7030 sample tagged as the shell's image");
		}
		if (!p->samples[i].exec_ns && !r.kernel)
			cr_expect(!strstr(r.dso, "hot7030"), "shell sample resolved in %s", r.dso);
	}
	cr_expect_gt(hot, 800);
	symbolizer__free(sy);
	profile__free(p);
}

Test(live, attach_to_a_running_process_and_all_its_threads)
{
	const char *names[2] = { "thread_a", "thread_b" };
	char cmd[600];
	struct profile *p;
	pid_t pid, tids[2];
	double cpu[2];

	snprintf(cmd, sizeof(cmd), "exec %s 8", fixture("threads"));
	pid = spawn(cmd);
	wait_descendant(pid, "threads", 3);
	cr_assert_eq(worker_tids(pid, tids, 2), 2);
	/* each thread's samples against the CPU it had while sampled */
	p = record_profile_cpu(tids, 2, cpu, "-p %d -d 1", pid);
	for (int i = 0; i < 2; i++)
		expect_samples_for_cpu(samples_in_symbol(p, names[i]), cpu[i], p->meta.period, names[i]);
	reap(pid);
	cr_expect_eq(samples_in_pid(p, pid), profile__total_samples(p), "samples outside the pid");
	profile__free(p);
}

/* --no-inherit, as perf's: the command's main thread only. The threads fixture's work is in
 * two threads (its main thread waits), so it leaves their functions out; a child process
 * sh starts is not followed; the main thread's own work is recorded */
Test(live, no_inherit_samples_the_main_thread_only)
{
	struct profile *p;
	u64 a, b, total;

	p = record_profile("--no-inherit -- %s 0.5", fixture("threads"));
	a = samples_in_symbol(p, "thread_a");
	b = samples_in_symbol(p, "thread_b");
	cr_expect_eq(a + b, 0, "samples in the threads: %llu and %llu", (unsigned long long)a,
		     (unsigned long long)b);
	profile__free(p);
	p = record_profile("--no-inherit -- sh -c '%s 0.3; exit 0'", fixture("hot7030"));
	cr_expect_eq(samples_in_symbol(p, "work_70") + samples_in_symbol(p, "work_30"), 0,
		     "the child hot7030 was followed");
	profile__free(p);
	p = record_profile("--no-inherit -- %s 0.3", fixture("hot7030"));
	total = profile__total_samples(p);
	cr_expect_gt(samples_in_symbol(p, "work_70"), 0, "the main thread's own work is missing "
		     "(%llu samples)", (unsigned long long)total);
	profile__free(p);
}

/* -p: a child the target forks while record starts, after record read /proc and before the
 * target's pid is in the filter (the test hook holds record there), is recorded as a child
 * forked later is: without the rescan of the target's children it has no sample */
Test(live, pid_target_child_forked_while_record_starts)
{
	char hook[PATH_MAX], ctl[PATH_MAX], cmd[3 * PATH_MAX];
	pid_t target, rec, child;
	struct profile *p;
	int fd = -1, c, status;

	snprintf(hook, sizeof(hook), "%s/hook", tmpdir());
	snprintf(ctl, sizeof(ctl), "%s/ctl", tmpdir());
	cr_assert_eq(mkfifo(hook, 0600), 0);
	cr_assert_eq(mkfifo(ctl, 0600), 0);
	snprintf(cmd, sizeof(cmd), "read x < %s; %s 30 & wait", ctl, fixture("hot7030"));
	target = spawn(cmd);
	snprintf(cmd, sizeof(cmd), "HSBPF_TEST_HOOK_BEFORE_ATTACH=%s exec %s record -o %s -p %d -d 1 "
		 "2>%s/err", hook, hsbpf_bin(), profile_path(), target, tmpdir());
	rec = spawn(cmd);
	/* record opens the hook for reading once it is in the window */
	for (int i = 0; fd < 0 && i < 1500; i++) {
		fd = open(hook, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0) {
			cr_assert_eq(waitpid(rec, &status, WNOHANG), 0, "record ended before the hook");
			nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
		}
	}
	cr_assert_geq(fd, 0, "record never reached the hook");
	c = open(ctl, O_WRONLY | O_CLOEXEC);
	cr_assert_geq(c, 0);
	cr_assert_eq(write(c, "\n", 1), 1);
	close(c);
	child = wait_descendant(target, "hot7030", 1);
	close(fd);	/* record goes on */
	cr_assert_eq(waitpid(rec, &status, 0), rec);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "record failed: status %d", status);
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	reap(child);
	reap(target);
	/* a second of a busy machine's CPU: a tenth of it at least */
	cr_expect_gt(samples_in_pid(p, child), 100, "child %d: %llu samples", child,
		     (unsigned long long)samples_in_pid(p, child));
	cr_expect_gt(samples_in_symbol(p, "work_70"), 50, "the child's samples are symbolized");
	profile__free(p);
}

/* one workload inside a cgroup, one outside: the recording sees only the inside one */
Test(live, cgroup_sees_only_its_members)
{
	char mnt[PATH_MAX], dir[PATH_MAX + 64], cmd[2 * PATH_MAX];
	struct profile *p;
	pid_t in, out;
	double cpu;
	u64 id;

	cr_assert_eq(cgroup__find_mount("/proc/self/mountinfo", mnt, sizeof(mnt)), 0);
	snprintf(dir, sizeof(dir), "%s/hsbpf-test-%d", mnt, getpid());
	cr_assert_eq(mkdir(dir, 0755), 0, "cannot create cgroup %s", dir);
	cr_assert_eq(cgroup__id(dir, &id), 0);
	snprintf(cmd, sizeof(cmd), "echo $$ > %s/cgroup.procs && exec %s 8", dir, fixture("hot7030"));
	in = spawn(cmd);
	snprintf(cmd, sizeof(cmd), "exec %s 3", fixture("hot7030"));
	out = spawn(cmd);
	in = wait_descendant(in, "hot7030", 1);
	wait_descendant(out, "hot7030", 1);
	/* the inside workload's samples against the CPU it had while sampled */
	p = record_profile_cpu(&in, 1, &cpu, "--cgroup %s -d 1", strrchr(dir, '/') + 1);
	reap(in);
	reap(out);
	remove_cgroup(dir);
	expect_samples_for_cpu(samples_in_pid(p, in), cpu, p->meta.period, "inside");
	cr_expect_eq(samples_in_pid(p, out), 0, "the outside workload was sampled");
	for (size_t i = 0; i < p->nr_samples; i++)
		cr_expect_eq(p->samples[i].cgroup_id, id, "sample from cgroup %llu",
			     (unsigned long long)p->samples[i].cgroup_id);
	cr_assert_geq(p->nr_cgroups, 1);
	cr_expect(strstr(profile__str(p, p->cgroups[0].path), "hsbpf-test-"));
	profile__free(p);
}

/* some JSON row (one {...} without nesting) holds both strings */
static bool row_has(const char *json, const char *x, const char *y)
{
	for (const char *p = strstr(json, x); p; p = strstr(p + 1, x)) {
		const char *start = p, *end = strchr(p, '}'), *q;

		while (start > json && *start != '{')
			start--;
		q = strstr(start, y);
		if (q && end && q < end)
			return true;
	}
	return false;
}

/* Two "containers", each a cgroup named as docker names them with its own PID namespace,
 * and a workload on the host: a machine-wide recording puts each function in its own
 * container, the report names the containers by their short ids, and the processes inside
 * are shown with the pid they see (1). */
Test(live, two_containers_and_the_host)
{
	char mnt[PATH_MAX], base[PATH_MAX + 64], a[PATH_MAX + 160], b[PATH_MAX + 160];
	char cmd[2 * PATH_MAX + 512];
	struct run_result r;
	struct symbolizer *sy;
	struct profile *p;
	u64 ida, idb, in_a = 0, in_b = 0, host = 0;
	pid_t pa, pb, ph, hot, thr, busy, tids[4];
	double cpu[4];

	cr_assert_eq(cgroup__find_mount("/proc/self/mountinfo", mnt, sizeof(mnt)), 0);
	snprintf(base, sizeof(base), "%s/hsbpf-test-%d", mnt, getpid());
	cr_assert_eq(mkdir(base, 0755), 0, "cannot create cgroup %s", base);
	make_docker_cgroup(base, 'a', a, sizeof(a));
	make_docker_cgroup(base, 'b', b, sizeof(b));
	cr_assert_eq(cgroup__id(a, &ida), 0);
	cr_assert_eq(cgroup__id(b, &idb), 0);
	snprintf(cmd, sizeof(cmd), "echo $$ > %s/cgroup.procs && exec unshare --kill-child -p -f "
		 "--mount-proc %s 8", a, fixture("hot7030"));
	pa = spawn(cmd);
	snprintf(cmd, sizeof(cmd), "echo $$ > %s/cgroup.procs && exec unshare --kill-child -p -f "
		 "--mount-proc %s 8", b, fixture("threads"));
	pb = spawn(cmd);
	snprintf(cmd, sizeof(cmd), "exec %s 100000 1", fixture("busywork"));
	ph = spawn(cmd);
	/* by pid: another hot7030 on the machine is not this test's */
	hot = wait_descendant(pa, "hot7030", 1);
	thr = wait_descendant(pb, "threads", 3);
	busy = wait_descendant(ph, "busywork", 2);
	/* the watched threads: hot7030's one, threads' two workers, busywork's spinner */
	tids[0] = hot;
	cr_assert_eq(worker_tids(thr, tids + 1, 2), 2);
	cr_assert_eq(worker_tids(busy, tids + 3, 1), 1);
	/* each workload's samples against the CPU it had while sampled */
	p = record_profile_cpu(tids, 4, cpu, "-a -F 499 -d 1.5");
	cpu[1] += cpu[2];	/* container b: both threads */
	cpu[2] = cpu[3];
	reap(pa);
	reap(pb);
	reap(ph);
	sy = symbolizer__new(p);
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct profile_sample *s = &p->samples[i];
		struct sym_result res;

		symbolizer__resolve(sy, s, &res);
		if (s->pid == (u32)hot && (!strcmp(res.sym, "work_70") || !strcmp(res.sym, "work_30"))) {
			in_a += s->count;
			cr_expect_eq(s->cgroup_id, ida, "hot7030 sampled in cgroup %llu",
				     (unsigned long long)s->cgroup_id);
			cr_expect_eq(profile__nspid(p, s->pid), 1, "hot7030 is pid 1 in its namespace");
		} else if (s->pid == (u32)thr && (!strcmp(res.sym, "thread_a") || !strcmp(res.sym, "thread_b"))) {
			in_b += s->count;
			cr_expect_eq(s->cgroup_id, idb, "threads sampled in cgroup %llu",
				     (unsigned long long)s->cgroup_id);
			cr_expect_eq(profile__nspid(p, s->pid), 1, "threads is pid 1 in its namespace");
		} else if (s->pid == (u32)busy && !strcmp(res.sym, "spin")) {
			host += s->count;
			cr_expect(s->cgroup_id != ida && s->cgroup_id != idb, "host workload in a container");
			cr_expect_eq(profile__nspid(p, s->pid), 0);
		}
	}
	symbolizer__free(sy);
	expect_samples_for_cpu(in_a, cpu[0], p->meta.period, "container a");
	expect_samples_for_cpu(in_b, cpu[1], p->meta.period, "container b");
	expect_samples_for_cpu(host, cpu[2], p->meta.period, "host");
	profile__free(p);
	run(&r, "%s report -i %s --per-cgroup --format json", hsbpf_bin(), profile_path());
	remove_cgroup(a);
	remove_cgroup(b);
	remove_cgroup(base);
	cr_assert_eq(r.status, 0, "%s", r.err);
	/* each container's hottest function is in a row of its own, under its short id */
	cr_expect(row_has(r.out, "\"container\":\"aaaaaaaaaaaa\"", "\"symbol\":\"work_70\""),
		  "no row for work_70 in container a: %s", r.out);
	cr_expect(row_has(r.out, "\"container\":\"bbbbbbbbbbbb\"", "\"symbol\":\"thread_"),
		  "no row for threads in container b: %s", r.out);
	cr_expect(!row_has(r.out, "\"container\":\"aaaaaaaaaaaa\"", "\"symbol\":\"thread_"),
		  "threads attributed to container a (pids: hot7030 %d, threads %d): %.6000s", hot, thr,
		  r.out);
}

/* a container that ends, and whose cgroup is removed, while the machine is being recorded:
 * the recording carries on and its samples keep the cgroup's name */
Test(live, cgroup_removed_while_recording)
{
	char mnt[PATH_MAX], dir[PATH_MAX + 64], *rel, cmd[2 * PATH_MAX + 256], err_path[600];
	const char *named = NULL;
	struct profile *p;
	pid_t rec, w;
	u64 id, in = 0;
	int st;

	cr_assert_eq(cgroup__find_mount("/proc/self/mountinfo", mnt, sizeof(mnt)), 0);
	snprintf(dir, sizeof(dir), "%s/hsbpf-gone-%d", mnt, getpid());
	rel = dir + strlen(mnt);
	cr_assert_eq(mkdir(dir, 0755), 0, "cannot create cgroup %s", dir);
	cr_assert_eq(cgroup__id(dir, &id), 0);
	unlink(profile_path());
	snprintf(err_path, sizeof(err_path), "%s/record.err", tmpdir());
	/* the recording first; the container starts once it samples, runs, ends, and its
	 * cgroup is removed; only then does the recording end */
	snprintf(cmd, sizeof(cmd), "exec %s record -v -a -d 120 -o %s 2>%s", hsbpf_bin(), profile_path(), err_path);
	rec = spawn(cmd);
	cr_assert(wait_file_contains(err_path, "hsbpf: recording", 30000), "record did not start");
	snprintf(cmd, sizeof(cmd), "echo $$ > %s/cgroup.procs && exec %s 1", dir, fixture("hot7030"));
	w = spawn(cmd);
	cr_assert_eq(waitpid(w, &st, 0), w);
	remove_cgroup(dir);
	cr_expect_neq(access(dir, F_OK), 0, "the cgroup could not be removed");
	kill(rec, SIGINT);
	cr_assert_eq(waitpid(rec, &st, 0), rec);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "record failed (%d)", st);
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	for (size_t i = 0; i < p->nr_samples; i++)
		if (p->samples[i].cgroup_id == id)
			in += p->samples[i].count;
	cr_expect_gt(in, 100, "%llu samples from the removed cgroup", (unsigned long long)in);
	for (size_t i = 0; i < p->nr_cgroups && !named; i++)
		if (p->cgroups[i].id == id)
			named = profile__str(p, p->cgroups[i].path);
	cr_assert(named, "the removed cgroup is not in the cgroup table");
	cr_expect_str_eq(named, rel);
	profile__free(p);
}

/* a process in its own PID namespace (as in a container) keeps its host pid in the samples
 * and is also shown with the pid it sees: 1, the namespace's init */
Test(live, pid_namespace_pid_is_recorded)
{
	struct profile *p = record_profile("-- unshare -p -f --mount-proc %s 1", fixture("hot7030"));
	struct run_result r;
	u32 pid = 0;

	for (size_t i = 0; i < p->nr_samples && !pid; i++)
		if (profile__nspid(p, p->samples[i].pid) == 1)
			pid = p->samples[i].pid;
	cr_assert_neq(pid, 0, "no sampled process has namespace pid 1 (%zu known)", p->nr_nspids);
	cr_expect_gt(samples_in_pid(p, pid), 500);
	profile__free(p);
	run(&r, "%s report -i %s --sort pid --format json", hsbpf_bin(), profile_path());
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "\"ns_pid\":1"), "no ns_pid in %s", r.out);
}

/* the -v log of a randomized recording: every interval with its draw (0: none aimed at it) */
struct interval_log {
	u64 *measured, *drawn;
	bool *target;
	size_t n;
};

static void read_interval_log(const char *path, struct interval_log *log)
{
	FILE *f = fopen(path, "r");
	char line[512];
	size_t cap = 0;

	cr_assert(f, "no log %s", path);
	memset(log, 0, sizeof(*log));
	while (fgets(line, sizeof(line), f)) {
		const char *m = strstr(line, " measured="), *d = strstr(line, " drawn="), *t = strstr(line, " target=");

		if (!strstr(line, "debug: interval cpu=") || !m || !d || !t)
			continue;
		if (log->n == cap) {
			cap = cap ? cap * 2 : 4096;
			log->measured = realloc(log->measured, cap * sizeof(u64));
			log->drawn = realloc(log->drawn, cap * sizeof(u64));
			log->target = realloc(log->target, cap * sizeof(bool));
			cr_assert(log->measured && log->drawn && log->target);
		}
		log->measured[log->n] = strtoull(m + 10, NULL, 10);
		log->drawn[log->n] = d[7] == '-' ? 0 : strtoull(d + 7, NULL, 10);
		log->target[log->n] = t[8] == '1';
		log->n++;
	}
	fclose(f);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double quantile(double *v, size_t n, double q)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[(size_t)(q * (n - 1))];
}

/* Randomized periods keep their promise: intervals drawn uniformly from [P, P + P/8) come out
 * as drawn, each sample weighs its own measured interval, and the split is still right. The
 * bounds are robust statistics, so that a host that stalls the VM now and then (which only
 * stretches intervals) cannot fail the test, while the controller's failures (a bias, a
 * shortened period left in force) do: before the fix 5-30% of intervals came out short. */
static void check_random_periods(const char *mode, bool prime)
{
	const u64 base = 1000000;
	char log_path[600];
	struct interval_log log;
	struct run_result r;
	struct profile *p;
	double *v, *err, *serr, n_short = 0, weight = 0, span = base / 8.0;
	size_t n = 0, ne = 0;

	snprintf(log_path, sizeof(log_path), "%s/intervals.log", tmpdir());
	unlink(profile_path());
	run(&r, "%s record -v --period-mode %s -c %llu -o %s -- %s 2 2>%s", hsbpf_bin(), mode,
	    (unsigned long long)base, profile_path(), fixture("hot7030"), log_path);
	cr_assert_eq(r.status, 0, "record failed (%d)", r.status);
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	read_interval_log(log_path, &log);
	v = calloc(log.n + 1, sizeof(*v));
	err = calloc(log.n + 1, sizeof(*err));
	serr = calloc(log.n + 1, sizeof(*serr));
	cr_assert(v && err && serr);
	for (size_t i = 0; i < log.n; i++) {
		if (!log.target[i])
			continue;
		weight += log.measured[i];
		if (!log.drawn[i])
			continue;	/* the first interval of a CPU, or one no re-arm aimed at */
		v[n++] = log.measured[i];
		serr[ne++] = (double)log.measured[i] - (double)log.drawn[i];
		if (log.measured[i] < base - base / 50)
			n_short++;
		if (prime)
			cr_expect(period__is_prime(log.drawn[i]), "drawn %llu is not prime",
				  (unsigned long long)log.drawn[i]);
		cr_expect(log.drawn[i] >= base && log.drawn[i] < base + base / 8 + 1000, "drawn %llu",
			  (unsigned long long)log.drawn[i]);
	}
	cr_assert_gt(n, 1000, "only %zu armed intervals of the target", n);
	/* every token was accounted (none lost), so the weights are exactly the target's
	 * intervals as measured, first intervals included */
	cr_expect_eq(p->stats.rearm_lost, 0);
	cr_expect_eq(p->stats.rearm_failed, 0);
	cr_expect_eq((double)profile__total_weight(p), weight, "weights %llu, intervals %.0f",
		     (unsigned long long)profile__total_weight(p), weight);
	/* the controller: no bias (the signed error's median within 10 us of 0, plus four
	 * standard errors of that median, 1.2533 x 1.4826 x MAD / sqrt(n), so that a machine
	 * busier than one hog widens it by what it measurably is), and under 2% of intervals cut
	 * short below the window (the failure mode of a shortened period left in force). The old
	 * controller's bias was +43 us; a landing never learned gives +40 us. How close to its
	 * draw each interval lands is the machine's precision, which make bench-periods measures
	 * (here: median 0.6 us, p90 5-9 us with the other core busy) */
	{
		double med = quantile(serr, ne, 0.5), mad, tol;

		for (size_t i = 0; i < ne; i++)
			err[i] = fabs(serr[i] - med);
		mad = quantile(err, ne, 0.5);
		tol = base / 100.0 + 4 * 1.2533 * 1.4826 * mad / sqrt((double)ne);
		cr_expect(fabs(med) <= tol, "%s: median measured - drawn %.0f ns, beyond %.0f (MAD %.0f)",
			  mode, med, tol, mad);
	}
	cr_expect_lt(n_short, n * 0.02, "%.0f of %zu intervals short of the window", n_short, n);
	/* the shape: the quartiles of a uniform [P, P + P/8) are P + span/4, /2, 3/4; a
	 * sample quartile's standard error is sqrt(q(1-q)/n) x span; 4 of them, plus the 10 us
	 * the controller may miss by */
	for (int k = 1; k <= 3; k++) {
		double q = k / 4.0, want = base + q * span, got = quantile(v, n, q);
		double tol = 4 * sqrt(q * (1 - q) / n) * span + base / 100.0;

		cr_expect(fabs(got - want) < tol, "%s: quartile %d is %.0f ns, want %.0f +- %.0f", mode, k,
			  got, want, tol);
	}
	expect_share(samples_in_symbol(p, "work_70"),
		     samples_in_symbol(p, "work_70") + samples_in_symbol(p, "work_30"), 0.70, "work_70");
	free(v);
	free(err);
	free(serr);
	free(log.measured);
	free(log.drawn);
	free(log.target);
	profile__free(p);
}

Test(live, random_periods_are_drawn_and_measured)
{
	check_random_periods("random", false);
}

Test(live, prime_random_periods_are_drawn_and_measured)
{
	check_random_periods("prime-random", true);
}

Test(live, prime_period_is_in_force)
{
	struct profile *p = record_profile("--period-mode prime -c 1000000 -- %s 0.5", fixture("hot7030"));

	cr_assert_gt(profile__total_samples(p), 200);
	cr_expect_eq(profile__total_weight(p), profile__total_samples(p) * period__next_prime(1000000));
	cr_expect_str_eq(p->meta.period_mode, "prime");
	profile__free(p);
}

Test(live, kernel_samples_are_symbolized)
{
	struct profile *p = record_profile("-- dd if=/dev/zero of=/dev/null bs=1 count=1000000");
	struct symbolizer *sy = symbolizer__new(p);
	u64 kernel = 0, named = 0;

	for (size_t i = 0; i < p->nr_samples; i++) {
		struct sym_result r;

		if (!(p->samples[i].flags & HSBPF_KEY_KERNEL))
			continue;
		symbolizer__resolve(sy, &p->samples[i], &r);
		kernel += p->samples[i].count;
		if (strcmp(r.sym, "[unknown]"))
			named += p->samples[i].count;
	}
	cr_expect_gt(kernel, 20, "dd spends its time in read and write");
	cr_expect_geq(named, kernel * 9 / 10, "%llu of %llu kernel samples named",
		      (unsigned long long)named, (unsigned long long)kernel);
	symbolizer__free(sy);
	profile__free(p);
}

/* here: the PMU is absent and the message says so; on a machine with one: it records */
Test(live, hardware_events)
{
	static const char *events[] = { "cycles", "instructions:pp", "branches", "r00c0" };
	struct run_result r;

	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		run(&r, "%s record -e %s -c 100003 -o %s -- %s 0.3", hsbpf_bin(), events[i],
		    profile_path(), fixture("hot7030"));
		if (event__have_pmu()) {
			cr_expect_eq(r.status, 0, "%s: %s", events[i], r.err);
		} else {
			cr_expect_eq(r.status, 1, "%s", events[i]);
			cr_expect(strstr(r.err, "no hardware PMU on this machine: only software events "
						"such as cpu-clock are available"), "%s: %s", events[i], r.err);
			cr_expect_neq(access(profile_path(), F_OK), 0, "a profile was left behind");
		}
	}
}

/* LBR: the program passes the verifier (above); opening branch-stack events needs LBR hardware,
 * and where there is none the refusal says so */
Test(live, lbr_recording)
{
	static const char *args[] = { "-e lbr -c 100003", "-b -e instructions -c 100003" };
	struct run_result r;

	for (size_t i = 0; i < 2; i++) {
		run(&r, "%s record %s -o %s -- %s 0.3", hsbpf_bin(), args[i], profile_path(), fixture("hot7030"));
		if (r.status == 0 && event__have_pmu()) {
			/* a machine with LBR: branch records and IP samples from the run */
			struct profile *p;

			cr_assert_eq(profile__read(profile_path(), &p), 0);
			cr_expect_gt(p->nr_lbr, 0, "%s: no branch records", args[i]);
			cr_expect_gt(profile__total_samples(p), 0, "%s: no samples", args[i]);
			profile__free(p);
			continue;
		}
		cr_expect_eq(r.status, 1, "%s", args[i]);
		cr_expect(strstr(r.err, "this machine has no LBR"), "%s: %s", args[i], r.err);
	}
	run(&r, "%s record -b -o %s -- true", hsbpf_bin(), profile_path());
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "-b needs a hardware event"), "%s", r.err);
}

Test(live, full_map_drops_are_counted_and_reported)
{
	struct run_result r;
	struct profile *p;

	run(&r, "%s record --map-entries 2 -o %s -- %s 1", hsbpf_bin(), profile_path(), fixture("threads"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "dropped"), "no warning: %s", r.err);
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	cr_expect_leq(p->nr_samples, 2);
	cr_expect_gt(p->stats.dropped_full, 0);
	/* nothing vanishes: counted + dropped = every sample of the target */
	cr_expect_eq(profile__total_samples(p) + p->stats.dropped_full,
		     p->stats.samples - p->stats.filtered);
	cr_assert_eq(run(&r, "%s report -i %s", hsbpf_bin(), profile_path()), 0);
	cr_expect(strstr(r.out, "dropped because the sample map was full"), "%s", r.out);
	profile__free(p);
}

static double elapsed_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec - t0->tv_sec + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

Test(live, sigint_and_sigterm_end_a_recording_cleanly)
{
	const int sigs[] = { SIGINT, SIGTERM };
	char err_path[600];

	snprintf(err_path, sizeof(err_path), "%s/record.err", tmpdir());
	for (int i = 0; i < 2; i++) {
		char cmd[2048];
		struct profile *p;
		pid_t pid;
		int st;

		unlink(profile_path());
		unlink(err_path);
		snprintf(cmd, sizeof(cmd), "exec %s record -v -a -o %s 2>%s", hsbpf_bin(), profile_path(), err_path);
		pid = spawn(cmd);
		cr_assert(wait_file_contains(err_path, "hsbpf: recording", 30000), "record did not start");
		/* sampling has started: whatever happens after this much time is recorded */
		usleep(400000);
		kill(pid, sigs[i]);
		cr_assert_eq(waitpid(pid, &st, 0), pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			struct run_result r;

			run(&r, "grep -v 'debug: unwind' %s | tail -20", err_path);
			cr_assert_fail("signal %d: status %d: %s", sigs[i], st, r.out);
		}
		cr_assert_eq(profile__read(profile_path(), &p), 0);
		cr_expect_gt(p->meta.duration_ns, 400000000, "duration %llu ns",
			     (unsigned long long)p->meta.duration_ns);
		profile__free(p);
	}
}

/* Ctrl-C at a terminal signals the whole foreground group: the command dies of the same SIGINT
 * that ends the recording, and record still exits 0 (record ended it), without a warning */
Test(live, ctrl_c_to_the_group_ends_a_command_recording_with_status_0)
{
	char err_path[600], cmd[2048];
	struct profile *p;
	struct run_result r;
	pid_t pid;
	int st;

	snprintf(err_path, sizeof(err_path), "%s/record-group.err", tmpdir());
	unlink(profile_path());
	snprintf(cmd, sizeof(cmd), "exec %s record -v -o %s -- %s 60 2>%s", hsbpf_bin(), profile_path(),
		 fixture("hot7030"), err_path);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		setpgid(0, 0);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	cr_assert(wait_file_contains(err_path, "hsbpf: recording", 30000), "record did not start");
	cr_assert_eq(kill(-pid, SIGINT), 0);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert_eq(run(&r, "cat %s", err_path), 0);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, r.out);
	cr_expect_null(strstr(r.out, "killed by signal"), "%s", r.out);
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	profile__free(p);
}

Test(live, duration_ends_a_command_that_runs_on)
{
	struct timespec t0;
	struct profile *p;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	p = record_profile("-d 0.5 -- %s 30", fixture("hot7030"));
	cr_expect_lt(elapsed_since(&t0), 5.0);
	/* half a second of a busy machine's CPU may be a fraction of one */
	cr_expect_gt(profile__total_samples(p), 50);
	profile__free(p);
}

/* record's stderr is a pipe that another writer keeps full and whose reader reads nothing
 * until record has ended (15 s at most): record takes its duration and a moment, not the
 * reader's time, and samples as much as with no pipe */
Test(live, a_slow_reader_of_stderr_does_not_hold_record_up)
{
	const char *t = tmpdir();
	struct run_result r;
	struct profile *p;
	char path[PATH_MAX], buf[64] = "";
	u64 plain, piped;
	FILE *f;
	long ms = -1, status = -1;

	p = record_profile("-d 1 -- %s 30", fixture("hot7030"));
	plain = profile__total_samples(p);
	profile__free(p);
	run(&r, "T=%s; { yes $(head -c 3000 /dev/zero | tr '\\0' x) & Y=$!; s=$(date +%%s%%N); "
	    "%s record -d 1 -o %s -- %s 30; echo $? > $T/status; e=$(date +%%s%%N); "
	    "echo $(( (e - s) / 1000000 )) > $T/ms; kill $Y; touch $T/done; } 2>&1 | "
	    "{ i=0; while [ ! -e $T/done ] && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done; "
	    "cat > /dev/null; }", t, hsbpf_bin(), profile_path(), fixture("hot7030"));
	snprintf(path, sizeof(path), "%s/ms", t);
	f = fopen(path, "r");
	cr_assert_not_null(f, "record did not end: %s", r.err);
	cr_assert_not_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	ms = atol(buf);
	snprintf(path, sizeof(path), "%s/status", t);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	status = atol(buf);
	cr_assert_eq(status, 0, "record failed");
	/* the start, 1 s, the command's end and half a second for the last messages; the
	 * reader alone would have taken 15 s */
	cr_expect_lt(ms, 5000, "record took %ld ms", ms);
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	piped = profile__total_samples(p);
	profile__free(p);
	/* a busy machine gives hot7030 some share of a CPU each time: half of it at least */
	cr_expect_gt(piped, plain / 2, "%llu samples piped, %llu without the pipe",
		     (unsigned long long)piped, (unsigned long long)plain);
	cr_expect_lt(piped, plain * 2, "%llu samples piped, %llu without the pipe",
		     (unsigned long long)piped, (unsigned long long)plain);
}

/* -g: a stack starts at its own sample's pc, in the folded stacks as in the flat table, however
 * many late stacks went into the profile while it recorded (every one here, the test keeping
 * no copy): they shifted each stack the kernel unwound onto another sample's */
Test(live, stacks_start_at_their_samples_pc_past_the_late_stacks_kept)
{
	struct run_result r;
	struct profile *p;
	u64 checked = 0, wrong = 0;

	/* twenty copies of hot7030, each at a new inode, so each needs a new unwind table: its
	 * first samples are late (forker's one exec gave none on a quiet machine) */
	run(&r, "HSBPF_TEST_LATE_STACKS_MAX=0 %s record -g -F 4999 -o %s -- sh -c 'for i in $(seq 20); do "
	    "cp %s %s/h$i && %s/h$i 0.02 >/dev/null; done'", hsbpf_bin(), profile_path(), fixture("hot7030"),
	    tmpdir(), tmpdir());
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	cr_assert_gt(p->stats.stack_late_dropped, 0, "no late stack: nothing is tested");
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		const struct profile_stack *u = profile__stack(p, ss->user);
		const struct profile_stack *k = profile__stack(p, ss->kernel);
		bool found = false;

		if ((k && k->nr) || !u || !u->nr)
			continue;
		for (size_t j = 0; j < p->nr_samples && !found; j++)
			found = p->samples[j].pid == ss->pid && p->samples[j].exec_ns == ss->exec_ns &&
				!(p->samples[j].flags & HSBPF_KEY_KERNEL) &&
				p->samples[j].ip == profile__frames(p, u)[0];
		checked += ss->count;
		wrong += found ? 0 : ss->count;
	}
	cr_expect_gt(checked, 300);
	cr_expect_eq(wrong, 0, "%llu of %llu user stacks start elsewhere than their sample (%llu late)",
		     (unsigned long long)wrong, (unsigned long long)checked,
		     (unsigned long long)p->stats.stack_late_dropped);
	profile__free(p);
}

/* bad input: a clear message, a non-zero status, no crash and no file left behind */
Test(live, bad_input)
{
	static const struct {
		const char *args;
		int status;
		const char *msg;
	} cases[] = {
		{ "-p 999999999 -d 1", 1, "no process with pid 999999999" },
		{ "-e no-such-event -- true", 2, "unknown event 'no-such-event'" },
		{ "-c 0 -- true", 2, "invalid period '0'" },
		{ "-c banana -- true", 2, "invalid period 'banana'" },
		{ "-e cycles -F 1000000 -- true", 2, "exceeds the kernel's limit" },
		{ "-c 5000 -- true", 2, "below the kernel's 10 us minimum" },
		{ "--period-mode sometimes -- true", 2, "invalid period mode" },
		{ "-- /nonexistent/program", 1, "cannot run '/nonexistent/program'" },
		{ "-a -p 1", 2, "choose one target" },
		{ "", 2, "nothing to record" },
		{ "--cgroup no-such-cgroup -d 1", 1, "cannot open cgroup" },
		{ "-C 4000 -- true", 1, "CPU 4000 does not exist (this machine has CPUs " },
	};
	struct run_result r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unlink(profile_path());
		run(&r, "%s record -o %s %s", hsbpf_bin(), profile_path(), cases[i].args);
		cr_expect_eq(r.status, cases[i].status, "'%s': status %d: %s", cases[i].args, r.status, r.err);
		cr_expect(strstr(r.err, cases[i].msg), "'%s': %s", cases[i].args, r.err);
		cr_expect(strstr(r.err, "hsbpf: "), "'%s': no message", cases[i].args);
		cr_expect_neq(access(profile_path(), F_OK), 0, "'%s' left a profile", cases[i].args);
	}
	run(&r, "%s record -o /nonexistent-dir/x.data -- true", hsbpf_bin());
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "cannot create '/nonexistent-dir/x.data'"), "%s", r.err);
}

Test(live, report_refuses_damaged_profiles)
{
	struct profile *p = record_profile("-- %s 0.3", fixture("hot7030"));
	struct run_result r;
	struct stat st;

	profile__free(p);
	cr_assert_eq(stat(profile_path(), &st), 0);
	cr_assert_eq(run(&r, "%s report -i %s", hsbpf_bin(), profile_path()), 0);
	cr_expect(strstr(r.out, "work_70"));
	cr_assert_eq(truncate(profile_path(), st.st_size - 10), 0);
	run(&r, "%s report -i %s", hsbpf_bin(), profile_path());
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "is truncated"), "%s", r.err);
	run(&r, "printf 'XXXX' | dd of=%s bs=1 seek=200 conv=notrunc 2>/dev/null; truncate -s %lld %s; "
	    "%s report -i %s", profile_path(), (long long)st.st_size, profile_path(), hsbpf_bin(), profile_path());
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "is corrupt"), "%s", r.err);
	run(&r, "%s report -i %s/none.data", hsbpf_bin(), tmpdir());
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "cannot open"), "%s", r.err);
	run(&r, "%s report -i %s --sort nonsense", hsbpf_bin(), profile_path());
	cr_expect_eq(r.status, 2);
}

/* BPF programs loaded while recording reach the profile's kernel symbols through the
 * kernel's KSYMBOL records: hsbpf's own sample handler, loaded after the sideband starts */
Test(live, bpf_programs_loaded_while_recording_are_named)
{
	struct profile *p = record_profile("-a -d 0.3");
	bool found = false;

	for (size_t i = 0; i < p->nr_ksyms && !found; i++) {
		const char *name = profile__str(p, p->ksyms[i].name);

		found = !strncmp(name, "bpf_prog_", 9) && strstr(name, "_hsbpf_sample [bpf]");
	}
	cr_expect(found, "no KSYMBOL name for the sample handler among %zu kernel symbols", p->nr_ksyms);
	profile__free(p);
}
