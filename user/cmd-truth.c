// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf truth: run a program under the reference collector and write its exact counts, or
 * export a truth file as text or JSON. */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cmds.h"
#include "json_writer.h"
#include "refrun.h"
#include "truth.h"
#include "truth_export.h"

static const char usage_text[] =
	"usage: hsbpf truth [-o FILE] [--plugin PATH] -- COMMAND ARGS...\n"
	"       hsbpf truth -i FILE [--format text|json] [--what summary,insns,blocks,edges]\n"
	"\n"
	"  -o, --output FILE    truth file to write (default truth.data)\n"
	"      --plugin PATH    the reference collector (default: found next to hsbpf)\n"
	"      --no-edges       count blocks only (faster; rep iterations are then not folded)\n"
	"  -i, --input FILE     export a truth file\n"
	"      --format FMT     text (default) or json\n"
	"      --what LIST      what to export (default: all of summary,insns,blocks,edges)\n"
	"  -v, --verbose        more messages\n";

int cmd_truth(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "input", required_argument, NULL, 'i' },
		{ "plugin", required_argument, NULL, 'P' },
		{ "no-edges", no_argument, NULL, 'E' },
		{ "format", required_argument, NULL, 'f' },
		{ "what", required_argument, NULL, 'w' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *output = "truth.data", *input = NULL, *plugin = NULL, *what = NULL;
	bool json = false, edges = true;
	struct truth *t = NULL;
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:i:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'i':
			input = optarg;
			break;
		case 'P':
			plugin = optarg;
			break;
		case 'f':
			if (format__text_or_json(optarg, &json))
				return 2;
			break;
		case 'w':
			what = optarg;
			break;
		case 'E':
			edges = false;
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
	if (input) {
		if (optind < argc)
			return fail(2, "-i exports a truth file: no command to run");
		err = truth__read(input, &t);
		if (!err)
			err = truth__export(t, what, json, stdout);
		truth__free(t);
		return err ? (err == -EINVAL && what ? 2 : 1) : 0;
	}
	if (optind >= argc) {
		fputs(usage_text, stderr);
		return fail(2, "nothing to run: give a command after --");
	}
	err = refrun__collect(argv + optind, plugin, edges, &t);
	if (err)
		return 1;
	if (truth__write(t, output)) {
		truth__free(t);
		return 1;
	}
	fprintf(stderr, "hsbpf: %" PRIu64 " instructions executed (%" PRIu64 " rep iterations folded), "
		"%zu distinct, %zu edges; wrote '%s'\n", t->meta.total_insns, t->meta.rep_iterations,
		t->nr_insns, t->nr_edges, output);
	err = 0;
	if (t->meta.signal) {
		error("'%s' was %s: its counts up to that point were written", argv[optind],
		      t->meta.status);
		err = 1;
	} else if (t->meta.exit_code) {
		warning("'%s' %s", argv[optind], t->meta.status);
	}
	truth__free(t);
	return err;
}
