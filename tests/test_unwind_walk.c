// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The user-space unwinder on a hand-made table and stack, where every frame is known: each
 * rule form the kernel follows, and each way a stack ends. */
#include <criterion/criterion.h>
#include <string.h>
#include "unwind/unwind_walk.h"

TestSuite(unwind_walk);

/* code at 0x400000 (bias 0x400000: ELF address 0), three functions:
 *   0x000-0x010 leaf:  frameless, CFA = rsp + 8
 *   0x010-0x030 mid:   push rbp at 0x10 (CFA = rsp + 16 from 0x11), rbp saved at CFA - 16;
 *                      from 0x14 CFA = rbp + 16
 *   0x030-0x040 start: the outermost frame (return address undefined)
 *   0x040-0x04f plt:   ld's PLT rule
 *   0x04f-0x060 sig:   a signal trampoline (from the byte before it, as glibc's FDE for
 *                      __restore_rt): CFA = *(rsp + 160), caller's pc at CFA - 8 */
#define BIAS 0x400000ull
static struct unwind_row rows[] = {
	{ .pc = 0x00, .cfa = HSBPF_CFA_REG, .cfa_reg = HSBPF_DWARF_RSP, .cfa_off = 8, .saved = HSBPF_SAVED_CFA, .ra_off = -8 },
	{ .pc = 0x10, .cfa = HSBPF_CFA_REG, .cfa_reg = HSBPF_DWARF_RSP, .cfa_off = 8, .saved = HSBPF_SAVED_CFA, .ra_off = -8 },
	{ .pc = 0x11, .cfa = HSBPF_CFA_REG, .cfa_reg = HSBPF_DWARF_RSP, .cfa_off = 16,
	  .saved = HSBPF_SAVED_CFA | HSBPF_SAVED_CFA << 4, .ra_off = -8, .rbp_off = -16 },
	{ .pc = 0x14, .cfa = HSBPF_CFA_REG, .cfa_reg = HSBPF_DWARF_RBP, .cfa_off = 16,
	  .saved = HSBPF_SAVED_CFA | HSBPF_SAVED_CFA << 4, .ra_off = -8, .rbp_off = -16 },
	{ .pc = 0x30, .cfa = HSBPF_CFA_END },
	{ .pc = 0x40, .cfa = HSBPF_CFA_PLT, .cfa_off = 11, .saved = HSBPF_SAVED_CFA, .ra_off = -8 },
	{ .pc = 0x4f, .cfa = HSBPF_CFA_REG, .cfa_reg = HSBPF_DWARF_RSP, .cfa_off = 160, .flags = HSBPF_ROW_DEREF | HSBPF_ROW_SIGNAL,
	  .saved = HSBPF_SAVED_CFA, .ra_off = -8 },
	{ .pc = 0x60, .cfa = HSBPF_CFA_NONE },
};
static struct unwind_page page = { .first = 0, .nr = sizeof(rows) / sizeof(rows[0]) };
static struct unwind_table table = { .base = 0, .end = 0x1000, .rows = rows, .nr_rows = sizeof(rows) / sizeof(rows[0]),
				     .pages = &page, .nr_pages = 1 };

/* the stack: 64 words from 0x7000 */
#define STACK 0x7000ull
static u64 mem[64];
static bool have_table = true;

static int find(void *ctx, u64 pc, const struct unwind_table **t, u64 *bias)
{
	(void)ctx;
	if (pc < BIAS || pc >= BIAS + 0x1000)
		return -ENOENT;
	if (!have_table)
		return -ENODATA;
	*t = &table;
	*bias = BIAS;
	return 0;
}

static bool readmem(void *ctx, u64 addr, u64 *val)
{
	(void)ctx;
	if (addr < STACK || addr - STACK > sizeof(mem) - 8 || addr & 7)
		return false;
	*val = mem[(addr - STACK) / 8];
	return true;
}

static const struct unwind_walk_ops ops = { .find = find, .read = readmem };
#define W(addr) mem[((addr) - STACK) / 8]

static void walk(u64 ip, u64 sp, u64 bp, bool fp, u64 *ips, struct unwind_walk_result *res)
{
	struct unwind_walk_regs regs = { .ip = ip };
	struct unwind_walk_opts o = { .fp = fp };

	regs.gpr[HSBPF_DWARF_RSP] = sp;
	regs.gpr[HSBPF_DWARF_RBP] = bp;
	unwind_walk__stack(&ops, &regs, &o, ips, res);
}

static void init(void)
{
	memset(mem, 0, sizeof(mem));
	have_table = true;
}

