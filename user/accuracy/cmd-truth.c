// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf truth: run a program under the reference collector and write its exact counts, or
 * export a truth file as text or JSON. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "cmds.h"
#include "lib/disasm.h"
#include "lib/file_format.h"
#include "lib/options.h"
#include "lib/output.h"
#include "refrun.h"
#include "stepper.h"
#include "truth.h"
#include "truth_export.h"
#include "lib/period.h"
#include "profile/profile.h"
#include "timing.h"

static const struct options_cmd truth_cmd = {
	.name = "hsbpf truth",
	.usage =
	"usage: hsbpf truth [-o FILE] [--plugin PATH] -- COMMAND ARGS...\n"
	"       hsbpf truth --step N [--random --seed S] [--max-insns N] [--from-main] [-o PREFIX]\n"
	"                   -- COMMAND...\n"
	"       hsbpf truth -i FILE [--format text|json] [--what summary,insns,blocks,edges,cct]\n",
	.outro =
	"Ctrl-C, SIGTERM, SIGHUP or SIGQUIT stop the emulator too (a second one kills it), and\n"
	"then no truth file is written.\n",
	.stop_at_arg = true,
};

/* what the options set */
static struct env {
	struct stepper_opts so;
	struct vpmu_opts v;
	const char *output, *input, *plugin, *what, *vprofile;
	bool output_given, json, no_edges, skid_given, timing_help;
} env;

static int output(const struct option_spec *opt, const char *arg)
{
	(void)opt;
	env.output = arg;
	env.output_given = true;
	return 0;
}

static int format(const struct option_spec *opt, const char *arg)
{
	enum output_format fmt;

	(void)opt;
	if (output_format__parse(arg, OUT_TEXT_JSON, &fmt))
		return -EINVAL;
	env.json = fmt == OUT_JSON;
	return 0;
}

static int vpmu(const struct option_spec *opt, const char *arg)
{
	(void)opt;
	if (strcmp(arg, "insns") && strcmp(arg, "branches") && strcmp(arg, "cycles"))
		return fail(-EINVAL, "unknown --vpmu '%s' (known: insns, branches, cycles)", arg);
	env.v.event = arg;
	return 0;
}

static int period_mode(const struct option_spec *opt, const char *arg)
{
	enum period_mode pm;

	(void)opt;
	if (period__parse_mode(arg, &pm))
		return fail(-EINVAL, "invalid period mode '%s'", arg);
	env.v.mode = (pm == PERIOD_PRIME || pm == PERIOD_PRIME_RANDOM) | (period__is_random(pm) << 1);
	return 0;
}

static int skid(const struct option_spec *opt, const char *arg)
{
	u64 num;

	(void)opt;
	if (parse_u64(arg, &num) || num > 1000)
		return fail(-EINVAL, "invalid --skid '%s'", arg);
	env.v.skid = num;
	env.skid_given = true;
	return 0;
}

static int sampling(const struct option_spec *opt, const char *arg)
{
	(void)opt;
	if (strcmp(arg, "exact") && strcmp(arg, "classic") && strcmp(arg, "precise") &&
	    strcmp(arg, "precise-fix") && strcmp(arg, "pdir"))
		return fail(-EINVAL, "unknown --sampling '%s' (known: classic, precise, precise-fix, "
			    "pdir, exact)", arg);
	env.v.sampling = strcmp(arg, "exact") ? arg : NULL;
	return 0;
}

static int timing(const struct option_spec *opt, const char *arg)
{
	struct tm_params tp;
	char terr[256];

	(void)opt;
	if (!strcmp(arg, "help")) {
		env.timing_help = true;
		return 0;
	}
	tm_params__default(&tp);
	if (tm_params__set(&tp, arg, terr, sizeof(terr)))
		return fail(-EINVAL, "--timing: %s", terr);
	env.v.timing = arg;
	return 0;
}

