// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Live off-CPU time (record --off-cpu, --wall): the fixture tests/fixtures/offcpu.c blocks for
 * known times and measures them with its own clock; the time recorded under each blocking
 * function must be within 2% (or 2 ms) of it, each thread's on- plus off-CPU time within a few
 * % of the elapsed time it measured (--wall), python3's stacks complete through libc to its
 * start, the bounds leave blocks out and count them, and nonsense bounds are usage errors. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"
#include "hsbpf.h"
#include "profile/profile.h"
#include "record/cgroup.h"
#include "record/offcpu.h"

TestSuite(live_offcpu, .fini = cleanup_tmpdir, .timeout = 240);

static struct run_result rec, folded;

/* microseconds of the folded stacks holding frame (and with a suffix, ending in it) */
static double folded_us(const char *frame, const char *suffix)
{
	char want[128];
	double sum = 0;

	snprintf(want, sizeof(want), ";%s;", frame);
	for (char *line = folded.out, *end; *line; line = end + 1) {
		char *sp;

		end = strchr(line, '\n');
		if (!end)
			break;
		*end = 0;
		sp = strrchr(line, ' ');
		if (sp && memmem(line, sp - line, want, strlen(want)) &&
		    (!suffix || (sp - line >= (long)strlen(suffix) &&
				 !strncmp(sp - strlen(suffix), suffix, strlen(suffix)))))
			sum += strtod(sp + 1, NULL);
		*end = '\n';
	}
	return sum;
}

/* the first folded stack holding needle (the test fails without one) */
static const char *folded_line(const char *needle)
{
	const char *line = strstr(folded.out, needle);

	cr_assert(line, "no %s: %s", needle, folded.out);
	while (line > folded.out && line[-1] != '\n')
		line--;
	return line;
}

/* what the fixture said of NAME, in ns */
static double fixture_ns(const char *name)
{
	char want[64];
	const char *at;

	snprintf(want, sizeof(want), "%s ", name);
	at = strstr(rec.out, want);
	cr_assert(at, "the fixture did not say '%s': %s", name, rec.out);
	return strtod(at + strlen(want), NULL);
}

/* record the command, its folded stacks into folded, until they hold frame: the kernel may
 * lose the fixture's mapping records under an mmap storm elsewhere (said in the stats), which
 * leaves its frames [unknown]; such a recording is made again, 5 times at most */
static void record(const char *opts, const char *cmd, const char *frame)
{
	for (int i = 0; i < 5; i++) {
		struct profile *p;
		u64 lost;

		unlink(profile_path());
		run(&rec, "%s record %s -o %s -- %s", hsbpf_bin(), opts, profile_path(), cmd);
		cr_assert_eq(rec.status, 0, "record %s -- %s failed: %s", opts, cmd, rec.err);
		if (!frame)
			return;
		run(&folded, "%s report -i %s --format folded", hsbpf_bin(), profile_path());
		cr_assert_eq(folded.status, 0, "report failed: %s", folded.err);
		if (folded_us(frame, NULL) > 0)
			return;
		cr_assert_eq(profile__read(profile_path(), &p), 0);
		lost = p->stats.sideband_lost;
		profile__free(p);
		cr_assert(lost, "no %s in the stacks: %s", frame, folded.out);
	}
	cr_assert_fail("the kernel lost the mapping records of 5 recordings in a row");
}

/* the time the hypervisor took from cpu (all CPUs when cpu < 0) so far (/proc/stat's steal), in ticks */
static double cpu_steal_ticks(int cpu)
{
	char want[16], line[512];
	double steal = 0;
	FILE *f = fopen("/proc/stat", "r");

	cr_assert(f, "cannot read /proc/stat");
	if (cpu < 0)
		snprintf(want, sizeof(want), "cpu ");
	else
		snprintf(want, sizeof(want), "cpu%d ", cpu);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v[8];

		if (strncmp(line, want, strlen(want)))
			continue;
		if (sscanf(line + strlen(want), "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8)
			steal = v[7];
	}
	fclose(f);
	return steal;
}

static void expect_time(double got_ns, double want_ns, const char *what)
{
	double tol = fmax(0.02 * want_ns, 2e6);

	cr_expect(fabs(got_ns - want_ns) <= tol, "%s: recorded %.3f ms, the fixture measured %.3f ms "
		  "(tolerance %.3f ms)", what, got_ns / 1e6, want_ns / 1e6, tol / 1e6);
}

Test(live_offcpu, nanosleep_time)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "%s sleep 20 10", fixture("offcpu"));
	record("--off-cpu", cmd, "nap");
	expect_time(folded_us("nap", NULL) * 1e3, fixture_ns("nap"), "nap");
}

Test(live_offcpu, pipe_read_time)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "%s pipe 20 10", fixture("offcpu"));
	record("--off-cpu", cmd, "pipe_wait");
	expect_time(folded_us("pipe_wait", NULL) * 1e3, fixture_ns("pipe_wait"), "pipe_wait");
}

/* microseconds of the folded stacks holding frame below the "--" of a waker, and of those the
 * ones whose waker's stack (above it) holds waker_frame */
static double woken_us(const char *frame, const char *waker_frame, double *by_waker)
{
	char want[128], wwant[128];
	double sum = 0;

	snprintf(want, sizeof(want), ";%s;", frame);
	snprintf(wwant, sizeof(wwant), ";%s;", waker_frame);
	*by_waker = 0;
	for (char *line = folded.out, *end; *line; line = end + 1) {
		char *sp, *dash;

		end = strchr(line, '\n');
		if (!end)
			break;
		*end = 0;
		sp = strrchr(line, ' ');
		dash = strstr(line, ";--;");
		if (sp && (!dash || dash > sp))
			dash = sp;
		if (sp && memmem(line, dash - line, want, strlen(want))) {
			sum += strtod(sp + 1, NULL);
			if (dash < sp && memmem(dash, sp - dash, wwant, strlen(wwant)))
				*by_waker += strtod(sp + 1, NULL);
		}
		*end = '\n';
	}
	return sum;
}

