/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The virtual PMU's clock: a cycle-approximate out-of-order core (ref/timing.c) that gives every
 * retired instruction a retirement cycle, and the sampling hardware that runs on that clock
 * (classic interrupts, PEBS, PDIR). Built into the reference collector, the tool and the tests;
 * the model and its parameters are described in docs/virtual-pmu.md. */
#ifndef HSBPF_REF_TIMING_H
#define HSBPF_REF_TIMING_H

#include <stddef.h>
#include <stdint.h>

/* ---- instructions, as the model sees them ---- */

enum tm_class {
	TM_ALU,		/* simple integer and vector operations, moves, nops, lea */
	TM_IMUL,	/* integer multiply */
	TM_DIV,		/* integer divide: latency from its operand size (tm_insn.size) */
	TM_FADD,	/* floating-point add, subtract, compare, convert */
	TM_FMUL,	/* floating-point multiply and fused multiply-add */
	TM_FDIV,	/* floating-point divide */
	TM_FSQRT,	/* floating-point square root */
	TM_JCC,		/* conditional branch */
	TM_JMP,		/* direct jump */
	TM_JMP_IND,	/* indirect jump */
	TM_CALL,	/* direct call */
	TM_CALL_IND,	/* indirect call */
	TM_RET,
	TM_ATOMIC,	/* locked read-modify-write, xchg with memory */
	TM_SERIAL,	/* serializing: cpuid, rdtsc, fences, pause */
	TM_SYSCALL,	/* syscall and int: the kernel's work is not in the model */
	TM_NR
};

/* register dependences: one bit per architectural register, sub-registers folded */
enum {
	TM_REG_GPR = 0,		/* rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8..r15: bits 0-15 */
	TM_REG_FLAGS = 16,
	TM_REG_VEC = 17,	/* xmm/ymm/zmm 0-15: bits 17-32 */
	TM_REG_X87 = 33,	/* the x87 stack, as one register */
};

struct tm_insn {
	uint64_t src, dst;	/* registers read and written */
	uint8_t cls;		/* enum tm_class */
	uint8_t size;		/* operand size in bytes (divides), 4 or 8 for FP (single, double) */
	uint8_t len;		/* instruction length: a call's return address */
	uint8_t pad;
};

/* decode one instruction (capstone, at translation); 0, or -1 when it cannot be decoded (it
 * is then timed as a simple ALU operation with no dependences) */
struct tm_decoder;
struct tm_decoder *tm_decoder__new(void);
void tm_decoder__free(struct tm_decoder *d);
int tm_decoder__decode(struct tm_decoder *d, const uint8_t *code, size_t size, uint64_t pc,
		       struct tm_insn *out);

/* ---- the core's parameters: one table, each with where its value comes from ---- */

struct tm_params {
	int width, rob;
	int alu, imul, div32_min, div32_max, div64_min, div64_max;
	int fadd, fmul, fdiv_min, fdiv_max, fsqrt, atomic, serial, syscall;
	int l1_lat, l2_lat, l3_lat, mem_lat;
	int l1_kb, l1_ways, l2_kb, l2_ways, l3_kb, l3_ways, prefetch;
	int bp_bits, btb_bits, ras, mispredict, taken_bubble;
	int irq_latency, pebs_arm;
};

struct tm_param_desc {
	const char *name;
	size_t off;		/* in struct tm_params */
	int min, max;
	const char *what;	/* meaning and unit */
	const char *source;	/* where the default comes from */
};

extern const struct tm_param_desc tm_param_table[];
extern const size_t tm_nr_params;

void tm_params__default(struct tm_params *p);
/* "name=value" pairs separated by commas or colons; 0, or -1 with a message in err */
int tm_params__set(struct tm_params *p, const char *assignments, char *err, size_t err_size);
int *tm_params__field(struct tm_params *p, const struct tm_param_desc *d);

/* ---- the core ---- */

struct tm_access {
	uint64_t addr;
	uint8_t store;
};

struct tm_core;
struct tm_core *tm_core__new(const struct tm_params *p, uint64_t seed);
void tm_core__free(struct tm_core *c);
/* time the next instruction in program order: its data accesses, where control went after it
 * (next_pc), and whether it transferred control there (taken). Its retirement cycle */
uint64_t tm_core__retire(struct tm_core *c, const struct tm_insn *in, uint64_t pc,
			 const struct tm_access *acc, unsigned nacc, int taken, uint64_t next_pc);
struct tm_stats {
	uint64_t insns, cycles, l1_miss, l2_miss, l3_miss, cond, mispredicts;
};
void tm_core__stats(const struct tm_core *c, struct tm_stats *s);

/* ---- the sampling hardware on that clock ---- */

enum tm_event { TM_EV_INSNS, TM_EV_BRANCHES, TM_EV_CYCLES };
enum tm_sampling {
	TM_SAMPLE_CLASSIC,	/* an interrupt irq_latency cycles after the overflow: the IP after the
				 * retirement group during which it is taken */
	TM_SAMPLE_PRECISE,	/* PEBS: the first event at least pebs_arm cycles after the overflow;
				 * the record's IP is the instruction after it (IP+1) */
	TM_SAMPLE_PRECISE_FIX,	/* PEBS with the LBR IP fix: the IP+1 of a taken branch is its target,
				 * the newest LBR entry's, and is given back to the branch */
	TM_SAMPLE_PDIR,		/* precise distribution: the instruction that overflowed */
};

/* one retired instruction, as the PMU sees it */
struct tm_retired {
	uint64_t ref;		/* the collector's name for the instruction (block, index) */
	uint64_t pc;
	uint64_t cycle;		/* retirement */
	uint8_t taken;		/* a branch that transferred control */
};

/* n samples at ref, weighing the periods that ended at them */
typedef void (*tm_emit_fn)(void *ctx, uint64_t ref, unsigned n, uint64_t weight);

struct tm_pmu;
/* mode: bit 0 prime, bit 1 random (+ uniform [0, period/8)) */
struct tm_pmu *tm_pmu__new(const struct tm_params *p, enum tm_event ev, enum tm_sampling s,
			   uint64_t period, int mode, uint64_t seed, tm_emit_fn emit, void *ctx);
void tm_pmu__free(struct tm_pmu *m);
/* feed retired instructions in order; samples are emitted with the period that ended at them */
void tm_pmu__retire(struct tm_pmu *m, const struct tm_retired *r);
/* n instructions at once, first to last, only the last of which may be a taken branch, when
 * nothing can happen among them (no overflow, nothing pending): 0, the same state as n calls
 * of tm_pmu__retire; -1 and nothing done otherwise (the caller feeds them one at a time) */
int tm_pmu__retire_run(struct tm_pmu *m, const struct tm_retired *first, const struct tm_retired *last,
		       unsigned n);

#endif /* HSBPF_REF_TIMING_H */
