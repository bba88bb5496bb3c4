// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The command line as a hostile or unlucky user meets it: every subcommand's --help and
 * option errors; nonsense durations and CPU lists; record when its terminal closes, when it
 * is killed, when its command will not die; no root; process names that carry terminal
 * controls; truth interrupted; Ctrl-\ on top's screen; an output that is not a file. Every
 * wait is on a condition (a process, a file, a line), with a time limit. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "helpers.h"
#include "profile/procfs.h"

TestSuite(live_cli, .fini = cleanup_tmpdir, .timeout = 60);

static const char *const commands[] = {
	"record", "stat", "top", "report", "annotate", "eval", "experiment", "import", "truth", "selftest",
	"flamegraph", "diff",
};

/* --help and -h: the usage on stdout, exit 0, and nothing run; an unknown option: exit 2, said
 * by the subcommand's full name, with a pointer to --help */
Test(live_cli, every_command_has_help_and_rejects_unknown_options)
{
	struct run_result r;
	char want[64];

	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		const char *cmd = commands[i];

		snprintf(want, sizeof(want), "usage: hsbpf %s", cmd);
		for (int h = 0; h < 2; h++) {
			run(&r, "%s %s %s", hsbpf_bin(), cmd, h ? "-h" : "--help");
			cr_expect_eq(r.status, 0, "%s %s: status %d: %s", cmd, h ? "-h" : "--help", r.status,
				     r.err);
			cr_expect(strstr(r.out, want) == r.out, "%s --help printed: %s", cmd, r.out);
			cr_expect_str_eq(r.err, "", "%s --help: %s", cmd, r.err);
		}
		snprintf(want, sizeof(want), "hsbpf %s: ", cmd);
		run(&r, "%s %s --no-such-option", hsbpf_bin(), cmd);
		cr_expect_eq(r.status, 2, "%s --no-such-option: status %d", cmd, r.status);
		cr_expect(strstr(r.err, want) == r.err, "%s --no-such-option: %s", cmd, r.err);
		cr_expect(strstr(r.err, "unrecognized option '--no-such-option'"), "%s", r.err);
		cr_expect(strstr(r.err, "--help"), "%s: no pointer to --help: %s", cmd, r.err);
		cr_expect_str_eq(r.out, "", "%s --no-such-option: %s", cmd, r.out);
		run(&r, "%s %s -Z", hsbpf_bin(), cmd);
		cr_expect_eq(r.status, 2, "%s -Z: status %d", cmd, r.status);
		cr_expect(strstr(r.err, want) == r.err, "%s -Z: %s", cmd, r.err);
		cr_expect(strstr(r.err, "invalid option -- 'Z'"), "%s", r.err);
	}
	run(&r, "%s selftest unexpected", hsbpf_bin());
	cr_expect_eq(r.status, 2, "selftest took an argument: %s", r.out);
	cr_expect(strstr(r.err, "unexpected argument 'unexpected'"), "%s", r.err);
}

/* durations and intervals that would overflow a deadline, or are not numbers of seconds: a
 * usage error that names the option, and nothing recorded */
