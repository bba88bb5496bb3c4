// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* timing: the virtual PMU's clock (ref/timing.c) on synthetic instruction streams whose answers
 * can be worked out by hand: retirement four a cycle, a skid of width x latency, the shadow
 * of a divide, aliasing and its cure, what the decoder sees; and every parameter of the table
 * changes the result the way it should. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "timing.h"

TestSuite(timing, .timeout = 120);

#define R(n) (1ull << (n))
#define RAX 0
#define RCX 1
#define RDX 2
#define RBX 3
#define RSP 4
#define RSI 6
#define R8 8

static struct tm_insn alu(uint64_t src, uint64_t dst)
{
	return (struct tm_insn){ .src = src, .dst = dst, .cls = TM_ALU, .len = 3 };
}

/* ---- the decoder ---- */

Test(timing, decoder_classes_and_registers)
{
	static const struct {
		const char *what;
		uint8_t bytes[8];
		size_t n;
		int cls, size, len;
		uint64_t src, dst;	/* bits that must be there */
		uint64_t not_src;	/* bits that must not */
	} cases[] = {
		{ "div rcx", { 0x48, 0xf7, 0xf1 }, 3, TM_DIV, 8, 3, R(RAX) | R(RDX) | R(RCX),
		  R(RAX) | R(RDX), 0 },
		{ "div ecx", { 0xf7, 0xf1 }, 2, TM_DIV, 4, 2, R(RCX), R(RAX), 0 },
		{ "divsd xmm0, xmm1", { 0xf2, 0x0f, 0x5e, 0xc1 }, 4, TM_FDIV, 8, 4,
		  R(TM_REG_VEC) | R(TM_REG_VEC + 1), R(TM_REG_VEC), 0 },
		{ "addsd xmm0, xmm1", { 0xf2, 0x0f, 0x58, 0xc1 }, 4, TM_FADD, 8, 4, R(TM_REG_VEC + 1),
		  R(TM_REG_VEC), 0 },
		{ "imul rax, rbx", { 0x48, 0x0f, 0xaf, 0xc3 }, 4, TM_IMUL, 8, 4, R(RAX) | R(RBX), R(RAX), 0 },
		{ "xor eax, eax", { 0x31, 0xc0 }, 2, TM_ALU, 4, 2, 0, R(RAX) | R(TM_REG_FLAGS), R(RAX) },
		{ "mov rax, [rbx + 8]", { 0x48, 0x8b, 0x43, 0x08 }, 4, TM_ALU, 8, 4, R(RBX), R(RAX), R(RAX) },
		{ "add rsi, rax", { 0x48, 0x01, 0xc6 }, 3, TM_ALU, 8, 3, R(RSI) | R(RAX),
		  R(RSI) | R(TM_REG_FLAGS), 0 },
		{ "jne -2", { 0x75, 0xfe }, 2, TM_JCC, 0, 2, R(TM_REG_FLAGS), 0, 0 },
		{ "jmp rax", { 0xff, 0xe0 }, 2, TM_JMP_IND, 0, 2, R(RAX), 0, 0 },
		{ "call rel32", { 0xe8, 0, 0, 0, 0 }, 5, TM_CALL, 0, 5, R(RSP), R(RSP), 0 },
		{ "ret", { 0xc3 }, 1, TM_RET, 0, 1, R(RSP), R(RSP), 0 },
		{ "lock add [rbx], eax", { 0xf0, 0x01, 0x03 }, 3, TM_ATOMIC, 0, 3, R(RBX) | R(RAX), 0, 0 },
		{ "syscall", { 0x0f, 0x05 }, 2, TM_SYSCALL, 0, 2, 0, 0, 0 },
		{ "rdtsc", { 0x0f, 0x31 }, 2, TM_SERIAL, 0, 2, 0, R(RAX) | R(RDX), 0 },
		{ "sqrtsd xmm2, xmm3", { 0xf2, 0x0f, 0x51, 0xd3 }, 4, TM_FSQRT, 8, 4, R(TM_REG_VEC + 3),
		  R(TM_REG_VEC + 2), 0 },
		{ "mulss xmm0, xmm1", { 0xf3, 0x0f, 0x59, 0xc1 }, 4, TM_FMUL, 4, 4, R(TM_REG_VEC + 1),
		  R(TM_REG_VEC), 0 },
	};
	struct tm_decoder *d = tm_decoder__new();

	cr_assert(d);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tm_insn in;

		cr_assert_eq(tm_decoder__decode(d, cases[i].bytes, cases[i].n, 0x1000, &in), 0, "%s",
			     cases[i].what);
		cr_expect_eq(in.cls, cases[i].cls, "%s: class %d", cases[i].what, in.cls);
		cr_expect_eq(in.len, cases[i].len, "%s: length %d", cases[i].what, in.len);
		if (cases[i].size)
			cr_expect_eq(in.size, cases[i].size, "%s: size %d", cases[i].what, in.size);
		cr_expect_eq(in.src & cases[i].src, cases[i].src, "%s: reads %#llx", cases[i].what,
			     (unsigned long long)in.src);
		cr_expect_eq(in.dst & cases[i].dst, cases[i].dst, "%s: writes %#llx", cases[i].what,
			     (unsigned long long)in.dst);
		cr_expect_eq(in.src & cases[i].not_src, 0, "%s: reads %#llx", cases[i].what,
			     (unsigned long long)in.src);
	}
	{
		const uint8_t junk[] = { 0x48, 0x8b };	/* a mov cut short */
		struct tm_insn in;

		cr_expect_neq(tm_decoder__decode(d, junk, sizeof(junk), 0, &in), 0);
	}
	tm_decoder__free(d);
}