/* --wakers: the reader blocked in pipe_wait is woken by the writer thread's wake_reader, whose
 * stack is joined to the reader's above a "--" (bcc offwaketime's folded form) for >= 90% of
 * the blocked time (the rest: a block cut by a preemption on its way out), and report --sort
 * waker names the writer thread beside the reader's read */
Test(live_offcpu, pipe_reader_woken_by_writer)
{
	static struct run_result rep;
	double all, by_writer;
	bool row = false;
	char cmd[512];

	/* 30 blocks: the first, in the program's first milliseconds, may have its stack unwound
	 * in user space, where its waker's does not go (counted as lost) */
	snprintf(cmd, sizeof(cmd), "%s pipe 20 30", fixture("offcpu"));
	record("--off-cpu --wakers", cmd, "pipe_wait");
	all = woken_us("pipe_wait", "wake_reader", &by_writer);
	expect_time(all * 1e3, fixture_ns("pipe_wait"), "pipe_wait");
	cr_expect(by_writer >= 0.9 * all, "pipe_wait: %.3f of %.3f ms woken by wake_reader: %s",
		  by_writer / 1e3, all / 1e3, folded.out);
	run(&rep, "%s report -i %s --sort waker,sym --no-children -g none", hsbpf_bin(), profile_path());
	cr_assert_eq(rep.status, 0, "report --sort waker failed: %s", rep.err);
	/* the flat rows are where the reader left user space: libc's read */
	cr_expect(strstr(rep.out, "Waker"), "no waker column: %s", rep.out);
	for (const char *l = rep.out; l && !row; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *eol = strchrnul(l, '\n'), *w = strstr(l, ":offcpu "), *r = strstr(l, " read ");

		row = w && r && w < r && r < eol;
	}
	cr_expect(row, "no row of the reader's read with the writer as its waker: %s", rep.out);
	cr_expect(strstr(rep.out, "# wakers: "), "no wakers line in the header: %s", rep.out);
	/* report --wakers: the reader's chains go on past __schedule with the writer's frames */
	run(&rep, "%s report -i %s --wakers --stdio -g folded,0,caller", hsbpf_bin(), profile_path());
	cr_assert_eq(rep.status, 0, "report --wakers failed: %s", rep.err);
	{
		const char *line = strstr(rep.out, "anon_pipe_read;schedule;__schedule;[woken by];try_to_wake_up;");
		const char *eol = line ? strchrnul(line, '\n') : NULL, *w = line ? strstr(line, ";wake_reader;") : NULL;

		cr_expect(line && w && w < eol, "no chain of the reader's read woken by wake_reader: %s", rep.out);
	}
	run(&rep, "%s report -i %s --stdio -g folded,0,caller", hsbpf_bin(), profile_path());
	cr_expect(rep.status == 0 && !strstr(rep.out, "[woken by]"), "wakers without --wakers: %s", rep.out);
}

/* -p --wakers: a waker outside the target (the shell that writes to cat's pipe) has its
 * mappings read at the end, so its user frames are named, not [unknown] */
Test(live_offcpu, waker_outside_the_target_named)
{
	pid_t sh = spawn("while :; do sleep 0.02; echo x; done | cat >/dev/null");
	pid_t cat = wait_descendant(sh, "cat", 1);
	const char *line, *eol, *waker;

	run(&rec, "%s record --no-buildid-cache --off-cpu --wakers -p %d -d 0.4 -o %s", hsbpf_bin(),
	    cat, profile_path());
	kill(cat, SIGTERM);	/* the writer's next echo ends on a broken pipe */
	reap(sh);
	cr_assert_eq(rec.status, 0, "%s", rec.err);
	run(&folded, "%s report -i %s --format folded", hsbpf_bin(), profile_path());
	cr_assert_eq(folded.status, 0, "report failed: %s", folded.err);
	line = strstr(folded.out, "anon_pipe_read_[k];");
	for (; line; line = strstr(eol, "anon_pipe_read_[k];")) {
		eol = strchrnul(line, '\n');
		waker = memmem(line, eol - line, ";--;", 4);
		if (waker && memmem(waker, eol - waker, "write", 5))
			break;
	}
	cr_assert(line, "no read of cat woken by a write: %s", folded.out);
	cr_expect(!memmem(waker, eol - waker, "[unknown]", 9), "the writer's frames unnamed: %.*s",
		  (int)(eol - line), line);
}

/* record -p --wakers of a target blocked reading a FIFO (offcpu fifo) woken 5 times, 30 ms
 * apart, by a process outside it (offcpu fifo-wake, the test's child, not the target's) older
 * than the recording, which then runs then_cmd in its place (NULL: exits; a format whose %d
 * is the target's pid); the waker is gone (reaped) before the recording ends. Its folded
 * stacks in folded, its pid in *wk */
static void record_outside_waker(const char *then_cmd, pid_t *wk)
{
	char fifo[PATH_MAX], go[PATH_MAX], err[PATH_MAX], cmd[3 * PATH_MAX + 512], comm[64], then[256] = "";
	pid_t target, rec_pid;
	int status = -1, fd;

	snprintf(fifo, sizeof(fifo), "%s/wake", tmpdir());
	snprintf(go, sizeof(go), "%s/go", tmpdir());
	snprintf(err, sizeof(err), "%s/record.err", tmpdir());
	cr_assert(!mkfifo(fifo, 0600) && !mkfifo(go, 0600), "mkfifo: %s", strerror(errno));
	snprintf(cmd, sizeof(cmd), "exec %s fifo %s", fixture("offcpu"), fifo);
	target = spawn(cmd);
	if (then_cmd)
		snprintf(then, sizeof(then), then_cmd, target);
	snprintf(cmd, sizeof(cmd), "exec %s fifo-wake %s %s 30 5 %s", fixture("offcpu"), fifo, go, then);
	*wk = spawn(cmd);
	snprintf(comm, sizeof(comm), "/proc/%d/comm", *wk);
	cr_assert(wait_file_contains(comm, "fifo-waker", 15000), "the waker did not start");
	snprintf(cmd, sizeof(cmd), "exec %s record -v --no-buildid-cache --off-cpu --wakers -p %d -d 60 "
		 "-o %s 2>%s", hsbpf_bin(), target, profile_path(), err);
	rec_pid = spawn(cmd);
	cr_assert(wait_file_contains(err, "recording ", 60000), "record did not start");
	fd = open(go, O_WRONLY);	/* the waker's open of it returns: it wakes the target */
	cr_assert_geq(fd, 0, "cannot open %s: %s", go, strerror(errno));
	close(fd);
	cr_assert_eq(waitpid(*wk, &status, 0), *wk);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the waker failed: %d", status);
	/* gone, reaped: the end has nothing of it to read */
	kill(rec_pid, SIGINT);
	cr_assert_eq(waitpid(rec_pid, &status, 0), rec_pid);
	reap(target);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "record failed (%d)", status);
	/* how soon after its first wake-up, and the cost (docs/off-cpu.md's figures) */
	run(&rec, "grep 'wakers outside the target' %s", err);
	cr_log_info("%s", rec.out);
	run(&folded, "%s report -i %s --format folded", hsbpf_bin(), profile_path());
	cr_assert_eq(folded.status, 0, "report failed: %s", folded.err);
}

