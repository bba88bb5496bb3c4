// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* perf record --call-graph dwarf samples, hand-built: the register and stack copies read
 * within their record's bounds, perf's register order turned into DWARF's, the stack read
 * from the copy only, and every copy that cannot be unwound (no registers, damaged
 * registers or stack, dyn_size past the copy) counted and said, the sample kept. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "helpers.h"
#include "hsbpf.h"
#include "record/perf_data.h"
#include "import/perf_import.h"
#include "profile/profile.h"

TestSuite(perf_unwind, .fini = cleanup_tmpdir);

/* perf's x86 registers sampled: BP (6), SP (7), IP (8), in that order in a record */
#define REGS_MASK ((1ull << 6) | (1ull << 7) | (1ull << 8))
#define PID 9
#define SP 0x7ffe1000ull
#define IP 0x401000ull		/* in an object that cannot be read: frame pointers there */
#define RA 0x401234ull
#define MISSING "/nonexistent/hsbpf-test.so"

struct buf {
	u8 *p;
	size_t n, cap;
};

static void put(struct buf *b, const void *v, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2;
		b->p = realloc(b->p, b->cap);
		cr_assert(b->p);
	}
	memcpy(b->p + b->n, v, n);
	b->n += n;
}

static void put64(struct buf *b, u64 v)
{
	put(b, &v, 8);
}

/* the kinds of samples the file holds, in this order */
enum kind { GOOD, NO_REGS, DYN_PAST_COPY, SHORT_STACK, SHORT_REGS, EMPTY_COPY, KERNEL_ONLY, NR_KINDS };

/* one sample record: ip tid time period callchain regs stack */
static void put_sample(struct buf *d, enum kind k)
{
	struct buf r = {};
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 0 };
	u32 pid = k == KERNEL_ONLY ? 0 : PID;
	u64 stack[8] = { 0 };

	put64(&r, k == KERNEL_ONLY ? 0xffffffff81000000ull : IP);
	put(&r, &pid, 4);
	put(&r, &pid, 4);
	put64(&r, 1000 + k);		/* time */
	put64(&r, 250000);		/* period */
	put64(&r, 2);
	put64(&r, k == KERNEL_ONLY ? PERF_CONTEXT_KERNEL : PERF_CONTEXT_USER);
	put64(&r, k == KERNEL_ONLY ? 0xffffffff81000000ull : IP);
	if (k == NO_REGS || k == KERNEL_ONLY) {
		put64(&r, 0);		/* abi none */
		put64(&r, 0);		/* no stack */
	} else {
		put64(&r, 2);		/* abi 64 */
		put64(&r, SP + 16);	/* bp: the frame record is 16 bytes up the stack */
		if (k == SHORT_REGS)
			goto end;
		put64(&r, SP);
		put64(&r, IP);
		if (k == EMPTY_COPY) {
			put64(&r, 0);
			goto end;
		}
		stack[2] = 0;		/* [bp]: the caller's bp */
		stack[3] = RA;		/* [bp + 8] */
		put64(&r, sizeof(stack));
		put(&r, stack, k == SHORT_STACK ? 16 : sizeof(stack));
		if (k != SHORT_STACK)
			put64(&r, k == DYN_PAST_COPY ? 2 * sizeof(stack) : sizeof(stack));
	}
end:
	h.size = sizeof(h) + r.n;
	put(d, &h, sizeof(h));
	put(d, r.p, r.n);
	free(r.p);
}

static void write_dwarf_data(const char *path)
{
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_SOFTWARE,
					.config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 250000,
					.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
						       PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
						       PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
					.sample_regs_user = REGS_MASK, .sample_stack_user = 64 };
	struct buf f = {}, d = {};
	u64 hdr[13] = { 0x32454c4946524550ull, 104, sizeof(attr) + 16 };
	u64 ids[2] = { 0, 0 };

	struct {
		struct perf_event_header h;
		u32 pid, tid;
		u64 start, len, pgoff;
		u32 maj, min;
		u64 ino, gen;
		u32 prot, flags;
		char path[32];
	} mm = { { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, sizeof(mm) }, PID, PID, 0x400000, 0x2000, 0,
		 8, 1, 1, 0, 5, 2, MISSING };

	put(&d, &mm, sizeof(mm));
	for (int k = 0; k < NR_KINDS; k++)
		put_sample(&d, k);
	hdr[3] = 104;				/* attrs */
	hdr[4] = sizeof(attr) + 16;
	hdr[5] = 104 + sizeof(attr) + 16;	/* data */
	hdr[6] = d.n;
	put(&f, hdr, sizeof(hdr));
	put(&f, &attr, sizeof(attr));
	put(&f, ids, sizeof(ids));
	put(&f, d.p, d.n);
	write_bytes(path, f.p, f.n);
	free(f.p);
	free(d.p);
}

