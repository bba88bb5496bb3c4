// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Inline scopes through libdw: dwarf_getscopes lists the DIEs that hold an address, innermost
 * first; each DW_TAG_inlined_subroutine among them is an inlined call, named through its
 * abstract origin, with DW_AT_call_file (an index in the CU's file table) and DW_AT_call_line. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include "demangle.h"
#include "inline.h"

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

int inline__frames(Dwfl_Module *mod, u64 vaddr, bool raw_names, struct strset *names,
		   struct inline_frame *out, int max)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, vaddr, &bias), *scopes = NULL;
	Dwarf_Files *files = NULL;
	size_t nr_files = 0;
	int n, nr = 0;

	if (!cu)
		return 0;
	n = dwarf_getscopes(cu, vaddr - bias, &scopes);
	if (n <= 0)
		return 0;
	if (dwarf_getsrcfiles(cu, &files, &nr_files))
		files = NULL;
	for (int i = 0; i < n && nr < max; i++) {
		Dwarf_Die *d = &scopes[i];
		Dwarf_Attribute a;
		Dwarf_Word file = 0, line = 0;
		const char *path = NULL;

		if (dwarf_tag(d) != DW_TAG_inlined_subroutine)
			continue;
		if (dwarf_attr(d, DW_AT_call_file, &a) && !dwarf_formudata(&a, &file) && files &&
		    file < nr_files)
			path = dwarf_filesrc(files, file, NULL, NULL);
		if (dwarf_attr(d, DW_AT_call_line, &a))
			dwarf_formudata(&a, &line);
		out[nr++] = (struct inline_frame){
			.name = die_name(d, raw_names, names),
			.call_file = path ? strset__intern(names, path) : NULL,
			.call_line = (int)line,
		};
	}
	free(scopes);
	return nr;
}
