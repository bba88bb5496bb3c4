// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf eval: score a profile against the exact truth of the same program. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmds.h"
#include "output.h"
#include "eval.h"
#include "stack_eval.h"
#include "stack_check.h"

static const char usage_text[] =
	"usage: hsbpf eval -i PROFILE --truth TRUTH [--object PATH]... [--per-object]\n"
	"                  [--format text|json]\n"
	"       hsbpf eval -i PROFILE --truth TRUTH --stacks [--top N] [--cycles FILE]\n"
	"                  [--fold-parts] [--format text|json]\n"
	"       hsbpf eval -i PROFILE --exact EXACT [--format text|json]\n"
	"\n"
	"  -i, --input FILE   profile to score (default hsbpf.data)\n"
	"      --truth FILE   the exact counts of the same program (hsbpf truth)\n"
	"      --object PATH  score these objects together (default: the program itself)\n"
	"      --per-object   score every object with samples, each on its own\n"
	"      --stacks       score the call stacks against the truth's calling-context tree:\n"
	"                     complete stacks, inclusive-time error, caller-split error\n"
	"      --top N        functions scored with --stacks (default 10)\n"
	"      --cycles FILE  with --stacks: also score against the timing model's cycles, the\n"
	"                     samples of hsbpf truth --vpmu cycles -g (a reference for time\n"
	"                     samplers such as cpu-clock; docs/accuracy.md)\n"
	"      --fold-parts   with --stacks: count the parts GCC split off a function (X.cold,\n"
	"                     X.part.N) as the function X itself\n"
	"      --exact FILE   per-sample correctness of the profile's stacks against the exact\n"
	"                     ones of the same hsbpf truth --step run (PREFIX.exact): the share\n"
	"                     equal, and the others by kind and location\n"
	"      --show N       with --exact: print the first N unequal samples' stacks\n"
	"      --format FMT   text (default) or json\n";

int cmd_eval(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "truth", required_argument, NULL, 't' },
		{ "per-object", no_argument, NULL, 'O' },
		{ "object", required_argument, NULL, 'b' },
		{ "format", required_argument, NULL, 'f' },
		{ "stacks", no_argument, NULL, 'S' },
		{ "top", required_argument, NULL, 'T' },
		{ "fold-parts", no_argument, NULL, 'P' },
		{ "cycles", required_argument, NULL, 'C' },
		{ "exact", required_argument, NULL, 'E' },
		{ "show", required_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	const char *input = "hsbpf.data", *truth_path = NULL, *exact_path = NULL, *cycles_path = NULL;
	bool per_object = false, json = false, stacks = false, fold = false;
	enum output_format fmt;
	u64 top = 10, show = 0;
	struct eval_result *res = NULL;
	struct symbolizer *sy = NULL;
	struct profile *p = NULL;
	struct truth *t = NULL;
	const char *objects[16];
	size_t nr = 0, nr_objects = 0;
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
		case 'O':
			per_object = true;
			break;
		case 'b':
			if (nr_objects == 16)
				return fail(2, "at most 16 --object");
			objects[nr_objects++] = optarg;
			break;
		case 'f':
			if (output_format__parse(optarg, OUT_TEXT_JSON, &fmt))
				return 2;
			json = fmt == OUT_JSON;
			break;
		case 'S':
			stacks = true;
			break;
		case 'P':
			fold = true;
			break;
		case 'C':
			cycles_path = optarg;
			break;
		case 'E':
			exact_path = optarg;
			break;
		case 'W':
			if (parse_u64(optarg, &show) || show > UINT32_MAX)
				return fail(2, "invalid --show '%s'", optarg);
			break;
		case 'T':
			if (parse_u64(optarg, &top) || !top || top > 10000)
				return fail(2, "invalid --top '%s' (1 to 10000)", optarg);
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:	/* getopt said what is wrong */
			return usage_hint("hsbpf eval");
		}
	}
	if (exact_path && truth_path)
		return fail(2, "--exact and --truth score in different ways: give one");
	if (exact_path && optind == argc) {
		struct profile *e = NULL;
		struct stack_check sc;

		err = profile__read(input, &p);
		if (!err)
			err = profile__read(exact_path, &e);
		if (!err)
			/* the unequal stacks beside json go to stderr: stdout stays one object */
			err = stack_check__profiles_show(e, p, &sc, show, json ? stderr : stdout);
		if (!err)
			stack_check__print(&sc, json, stdout);
		profile__free(e);
		profile__free(p);
		return err ? 1 : 0;
	}
	if ((fold || cycles_path) && !stacks)
		return fail(2, "--%s scores functions of call stacks: give --stacks too",
			    fold ? "fold-parts" : "cycles");
	if (!truth_path || optind < argc) {
		fputs(usage_text, stderr);
		return 2;
	}
	err = profile__read(input, &p);
	if (!err)
		err = truth__read(truth_path, &t);
	if (err)
		goto cleanup;
	if (stacks) {
		struct stack_eval se;
		struct profile *cyc = NULL;

		if (cycles_path)
			err = profile__read(cycles_path, &cyc);
		if (!err)
			err = stack_eval__profile(p, t, cyc, top, fold ? STACK_EVAL_FOLD_PARTS : 0, &se);
		if (!err) {
			stack_eval__print(&se, json, stdout);
			stack_eval__release(&se);
		}
		profile__free(cyc);
		goto cleanup;
	}
	sy = symbolizer__new(p);
	res = calloc(t->nr_objects + 1, sizeof(*res));
	if (!sy || !res) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (per_object) {
		for (u32 o = 0; o < t->nr_objects; o++) {
			err = eval__object(p, sy, t, o, &res[nr]);
			if (err == -ENODATA)
				continue;	/* no samples there */
			if (err)
				goto cleanup;
			nr++;
		}
		err = 0;
	} else {
		u32 objs[16];
		size_t n = 0;

		if (!nr_objects)
			objects[nr_objects++] = t->meta.program;
		for (size_t i = 0; i < nr_objects; i++) {
			objs[n] = truth__object(t, objects[i]);
			if (objs[n++] == TRUTH_NO_OBJECT) {
				err = fail(-ENOENT, "the truth file has no counts for '%s'", objects[i]);
				goto cleanup;
			}
		}
		err = eval__objects(p, sy, t, objs, n, &res[0]);
		if (err == -ENODATA)
			error("no sample of '%s' fell in '%s': nothing to score", input, t->meta.program);
		if (err)
			goto cleanup;
		nr = 1;
	}
	eval__print(res, nr, json, stdout);
cleanup:
	free(res);
	symbolizer__free(sy);
	truth__free(t);
	profile__free(p);
	return err ? 1 : 0;
}
