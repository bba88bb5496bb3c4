/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A reader of callgrind.out files (--dump-instr=yes): self Ir per (object, address). */
#ifndef HSBPF_TEST_CALLGRIND_H
#define HSBPF_TEST_CALLGRIND_H

#include "lib/util.h"

struct cg_cost {
	char *obj;		/* object path, "???" for code callgrind could not place */
	u64 addr;		/* ELF address for placed objects, absolute for "???" */
	u64 ir;
};

struct callgrind {
	struct cg_cost *costs;	/* merged, sorted by (obj, addr) */
	size_t nr, cap;
	u64 total;		/* the file's summary */
};

int callgrind__read(const char *path, struct callgrind *cg);
void callgrind__free(struct callgrind *cg);
u64 callgrind__ir(const struct callgrind *cg, const char *obj, u64 addr);



/* the call graph: calls and inclusive Ir per (caller, callee) pair of functions, names
 * without callgrind's recursion suffix ('2) */
struct cg_call {
	char *caller_obj, *caller, *callee_obj, *callee;
	u64 calls, incl;
};

struct cg_calls {
	struct cg_call *pairs;	/* merged, sorted */
	size_t nr, cap;
};

int callgrind__read_calls(const char *path, struct cg_calls *cc);
void callgrind__free_calls(struct cg_calls *cc);
const struct cg_call *callgrind__pair(const struct cg_calls *cc, const char *caller_obj,
				      const char *caller, const char *callee_obj, const char *callee);
#endif
