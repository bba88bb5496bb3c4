// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf script on live recordings (root): its blocks collapsed as stackcollapse-perf.pl does
 * are report's folded stacks, with the same counts; speedscope's own importer reads it with
 * each function's time its samples times the period; and beside perf script's output for
 * the same program, the frames of a known stack have the same addresses, names, offsets
 * and objects. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "helpers.h"

TestSuite(live_script, .fini = cleanup_tmpdir, .timeout = 180);

struct counted {
	char *text;
	u64 count;
};

struct lines {
	struct counted *v;
	size_t n, cap;
};

static void lines_add(struct lines *l, const char *text, u64 count)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].text, text)) {
			l->v[i].count += count;
			return;
		}
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		cr_assert(l->v);
	}
	l->v[l->n].text = strdup(text);
	cr_assert(l->v[l->n].text);
	l->v[l->n++].count = count;
}

static u64 lines_count(const struct lines *l, const char *text)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].text, text))
			return l->v[i].count;
	return 0;
}

static void lines_free(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].text);
	free(l->v);
}

/* one frame line: "\tADDRESS SYM[+0xOFF] (DSO)"; 0 when it is not one */
struct frame {
	u64 addr;
	char sym[512];		/* without the offset */
	char off[32];		/* "0x1c", or "" */
	char dso[512];
};

static bool parse_frame(const char *line, struct frame *f)
{
	const char *p = line, *open, *plus;
	char *end;
	size_t n;

	if (*p != '\t')
		return false;
	f->addr = strtoull(p, &end, 16);
	if (end == p || *end != ' ')
		return false;
	p = end + 1;
	n = strlen(p);
	while (n && p[n - 1] == '\n')
		n--;
	if (n < 3 || p[n - 1] != ')')
		return false;
	open = NULL;
	for (const char *q = p; q < p + n; q++)
		if (q[0] == ' ' && q[1] == '(')
			open = q;
	if (!open)
		return false;
	snprintf(f->dso, sizeof(f->dso), "%.*s", (int)(p + n - 1 - (open + 2)), open + 2);
	snprintf(f->sym, sizeof(f->sym), "%.*s", (int)(open - p), p);
	f->off[0] = 0;
	plus = strrchr(f->sym, '+');
	if (plus && !strncmp(plus, "+0x", 3)) {
		snprintf(f->off, sizeof(f->off), "%s", plus + 1);
		f->sym[plus - f->sym] = 0;
	}
	return true;
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* a frame as report's folded stacks name it: kernel ones _[k] (a module's "sym [mod]"),
 * unknown ones "[unknown] (object)", inlined ones "sym (inlined)" */
static void folded_name(const struct frame *f, char *buf, size_t size)
{
	bool kernel = f->addr >= 0xffff800000000000ull;

	if (!strcmp(f->dso, "inlined"))
		snprintf(buf, size, "%s (inlined)", f->sym);
	else if (!strcmp(f->sym, "[unknown]"))
		snprintf(buf, size, "[unknown] (%s)%s", base(f->dso), kernel ? "_[k]" : "");
	else if (kernel && strcmp(f->dso, "[kernel.kallsyms]"))
		snprintf(buf, size, "%s %s_[k]", f->sym, f->dso);
	else
		snprintf(buf, size, "%s%s", f->sym, kernel ? "_[k]" : "");
}

/* the script collapsed as stackcollapse-perf.pl does: a header starts a block, frames come
 * sampled one first, an empty line ends it with one count; here without the comm (report
 * folds under the process's name, perf script prints the thread's) */