/* the waker's part (after ";--;") of the first folded stack of the target's read whose waker
 * has frame; *eol its end (the test fails without one) */
static const char *outside_waker_stack(const char *frame, const char **eol)
{
	char want[128];

	snprintf(want, sizeof(want), ";%s;", frame);
	for (const char *line = strstr(folded.out, "anon_pipe_read_[k];"), *waker; line;
	     line = strstr(*eol, "anon_pipe_read_[k];")) {
		*eol = strchrnul(line, '\n');
		waker = memmem(line, *eol - line, ";--;", 4);
		if (waker && memmem(waker, *eol - waker, want, strlen(want)))
			return waker;
	}
	cr_assert_fail("no read of the target woken by %s: %s", frame, folded.out);
	return NULL;
}

/* the outside wakers counted read while they ran */
static void expect_wakers_read(u64 want)
{
	struct profile *p = NULL;

	cr_assert_eq(profile__read(profile_path(), &p), 0);
	cr_expect_eq(p->stats.offcpu_wakers_read, want, "outside wakers read: %llu, gone: %llu",
		     (unsigned long long)p->stats.offcpu_wakers_read,
		     (unsigned long long)p->stats.offcpu_wakers_gone);
	profile__free(p);
}

/* -p --wakers: a waker outside the target, older than the recording, that exits before its
 * end has its mappings and name read while it runs, announced by the kernel at its first
 * wake-up: its user frames are named (wake_from_afar, not [unknown]) and so is it
 * (fifo-waker), though /proc has nothing of it at the end */
Test(live_offcpu, waker_outside_the_target_exiting_before_the_end_named)
{
	const char *waker, *eol;
	char want[64];
	pid_t wk;

	record_outside_waker(NULL, &wk);
	waker = outside_waker_stack("wake_from_afar", &eol);
	cr_expect(!memmem(waker, eol - waker, "[unknown]", 9), "the waker's frames unnamed: %.*s",
		  (int)(eol - waker), waker);
	/* offwaketime's order: the waker's command last, before the time */
	cr_expect(memmem(waker, eol - waker, ";main;", 6) && memmem(waker, eol - waker, ";fifo-waker ", 12),
		  "the waker's stack or name: %.*s", (int)(eol - waker), waker);
	run(&rec, "%s report -i %s --stdio --sort waker --no-children -g none", hsbpf_bin(), profile_path());
	snprintf(want, sizeof(want), "%d:fifo-waker\n", wk);
	cr_expect(rec.status == 0 && strstr(rec.out, want), "no row of waker %d: %s", wk, rec.out);
	cr_expect(strstr(rec.out, "# wakers outside the target: 1 read while they ran"), "%s", rec.out);
	expect_wakers_read(1);
}

/* ... and one that execs another program (bash, whose printf writes once the target is
 * blocked in its read again: a loaded machine may not have run it since the last write, and
 * a write then wakes nothing; its sleep not the last command, which bash would exec in its
 * place) has each image's frames
 * and name under its own wake-ups: the first program's mappings are not the second's */
Test(live_offcpu, waker_outside_the_target_exec_keeps_each_image)
{
	const char *waker, *eol;
	pid_t wk;

	record_outside_waker("bash -c 'until read -r nr rest </proc/%d/syscall && [ \"$nr\" = 0 ]; do "
			     "sleep 0.002; done; printf y >&3; sleep 0.1; :'", &wk);
	waker = outside_waker_stack("wake_from_afar", &eol);
	cr_expect(!memmem(waker, eol - waker, "[unknown]", 9) && !memmem(waker, eol - waker, "bash", 4) &&
		  memmem(waker, eol - waker, ";fifo-waker ", 12), "the first image's waker: %.*s",
		  (int)(eol - waker), waker);
	waker = outside_waker_stack("printf_builtin", &eol);
	cr_expect(!memmem(waker, eol - waker, "[unknown]", 9) && !memmem(waker, eol - waker, "wake_from_afar", 14) &&
		  memmem(waker, eol - waker, ";bash ", 6), "the second image's waker: %.*s",
		  (int)(eol - waker), waker);
	expect_wakers_read(2);
}

/* frame pointers: libc's nanosleep has none, so the chain goes from it to nap's caller */
Test(live_offcpu, nanosleep_frame_pointers)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "%s sleep 20 10", fixture("offcpu"));
	record("--off-cpu --call-graph fp", cmd, "main");
	/* main does nothing but nap (a nap preempted on its way out is a block of its own) */
	expect_time(folded_us("main", NULL) * 1e3, fixture_ns("nap"), "nap's caller");
}

/* --wall: the victim waits for CPU 0 beside a hog; what it did not run is off-CPU time (R),
 * and every thread's on- plus off-CPU time is its elapsed time. Each thread measures itself
 * from the start of its function (main, victim_thread, hog) to its last line: the time
 * compared is the time in stacks through that function, without the program's start (exec,
 * ld.so) and end, where a loaded machine's run queues once added 14-39 ms to main's 330 */
