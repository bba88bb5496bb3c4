// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Demangling through libiberty: cplus_demangle with automatic style finds Itanium C++ names,
 * Rust legacy names (Itanium-shaped, with a trailing 17h<hash>E it drops) and Rust v0 names. */
#include <libiberty/demangle.h>
#include <string.h>
#include "symbols/demangle.h"

bool demangle__is_mangled(const char *name)
{
	/* "_Z" and "_R", and the "__Z" / "__R" spellings of Mach-O style objects */
	if (name[0] == '_' && name[1] == '_')
		name++;
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

char *demangle__name(const char *name)
{
	if (!name || !demangle__is_mangled(name))
		return NULL;
	/* perf's default: no DMGL_PARAMS, so overloads share a row, as in perf report */
	return cplus_demangle(name, DMGL_AUTO);
}
