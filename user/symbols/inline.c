// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Inline scopes from DWARF: each DW_TAG_inlined_subroutine holding an address is an inlined
 * call, named through its abstract origin, with DW_AT_call_file (an index in the CU's file
 * table) and DW_AT_call_line.
 *
 * dwarf_getscopes answers one address by walking its compilation unit's DIEs from the top, and
 * walks again for every address: about a million instructions an address in libc's units,
 * most of a small report -g's time. Here a unit's functions (their address ranges) are listed
 * once, on the first address that falls in it, without what is under them; a function's
 * scopes (inlined calls, one entry per address range, each with its enclosing one) are listed
 * on the first address in it. Both lists are sorted by start: an address is a binary search
 * and a climb to the innermost entry holding it, as addr2line -i and llvm-symbolizer do. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/demangle.h"
#include "symbols/inline.h"

struct scope {
	u64 lo, hi;		/* [lo, hi): one range of the DIE, DWARF addresses */
	int parent;		/* the entry of the enclosing inlined call (or nested scope), or -1;
				 * in a unit's list, the function's index */
	int depth;
	int id;			/* its index before sorting */
	Dwarf_Die die;
};

struct scopes {
	struct scope *s;	/* sorted by start, the outer first among equal starts */
	size_t n, cap;
};

/* a function with code (a subprogram with addresses), its scopes listed on first need */
struct func {
	Dwarf_Die die;
	struct scopes inner;
	bool indexed;
	unsigned lookups;	/* before it is indexed: each a walk down to the address */
};

/* a function's first addresses are each found by a walk down the scopes holding them (the
 * children of each level, not the whole function: dl_main has 20,000 DIEs); from the next one
 * on, its scopes are indexed */
#define WALKS_BEFORE_INDEX	8

struct unit {
	Dwarf_Off off;		/* the CU DIE's */
	bool c;			/* in C (or assembly): no type holds a function */
	bool nested_read;	/* the functions nested in others are in funcs too */
	struct scopes funcs;	/* a range of a function each */
	struct func *f;
	size_t nr_f, cap_f;
	Dwarf_Files *files;	/* the CU's file table, read on the first inlined call */
	size_t nr_files;
	bool files_read;
};

/* an address range of a unit, from .debug_aranges */
struct arange {
	u64 lo, hi;
	Dwarf_Off cu;		/* the unit header's offset in .debug_info */
};

struct inlines {
	Dwfl_Module *mod;
	struct strset *names;
	unsigned flags;
	struct unit *units;	/* sorted by off */
	size_t nr_units, cap_units;
	/* which unit holds an address: read here from .debug_aranges, sorted by lo. libdw's
	 * dwarf_getaranges (behind dwfl_module_addrdie) answers the same from the same section
	 * (0.188 reads nothing else: an address no arange covers has no unit either way), but
	 * builds a list of every arange and looks every unit up first: 2 MB for libc's 4,126
	 * units, where the sorted array is 100 KB (dwarf_offdie still records the units before
	 * the one it finds) */
	struct arange *ar;
	size_t nr_ar;
	bool ar_read, ar_ok;	/* ar_ok: the section was read whole; else libdw's way */
	Dwarf *dbg;
	Dwarf_Addr bias;
};

struct inlines *inlines__new(Dwfl_Module *mod, struct strset *names, unsigned flags)
{
	struct inlines *x = calloc(1, sizeof(*x));

	if (x) {
		x->mod = mod;
		x->names = names;
		x->flags = flags;
	}
	return x;
}

static void unit_free(struct unit *u)
{
	for (size_t i = 0; i < u->nr_f; i++)
		free(u->f[i].inner.s);
	free(u->f);
	free(u->funcs.s);
}

void inlines__free(struct inlines *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->nr_units; i++)
		unit_free(&x->units[i]);
	free(x->units);
	free(x->ar);
	free(x);
}

static u64 get_le(const u8 *p, int size)
{
	u64 v = 0;

	for (int i = size - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static int cmp_arange(const void *a, const void *b)
{
	const struct arange *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static Elf_Data *section_data(Elf *elf, const char *want)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, want))
			continue;
		/* libdw inflates the sections it reads in place; one it has not is left to it */
		if (sh.sh_flags & SHF_COMPRESSED)
			return NULL;
		return elf_getdata(scn, NULL);
	}
	return NULL;
}