Test(live_offcpu, preempted_thread_and_wall_totals)
{
	static const char *const fns[] = { ";main", ";victim_thread", ";hog" };
	struct profile *p;
	double got, want, steal, steal_all;
	char cmd[512];
	u64 period;

	snprintf(cmd, sizeof(cmd), "%s preempt 300", fixture("offcpu"));
	steal = cpu_steal_ticks(0);
	steal_all = cpu_steal_ticks(-1);
	record("--wall -F 4999", cmd, "victim");
	steal = cpu_steal_ticks(0) - steal;
	steal_all = cpu_steal_ticks(-1) - steal_all;
	/* in ns, at most a tick more than the ticks counted: /proc/stat counts steal in whole
	 * ticks (10 ms), so a run that saw none may still have lost up to one (seen: victim's
	 * off-CPU 8.6 ms short of the fixture's with no tick of steal counted, under load) */
	steal = (steal + 1) * (1e9 / sysconf(_SC_CLK_TCK));
	steal_all = (steal_all + 1) * (1e9 / sysconf(_SC_CLK_TCK));
	/* off-CPU stacks end in the scheduler; on-CPU samples of victim do not. The fixture's
	 * measure (wall time less the thread's CPU time) also counts the time the hypervisor
	 * took CPU 0 from the VM (steal: this kernel leaves it out of a task's CPU time), which
	 * no switch shows: the recording may be short of it by that much */
	got = folded_us("victim", "__schedule_[k]") * 1e3;
	want = fixture_ns("victim_off");
	if (got < want && want - got <= steal)
		want = got;
	expect_time(got, want, "victim off-CPU");
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	cr_expect_str_eq(p->meta.offcpu, "wall");
	period = p->meta.period;
	for (const char *at = rec.out; (at = strstr(at, "thread ")); at++) {
		struct run_result thr;
		unsigned tid;
		double elapsed, in = 0, n_on = 0, tol;

		cr_assert_eq(sscanf(at, "thread %u %lf", &tid, &elapsed), 2);
		for (size_t i = 0; i < p->nr_samples; i++)
			if (profile__sample_key(p, i)->tid == tid && !(p->samples[i].flags & HSBPF_KEY_OFFCPU))
				n_on += p->samples[i].count;
		run(&thr, "%s report -i %s --tid %u --format folded", hsbpf_bin(), profile_path(), tid);
		cr_assert_eq(thr.status, 0, "%s", thr.err);
		for (char *line = thr.out, *end; (end = strchr(line, '\n')); line = end + 1) {
			char *sp;

			*end = 0;
			sp = strrchr(line, ' ');
			for (size_t f = 0; sp && f < sizeof(fns) / sizeof(fns[0]); f++) {
				/* the frame, inside the stack or its leaf (hog's spin) */
				const char *fr = memmem(line, sp - line, fns[f], strlen(fns[f]));

				if (fr && (fr[strlen(fns[f])] == ';' || fr + strlen(fns[f]) == sp)) {
					in += strtod(sp + 1, NULL) * 1e3;
					break;
				}
			}
		}
		/* the on-CPU part is sampled: 4 standard deviations of its count; the off-CPU part
		 * is measured at the switches; 1% (the bound) for the rest: the thread's
		 * clock reads beside its function's entry and its last line; and what the
		 * hypervisor took from a CPU while the thread ran there (steal): in its elapsed
		 * time, in no sample (cpu-clock's timer fires once for the periods it missed).
		 * Seen: 300.3 ms of 307.1 in the fresh-clone CI */
		tol = 4 * sqrt(n_on + 1) * period + 0.01 * elapsed + steal_all;
		cr_expect(fabs(in - elapsed) <= tol, "thread %u: %.3f ms on and off the CPU in its "
			  "function, elapsed %.3f ms (tolerance %.3f ms): %s", tid, in / 1e6,
			  elapsed / 1e6, tol / 1e6, thr.out);
	}
	profile__free(p);
}

/* Debian's python3 has no frame pointers: its stacks are complete from the tables */
Test(live_offcpu, python_sleep_complete_through_libc)
{
	double us;
	const char *line;

	if (access("/usr/bin/python3", X_OK))
		cr_skip_test("no /usr/bin/python3");
	record("--off-cpu", "/usr/bin/python3 -c 'import time; time.sleep(0.2)'", "Py_BytesMain");
	us = folded_us("clock_nanosleep@GLIBC_2.2.5", NULL);
	cr_expect(us >= 196000, "time.sleep(0.2): %.0f us under clock_nanosleep", us);
	line = folded_line("clock_nanosleep");
	cr_expect(!strncmp(line, "python3;_start;__libc_start_main", 32) && strstr(line, "Py_BytesMain;") &&
		  strstr(line, "_PyEval_EvalFrameDefault;"), "not complete to _start: %.600s", line);
}

/* the same in select (Debian's python3.11, the interpreter's C code without frame pointers):
 * 99% of the time in select with its whole stack, as the issue asks (a loaded machine may
 * leave a block of the first milliseconds cut, the program's tables not built yet); bcc's
 * offcputime (libbpf-tools 0.26) gave this block no user frame at all */
Test(live_offcpu, python_select_complete_through_libpython)
{
	double us, whole = 0;

	if (access("/usr/bin/python3.11", X_OK))
		cr_skip_test("no /usr/bin/python3.11");
	record("--off-cpu", "/usr/bin/python3.11 -c 'import select; select.select([], [], [], 0.3)'",
	       "select_select_impl.constprop.0");
	us = folded_us("select_select_impl.constprop.0", NULL);
	cr_expect(us >= 294000, "select for 0.3 s: %.0f us under select_select_impl", us);
	for (char *line = folded.out, *end; (end = strchr(line, '\n')); line = end + 1) {
		char *sp;

		*end = 0;
		sp = strrchr(line, ' ');
		if (sp && strstr(line, ";select_select_impl.constprop.0;") &&
		    !strncmp(line, "python3.11;_start;__libc_start_main", 35) && strstr(line, ";Py_BytesMain;") &&
		    strstr(line, ";_PyEval_EvalFrameDefault;") && strstr(line, ";__select;") &&
		    strstr(line, ";do_select_[k]"))
			whole += strtod(sp + 1, NULL);
		*end = '\n';
	}
	cr_expect(whole >= 0.99 * us, "%.0f of %.0f us in select complete to _start: %s", whole, us, folded.out);
}