static u64 collapse(const char *path, struct lines *out, u64 *blocks, struct lines *threads)
{
	FILE *f = fopen(path, "r");
	char line[2048], stack[65536] = "", name[1100];
	bool in_block = false;
	u64 frames = 0;

	cr_assert(f, "%s", path);
	*blocks = 0;
	while (fgets(line, sizeof(line), f)) {
		struct frame fr;

		if (!strcmp(line, "\n")) {
			cr_assert(in_block, "an empty line outside a block");
			lines_add(out, stack, 1);
			(*blocks)++;
			stack[0] = 0;
			in_block = false;
			continue;
		}
		if (!in_block) {
			/* COMM PID/TID TIME: PERIOD EVENT: */
			cr_assert(strstr(line, ": ") && line[0] != '\t', "not a header: %s", line);
			in_block = true;
			if (threads) {
				char id[64];

				cr_assert_eq(sscanf(line, "%*s %63s", id), 1, "%s", line);
				lines_add(threads, id, 1);
				snprintf(stack, sizeof(stack), "%s|", id);
			}
			continue;
		}
		cr_assert(parse_frame(line, &fr), "not a frame: %s", line);
		folded_name(&fr, name, sizeof(name));
		/* root first: each frame goes before the ones read so far */
		{
			char *at = threads ? strchr(stack, '|') + 1 : stack;

			memmove(at + strlen(name) + 1, at, strlen(at) + 1);
			memcpy(at, name, strlen(name));
			at[strlen(name)] = ';';
		}
		frames++;
	}
	fclose(f);
	cr_assert(!in_block, "the last block has no empty line");
	/* drop each stack's trailing ';' */
	for (size_t i = 0; i < out->n; i++) {
		size_t n = strlen(out->v[i].text);

		if (n && out->v[i].text[n - 1] == ';')
			out->v[i].text[n - 1] = 0;
	}
	return frames;
}

/* report's folded stacks, without their comm */
static void read_folded(const char *path, struct lines *out)
{
	FILE *f = fopen(path, "r");
	char line[65536];

	cr_assert(f, "%s", path);
	while (fgets(line, sizeof(line), f)) {
		char *sp = strrchr(line, ' '), *semi = strchr(line, ';');

		cr_assert(sp, "%s", line);
		*sp = 0;
		lines_add(out, semi && semi < sp ? semi + 1 : "", strtoull(sp + 1, NULL, 10));
	}
	fclose(f);
}

