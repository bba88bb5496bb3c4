// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf script: a profile's stacks in perf script's text, for the tools that read it. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/callchain.h"
#include "cmds.h"
#include "option_groups.h"
#include "profile/profile.h"
#include "report.h"
#include "report/sample_filter.h"
#include "export/script_out.h"
#include "symbols/symbolizer.h"

static const struct options_cmd script_cmd = {
	.name = "hsbpf script",
	.usage =
	"usage: hsbpf script [-i FILE] [--aggregate] [--no-inline] [--no-demangle]\n"
	"                    [--comm COMMS] [--pid PIDS] [--tid TIDS] [--dso DSOS] [--time START,END]\n",
	.intro =
	"Prints the profile's stacks as perf script does, for stackcollapse-perf.pl, speedscope\n"
	"and other readers of its text: a block per sample, \"COMM PID/TID TIME: PERIOD EVENT: \", then\n"
	"\"\\tADDRESS SYM+0xOFF (DSO)\" per frame, the sampled one first, then an empty line.\n",
	.outro =
	"Samples are aggregated in the kernel, so times are made up: each thread's blocks are one\n"
	"mean period apart from the recording's start (in time-bucket order when recorded), so\n"
	"tools that weigh a sample by the time to the next (speedscope) weigh each as one period.\n",
	.no_args = true,
};

static int print_script(const char *input, const struct sample_filter *sf,
			const struct script_opts *o, bool raw_names, bool inl)
{
	struct symbolizer *sy = NULL;
	struct callchain *cc = NULL;
	struct profile *p = NULL;
	bool stacks;
	int err;

	err = report__load(input, sf, raw_names, inl, "", &p, &sy, &stacks);
	if (err)
		goto cleanup;
	if (!stacks)
		warning("'%s' has no stacks (recorded without -g): one frame per sample", input);
	else if (p->stats.stack_keys_full)
		warning("%" PRIu64 " samples are in the flat profile but have no stack: the "
			"stack-sample map was full (raise --map-entries)", p->stats.stack_keys_full);
	cc = stacks ? callchain__new(p, sy) : callchain__new_flat(p, sy);
	if (!cc) {
		err = fail(-ENOMEM, "cannot read '%s': %s", input, strerror(ENOMEM));
		goto cleanup;
	}
	err = script_out__print(cc, sy, o, stdout);
	if (err == -ENOMEM)
		error("cannot print the script: %s", strerror(ENOMEM));
	/* write errors on standard output are said by main */
	else if (err)
		err = 0;
cleanup:
	callchain__free(cc);
	symbolizer__free(sy);
	profile__free(p);
	return err ? 1 : 0;
}

int cmd_script(int argc, char **argv)
{
	const char *input = "hsbpf.data";
	struct sample_filter sf = {};
	struct script_opts o = {};
	bool raw_names = false, inl = true;
	const struct option_spec opts[] = {
		OPT_INPUT(&input),
		OPT_FLAG(0, "aggregate", &o.aggregate, "one block per distinct stack, its period field "
			 "count x period (default: the stack repeated once per sample, with the mean "
			 "period: tools that count blocks read only this form)"),
		OPT_NO_INLINE(&inl, "no frames of inlined functions (by default, from DWARF, each "
			      "function inlined at a frame is a frame \"NAME (inlined)\", as perf "
			      "prints them)"),
		OPT_NO_DEMANGLE(&raw_names),
		OPT_VERBOSE("more messages"),
		OPTIONS_FILTERS(&sf),
		OPT_END(),
	};
	int nr;

	nr = options__parse(&script_cmd, opts, argc, argv);
	if (nr < 0)
		return options__status(nr);
	return print_script(input, &sf, &o, raw_names, inl);
}
