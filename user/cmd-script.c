// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf script: a profile's stacks in perf script's text, for the tools that read it. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "callchain.h"
#include "cmds.h"
#include "profile.h"
#include "sample_filter.h"
#include "script_out.h"
#include "symbolizer.h"

static const char usage_text[] =
	"usage: hsbpf script [-i FILE] [--aggregate] [--no-inline] [--no-demangle]\n"
	"                    [--comm COMMS] [--pid PIDS] [--tid TIDS] [--dso DSOS] [--time START,END]\n"
	"\n"
	"Prints the profile's stacks as perf script does, for stackcollapse-perf.pl, speedscope\n"
	"and other readers of its text: a block per sample, \"COMM PID/TID TIME: PERIOD EVENT: \", then\n"
	"\"\\tADDRESS SYM+0xOFF (DSO)\" per frame, the sampled one first, then an empty line.\n"
	"\n"
	"  -i, --input FILE     profile to read (default hsbpf.data)\n"
	"      --aggregate      one block per distinct stack, its period field count x period\n"
	"                       (default: the stack repeated once per sample, with the mean\n"
	"                       period: tools that count blocks read only this form)\n"
	"      --no-inline      no frames of inlined functions (by default, from DWARF, each\n"
	"                       function inlined at a frame is a frame \"NAME (inlined)\", as perf\n"
	"                       prints them)\n"
	"      --no-demangle    C++ and Rust names as they are mangled\n"
	"  Filters (comma-separated lists), as report's:\n"
	"      --comm COMMS  --pid PIDS  --tid TIDS  --dso DSOS  --time START,END (seconds)\n"
	"  -v, --verbose        more messages\n"
	"\n"
	"Samples are aggregated in the kernel, so times are made up: each thread's blocks are one\n"
	"mean period apart from the recording's start (in time-bucket order when recorded), so\n"
	"tools that weigh a sample by the time to the next (speedscope) weigh each as one period.\n";

static int print_script(const char *input, const struct sample_filter *sf,
			const struct script_opts *o, bool raw_names, bool inl)
{
	struct symbolizer *sy = NULL;
	struct callchain *cc = NULL;
	struct profile *p = NULL;
	u64 filtered = 0;
	bool stacks;
	int err;

	err = profile__read(input, &p);
	if (err)
		return 1;
	if (!profile__total_samples(p) && !p->nr_stack_samples) {
		err = fail(-ENODATA, "'%s' has no samples", input);
		goto cleanup;
	}
	sy = symbolizer__new(p);
	if (!sy) {
		err = fail(-ENOMEM, "cannot read '%s': %s", input, strerror(ENOMEM));
		goto cleanup;
	}
	if (raw_names)
		symbolizer__no_demangle(sy);
	if (inl)
		symbolizer__want_inline(sy);
	symbolizer__skip_lines(sy);
	/* whether it has stacks, before the filters leave none */
	stacks = p->nr_stack_samples > 0;
	err = sample_filter__apply(sf, p, sy, &filtered);
	if (err)
		goto cleanup;
	if (filtered)
		debug("the filters left out %" PRIu64 " samples", filtered);
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

enum { OPT_AGGREGATE = 0x100, OPT_NO_INLINE, OPT_NO_DEMANGLE, OPT_COMM, OPT_PID, OPT_TID, OPT_DSO,
       OPT_TIME };

int cmd_script(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "aggregate", no_argument, NULL, OPT_AGGREGATE },
		{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
		{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "tid", required_argument, NULL, OPT_TID },
		{ "dso", required_argument, NULL, OPT_DSO },
		{ "time", required_argument, NULL, OPT_TIME },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *input = "hsbpf.data";
	struct sample_filter sf = {};
	struct script_opts o = {};
	bool raw_names = false, inl = true;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case OPT_AGGREGATE:
			o.aggregate = true;
			break;
		case OPT_NO_INLINE:
			inl = false;
			break;
		case OPT_NO_DEMANGLE:
			raw_names = true;
			break;
		case OPT_COMM:
			sf.comms = optarg;
			break;
		case OPT_PID:
			sf.pids = optarg;
			break;
		case OPT_TID:
			sf.tids = optarg;
			break;
		case OPT_DSO:
			sf.dsos = optarg;
			break;
		case OPT_TIME:
			if (sample_filter__parse_time(&sf, optarg))
				return 2;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if (optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		fputs(usage_text, stderr);
		return 2;
	}
	return print_script(input, &sf, &o, raw_names, inl);
}
