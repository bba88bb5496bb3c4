/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Unwind tables: an ELF object's call-frame information (.eh_frame, and .debug_frame where it
 * covers code .eh_frame does not) turned into the compact rows the kernel's unwinder follows
 * (struct unwind_row, bpf/hsbpf.h), with a page index so that a lookup searches a few rows. */
#ifndef HSBPF_UNWIND_TABLE_H
#define HSBPF_UNWIND_TABLE_H

#include <gelf.h>
#include "hsbpf.h"
#include "lib/util.h"

struct unwind_table_stats {
	u32 fdes;			/* FDEs turned into rows */
	u32 fdes_debug_frame;		/* ... of them from .debug_frame */
	u32 fdes_bad;			/* FDEs whose rules could not be read */
	u32 rows_unsupported;		/* rules the kernel's unwinder cannot follow (kept as no info) */
	u32 rows_leaf_only;		/* rules it follows in the sampled frame only (other registers) */
	u32 rbp_unsupported;		/* rbp rules it cannot follow (rbp taken as lost) */
	u32 eh_install_marked;		/* libgcc's context installs marked stale (mark_eh_install) */
	u32 eh_install_unmarked;	/* ... found but not marked (no capstone, no call found) */
	u32 syscall_tails;		/* glibc's clone tails given their entry rule (syscall_tail) */
};

/* an executable PT_LOAD segment: how file offsets become ELF addresses */
struct unwind_segment {
	u64 offset, vaddr, filesz;
};

#define UNWIND_MAX_SEGMENTS	8

struct unwind_table {
	struct unwind_segment segs[UNWIND_MAX_SEGMENTS];	/* executable PT_LOAD segments */
	int nr_segs;
	u64 base;			/* ELF address of row pc 0 and of page 0, page aligned */
	u64 end;			/* first address after the code the rows cover */
	struct unwind_row *rows;	/* sorted by pc; every address in [base, end) has one in force */
	size_t nr_rows;
	struct unwind_page *pages;	/* one per 4 KB of [base, end); .first indexes rows */
	struct unwind_subpage *subs;	/* one per page (NULL in a hand-made table: pages alone) */
	size_t nr_pages;
	struct unwind_table_stats st;
};

/* the table of an ELF object from its own call-frame information and, when debug is not NULL,
 * the .debug_frame of its separate debug file; 0, or -ENODATA when it has none, or -errno */
int unwind_table__build(Elf *elf, Elf *debug, struct unwind_table **out);
/* the same, by path (a regular file, opened without blocking) */
int unwind_table__build_path(const char *path, struct unwind_table **out);
/* the table of this kernel's vDSO, the same image in every process (from our own): its code
 * (clock_gettime, gettimeofday...) has call-frame information as any library's */
int unwind_table__build_vdso(struct unwind_table **out);
void unwind_table__free(struct unwind_table *t);

/* an FDE's code range: every FDE starts a function, which is how stripped code is split */
struct unwind_fde {
	u64 start, end;
};
/* the .eh_frame FDEs of an object, sorted by start (malloc'd); 0, -ENODATA when it has none,
 * or -errno */
int unwind_table__fdes(Elf *elf, struct unwind_fde **out, size_t *nr);

/* the executable segment holding file offset pgoff (a mapping's), NULL if none */
const struct unwind_segment *unwind_table__segment(const struct unwind_table *t, u64 pgoff);

/* the row in force at ELF address vaddr, through the page index as the kernel finds it; NULL
 * outside [base, end) */
const struct unwind_row *unwind_table__find(const struct unwind_table *t, u64 vaddr);

/* ra's and rbp's HSBPF_SAVED_* rules, packed in unwind_row.saved */
static inline u8 unwind_row__ra(const struct unwind_row *r) { return r->saved & 0xf; }
static inline u8 unwind_row__rbp(const struct unwind_row *r) { return r->saved >> 4; }

#endif /* HSBPF_UNWIND_TABLE_H */