/* every set of .debug_aranges (version 2, 8-byte addresses, little-endian), or false to leave
 * it to libdw: a missing section, another layout, or damage */
static bool read_aranges(struct inlines *x)
{
	Elf *elf;
	Elf_Data *data;
	const u8 *d;
	size_t size, off = 0, cap = 0;

	x->dbg = dwfl_module_getdwarf(x->mod, &x->bias);
	elf = x->dbg ? dwarf_getelf(x->dbg) : NULL;
	if (!elf || elf_getident(elf, NULL)[EI_DATA] != ELFDATA2LSB ||
	    !(data = section_data(elf, ".debug_aranges")) || !data->d_buf)
		return false;
	d = data->d_buf;
	size = data->d_size;
	while (off + 4 <= size) {
		size_t start = off, end, offsz = 4;
		u64 len = get_le(d + off, 4);
		Dwarf_Off cu;

		off += 4;
		if (len == 0xffffffff) {
			if (off + 8 > size)
				return false;
			len = get_le(d + off, 8);
			off += 8;
			offsz = 8;
		} else if (len >= 0xfffffff0) {
			return false;
		}
		if (len > size - off || len < 2 + offsz + 2)
			return false;
		end = off + len;
		if (get_le(d + off, 2) != 2)
			return false;
		cu = get_le(d + off + 2, offsz);
		if (d[off + 2 + offsz] != 8 || d[off + 3 + offsz] != 0)
			return false;
		/* the tuples start at a multiple of their size (16) from the set's start */
		off = start + ((off + 4 + offsz - start + 15) & ~(size_t)15);
		for (; off + 16 <= end; off += 16) {
			u64 lo = get_le(d + off, 8), n = get_le(d + off + 8, 8);

			if (!lo && !n)
				break;
			if (!n || lo + n < lo)
				continue;
			if (array__reserve((void **)&x->ar, &cap, x->nr_ar + 1, sizeof(*x->ar)))
				return false;
			x->ar[x->nr_ar++] = (struct arange){ .lo = lo, .hi = lo + n, .cu = cu };
		}
		off = end;
	}
	if (x->nr_ar > 1)
		qsort(x->ar, x->nr_ar, sizeof(*x->ar), cmp_arange);
	return true;
}

/* the unit DIE holding vaddr, and the bias to take from vaddr for DWARF addresses; NULL for
 * none */
static Dwarf_Die *unit_die(struct inlines *x, u64 vaddr, Dwarf_Die *die, Dwarf_Addr *bias)
{
	size_t lo = 0, hi;
	Dwarf_Off next;
	size_t header;
	u64 pc;

	if (!x->ar_read) {
		x->ar_read = true;
		x->ar_ok = read_aranges(x);
		if (!x->ar_ok) {
			free(x->ar);
			x->ar = NULL;
			x->nr_ar = 0;
		}
	}
	if (!x->ar_ok)
		return dwfl_module_addrdie(x->mod, vaddr, bias);
	*bias = x->bias;
	pc = vaddr - x->bias;
	hi = x->nr_ar;
	while (lo < hi) {	/* the first range starting after pc */
		size_t mid = (lo + hi) / 2;

		if (x->ar[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || pc >= x->ar[lo - 1].hi ||
	    dwarf_next_unit(x->dbg, x->ar[lo - 1].cu, &next, &header, NULL, NULL, NULL, NULL, NULL,
			    NULL) ||
	    !dwarf_offdie(x->dbg, x->ar[lo - 1].cu + header, die))
		return NULL;
	return die;
}

/* the linkage name (demangled) or else the plain name, through abstract origins */
static const char *die_name(Dwarf_Die *die, bool raw_names, struct strset *names)
{
	Dwarf_Attribute a;
	const char *name = NULL;

	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a)) {
		const char *linkage = dwarf_formstring(&a);
		char *dm = linkage && !raw_names ? demangle__name(linkage) : NULL;

		if (dm) {
			name = strset__intern(names, dm);
			free(dm);
			return name;
		}
		if (linkage && raw_names)
			return strset__intern(names, linkage);
	}
	if (dwarf_attr_integrate(die, DW_AT_name, &a))
		name = dwarf_formstring(&a);
	return strset__intern(names, name ? name : "[unknown]");
}

