// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf top for real: its --stdio snapshots against workloads with known hot functions and
 * containers, and its full screen driven in tmux (send-keys, capture-pane): keys, resizing,
 * and the terminal given back on every way out. */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "record/cgroup.h"
#include "helpers.h"

TestSuite(live_top, .init = remove_stale_test_cgroups, .fini = cleanup_tmpdir, .timeout = 120);

/* the Samples column of the first row of the last snapshot naming sym */
static double last_samples(const char *out, const char *sym)
{
	const char *last = out, *s;
	double v = -1;

	for (s = strstr(out, "samples/s"); s; s = strstr(s + 1, "samples/s"))
		last = s;
	for (s = strstr(last, sym); s; s = NULL) {
		const char *line = s;

		while (line > out && line[-1] != '\n')
			line--;
		v = strtod(line, NULL);
	}
	return v;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *s = strstr(hay, needle); s; s = strstr(s + 1, needle))
		n++;
	return n;
}

static size_t longest_line(const char *s)
{
	size_t max = 0;

	while (*s) {
		size_t len = strcspn(s, "\n");

		if (len > max)
			max = len;
		s += len + (s[len] ? 1 : 0);
	}
	return max;
}

Test(live_top, stdio_snapshots_show_the_hot_functions)
{
	char cmd[PATH_MAX + 32];
	struct run_result r;
	double a, b;
	pid_t w;

	snprintf(cmd, sizeof(cmd), "exec %s 8", fixture("hot7030"));
	w = spawn(cmd);
	wait_descendant(w, "hot7030", 1);
	/* a pipe is not a terminal: snapshots without --stdio */
	run(&r, "%s top -z -d 1 -n 3 --rows 12 --width 100 | cat", hsbpf_bin());
	reap(w);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect_eq(count(r.out, "samples/s"), 3, "three snapshots: %s", r.out);
	cr_expect_leq(longest_line(r.out), 100, "%s", r.out);
	cr_expect(strstr(r.out, "Percent +-CI95"), "%s", r.out);
	a = last_samples(r.out, "work_70");
	b = last_samples(r.out, "work_30");
	/* three seconds of at least a third of a CPU; the split's tolerance follows the count */
	cr_assert_gt(a + b, 300, "too few samples: %s", r.out);
	/* binomial tolerance, 4 standard deviations (and 3 points of scheduling noise) */
	cr_expect(fabs(a / (a + b) - 0.7) <= fmax(4 * sqrt(0.21 / (a + b)), 0.03),
		  "work_70 %.0f, work_30 %.0f: %s", a, b, r.out);
}

/* --off-cpu: a sleeper's time in clock_nanosleep, counted up to each refresh (a block under way
 * is split at it): three refreshes a second apart, accumulated, hold at least nearly 3 s of it
 * (it runs for microseconds between its naps), and no more than top's own elapsed time */
Test(live_top, off_cpu_shows_the_time_blocked)
{
	char cmd[PATH_MAX + 32];
	struct run_result r;
	const char *last, *s, *line;
	double ms = -1, elapsed;
	u64 t0;
	pid_t w;

	snprintf(cmd, sizeof(cmd), "exec %s sleep 50 1000", fixture("offcpu"));
	w = spawn(cmd);
	t0 = now_ns(CLOCK_MONOTONIC);
	run(&r, "timeout 60 %s top --off-cpu --stdio -z -d 1 -n 3 -p %d --rows 10 --width 120",
	    hsbpf_bin(), w);
	elapsed = (now_ns(CLOCK_MONOTONIC) - t0) / 1e6;
	reap(w);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect_eq(count(r.out, "threads blocked"), 3, "three snapshots: %s", r.out);
	cr_expect(strstr(r.out, "Time ms"), "%s", r.out);
	for (last = r.out, s = strstr(r.out, "threads blocked"); s; s = strstr(s + 1, "threads blocked"))
		last = s;
	s = strstr(last, "clock_nanosleep");
	cr_assert(s, "no clock_nanosleep row: %s", r.out);
	for (line = s; line > last && line[-1] != '\n'; line--)
		;
	ms = strtod(line, NULL);
	cr_expect(ms >= 2700 && ms <= elapsed, "%.1f ms blocked in 3 refreshes of 1 s, top ran %.1f ms: %s",
		  ms, elapsed, r.out);
}