Test(live_cli, durations_are_checked)
{
	static const struct {
		const char *args;
		const char *msg;
	} cases[] = {
		{ "record -o p.data -d inf -- true", "invalid duration 'inf'" },
		{ "record -o p.data -d 1e10 -- true", "invalid duration '1e10'" },
		{ "record -o p.data -d 2e10 -- true", "invalid duration '2e10'" },
		{ "record -o p.data -d nan -- true", "invalid duration 'nan'" },
		{ "record -o p.data -d 0x10 -- true", "invalid duration '0x10'" },
		{ "record -o p.data -d 0 -- true", "invalid duration '0'" },
		{ "record -o p.data -c 18446744073709551615 -- true", "invalid period '18446744073709551615'" },
		{ "top --stdio -n 1 -d inf", "invalid delay 'inf'" },
		{ "top --stdio -n 1 -d nan", "invalid delay 'nan'" },
	};
	struct run_result r;
	struct profile *p;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unlink(profile_path());
		run(&r, "cd %s && %s %s", tmpdir(), hsbpf_bin(), cases[i].args);
		cr_expect_eq(r.status, 2, "'%s': status %d: %s", cases[i].args, r.status, r.err);
		cr_expect(strstr(r.err, cases[i].msg), "'%s': %s", cases[i].args, r.err);
		cr_expect_neq(access(profile_path(), F_OK), 0, "'%s' left a profile", cases[i].args);
	}
	/* the longest duration taken still leaves the deadline ahead: the command is recorded */
	unlink(profile_path());
	run(&r, "%s record -d 31536000 -o %s -- %s 0.3", hsbpf_bin(), profile_path(), fixture("hot7030"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	cr_expect_gt(profile__total_samples(p), 100);
	profile__free(p);
}

/* record passes its command's exit status on, as perf does: 128 + N for a command killed by
 * signal N; a command that record itself ends (-d) leaves record's own 0. The profile is
 * written in every case. */
Test(live_cli, record_exits_with_the_commands_status)
{
	static const struct {
		const char *cmd;
		int status;
	} cases[] = {
		{ "sh -c 'exit 7'", 7 },
		{ "sh -c 'kill -TERM $$'", 143 },
		{ "sh -c 'kill -KILL $$'", 137 },
		{ "true", 0 },
		{ "-d 0.2 -- sleep 30", 0 },
	};
	struct run_result r;
	struct profile *p;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unlink(profile_path());
		run(&r, "%s record -o %s %s%s", hsbpf_bin(), profile_path(),
		    strncmp(cases[i].cmd, "-d", 2) ? "-- " : "", cases[i].cmd);
		cr_expect_eq(r.status, cases[i].status, "'%s': status %d: %s", cases[i].cmd, r.status,
			     r.err);
		cr_expect_eq(profile__read(profile_path(), &p), 0, "'%s': no profile", cases[i].cmd);
		profile__free(p);
	}
}

/* numbers in options are decimal, or hex after 0x: -F 010 is 10 Hz (strtoull's base 0 read
 * it as octal, 8) */
Test(live_cli, option_numbers_are_decimal)
{
	struct run_result r;
	struct profile *p;

	run(&r, "%s record -F 010 -o %s -- true", hsbpf_bin(), profile_path());
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	cr_expect_eq(p->meta.period, 100000000, "-F 010: period %llu ns",
		     (unsigned long long)p->meta.period);
	profile__free(p);
	/* an explicit 0x is hex, as perf takes it */
	run(&r, "%s record -c 0x100000 -o %s -- true", hsbpf_bin(), profile_path());
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	cr_expect_eq(p->meta.period, 0x100000);
	profile__free(p);
	run(&r, "%s record -c ' 100000' -o %s -- true", hsbpf_bin(), profile_path());
	cr_expect_eq(r.status, 2, "%s", r.err);
}

/* -C: a CPU the machine does not have, and lists that are not lists, said before anything
 * is opened */
Test(live_cli, cpu_lists_are_checked)
{
	static const struct {
		const char *cpus;
		int status;
		const char *msg;
	} cases[] = {
		{ "8191", 1, "CPU 8191 does not exist (this machine has CPUs 0" },
		{ "0,8000-8001", 1, "CPU 8000 does not exist (this machine has CPUs 0" },
		{ "8192", 2, "invalid CPU list '8192': no kernel numbers a CPU above 8191" },
		{ "1-0", 2, "invalid CPU list '1-0': the range '1-0' goes down" },
		{ "0,", 2, "invalid CPU list '0,': an empty entry" },
		{ "0x1", 2, "invalid CPU list '0x1': '0x1' is not a CPU or a range such as 0-3" },
		{ "", 2, "empty CPU list" },
	};
	struct run_result r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unlink(profile_path());
		run(&r, "%s record -o %s -C '%s' -- true", hsbpf_bin(), profile_path(), cases[i].cpus);
		cr_expect_eq(r.status, cases[i].status, "-C '%s': status %d: %s", cases[i].cpus, r.status,
			     r.err);
		cr_expect(strstr(r.err, cases[i].msg), "-C '%s': %s", cases[i].cpus, r.err);
		cr_expect(!strstr(r.err, "sideband"), "-C '%s': %s", cases[i].cpus, r.err);
		cr_expect_neq(access(profile_path(), F_OK), 0, "-C '%s' left a profile", cases[i].cpus);
	}
	/* the online CPUs themselves are taken */
	run(&r, "%s record -o %s -C 0 -- true", hsbpf_bin(), profile_path());
	cr_expect_eq(r.status, 0, "%s", r.err);
}

