// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf eval: score a profile against the exact truth of the same program. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmds.h"
#include "lib/output.h"
#include "lib/options.h"
#include "eval.h"
#include "stack_eval.h"
#include "stack_check.h"

static const struct options_cmd eval_cmd = {
	.name = "hsbpf eval",
	.usage =
	"usage: hsbpf eval -i PROFILE --truth TRUTH [--object PATH]... [--per-object]\n"
	"                  [--format text|json]\n"
	"       hsbpf eval -i PROFILE --truth TRUTH --stacks [--top N] [--cycles FILE]\n"
	"                  [--fold-parts] [--format text|json]\n"
	"       hsbpf eval -i PROFILE --exact EXACT [--format text|json]\n",
	.no_args = true,
};

struct objects {
	const char *path[16];
	size_t nr;
};

static int object(const struct option_spec *opt, const char *arg)
{
	struct objects *o = opt->value;

	if (o->nr == 16)
		return fail(-EINVAL, "at most 16 --object");
	o->path[o->nr++] = arg;
	return 0;
}

static int format(const struct option_spec *opt, const char *arg)
{
	enum output_format fmt;

	if (output_format__parse(arg, OUT_TEXT_JSON, &fmt))
		return -EINVAL;
	*(bool *)opt->value = fmt == OUT_JSON;
	return 0;
}

int cmd_eval(int argc, char **argv)
{
	const char *input = "hsbpf.data", *truth_path = NULL, *exact_path = NULL, *cycles_path = NULL;
	bool per_object = false, json = false, stacks = false, fold = false;
	u64 top = 10, show = 0;
	struct objects objs_given = {};
	const struct option_spec opts[] = {
		OPT_STRING('i', "input", &input, "FILE", "profile to score (default hsbpf.data)"),
		OPT_STRING(0, "truth", &truth_path, "FILE", "the exact counts of the same program "
			   "(hsbpf truth)"),
		OPT_CALLBACK(0, "object", &objs_given, "PATH", "score these objects together (default: "
			     "the program itself)", object),
		OPT_FLAG(0, "per-object", &per_object, "score every object with samples, each on its own"),
		OPT_FLAG(0, "stacks", &stacks, "score the call stacks against the truth's "
			 "calling-context tree: complete stacks, inclusive-time error, caller-split error"),
		OPT_U64(0, "top", &top, "N", "functions scored with --stacks (default 10)", 1, 10000,
			NULL),
		OPT_STRING(0, "cycles", &cycles_path, "FILE", "with --stacks: also score against the "
			   "timing model's cycles, the samples of hsbpf truth --vpmu cycles -g (a "
			   "reference for time samplers such as cpu-clock; docs/accuracy.md)"),
		OPT_FLAG(0, "fold-parts", &fold, "with --stacks: count the parts GCC split off a "
			 "function (X.cold, X.part.N) as the function X itself"),
		OPT_STRING(0, "exact", &exact_path, "FILE", "per-sample correctness of the profile's "
			   "stacks against the exact ones of the same hsbpf truth --step run "
			   "(PREFIX.exact): the share equal, and the others by kind and location"),
		OPT_U64(0, "show", &show, "N", "with --exact: print the first N unequal samples' stacks",
			0, UINT32_MAX, "invalid --show '%s'"),
		OPT_CALLBACK(0, "format", &json, "FMT", "text (default) or json", format),
		OPT_END(),
	};
	struct eval_result *res = NULL;
	struct symbolizer *sy = NULL;
	struct profile *p = NULL;
	struct truth *t = NULL;
	const char **objects = objs_given.path;
	size_t nr = 0, nr_objects;
	int err;

	err = options__parse(&eval_cmd, opts, argc, argv);
	if (err < 0)
		return options__status(err);
	nr_objects = objs_given.nr;
	if (exact_path && truth_path)
		return fail(2, "--exact and --truth score in different ways: give one");
	if (exact_path) {
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
	if (!truth_path) {
		options__usage(&eval_cmd, opts, stderr);
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