/* C++ at -O2 without frame pointers: a thread blocked in std::mutex (glibc's futex wait, from
 * libstdc++'s thread start) has its time within 2% (2 ms) and its stack from clone3 */
Test(live_offcpu, cxx_mutex_wait_complete)
{
	const char *line;
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "%s 200", fixture("cxx/mutexwait"));
	record("--off-cpu", cmd, "waiter");
	expect_time(folded_us("std::mutex::lock (inlined)", "__schedule_[k]") * 1e3, fixture_ns("waited"),
		    "std::mutex wait");
	line = folded_line(";pthread_mutex_lock");
	cr_expect(!strncmp(line, "mutexwait;clone3;start_thread;", 30) && strstr(line, ";waiter;") &&
		  strstr(line, ";std::mutex::lock (inlined);") && strstr(line, "futex_wait"),
		  "not complete to clone3: %.900s", line);
}

Test(live_offcpu, bounds_leave_blocks_out)
{
	static const struct {
		const char *opts;
		bool kept;
	} cases[] = {
		{ "--off-cpu --max-block 5000", false },	/* 20 ms naps: too long */
		{ "--off-cpu --min-block 1000000", false },	/* too short, on a loaded machine too */
		{ "--off-cpu --min-block 5000 --max-block 1000000", true },
	};
	struct profile *p0;
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "%s sleep 20 5", fixture("offcpu"));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct profile *p;

		record(cases[i].opts, cmd, cases[i].kept ? "nap" : NULL);
		cr_assert_eq(profile__read(profile_path(), &p), 0);
		if (cases[i].kept) {
			expect_time(folded_us("nap", NULL) * 1e3, fixture_ns("nap"), cases[i].opts);
		} else {
			cr_expect_geq(i == 0 ? p->stats.offcpu_long : p->stats.offcpu_short, 5, "%s: %llu short, "
				      "%llu long", cases[i].opts, (unsigned long long)p->stats.offcpu_short,
				      (unsigned long long)p->stats.offcpu_long);
		}
		profile__free(p);
	}
	cr_assert_eq(profile__read(profile_path(), &p0), 0);
	cr_expect_eq(p0->meta.min_block_ns, 5000000);
	cr_expect_eq(p0->meta.max_block_ns, 1000000000);
	profile__free(p0);
}

/* -C: the blocks that begin on those CPUs, as the samples taken on them; the sleeper is pinned
 * to CPU 0 */
Test(live_offcpu, cpus_limit_the_blocks)
{
	char cmd[512];

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		cr_skip_test("one CPU: -C 1 is not there");
	snprintf(cmd, sizeof(cmd), "taskset -c 0 %s sleep 20 10", fixture("offcpu"));
	record("--off-cpu -C 0", cmd, "nap");
	expect_time(folded_us("nap", NULL) * 1e3, fixture_ns("nap"), "nap on CPU 0, -C 0");
	record("--off-cpu -C 1", cmd, NULL);
	run(&folded, "%s report -i %s --format folded", hsbpf_bin(), profile_path());
	/* nothing on CPU 1 at all (taskset did not block before it pinned itself) is no stack */
	if (folded.status)
		cr_expect(strstr(folded.err, "has no call stacks"), "report failed: %s", folded.err);
	else
		cr_expect_eq(folded_us("nap", NULL), 0, "nap on CPU 0 recorded with -C 1: %s", folded.out);
}

/* -a: keyed by process (no thread key unless --per-thread), and two processes of one program
 * share their stacks (format 1.11: frames as object and offset, whatever their ASLR); their
 * time off the CPU is all there, its frames named through the objects */
Test(live_offcpu, whole_machine_by_process_with_shared_stacks)
{
	char cmd[512];
	struct profile *p = NULL;
	pid_t a, b;
	bool objects = false, shared = false;
	double off = 0;

	snprintf(cmd, sizeof(cmd), "exec %s sleep 20 150", fixture("offcpu"));
	a = spawn(cmd);
	b = spawn(cmd);
	cr_assert(a > 0 && b > 0);
	run(&rec, "%s record --no-buildid-cache --off-cpu -a -d 0.5 -o %s", hsbpf_bin(), profile_path());
	reap(a);
	reap(b);
	cr_assert_eq(rec.status, 0, "%s", rec.err);
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	cr_expect(!profile__has_key(p, "tid"), "-a --off-cpu keyed by thread");
	for (size_t i = 0; i < p->nr_mappings; i++)
		objects |= p->mappings[i].pid == PROFILE_OBJ_PID;
	cr_expect(objects, "no objects in a -a profile");
	for (size_t i = 0; i < p->nr_stack_samples && !shared; i++)
		for (size_t j = 0; j < p->nr_stack_samples && !shared; j++)
			shared = p->stack_samples[i].pid == (u32)a && p->stack_samples[j].pid == (u32)b &&
				 p->stack_samples[i].user && p->stack_samples[i].user == p->stack_samples[j].user;
	cr_expect(shared, "the two sleepers share no stack");
	/* each naps all but microseconds of the recording (its blocks under way at the start
	 * counted from it, those open at the end up to it), in whatever stack: on a busy machine
	 * the unwind tables may be full, and libc unwound by frame pointers */
	for (size_t i = 0; i < p->nr_samples; i++)
		if ((p->samples[i].pid == (u32)a || p->samples[i].pid == (u32)b) &&
		    (p->samples[i].flags & HSBPF_KEY_OFFCPU))
			off += p->samples[i].weight;
	cr_expect(off >= 2 * 0.95 * p->meta.duration_ns && off <= 2 * 1.01 * p->meta.duration_ns,
		  "off-CPU %.3f ms of two sleepers in %.3f ms", off / 1e6, p->meta.duration_ns / 1e6);
	/* named through the objects: libc's function they sleep in */
	run(&folded, "%s report -i %s --format folded --pid %d,%d", hsbpf_bin(), profile_path(), a, b);
	cr_assert_eq(folded.status, 0, "report failed: %s", folded.err);
	cr_expect(strstr(folded.out, "clock_nanosleep"), "no clock_nanosleep: %s", folded.out);
	profile__free(p);
}