/* ---- signals, and the command record starts ---- */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* the pid of parent's child that runs comm, waited for up to ms; 0 if none came. Seen under
 * its own name, the command has exec'd: record is sampling it. */
static pid_t child_named(pid_t parent, const char *comm, int ms)
{
	for (double end = now_s() + ms / 1000.0; now_s() < end; usleep(20000)) {
		DIR *d = opendir("/proc");
		struct dirent *e;
		pid_t found = 0;

		while (d && !found && (e = readdir(d))) {
			char path[300], buf[512], *open_paren, *close_paren;
			int ppid;
			FILE *f;

			if (e->d_name[0] < '1' || e->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
			f = fopen(path, "r");
			if (!f)
				continue;
			buf[0] = 0;
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = 0;
			fclose(f);
			open_paren = strchr(buf, '(');
			close_paren = strrchr(buf, ')');
			if (!open_paren || !close_paren || sscanf(close_paren + 2, "%*c %d", &ppid) != 1)
				continue;
			*close_paren = 0;
			if (ppid == parent && !strcmp(open_paren + 1, comm))
				found = atoi(e->d_name);
		}
		if (d)
			closedir(d);
		if (found)
			return found;
	}
	return 0;
}

/* up to ms for pid to be gone from /proc, or dead there (a zombie): true if it went */
static bool wait_gone(pid_t pid, int ms)
{
	for (double end = now_s() + ms / 1000.0; now_s() < end; usleep(20000))
		if (!procfs__alive(pid))
			return true;
	return !procfs__alive(pid);
}

/* waitpid for up to ms: the wait status, or -1 if pid has not ended by then */
static int wait_exit(pid_t pid, int ms)
{
	int st;

	for (double end = now_s() + ms / 1000.0; now_s() < end; usleep(20000))
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
	return waitpid(pid, &st, WNOHANG) == pid ? st : -1;
}

/* record of hot7030 in the background, once hot7030 has exec'd; its pid and the command's */
static pid_t start_record(const char *opts, pid_t *cmd)
{
	char line[1024];
	pid_t pid;

	unlink(profile_path());
	snprintf(line, sizeof(line), "exec %s record %s -o %s -- %s 20 2>/dev/null", hsbpf_bin(), opts,
		 profile_path(), fixture("hot7030"));
	pid = spawn(line);
	*cmd = child_named(pid, "hot7030", 15000);
	if (!*cmd)
		reap(pid);
	cr_assert_gt(*cmd, 0, "record did not start hot7030");
	return pid;
}

/* a closed terminal (SIGHUP) and Ctrl-\ (SIGQUIT) end a recording as Ctrl-C does: exit 0,
 * the profile written, the command ended */
Test(live_cli, sighup_and_sigquit_write_the_profile)
{
	const int sigs[] = { SIGHUP, SIGQUIT };

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct profile *p;
		pid_t pid, cmd;
		int st;

		pid = start_record("", &cmd);
		kill(pid, sigs[i]);
		st = wait_exit(pid, 20000);
		if (st < 0) {
			reap(pid);
			kill(cmd, SIGKILL);
		}
		cr_assert_geq(st, 0, "signal %d: record went on", sigs[i]);
		cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "signal %d: status %#x", sigs[i], st);
		cr_assert_eq(profile__read(profile_path(), &p), 0, "signal %d: no profile", sigs[i]);
		cr_expect_str_eq(p->meta.event, "cpu-clock");
		profile__free(p);
		cr_expect(!procfs__alive(cmd), "signal %d: hot7030 (pid %d) outlived record", sigs[i], cmd);
		if (procfs__alive(cmd))
			kill(cmd, SIGKILL);
	}
}

