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
	/* --aggregate: a block per distinct stack of addresses (several may fold to one line of
	 * functions), whose periods add up to the samples' */
	run(&r, "%s script --aggregate -i %s | awk '/^[^\\t]/ && NF { n++; w += $4 } END { print n, w }'",
	    hsbpf_bin(), path);
	unsigned long long agg_blocks = 0, agg_weight = 0;
	cr_assert_eq(sscanf(r.out, "%llu %llu", &agg_blocks, &agg_weight), 2, "%s", r.out);
	cr_expect(agg_blocks >= got.n && agg_blocks < total, "%llu blocks, %zu distinct stacks of "
		  "functions, %" PRIu64 " samples", agg_blocks, got.n, total);
	cr_expect_eq(agg_weight, total * 1001001ull, "%llu ns for %" PRIu64 " samples", agg_weight, total);
	/* report's filters: --dso keeps the samples whose sampled frame is in the object */
	run(&r, "%s script --dso callpaths -i %s | awk 'BEGIN { RS = \"\" } { n++; split($0, l, \"\\n\"); "
	    "if (l[2] !~ /\\/callpaths\\)$/) bad++ } END { print n + 0, bad + 0 }'", hsbpf_bin(), path);
	unsigned long long lib_blocks = 0, bad = 1;
	cr_assert_eq(sscanf(r.out, "%llu %llu", &lib_blocks, &bad), 2, "%s", r.out);
	cr_expect_eq(bad, 0, "%llu blocks not sampled in callpaths", bad);
	cr_expect(lib_blocks > total / 2 && lib_blocks <= total, "%llu blocks of %" PRIu64, lib_blocks, total);
	run(&r, "%s script --comm nothing-runs-as-this -i %s | wc -c", hsbpf_bin(), path);
	cr_expect_eq(strtoull(r.out, NULL, 10), 0, "%s", r.out);
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

/* the first block whose sampled frame is in `first` and whose next is in `second`: its
 * frames and header; 0 when there is none */
static int find_block(const char *path, const char *first, const char *second, struct frame *out,
		      int max, char *header, size_t header_size)
{
	FILE *f = fopen(path, "r");
	char line[2048];
	int n = 0;

	cr_assert(f, "%s", path);
	while (fgets(line, sizeof(line), f)) {
		if (!strcmp(line, "\n")) {
			if (n >= 2 && !strcmp(out[0].sym, first) && !strcmp(out[1].sym, second))
				break;
			n = -1;
			continue;
		}
		if (line[0] != '\t') {
			snprintf(header, header_size, "%s", line);
			n = 0;
			continue;
		}
		if (n >= 0 && n < max && parse_frame(line, &out[n]))
			n++;
	}
	if (feof(f))
		n = 0;
	fclose(f);
	return n;
}

/* the first frame of function sym in a script; false when there is none */
static bool find_frame(const char *path, const char *sym, struct frame *out, char *line_out,
		       size_t size)
{
	FILE *f = fopen(path, "r");
	char line[2048];
	bool found = false;

	cr_assert(f, "%s", path);
	while (!found && fgets(line, sizeof(line), f))
		if (line[0] == '\t' && parse_frame(line, out) && !strcmp(out->sym, sym)) {
			snprintf(line_out, size, "%s", line);
			found = true;
		}
	fclose(f);
	return found;
}

/* beside perf script (perf record --call-graph dwarf: its frames are unwound as hsbpf's are)
 * on the same program: a stack through a shared library has the same frames, with the same
 * addresses (in ELF terms, return addresses at the call), names, offsets and objects; the
 * header has the same command and period, a time with microseconds */
