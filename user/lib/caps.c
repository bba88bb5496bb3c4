// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Privileges: the capability check that record, top and selftest make before they open
 * anything; read with capget, so no libcap. */
#include <linux/capability.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "lib/caps.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

int caps__effective(u64 *set)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	*set = (u64)data[1].effective << 32 | data[0].effective;
	return 0;
}

bool caps__can_trace(u64 set)
{
	return (set & 1ull << CAP_SYS_ADMIN) ||
	       ((set & 1ull << CAP_BPF) && (set & 1ull << CAP_PERFMON));
}

int caps__check(const char *cmd)
{
	u64 set;

	/* capget failing is no verdict: let the kernel say at load time */
	if (caps__effective(&set) || caps__can_trace(set))
		return 0;
	fprintf(stderr, "%s: need root or CAP_BPF and CAP_PERFMON to load BPF programs\n", cmd);
	return -EPERM;
}