/* -p: only that process; top ends by itself when it exits */
Test(live_top, a_process_that_ends_ends_top)
{
	char cmd[PATH_MAX + 32], pidtag[32];
	struct run_result r;
	pid_t w;

	snprintf(cmd, sizeof(cmd), "exec %s 2", fixture("hot7030"));
	w = spawn(cmd);
	wait_descendant(w, "hot7030", 1);
	run(&r, "timeout 20 %s top --stdio -z -d 0.5 -p %d --rows 50 --width 120", hsbpf_bin(), w);
	reap(w);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "every target process has exited"), "%s", r.err);
	cr_expect(strstr(r.out, "TARGET ENDED"), "%s", r.out);
	cr_expect(strstr(r.out, "work_70"), "%s", r.out);
	cr_expect(!strstr(r.out, "swapper"), "another process in a -p view: %s", r.out);
	snprintf(pidtag, sizeof(pidtag), "hot7030 %d", w);
	cr_expect(strstr(r.out, pidtag), "%s", r.out);
}

/* two docker-named cgroups and a host workload: the container view names both, and
 * --cgroup sees only its own */
Test(live_top, containers)
{
	char mnt[PATH_MAX], base[PATH_MAX + 64], a[PATH_MAX + 160], b[PATH_MAX + 160];
	char cmd[2 * PATH_MAX + 512];
	struct run_result r, rc, rp;
	pid_t pa, pb, ph, hot;
	const char *line, *end;
	char hotpid[32];

	cr_assert_eq(cgroup__find_mount("/proc/self/mountinfo", mnt, sizeof(mnt)), 0);
	snprintf(base, sizeof(base), "%s/hsbpf-top-%d", mnt, getpid());
	cr_assert_eq(mkdir(base, 0755), 0, "cannot create cgroup %s", base);
	make_docker_cgroup(base, 'a', a, sizeof(a));
	make_docker_cgroup(base, 'b', b, sizeof(b));
	snprintf(cmd, sizeof(cmd), "echo $$ > %s/cgroup.procs && exec unshare --kill-child -p -f "
		 "--mount-proc %s 10", a, fixture("hot7030"));
	pa = spawn(cmd);
	snprintf(cmd, sizeof(cmd), "echo $$ > %s/cgroup.procs && exec %s 10", b, fixture("threads"));
	pb = spawn(cmd);
	snprintf(cmd, sizeof(cmd), "exec %s 100000 1", fixture("busywork"));
	ph = spawn(cmd);
	hot = wait_descendant(pa, "hot7030", 1);
	wait_descendant(pb, "threads", 3);
	wait_descendant(ph, "busywork", 2);
	snprintf(hotpid, sizeof(hotpid), " %d (1) ", hot);
	run(&r, "%s top --stdio -z -s cgroup -d 1.5 -n 1 --width 120", hsbpf_bin());
	run(&rp, "%s top --stdio -z -s pid -d 1 -n 1 --width 120", hsbpf_bin());
	run(&rc, "%s top --stdio -z -d 1.5 -n 1 --width 120 --rows 0 --cgroup %s", hsbpf_bin(),
	    a + strlen(mnt));
	reap(pa);
	reap(pb);
	reap(ph);
	remove_cgroup(a);
	remove_cgroup(b);
	remove_cgroup(base);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "docker aaaaaaaaaaaa"), "%s", r.out);
	cr_expect(strstr(r.out, "docker bbbbbbbbbbbb"), "%s", r.out);
	cr_expect(strstr(r.out, "Cgroup"), "%s", r.out);
	/* the process in its own PID namespace (known by its host pid: another hot7030 on the
	 * machine would be another row), with the pid it sees, in its container */
	cr_assert_eq(rp.status, 0, "%s", rp.err);
	line = strstr(rp.out, hotpid);
	cr_assert(line, "no row '%s' for the contained hot7030: %s", hotpid, rp.out);
	end = strchr(line, '\n');
	cr_expect(strstr(line, "hot7030") && strstr(line, "hot7030") < end, "%.*s", (int)(end - line), line);
	cr_expect(strstr(line, "docker aaaaaaaaaaaa") && strstr(line, "docker") < end,
		  "not in its container: %.*s", (int)(end - line), line);
	cr_assert_eq(rc.status, 0, "%s", rc.err);
	cr_expect(strstr(rc.out, "work_70"), "%s", rc.out);
	/* the threads fixture's functions, not a kernel function that starts alike
	 * (thread_group_cputime was sampled once in CI) */
	cr_expect(!strstr(rc.out, "thread_a ") && !strstr(rc.out, "thread_b ") && !strstr(rc.out, " threads "),
		  "container b seen from a: %s", rc.out);
	cr_expect(!strstr(rc.out, "busywork"), "the host seen from a: %s", rc.out);
}

