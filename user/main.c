// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf: the command table. Everything else lives in libhsbpf. */
#include <stdio.h>
#include <string.h>
#include "cmds.h"
#include "lib/util.h"

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "record", cmd_record, "sample a command, processes, a cgroup or the machine" },
	{ "stat", cmd_stat, "count events of a command, processes, cgroups or the machine" },
	{ "top", cmd_top, "a live view of where the machine's (or a container's) CPU time goes" },
	{ "agent", cmd_agent, "a continuous profiler: a profile every interval to files or Pyroscope" },
	{ "report", cmd_report, "show where the samples of a profile fell" },
	{ "flamegraph", cmd_flamegraph, "draw a profile (or what changed between two) as a flame graph" },
	{ "diff", cmd_diff, "what changed between two profiles, with the significance of each change" },
	{ "script", cmd_script, "print a profile's stacks as perf script does (flame graph tools read it)" },
	{ "annotate", cmd_annotate, "show one function's instructions, blocks and counts" },
	{ "eval", cmd_eval, "score a profile against the exact truth of its program" },
	{ "experiment", cmd_experiment, "sweep periods and modes over workloads, with plots" },
	{ "import", cmd_import, "turn a perf.data recording (perf record -b too) into a profile" },
	{ "truth", cmd_truth, "count every instruction, block and edge of a run exactly" },
	{ "buildid-cache", cmd_buildid_cache, "list the build-id cache, remove from it, bound its size" },
	{ "selftest", cmd_selftest, "check that every BPF program loads on this kernel" },
};

static int usage(FILE *f, int status)
{
	fprintf(f, "usage: hsbpf [--version] COMMAND [ARGS]\n\n");
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\n'hsbpf COMMAND --help' describes a command.\n");
	return status;
}

static int run_command(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr, 2);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
		return usage(stdout, 0);
	if (!strcmp(argv[1], "--version")) {
		printf("hsbpf %s\n", HSBPF_VERSION);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(cmds); i++) {
		char name[32];

		if (strcmp(argv[1], cmds[i].name))
			continue;
		/* a command names itself by argv[0] in its messages: "hsbpf record: ..." */
		snprintf(name, sizeof(name), "hsbpf %s", cmds[i].name);
		argv[1] = name;
		return cmds[i].fn(argc - 1, argv + 1);
	}
	error("unknown command '%s'", argv[1]);
	return usage(stderr, 2);
}

int main(int argc, char **argv)
{
	int status;

	stdout__open();
	status = run_command(argc, argv);

	/* every command's output is checked here, once: a report that did not reach the disk
	 * is an error, not a success */
	if (stdout__close() && status == 0)
		status = 1;
	return status;
}