struct seen {
	int n;
	u8 copy_err[NR_KINDS];
	u64 nr_regs[NR_KINDS], stack_size[NR_KINDS], regs2[NR_KINDS];
};

static int on_sample(void *ctx, const struct perf_sample *s)
{
	struct seen *sn = ctx;

	cr_assert_lt(sn->n, NR_KINDS);
	sn->copy_err[sn->n] = s->copy_err;
	sn->nr_regs[sn->n] = s->nr_regs;
	sn->stack_size[sn->n] = s->stack_size;
	sn->regs2[sn->n] = s->nr_regs == 3 ? s->regs[2] : 0;
	sn->n++;
	return 0;
}

/* the reader: each copy read within its record, or said damaged; the samples all kept */
Test(perf_unwind, reader_bounds_each_copy)
{
	char path[600];
	struct seen sn = {};
	struct perf_data_callbacks cb = { .ctx = &sn, .sample = on_sample };
	struct perf_data_stats st;

	snprintf(path, sizeof(path), "%s/dwarf.data", tmpdir());
	write_dwarf_data(path);
	cr_assert_eq(perf_data__read(path, &cb, &st), 0);
	cr_assert_eq(sn.n, NR_KINDS);
	cr_expect_eq(sn.copy_err[GOOD], PERF_COPY_OK);
	cr_expect_eq(sn.nr_regs[GOOD], 3);
	cr_expect_eq(sn.regs2[GOOD], IP, "the third register sampled is IP");
	cr_expect_eq(sn.stack_size[GOOD], 64);
	cr_expect_eq(sn.copy_err[NO_REGS], PERF_COPY_OK);
	cr_expect_eq(sn.nr_regs[NO_REGS], 0);
	cr_expect_eq(sn.copy_err[DYN_PAST_COPY], PERF_COPY_DYN_SIZE);
	cr_expect_eq(sn.stack_size[DYN_PAST_COPY], 0, "a damaged copy is not used");
	cr_expect_eq(sn.copy_err[SHORT_STACK], PERF_COPY_SHORT_STACK);
	cr_expect_eq(sn.copy_err[SHORT_REGS], PERF_COPY_SHORT_REGS);
	cr_expect_eq(sn.nr_regs[SHORT_REGS], 0);
	cr_expect_eq(sn.copy_err[EMPTY_COPY], PERF_COPY_OK);
	cr_expect_eq(sn.stack_size[EMPTY_COPY], 0);
	cr_expect_eq(sn.copy_err[KERNEL_ONLY], PERF_COPY_OK);
}

/* the importer: the good copy unwound by frame pointer from perf's registers (the object
 * mapped there cannot be read: said), the others keep their sampled frame as unreadable, and
 * are counted aloud */
Test(perf_unwind, import_unwinds_and_counts_what_it_cannot)
{
	char in[600], out[600];
	struct run_result r;
	struct profile *p;
	int good = 0, unreadable = 0, kernel_only = 0;

	snprintf(in, sizeof(in), "%s/dwarf.data", tmpdir());
	snprintf(out, sizeof(out), "%s/dwarf.prof", tmpdir());
	write_dwarf_data(in);
	cr_assert_eq(run(&r, "%s import %s -o %s", hsbpf_bin(), in, out), 0, "%s", r.err);
	cr_expect(strstr(r.err, "4 of 6 user stacks could not be unwound") &&
		  strstr(r.err, "1 without user registers") &&
		  strstr(r.err, "3 with a damaged register or stack copy") &&
		  strstr(r.err, "1 user stacks had an empty stack copy") &&
		  strstr(r.err, "cannot unwind through '" MISSING "'"), "%s", r.err);
	cr_assert_eq(profile__read(out, &p), 0);
	cr_expect_str_eq(p->meta.call_graph, "dwarf");
	cr_expect_eq(p->stats.stack_samples, NR_KINDS);
	cr_expect_eq(p->stats.unwind_objects_failed, 1);
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		const struct profile_stack *u = profile__stack(p, ss->user);
		const u64 *f = u ? profile__frames(p, u) : NULL;

		if (!u) {
			kernel_only += ss->count;
			continue;
		}
		cr_assert_geq(u->nr, 1);
		cr_expect_eq(f[0], IP);
		if (u->nr == 2 && f[1] == RA && u->end == HSBPF_STACK_NO_INFO && u->nr_fp == 1)
			good += ss->count;
		else if (u->nr == 1 && u->end == HSBPF_STACK_UNREADABLE)
			unreadable += ss->count;
	}
	/* the empty copy: the frame pointer cannot be followed past the copy either */
	cr_expect_eq(good, 1);
	cr_expect_eq(unreadable, 4, "the four copies not unwound");
	cr_expect_eq(kernel_only, 1);
	profile__free(p);
	run(&r, "%s report -i %s -g", hsbpf_bin(), out);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "# stacks (dwarf): ") && strstr(r.out, "truncated: "), "%s", r.out);
}