/* ---- the full screen, in tmux ---- */

static char sock[64];

__attribute__((format(printf, 1, 2))) static int tmux(const char *fmt, ...)
{
	struct run_result r;
	char args[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	return run(&r, "TERM=xterm tmux -L %s %s", sock, args);
}

/* the pane's text now */
static const char *screen(void)
{
	static struct run_result r;

	run(&r, "tmux -L %s capture-pane -p -t top", sock);
	return r.out;
}

static const char *pane(const char *format)
{
	static struct run_result r;

	run(&r, "tmux -L %s display -p -t top '%s'", sock, format);
	r.out[strcspn(r.out, "\n")] = 0;
	return r.out;
}

/* up to ms for the screen to show text */
static bool wait_for(const char *text, int ms)
{
	for (int i = 0; i < ms / 100; i++) {
		if (strstr(screen(), text))
			return true;
		usleep(100000);
	}
	return strstr(screen(), text);
}

/* up to ms for text to leave the screen */
static bool wait_gone(const char *text, int ms)
{
	for (int i = 0; i < ms / 100 && strstr(screen(), text); i++)
		usleep(100000);
	return !strstr(screen(), text);
}

/* the wrapper's record of top's exit status, waited for up to ms; -1 if none */
static int exit_status(int ms)
{
	char path[300];
	int st = -1;

	snprintf(path, sizeof(path), "%s/status", tmpdir());
	for (int i = 0; i < ms / 100 && st < 0; i++) {
		FILE *f = fopen(path, "r");

		if (f) {
			if (fscanf(f, "%d", &st) != 1)
				st = -1;
			fclose(f);
		}
		if (st < 0)
			usleep(100000);
	}
	return st;
}

/* top in the pane, under a shell that writes its exit status (tmux 3.3 does not always reap
 * a pane's process that exits on a signal it handles, so #{pane_dead_status} cannot be
 * relied on) */
static void tmux_run(const char *env, const char *args)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/status", tmpdir());
	unlink(path);
	cr_assert_eq(tmux("respawn-pane -k -t top \"%s %s top %s; echo \\$? > %s\"", env, hsbpf_bin(),
			  args, path), 0);
}

static void tmux_start(int w, int h, const char *args)
{
	snprintf(sock, sizeof(sock), "hsbpf-test-%d", getpid());
	tmux("kill-server");
	cr_assert_eq(tmux("new-session -d -s top -x %d -y %d 'sleep 600'", w, h), 0, "tmux");
	tmux("set -g remain-on-exit on");
	tmux_run("", args);
}

/* top's pid: the child of the pane's shell */
static pid_t top_pid(void)
{
	struct run_result r;

	run(&r, "pgrep -P %s hsbpf", pane("#{pane_pid}"));
	return atoi(r.out);
}

static void tmux_stop(void)
{
	tmux("kill-server");
	cleanup_tmpdir();
}

