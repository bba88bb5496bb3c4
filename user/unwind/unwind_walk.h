/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The kernel's unwinder (bpf/stacks.bpf.h) in user space, rule for rule, over the same tables
 * (user/unwind/unwind_table.h): for stacks that were copied rather than unwound (perf record
 * --call-graph dwarf's register and stack copies) and for scoring unwinders instruction by
 * instruction against exact stacks. Where the kernel reads the task's memory, this reads
 * through the caller's read function. */
#ifndef HSBPF_UNWIND_WALK_H
#define HSBPF_UNWIND_WALK_H

#include "hsbpf.h"
#include "unwind/unwind_table.h"
#include "lib/util.h"

struct unwind_walk_ops {
	/* the table of the object mapped at pc, and its bias (pc - bias is the ELF address):
	 * 0; -ENOENT for a pc in no known mapping; -ENODATA for a mapping without a table */
	int (*find)(void *ctx, u64 pc, const struct unwind_table **t, u64 *bias);
	/* the 8 bytes at addr of the stack (or any user memory); false when unreadable */
	bool (*read)(void *ctx, u64 addr, u64 *val);
	void *ctx;
};

/* the sampled frame's registers */
struct unwind_walk_regs {
	u64 ip;
	u64 gpr[HSBPF_DWARF_LAST_GPR + 1];	/* DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 */
};

struct unwind_walk_opts {
	bool fp;		/* frame pointers only, as --call-graph fp */
	u32 max_frames;		/* 0: HSBPF_MAX_FRAMES */
	u64 stack_top;		/* the process's first stack pointer (mm->start_stack), 0 unknown */
	bool in_syscall;	/* regs.ip follows a syscall instruction (a sample in the kernel's
				 * syscall): looked up as a return address is */
};

struct unwind_walk_result {
	u32 nr;			/* frames in ips, the sampled pc first */
	u16 end;		/* HSBPF_STACK_* */
	u16 nr_fp;		/* frames found by frame pointer, for lack of a table */
};

/* walk from regs into ips (room for HSBPF_MAX_FRAMES), as the kernel would have */
void unwind_walk__stack(const struct unwind_walk_ops *ops, const struct unwind_walk_regs *regs,
			const struct unwind_walk_opts *o, u64 *ips, struct unwind_walk_result *res);

#endif /* HSBPF_UNWIND_WALK_H */
