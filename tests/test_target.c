// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* target: pid lists, CPU lists, the gated command. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <sys/wait.h>
#include "target.h"

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

Test(target, cpu_lists)
{
	int *c, n;

	cr_assert_eq(cpus__parse("3,0-1,1", &c, &n), 0);
	cr_expect_eq(n, 3);
	cr_expect_eq(c[0], 0);
	cr_expect_eq(c[1], 1);
	cr_expect_eq(c[2], 3);
	free(c);
	cr_expect_eq(cpus__parse("2-1", &c, &n), -EINVAL);
	cr_expect_eq(cpus__parse("a", &c, &n), -EINVAL);
	cr_expect_eq(cpus__parse("", &c, &n), -EINVAL);
	cr_assert_eq(cpus__online(&c, &n), 0);
	cr_expect_gt(n, 0);
	free(c);
}

Test(target, command_waits_at_the_gate_and_reports_exec_failure)
{
	char *ok[] = { "true", NULL }, *bad[] = { "/nonexistent/program", NULL };
	struct command cmd;
	int st;

	cr_assert_eq(command__spawn(ok, &cmd), 0);
	cr_expect_eq(waitpid(cmd.pid, &st, WNOHANG), 0, "child ran before the gate opened");
	cr_assert_eq(command__start(&cmd, "true"), 0);
	cr_expect_eq(waitpid(cmd.pid, &st, 0), cmd.pid);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0);

	cr_assert_eq(command__spawn(bad, &cmd), 0);
	cr_expect_eq(command__start(&cmd, bad[0]), -ENOENT);
}