/* types, which hold functions in C++ (a class's), never in C */
static bool is_type(int tag)
{
	return tag == DW_TAG_class_type || tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
}

/* DIEs that may hold code, or own DIEs that do (the tags dwarf_getscopes descends into) */
static bool may_hold_code(int tag)
{
	switch (tag) {
	case DW_TAG_subprogram: case DW_TAG_inlined_subroutine: case DW_TAG_lexical_block:
	case DW_TAG_entry_point: case DW_TAG_with_stmt: case DW_TAG_catch_block:
	case DW_TAG_try_block: case DW_TAG_module: case DW_TAG_namespace:
	case DW_TAG_class_type: case DW_TAG_structure_type: case DW_TAG_union_type:
		return true;
	default:
		return false;
	}
}

static int add_scope(struct scopes *v, const struct scope *s)
{
	if (array__reserve((void **)&v->s, &v->cap, v->n + 1, sizeof(*v->s)))
		return -ENOMEM;
	v->s[v->n] = *s;
	v->s[v->n].id = v->n;
	v->n++;
	return 0;
}

/* one DIE's entries, first .. v->n - 1, sorted and with adjacent or overlapping ranges made
 * one: a child is then under the entry holding all of it, not the one its start is in */
static void merge_ranges(struct scopes *v, int first)
{
	int n = first;

	for (int i = first + 1; i < (int)v->n; i++) {	/* insertion sort: a handful */
		struct scope x = v->s[i];
		int j = i;

		for (; j > first && v->s[j - 1].lo > x.lo; j--)
			v->s[j] = v->s[j - 1];
		v->s[j] = x;
	}
	for (int i = first; i < (int)v->n; i++) {
		if (n > first && v->s[i].lo <= v->s[n - 1].hi) {
			if (v->s[i].hi > v->s[n - 1].hi)
				v->s[n - 1].hi = v->s[i].hi;
			continue;
		}
		v->s[n++] = v->s[i];
	}
	v->n = n;
	for (int i = first; i < n; i++)
		v->s[i].id = i;
}

/* the entry of the enclosing DIE (entries first .. first + nr - 1, one per range) whose range
 * holds lo, or -1 */
static int enclosing(const struct scopes *v, int first, int nr, u64 lo)
{
	for (int i = first; i < first + nr; i++)
		if (v->s[i].lo <= lo && lo < v->s[i].hi)
			return i;
	return nr ? first : -1;
}

/* list the scopes with code under die, a function's DIE or one under it (depth: how many of
 * them enclose it); the nearest enclosing one has the entries first .. first + nr - 1 */
static int walk(struct scopes *v, Dwarf_Die *die, int first, int nr, int depth, bool c)
{
	Dwarf_Die child;
	int err = 0;

	if (depth > 64 || dwarf_child(die, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child), mine = v->n;
		bool scope = tag == DW_TAG_inlined_subroutine;

		/* a nested function (GNU C, OpenMP's outlined bodies, Fortran's contained
		 * procedures) is a function of its own: its code is not its parent's */
		if (!may_hold_code(tag) || tag == DW_TAG_subprogram || (c && is_type(tag)))
			continue;
		if (scope) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;

			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
				struct scope s = { .lo = lo, .hi = hi, .depth = depth, .die = child,
						   .parent = enclosing(v, first, nr, lo) };

				if (hi <= lo)
					continue;
				err = add_scope(v, &s);
				if (err)
					return err;
			}
			/* no code of its own (an abstract instance, a declaration): nothing under
			 * it has any either */
			if ((int)v->n == mine)
				continue;
			merge_ranges(v, mine);
		}
		err = scope ? walk(v, &child, mine, v->n - mine, depth + 1, c) :
			      walk(v, &child, first, nr, depth + 1, c);
	} while (!err && dwarf_siblingof(&child, &child) == 0);
	return err;
}

