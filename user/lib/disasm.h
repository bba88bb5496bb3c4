/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* x86-64 instruction decoding through capstone: length, control-flow class, direct target,
 * and text for annotate. */
#ifndef HSBPF_DISASM_H
#define HSBPF_DISASM_H

#include "lib/util.h"

enum insn_kind {
	INSN_PLAIN,		/* falls through */
	INSN_COND_JUMP,		/* jcc, jrcxz, loop* */
	INSN_JUMP,		/* direct jmp */
	INSN_INDIRECT_JUMP,
	INSN_CALL,		/* direct call */
	INSN_INDIRECT_CALL,
	INSN_RET,
	INSN_SYSCALL,		/* syscall, int, sysenter */
	INSN_HALT,		/* hlt, ud2: no successor */
	INSN_INVALID,		/* bytes capstone cannot decode */
};

struct insn_info {
	u32 size;
	enum insn_kind kind;
	bool rep_string;	/* rep/repe/repne movs, stos, lods, cmps, scas, ins, outs */
	u64 target;		/* direct jumps and calls */
	char text[200];		/* "mnemonic operands" */
};

struct disasm;

/* capstone, loaded on first need: 0, or -ENOENT (said once, with how to install it) */
int disasm__load(void);
/* NULL with errno: ENOENT without capstone, ENOMEM */
struct disasm *disasm__new(void);
void disasm__free(struct disasm *d);
/* decode one instruction at vaddr from code[0..size); 0 or -EINVAL (info->kind INVALID) */
int disasm__one(struct disasm *d, const u8 *code, size_t size, u64 vaddr, struct insn_info *info);
/* does control leave the straight line after this instruction? */
bool insn__ends_block(enum insn_kind k);

#endif /* HSBPF_DISASM_H */
