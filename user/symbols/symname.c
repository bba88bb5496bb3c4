// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Symbol names as perf gives them: perf's choice among aliases, version-blind name
 * matching for the filters, and the names of x86-64 PLT entries from .rela.plt. */
#include <stdlib.h>
#include <string.h>
#include "symbols/symname.h"

static int underscores(const char *s)
{
	int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

int symname__cmp(const char *a, u64 size_a, int bind_a, const char *b, u64 size_b, int bind_b)
{
	size_t la, lb;

	if (!size_a != !size_b)
		return size_a ? -1 : 1;
	if ((bind_a == STB_WEAK) != (bind_b == STB_WEAK))
		return bind_a == STB_WEAK ? 1 : -1;
	if ((bind_a == STB_GLOBAL) != (bind_b == STB_GLOBAL))
		return bind_a == STB_GLOBAL ? -1 : 1;
	if (underscores(a) != underscores(b))
		return underscores(a) < underscores(b) ? -1 : 1;
	la = strlen(a);
	lb = strlen(b);
	return la > lb ? -1 : la < lb;
}

bool symname__eq(const char *name, const char *want)
{
	size_t n = strlen(want);

	return !strncmp(name, want, n) && (!name[n] || (name[n] == '@' && !strchr(want, '@')));
}

bool symname__in_list(const char *list, const char *name)
{
	for (const char *t = list; *t;) {
		const char *e = strchrnul(t, ',');
		size_t n = e - t;

		if (!strncmp(name, t, n) && (!name[n] || (name[n] == '@' && !memchr(t, '@', n))))
			return true;
		t = *e ? e + 1 : e;
	}
	return false;
}

static Elf_Scn *section_named(Elf *elf, size_t shstrndx, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

void symname__free_plt(struct symname_plt *v, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(v[i].name);
	free(v);
}

struct plt_rel {
	u64 got;	/* the GOT slot the entry jumps through */
	u32 sym;
	u64 addend;
};

static int cmp_rel(const void *a, const void *b)
{
	const struct plt_rel *x = a, *y = b;

	return x->got < y->got ? -1 : x->got > y->got;
}

/* the GOT slot an entry jumps through: its "jmp *disp32(%rip)" (after endbr64 and a bnd
 * prefix in .plt.sec), or 0 */
static u64 entry_got(const Elf_Data *code, u64 sec_addr, u64 addr)
{
	const u8 *b = code->d_buf;
	u64 off = addr - sec_addr;

	if (!b || off + 16 > code->d_size)
		return 0;
	for (int k = 0; k + 6 <= 16; k++)
		if (b[off + k] == 0xff && b[off + k + 1] == 0x25) {
			s32 disp;

			memcpy(&disp, b + off + k + 2, 4);
			return addr + k + 6 + (s64)disp;
		}
	return 0;
}

int symname__plt(Elf *elf, struct symname_plt **out, size_t *nr)
{
	GElf_Shdr rela_sh, plt_sh, dyn_sh;
	Elf_Scn *rela, *plt, *dynsym;
	Elf_Data *rd, *dd, *code;
	GElf_Ehdr eh;
	size_t shstrndx, n, nr_rels, first = 0;
	struct symname_plt *v = NULL;
	struct plt_rel *rels = NULL;
	int err = -ENOMEM;

	*out = NULL;
	*nr = 0;
	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	rela = section_named(elf, shstrndx, ".rela.plt", &rela_sh);
	/* with IBT, .plt.sec holds the entries calls go to, .plt only the lazy binding's */
	plt = section_named(elf, shstrndx, ".plt.sec", &plt_sh);
	if (!plt) {
		plt = section_named(elf, shstrndx, ".plt", &plt_sh);
		first = 1;	/* its first entry pushes and jumps to the resolver */
	}
	if (!rela || !plt || rela_sh.sh_type != SHT_RELA || !rela_sh.sh_entsize ||
	    !(dynsym = elf_getscn(elf, rela_sh.sh_link)) || !gelf_getshdr(dynsym, &dyn_sh) ||
	    !(rd = elf_getdata(rela, NULL)) || !(dd = elf_getdata(dynsym, NULL)) ||
	    !(code = elf_getdata(plt, NULL)))
		return 0;
	nr_rels = rela_sh.sh_size / rela_sh.sh_entsize;
	n = plt_sh.sh_size / 16 > first ? plt_sh.sh_size / 16 - first : 0;
	if (!n || !nr_rels)
		return 0;
	rels = calloc(nr_rels, sizeof(*rels));
	v = calloc(n, sizeof(*v));
	if (!rels || !v)
		goto out;
	for (size_t i = 0; i < nr_rels; i++) {
		GElf_Rela r;

		if (gelf_getrela(rd, i, &r))
			rels[i] = (struct plt_rel){ .got = r.r_offset, .sym = GELF_R_SYM(r.r_info),
						    .addend = r.r_addend };
	}
	qsort(rels, nr_rels, sizeof(*rels), cmp_rel);
	for (size_t i = 0; i < n; i++) {
		struct plt_rel key = { .got = 0 }, *r;
		struct symname_plt *e = &v[*nr];
		const char *name = NULL;
		GElf_Sym sym;

		e->addr = plt_sh.sh_addr + (i + first) * 16;
		e->size = 16;
		/* the relocation of the GOT slot it jumps through: the order of .rela.plt is
		 * not the PLT's in every object (libc's); an entry of none is not named */
		key.got = entry_got(code, plt_sh.sh_addr, e->addr);
		r = key.got ? bsearch(&key, rels, nr_rels, sizeof(*rels), cmp_rel) : NULL;
		if (!r)
			continue;
		e->sym = r->sym;
		e->addend = r->addend;
		if (r->sym && gelf_getsym(dd, r->sym, &sym))
			name = elf_strptr(elf, dyn_sh.sh_link, sym.st_name);
		if (name && *name ? asprintf(&e->name, "%s@plt", name) < 0 : !(e->name = strdup(""))) {
			e->name = NULL;
			goto out;
		}
		(*nr)++;
	}
	*out = v;
	v = NULL;
	err = 0;
out:
	if (v)
		symname__free_plt(v, *nr);
	if (err)
		*nr = 0;
	free(rels);
	return err;
}