/* SIGKILL gives record no say: the kernel kills its command with it (PR_SET_PDEATHSIG);
 * --no-kill-with-parent leaves the command running. This process becomes the subreaper, so
 * that the orphaned command's end can be waited for and its cause read. */
Test(live_cli, sigkill_of_record_kills_its_command)
{
	pid_t pid, cmd;
	int st;

	cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	pid = start_record("", &cmd);
	kill(pid, SIGKILL);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	cr_expect(wait_gone(cmd, 10000), "hot7030 (pid %d) outlived a killed record", cmd);
	st = wait_exit(cmd, 10000);
	if (st < 0)
		reap(cmd);
	cr_expect(st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "hot7030: status %#x", st);

	pid = start_record("--no-kill-with-parent", &cmd);
	kill(pid, SIGKILL);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	/* a SIGKILL sent at record's death would already be pending: it would win over this */
	kill(cmd, SIGTERM);
	st = wait_exit(cmd, 10000);
	if (st < 0)
		reap(cmd);
	cr_expect(st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM,
		  "--no-kill-with-parent: hot7030 status %#x", st);
}

/* up to ms for the file at path to hold text */
static bool wait_for_text(const char *path, const char *text, int ms)
{
	for (double end = now_s() + ms / 1000.0; ; usleep(20000)) {
		char buf[8192] = "";
		FILE *f = fopen(path, "r");
		bool found;

		if (f) {
			buf[fread(buf, 1, sizeof(buf) - 1, f)] = 0;
			fclose(f);
		}
		found = strstr(buf, text);
		if (found || now_s() >= end)
			return found;
	}
}

/* a command that ignores SIGTERM (the disposition survives its exec) and ends by itself after
 * 20 s, so that nothing runs on if record fails to stop it */
#define STUBBORN "sh -c 'trap \"\" TERM; exec %s 20'"

/* -d passes and the command ignores SIGTERM: record says what it waits for, and SIGKILLs it
 * after the documented 5 s; the profile is written */
