/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Inlined functions at an address, from DWARF's inline scopes (DW_TAG_inlined_subroutine):
 * each with where it was inlined, as perf shows them ("(inlined)"). */
#ifndef HSBPF_INLINE_H
#define HSBPF_INLINE_H

#include <elfutils/libdwfl.h>
#include "lib/strset.h"
#include "lib/util.h"

#define INLINE_MAX_DEPTH	8

/* a function inlined at the address: its name, and the call site (in the function it was
 * inlined into, the next frame out) */
struct inline_frame {
	const char *name;	/* interned */
	const char *call_file;	/* interned, or NULL */
	int call_line;
};

/* A module's inline scopes, indexed a compilation unit at a time as addresses need them */
struct inlines;

#define INLINES_RAW_NAMES	1	/* names as they are mangled */
#define INLINES_NO_FILES	2	/* no call_file: a unit's file table is its line program */

/* names (and files) are interned in names */
struct inlines *inlines__new(Dwfl_Module *mod, struct strset *names, unsigned flags);
void inlines__free(struct inlines *x);
/* the chain of inlined functions holding vaddr (an ELF address of the module), innermost
 * first, at most max. The count (0: none, no DWARF, or no memory for the unit's index) */
int inlines__frames(struct inlines *x, u64 vaddr, struct inline_frame *out, int max);

#endif /* HSBPF_INLINE_H */