/* ---- the core, by hand ---- */

Test(timing, independent_instructions_retire_four_a_cycle)
{
	struct tm_params p;
	struct tm_core *c;
	struct tm_insn in = alu(0, 0);

	tm_params__default(&p);
	c = tm_core__new(&p, 1);
	cr_assert(c);
	/* dispatched four a cycle from cycle 0, done a cycle later: instruction k at k/4 + 1 */
	for (int k = 0; k < 40; k++)
		cr_expect_eq(tm_core__retire(c, &in, 0x1000 + 3 * k, NULL, 0, 0, 0), (uint64_t)k / 4 + 1,
			     "instruction %d", k);
	tm_core__free(c);
}

Test(timing, a_dependent_chain_takes_its_latencies)
{
	struct tm_params p;
	struct tm_core *c;
	struct tm_insn add = alu(R(RAX), R(RAX));
	struct tm_insn mul = { .src = R(RAX), .dst = R(RAX), .cls = TM_IMUL, .len = 4 };
	struct tm_insn div = { .src = R(RAX) | R(RCX), .dst = R(RAX) | R(RDX), .cls = TM_DIV,
			       .size = 8, .len = 3 };

	tm_params__default(&p);
	p.div64_min = p.div64_max = 40;
	c = tm_core__new(&p, 1);
	cr_assert(c);
	cr_expect_eq(tm_core__retire(c, &add, 0, NULL, 0, 0, 0), 1);
	cr_expect_eq(tm_core__retire(c, &mul, 0, NULL, 0, 0, 0), 4);	/* 1 + imul 3 */
	cr_expect_eq(tm_core__retire(c, &div, 0, NULL, 0, 0, 0), 44);	/* 4 + div 40 */
	cr_expect_eq(tm_core__retire(c, &add, 0, NULL, 0, 0, 0), 45);
	/* a load that misses everywhere: the first touch of its line costs mem_lat */
	{
		struct tm_access a = { .addr = 0x7000000, .store = 0 };
		struct tm_insn ld = alu(R(RBX), R(RAX));

		/* dispatched at cycle 1 (the fifth instruction), nothing to wait for */
		cr_expect_eq(tm_core__retire(c, &ld, 0, &a, 1, 0, 0), 1 + (uint64_t)p.mem_lat);
	}
	tm_core__free(c);
}

/* ---- the PMU on that clock ---- */

struct hist {
	uint64_t n[4096];
	uint64_t samples, weight;
	uint64_t first;		/* the first sample's instruction */
	int have_first;
};

static void hist_emit(void *ctx, uint64_t ref, unsigned n, uint64_t w)
{
	struct hist *h = ctx;

	if (!h->have_first) {
		h->first = ref;
		h->have_first = 1;
	}
	h->n[ref % 4096] += n;
	h->samples += n;
	h->weight += w;
}

