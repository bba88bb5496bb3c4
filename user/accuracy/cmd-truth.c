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
#include <sys/wait.h>
#include "cmds.h"
#include "disasm.h"
#include "file_format.h"
#include "refrun.h"
#include "stepper.h"
#include "truth.h"
#include "truth_export.h"
#include "period.h"
#include "profile.h"
#include "timing.h"

static const char usage_text[] =
	"usage: hsbpf truth [-o FILE] [--plugin PATH] -- COMMAND ARGS...\n"
	"       hsbpf truth --step N [--random --seed S] [--max-insns N] [--from-main] [-o PREFIX]\n"
	"                   -- COMMAND...\n"
	"       hsbpf truth -i FILE [--format text|json] [--what summary,insns,blocks,edges,cct]\n"
	"\n"
	"  -o, --output FILE    truth file to write (default truth.data)\n"
	"      --plugin PATH    the reference collector (default: found next to hsbpf)\n"
	"      --no-edges       no edges (faster; rep iterations are then not folded in the\n"
	"                       instruction counts; the calling-context tree still folds them)\n"
	"      --no-cct         leave out the calling-context tree (shadow call stacks)\n"
	"      --vpmu EVENT     also sample as a virtual PMU would: insns, branches (taken) or\n"
	"                       cycles (of the timing model, docs/virtual-pmu.md)\n"
	"      --period N       its period in events (default 1000000)\n"
	"      --period-mode M  fixed, prime, random (+ up to 1/8), prime-random\n"
	"      --sampling S     on the timing model's clock: classic (interrupt), precise (PEBS,\n"
	"                       IP+1), precise-fix (PEBS with the LBR IP fix), pdir; or exact\n"
	"                       (no clock: the overflowing instruction, or --skid K after it).\n"
	"                       Default: classic for cycles, exact otherwise\n"
	"      --timing LIST    timing model parameters NAME=VALUE,... (--timing help lists them)\n"
	"      --lbr N          branch records per sample (branches; 16 or 32; default 0)\n"
	"      --skid K         exact sampling: the sampled IP is K instructions after the overflow\n"
	"      --profile FILE   where the virtual PMU's profile goes (default vpmu.data)\n"
	"  -g                   with --vpmu: each sample carries its exact call stack (from the\n"
	"                       shadow call stacks), a stack profile exact by construction\n"
	"      --step N         no emulator: single-step the command under ptrace and every N\n"
	"                       instructions take a sample: its exact call stack (from the\n"
	"                       instructions stepped) and the stacks hsbpf's unwinder finds from\n"
	"                       its registers, written to PREFIX.exact, PREFIX.dwarf, PREFIX.fp\n"
	"                       (-o, default 'step'); score them with hsbpf eval --exact\n"
	"      --random         with --step: each period drawn from [1, 2N - 1]\n"
	"      --seed S         ... from this seed (default fixed)\n"
	"      --max-insns N    with --step: kill the command after N instructions\n"
	"      --from-main      with --step: run freely up to main and step from there (the\n"
	"                       frames above main from the unwinder at main's entry)\n"
	"  -i, --input FILE     export a truth file\n"
	"      --format FMT     text (default) or json\n"
	"      --what LIST      what to export (default: all of summary,insns,blocks,edges,cct)\n"
	"  -v, --verbose        more messages\n"
	"\n"
	"Ctrl-C, SIGTERM, SIGHUP or SIGQUIT stop the emulator too (a second one kills it), and\n"
	"then no truth file is written.\n";

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
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "input", required_argument, NULL, 'i' },
		{ "plugin", required_argument, NULL, 'P' },
		{ "no-edges", no_argument, NULL, 'E' },
		{ "no-cct", no_argument, NULL, 'C' },
		{ "vpmu", required_argument, NULL, 'V' },
		{ "period", required_argument, NULL, 'N' },
		{ "period-mode", required_argument, NULL, 'M' },
		{ "lbr", required_argument, NULL, 'L' },
		{ "skid", required_argument, NULL, 'K' },
		{ "sampling", required_argument, NULL, 'S' },
		{ "timing", required_argument, NULL, 'T' },
		{ "profile", required_argument, NULL, 'R' },
		{ "format", required_argument, NULL, 'f' },
		{ "what", required_argument, NULL, 'w' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "step", required_argument, NULL, 1 },
		{ "random", no_argument, NULL, 2 },
		{ "seed", required_argument, NULL, 3 },
		{ "max-insns", required_argument, NULL, 4 },
		{ "from-main", no_argument, NULL, 5 },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct stepper_opts so = { 0 };
	bool output_given = false;
	const char *output = "truth.data", *input = NULL, *plugin = NULL, *what = NULL;
	bool json = false, edges = true;
	enum output_format fmt;
	struct vpmu_opts v = { .period = 1000000 };
	const char *vprofile = "vpmu.data";
	enum period_mode pm;
	struct tm_params tp;
	char terr[256];
	bool skid_given = false;
	u64 num;
	struct outfile tout = { .fd = -1 }, vout = { .fd = -1 };
	struct truth *t = NULL;
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:i:vhg", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			output_given = true;
			break;
		case 1:
			if (parse_u64(optarg, &num) || !num || num > PERIOD_MAX)
				return fail(2, "invalid --step '%s' (1 to %llu instructions)", optarg, PERIOD_MAX);
			so.period = num;
			break;
		case 2:
			so.random = true;
			break;
		case 3:
			if (parse_u64(optarg, &so.seed))
				return fail(2, "invalid --seed '%s'", optarg);
			break;
		case 5:
			so.from_main = true;
			break;
		case 4:
			if (parse_u64(optarg, &so.max_insns) || !so.max_insns)
				return fail(2, "invalid --max-insns '%s'", optarg);
			break;
		case 'i':
			input = optarg;
			break;
		case 'P':
			plugin = optarg;
			break;
		case 'f':
			if (output_format__parse(optarg, OUT_TEXT_JSON, &fmt))
				return 2;
			json = fmt == OUT_JSON;
			break;
		case 'w':
			what = optarg;
			break;
		case 'E':
			edges = false;
			break;
		case 'C':
			v.no_cct = true;
			break;
		case 'g':
			v.stacks = true;
			break;
		case 'V':
			if (strcmp(optarg, "insns") && strcmp(optarg, "branches") && strcmp(optarg, "cycles"))
				return fail(2, "unknown --vpmu '%s' (known: insns, branches, cycles)", optarg);
			v.event = optarg;
			break;
		case 'N':
			if (parse_u64(optarg, &num) || !num || num > PERIOD_MAX)
				return fail(2, "invalid period '%s' (1 to %llu)", optarg, PERIOD_MAX);
			v.period = num;
			break;
		case 'M':
			if (period__parse_mode(optarg, &pm))
				return fail(2, "invalid period mode '%s'", optarg);
			v.mode = (pm == PERIOD_PRIME || pm == PERIOD_PRIME_RANDOM) | (period__is_random(pm) << 1);
			break;
		case 'L':
			if (parse_u64(optarg, &num) || num > 32)
				return fail(2, "invalid --lbr '%s' (0 to 32)", optarg);
			v.lbr = num;
			break;
		case 'R':
			vprofile = optarg;
			break;
		case 'K':
			if (parse_u64(optarg, &num) || num > 1000)
				return fail(2, "invalid --skid '%s'", optarg);
			v.skid = num;
			skid_given = true;
			break;
		case 'S':
			if (strcmp(optarg, "exact") && strcmp(optarg, "classic") && strcmp(optarg, "precise") &&
			    strcmp(optarg, "precise-fix") && strcmp(optarg, "pdir"))
				return fail(2, "unknown --sampling '%s' (known: classic, precise, precise-fix, "
					    "pdir, exact)", optarg);
			v.sampling = strcmp(optarg, "exact") ? optarg : NULL;
			break;
		case 'T':
			if (!strcmp(optarg, "help")) {
				tm_params__default(&tp);
				for (size_t i = 0; i < tm_nr_params; i++)
					printf("%-13s %6d  %s\n", tm_param_table[i].name,
					       *tm_params__field(&tp, &tm_param_table[i]), tm_param_table[i].what);
				return 0;
			}
			tm_params__default(&tp);
			if (tm_params__set(&tp, optarg, terr, sizeof(terr)))
				return fail(2, "--timing: %s", terr);
			v.timing = optarg;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:	/* getopt said what is wrong */
			return usage_hint("hsbpf truth");
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
	if (so.period)
		return run_step(argv + optind, &so, output_given ? output : "step");
	if (so.random || so.seed || so.max_insns || so.from_main)
		return fail(2, "--random, --seed, --max-insns and --from-main go with --step");
	if (v.event && !strcmp(v.event, "cycles") && !v.sampling)
		v.sampling = "classic";	/* cycles have no exact overflowing instruction to skid from */
	if (skid_given && v.sampling)
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
	if (v.event && file__same(output, vprofile))
		return fail(2, "-o and --profile name the same file '%s'", output);
	if (outfile__open(&tout, output, FILE_FORMAT_HEAD_MAX))
		return 1;
	if (v.event && outfile__open(&vout, vprofile, FILE_FORMAT_HEAD_MAX)) {
		outfile__discard(&tout);
		return 1;
	}
	if (v.event) {
		v.out = profile__new();
		err = v.out ? refrun__collect_vpmu(argv + optind, plugin, &v, &t) : -ENOMEM;
		if (!err && profile__write_out(v.out, &vout))
			err = -EIO;
		if (!err)
			fprintf(stderr, "hsbpf: virtual PMU: %" PRIu64 " samples, %zu branch edges and ranges; "
				"wrote '%s'\n%s%s%s", profile__total_samples(v.out), v.out->nr_lbr, vprofile,
				verbose ? "hsbpf: " : "", verbose ? v.out->meta.target : "", verbose ? "\n" : "");
		profile__free(v.out);
	} else {
		v.edges = edges;
		err = refrun__collect_vpmu(argv + optind, plugin, &v, &t);
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
		error("'%s' was %s: its counts up to that point were written", argv[optind],
		      t->meta.status);
		err = 1;
	} else if (t->meta.exit_code) {
		warning("'%s' %s", argv[optind], t->meta.status);
	}
	truth__free(t);
	return err;
}