/* -p: a process blocked when the recording ends counts up to the end (the flush) */
Test(live_offcpu, pid_target_blocked_at_the_end)
{
	char cmd[512];
	struct profile *p;
	pid_t pid;
	double off = 0, lost;

	snprintf(cmd, sizeof(cmd), "%s sleep 50 100", fixture("offcpu"));
	pid = spawn(cmd);
	cr_assert_gt(pid, 0);
	p = NULL;
	snprintf(cmd, sizeof(cmd), "--off-cpu -d 0.5 -p %d", pid);
	run(&rec, "%s record %s -o %s", hsbpf_bin(), cmd, profile_path());
	reap(pid);
	cr_assert_eq(rec.status, 0, "%s", rec.err);
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	for (size_t i = 0; i < p->nr_samples; i++)
		if (p->samples[i].flags & HSBPF_KEY_OFFCPU)
			off += p->samples[i].weight;
	cr_expect_geq(p->stats.offcpu_open, 1, "the sleeper was blocked at the end");
	/* the block under way at the start counts from it (test pid_target_blocked_at_the_start),
	 * when the sleeper was in a nap then (it runs for microseconds between naps); a switch
	 * the recording says it missed (no task storage given back: docs/off-cpu.md) may lose
	 * its nap, 50 ms, and only then */
	lost = (double)(p->stats.offcpu_no_storage + p->stats.offcpu_full) * 50e6;
	cr_expect(off >= p->meta.duration_ns - 5e6 - lost && off <= p->meta.duration_ns + 5e6,
		  "off-CPU %.3f ms in a %.3f ms recording (%llu switches said missed)", off / 1e6,
		  p->meta.duration_ns / 1e6,
		  (unsigned long long)(p->stats.offcpu_no_storage + p->stats.offcpu_full));
	profile__free(p);
}

/* -p: a process blocked when the recording starts has that block counted from the start, when
 * it runs again, with its whole stack (unwound then, in its own context), and said */
Test(live_offcpu, pid_target_blocked_at_the_start)
{
	char cmd[512], path[64];
	struct profile *p = NULL;
	double off = 0, nap;
	pid_t pid;

	/* naps of 300 ms, for 90 s at most: the recording starts in one, however long a loaded
	 * machine takes to load its programs, and the nap ends in it (one that did not, a thread
	 * blocked from the start to the end, is never current: not counted) */
	snprintf(cmd, sizeof(cmd), "exec %s sleep 300 300", fixture("offcpu"));
	pid = spawn(cmd);
	cr_assert_gt(pid, 0);
	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	/* a start while the sleeper waits for a CPU after a nap is no block under way: again */
	for (int i = 0; i < 3 && (!p || !p->stats.offcpu_underway); i++) {
		profile__free(p);
		p = NULL;
		/* in a nap: blocked in clock_nanosleep (syscall 230) */
		cr_assert(wait_file_contains(path, "230 ", 5000), "the sleeper is not in its nap");
		run(&rec, "%s record --off-cpu -d 1 -p %d -o %s", hsbpf_bin(), pid, profile_path());
		cr_assert_eq(rec.status, 0, "%s", rec.err);
		cr_assert_eq(profile__read(profile_path(), &p), 0);
	}
	reap(pid);
	run(&folded, "%s report -i %s --format folded", hsbpf_bin(), profile_path());
	cr_assert_eq(folded.status, 0, "report failed: %s", folded.err);
	for (size_t i = 0; i < p->nr_samples; i++)
		if (p->samples[i].flags & HSBPF_KEY_OFFCPU)
			off += p->samples[i].weight;
	cr_expect_eq(p->stats.offcpu_underway, 1, "one block under way at the start: %llu",
		     (unsigned long long)p->stats.offcpu_underway);
	/* the whole recording is naps: one under way at the start, one open at the end */
	cr_expect(off >= p->meta.duration_ns - 5e6 && off <= p->meta.duration_ns + 5e6,
		  "off-CPU %.3f ms in a %.3f ms recording", off / 1e6, p->meta.duration_ns / 1e6);
	nap = folded_us("nap", NULL) * 1e3;
	cr_expect(fabs(nap - off) <= 1e6, "%.3f ms of %.3f under nap: %s", nap / 1e6, off / 1e6, folded.out);
	cr_expect(strstr(folded.out, "offcpu;_start;__libc_start_main"), "not complete to _start: %s",
		  folded.out);
	run(&rec, "%s report -i %s --stdio", hsbpf_bin(), profile_path());
	cr_expect(strstr(rec.out, "1 blocks were under way at the start: counted from it"), "%s", rec.out);
	profile__free(p);
}

/* --cgroup: a napper inside the cgroup, blocked when the recording starts, counts from the
 * start as -p's does (the walk and the switch-in test a task's cgroup by its ancestors); a
 * napper outside it is not counted at all */