Test(live_top, screen_keys_and_resizing, .fini = tmux_stop)
{
	char mnt[PATH_MAX], base[PATH_MAX + 64], a[PATH_MAX + 160], cmd[2 * PATH_MAX];
	static char before[65536];
	pid_t wa, wh;

	cr_assert_eq(cgroup__find_mount("/proc/self/mountinfo", mnt, sizeof(mnt)), 0);
	snprintf(base, sizeof(base), "%s/hsbpf-tmux-%d", mnt, getpid());
	cr_assert_eq(mkdir(base, 0755), 0, "cannot create cgroup %s", base);
	make_docker_cgroup(base, 'c', a, sizeof(a));
	snprintf(cmd, sizeof(cmd), "echo $$ > %s/cgroup.procs && exec %s 40", a, fixture("hot7030"));
	wa = spawn(cmd);
	snprintf(cmd, sizeof(cmd), "exec %s 400000 1", fixture("busywork"));
	wh = spawn(cmd);

	tmux_start(80, 24, "-d 1");
	cr_expect(wait_for("work_70", 8000), "%s", screen());
	cr_expect_str_eq(pane("#{alternate_on}"), "1", "not on the alternate screen");
	cr_expect_leq(longest_line(screen()), 80, "%s", screen());
	cr_expect(strstr(screen(), "cpu-clock 999 Hz"), "%s", screen());
	cr_expect(strstr(screen(), "% CPU"), "no CPU cost in the header: %s", screen());
	cr_expect(strstr(screen(), "Symbol") && strstr(screen(), "Object"), "%s", screen());

	/* containers, filtered to docker ones, zoomed into, and back */
	tmux("send-keys -t top 5");
	cr_expect(wait_for("docker cccccccccccc", 3000), "%s", screen());
	tmux("send-keys -t top / d o c k e r Enter");
	/* the prompt's own "filter: docker_" is there before Enter is read: wait for it to go */
	cr_expect(wait_for("filter: docker", 3000) && wait_gone("(Enter: apply", 3000), "%s", screen());
	cr_expect(!strstr(screen(), "host "), "filtered out: %s", screen());
	tmux("send-keys -t top Enter");
	cr_expect(wait_for("zoom: cgroup", 3000), "%s", screen());
	cr_expect(wait_for("hot7030", 3000), "zoomed into the container: %s", screen());
	cr_expect(!strstr(screen(), "busywork"), "zoomed, yet the host shows: %s", screen());
	tmux("send-keys -t top BSpace");
	cr_expect(wait_for("containers by", 3000), "%s", screen());
	cr_expect(!strstr(screen(), "zoom:"), "%s", screen());
	tmux("send-keys -t top / BSpace BSpace BSpace BSpace BSpace BSpace Enter");
	cr_expect(wait_for("no filter", 3000), "%s", screen());

	/* grouping, sort, decay, pause, help */
	tmux("send-keys -t top 4");
	cr_expect(wait_for("processes by", 3000), "%s", screen());
	cr_expect(wait_for("busywork", 3000), "%s", screen());
	tmux("send-keys -t top s");
	cr_expect(wait_for("processes by name", 3000), "%s", screen());
	tmux("send-keys -t top d");
	cr_expect(wait_for("accumulated", 3000), "%s", screen());
	tmux("send-keys -t top 1 p");
	cr_expect(wait_for("PAUSED", 3000), "%s", screen());
	snprintf(before, sizeof(before), "%s", screen());
	usleep(2200000);
	cr_expect_str_eq(screen(), before, "the screen moved while paused");
	tmux("send-keys -t top p");
	cr_expect(wait_for("h: help", 3000), "%s", screen());
	tmux("send-keys -t top h");
	cr_expect(wait_for("hsbpf top: keys", 3000), "%s", screen());
	tmux("send-keys -t top x");
	cr_expect(wait_for("Percent", 3000), "%s", screen());

	/* resizing: wider shows the container column, narrower still fits */
	tmux("resize-window -t top -x 130 -y 30");
	cr_expect(wait_for("Container", 3000), "%s", screen());
	tmux("resize-window -t top -x 60 -y 15");
	for (int i = 0; i < 50 && longest_line(screen()) > 60; i++)
		usleep(100000);
	cr_expect_leq(longest_line(screen()), 60, "%s", screen());
	/* a capture can fall between a resize's clear and its redraw */
	cr_expect(wait_for("Samples", 3000), "%s", screen());

	tmux("send-keys -t top q");
	cr_expect_eq(exit_status(3000), 0, "q did not quit cleanly");
	cr_expect_str_eq(pane("#{alternate_on}"), "0", "the terminal was not given back");
	reap(wa);
	reap(wh);
	remove_cgroup(a);
	remove_cgroup(base);
}

/* SIGTERM and Ctrl-C end top with the terminal given back; a terminal it cannot drive is
 * an error, said */
Test(live_top, the_terminal_is_given_back, .fini = tmux_stop)
{
	struct run_result r;
	pid_t pid;

	tmux_start(100, 30, "-d 1");
	cr_assert(wait_for("samples/s", 8000), "%s", screen());
	pid = top_pid();
	cr_assert_gt(pid, 0);
	kill(pid, SIGTERM);
	cr_expect_eq(exit_status(3000), 0, "SIGTERM did not end top cleanly");
	cr_expect_str_eq(pane("#{alternate_on}"), "0", "SIGTERM: the terminal was not given back");

	tmux_run("", "-d 1");
	cr_assert(wait_for("samples/s", 8000), "%s", screen());
	tmux("send-keys -t top C-c");
	cr_expect_eq(exit_status(3000), 0, "Ctrl-C did not end top cleanly");
	cr_expect_str_eq(pane("#{alternate_on}"), "0", "Ctrl-C: the terminal was not given back");

	tmux_run("TERM=no-such-terminal", "");
	cr_expect_eq(exit_status(5000), 1, "top went on without a terminal it can drive");
	/* what the dead pane printed is in its history */
	run(&r, "tmux -L %s capture-pane -p -S - -t top", sock);
	cr_expect(strstr(r.out, "cannot drive the terminal (TERM=no-such-terminal)"), "%s", r.out);
}