static const char *record(const char *name, const char *args)
{
	static char path[4][1100];
	static int ring;
	struct run_result r;
	char *p = path[ring++ % 4];

	snprintf(p, sizeof(path[0]), "%s/%s.hsbpf", tmpdir(), name);
	run(&r, "%s record -g -F 999 -o %s -- %s %s", hsbpf_bin(), p, fixture("stacks/callpaths"), args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	return p;
}

Test(live_script, collapsed_like_stackcollapse_perf_it_is_reports_folded_stacks)
{
	const char *path = record("run", "run 1");
	char script[1100], folded[1100];
	struct lines got = {}, want = {};
	struct run_result r;
	u64 blocks, total = 0;

	snprintf(script, sizeof(script), "%s/script.txt", tmpdir());
	snprintf(folded, sizeof(folded), "%s/folded.txt", tmpdir());
	run(&r, "%s script -i %s > %s", hsbpf_bin(), path, script);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run(&r, "%s report -i %s --format folded > %s", hsbpf_bin(), path, folded);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_gt(collapse(script, &got, &blocks, NULL), 0);
	read_folded(folded, &want);
	for (size_t i = 0; i < want.n; i++) {
		cr_expect_eq(lines_count(&got, want.v[i].text), want.v[i].count, "%s: script %" PRIu64
			     ", report %" PRIu64, want.v[i].text, lines_count(&got, want.v[i].text),
			     want.v[i].count);
		total += want.v[i].count;
	}
	cr_expect_eq(got.n, want.n, "%zu distinct stacks in the script, %zu in report", got.n, want.n);
	/* a block per sample, and the known path among them */
	cr_expect_eq(blocks, total);
	cr_expect_gt(total, 500);
	bool path_a = false;
	for (size_t i = 0; i < got.n; i++)
		path_a |= strstr(got.v[i].text, ";path_a;mid_a;leaf") != NULL;
	cr_expect(path_a, "no main -> path_a -> mid_a -> leaf stack");
	lines_free(&got);
	lines_free(&want);
}

/* speedscope's own importer (its npm package, run headless): it weighs a block by the time
 * to its neighbours, so with blocks one period apart each function gets its samples times
 * the period, less at most a period per thread (its first and last block weigh half). A
 * thread of one block weighs 1 whatever the unit (speedscope's rule): those are left out. */
Test(live_script, speedscope_imports_it_with_each_functions_samples_times_the_period)
{
	const char *importer = env_path("OUTPUT", ".output", "../tests/speedscope/import-perf.js");
	const char *path = record("threads", "threads 1");
	const char *funcs[] = { "leaf", "work_a", "work_b", "thread_a", "thread_b" };
	double weight[5] = {}, step, total = 0;
	char script[1100], imported[1100], line[4096], id[64] = "";
	struct lines got = {}, threads = {};
	u64 blocks, want_total = 0;
	struct run_result r;
	int profiles = 0;
	FILE *f;

	snprintf(script, sizeof(script), "%s/script.txt", tmpdir());
	snprintf(imported, sizeof(imported), "%s/imported.txt", tmpdir());
	run(&r, "%s script -i %s > %s", hsbpf_bin(), path, script);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run(&r, "node %s %s > %s", importer, script, imported);
	cr_assert_eq(r.status, 0, "speedscope cannot import the script: %s", r.err);
	collapse(script, &got, &blocks, &threads);
	/* the step between blocks: between two headers of a thread */
	run(&r, "awk '/^[^\\t]/ && NF { sub(\":\", \"\", $3); if ($2 == id) { printf \"%%.6f\\n\", "
	    "$3 - t; exit } id = $2; t = $3 }' %s", script);
	cr_assert_eq(sscanf(r.out, "%lf", &step), 1, "%s", r.out);
	cr_assert(step > 0.0009 && step < 0.0011, "step %f s at -F 999", step);
	f = fopen(imported, "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned pid, tid;
		double tw;
		char name[512];

		if (!strncmp(line, "profile\t", 8) && strstr(line, "pid: ") &&
		    sscanf(strstr(line, "pid: "), "pid: %u tid: %u\t%lf", &pid, &tid, &tw) == 3) {
			snprintf(id, sizeof(id), "%u/%u", pid, tid);
			cr_assert_gt(lines_count(&threads, id), 0, "speedscope's thread %s is not in the script", id);
			if (lines_count(&threads, id) == 1) {
				cr_expect(tw == 1.0, "%s: one block weighs %f", id, tw);
				id[0] = 0;
				continue;
			}
			profiles++;
			total += tw;
			want_total += lines_count(&threads, id);
			continue;
		}
		if (!id[0] || sscanf(line, "frame\t%lf\t%*f\t%511[^\t]", &tw, name) != 2)
			continue;
		for (int i = 0; i < 5; i++)
			if (!strcmp(name, funcs[i]))
				weight[i] += tw;
	}
	fclose(f);
	cr_expect_geq(profiles, 2, "the two threads");
	cr_expect(total / step > want_total - profiles - 0.5 && total / step < want_total + 0.5,
		  "speedscope's total %.1f periods, %" PRIu64 " blocks in %d threads", total / step,
		  want_total, profiles);
	for (int i = 0; i < 5; i++) {
		char key[64];
		u64 want = 0;

		/* the samples of the stacks the function is in, in threads of more than one block */
		snprintf(key, sizeof(key), ";%s;", funcs[i]);
		for (size_t j = 0; j < got.n; j++) {
			char with[70000];
			const char *bar = strchr(got.v[j].text, '|');

			snprintf(id, sizeof(id), "%.*s", (int)(bar - got.v[j].text), got.v[j].text);
			if (lines_count(&threads, id) < 2)
				continue;
			snprintf(with, sizeof(with), ";%s;", bar + 1);
			if (strstr(with, key))
				want += got.v[j].count;
		}
		cr_expect_gt(want, 0, "%s has no samples", funcs[i]);
		cr_expect(weight[i] / step > want - profiles - 0.5 && weight[i] / step < want + 0.5,
			  "%s: speedscope %.1f periods, the script %" PRIu64 " samples", funcs[i],
			  weight[i] / step, want);
	}
	lines_free(&got);
	lines_free(&threads);
}
