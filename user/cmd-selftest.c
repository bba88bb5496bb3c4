// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf selftest: load every BPF program through the verifier, as the tests do, so that a
 * user can check a machine before recording on it. */
#include <stdio.h>
#include "lib/caps.h"
#include "cmds.h"
#include "lib/options.h"
#include "record/sampler.h"
#include "stat/stat_cgroup.h"

static const struct options_cmd selftest_cmd = {
	.name = "hsbpf selftest",
	.usage = "usage: hsbpf selftest [-v]\n",
	.intro =
	"Load every BPF program, in every configuration record, top and stat use, through\n"
	"this kernel's verifier; nothing is attached. Needs root, or CAP_BPF and CAP_PERFMON.\n",
	.no_args = true,
};

static const struct option_spec selftest_opts[] = {
	OPT_VERBOSE("more messages (twice: libbpf debug output)"),
	OPT_END(),
};

int cmd_selftest(int argc, char **argv)
{
	int nr = options__parse(&selftest_cmd, selftest_opts, argc, argv);

	if (nr < 0)
		return options__status(nr);
	if (caps__check("hsbpf selftest") || sampler__verify_all() || stat_cgroup__verify())
		return 1;
	printf("every BPF program loads on this kernel\n");
	return 0;
}