/* leaf (frameless) <- mid (rbp frame) <- start: complete, with the call in mid found at ra - 1 */
Test(unwind_walk, cfa_by_rsp_then_rbp_to_the_outermost_frame, .init = init)
{
	u64 ips[HSBPF_MAX_FRAMES];
	struct unwind_walk_result res;

	/* leaf at 0x400004, sp 0x7010: [0x7010] = return into mid at 0x400020 */
	W(0x7010) = BIAS + 0x20;
	/* mid's frame: rbp = 0x7020, [0x7020] = start's rbp 0x7777, [0x7028] = return into start */
	W(0x7020) = 0x7777;
	W(0x7028) = BIAS + 0x35;
	walk(BIAS + 0x4, 0x7010, 0x7020, false, ips, &res);
	cr_assert_eq(res.nr, 3);
	cr_expect_eq(ips[0], BIAS + 0x4);
	cr_expect_eq(ips[1], BIAS + 0x20);
	cr_expect_eq(ips[2], BIAS + 0x35);
	cr_expect_eq(res.end, HSBPF_STACK_COMPLETE);
	cr_expect_eq(res.nr_fp, 0);
}

/* in mid's prologue, just after push rbp: CFA = rsp + 16, not yet rbp-based */
Test(unwind_walk, prologue_after_push, .init = init)
{
	u64 ips[HSBPF_MAX_FRAMES];
	struct unwind_walk_result res;

	W(0x7008) = 0x5555;		/* the pushed rbp */
	W(0x7010) = BIAS + 0x31;	/* return into start */
	walk(BIAS + 0x11, 0x7008, 0x1234, false, ips, &res);
	cr_assert_eq(res.nr, 2);
	cr_expect_eq(ips[1], BIAS + 0x31);
	cr_expect_eq(res.end, HSBPF_STACK_COMPLETE);
}

/* a PLT stub: rsp + 8 before the push at offset 11 of the 16-byte entry, rsp + 16 after */
Test(unwind_walk, plt_rule, .init = init)
{
	u64 ips[HSBPF_MAX_FRAMES];
	struct unwind_walk_result res;

	W(0x7010) = BIAS + 0x32;
	walk(BIAS + 0x46, 0x7010, 0, false, ips, &res);		/* (0x46 & 15) = 6 < 11 */
	cr_assert_eq(res.nr, 2);
	cr_expect_eq(ips[1], BIAS + 0x32);
	W(0x7018) = BIAS + 0x33;
	walk(BIAS + 0x4c, 0x7010, 0, false, ips, &res);		/* (0x4c & 15) = 12 >= 11 */
	cr_assert_eq(res.nr, 2);
	cr_expect_eq(ips[1], BIAS + 0x33);
}

/* a signal frame: the CFA read from the frame; the interrupted pc is looked up as itself (not
 * pc - 1), and may sit lower than the handler's stack */
Test(unwind_walk, signal_frame, .init = init)
{
	u64 ips[HSBPF_MAX_FRAMES];
	struct unwind_walk_result res;

	/* the handler is leaf (0x400002), returning to the trampoline at 0x400050 */
	W(0x7080) = BIAS + 0x50;
	/* the trampoline's sp 0x7088: [0x7088 + 160] = the interrupted sp's CFA 0x7010 */
	W(0x7088 + 160) = 0x7010;
	/* at 0x7008: the interrupted pc, the first instruction of leaf at 0x400000 */
	W(0x7008) = BIAS + 0x0;
	/* leaf at its first instruction: [sp 0x7008]... its CFA is rsp + 8 = 0x7010 */
	W(0x7010) = BIAS + 0x36;
	walk(BIAS + 0x2, 0x7080, 0, false, ips, &res);
	cr_assert_eq(res.nr, 4, "%u frames", res.nr);
	cr_expect_eq(ips[1], BIAS + 0x50);
	cr_expect_eq(ips[2], BIAS + 0x0);
	cr_expect_eq(ips[3], BIAS + 0x36);
	cr_expect_eq(res.end, HSBPF_STACK_COMPLETE);
}