/* a loop of `len` instructions from body(), retired through core and PMU `iters` times;
 * samples by position in the loop */
typedef struct tm_insn (*body_fn)(int k, int len);

static void run_loop(const struct tm_params *p, body_fn body, int len, long iters, enum tm_event ev,
		     enum tm_sampling s, uint64_t period, int mode, struct hist *h)
{
	struct tm_core *c = tm_core__new(p, 7);
	struct tm_pmu *m = tm_pmu__new(p, ev, s, period, mode, 11, hist_emit, h);
	struct tm_insn *ins = calloc(len, sizeof(*ins));

	cr_assert(c && m && ins);
	for (int k = 0; k < len; k++)
		ins[k] = body(k, len);
	for (long i = 0; i < iters; i++)
		for (int k = 0; k < len; k++) {
			int last = k == len - 1;
			struct tm_retired r = { .ref = k, .pc = 0x1000 + 4 * k, .taken = last };

			r.cycle = tm_core__retire(c, &ins[k], r.pc, NULL, 0, last,
						  last ? 0x1000 : r.pc + 4);
			tm_pmu__retire(m, &r);
		}
	free(ins);
	tm_pmu__free(m);
	tm_core__free(c);
}

/* div rcx; add rsi, rax (needs the quotient); six independent adds; dec rdi; jnz */
static struct tm_insn divloop(int k, int len)
{
	if (k == 0)
		return (struct tm_insn){ .src = R(RAX) | R(RDX) | R(RCX), .dst = R(RAX) | R(RDX),
					 .cls = TM_DIV, .size = 8, .len = 3 };
	if (k == 1)
		return alu(R(RSI) | R(RAX), R(RSI));
	if (k == len - 1)
		return (struct tm_insn){ .src = R(TM_REG_FLAGS), .cls = TM_JCC, .len = 2 };
	if (k == len - 2)
		return alu(R(7), R(7) | R(TM_REG_FLAGS));
	return alu(R(R8 + k), R(R8 + k));
}

/* the paper's latency bias, by hand: each iteration waits about 40 cycles on the divide and
 * retires everything else in three cycles after it, so an interrupt nearly always arrives
 * while the divide blocks retirement; it is taken when the divide retires, alone (the add
 * after it needs its result), and reports the add: classic cycles give the add ~40/43 of
 * the samples against its 1/10 of the instructions. PDIR gives each instruction its 1/10. */
Test(timing, classic_cycles_blame_the_instruction_after_a_divide)
{
	struct tm_params p;
	struct hist cl = { 0 }, pd = { 0 };
	const int len = 10;

	tm_params__default(&p);
	p.div64_min = p.div64_max = 40;
	run_loop(&p, divloop, len, 200000, TM_EV_CYCLES, TM_SAMPLE_CLASSIC, 1009, 0, &cl);
	run_loop(&p, divloop, len, 200000, TM_EV_INSNS, TM_SAMPLE_PDIR, 1009, 0, &pd);
	cr_assert_gt(cl.samples, 5000);
	cr_assert_gt(pd.samples, 1500);
	cr_expect_gt((double)cl.n[1] / cl.samples, 0.85, "classic: %.3f of the samples after the divide",
		     (double)cl.n[1] / cl.samples);
	for (int k = 0; k < len; k++)
		cr_expect(fabs((double)pd.n[k] / pd.samples - 0.1) < 0.02, "pdir: instruction %d has %.3f",
			  k, (double)pd.n[k] / pd.samples);
}

/* a straight line of independent instructions retires four a cycle; with the instructions
 * event overflowing at instruction 99 (cycle 25) and the interrupt 10 cycles later, it is
 * taken after the group of cycle 35 and reports instruction 140: a skid of 41 instructions,
 * 4 per cycle of latency and one for the group */
static struct tm_insn straight(int k, int len)
{
	(void)len;
	return alu(R(R8 + k % 8), R(R8 + k % 8) & 0);
}