Test(live_cli, a_command_that_ignores_sigterm_is_killed_after_a_while)
{
	struct run_result r;
	struct profile *p;
	const char *s;
	double t0 = now_s();
	int cmd = 0;

	run(&r, "%s record -d 0.5 -o %s -- " STUBBORN, hsbpf_bin(), profile_path(), fixture("hot7030"));
	cr_expect_lt(now_s() - t0, 15, "record took %.1f s", now_s() - t0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	s = strstr(r.err, "hsbpf: waiting for 'sh' (pid ");
	cr_assert(s, "nothing said while waiting: %s", r.err);
	cr_expect(strstr(s, "to exit after SIGTERM; SIGKILL in 5 s, or at once on Ctrl-C"), "%s", r.err);
	cmd = atoi(s + strlen("hsbpf: waiting for 'sh' (pid "));
	cr_expect(strstr(r.err, "did not exit within 5 s of SIGTERM: killed it with SIGKILL"), "%s",
		  r.err);
	cr_expect(!strstr(r.err, "was killed by signal"), "said twice: %s", r.err);
	cr_assert_gt(cmd, 0);
	cr_expect(!procfs__alive(cmd), "the command (pid %d) outlived record", cmd);
	/* the profile holds the 0.5 s recorded: how many samples depends on the CPU the command
	 * got in it (500 on an idle core, under 100 when the machine is loaded) */
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	cr_expect_gt(profile__total_samples(p), 0);
	profile__free(p);
}

/* Ctrl-C ends the recording, the command ignores the SIGTERM that follows; a second Ctrl-C
 * has it killed at once */
Test(live_cli, a_second_ctrl_c_kills_a_command_that_ignores_sigterm)
{
	char line[1024], errp[300];
	struct profile *p;
	pid_t pid, cmd;
	int st;

	snprintf(errp, sizeof(errp), "%s/err", tmpdir());
	unlink(profile_path());
	snprintf(line, sizeof(line), "exec %s record -o %s -- " STUBBORN " 2>%s", hsbpf_bin(),
		 profile_path(), fixture("hot7030"), errp);
	pid = spawn(line);
	cmd = child_named(pid, "hot7030", 15000);
	if (!cmd)
		reap(pid);
	cr_assert_gt(cmd, 0, "record did not start the command");
	kill(pid, SIGINT);
	cr_expect(wait_for_text(errp, "to exit after SIGTERM", 4000), "nothing said while waiting");
	kill(pid, SIGINT);
	st = wait_exit(pid, 20000);
	if (st < 0)
		reap(pid);
	cr_assert_geq(st, 0, "record went on after a second Ctrl-C");
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
	/* killed because it was asked to, not because 5 s went by */
	cr_expect(wait_for_text(errp, "had not exited on SIGTERM: killed it with SIGKILL", 0),
		  "the second Ctrl-C did not kill the command");
	cr_expect(!procfs__alive(cmd), "the command (pid %d) outlived record", cmd);
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	profile__free(p);
}

/* ---- privileges ---- */

#define NOBODY "setpriv --reuid=65534 --regid=65534 --clear-groups"

/* a user who may not load BPF programs gets one line that says what is needed, exit 1, and
 * nothing left behind */
Test(live_cli, an_unprivileged_user_gets_one_clear_message)
{
	static const struct {
		const char *cmd;
		const char *args;
	} cases[] = {
		{ "selftest", "" },
		{ "record", "-o %s -- true" },
		{ "record", "-a -d 1 -o %s" },
		{ "top", "--stdio -n 1" },
	};
	struct run_result r;
	char args[512], want[256];

	if (run(&r, "command -v setpriv"))
		cr_skip_test("no setpriv (util-linux) to drop root with");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(args, sizeof(args), cases[i].args, profile_path());
		snprintf(want, sizeof(want), "hsbpf %s: need root or CAP_BPF and CAP_PERFMON to load BPF "
			 "programs\n", cases[i].cmd);
		unlink(profile_path());
		run(&r, "cd / && " NOBODY " %s %s %s", hsbpf_bin(), cases[i].cmd, args);
		cr_expect_eq(r.status, 1, "%s %s: status %d", cases[i].cmd, args, r.status);
		cr_expect_str_eq(r.err, want, "%s %s", cases[i].cmd, args);
		cr_expect_str_eq(r.out, "", "%s %s", cases[i].cmd, args);
		cr_expect_neq(access(profile_path(), F_OK), 0, "%s %s left a profile", cases[i].cmd, args);
	}
	/* usage errors come first: they do not depend on who asks */
	run(&r, NOBODY " %s record -d inf -- true", hsbpf_bin());
	cr_expect_eq(r.status, 2, "%s", r.err);
}

/* CAP_BPF and CAP_PERFMON without root are enough, and the check does not stand in the way */
Test(live_cli, cap_bpf_and_cap_perfmon_are_enough)
{
	struct run_result r;
	int last = 0;
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "r");

	if (f) {
		if (fscanf(f, "%d", &last) != 1)
			last = 0;
		fclose(f);
	}
	if (last < 39)
		cr_skip_test("this kernel has no CAP_BPF (5.8 and later do)");
	if (run(&r, "command -v setpriv"))
		cr_skip_test("no setpriv (util-linux) to drop root with");
	run(&r, "cd / && " NOBODY " --inh-caps=+bpf,+perfmon --ambient-caps=+bpf,+perfmon %s selftest",
	    hsbpf_bin());
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "every BPF program loads on this kernel"), "%s", r.out);
}

/* ---- text from the profile on the terminal ---- */

#define HOSTILE_NAME "\033[2J\033]0;X\007"
#define ESCAPED_NAME "\\x1b[2J\\x1b]0;X\\x07"
#define ESCAPED_CUT "\\x1b[2J\\x1b]0;X"	/* what a 16-column cell has room for */

/* output as a failure message may show it: escaped, or the test's own report is the attack */
static const char *shown(const char *text)
{
	static char buf[4 * sizeof(((struct run_result *)0)->out)];

	return str__escape(text, buf, sizeof(buf));
}

