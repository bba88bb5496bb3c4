// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* perf.data reader and LBR aggregation on the real recordings in tests/data/lbr (AutoFDO's
 * test data, recorded with perf record -b on Westmere and Skylake): the numbers AutoFDO's own
 * tests expect; and damaged files refused without a crash. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/build_id.h"
#include "helpers.h"
#include "record/lbr.h"
#include "import/perf_import.h"
#include "profile/profile.h"

struct object_maps {
	struct {
		u32 pid;
		u64 start, len, pgoff;
		char path[512];
	} m[64];
	int nr;
	char target[512];	/* the recorded path of the object we count in */
	const char *basename;	/* match by file name ... */
	u8 id[20];		/* ... or by build-id */
	size_t id_len;
};


TestSuite(lbr, .fini = cleanup_tmpdir);

static int on_mmap(void *ctx, u32 pid, u64 s, u64 l, u64 o, const char *p, u64 t)
{
	struct object_maps *om = ctx;
	const char *base = strrchr(p, '/');

	(void)t;
	if (om->nr == 64)
		return 0;
	om->m[om->nr].pid = pid;
	om->m[om->nr].start = s;
	om->m[om->nr].len = l;
	om->m[om->nr].pgoff = o;
	snprintf(om->m[om->nr++].path, 512, "%s", p);
	if (om->basename && !strcmp(base ? base + 1 : p, om->basename))
		snprintf(om->target, sizeof(om->target), "%s", p);
	return 0;
}

static int on_build_id(void *ctx, const char *path, const u8 *id, size_t len)
{
	struct object_maps *om = ctx;

	if (om->id_len && len == om->id_len && !memcmp(id, om->id, len))
		snprintf(om->target, sizeof(om->target), "%s", path);
	return 0;
}

static bool map(void *ctx, u32 pid, u64 a, u64 *off)
{
	struct object_maps *om = ctx;

	for (int i = 0; i < om->nr; i++)
		if (om->m[i].pid == pid && !strcmp(om->m[i].path, om->target) && a >= om->m[i].start &&
		    a - om->m[i].start < om->m[i].len) {
			*off = a - om->m[i].start + om->m[i].pgoff;
			return true;
		}
	return false;
}

static int on_sample(void *ctx, const struct perf_sample *s)
{
	return lbr__add(ctx, s);
}

/* two passes: mappings and build-ids first (the build-ids follow the samples in the file) */
static void aggregate(const char *file, struct object_maps *om, struct lbr_agg *g,
		      struct perf_data_stats *st)
{
	struct perf_data_callbacks cb = { .ctx = om, .mmap = on_mmap, .build_id = on_build_id };

	cr_assert_eq(perf_data__read(file, &cb, st), 0, "%s", file);
	cr_assert(om->target[0], "the object is not among the recording's mappings");
	lbr__init(g, map, om);
	cb = (struct perf_data_callbacks){ .ctx = g, .sample = on_sample };
	cr_assert_eq(perf_data__read(file, &cb, st), 0);
}

/* AutoFDO's sample_reader_test.cc on test.lbr: 357 ranges, [0x4e80, 0x4e8e] 1,134 times, IPs
 * 0xfe0 55 and 0x1005 18 times; range totals 134,622 and 5,383,657 there. hsbpf counts 134,677
 * and 5,390,972, as an independent reading of the same rules through perf script does: see
 * docs/branch-stacks.md, "On AutoFDO's real recordings", for the difference */
Test(lbr, autofdo_expectations_on_westmere)
{
	struct object_maps om = { .basename = "test.binary" };
	struct perf_data_stats st;
	struct lbr_agg g;
	u64 sum = 0, weighted = 0;

	aggregate(lbr_data("test.lbr"), &om, &g, &st);
	cr_expect_eq(st.samples, 9232);
	cr_expect_eq(g.st.samples, 9232, "every sample has a 16-entry stack");
	cr_expect_eq(g.ranges.nr, 357);
	cr_expect_eq(lbr_table__get(&g.ranges, 0x4e80, 0x4e8e), 1134);
	cr_expect_eq(lbr_table__get(&g.ips, 0xfe0, 0), 55);
	cr_expect_eq(lbr_table__get(&g.ips, 0x1005, 0), 18);
	for (size_t i = 0; i < g.ranges.nr; i++) {
		const struct lbr_pair *r = &g.ranges.pairs[i];

		sum += r->count;
		weighted += r->count * (r->b - r->a + 1);
	}
	cr_expect_eq(sum, 134677);
	cr_expect_eq(weighted, 5390972);
	lbr__free(&g);
}

/* the Skylake file: matched by its 8-byte lld build-id, 32-entry stacks, the duplicated-top
 * erratum in about 20% of samples; 119,419 entries with both ends inside the binary (AutoFDO's
 * aggregator test counts 119,424, an independent reading 119,419) */
