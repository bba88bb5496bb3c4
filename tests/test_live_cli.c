// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The command line as a hostile or unlucky user meets it: every subcommand's --help and
 * option errors, and what record does when its terminal closes, when it is killed, when its
 * command will not die, when it is given nonsense, or when it is not root. */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"

TestSuite(live_cli, .fini = cleanup_tmpdir, .timeout = 60);

static const char *const commands[] = {
	"record", "top", "report", "annotate", "eval", "experiment", "import", "truth", "selftest",
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

static const char *out_path(void)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "%s/p.data", tmpdir());
	return buf;
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
		unlink(out_path());
		run(&r, "cd %s && %s %s", tmpdir(), hsbpf_bin(), cases[i].args);
		cr_expect_eq(r.status, 2, "'%s': status %d: %s", cases[i].args, r.status, r.err);
		cr_expect(strstr(r.err, cases[i].msg), "'%s': %s", cases[i].args, r.err);
		cr_expect_neq(access(out_path(), F_OK), 0, "'%s' left a profile", cases[i].args);
	}
	/* the longest duration taken still leaves the deadline ahead: the command is recorded */
	unlink(out_path());
	run(&r, "%s record -d 31536000 -o %s -- %s 0.3", hsbpf_bin(), out_path(), fixture("hot7030"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(profile__read(out_path(), &p), 0);
	cr_expect_gt(profile__total_samples(p), 100);
	profile__free(p);
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
		unlink(out_path());
		run(&r, "%s record -o %s -C '%s' -- true", hsbpf_bin(), out_path(), cases[i].cpus);
		cr_expect_eq(r.status, cases[i].status, "-C '%s': status %d: %s", cases[i].cpus, r.status,
			     r.err);
		cr_expect(strstr(r.err, cases[i].msg), "-C '%s': %s", cases[i].cpus, r.err);
		cr_expect(!strstr(r.err, "sideband"), "-C '%s': %s", cases[i].cpus, r.err);
		cr_expect_neq(access(out_path(), F_OK), 0, "-C '%s' left a profile", cases[i].cpus);
	}
	/* the online CPUs themselves are taken */
	run(&r, "%s record -o %s -C 0 -- true", hsbpf_bin(), out_path());
	cr_expect_eq(r.status, 0, "%s", r.err);
}