Test(timing, classic_skid_is_width_times_the_interrupt_latency)
{
	static const int lat[] = { 0, 10, 25 };

	for (size_t i = 0; i < sizeof(lat) / sizeof(lat[0]); i++) {
		struct tm_params p;
		struct hist h = { 0 };

		tm_params__default(&p);
		p.irq_latency = lat[i];
		p.taken_bubble = 0;	/* one block of 4000 straight instructions */
		run_loop(&p, straight, 4000, 1, TM_EV_INSNS, TM_SAMPLE_CLASSIC, 100, 0, &h);
		cr_assert(h.have_first);
		cr_expect_eq(h.first, 99 + 4 * (uint64_t)lat[i] + 1, "latency %d: sample at %llu", lat[i],
			     (unsigned long long)h.first);
	}
	/* PDIR: the overflowing instruction itself; PEBS: the first instruction of the next
	 * retirement cycle (100) reported as the one after it (101) */
	{
		struct tm_params p;
		struct hist h = { 0 };

		tm_params__default(&p);
		p.taken_bubble = 0;
		run_loop(&p, straight, 4000, 1, TM_EV_INSNS, TM_SAMPLE_PDIR, 100, 0, &h);
		cr_expect_eq(h.first, 99);
		memset(&h, 0, sizeof(h));
		run_loop(&p, straight, 4000, 1, TM_EV_INSNS, TM_SAMPLE_PRECISE, 100, 0, &h);
		cr_expect_eq(h.first, 101);
	}
}

/* a loop of 64 instructions sampled every 64 instructions: a fixed period lands every sample
 * on one instruction; a randomized one ([64, 72)) walks over all of them */
static struct tm_insn independent(int k, int len)
{
	if (k == len - 1)
		return (struct tm_insn){ .cls = TM_JMP, .len = 2 };
	return alu(0, 0);
}

Test(timing, randomized_periods_break_aliasing)
{
	struct tm_params p;
	struct hist fx = { 0 }, rd = { 0 };
	int distinct_fx = 0, distinct_rd = 0;
	uint64_t max_rd = 0;

	tm_params__default(&p);
	run_loop(&p, independent, 64, 20000, TM_EV_INSNS, TM_SAMPLE_PDIR, 64, 0, &fx);
	run_loop(&p, independent, 64, 20000, TM_EV_INSNS, TM_SAMPLE_PDIR, 64, 2, &rd);
	for (int k = 0; k < 64; k++) {
		distinct_fx += fx.n[k] > 0;
		distinct_rd += rd.n[k] > 0;
		if (rd.n[k] > max_rd)
			max_rd = rd.n[k];
	}
	cr_expect_eq(distinct_fx, 1, "fixed: %d instructions sampled", distinct_fx);
	cr_expect_eq(distinct_rd, 64, "random: %d instructions sampled", distinct_rd);
	cr_expect_lt((double)max_rd / rd.samples, 2.0 / 64, "random: the most sampled has %.3f",
		     (double)max_rd / rd.samples);
	/* each sample weighs its own period: the mean of [64, 72) is 67.5 */
	cr_expect(fabs((double)rd.weight / rd.samples - 67.5) < 0.5, "mean period %.2f",
		  (double)rd.weight / rd.samples);
	cr_expect_eq(fx.weight, fx.samples * 64);
}

/* the LBR IP fix gives a PEBS record of a taken branch back to the branch: in a loop of three
 * instructions and a jump, PEBS armed at once records the instruction after the overflowing
 * one and reports the one after that, so the jump's records show on the loop's first
 * instruction (a quarter of them); with the fix they are the jump's */
Test(timing, the_lbr_fix_undoes_ip_plus_one_at_taken_branches)
{
	struct tm_params p;
	struct hist pr = { 0 }, fix = { 0 };

	tm_params__default(&p);
	p.pebs_arm = 0;
	run_loop(&p, independent, 4, 100000, TM_EV_INSNS, TM_SAMPLE_PRECISE, 1009, 1, &pr);
	run_loop(&p, independent, 4, 100000, TM_EV_INSNS, TM_SAMPLE_PRECISE_FIX, 1009, 1, &fix);
	cr_assert_gt(pr.samples, 300);
	cr_expect_eq(pr.samples, fix.samples);
	cr_expect(fabs((double)pr.n[0] / pr.samples - 0.25) < 0.03, "precise: %.3f on the first",
		  (double)pr.n[0] / pr.samples);
	cr_expect_eq(fix.n[0], 0, "fixed: %llu on the first", (unsigned long long)fix.n[0]);
	cr_expect(fabs((double)fix.n[3] / fix.samples - 0.5) < 0.03, "fixed: %.3f on the jump",
		  (double)fix.n[3] / fix.samples);
}

