// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The exports read back by go tool pprof and checked against speedscope's schema, and their
 * numbers compared with hsbpf report's. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "export_check.h"
#include "helpers.h"
#include "profile/profile.h"
#include "record/memory.h"

int go_pprof(const char *args, const char *file, const char *out_path, char *err, size_t size)
{
	struct run_result *r = malloc(sizeof(*r));
	int status;

	cr_assert(r);
	/* its own home, build cache and module path, and never the network */
	run(r, "env HOME=%s GOCACHE=%s/go-cache GOPATH=%s/go-path GOFLAGS=-mod=mod GOPROXY=off "
	    "go tool pprof %s %s > %s", tmpdir(), tmpdir(), tmpdir(), args, file, out_path);
	snprintf(err, size, "%s", r->err);
	status = r->status;
	free(r);
	return status;
}

struct fn_total {
	char name[512];
	u64 flat, cum;
};

struct fn_table {
	struct fn_total *f;
	size_t nr, cap;
};

static struct fn_total *fn_get(struct fn_table *t, const char *name)
{
	for (size_t i = 0; i < t->nr; i++)
		if (!strcmp(t->f[i].name, name))
			return &t->f[i];
	cr_assert_eq(array__reserve((void **)&t->f, &t->cap, t->nr + 1, sizeof(*t->f)), 0);
	memset(&t->f[t->nr], 0, sizeof(*t->f));
	snprintf(t->f[t->nr].name, sizeof(t->f->name), "%s", name);
	return &t->f[t->nr++];
}

/* the CSV fields of a line, in place (quotes undone) */
static int csv_split(char *line, char **fields, int max)
{
	int n = 0;
	char *w = line, *r = line;

	while (n < max) {
		bool quoted = *r == '"';

		fields[n++] = w;
		if (quoted)
			r++;
		for (; *r; r++) {
			if (quoted && *r == '"' && r[1] == '"') {
				*w++ = '"';
				r++;
			} else if (quoted && *r == '"') {
				quoted = false;
			} else if (!quoted && (*r == ',' || *r == '\n')) {
				break;
			} else {
				*w++ = *r;
			}
		}
		if (*r != ',') {
			*w = 0;
			break;
		}
		*w++ = 0;
		r++;
	}
	return n;
}

/* report's rows named as the exports name functions: no "[k] ", unknown code by its object */
static void report_functions(const char *csv_path, bool children, struct fn_table *t)
{
	FILE *f = fopen(csv_path, "r");
	char line[8192], name[600];
	int sym = -1, obj = -1, n;

	cr_assert(f, "%s", csv_path);
	while (fgets(line, sizeof(line), f)) {
		char *fields[16];

		n = csv_split(line, fields, 16);
		if (sym < 0) {
			for (int i = 0; i < n; i++) {
				if (!strcmp(fields[i], "Symbol"))
					sym = i;
				if (!strcmp(fields[i], "Object"))
					obj = i;
			}
			cr_assert(sym >= 0 && obj >= 0, "no Symbol and Object columns in %s", csv_path);
			continue;
		}
		cr_assert(n > sym && n > obj);
		const char *s = fields[sym];
		if (!strncmp(s, "[k] ", 4))
			s += 4;
		/* an inlined function's row in the Children view: in pprof -noinlines, it is the
		 * function it was inlined into */
		if (strlen(s) > 10 && !strcmp(s + strlen(s) - 10, " (inlined)"))
			continue;
		if (!strcmp(s, "[unknown]"))
			snprintf(name, sizeof(name), "[unknown in %s]", path__base(fields[obj]));
		else
			snprintf(name, sizeof(name), "%s", s);
		struct fn_total *ft = fn_get(t, name);
		ft->flat += strtoull(fields[0], NULL, 10);
		ft->cum += strtoull(children ? fields[4] : fields[0], NULL, 10);
	}
	fclose(f);
}

/* go tool pprof -top's rows: flat flat% sum% cum cum% name; the total from its header */
static void pprof_functions(const char *top_path, struct fn_table *t, u64 *total)
{
	FILE *f = fopen(top_path, "r");
	char line[8192];
	bool rows = false;

	cr_assert(f);
	*total = UINT64_MAX;
	while (fgets(line, sizeof(line), f)) {
		char flat[64], cum[64];
		int off = 0;
		const char *p;

		line[strcspn(line, "\n")] = 0;
		if ((p = strstr(line, "Total samples = ")))
			*total = strtoull(p + strlen("Total samples = "), NULL, 10);
		if (strstr(line, "flat%") && strstr(line, "cum%")) {
			rows = true;
			continue;
		}
		if (!rows)
			continue;
		cr_assert_eq(sscanf(line, " %63s %*s %*s %63s %*s %n", flat, cum, &off), 2, "%s", line);
		cr_assert(off > 0, "%s", line);
		struct fn_total *ft = fn_get(t, line + off);
		ft->flat += strtoull(flat, NULL, 10);
		ft->cum += strtoull(cum, NULL, 10);
	}
	fclose(f);
	cr_assert(rows, "no rows in go tool pprof -top");
}