Test(lbr, propeller_skylake)
{
	struct object_maps om = {};
	struct perf_data_stats st;
	struct lbr_agg g;

	cr_assert_eq(build_id__read(lbr_data("propeller_sample_1.bin"), om.id, sizeof(om.id), &om.id_len), 0);
	cr_assert_eq(om.id_len, 8);
	aggregate(lbr_data("propeller_sample_1.perfdata1"), &om, &g, &st);
	cr_expect(strstr(om.target, "propeller_sample_1.bin"), "%s", om.target);
	cr_expect_eq(g.st.samples, 3732);
	cr_expect_eq(g.st.entries_in, 119419, "entries with both ends in the binary");
	cr_expect_eq(g.st.edges, 119419 - 733, "less the duplicated newest entries");
	cr_expect_eq(g.st.dup_top, 733, "duplicated newest entries");
	cr_expect(g.st.dup_top * 100 / g.st.samples >= 15 && g.st.dup_top * 100 / g.st.samples <= 25);
	lbr__free(&g);
}

Test(lbr, damaged_perf_data_is_refused, .init = cr_redirect_stderr)
{
	FILE *f = fopen(lbr_data("test.lbr"), "rb");
	struct perf_data_callbacks cb = {};
	struct perf_data_stats st;
	size_t size;
	u8 *buf;

	cr_assert(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	buf = malloc(size);
	cr_assert_eq(fread(buf, 1, size, f), size);
	fclose(f);
	cr_expect_eq(perf_data__parse(buf, size, "ok", &cb, &st), 0);
	/* truncated anywhere in the header, the attributes, or a record */
	for (size_t cut = 0; cut < 0x400; cut += 7)
		cr_expect_neq(perf_data__parse(buf, cut, "cut", &cb, &st), 0, "cut at %zu", cut);
	cr_expect_neq(perf_data__parse(buf, size / 2, "half", &cb, &st), 0);
	/* lying sizes: a record claiming more than the section, an attribute size of 1 */
	{
		u8 *copy = malloc(size);
		u64 big = 1ull << 40;

		memcpy(copy, buf, size);
		memcpy(copy + 0x10, &(u64){ 1 }, 8);
		cr_expect_neq(perf_data__parse(copy, size, "attr", &cb, &st), 0);
		memcpy(copy, buf, size);
		memcpy(copy + 0x30, &big, 8);
		cr_expect_neq(perf_data__parse(copy, size, "data", &cb, &st), 0);
		free(copy);
	}
	cr_expect_neq(perf_data__parse("PERFFILE", 8, "v1", &cb, &st), 0);
	cr_expect_neq(perf_data__parse("nothing", 7, "junk", &cb, &st), 0);
	free(buf);
}

/* import: the Westmere recording as an hsbpf profile; samples symbolized in the local binary,
 * ranges and edges reported with the same counts as above, in run-time addresses */
Test(lbr, import_and_report)
{
	struct run_result r;
	char out[600];
	struct profile *p;
	u64 range = 0;

	snprintf(out, sizeof(out), "%s/imported.data", tmpdir());
	cr_assert_eq(run(&r, "%s import %s --binary %s -o %s", hsbpf_bin(), lbr_data("test.lbr"),
			 lbr_data("test.binary"), out), 0, "%s", r.err);
	cr_assert_eq(profile__read(out, &p), 0);
	cr_expect_eq(profile__total_samples(p), 9232);
	cr_expect_str_eq(p->meta.unit, "events");
	for (size_t i = 0; i < p->nr_lbr; i++)
		if (p->lbr[i].kind == 2 && p->lbr[i].a == 0x404e80 && p->lbr[i].b == 0x404e8e)
			range += p->lbr[i].count;
	cr_expect_eq(range, 1134);
	profile__free(p);
	cr_assert_eq(run(&r, "%s report -i %s --limit 3", hsbpf_bin(), out), 0);
	cr_expect(strstr(r.out, "longest_match"), "gzip's hottest function: %s", r.out);
	cr_assert_eq(run(&r, "%s report -i %s --sort range --format json --limit 0 | tr '{' '\\n' | "
			 "grep -c '\"count\":1134,\"first\":\"0x404e80\",\"last\":\"0x404e8e\"'", hsbpf_bin(), out), 0, "%s", r.err);
	cr_assert_eq(run(&r, "%s report -i %s --sort edge --limit 2", hsbpf_bin(), out), 0);
	cr_expect(strstr(r.out, "updcrc"), "%s", r.out);
	/* the Skylake recording by build-id */
	cr_assert_eq(run(&r, "%s import %s --binary %s -o %s", hsbpf_bin(), lbr_data("propeller_sample_1.perfdata1"),
			 lbr_data("propeller_sample_1.bin"), out), 0, "%s", r.err);
	cr_assert_eq(run(&r, "%s report -i %s --limit 2", hsbpf_bin(), out), 0);
	cr_expect(strstr(r.out, "compute_flag"), "%s", r.out);
	cr_expect(strstr(r.out, "cycles -b"), "%s", r.out);
	/* damaged input */
	run(&r, "head -c 3000 %s > %s/cut.data; %s import %s/cut.data -o %s", lbr_data("test.lbr"), tmpdir(),
	    hsbpf_bin(), tmpdir(), out);
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "truncated") || strstr(r.err, "corrupt"), "%s", r.err);
}

