/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* From a sample's (process image, IP) to symbol, object and source line: process images
 * from the profile's mapping timeline, user code through elfutils, kernel code through the
 * kernel symbols saved with the profile. */
#ifndef HSBPF_SYMBOLIZER_H
#define HSBPF_SYMBOLIZER_H

#include "profile/profile.h"

struct sym_result {
	const char *sym;	/* "[unknown]" when unresolved */
	u64 sym_off;
	const char *dso;	/* path, "[kernel.kallsyms]", "[vdso]" or "[unknown]" */
	const char *file;	/* source file or NULL */
	int line;
	u64 vaddr;		/* the IP as an ELF virtual address of dso (user code) */
	bool kernel;
	const char *comm;
	const struct bblock *bb;	/* with symbolizer__want_blocks: the basic block, or NULL */
	/* with symbolizer__want_inline: the functions inlined at the IP, innermost first, each
	 * with its call site (alive as long as the symbolizer) */
	const struct inline_frame *inl;
	int nr_inl;
	/* the other names of the symbol's address (perf shows one, sym: symname__cmp), as
	 * shown (demangled), alive as long as the symbolizer */
	const char *const *aliases;
	int nr_aliases;
};

/* whether the symbol or one of its aliases is in a comma-separated list of names, with or
 * without a version suffix (symname__in_list) */
bool sym_result__named(const struct sym_result *r, const char *list);
/* whether the symbol's name or an alias holds text, whatever its case */
bool sym_result__name_has(const struct sym_result *r, const char *text);

struct bblock;
struct bblock_table;
struct inline_frame;

struct symbolizer;

struct symbolizer *symbolizer__new(const struct profile *p);
void symbolizer__free(struct symbolizer *sy);
/* the objects not looked up since the last `calls` calls (at least 1) are closed, their
 * symbols forgotten (a live profile's: what exited programs left); how many */
size_t symbolizer__evict_unused(struct symbolizer *sy, u32 calls);
/* never fails: what cannot be resolved is reported as [unknown] */
void symbolizer__resolve(struct symbolizer *sy, const struct profile_sample *s,
			 struct sym_result *r);
/* profile__comm of the symbolizer's profile */
const char *symbolizer__comm(struct symbolizer *sy, u32 pid, u64 exec_ns);
/* how many objects could not be opened or did not match their build-id */
unsigned symbolizer__missing(const struct symbolizer *sy);
/* also find each user sample's basic block (objects are disassembled once, on first use) */
void symbolizer__want_blocks(struct symbolizer *sy);
/* leave source lines out (top shows none; DWARF line lookups are its costliest part) */
void symbolizer__skip_lines(struct symbolizer *sy);
/* leave the files of inlined calls' sites out (a unit's file table is in its line program,
 * which must be decoded whole); their lines stay */
void symbolizer__skip_call_files(struct symbolizer *sy);
/* look symbols up with dwfl_module_addrinfo, a linear search each time, instead of the
 * sorted table (the tests compare the two) */
void symbolizer__use_dwfl_search(struct symbolizer *sy);
/* the symbolizer's copy of a name (alive as long as it), NULL when out of memory */
const char *symbolizer__intern(struct symbolizer *sy, const char *s);
/* also find the functions inlined at each user IP (DWARF inline scopes) */
void symbolizer__want_inline(struct symbolizer *sy);
/* keep C++ and Rust symbols as they are mangled (--no-demangle) */
void symbolizer__no_demangle(struct symbolizer *sy);
/* the block table of an object path, built on first use; NULL if it cannot be read */
const struct bblock_table *symbolizer__blocks(struct symbolizer *sy, const char *path);
/* the file read for an object path: path, or its copy in the build-id cache when path is
 * gone or changed since the recording */
const char *symbolizer__file(struct symbolizer *sy, const char *path);
/* source file and line of an ELF address in an object, through its DWARF; 0 or -ENOENT */
int symbolizer__line(struct symbolizer *sy, const char *path, u64 vaddr, const char **file, int *line);

/* a function inlined at an address, and the source line in its caller it was inlined at */
struct sym_inline {
	const char *name;	/* NULL when the DWARF has none */
	int call_line;		/* 0 when unknown */
};
/* the functions inlined at an ELF address of an object, innermost first (the caller of the
 * last is the symbol's function), through its DWARF: how many were filled, at most max (0
 * without DWARF or inlining) */
int symbolizer__inlines(struct symbolizer *sy, const char *path, u64 vaddr, struct sym_inline *out,
			int max);

#endif /* HSBPF_SYMBOLIZER_H */