/* ---- every parameter is used: changing it changes the result as it should ---- */

enum scenario {
	SC_INDEP, SC_CHAIN, SC_LOAD_CHAIN, SC_SWEEP, SC_CONFLICT, SC_PATTERN, SC_RANDOM_BRANCHES,
	SC_INDIRECT, SC_RECURSION, SC_JUMPS, SC_MISSES,
};
enum metric { M_CYCLES, M_MISPREDICTS, M_FIRST_SAMPLE };

struct case_def {
	char param[16];		/* not a pointer: Criterion hands parameters to a new process */
	int value;
	enum scenario sc;
	int cls;		/* SC_CHAIN: the class chained; SC_SWEEP/CONFLICT: unused */
	int size;
	uint64_t bytes, stride;	/* SC_SWEEP: region and stride; SC_CONFLICT: lines and stride */
	enum metric metric;
	int sampling;		/* M_FIRST_SAMPLE */
	int dir;		/* +1: the metric grows, -1: it shrinks */
};

static double run_case(const struct tm_params *p, const struct case_def *c)
{
	struct tm_core *core = tm_core__new(p, 3);
	struct hist *h = calloc(1, sizeof(*h));
	struct tm_pmu *m = tm_pmu__new(p, TM_EV_INSNS, c->sampling, 100, 0, 5, hist_emit, h);
	struct tm_stats st;
	long steps = c->sc == SC_SWEEP || c->sc == SC_CONFLICT ? 0 : 50000;
	uint64_t lcg = 12345, addr = 0;
	double v;

	cr_assert(core && m && h);
	if (c->sc == SC_SWEEP)
		steps = 2 * (c->bytes / c->stride);
	if (c->sc == SC_CONFLICT)
		steps = 20000;
	if (c->sc == SC_INDEP)
		steps = 4000;
	for (long i = 0; i < steps; i++) {
		struct tm_insn in = alu(0, 0);
		struct tm_access a = { 0 };
		unsigned na = 0;
		int taken = 0;
		uint64_t pc = 0x1000 + 4 * (i % 64), next = pc + 4;

		switch (c->sc) {
		case SC_INDEP:
			pc = 0x1000 + 4 * i;
			next = pc + 4;
			break;
		case SC_CHAIN:
			in = (struct tm_insn){ .src = R(RAX) | R(RCX), .dst = R(RAX), .cls = c->cls,
					       .size = c->size, .len = 4 };
			break;
		case SC_LOAD_CHAIN:
			in = alu(R(RBX), R(RBX));
			a.addr = 0x10000;
			na = 1;
			break;
		case SC_SWEEP:
			in = alu(R(RBX), R(RBX));
			a.addr = 0x40000000 + addr;
			addr = (addr + c->stride) % c->bytes;
			na = 1;
			break;
		case SC_CONFLICT:
			in = alu(R(RBX), R(RBX));
			a.addr = 0x40000000 + (i % c->bytes) * c->stride;
			na = 1;
			break;
		case SC_PATTERN:	/* one branch: T T T N T N N N, again and again */
			pc = 0x2000;
			in = (struct tm_insn){ .src = R(TM_REG_FLAGS), .cls = TM_JCC, .len = 2 };
			taken = (0x17 >> (i % 8)) & 1;
			next = taken ? 0x1800 : pc + 2;
			break;
		case SC_RANDOM_BRANCHES:	/* a coin-flip branch among adds */
			if (i % 4 == 3) {
				in = (struct tm_insn){ .src = R(TM_REG_FLAGS), .cls = TM_JCC, .len = 2 };
				lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
				taken = lcg >> 63;
				next = taken ? 0x1000 : pc + 2;
			}
			break;
		case SC_INDIRECT:	/* 256 indirect jumps, each always to its own target */
			pc = 0x1000 + 16 * (i % 256);
			in = (struct tm_insn){ .src = R(RAX), .cls = TM_JMP_IND, .len = 2 };
			taken = 1;
			next = 0x100000 + 64 * (i % 256);
			break;
		case SC_RECURSION: {	/* 24 calls deep, then 24 returns */
			int k = i % 48;

			taken = 1;
			if (k < 24) {
				pc = 0x3000 + 8 * k;
				in = (struct tm_insn){ .src = R(RSP), .dst = R(RSP), .cls = TM_CALL, .len = 5 };
				next = 0x3000 + 8 * (k + 1);
			} else {
				int depth = 47 - k;	/* returning from the call at depth */

				pc = 0x9000;
				in = (struct tm_insn){ .src = R(RSP), .dst = R(RSP), .cls = TM_RET, .len = 1 };
				next = 0x3000 + 8 * depth + 5;
			}
			break;
		}
		case SC_JUMPS:
			in = (struct tm_insn){ .cls = TM_JMP, .len = 2 };
			taken = 1;
			next = pc + 64;
			break;
		case SC_MISSES:	/* a load that misses every 50 instructions, nothing waits on it */
			if (i % 50 == 0) {
				in = alu(0, R(RDX));
				a.addr = 0x80000000ull + (uint64_t)i * 4096;
				na = 1;
			}
			break;
		}
		{
			struct tm_retired r = { .ref = i, .pc = pc, .taken = taken };

			r.cycle = tm_core__retire(core, &in, pc, &a, na, taken, next);
			tm_pmu__retire(m, &r);
		}
	}
	tm_core__stats(core, &st);
	v = c->metric == M_CYCLES ? (double)st.cycles : c->metric == M_MISPREDICTS ? (double)st.mispredicts :
	    h->have_first ? (double)h->first : -1;
	tm_pmu__free(m);
	tm_core__free(core);
	free(h);
	return v;
}