/* what the export holds: the stack samples, or the flat ones */
static void profile_totals(const char *path, u64 *samples, u64 *weight)
{
	struct profile *p;

	cr_assert_eq(profile__read(path, &p), 0);
	*samples = *weight = 0;
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		*samples += p->stack_samples[i].count;
		*weight += p->stack_samples[i].weight;
	}
	if (!p->nr_stack_samples) {
		*samples = profile__total_samples(p);
		*weight = profile__total_weight(p);
	}
	profile__free(p);
}

/* go tool pprof -top of sample type index (ARGS more) in pb against report's csv: the flat
 * (unless cum_only) and cumulative amounts of each function equal, and the total; the
 * functions compared */
static size_t compare_top(const char *pb, const char *csv, bool stacks, const char *index,
			  const char *args, bool cum_only, u64 want_total)
{
	char top[1100], opts[512], err[4096];
	struct fn_table rep = {}, pp = {};
	u64 total;
	size_t compared;

	snprintf(top, sizeof(top), "%s/top.txt", tmpdir());
	snprintf(opts, sizeof(opts), "-sample_index=%s %s -noinlines -top -nodecount=1000000 "
		 "-nodefraction=0 -edgefraction=0", index, args);
	cr_assert_eq(go_pprof(opts, pb, top, err, sizeof(err)), 0, "%s", err);
	report_functions(csv, stacks, &rep);
	pprof_functions(top, &pp, &total);
	cr_expect_eq(total, want_total, "go tool pprof: %" PRIu64 " %s, the profile %" PRIu64, total,
		     index, want_total);
	cr_expect_eq(rep.nr, pp.nr, "report has %zu functions, pprof %zu", rep.nr, pp.nr);
	for (size_t i = 0; i < rep.nr; i++) {
		struct fn_total *a = &rep.f[i], *b = fn_get(&pp, a->name);

		cr_expect((cum_only || a->flat == b->flat) && a->cum == b->cum,
			  "%s: %s: report self %" PRIu64 " children %" PRIu64 ", pprof flat %" PRIu64
			  " cum %" PRIu64, index, a->name, a->flat, a->cum, b->flat, b->cum);
	}
	compared = rep.nr;
	free(rep.f);
	free(pp.f);
	return compared;
}

size_t check_pprof_matches_report(const char *path)
{
	char pb[1100], csv[1100], raw[1100], traces[1100], err[4096], line[4096];
	struct run_result *r = malloc(sizeof(*r));
	u64 samples, weight, sum_count = 0, sum_weight = 0;
	bool stacks, in_samples = false;
	struct profile *p;
	size_t compared;
	FILE *f;

	cr_assert(r);
	cr_assert_eq(profile__read(path, &p), 0);
	stacks = p->nr_stack_samples > 0;
	profile__free(p);
	profile_totals(path, &samples, &weight);
	snprintf(pb, sizeof(pb), "%s/export.pb.gz", tmpdir());
	snprintf(csv, sizeof(csv), "%s/report.csv", tmpdir());
	snprintf(raw, sizeof(raw), "%s/raw.txt", tmpdir());
	snprintf(traces, sizeof(traces), "%s/traces.txt", tmpdir());

	run(r, "%s report -i %s --format pprof -o %s", hsbpf_bin(), path, pb);
	cr_assert_eq(r->status, 0, "%s", r->err);
	run(r, "%s report -i %s --format csv --limit 0 %s > %s", hsbpf_bin(), path,
	    stacks ? "--children" : "", csv);
	cr_assert_eq(r->status, 0, "%s", r->err);
	free(r);

	/* flat and cumulative samples per function (report's: inlined functions in the function
	 * they are inlined into) */
	compared = compare_top(pb, csv, stacks, "samples", "", false, samples);

	/* every sample with its count and weight */
	cr_assert_eq(go_pprof("-raw", pb, raw, err, sizeof(err)), 0, "%s", err);
	f = fopen(raw, "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long c, w;

		if (!strncmp(line, "Samples:", 8))
			in_samples = true;
		else if (!strncmp(line, "Locations", 9))
			in_samples = false;
		else if (in_samples && sscanf(line, " %llu %llu:", &c, &w) == 2) {
			sum_count += c;
			sum_weight += w;
		}
	}
	fclose(f);
	cr_expect_eq(sum_count, samples, "-raw: %" PRIu64 " samples, the profile %" PRIu64, sum_count, samples);
	cr_expect_eq(sum_weight, weight, "-raw: weight %" PRIu64 ", the profile %" PRIu64, sum_weight, weight);

	/* the stacks with their labels */
	cr_assert_eq(go_pprof("-traces", pb, traces, err, sizeof(err)), 0, "%s", err);
	f = fopen(traces, "r");
	cr_assert(f);
	size_t nr_traces = 0, nr_pid = 0;
	while (fgets(line, sizeof(line), f)) {
		nr_traces += !strncmp(line, "-----------+", 12);
		nr_pid += strstr(line, " pid:  ") != NULL;
	}
	fclose(f);
	/* a separator line after each trace and before the first */
	cr_expect(nr_traces > 1 && nr_pid == nr_traces - 1, "%zu separators, %zu traces with a pid",
		  nr_traces, nr_pid);
	return compared;
}