static void expect_no_controls(const char *what, const char *text)
{
	cr_expect(!strchr(text, '\033') && !strchr(text, '\007'), "%s: terminal controls in the output",
		  what);
}

/* the name of the process that runs pid, waited for up to ms to become name */
static bool wait_comm(pid_t pid, const char *name, int ms)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	return wait_for_text(path, name, ms);
}

/* a process that names itself with escape sequences: report (text and CSV) and top --stdio
 * show the name escaped, and no ESC or BEL reaches the terminal */
Test(live_cli, hostile_process_names_are_escaped)
{
	/* where the command is a 16-column cell, the escaped name is cut to fit */
	static const struct {
		const char *args;
		const char *want;
	} reports[] = {
		{ "--sort comm", ESCAPED_NAME },
		{ "--sort comm --format csv", ESCAPED_NAME },
		{ "--sort pid,sym", ESCAPED_CUT },
		{ "--sort comm,sym --per-cgroup", ESCAPED_CUT },
	};
	char cmd[1024];
	struct run_result r;
	pid_t pid;

	run(&r, "%s record -o %s -- %s 1", hsbpf_bin(), profile_path(), fixture("escname"));
	cr_assert_eq(r.status, 0, "%s", shown(r.err));
	for (size_t i = 0; i < sizeof(reports) / sizeof(reports[0]); i++) {
		run(&r, "%s report -i %s %s", hsbpf_bin(), profile_path(), reports[i].args);
		cr_assert_eq(r.status, 0, "%s: %s", reports[i].args, shown(r.err));
		expect_no_controls(reports[i].args, r.out);
		expect_no_controls(reports[i].args, r.err);
		cr_expect(strstr(r.out, reports[i].want), "%s: the name is not shown escaped: %s",
			  reports[i].args, shown(r.out));
	}

	snprintf(cmd, sizeof(cmd), "exec %s 20", fixture("escname"));
	pid = spawn(cmd);
	if (!wait_comm(pid, HOSTILE_NAME, 5000))
		reap(pid);
	cr_assert(procfs__alive(pid), "escname did not rename itself");
	run(&r, "%s top --stdio -s pid -p %d -d 0.5 -n 2 --width 120", hsbpf_bin(), pid);
	reap(pid);
	cr_assert_eq(r.status, 0, "%s", shown(r.err));
	expect_no_controls("top --stdio", r.out);
	expect_no_controls("top --stdio", r.err);
	cr_expect(strstr(r.out, ESCAPED_CUT), "top: the name is not shown escaped: %s", shown(r.out));
}

/* ---- hsbpf truth's emulator ---- */

/* ---- top's screen ---- */

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

static const char *pane(const char *format)
{
	static struct run_result r;

	run(&r, "tmux -L %s display -p -t cli '%s'", sock, format);
	r.out[strcspn(r.out, "\n")] = 0;
	return r.out;
}

static void tmux_stop(void)
{
	tmux("kill-server");
	cleanup_tmpdir();
}

/* Ctrl-\ on top's full screen: top ends as on Ctrl-C (exit 0), and the terminal is given back
 * (the default action of SIGQUIT would dump core with the screen still in curses mode) */
Test(live_cli, ctrl_backslash_gives_the_terminal_back, .fini = tmux_stop)
{
	char status[300];
	FILE *f;
	int st = -1;

	snprintf(sock, sizeof(sock), "hsbpf-cli-%d", getpid());
	snprintf(status, sizeof(status), "%s/status", tmpdir());
	tmux("kill-server");
	cr_assert_eq(tmux("new-session -d -s cli -x 100 -y 30 'sleep 600'"), 0, "tmux");
	tmux("set -g remain-on-exit on");
	/* the pane's shell writes top's exit status (tmux 3.3 does not always reap a pane's
	 * process that exits on a signal it handles) */
	cr_assert_eq(tmux("respawn-pane -k -t cli \"%s top -d 1; echo \\$? > %s\"", hsbpf_bin(),
			  status), 0);
	for (double end = now_s() + 10; now_s() < end && strcmp(pane("#{alternate_on}"), "1"); )
		usleep(50000);
	cr_assert_str_eq(pane("#{alternate_on}"), "1", "top did not take the screen");
	tmux("send-keys -t cli 'C-\\'");
	f = wait_for_text(status, "\n", 5000) ? fopen(status, "r") : NULL;
	if (f) {
		if (fscanf(f, "%d", &st) != 1)
			st = -1;
		fclose(f);
	}
	cr_expect_eq(st, 0, "Ctrl-\\ did not end top cleanly (status %d)", st);
	cr_expect_str_eq(pane("#{alternate_on}"), "0", "Ctrl-\\: the terminal was not given back");
}

