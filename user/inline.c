// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Inline scopes from DWARF: each DW_TAG_inlined_subroutine holding an address is an inlined
 * call, named through its abstract origin, with DW_AT_call_file (an index in the CU's file
 * table) and DW_AT_call_line.
 *
 * dwarf_getscopes answers one address by walking its compilation unit's DIEs from the top, and
 * walks again for every address: about a million instructions an address in libc's units,
 * most of a small report -g's time. Here a unit's code-bearing scopes (subprograms and inlined
 * subroutines, one entry per address range, each with its enclosing one) are listed once, on
 * the first address that falls in it, sorted by start; an address is then a binary search and
 * a climb to the innermost entry holding it, as addr2line -i and llvm-symbolizer do. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>
#include "demangle.h"
#include "inline.h"

struct scope {
	u64 lo, hi;		/* [lo, hi): one range of the DIE, DWARF addresses */
	int parent;		/* the entry of the enclosing subprogram or inlined call, or -1 */
	int depth;
	int id;			/* its index before sorting */
	Dwarf_Die die;
};

struct unit {
	Dwarf_Off off;		/* the CU DIE's */
	struct scope *s;
	size_t n, cap;
	Dwarf_Files *files;	/* the CU's file table, read on the first inlined call */
	size_t nr_files;
	bool files_read;
};

struct inlines {
	Dwfl_Module *mod;
	struct unit *units;	/* sorted by off */
	size_t nr_units, cap_units;
};

struct inlines *inlines__new(Dwfl_Module *mod)
{
	struct inlines *x = calloc(1, sizeof(*x));

	if (x)
		x->mod = mod;
	return x;
}

void inlines__free(struct inlines *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->nr_units; i++)
		free(x->units[i].s);
	free(x->units);
	free(x);
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

static int add_scope(struct unit *u, const struct scope *s)
{
	if (u->n == u->cap) {
		size_t cap = u->cap ? 2 * u->cap : 64;
		struct scope *n = realloc(u->s, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		u->s = n;
		u->cap = cap;
	}
	u->s[u->n] = *s;
	u->s[u->n].id = u->n;
	u->n++;
	return 0;
}

/* the entry of the enclosing DIE (entries first .. first + nr - 1, one per range) whose range
 * holds lo, or -1 */
static int enclosing(const struct unit *u, int first, int nr, u64 lo)
{
	for (int i = first; i < first + nr; i++)
		if (u->s[i].lo <= lo && lo < u->s[i].hi)
			return i;
	return nr ? first : -1;
}

/* list the code-bearing scopes under die (depth: how many of them enclose it); the nearest
 * enclosing subprogram or inlined call has the entries first .. first + nr - 1 */
static int walk(struct unit *u, Dwarf_Die *die, int first, int nr, int depth)
{
	Dwarf_Die child;
	int err = 0;

	if (depth > 64 || dwarf_child(die, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child), mine = u->n;
		bool scope = tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;

		if (!may_hold_code(tag))
			continue;
		if (scope) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;

			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
				struct scope s = { .lo = lo, .hi = hi, .depth = depth, .die = child,
						   .parent = enclosing(u, first, nr, lo) };

				if (hi <= lo)
					continue;
				err = add_scope(u, &s);
				if (err)
					return err;
			}
			/* no code of its own (an abstract instance, a declaration): nothing under
			 * it has any either */
			if ((int)u->n == mine)
				continue;
		}
		err = scope ? walk(u, &child, mine, u->n - mine, depth + 1) :
			      walk(u, &child, first, nr, depth);
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

static struct unit *unit_of(struct inlines *x, Dwarf_Die *cu)
{
	Dwarf_Off off = dwarf_dieoffset(cu);
	size_t lo = 0, hi = x->nr_units;
	struct unit u = { .off = off }, *at;
	int *map;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (x->units[mid].off == off)
			return &x->units[mid];
		if (x->units[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (walk(&u, cu, 0, 0, 0))
		goto fail;
	/* sorted by start, the outer first among equal starts; parents renumbered */
	qsort(u.s, u.n, sizeof(*u.s), cmp_scope);
	map = malloc((u.n + 1) * sizeof(*map));
	if (!map)
		goto fail;
	for (size_t i = 0; i < u.n; i++)
		map[u.s[i].id] = i;
	for (size_t i = 0; i < u.n; i++)
		if (u.s[i].parent >= 0)
			u.s[i].parent = map[u.s[i].parent];
	free(map);
	if (x->nr_units == x->cap_units) {
		size_t cap = x->cap_units ? 2 * x->cap_units : 8;
		struct unit *n = realloc(x->units, cap * sizeof(*n));

		if (!n)
			goto fail;
		x->units = n;
		x->cap_units = cap;
	}
	at = &x->units[lo];
	memmove(at + 1, at, (x->nr_units - lo) * sizeof(*at));
	*at = u;
	x->nr_units++;
	return at;
fail:
	free(u.s);
	return NULL;
}

/* the innermost entry holding pc, or -1 */
static int innermost(const struct unit *u, u64 pc)
{
	size_t lo = 0, hi = u->n;
	int i;

	while (lo < hi) {	/* the first entry starting after pc */
		size_t mid = (lo + hi) / 2;

		if (u->s[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = (int)lo - 1; i >= 0; i = u->s[i].parent)
		if (pc < u->s[i].hi)
			return i;
	return -1;
}

int inlines__frames(struct inlines *x, u64 vaddr, bool raw_names, struct strset *names,
		    struct inline_frame *out, int max)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = x ? dwfl_module_addrdie(x->mod, vaddr, &bias) : NULL;
	struct unit *u = cu ? unit_of(x, cu) : NULL;
	int nr = 0;

	if (!u)
		return 0;
	for (int i = innermost(u, vaddr - bias); i >= 0 && nr < max; i = u->s[i].parent) {
		Dwarf_Die *d = &u->s[i].die;
		Dwarf_Attribute a;
		Dwarf_Word file = 0, line = 0;
		const char *path = NULL;

		if (dwarf_tag(d) != DW_TAG_inlined_subroutine)
			continue;
		if (!u->files_read) {
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
			.name = die_name(d, raw_names, names),
			.call_file = path ? strset__intern(names, path) : NULL,
			.call_line = (int)line,
		};
	}
	return nr;
}