/* go tool pprof ARGS on pb says "Type: type" */
static void expect_pprof_type(const char *pb, const char *args, const char *type)
{
	char out[1100], err[4096], line[4096], got[64] = "";
	FILE *f;

	snprintf(out, sizeof(out), "%s/type.txt", tmpdir());
	cr_assert_eq(go_pprof(args, pb, out, err, sizeof(err)), 0, "%s", err);
	f = fopen(out, "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f) && !got[0])
		sscanf(line, "Type: %63s", got);
	fclose(f);
	cr_expect_str_eq(got, type, "go tool pprof %s: type '%s', want %s", args, got, type);
}

size_t check_pprof_heap_matches_report(const char *path)
{
	char pb[1100], csv[1100], args[64];
	struct run_result *r = malloc(sizeof(*r));
	size_t compared = 0;

	cr_assert(r);
	snprintf(pb, sizeof(pb), "%s/heap.pb.gz", tmpdir());
	snprintf(csv, sizeof(csv), "%s/report.csv", tmpdir());
	run(r, "%s report -i %s --format pprof -o %s", hsbpf_bin(), path, pb);
	cr_assert_eq(r->status, 0, "%s", r->err);
	/* shown first as Go's heap profiles are: in use */
	expect_pprof_type(pb, "-top", "inuse_space");
	for (enum memory_view v = 0; v < MEMORY_VIEW_NR; v++) {
		const char *type = memory__view_name(v);
		bool bytes = strstr(type, "space");
		struct profile *p;
		u64 total = 0;

		cr_assert_eq(profile__read(path, &p), 0);
		memory__select(p, v);
		for (size_t i = 0; i < p->nr_stack_samples; i++)
			total += p->stack_samples[i].count;
		profile__free(p);
		run(r, "%s report -i %s --format csv --limit 0 --children --sample-type %s > %s",
		    hsbpf_bin(), path, type, csv);
		cr_assert_eq(r->status, 0, "%s", r->err);
		/* bytes unscaled: "133.37MB" would not compare; report's row of an allocation is
		 * its caller's, pprof's flat the allocator's (the stack's first frame, as in
		 * folded stacks): the cumulative amounts compare */
		compared += compare_top(pb, csv, true, type, bytes ? "-unit=B" : "", true, total);
		/* pprof's own flags for them: -inuse_space ... */
		snprintf(args, sizeof(args), "-%s -top", type);
		expect_pprof_type(pb, args, type);
	}
	/* report --sample-type: the type shown first */
	run(r, "%s report -i %s --format pprof --sample-type alloc_objects -o %s", hsbpf_bin(), path, pb);
	cr_assert_eq(r->status, 0, "%s", r->err);
	expect_pprof_type(pb, "-top", "alloc_objects");
	free(r);
	return compared;
}

void check_speedscope(const char *path)
{
	const char *validator = env_path("OUTPUT", ".output", "../tests/speedscope/validate.js");
	struct run_result *r = malloc(sizeof(*r));
	char js[1100];
	u64 samples, weight;

	cr_assert(r);
	profile_totals(path, &samples, &weight);
	snprintf(js, sizeof(js), "%s/export.speedscope.json", tmpdir());
	run(r, "%s report -i %s --format speedscope -o %s", hsbpf_bin(), path, js);
	cr_assert_eq(r->status, 0, "%s", r->err);
	run(r, "node %s %s", validator, js);
	cr_expect_eq(r->status, 0, "speedscope's schema refuses the export: %s", r->err);
	/* the weights, every sampled profile's (the evented time lines lay the same samples out
	 * in time), and the samples' count */
	run(r, "node -e 'const d = JSON.parse(require(\"fs\").readFileSync(\"%s\")); "
	    "let w = 0, n = 0; for (const p of d.profiles) { if (p.type !== \"sampled\") continue; "
	    "n += p.samples.length; "
	    "for (const x of p.weights) w += x; } console.log(w + \" \" + n + \" \" + d.profiles.length)'", js);
	cr_assert_eq(r->status, 0, "%s", r->err);
	unsigned long long w = 0, n = 0, np = 0;
	cr_assert_eq(sscanf(r->out, "%llu %llu %llu", &w, &n, &np), 3, "%s", r->out);
	cr_expect_eq(w, weight, "speedscope weights %llu, the profile %" PRIu64, w, weight);
	cr_expect(n > 0 && np > 0);
	free(r);
}
