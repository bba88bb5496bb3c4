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
