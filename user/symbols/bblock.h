/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Basic blocks of an ELF object, from its own code: every function disassembled (capstone),
 * leaders at function entries, at direct branch targets and after every control transfer
 * (calls included). Functions come from the symbol tables or, for stripped objects, from the
 * exception frames (.eh_frame). Lookup from an address to its block in O(log n). */
#ifndef HSBPF_BBLOCK_H
#define HSBPF_BBLOCK_H

#include "symbols/elf_image.h"

struct bblock {
	u64 start;		/* first instruction */
	u64 end;		/* one past the last byte */
	u64 last;		/* last instruction */
	u32 ninsns;
	u32 func;		/* index in the table's function list */
};

struct bblock_func {
	u64 start, end;
	char name[64];		/* symbol, or "func_<addr>" from exception frames */
};

struct bblock_table {
	struct bblock *blocks;	/* sorted by start */
	size_t nr, cap;
	struct bblock_func *funcs;
	size_t nr_funcs, cap_funcs;
	u64 *insns;		/* every decoded instruction address, sorted */
	size_t nr_insns, cap_insns;
	bool from_eh_frame;	/* no symbols: functions from exception frames */
};

/* NULL with errno set */
struct bblock_table *bblock_table__build(const struct elf_image *img);
void bblock_table__free(struct bblock_table *t);
/* the block holding vaddr, or NULL */
const struct bblock *bblock_table__find(const struct bblock_table *t, u64 vaddr);
/* the index of vaddr among the block's instructions, via the instruction list; -1 if none */
long bblock_table__insn_index(const struct bblock_table *t, u64 vaddr);

#endif