Test(live_top, bad_input)
{
	struct run_result r;

	run(&r, "%s top --stdio -p 999999999", hsbpf_bin());
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "999999999"), "%s", r.err);
	run(&r, "%s top --stdio -s nonsense", hsbpf_bin());
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "unknown grouping 'nonsense'"), "%s", r.err);
	run(&r, "%s top --stdio -- ls", hsbpf_bin());
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "use record to run a command"), "%s", r.err);
	run(&r, "%s top --stdio -e cycles -n 1", hsbpf_bin());
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "hardware PMU"), "%s", r.err);
	run(&r, "%s top --stdio --cgroup /no/such/cgroup -n 1", hsbpf_bin());
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "no/such/cgroup"), "%s", r.err);
}

/* short processes without end: top forgets the history of those that exited (its memory stays
 * bounded: by 20,000 records or once a minute, whichever comes first), and a long-running
 * hot process is still named in the snapshots after it has */
Test(live_top, history_of_exited_processes_is_forgotten)
{
	char cmd[2 * PATH_MAX + 64], out_path[600], err_path[600];
	static char out[1 << 20];
	const char *after;
	pid_t churn, hot, top;
	size_t seen;
	int st;
	FILE *f;

	snprintf(out_path, sizeof(out_path), "%s/top.out", tmpdir());
	snprintf(err_path, sizeof(err_path), "%s/top.err", tmpdir());
	snprintf(cmd, sizeof(cmd), "exec %s 120", fixture("hot7030"));
	hot = spawn(cmd);
	wait_descendant(hot, "hot7030", 1);
	churn = spawn("while :; do /bin/true; done");
	snprintf(cmd, sizeof(cmd), "exec %s top --stdio -v -z -d 1 --rows 40 --width 120 >%s 2>%s",
		 hsbpf_bin(), out_path, err_path);
	top = spawn(cmd);
	/* a minute at most, by the time rule, however slowly the machine makes processes */
	cr_expect(wait_file_contains(err_path, "forgot the history of exited processes", 90000),
		  "top did not forget the history of exited processes");
	/* one more snapshot after the forgetting */
	f = fopen(out_path, "r");
	seen = f ? fread(out, 1, sizeof(out) - 1, f) : 0;
	if (f)
		fclose(f);
	for (int i = 0; i < 500; i++) {
		f = fopen(out_path, "r");
		if (f) {
			size_t n = fread(out, 1, sizeof(out) - 1, f);

			out[n] = 0;
			fclose(f);
			after = n > seen ? strstr(out + seen, "samples/s") : NULL;
			if (after && strstr(after, "\n\n"))
				break;
		}
		usleep(20000);
	}
	kill(top, SIGINT);
	cr_assert_eq(waitpid(top, &st, 0), top);
	reap(churn);
	reap(hot);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "top: status %d", st);
	cr_expect(last_samples(out, "work_70") > 100, "work_70 no longer named: %s", out);
}

/* top -g: c on a function shows its callers and callees, live */
Test(live_top, callers_and_callees_of_a_function, .fini = tmux_stop)
{
	char cmd[PATH_MAX + 64], args[PATH_MAX + 64];
	pid_t w;

	snprintf(cmd, sizeof(cmd), "exec %s run 60", fixture("stacks/callpaths"));
	w = spawn(cmd);
	snprintf(args, sizeof(args), "-g -d 1 -p %d", w);
	tmux_start(100, 40, args);
	cr_assert(wait_for("leaf", 10000), "%s", screen());
	/* the top row is leaf: its callers are the paths, by share */
	tmux("send-keys -t top Home c");
	cr_expect(wait_for("called by (callers):", 5000), "%s", screen());
	cr_expect(wait_for("mid_a", 3000) && strstr(screen(), "path_b") && strstr(screen(), "on_signal"),
		  "%s", screen());
	/* a leaf calls nothing but what interrupts it: kernel entries, if anything */
	cr_expect(strstr(screen(), "called (callees):") && !strstr(screen(), "%  path_a"), "%s", screen());
	tmux("send-keys -t top x");
	cr_expect(wait_for("Samples", 3000) || wait_for("Percent", 3000), "%s", screen());
	tmux("send-keys -t top q");
	cr_expect_eq(exit_status(3000), 0);
	reap(w);
}