Test(live_script, its_frames_are_perf_scripts_for_the_same_stack)
{
	const char *path = record("perf_side", "run 1");
	char script[1100], perf_data[1100], perf_script[1100], hh[2048], ph[2048];
	struct frame h[64], pf[64];
	struct run_result r;
	int nh, np;

	snprintf(script, sizeof(script), "%s/script.txt", tmpdir());
	snprintf(perf_data, sizeof(perf_data), "%s/perf.data", tmpdir());
	snprintf(perf_script, sizeof(perf_script), "%s/perf-script.txt", tmpdir());
	run(&r, "%s script -i %s > %s", hsbpf_bin(), path, script);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run(&r, "perf record --buildid-mmap --call-graph dwarf -F 999 -o %s -- %s run 1", perf_data,
	    fixture("stacks/callpaths"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	run(&r, "perf script -i %s > %s", perf_data, perf_script);
	cr_assert_eq(r.status, 0, "%s", r.err);
	nh = find_block(script, "leaf", "lib_inner", h, 64, hh, sizeof(hh));
	np = find_block(perf_script, "leaf", "lib_inner", pf, 64, ph, sizeof(ph));
	cr_assert_gt(nh, 0, "no leaf <- lib_inner block in hsbpf script");
	cr_assert_gt(np, 0, "no leaf <- lib_inner block in perf script");
	/* leaf <- lib_inner <- lib_call <- path_lib <- round_of_paths <- main <- libc <- _start,
	 * perf names libc's __libc_start_main by the function inlined there: up to main */
	int main_h = -1, main_p = -1;
	for (int i = 0; i < nh && main_h < 0; i++)
		main_h = !strcmp(h[i].sym, "main") ? i : -1;
	for (int i = 0; i < np && main_p < 0; i++)
		main_p = !strcmp(pf[i].sym, "main") ? i : -1;
	cr_assert_eq(main_h, 5, "main is frame %d in hsbpf script", main_h);
	cr_assert_eq(main_p, main_h, "main is frame %d in perf script, %d in hsbpf's", main_p, main_h);
	cr_expect_eq(nh, np, "%d frames in hsbpf script, %d in perf script", nh, np);
	for (int i = 0; i <= main_h; i++) {
		cr_expect_str_eq(h[i].sym, pf[i].sym, "frame %d", i);
		cr_expect_str_eq(h[i].dso, pf[i].dso, "frame %d (%s)", i, h[i].sym);
		if (i == 0) {	/* the sampled pc: anywhere in leaf, in the same form */
			cr_expect(h[0].addr < 0x100000 && pf[0].addr < 0x100000, "%" PRIx64 " %" PRIx64,
				  h[0].addr, pf[0].addr);
			continue;
		}
		cr_expect_eq(h[i].addr, pf[i].addr, "frame %d (%s): %" PRIx64 " and perf's %" PRIx64, i,
			     h[i].sym, h[i].addr, pf[i].addr);
		cr_expect_str_eq(h[i].off, pf[i].off, "frame %d (%s)", i, h[i].sym);
	}
	/* kernel frames: the return address of the system call's entry, the same line in both
	 * when both runs sampled one (the signal path makes system calls, but a sample in one is
	 * a matter of chance: a stress run with the other core busy had none) */
	struct frame hk, pk;
	char hl[2048] = "", pl[2048] = "";
	if (find_frame(script, "entry_SYSCALL_64_after_hwframe", &hk, hl, sizeof(hl)) &&
	    find_frame(perf_script, "entry_SYSCALL_64_after_hwframe", &pk, pl, sizeof(pl)) &&
	    strstr(hl, "([kernel.kallsyms])"))
		cr_expect_str_eq(hl, pl);
	else
		cr_log_info("no system call sampled in one of the runs: kernel frames not compared");
	/* "callpaths  PID/TID  SEC.USEC:    1001001 cpu-clock: " and perf's "callpaths  TID ..." */
	char hc[64], pc[64];
	unsigned long hp, pp;
	double ht, pt;
	cr_assert_eq(sscanf(hh, "%63s %*s %lf: %lu", hc, &ht, &hp), 3, "%s", hh);
	cr_assert_eq(sscanf(ph, "%63s %*s %lf: %lu", pc, &pt, &pp), 3, "%s", ph);
	cr_expect_str_eq(hc, pc);
	cr_expect_eq(hp, pp);
	cr_expect(strchr(hh, '.') && strchr(hh, ':') - strchr(hh, '.') == 7, "%s", hh);
}