/* list die as a function of the unit if it has code of its own */
static int add_func(struct unit *u, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	int first = u->funcs.n, err = 0;

	while (!err && (off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		struct scope s = { .lo = lo, .hi = hi, .die = *die, .parent = u->nr_f };

		if (hi > lo)
			err = add_scope(&u->funcs, &s);
	}
	if (err || (int)u->funcs.n == first)
		return err;	/* no code of its own */
	merge_ranges(&u->funcs, first);
	if (array__reserve((void **)&u->f, &u->cap_f, u->nr_f + 1, sizeof(*u->f)))
		return -ENOMEM;
	u->f[u->nr_f++] = (struct func){ .die = *die };
	return 0;
}

/* a unit's functions with code (in namespaces and classes too), not what is under them */
static int walk_funcs(struct unit *u, Dwarf_Die *die, int depth)
{
	Dwarf_Die child;
	int err = 0;

	if (depth > 64 || dwarf_child(die, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_subprogram)
			err = add_func(u, &child);
		else if (may_hold_code(tag) && !(u->c && is_type(tag)))
			err = walk_funcs(u, &child, depth + 1);
	} while (!err && dwarf_siblingof(&child, &child) == 0);
	return err;
}

/* the functions nested in others (in_func: die is in one), the whole unit walked: only when
 * an address of the unit is in none of its outer functions */
static int walk_nested(struct unit *u, Dwarf_Die *die, int depth, bool in_func)
{
	Dwarf_Die child;
	int err = 0;

	if (depth > 64 || dwarf_child(die, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child);

		if (!may_hold_code(tag) || (u->c && is_type(tag)))
			continue;
		if (tag == DW_TAG_subprogram && in_func)
			err = add_func(u, &child);
		if (!err)
			err = walk_nested(u, &child, depth + 1, in_func || tag == DW_TAG_subprogram);
	} while (!err && dwarf_siblingof(&child, &child) == 0);
	return err;
}

static int cmp_scope(const void *a, const void *b)
{
	const struct scope *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->depth - y->depth;
}

/* sort by start, the outer first among equal starts; renumber the parents unless they are
 * functions' indexes */
static int sort_scopes(struct scopes *v, bool renumber)
{
	int *map;

	if (v->n < 2)	/* (none: v->s may be NULL, which qsort may not be given) */
		return 0;
	qsort(v->s, v->n, sizeof(*v->s), cmp_scope);
	if (!renumber)
		return 0;
	map = malloc((v->n + 1) * sizeof(*map));
	if (!map)
		return -ENOMEM;
	for (size_t i = 0; i < v->n; i++)
		map[v->s[i].id] = i;
	for (size_t i = 0; i < v->n; i++)
		if (v->s[i].parent >= 0)
			v->s[i].parent = map[v->s[i].parent];
	free(map);
	return 0;
}

static struct unit *unit_of(struct inlines *x, Dwarf_Die *cu)
{
	Dwarf_Off off = dwarf_dieoffset(cu);
	size_t lo = 0, hi = x->nr_units;
	int lang = dwarf_srclang(cu);
	struct unit u = { .off = off, .c = lang == DW_LANG_C89 || lang == DW_LANG_C ||
					   lang == DW_LANG_C99 || lang == DW_LANG_C11 ||
					   lang == DW_LANG_Mips_Assembler }, *at;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (x->units[mid].off == off)
			return &x->units[mid];
		if (x->units[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (walk_funcs(&u, cu, 0) || sort_scopes(&u.funcs, false))
		goto fail;
	if (array__reserve((void **)&x->units, &x->cap_units, x->nr_units + 1, sizeof(*x->units)))
		goto fail;
	at = &x->units[lo];
	memmove(at + 1, at, (x->nr_units - lo) * sizeof(*at));
	*at = u;
	x->nr_units++;
	return at;
fail:
	unit_free(&u);
	return NULL;
}

/* the last entry starting at or before pc, or -1 */
static int last_at_or_before(const struct scopes *v, u64 pc)
{
	size_t lo = 0, hi = v->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v->s[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int)lo - 1;
}

/* the function range holding pc, or -1: the last starting at or before it, or one a little
 * before that (a nested function's range may start inside its parent's) */
static int func_range(const struct unit *u, u64 pc)
{
	int last = last_at_or_before(&u->funcs, pc);

	for (int i = last; i >= 0 && i > last - 16; i--)
		if (pc < u->funcs.s[i].hi)
			return i;
	return -1;
}

/* the function holding pc; NULL when none (or no memory) */
static struct func *func_of(struct unit *u, Dwarf_Die *cu, u64 pc)
{
	int i = func_range(u, pc);

	if (i < 0 && !u->nested_read) {
		u->nested_read = true;
		if (walk_nested(u, cu, 0, false) || sort_scopes(&u->funcs, false))
			return NULL;
		i = func_range(u, pc);
	}
	return i < 0 ? NULL : &u->f[u->funcs.s[i].parent];
}

static bool index_func(struct func *f, bool c)
{
	if (f->indexed)
		return true;
	if (walk(&f->inner, &f->die, -1, 0, 0, c) || sort_scopes(&f->inner, true)) {
		free(f->inner.s);
		f->inner = (struct scopes){ 0 };
		return false;
	}
	f->indexed = true;
	return true;
}

/* the inlined calls holding pc under die, outermost first, into chain (at most cap; n counts
 * them): the same DIEs the index finds, walking only the levels that hold pc. True once the
 * inlined call holding pc is found: nothing beside it holds pc too */
static bool walk_down(Dwarf_Die *die, u64 pc, bool c, Dwarf_Die *chain, int *n, int cap, int depth)
{
	Dwarf_Die child;

	if (depth > 64 || dwarf_child(die, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);

		if (!may_hold_code(tag) || tag == DW_TAG_subprogram || (c && is_type(tag)))
			continue;
		if (tag == DW_TAG_inlined_subroutine) {
			if (dwarf_haspc(&child, pc) != 1)
				continue;
			if (*n < cap)
				chain[(*n)++] = child;
			walk_down(&child, pc, c, chain, n, cap, depth + 1);
			return true;
		}
		/* a lexical block, which may have no ranges of its own: what is under it */
		if (walk_down(&child, pc, c, chain, n, cap, depth + 1))
			return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* the innermost scope under the function holding pc, or -1 */
static int innermost(const struct scopes *v, u64 pc)
{
	for (int i = last_at_or_before(v, pc); i >= 0; i = v->s[i].parent)
		if (pc < v->s[i].hi)
			return i;
	return -1;
}

int inlines__frames(struct inlines *x, u64 vaddr, struct inline_frame *out, int max)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die cu_die, *cu = x ? unit_die(x, vaddr, &cu_die, &bias) : NULL;
	struct unit *u = cu ? unit_of(x, cu) : NULL;
	struct func *f = u ? func_of(u, cu, vaddr - bias) : NULL;
	Dwarf_Die chain[64];
	int nr = 0, n = 0;

	if (!f)
		return 0;
	/* innermost first */
	if (!f->indexed && f->lookups < WALKS_BEFORE_INDEX) {
		f->lookups++;
		walk_down(&f->die, vaddr - bias, u->c, chain, &n, ARRAY_SIZE(chain), 0);
		for (int i = 0; i < n / 2; i++) {
			Dwarf_Die t = chain[i];

			chain[i] = chain[n - 1 - i];
			chain[n - 1 - i] = t;
		}
	} else if (index_func(f, u->c)) {
		for (int i = innermost(&f->inner, vaddr - bias); i >= 0 && n < (int)ARRAY_SIZE(chain);
		     i = f->inner.s[i].parent)
			if (dwarf_tag(&f->inner.s[i].die) == DW_TAG_inlined_subroutine)
				chain[n++] = f->inner.s[i].die;
	}
	for (int i = 0; i < n && nr < max; i++) {
		Dwarf_Die *d = &chain[i];
		Dwarf_Attribute a;
		Dwarf_Word file = 0, line = 0;
		const char *path = NULL;

		if (!u->files_read && !(x->flags & INLINES_NO_FILES)) {
			u->files_read = true;
			if (dwarf_getsrcfiles(cu, &u->files, &u->nr_files))
				u->files = NULL;
		}
		if (dwarf_attr(d, DW_AT_call_file, &a) && !dwarf_formudata(&a, &file) && u->files &&
		    file < u->nr_files)
			path = dwarf_filesrc(u->files, file, NULL, NULL);
		if (dwarf_attr(d, DW_AT_call_line, &a))
			dwarf_formudata(&a, &line);
		out[nr++] = (struct inline_frame){
			.name = die_name(d, x->flags & INLINES_RAW_NAMES, x->names),
			.call_file = path ? strset__intern(x->names, path) : NULL,
			.call_line = (int)line,
		};
	}
	return nr;
}
