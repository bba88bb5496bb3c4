// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf annotate: one function's instructions with samples, block estimates and exact counts. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "annotate.h"
#include "cmds.h"
#include "debuginfod.h"
#include "disasm.h"
#include "output.h"

static const char usage_text[] =
	"usage: hsbpf annotate SYMBOL|ADDRESS [-i PROFILE] [--truth FILE] [--format text|json]\n"
	"                      [--no-demangle]\n"
	"\n"
	"  SYMBOL             as report shows it (demangled, OBJECT+0xSTART for code of a stripped\n"
	"                     object, a JIT function's name) or as the symbol table has it\n"
	"  ADDRESS            0x..., the function holding this ELF address of a sampled object\n"
	"  -i, --input FILE   profile to read (default hsbpf.data)\n"
	"      --truth FILE   exact counts of the same program (hsbpf truth) beside the samples\n"
	"      --format FMT   text (default) or json\n"
	"      --no-demangle  C++ and Rust symbols as mangled\n"
	"      --debuginfod URLS  fetch missing objects and debug files by build-id (default\n"
	"                     $DEBUGINFOD_URLS), as report does\n"
	"      --buildid-dir DIR  the build-id cache (default $HSBPF_BUILDID_DIR, else\n"
	"                     ~/.cache/hsbpf/buildid)\n";

enum { OPT_DEBUGINFOD = 0x100, OPT_BUILDID_DIR };

int cmd_annotate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "truth", required_argument, NULL, 't' },
		{ "format", required_argument, NULL, 'f' },
		{ "no-demangle", no_argument, NULL, 'N' },
		{ "debuginfod", required_argument, NULL, OPT_DEBUGINFOD },
		{ "buildid-dir", required_argument, NULL, OPT_BUILDID_DIR },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct annotate_opts o = {};
	const char *input = "hsbpf.data", *truth_path = NULL, *debuginfod = NULL;
	struct symbolizer *sy = NULL;
	struct truth *t = NULL;
	struct profile *p = NULL;
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case 't':
			truth_path = optarg;
			break;
		case 'f':
			if (output_format__parse(optarg, OUT_TEXT_JSON, &o.format))
				return 2;
			break;
		case 'N':
			o.raw_names = true;
			break;
		case OPT_DEBUGINFOD:
			debuginfod = optarg;
			break;
		case OPT_BUILDID_DIR:
			setenv("HSBPF_BUILDID_DIR", optarg, 1);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:	/* getopt said what is wrong */
			return usage_hint("hsbpf annotate");
		}
	}
	if (optind != argc - 1) {
		fputs(usage_text, stderr);
		return 2;
	}
	o.symbol = argv[optind];
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