/* ---- the output file ---- */

/* stdin not a terminal (top < /dev/null): no screen whose key reads return at once and spin a
 * core, but --stdio snapshots on the terminal, at the usual cost */
Test(live_cli, top_without_a_terminal_on_stdin_uses_stdio, .fini = tmux_stop)
{
	struct run_result r;
	char status[300];
	const char *cpu;
	FILE *f;
	int st = -1;

	snprintf(sock, sizeof(sock), "hsbpf-cli-%d", getpid());
	snprintf(status, sizeof(status), "%s/status", tmpdir());
	tmux("kill-server");
	cr_assert_eq(tmux("new-session -d -s cli -x 120 -y 40 'sleep 600'"), 0, "tmux");
	tmux("set -g remain-on-exit on");
	cr_assert_eq(tmux("respawn-pane -k -t cli \"%s top -d 1 -n 3 < /dev/null; echo \\$? > %s\"",
			  hsbpf_bin(), status), 0);
	f = wait_for_text(status, "\n", 20000) ? fopen(status, "r") : NULL;
	if (f) {
		if (fscanf(f, "%d", &st) != 1)
			st = -1;
		fclose(f);
	}
	cr_expect_eq(st, 0, "top < /dev/null: status %d", st);
	/* snapshots stay on the normal screen; the full screen's would have gone with it */
	run(&r, "tmux -L %s capture-pane -p -S - -t cli", sock);
	cpu = strstr(r.out, "samples/s | dropped");
	cr_assert(cpu, "no snapshot on the terminal: %s", shown(r.out));
	cpu = strstr(cpu, "hsbpf ");
	cr_assert(cpu, "%s", shown(r.out));
	cr_expect_lt(strtod(cpu + 6, NULL), 50, "top used %.1f%% of a CPU", strtod(cpu + 6, NULL));
}

/* docs/usage.md's table of perf's options: every row marked yes is run as written (PID and
 * FILE filled in) on a profile with stacks, or as a short recording, and must not be a
 * usage error; so the table cannot promise what the command line refuses */
/* whether word is one of args' words (not inside a path: a temporary folder's random name
 * once had "-a" in it, and '-o FILE' was tried without its command) */
static bool has_word(const char *args, const char *word)
{
	size_t len = strlen(word);

	for (const char *at = args; (at = strstr(at, word)); at += len)
		if ((at == args || at[-1] == ' ') && (!at[len] || at[len] == ' '))
			return true;
	return false;
}