#define CHAIN(p, v, cls, size) { p, v, SC_CHAIN, cls, size, 0, 0, M_CYCLES, 0, +1 }
#define SWEEP(p, v, bytes, stride, dir) { p, v, SC_SWEEP, 0, 0, bytes, stride, M_CYCLES, 0, dir }
#define CONFLICT(p, v, lines, stride) { p, v, SC_CONFLICT, 0, 0, lines, stride, M_CYCLES, 0, -1 }
#define SC(p, v, sc, metric, dir) { p, v, sc, 0, 0, 0, 0, metric, 0, dir }

static const struct case_def param_cases[] = {
	SC("width", 8, SC_INDEP, M_CYCLES, -1),
	SC("rob", 16, SC_MISSES, M_CYCLES, +1),
	CHAIN("alu", 2, TM_ALU, 8),
	CHAIN("imul", 6, TM_IMUL, 8),
	CHAIN("div32_min", 29, TM_DIV, 4),
	{ "div32_max", 22, SC_CHAIN, TM_DIV, 4, 0, 0, M_CYCLES, 0, -1 },
	CHAIN("div64_min", 96, TM_DIV, 8),
	{ "div64_max", 32, SC_CHAIN, TM_DIV, 8, 0, 0, M_CYCLES, 0, -1 },
	CHAIN("fadd", 6, TM_FADD, 8),
	CHAIN("fmul", 10, TM_FMUL, 8),
	CHAIN("fdiv_min", 20, TM_FDIV, 8),
	{ "fdiv_max", 10, SC_CHAIN, TM_FDIV, 8, 0, 0, M_CYCLES, 0, -1 },
	CHAIN("fsqrt", 30, TM_FSQRT, 8),
	CHAIN("atomic", 40, TM_ATOMIC, 4),
	CHAIN("serial", 60, TM_SERIAL, 0),
	CHAIN("syscall", 300, TM_SYSCALL, 0),
	SC("l1_lat", 8, SC_LOAD_CHAIN, M_CYCLES, +1),
	SWEEP("l2_lat", 24, 128 << 10, 256, +1),	/* misses L1, fits L2 */
	SWEEP("l3_lat", 72, 1 << 20, 256, +1),		/* misses L2, fits L3 */
	SWEEP("mem_lat", 480, 32 << 20, 256, +1),	/* misses L3 */
	SWEEP("l1_kb", 64, 48 << 10, 64, -1),		/* 48 KiB: fits a 64 KiB L1 */
	CONFLICT("l1_ways", 16, 12, 4096),		/* 12 lines in one L1 set */
	SWEEP("l2_kb", 512, 384 << 10, 64, -1),
	CONFLICT("l2_ways", 16, 12, 32768),		/* 12 lines in one L2 set */
	SWEEP("l3_kb", 16384, 12 << 20, 64, -1),
	CONFLICT("l3_ways", 32, 24, 512 << 10),		/* 24 lines in one L3 set */
	SWEEP("prefetch", 0, 16 << 20, 64, +1),		/* a stream: every other line prefetched */
	SC("bp_bits", 1, SC_PATTERN, M_MISPREDICTS, +1),
	SC("btb_bits", 2, SC_INDIRECT, M_MISPREDICTS, +1),
	SC("ras", 32, SC_RECURSION, M_MISPREDICTS, -1),
	SC("mispredict", 40, SC_RANDOM_BRANCHES, M_CYCLES, +1),
	SC("taken_bubble", 3, SC_JUMPS, M_CYCLES, +1),
	{ "irq_latency", 64, SC_INDEP, 0, 0, 0, 0, M_FIRST_SAMPLE, TM_SAMPLE_CLASSIC, +1 },
	{ "pebs_arm", 20, SC_INDEP, 0, 0, 0, 0, M_FIRST_SAMPLE, TM_SAMPLE_PRECISE, +1 },
};

