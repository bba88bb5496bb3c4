// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* caps: which capability sets may trace. */
#include <criterion/criterion.h>
#include <linux/capability.h>
#include "lib/caps.h"

#define BIT(c) (1ull << (c))

Test(caps, can_trace)
{
	static const struct {
		u64 set;
		bool ok;
	} cases[] = {
		{ 0, false },
		{ BIT(CAP_SYS_ADMIN), true },		/* root, and kernels before 5.8 */
		{ BIT(38) | BIT(39), true },		/* CAP_PERFMON and CAP_BPF */
		{ BIT(39), false },			/* CAP_BPF alone: no perf events */
		{ BIT(38), false },			/* CAP_PERFMON alone: no BPF */
		{ BIT(CAP_NET_ADMIN) | BIT(39), false },	/* networking programs only */
		{ BIT(CAP_SYS_PTRACE) | BIT(CAP_DAC_OVERRIDE), false },
		{ ~0ull, true },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		cr_expect_eq(caps__can_trace(cases[i].set), cases[i].ok, "set %#llx",
			     (unsigned long long)cases[i].set);
}

Test(caps, effective_set_is_read)
{
	u64 set = 0;

	cr_assert_eq(caps__effective(&set), 0);
	/* the suites run as root: the live ones could not run otherwise */
	cr_expect(caps__can_trace(set), "effective set %#llx", (unsigned long long)set);
}
