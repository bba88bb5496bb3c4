// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf annotate: one function's instructions with samples, block estimates and exact counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/annotate.h"
#include "cmds.h"
#include "symbols/debuginfod.h"
#include "lib/disasm.h"
#include "lib/output.h"
#include "option_groups.h"

static const struct options_cmd annotate_cmd = {
	.name = "hsbpf annotate",
	.usage =
	"usage: hsbpf annotate SYMBOL|ADDRESS [-i PROFILE] [--truth FILE] [--format text|json]\n"
	"                      [--no-demangle]\n",
	.intro =
	"  SYMBOL             as report shows it (demangled, OBJECT+0xSTART for code of a stripped\n"
	"                     object, a JIT function's name) or as the symbol table has it\n"
	"  ADDRESS            0x..., the function holding this ELF address of a sampled object\n",
};

static int format(const struct option_spec *opt, const char *arg)
{
	return output_format__parse(arg, OUT_TEXT_JSON, opt->value) ? -EINVAL : 0;
}

int cmd_annotate(int argc, char **argv)
{
	struct annotate_opts o = {};
	const char *input = "hsbpf.data", *truth_path = NULL, *debuginfod = NULL;
	const struct option_spec opts[] = {
		OPT_INPUT(&input),
		OPT_STRING(0, "truth", &truth_path, "FILE", "exact counts of the same program (hsbpf "
			   "truth) beside the samples"),
		OPT_CALLBACK(0, "format", &o.format, "FMT", "text (default) or json", format),
		OPT_NO_DEMANGLE(&o.raw_names),
		OPTIONS_DEBUGINFOD(&debuginfod),
		OPT_END(),
	};
	struct symbolizer *sy = NULL;
	struct truth *t = NULL;
	struct profile *p = NULL;
	int nr, err;

	nr = options__parse(&annotate_cmd, opts, argc, argv);
	if (nr < 0)
		return options__status(nr);
	if (nr != 1) {
		options__usage(&annotate_cmd, opts, stderr);
		return 2;
	}
	o.symbol = argv[0];
	/* blocks and listings are capstone's: without it, say so before anything else */
	err = disasm__load();
	if (!err)
		err = debuginfod__setup(debuginfod);
	if (!err)
		err = profile__read(input, &p);
	if (!err && truth_path)
		err = truth__read(truth_path, &t);
	if (err)
		goto cleanup;
	o.truth = t;
	sy = symbolizer__new(p);
	if (!sy) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (o.raw_names)
		symbolizer__no_demangle(sy);
	err = annotate__function(p, sy, &o, stdout);
cleanup:
	symbolizer__free(sy);
	truth__free(t);
	profile__free(p);
	debuginfod__end();
	return err ? 1 : 0;
}