ParameterizedTestParameters(timing, every_parameter_changes_the_result)
{
	return cr_make_param_array(struct case_def, param_cases,
				   sizeof(param_cases) / sizeof(param_cases[0]));
}

ParameterizedTest(const struct case_def *c, timing, every_parameter_changes_the_result)
{
	struct tm_params p, q;
	char assign[64], err[256];
	double base, changed;

	tm_params__default(&p);
	q = p;
	snprintf(assign, sizeof(assign), "%s=%d", c->param, c->value);
	cr_assert_eq(tm_params__set(&q, assign, err, sizeof(err)), 0, "%s", err);
	cr_assert(memcmp(&p, &q, sizeof(p)), "%s=%d is the default", c->param, c->value);
	base = run_case(&p, c);
	changed = run_case(&q, c);
	if (c->dir > 0)
		cr_expect_gt(changed, base, "%s=%d: %.0f, default %.0f", c->param, c->value, changed, base);
	else
		cr_expect_lt(changed, base, "%s=%d: %.0f, default %.0f", c->param, c->value, changed, base);
}

/* the cases above cover the whole table, and the table documents every parameter */
Test(timing, the_parameter_table_is_complete)
{
	struct tm_params p;
	char err[256];

	tm_params__default(&p);
	cr_expect_eq(tm_nr_params * sizeof(int), sizeof(struct tm_params),
		     "%zu parameters in the table, struct has %zu", tm_nr_params,
		     sizeof(struct tm_params) / sizeof(int));
	for (size_t i = 0; i < tm_nr_params; i++) {
		const struct tm_param_desc *d = &tm_param_table[i];
		int v = *tm_params__field(&p, d), tested = 0;

		for (size_t k = 0; k < sizeof(param_cases) / sizeof(param_cases[0]); k++)
			tested |= !strcmp(param_cases[k].param, d->name);
		cr_expect(tested, "%s has no test that it is used", d->name);
		cr_expect(d->what[0] && d->source[0], "%s: undocumented", d->name);
		cr_expect(v >= d->min && v <= d->max, "%s: default %d outside %d..%d", d->name, v, d->min,
			  d->max);
	}
	cr_expect_neq(tm_params__set(&p, "nosuch=1", err, sizeof(err)), 0);
	cr_expect(strstr(err, "unknown"), "%s", err);
	cr_expect_neq(tm_params__set(&p, "width=0", err, sizeof(err)), 0);
	cr_expect_neq(tm_params__set(&p, "width", err, sizeof(err)), 0);
	cr_expect_neq(tm_params__set(&p, "div64_min=100", err, sizeof(err)), 0, "min above max");
	cr_expect_eq(tm_params__set(&p, "width=2:rob=64,alu=2", err, sizeof(err)), 0, "%s", err);
	cr_expect(p.width == 2 && p.rob == 64 && p.alu == 2);
}