/* the fuzzer's corpus (tests/fuzz/corpus, make fuzz), read again on every run: under ASan in
 * make check, any memory error in the reader on these inputs fails the suite */
/* every byte a sample hands out, touched (ASan checks each) */
static int touch_sample(void *ctx, const struct perf_sample *s)
{
	volatile u64 sink = s->ip;

	(void)ctx;
	for (u64 i = 0; i < s->nr_branches; i++)
		sink += s->branches[i].from ^ s->branches[i].to;
	for (u64 i = 0; i < s->nr_callchain; i++)
		sink += s->callchain[i];
	for (u64 i = 0; i < s->nr_regs; i++)
		sink += s->regs[i];
	for (u64 i = 0; i < s->stack_size; i++)
		sink += s->stack[i];
	(void)sink;
	return 0;
}

Test(lbr, fuzz_corpus_replays_cleanly, .init = cr_redirect_stderr)
{
	struct perf_data_callbacks cb = { .sample = touch_sample, .history_first = true };
	struct perf_import_opts o = {};
	struct profile *prof;
	struct perf_data_stats st;
	struct run_result r;
	char list[600], path[1200];
	FILE *f;
	int n = 0;

	snprintf(list, sizeof(list), "%s/corpus.txt", tmpdir());
	cr_assert_eq(run(&r, "ls -d %s/* > %s", env_path("OUTPUT", ".output", "../tests/fuzz/corpus"),
			 list), 0, "%s", r.err);
	f = fopen(list, "r");
	cr_assert(f);
	while (fgets(path, sizeof(path), f)) {
		void *buf;
		size_t size;
		FILE *in;

		path[strcspn(path, "\n")] = 0;
		in = fopen(path, "rb");
		if (!in)
			continue;
		fseek(in, 0, SEEK_END);
		size = ftell(in);
		rewind(in);
		buf = malloc(size + 1);
		if (fread(buf, 1, size, in) == size)
			perf_data__parse(buf, size, path, &cb, &st);
		free(buf);
		fclose(in);
		/* ... and the importer on it, unwinding the dwarf samples' copies */
		prof = profile__new();
		cr_assert(prof);
		perf_import__run(path, &o, prof);
		profile__free(prof);
		n++;
	}
	fclose(f);
	cr_expect_gt(n, 20, "corpus of %d files", n);
}

/* a one-sample perf.data: a taken branch 0x401000 -> 0x402000 sampled at IP 0x402000 */
static void write_one_sample(const char *path, int precise)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_HARDWARE,
					.sample_period = 1000,
					.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD |
						       PERF_SAMPLE_BRANCH_STACK,
					.precise_ip = precise };
	struct {
		struct perf_event_header h;
		u64 ip;
		u32 pid, tid;
		u64 period, nr, from, to, flags;
	} rec = { { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof(rec) }, 0x402000, 9, 9, 1000, 1,
		  0x401000, 0x402000, 0 };
	u64 hdr[13] = { 0x32454c4946524550ull, 104, sizeof(attr) + 16 };
	u64 ids[2] = { 0, 0 };
	FILE *f = fopen(path, "wb");

	hdr[3] = 104;				/* attrs */
	hdr[4] = sizeof(attr) + 16;
	hdr[5] = 104 + sizeof(attr) + 16;	/* data */
	hdr[6] = sizeof(rec);
	cr_assert(f);
	fwrite(hdr, 8, 13, f);
	fwrite(&attr, sizeof(attr), 1, f);
	fwrite(ids, 8, 2, f);
	fwrite(&rec, sizeof(rec), 1, f);
	fclose(f);
}

/* the IP+1 fix: a precise sample of a taken branch reports its target; the sample belongs to
 * the branch. Without precise sampling the IP is kept as it is. */
Test(lbr, ip_plus_one_fix)
{
	char in[600], out[600];
	struct run_result r;
	struct profile *p;

	snprintf(in, sizeof(in), "%s/one.data", tmpdir());
	snprintf(out, sizeof(out), "%s/one.prof", tmpdir());
	for (int precise = 0; precise <= 1; precise++) {
		write_one_sample(in, precise);
		cr_assert_eq(run(&r, "%s import %s -o %s", hsbpf_bin(), in, out), 0, "%s", r.err);
		cr_assert_eq(profile__read(out, &p), 0);
		cr_assert_eq(p->nr_samples, 1);
		cr_expect_eq(p->samples[0].ip, precise ? 0x401000 : 0x402000, "precise=%d", precise);
		cr_expect_eq(p->nr_lbr, 1, "one edge, no range from a single record");
		profile__free(p);
	}
}