Test(unwind_walk, end_reasons, .init = init)
{
	u64 ips[HSBPF_MAX_FRAMES];
	struct unwind_walk_result res;

	/* no mapping, no frame pointer: "no mapping" with the sampled pc */
	walk(0x100, 0x7010, 0, false, ips, &res);
	cr_expect_eq(res.nr, 1);
	cr_expect_eq(res.end, HSBPF_STACK_NO_MAPPING);
	/* no mapping, crossed by frame pointer, counted */
	W(0x7020) = 0;
	W(0x7028) = BIAS + 0x37;
	walk(0x100, 0x7010, 0x7020, false, ips, &res);
	cr_expect_eq(res.nr, 2);
	cr_expect_eq(res.nr_fp, 1);
	cr_expect_eq(ips[1], BIAS + 0x37);
	cr_expect_eq(res.end, HSBPF_STACK_COMPLETE);
	/* a mapping without a table */
	have_table = false;
	walk(BIAS + 4, 0x7010, 0, false, ips, &res);
	cr_expect_eq(res.end, HSBPF_STACK_NO_INFO);
	have_table = true;
	/* a row without information */
	walk(BIAS + 0x60, 0x7010, 0, false, ips, &res);
	cr_expect_eq(res.end, HSBPF_STACK_NO_INFO);
	/* unreadable stack */
	walk(BIAS + 4, 0x9000, 0, false, ips, &res);
	cr_expect_eq(res.end, HSBPF_STACK_UNREADABLE);
	/* a CFA below the stack pointer (rbp below rsp): a loop */
	walk(BIAS + 0x20, 0x7040, 0x7000, false, ips, &res);
	cr_expect_eq(res.nr, 1);
	cr_expect_eq(res.end, HSBPF_STACK_LOOP);
	/* frameless recursion: leaf, leaf, leaf, then a zero return address ends it */
	W(0x7010) = BIAS + 0x5;
	W(0x7018) = BIAS + 0x5;
	walk(BIAS + 4, 0x7010, 0, false, ips, &res);
	cr_expect_eq(res.nr, 3);
	cr_expect_eq(res.end, HSBPF_STACK_COMPLETE);
}

Test(unwind_walk, depth_cap_and_frame_pointers, .init = init)
{
	u64 ips[HSBPF_MAX_FRAMES];
	struct unwind_walk_result res;
	struct unwind_walk_regs regs = { .ip = BIAS + 4 };
	struct unwind_walk_opts o = { .max_frames = 3 };

	/* a leaf calling itself forever up the stack */
	for (int i = 2; i < 64; i++)
		mem[i] = BIAS + 0x5;
	regs.gpr[HSBPF_DWARF_RSP] = STACK + 16;
	unwind_walk__stack(&ops, &regs, &o, ips, &res);
	cr_expect_eq(res.nr, 3);
	cr_expect_eq(res.end, HSBPF_STACK_DEPTH);

	/* fp: the chain [bp] -> caller's bp, [bp + 8] -> return address, until it ends */
	init();
	W(0x7020) = 0x7040;
	W(0x7028) = BIAS + 0x21;
	W(0x7040) = 0;
	W(0x7048) = BIAS + 0x31;
	walk(BIAS + 4, 0x7010, 0x7020, true, ips, &res);
	cr_assert_eq(res.nr, 3);
	cr_expect_eq(ips[1], BIAS + 0x21);
	cr_expect_eq(ips[2], BIAS + 0x31);
	cr_expect_eq(res.end, HSBPF_STACK_FP_END);
	cr_expect_eq(res.nr_fp, 2);
}

/* at the process's first stack pointer the sampled frame is the outermost (ld.so's _start has
 * no unwind information to say so) */
Test(unwind_walk, the_first_stack_pointer_ends_the_stack, .init = init)
{
	u64 ips[HSBPF_MAX_FRAMES];
	struct unwind_walk_result res;
	struct unwind_walk_regs regs = { .ip = BIAS + 0x60 };	/* a row without information */
	struct unwind_walk_opts o = { .stack_top = 0x7100 };

	regs.gpr[HSBPF_DWARF_RSP] = 0x7100;
	unwind_walk__stack(&ops, &regs, &o, ips, &res);
	cr_expect_eq(res.nr, 1);
	cr_expect_eq(res.end, HSBPF_STACK_COMPLETE);
	o.stack_top = 0;
	unwind_walk__stack(&ops, &regs, &o, ips, &res);
	cr_expect_eq(res.end, HSBPF_STACK_NO_INFO);
}

/* a sample in a syscall: its pc follows the syscall instruction, which may end the function's
 * rules (glibc's __restore_rt): looked up at pc - 1, as a return address */
Test(unwind_walk, a_pc_after_a_syscall_is_looked_up_before_it, .init = init)
{
	u64 ips[HSBPF_MAX_FRAMES];
	struct unwind_walk_result res;
	struct unwind_walk_regs regs = { .ip = BIAS + 0x4f };
	struct unwind_walk_opts o = { .in_syscall = true };

	regs.gpr[HSBPF_DWARF_RSP] = 0x7010;
	W(0x7018) = BIAS + 0x33;	/* the PLT's rule at 0x4e: CFA = rsp + 16 */
	unwind_walk__stack(&ops, &regs, &o, ips, &res);
	cr_assert_eq(res.nr, 2);
	cr_expect_eq(ips[1], BIAS + 0x33);
	cr_expect_eq(res.end, HSBPF_STACK_COMPLETE);
	/* the same pc sampled in user mode: the signal trampoline's rule at 0x4f */
	o.in_syscall = false;
	unwind_walk__stack(&ops, &regs, &o, ips, &res);
	cr_expect_neq(res.nr == 2 && ips[1] == BIAS + 0x33, true);
}