static const struct option_spec truth_opts[] = {
	OPT_CALLBACK('o', "output", NULL, "FILE", "truth file to write (default truth.data)", output),
	OPT_STRING(0, "plugin", &env.plugin, "PATH", "the reference collector (default: found next "
		   "to hsbpf)"),
	OPT_FLAG(0, "no-edges", &env.no_edges, "no edges (faster; rep iterations are then not folded "
		 "in the instruction counts; the calling-context tree still folds them)"),
	OPT_FLAG(0, "no-cct", &env.v.no_cct, "leave out the calling-context tree (shadow call stacks)"),
	OPT_CALLBACK(0, "vpmu", NULL, "EVENT", "also sample as a virtual PMU would: insns, branches "
		     "(taken) or cycles (of the timing model, docs/virtual-pmu.md)", vpmu),
	OPT_U64(0, "period", &env.v.period, "N", "its period in events (default 1000000)", 1,
		PERIOD_MAX, "invalid period '%s' (%llu to %llu)"),
	OPT_CALLBACK(0, "period-mode", NULL, "M", "fixed, prime, random (+ up to 1/8), prime-random",
		     period_mode),
	OPT_CALLBACK(0, "sampling", NULL, "S", "on the timing model's clock: classic (interrupt), "
		     "precise (PEBS, IP+1), precise-fix (PEBS with the LBR IP fix), pdir; or exact "
		     "(no clock: the overflowing instruction, or --skid K after it).\nDefault: classic "
		     "for cycles, exact otherwise", sampling),
	OPT_CALLBACK(0, "timing", NULL, "LIST", "timing model parameters NAME=VALUE,... (--timing "
		     "help lists them)", timing),
	OPT_U32(0, "lbr", &env.v.lbr, "N", "branch records per sample (branches; 16 or 32; default 0)",
		0, 32, "invalid --lbr '%s' (%llu to %llu)"),
	OPT_CALLBACK(0, "skid", NULL, "K", "exact sampling: the sampled IP is K instructions after "
		     "the overflow", skid),
	OPT_STRING(0, "profile", &env.vprofile, "FILE", "where the virtual PMU's profile goes "
		   "(default vpmu.data)"),
	OPT_FLAG('g', NULL, &env.v.stacks, "with --vpmu: each sample carries its exact call stack "
		 "(from the shadow call stacks), a stack profile exact by construction"),
	OPT_U64(0, "step", &env.so.period, "N", "no emulator: single-step the command under ptrace "
		"and every N instructions take a sample: its exact call stack (from the instructions "
		"stepped) and the stacks hsbpf's unwinder finds from its registers, written to "
		"PREFIX.exact, PREFIX.dwarf, PREFIX.fp (-o, default 'step'); score them with hsbpf "
		"eval --exact", 1, PERIOD_MAX, "invalid --step '%s' (%llu to %llu instructions)"),
	OPT_FLAG(0, "random", &env.so.random, "with --step: each period drawn from [1, 2N - 1]"),
	OPT_U64(0, "seed", &env.so.seed, "S", "... from this seed (default fixed)", 0, 0,
		"invalid --seed '%s'"),
	OPT_U64(0, "max-insns", &env.so.max_insns, "N", "with --step: kill the command after N "
		"instructions", 1, 0, "invalid --max-insns '%s'"),
	OPT_FLAG(0, "from-main", &env.so.from_main, "with --step: run freely up to main and step "
		 "from there (the frames above main from the unwinder at main's entry)"),
	OPT_STRING('i', "input", &env.input, "FILE", "export a truth file"),
	OPT_CALLBACK(0, "format", NULL, "FMT", "text (default) or json", format),
	OPT_STRING(0, "what", &env.what, "LIST", "what to export (default: all of "
		   "summary,insns,blocks,edges,cct)"),
	OPT_VERBOSE("more messages"),
	OPT_END(),
};

/* --step: the three profiles of one single-stepped run */
static int run_step(char *const argv[], const struct stepper_opts *so, const char *prefix)
{
	static const char *const ext[] = { "exact", "dwarf", "fp" };
	struct outfile out[3] = { { .fd = -1 }, { .fd = -1 }, { .fd = -1 } };
	struct profile *p[3] = { profile__new(), profile__new(), profile__new() };
	struct stepper_result res;
	char path[3][4096];
	int err = 0, n = 0;

	if (!p[0] || !p[1] || !p[2]) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (n = 0; n < 3; n++) {
		snprintf(path[n], sizeof(path[n]), "%s.%s", prefix, ext[n]);
		if (outfile__open(&out[n], path[n], FILE_FORMAT_HEAD_MAX)) {
			err = -EIO;
			goto cleanup;
		}
	}
	err = stepper__profiles(argv, so, p[0], p[1], p[2], &res);
	for (int i = 0; i < 3 && !err; i++)
		if (profile__write_out(p[i], &out[i]))
			err = -EIO;
	if (err)
		goto cleanup;
	fprintf(stderr, "hsbpf: %" PRIu64 " instructions stepped in %" PRIu64 " thread%s (%" PRIu64
		" signal handlers), %" PRIu64 " samples, %" PRIu64 " objects (%" PRIu64 " without unwind "
		"tables); wrote '%s', '%s', '%s'\n", res.insns, res.threads, res.threads == 1 ? "" : "s",
		res.signals, res.samples, res.objects, res.objects_no_table, path[0], path[1], path[2]);
	if (res.killed)
		warning("'%s' was killed after %" PRIu64 " instructions (--max-insns)", argv[0], res.insns);
	else if (WIFSIGNALED(res.status))
		warning("'%s' was killed by signal %d", argv[0], WTERMSIG(res.status));
	else if (WIFEXITED(res.status) && WEXITSTATUS(res.status))
		warning("'%s' exited with status %d", argv[0], WEXITSTATUS(res.status));
cleanup:
	for (int i = 0; i < n; i++)
		outfile__discard(&out[i]);	/* what was not written: nothing left behind */
	for (int i = 0; i < 3; i++)
		profile__free(p[i]);
	return err ? 1 : 0;
}

