// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* target: pid lists, CPU lists, the gated command. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include "record/target.h"

Test(target, pid_lists)
{
	u32 *pids;
	int n;

	cr_assert_eq(target__parse_pids("12,34,5", &pids, &n), 0);
	cr_expect_eq(n, 3);
	cr_expect_eq(pids[0], 12);
	cr_expect_eq(pids[2], 5);
	free(pids);
	static const char *bad[] = { "", "0", "-3", "12,x", "99999999999", "," };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(target__parse_pids(bad[i], &pids, &n), -EINVAL, "'%s'", bad[i]);
}

Test(target, check_pids)
{
	u32 me = getpid(), gone = 999999999;

	cr_expect_eq(target__check_pids(&me, 1), 0);
	cr_expect_eq(target__check_pids(&gone, 1), -ESRCH);
}

Test(target, cpu_lists, .init = cr_redirect_stderr)
{
	static const struct {
		const char *s;
		const char *want;	/* formatted back; NULL: refused */
	} cases[] = {
		{ "3,0-1,1", "0-1,3" },
		{ "0", "0" },
		{ "5", "5" },
		{ "0-3,6", "0-3,6" },
		{ "7,6,5,1", "1,5-7" },
		{ "2-2", "2" },
		{ "010", "10" },		/* decimal, not octal */
		{ "8191", "8191" },
		{ "8192", NULL },		/* beyond any kernel's NR_CPUS */
		{ "0-99999999", NULL },
		{ "99999999999999999999", NULL },
		{ "2-1", NULL },
		{ "a", NULL },
		{ "", NULL },
		{ ",", NULL },
		{ "1,", NULL },
		{ ",1", NULL },
		{ "1,,2", NULL },
		{ "-1", NULL },
		{ "1-", NULL },
		{ "1-2-3", NULL },
		{ " 1", NULL },
		{ "1 ", NULL },
		{ "+1", NULL },
		{ "0x1", NULL },
		{ "1\n", NULL },
	};
	char buf[64];
	int *c, n;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		int err = cpus__parse(cases[i].s, &c, &n);

		if (!cases[i].want) {
			cr_expect_eq(err, -EINVAL, "'%s' taken", cases[i].s);
			cr_expect_null(c);
			continue;
		}
		cr_assert_eq(err, 0, "'%s' refused", cases[i].s);
		cpus__format(c, n, buf, sizeof(buf));
		cr_expect_str_eq(buf, cases[i].want, "'%s'", cases[i].s);
		free(c);
	}
	cr_assert_eq(cpus__online(&c, &n), 0);
	cr_expect_gt(n, 0);
	free(c);
}

/* a CPU that is not there: which one, and whether it does not exist or is offline */
Test(target, cpu_check, .init = cr_redirect_stderr)
{
	const int online[] = { 0, 1, 3 }, present[] = { 0, 1, 2, 3 };
	const int ok[] = { 0, 3 }, offline[] = { 1, 2 }, absent[] = { 0, 5 };

	cr_expect_eq(cpus__check(ok, 2, online, 3, present, 4), 0);
	cr_expect_eq(cpus__check(offline, 2, online, 3, present, 4), -ENODEV);
	cr_expect_eq(cpus__check(absent, 2, online, 3, present, 4), -ENODEV);
	/* no present list: the online one stands for it */
	cr_expect_eq(cpus__check(absent, 2, online, 3, NULL, 0), -ENODEV);
	cr_expect_eq(cpus__check(ok, 2, online, 3, NULL, 0), 0);
	fflush(stderr);
	cr_expect_stderr_eq_str("hsbpf: CPU 2 is offline (the online CPUs are 0-1,3)\n"
				"hsbpf: CPU 5 does not exist (this machine has CPUs 0-3)\n"
				"hsbpf: CPU 5 does not exist (this machine has CPUs 0-1,3)\n");
}

Test(target, command_waits_at_the_gate_and_reports_exec_failure)
{
	char *ok[] = { "true", NULL }, *bad[] = { "/nonexistent/program", NULL };
	struct command cmd;
	int st;

	cr_assert_eq(command__spawn(ok, true, &cmd), 0);
	cr_expect_eq(waitpid(cmd.pid, &st, WNOHANG), 0, "child ran before the gate opened");
	cr_assert_eq(command__start(&cmd, "true"), 0);
	cr_expect_eq(waitpid(cmd.pid, &st, 0), cmd.pid);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	cr_assert_eq(command__spawn(bad, true, &cmd), 0);
	cr_expect_eq(command__start(&cmd, bad[0]), -ENOENT);
}