Test(live_offcpu, cgroup_target_blocked_at_the_start)
{
	char mnt[PATH_MAX], dir[PATH_MAX + 64], cmd[2 * PATH_MAX], path[64];
	struct profile *p = NULL;
	double off = 0;
	pid_t in, out;

	remove_stale_test_cgroups();
	cr_assert_eq(cgroup__find_mount("/proc/self/mountinfo", mnt, sizeof(mnt)), 0);
	snprintf(dir, sizeof(dir), "%s/hsbpf-offcg-%d", mnt, getpid());
	cr_assert_eq(mkdir(dir, 0755), 0, "cannot create cgroup %s", dir);
	snprintf(cmd, sizeof(cmd), "echo $$ > %s/cgroup.procs && exec %s sleep 300 300", dir, fixture("offcpu"));
	in = spawn(cmd);
	snprintf(cmd, sizeof(cmd), "exec %s sleep 300 300", fixture("offcpu"));
	out = spawn(cmd);
	in = wait_descendant(in, "offcpu", 1);
	snprintf(path, sizeof(path), "/proc/%d/syscall", in);
	for (int i = 0; i < 3 && (!p || !p->stats.offcpu_underway); i++) {
		profile__free(p);
		p = NULL;
		cr_assert(wait_file_contains(path, "230 ", 5000), "the sleeper is not in its nap");
		run(&rec, "%s record --off-cpu -d 1 --cgroup %s -o %s", hsbpf_bin(), strrchr(dir, '/') + 1,
		    profile_path());
		cr_assert_eq(rec.status, 0, "%s", rec.err);
		cr_assert_eq(profile__read(profile_path(), &p), 0);
	}
	kill(in, SIGKILL);
	kill(out, SIGKILL);
	reap(in);
	reap(out);
	remove_cgroup(dir);
	for (size_t i = 0; i < p->nr_samples; i++) {
		if (!(p->samples[i].flags & HSBPF_KEY_OFFCPU))
			continue;
		cr_expect_eq(p->samples[i].pid, (u32)in, "a block of pid %u, not the cgroup's %d",
			     p->samples[i].pid, in);
		off += p->samples[i].weight;
	}
	cr_expect_eq(p->stats.offcpu_underway, 1, "one block under way at the start: %llu",
		     (unsigned long long)p->stats.offcpu_underway);
	/* the whole recording is naps: one under way at the start, one open at the end */
	cr_expect(off >= p->meta.duration_ns - 5e6 && off <= p->meta.duration_ns + 5e6,
		  "off-CPU %.3f ms in a %.3f ms recording", off / 1e6, p->meta.duration_ns / 1e6);
	profile__free(p);
}

/* the fixture's napper threads ("napped TID NS"): up to max, their number */
static int fixture_napped(u32 *tids, double *ns, int max)
{
	int n = 0;

	for (const char *at = strstr(rec.out, "napped "); at && n < max; at = strstr(at + 1, "napped ")) {
		unsigned long tid;
		double v;

		if (sscanf(at, "napped %lu %lf", &tid, &v) == 2) {
			tids[n] = tid;
			ns[n++] = v;
		}
	}
	return n;
}

/* a thread's off-CPU blocks and time in the profile (its flat samples, keyed by thread) */
static void thread_offcpu(const struct profile *p, u32 tid, u64 *blocks, double *ns)
{
	*blocks = 0;
	*ns = 0;
	for (size_t i = 0; i < p->nr_samples; i++) {
		if (!(p->samples[i].flags & HSBPF_KEY_OFFCPU) || profile__sample_key(p, i)->tid != tid)
			continue;
		*blocks += p->samples[i].count;
		*ns += p->samples[i].weight;
	}
}

/* --switch-sample P: blocks followed with probability P, their time weighed 1/P. A thread of
 * 100 naps of 3 ms and one of 100 of 7 ms (300 ms, 700 ms by their own clocks): each one's
 * estimate holds its time in its interval (report's, at 3.89 standard deviations instead of
 * 1.96: four checks, a false failure 1 in 2500 runs), the share of blocks followed is P, and
 * report shows the estimate with its interval */
Test(live_offcpu, switch_sample_estimates_within_intervals)
{
	static const struct {
		const char *arg;
		double p;
	} cases[] = { { "0.1", 0.1 }, { "1/2", 0.5 } };
	const double z = 3.890591886;	/* two-sided 1e-4 */
	char cmd[512], opts[64];

	snprintf(cmd, sizeof(cmd), "%s naps 3,7 100", fixture("offcpu"));
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct profile *p;
		double ns[2], got, lo, hi;
		u64 blocks, followed;
		u32 tids[2];

		snprintf(opts, sizeof(opts), "--off-cpu --switch-sample %s", cases[c].arg);
		record(opts, cmd, NULL);
		cr_assert_eq(fixture_napped(tids, ns, 2), 2, "the fixture's nappers: %s", rec.out);
		cr_assert_eq(profile__read(profile_path(), &p), 0);
		cr_expect(fabs(p->meta.offcpu_sample - cases[c].p) < 1e-9, "%s: meta %g", opts,
			  p->meta.offcpu_sample);
		for (int i = 0; i < 2; i++) {
			thread_offcpu(p, tids[i], &blocks, &got);
			offcpu__interval(p, blocks, got, z, &lo, &hi);
			cr_expect(ns[i] >= lo && ns[i] <= hi, "%s: thread %u napped %.3f ms, estimated %.3f "
				  "ms from %llu blocks (%.3f to %.3f ms)", opts, tids[i], ns[i] / 1e6, got / 1e6,
				  (unsigned long long)blocks, lo / 1e6, hi / 1e6);
		}
		followed = p->stats.offcpu_switches + p->stats.offcpu_underway;
		expect_share(followed, followed + p->stats.offcpu_unsampled, cases[c].p, opts);
		profile__free(p);
		run(&folded, "%s report -i %s --stdio --sort tid --no-children -g none", hsbpf_bin(),
		    profile_path());
		cr_expect(strstr(folded.out, "estimated from the blocks followed at random") &&
			  strstr(folded.out, "95% interval") && strstr(folded.out, "blocks followed at random"),
			  "%s", folded.out);
		/* each napper's row has its interval (a measured row's CI95 is "-") */
		for (int i = 0; i < 2; i++) {
			char want[32];
			const char *row;

			snprintf(want, sizeof(want), "%u:offcpu", tids[i]);
			row = strstr(folded.out, want);
			while (row && row > folded.out && row[-1] != '\n')
				row--;
			cr_expect(row && !memmem(row, strcspn(row, "\n"), "%       -", 9),
				  "no interval in %s's row: %s", want, folded.out);
		}
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* the start's race: a thread blocked before the switch program's attach that runs again before
 * the start's walk meets it has its block counted from the start all the same (found at its
 * switch-in, and said). HSBPF_TEST_OFFCPU_START_GAP_MS holds the walk back 200 ms, in which
 * each of 8 threads napping 20 ms wakes: without the switch-in's catch each loses the part of
 * its nap after the start, 10 ms on average, and none is counted as under way */
