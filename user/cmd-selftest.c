// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf selftest: load every BPF program through the verifier, as the tests do, so that a
 * user can check a machine before recording on it. */
#include <getopt.h>
#include <stdio.h>
#include "caps.h"
#include "cmds.h"
#include "sampler.h"
#include "stat_cgroup.h"

static const char usage_text[] =
	"usage: hsbpf selftest [-v]\n"
	"\n"
	"Load every BPF program, in every configuration record, top and stat use, through\n"
	"this kernel's verifier; nothing is attached. Needs root, or CAP_BPF and CAP_PERFMON.\n"
	"\n"
	"  -v, --verbose   more messages (twice: libbpf debug output)\n";

int cmd_selftest(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'v':
			verbose++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:	/* getopt said what is wrong */
			return usage_hint("hsbpf selftest");
		}
	}
	if (optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		return usage_hint("hsbpf selftest");
	}
	if (caps__check("hsbpf selftest") || sampler__verify_all() || stat_cgroup__verify())
		return 1;
	printf("every BPF program loads on this kernel\n");
	return 0;
}