Test(live_cli, perf_table_options_are_accepted, .timeout = 240)
{
	const char *profile = env_path("OUTPUT", ".output",
				       "../tests/fixtures/profiles/v1.3-callpaths-g.hsbpf");
	FILE *f = fopen("docs/usage.md", "re");
	char line[1024], opt[256], args[512], target[128];
	struct run_result r;
	int rows = 0;

	cr_assert(f, "docs/usage.md: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char cmd[16], *tick, *end, *p;
		size_t n = 0;

		/* | command | `option` | yes | ... | */
		if (sscanf(line, "| %15[a-z] | `", cmd) != 1 || !(tick = strchr(line + 2, '`')) ||
		    !(end = strchr(tick + 1, '`')) || strncmp(end + 1, " | yes |", 8))
			continue;
		snprintf(opt, sizeof(opt), "%.*s", (int)(end - tick - 1), tick + 1);
		/* the placeholders */
		for (p = opt; *p && n < sizeof(args) - 64; ) {
			if (!strncmp(p, "PID", 3)) {
				n += snprintf(args + n, sizeof(args) - n, "%d", (int)getpid());
				p += 3;
			} else if (!strncmp(p, "FILE", 4)) {
				n += snprintf(args + n, sizeof(args) - n, "%s/table.out", tmpdir());
				p += 4;
			} else {
				args[n++] = *p++;
			}
		}
		args[n] = 0;
		/* a target of its own, or the command */
		snprintf(target, sizeof(target), "%s", has_word(args, "-a") || has_word(args, "-p") ||
			 has_word(args, "-G") ? "-d 0.2" : "-- true");
		if (!strcmp(cmd, "record"))
			run(&r, "cd %s && timeout -s INT 20 %s record -o %s/t.data %s %s", tmpdir(),
			    hsbpf_bin(), tmpdir(), args, target);
		else if (!strcmp(cmd, "report") || !strcmp(cmd, "script"))
			run(&r, "timeout -s INT 20 %s %s -i %s %s", hsbpf_bin(), cmd, profile, args);
		else if (!strcmp(cmd, "top"))
			run(&r, "timeout -s INT 20 %s top --stdio -n 1 -d 0.2 %s", hsbpf_bin(), args);
		else if (!strcmp(cmd, "stat"))
			run(&r, "timeout -s INT 20 %s stat %s -- true", hsbpf_bin(), args);
		else
			cr_assert_fail("docs/usage.md: a row for '%s', which the test cannot run", cmd);
		cr_expect_neq(r.status, 2, "docs/usage.md says hsbpf %s takes '%s': %s", cmd, opt,
			      r.err);
		rows++;
	}
	fclose(f);
	cr_expect_gt(rows, 40, "docs/usage.md: %d rows of perf's options marked yes", rows);
}

/* perf's habits at report: a perf.data given to any reader is named as one, with the import
 * command (exit 1); -g none keeps the Children column without the graphs, as perf's
 * --children -g none; --header-only prints the header alone */
Test(live_cli, perf_habits_at_report)
{
	const char *profile = env_path("OUTPUT", ".output",
				       "../tests/fixtures/profiles/v1.3-callpaths-g.hsbpf");
	static const char *const readers[] = {
		"report -i %s", "script -i %s", "annotate -i %s main", "flamegraph -i %s -o /dev/null",
		"diff %s %s",
	};
	char path[256], fmt[128];
	struct run_result r;
	FILE *f;

	snprintf(path, sizeof(path), "%s/perf.data", tmpdir());
	f = fopen(path, "we");
	cr_assert(f);
	fwrite("PERFILE2\x68\0\0\0\0\0\0\0", 1, 16, f);
	for (int i = 0; i < 64; i++)
		fputc(0, f);
	fclose(f);
	for (size_t i = 0; i < sizeof(readers) / sizeof(readers[0]); i++) {
		snprintf(fmt, sizeof(fmt), "%s %s", hsbpf_bin(), readers[i]);
		run(&r, fmt, path, path);
		cr_expect_eq(r.status, 1, "%s: status %d", readers[i], r.status);
		cr_expect(strstr(r.err, "is a perf.data file") && strstr(r.err, "hsbpf import"),
			  "%s: %s", readers[i], r.err);
	}
	for (int i = 0; i < 2; i++) {
		run(&r, "%s report -i %s --children %s --limit 3", hsbpf_bin(), profile,
		    i ? "--no-call-graph" : "-g none");
		cr_expect_eq(r.status, 0, "%s", r.err);
		cr_expect(strstr(r.out, "Children"), "no Children column: %s", r.out);
		cr_expect(!strstr(r.out, "---"), "graphs printed: %s", r.out);
	}
	run(&r, "%s report -i %s -g folded,caller --no-children --limit 1", hsbpf_bin(), profile);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "% ") && strstr(r.out, ";"), "no folded chains: %s", r.out);
	run(&r, "%s report -i %s --header-only", hsbpf_bin(), profile);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "# ========\n") == r.out && strstr(r.out, "# event "), "%s", r.out);
	cr_expect(!strstr(r.out, "Samples"), "rows after --header-only: %s", r.out);
}