/* top -g --stdio: under the hot row (leaf) the tree of its callers, the paths of the stack
 * fixture by share: mid_a (4 units of 10, under path_a) first, then path_b (2) */
Test(live_top, stdio_g_prints_the_callers_of_the_top_rows)
{
	char cmd[PATH_MAX + 64];
	struct run_result r;
	const char *tree, *next;
	double mid_a = 0, path_b = 0;
	pid_t w;

	snprintf(cmd, sizeof(cmd), "exec %s run 60", fixture("stacks/callpaths"));
	w = spawn(cmd);
	wait_descendant(w, "callpaths", 1);
	run(&r, "%s top -g --stdio -z -d 1 -n 3 --rows 5 --width 100 -p %d", hsbpf_bin(), w);
	reap(w);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect_leq(longest_line(r.out), 100, "%s", r.out);
	/* the last snapshot's leaf row, then its callers */
	tree = NULL;
	for (const char *s = strstr(r.out, "callers of leaf ("); s; s = strstr(s + 1, "callers of leaf ("))
		tree = s;
	cr_assert(tree, "no callers of leaf: %s", r.out);
	next = strstr(tree, "\n");
	cr_assert(next);
	/* level 1 lines have their '%' in column 12 (4 + 2 spaces, "%6.2f"), level 2 in 14 */
	bool first = true, after_mid_a = false, path_a = false;
	for (const char *s = next + 1; *s == ' ' && strchr(s, '\n'); s = strchr(s, '\n') + 1) {
		const char *pct = strchr(s, '%'), *end = strchr(s, '\n');
		char name[128] = "";

		if (!pct || pct > end)
			break;
		sscanf(pct + 1, " %127s", name);
		if (pct - s == 12) {
			cr_expect(!first || !strcmp(name, "mid_a"), "the first caller is %s: %s", name, tree);
			if (!strcmp(name, "mid_a"))
				mid_a = strtod(s, NULL);
			if (!strcmp(name, "path_b"))
				path_b = strtod(s, NULL);
			after_mid_a = !strcmp(name, "mid_a");
			first = false;
		} else if (pct - s == 14 && after_mid_a) {
			path_a = !strcmp(name, "path_a");
			after_mid_a = false;
		}
	}
	cr_expect(path_a, "mid_a's caller is not path_a: %s", tree);
	/* 40% and 20% of leaf's samples; 3 s at 999 Hz: a few points of noise */
	cr_expect(mid_a > 30 && mid_a < 50 && path_b > 12 && path_b < 28, "mid_a %.1f%%, path_b %.1f%%: %s",
		  mid_a, path_b, tree);
}

/* ---- top --memory (docs/memory.md): the memory fixture's loop, -p ---- */

/* the fixture's loop (tests/fixtures/memory.c): a step is 38229 mallocs of 64 bytes (70% of its
 * bytes) then one of 1 MiB; one of 256 KiB leaked every 100 ms */
#define LOOP_SMALL_STEP	(38229 * 64.0)
#define LOOP_BIG	1048576.0
#define LOOP_LEAK	262144.0
#define MEM_PERIOD	65536.0

/* an amount as top prints it ("25.0 MiB", "+5.9 MiB", "512 B") in bytes; *end after it */
static double parse_bytes(const char *s, const char **end)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB" };
	char unit[8] = "";
	double v;
	int n = 0;

	if (sscanf(s, " %lf %7s%n", &v, unit, &n) < 2)
		return NAN;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (!strcmp(unit, units[i])) {
			*end = s + n;
			return v * pow(1024, i);
		}
	}
	return NAN;
}

/* the row naming sym in the snapshot starting at snap (up to the next): its amount in bytes,
 * share and 95% interval in percent, and with growth its Growth column; false when not there */