Test(live_offcpu, blocks_ending_during_the_start_count_from_it)
{
	char cmd[512], path[64];
	struct profile *p = NULL;
	double short_ms[8];
	pid_t pid;
	int nappers = 0;

	snprintf(cmd, sizeof(cmd), "exec %s naps 20,20,20,20,20,20,20,20 1000", fixture("offcpu"));
	pid = spawn(cmd);
	cr_assert_gt(pid, 0);
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	cr_assert(wait_file_contains(path, "Threads:\t9", 5000), "the nappers did not start");
	run(&rec, "HSBPF_TEST_OFFCPU_START_GAP_MS=200 %s record --off-cpu -d 1 -p %d -o %s", hsbpf_bin(),
	    pid, profile_path());
	reap(pid);
	cr_assert_eq(rec.status, 0, "%s", rec.err);
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	for (size_t i = 0; i < p->nr_samples && nappers < 8; i++) {
		u32 tid = profile__sample_key(p, i)->tid;
		u64 blocks;
		double off;
		bool seen = false;

		/* each napper once (the main thread waits in its join from start to end: not counted) */
		for (size_t j = 0; j < i; j++)
			seen |= profile__sample_key(p, j)->tid == tid;
		if (seen || tid == (u32)pid || !(p->samples[i].flags & HSBPF_KEY_OFFCPU))
			continue;
		thread_offcpu(p, tid, &blocks, &off);
		short_ms[nappers++] = (p->meta.duration_ns - off) / 1e6;
	}
	cr_assert_eq(nappers, 8, "8 nappers in the profile: %d", nappers);
	/* a napper runs microseconds a nap: its off-CPU time is the recording's but for them.
	 * The median thread's: a block the kernel's task storage did not give back (its lock
	 * busy on that CPU: a switch missed, counted) costs one thread a nap now and then */
	qsort(short_ms, 8, sizeof(*short_ms), cmp_double);
	cr_expect_leq((short_ms[3] + short_ms[4]) / 2, 3, "the nappers' off-CPU time falls short of "
		      "the recording's %.3f ms by %.3f to %.3f ms, median %.3f", p->meta.duration_ns / 1e6,
		      short_ms[0], short_ms[7], (short_ms[3] + short_ms[4]) / 2);
	/* a napper may have been on its way to a CPU at the start: most were asleep */
	cr_expect_geq(p->stats.offcpu_underway_early, 6, "blocks found under way at their switch-in: "
		      "%llu of %llu under way", (unsigned long long)p->stats.offcpu_underway_early,
		      (unsigned long long)p->stats.offcpu_underway);
	run(&rec, "%s report -i %s --stdio", hsbpf_bin(), profile_path());
	cr_expect(strstr(rec.out, "ended before the start's walk met their thread"), "%s", rec.out);
	profile__free(p);
}

/* a block found under way at its switch-in (the start's race above) keeps its state: the
 * parent of a vfork waits uninterruptibly (D) for its child's 100 ms nap, and the block it
 * is in at the attach ends while the start's walk is held back. Guessed, it was S (0-100 ms
 * of S, uniform: this fails 98 times in 100 on that guess); read from the scheduler's mark of
 * the block, D. The parent is off the CPU all the recording but for microseconds a round */
Test(live_offcpu, a_block_found_under_way_at_its_switch_in_keeps_its_state)
{
	char cmd[512], path[64];
	double by_state[HSBPF_OFFCPU_NR] = {}, off = 0, lost;
	struct profile *p = NULL;
	pid_t pid;

	snprintf(cmd, sizeof(cmd), "exec %s vforks 100 30", fixture("offcpu"));
	pid = spawn(cmd);
	cr_assert_gt(pid, 0);
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	cr_assert(wait_file_contains(path, ") D ", 5000), "the fixture's parent never waited in D");
	run(&rec, "HSBPF_TEST_OFFCPU_START_GAP_MS=200 %s record --off-cpu -d 1 -p %d -o %s", hsbpf_bin(),
	    pid, profile_path());
	reap(pid);
	cr_assert_eq(rec.status, 0, "%s", rec.err);
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	for (size_t i = 0; i < p->nr_samples; i++) {
		if (!(p->samples[i].flags & HSBPF_KEY_OFFCPU) || profile__sample_key(p, i)->tid != (u32)pid)
			continue;
		by_state[offcpu__state(p->samples[i].flags)] += p->samples[i].weight / 1e6;
		off += p->samples[i].weight / 1e6;
	}
	cr_expect_geq(p->stats.offcpu_underway_early, 1, "no block found under way at its switch-in");
	cr_expect_lt(by_state[HSBPF_OFFCPU_S], 2, "the vfork parent's S time %.3f ms (D %.3f ms, R %.3f "
		     "ms)", by_state[HSBPF_OFFCPU_S], by_state[HSBPF_OFFCPU_D], by_state[HSBPF_OFFCPU_R]);
	/* a block whose switch-in the kernel's task storage did not give back is lost, counted
	 * (docs/off-cpu.md): one nap each */
	lost = (double)(p->stats.offcpu_no_storage + p->stats.offcpu_full) * 100;
	cr_expect_geq(off, p->meta.duration_ns / 1e6 - 3 - lost, "the parent's off-CPU time %.3f ms "
		      "of the recording's %.3f (%llu switches said missed)", off,
		      p->meta.duration_ns / 1e6,
		      (unsigned long long)(p->stats.offcpu_no_storage + p->stats.offcpu_full));
	profile__free(p);
}

Test(live_offcpu, usage_errors)
{
	static const char *const bad[] = {
		"--off-cpu --min-block 10 --max-block 5", "--off-cpu --min-block -5", "--min-block 10",
		"--off-cpu --wall", "--off-cpu --max-block 0", "--wall -e cycles", "--off-cpu -b -e cycles",
		"--wakers", "--switch-sample 0.5", "--off-cpu --switch-sample 0", "--off-cpu --switch-sample 1.5",
		"--off-cpu --switch-sample 1/0", "--off-cpu --switch-sample x",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		run(&rec, "%s record %s -o %s -- true", hsbpf_bin(), bad[i], profile_path());
		cr_expect_eq(rec.status, 2, "record %s: %d %s", bad[i], rec.status, rec.err);
	}
}
