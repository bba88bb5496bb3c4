/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Symbol names as perf gives them: which of the names of one address is shown, names
 * matched with or without their version suffix, and the PLT entries' "func@plt" names that
 * no symbol table holds. */
#ifndef HSBPF_SYMNAME_H
#define HSBPF_SYMNAME_H

#include <gelf.h>
#include "lib/util.h"

/* which of two names of one address perf shows (its choose_best_symbol): a sized one, then
 * one not weak, then a global one, then fewer leading underscores, then the longer name;
 * <0 for a, >0 for b, 0 when nothing tells them apart. bind is STB_* */
int symname__cmp(const char *a, u64 size_a, int bind_a, const char *b, u64 size_b, int bind_b);
/* whether name is want, or want with the version suffix it has in a symbol table
 * ("__pthread_mutex_lock@GLIBC_2.2.5", "pthread_mutex_lock@@GLIBC_2.2.5") */
bool symname__eq(const char *name, const char *want);
/* whether name is one of a comma-separated list, as symname__eq takes it */
bool symname__in_list(const char *list, const char *name);

struct symname_plt {
	u64 addr;		/* ELF address of the entry */
	u64 size;
	u32 sym;		/* the relocation's symbol in the dynamic symbol table (0: none) */
	u64 addend;		/* an IRELATIVE entry's resolver */
	char *name;		/* "func@plt"; "" when sym is 0 (IRELATIVE), for the caller to name */
};

/* the entries of an x86-64 object's PLT (.plt.sec when the object has one, else .plt after
 * its first entry), each named after the symbol of the .rela.plt relocation of the GOT slot
 * it jumps through, as perf names them: 0 or -ENOMEM; none for other machines or without
 * .rela.plt. Free with symname__free_plt */
int symname__plt(Elf *elf, struct symname_plt **out, size_t *nr);
void symname__free_plt(struct symname_plt *v, size_t nr);

#endif /* HSBPF_SYMNAME_H */
