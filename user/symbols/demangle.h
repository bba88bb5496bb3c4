/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Readable names for C++ and Rust (legacy and v0) symbols, through libiberty's demangler (the
 * one binutils uses), in perf's default style: no parameter lists, no Rust hashes. */
#ifndef HSBPF_DEMANGLE_H
#define HSBPF_DEMANGLE_H

#include <stdbool.h>

/* whether name looks mangled (C++ "_Z", Rust v0 "_R"), a cheap test before demangle__name */
bool demangle__is_mangled(const char *name);
/* the demangled form of name, malloc'd; NULL when name is not a mangled name (or on ENOMEM) */
char *demangle__name(const char *name);

#endif /* HSBPF_DEMANGLE_H */