static bool memory_row(const char *snap, const char *sym, double *bytes, double *pct, double *ci,
		       double *growth)
{
	const char *next = strstr(snap + 1, "one sampled per"), *s, *line, *end;
	char want[64];
	int n = 0;

	snprintf(want, sizeof(want), " %s ", sym);
	s = strstr(snap, want);
	if (!s || (next && s > next))
		return false;
	for (line = s; line > snap && line[-1] != '\n'; line--)
		;
	*bytes = parse_bytes(line, &end);
	if (isnan(*bytes) || sscanf(end, " %lf%% +-%lf%n", pct, ci, &n) < 2)
		return false;
	if (growth)
		*growth = parse_bytes(end + n, &end);
	return !growth || !isnan(*growth);
}

/* the snapshots of out, in order: their starts, at most max; how many */
static size_t memory_snapshots(const char *out, const char **snaps, size_t max)
{
	size_t n = 0;

	for (const char *s = strstr(out, "one sampled per"); s && n < max; s = strstr(s + 1, "one sampled per"))
		snaps[n++] = s;
	return n;
}

/* the loop running, its process (the fixture's, once exec'd: the probes follow that image's
 * libc) */
static pid_t memory_loop(pid_t *shell)
{
	char cmd[PATH_MAX + 32];

	snprintf(cmd, sizeof(cmd), "exec %s loop", fixture("memory"));
	*shell = spawn(cmd);
	return wait_descendant(*shell, "memory", 1);
}

/* the variance of the bytes estimated for n allocations of s bytes */
static double est_var(double n, double s)
{
	double p = -expm1(-s / MEM_PERIOD);

	return n * s * s * (1 - p) / p;
}

/* bytes by function since the start (-z): both functions named, small_objects' share of the two
 * 0.7 within the 95% interval of the estimates (and the partial steps at the ends: a step at
 * each, at most), and top's own CI95 column the estimate's */
Test(live_top, memory_by_function)
{
	double small, big, leak, pct, ci, pct_big, ci_big, sd_share, bias, share, p, want;
	const char *snaps[8];
	struct run_result r;
	pid_t sh, w;

	w = memory_loop(&sh);
	run(&r, "timeout 60 %s top --memory --alloc-period 64K --stdio -z -d 1 -n 4 -p %d --rows 10 "
	    "--width 140", hsbpf_bin(), (int)w);
	reap(sh);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(memory_snapshots(r.out, snaps, 8), 4, "four snapshots: %s", r.out);
	cr_expect(strstr(snaps[3], "Bytes ") && strstr(snaps[3], "functions by alloc_space, accumulated"),
		  "%s", snaps[3]);
	cr_assert(memory_row(snaps[3], "small_objects", &small, &pct, &ci, NULL), "%s", r.out);
	cr_assert(memory_row(snaps[3], "big_buffers", &big, &pct_big, &ci_big, NULL), "%s", r.out);
	cr_expect(memory_row(snaps[3], "leak_step", &leak, &pct_big, &ci_big, NULL), "%s", r.out);
	cr_assert_gt(small + big, 10 * (LOOP_SMALL_STEP + LOOP_BIG), "too few steps: %s", r.out);
	/* the share's variance by the delta method, at the estimates */
	sd_share = sqrt(big * big * est_var(small / 64, 64) + small * small * est_var(big / LOOP_BIG, LOOP_BIG)) /
		   ((small + big) * (small + big));
	bias = 2 * LOOP_SMALL_STEP / (small + big);
	share = small / (small + big);
	cr_expect_leq(fabs(share - 0.7), 1.96 * sd_share + bias, "small_objects' share %.4f, 0.7 +- %.4f "
		      "+ %.4f (partial steps): %s", share, 1.96 * sd_share, bias, r.out);
	/* top's interval: 1.96 sd of small_objects' bytes, s (1 - p)/p of a byte each, of the view's total */
	p = -expm1(-64 / MEM_PERIOD);
	want = 100 * 1.96 * sqrt(small * 64 * (1 - p) / p) / (small * 100 / pct);
	cr_expect(fabs(ci - want) <= 0.02 + want / 50, "CI95 %.2f, want %.2f: %s", ci, want, r.out);
}

/* the live set (inuse_space): the leak's row holds more at the end than at the first snapshot,
 * its Growth column says so, and the small objects freed at once hold next to nothing */
