/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The code objects a recording read, by (pid, address, generation): a code object freed and
 * its address given to another has the next generation (HSBPF_PY_GEN, docs/python.md), each
 * cached apart; the newest known of an address is marked, the one whose memory still holds
 * it. */
#ifndef HSBPF_PYCODES_H
#define HSBPF_PYCODES_H

#include "hsbpf.h"
#include "lib/hashidx.h"
#include "python/pyname.h"

struct pycode_ent {
	u32 pid;
	int err;			/* 0: named; else why not (-ESRCH: the process was gone,
					 * -ESTALE: another code object aggregated with it) */
	u64 code;
	u32 gen;			/* its generation at the address */
	bool newest;			/* the address's newest generation known */
	struct pycode c;
	struct hsbpf_py_offsets off;
};

struct pycodes {
	struct pycode_ent *v;
	size_t nr, cap;
	struct hashidx idx;
};

void pycodes__free(struct pycodes *c);
struct pycode_ent *pycodes__find(struct pycodes *c, u32 pid, u64 code, u32 gen);
/* the newest generation known at pid's address code, NULL when none is */
struct pycode_ent *pycodes__newest(struct pycodes *c, u32 pid, u64 code);
/* a new entry (zeroed but for its key), the address's newest from now on; NULL: -ENOMEM. The
 * caller checks first that the key is not there (pycodes__find). Pointers to entries are
 * valid until the next add */
struct pycode_ent *pycodes__add(struct pycodes *c, u32 pid, u64 code, u32 gen);
/* whether a frame of generation gen at pid's address code, never announced, may be named
 * from the process's memory now: when no generation of the address is known and gen is the
 * highest of the stacks' frames there (highest), memory holds its code object, or a newer
 * one the identity check then tells apart */
bool pycodes__readable(struct pycodes *c, u32 pid, u64 code, u32 gen, u32 highest);

#endif /* HSBPF_PYCODES_H */