int cmd_truth(int argc, char **argv)
{
	struct outfile tout = { .fd = -1 }, vout = { .fd = -1 };
	struct vpmu_opts v;
	struct truth *t = NULL;
	const char *output;
	int err, nr;

	env = (struct env){ .output = "truth.data", .vprofile = "vpmu.data",
			    .v = { .period = 1000000 } };
	nr = options__parse(&truth_cmd, truth_opts, argc, argv);
	if (nr < 0)
		return options__status(nr);
	if (env.timing_help) {
		struct tm_params tp;

		tm_params__default(&tp);
		for (size_t i = 0; i < tm_nr_params; i++)
			printf("%-13s %6d  %s\n", tm_param_table[i].name,
			       *tm_params__field(&tp, &tm_param_table[i]), tm_param_table[i].what);
		return 0;
	}
	v = env.v;
	output = env.output;
	if (env.input) {
		if (nr)
			return fail(2, "-i exports a truth file: no command to run");
		err = truth__read(env.input, &t);
		if (!err)
			err = truth__export(t, env.what, env.json, stdout);
		truth__free(t);
		return err ? (err == -EINVAL && env.what ? 2 : 1) : 0;
	}
	if (!nr) {
		options__usage(&truth_cmd, truth_opts, stderr);
		return fail(2, "nothing to run: give a command after --");
	}
	if (env.so.period)
		return run_step(argv, &env.so, env.output_given ? output : "step");
	if (env.so.random || env.so.seed || env.so.max_insns || env.so.from_main)
		return fail(2, "--random, --seed, --max-insns and --from-main go with --step");
	if (v.event && !strcmp(v.event, "cycles") && !v.sampling)
		v.sampling = "classic";	/* cycles have no exact overflowing instruction to skid from */
	if (env.skid_given && v.sampling)
		return fail(2, "--skid is for exact sampling: with --sampling %s the skid comes from the "
			    "timing model (--timing irq_latency=CYCLES)", v.sampling);
	if ((v.sampling || v.timing) && !v.event)
		return fail(2, "--sampling and --timing need --vpmu");
	if (v.event && v.lbr && v.sampling)
		return fail(2, "--lbr goes with exact sampling of branches");
	if (v.stacks && (!v.event || v.no_cct))
		return fail(2, "-g goes with --vpmu, and needs the calling-context tree (not --no-cct)");
	/* the outputs are opened before the run, which may take minutes: a full disk or a
	 * bad path is told now, and so is a missing capstone (the counts' blocks are its) */
	if (disasm__load())
		return 1;
	if (v.event && file__same(output, env.vprofile))
		return fail(2, "-o and --profile name the same file '%s'", output);
	if (outfile__open(&tout, output, FILE_FORMAT_HEAD_MAX))
		return 1;
	if (v.event && outfile__open(&vout, env.vprofile, FILE_FORMAT_HEAD_MAX)) {
		outfile__discard(&tout);
		return 1;
	}
	if (v.event) {
		v.out = profile__new();
		err = v.out ? refrun__collect_vpmu(argv, env.plugin, &v, &t) : -ENOMEM;
		if (!err && profile__write_out(v.out, &vout))
			err = -EIO;
		if (!err)
			fprintf(stderr, "hsbpf: virtual PMU: %" PRIu64 " samples, %zu branch edges and ranges; "
				"wrote '%s'\n%s%s%s", profile__total_samples(v.out), v.out->nr_lbr, env.vprofile,
				verbose ? "hsbpf: " : "", verbose ? v.out->meta.target : "", verbose ? "\n" : "");
		profile__free(v.out);
	} else {
		v.edges = !env.no_edges;
		err = refrun__collect_vpmu(argv, env.plugin, &v, &t);
	}
	if (!err && truth__write_out(t, &tout))
		err = -EIO;
	outfile__discard(&vout);	/* what was not written: nothing left behind */
	outfile__discard(&tout);
	if (err) {
		truth__free(t);
		return 1;
	}
	fprintf(stderr, "hsbpf: %" PRIu64 " instructions executed (%" PRIu64 " rep iterations folded), "
		"%zu distinct, %zu edges; wrote '%s'\n", t->meta.total_insns, t->meta.rep_iterations,
		t->nr_insns, t->nr_edges, output);
	err = 0;
	if (t->meta.signal) {
		error("'%s' was %s: its counts up to that point were written", argv[0],
		      t->meta.status);
		err = 1;
	} else if (t->meta.exit_code) {
		warning("'%s' %s", argv[0], t->meta.status);
	}
	truth__free(t);
	return err;
}