Test(live_top, memory_leak_grows_in_use)
{
	double first, last, growth, pct, ci, small = 0;
	const char *snaps[8];
	struct run_result r;
	pid_t sh, w;

	w = memory_loop(&sh);
	run(&r, "timeout 60 %s top --memory --sample-type inuse_space --alloc-period 64K --stdio -d 1 "
	    "-n 3 -p %d --rows 10 --width 140", hsbpf_bin(), (int)w);
	reap(sh);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(memory_snapshots(r.out, snaps, 8), 3, "three snapshots: %s", r.out);
	cr_expect(strstr(snaps[2], "Growth") && strstr(snaps[2], "functions by inuse_space, live now"),
		  "%s", snaps[2]);
	/* 10 leaks a second, from the probes on: some in the first interval already */
	cr_assert(memory_row(snaps[0], "leak_step", &first, &pct, &ci, &growth), "%s", r.out);
	cr_expect_eq(growth, 0, "the first snapshot is the base: %s", r.out);
	cr_assert(memory_row(snaps[2], "leak_step", &last, &pct, &ci, &growth), "%s", r.out);
	cr_expect_gt(last, first, "%s", r.out);
	/* two intervals of a second: 20 leaks of 256 KiB at most ~1% unsampled; a starved loop
	 * catches up on its leaks at the end of each of its rounds: at least 4 of them. The three
	 * amounts are printed to 0.1 MiB: each rounded by up to 0.05 */
	cr_expect(growth >= 4 * LOOP_LEAK && fabs(growth - (last - first)) <= 0.16 * 1048576,
		  "growth %.0f, live %.0f then %.0f: %s", growth, first, last, r.out);
	memory_row(snaps[2], "small_objects", &small, &pct, &ci, &growth);
	cr_expect_lt(small, last / 4, "%s", r.out);
}

/* --memory's refusals are record's: another allocator in the process, a bad period */
Test(live_top, memory_bad_input)
{
	char cmd[PATH_MAX + 128], go[PATH_MAX], maps[64];
	struct run_result r;
	pid_t target;

	snprintf(go, sizeof(go), "%s/go", tmpdir());
	snprintf(cmd, sizeof(cmd), "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 exec %s wait %s",
		 fixture("memkinds"), go);
	target = spawn(cmd);
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)target);
	cr_assert(wait_file_contains(maps, "libjemalloc", 15000), "no jemalloc in process %d", (int)target);
	run(&r, "timeout 60 %s top --memory --stdio -n 1 -p %d", hsbpf_bin(), (int)target);
	write_bytes(go, "", 0);
	reap(target);
	cr_expect_eq(r.status, 1, "status %d: %s", r.status, r.err);
	cr_expect(strstr(r.err, "jemalloc") && strstr(r.err, "glibc's malloc only"), "%s", r.err);
	run(&r, "%s top --memory --stdio -n 1 --alloc-period 0", hsbpf_bin());
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "invalid --alloc-period '0'"), "%s", r.err);
	run(&r, "%s top --stdio -n 1 --alloc-period 64K", hsbpf_bin());
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "--alloc-period is for --memory"), "%s", r.err);
	run(&r, "%s top --memory --stdio -n 1 --sample-type bytes", hsbpf_bin());
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "unknown sample type 'bytes'"), "%s", r.err);
}

/* the screen with --memory: m goes through the four views, the live set's with its Growth
 * column, and c shows the callers in the view's kind */
Test(live_top, memory_screen_views, .fini = tmux_stop)
{
	char args[128];
	pid_t sh, w;

	w = memory_loop(&sh);
	snprintf(args, sizeof(args), "--memory --alloc-period 64K -g -d 1 -p %d", (int)w);
	tmux_start(110, 30, args);
	cr_assert(wait_for("small_objects", 15000), "%s", screen());
	cr_expect(strstr(screen(), "Bytes/s") && strstr(screen(), "by alloc_space, last interval"), "%s", screen());
	tmux("send-keys -t top m");
	cr_expect(wait_for("by alloc_objects", 3000) && wait_for("Objects/s", 3000), "%s", screen());
	tmux("send-keys -t top m");
	cr_expect(wait_for("by inuse_space, live now", 3000) && wait_for("Growth", 3000), "%s", screen());
	cr_expect(wait_for("leak_step", 5000), "%s", screen());
	tmux("send-keys -t top Home c");
	cr_expect(wait_for("called by (callers):", 5000) && wait_for("loop", 3000), "%s", screen());
	tmux("send-keys -t top x m");
	cr_expect(wait_for("by inuse_objects", 3000), "%s", screen());
	tmux("send-keys -t top q");
	cr_expect_eq(exit_status(5000), 0);
	reap(sh);
}
