/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The truth file: exact execution counts of one run (the reference collector's output,
 * docs/truth-format.md), per instruction and per control-flow edge, keyed by object and ELF
 * virtual address, in the hardware's view (a rep-prefixed string instruction counts once per
 * execution). Its model and file form, which report and annotate read (--truth); the harness
 * makes it (accuracy/truth.h). */
#ifndef HSBPF_TRUTH_FILE_H
#define HSBPF_TRUTH_FILE_H

#include "lib/util.h"

#define TRUTH_MAGIC		"HSBPFTRU"
#define TRUTH_VERSION_MAJOR	1
#define TRUTH_VERSION_MINOR	2
/* 1.1: metadata strings are escaped (docs/truth-format.md) */
#define TRUTH_MINOR_ESCAPES	1
/* 1.2: the calling-context tree (CCT_NODES, CCT_BLOCKS) */
#define TRUTH_MINOR_CCT		2
#define TRUTH_NO_OBJECT		UINT32_MAX
#define TRUTH_NO_NODE		UINT32_MAX

enum edge_kind {
	EDGE_FALLTHROUGH,	/* the block was split without a transfer (page or length limit) */
	EDGE_TAKEN,		/* conditional jump taken */
	EDGE_NOT_TAKEN,		/* conditional jump not taken */
	EDGE_JUMP,
	EDGE_INDIRECT_JUMP,
	EDGE_CALL,
	EDGE_INDIRECT_CALL,
	EDGE_RETURN,
	EDGE_TAIL_CALL,		/* a jump to another function's entry */
	EDGE_SYSCALL,		/* syscall or int, to the next instruction */
	EDGE_REP,		/* one more iteration of a rep string instruction */
	EDGE_OTHER,		/* signal delivery and the like */
	EDGE_NR,
};

#define EDGE_CROSS_OBJECT 1

struct truth_object {
	u32 path;		/* string offset */
	u32 build_id_size;
	u8 build_id[20];
	u32 pad;
};

struct truth_insn {
	u32 obj;
	u32 size;
	u64 vaddr;
	u64 count;
};

struct truth_edge {
	u32 src_obj, dst_obj;
	u64 src, dst;		/* instruction addresses */
	u64 count;
	u32 kind;		/* enum edge_kind */
	u32 flags;		/* EDGE_CROSS_OBJECT */
};

enum cct_kind {
	CCT_ROOT,		/* a thread's first frame, or a function it jumped to */
	CCT_CALL,		/* entered by a call */
	CCT_SIGNAL,		/* a signal handler, entered by the signal's delivery */
	CCT_TAIL,		/* entered by a jump from another function, in the frame of its caller */
	CCT_KIND_NR,
};

/* a node of the calling-context tree: a function on one call path, in one thread */
struct truth_cnode {
	u32 thread;		/* guest threads in the order they ran their first instruction */
	u32 parent;		/* an earlier node, or TRUTH_NO_NODE for a thread's roots */
	u32 obj;		/* the function's object, TRUTH_NO_OBJECT for anonymous code */
	u32 kind;		/* enum cct_kind */
	u64 func;		/* ELF address of the function's symbol, or of the frame's entry */
	u64 calls;		/* times this context was entered */
	u64 self;		/* instructions executed in it (callees not included) */
};

/* the instructions one block executed in one context */
struct truth_cblock {
	u32 node;
	u32 obj;
	u64 vaddr;		/* the block's first instruction (a QEMU translation block) */
	u64 insns;		/* executions x instructions, rep iterations folded */
};

struct truth_meta {
	char command[1024];
	char program[1024];	/* the program's path: its object is the program's own code */
	char status[64];	/* "exited 0", "killed by signal 11 (Segmentation fault)" */
	u32 exit_code;
	u32 signal;
	u32 threads;
	char emulator[128];
	char glibc_tunables[1024];	/* what a native run needs to take glibc's emulated paths */
	u64 total_insns;	/* every instruction executed, anonymous code included */
	u64 anon_insns;		/* in code with no file behind it */
	u64 rep_iterations;	/* removed: rep iterations beyond the first */
	u64 page_cross_dropped;	/* removed: truncated copies of page-crossing instructions */
	u64 start_realtime_ns;
	u64 duration_ns;
	u32 edges_off;		/* counted without edges: no edge list, rep iterations not folded */
	u32 cct;		/* the calling-context tree was collected */
	u64 cct_unmatched_rets;	/* returns that matched no frame */
	u64 cct_longjmps;	/* jumps to a return site that dropped frames */
	u64 cct_unwinds;	/* unwinders' landings (exceptions) that dropped frames */
	u64 cct_signals;	/* signal deliveries */
	u64 cct_sigreturns;	/* returns from signal handlers */
};

struct truth {
	struct truth_meta meta;
	struct truth_object *objects;
	size_t nr_objects, cap_objects;
	struct truth_insn *insns;	/* sorted by (obj, vaddr) */
	size_t nr_insns, cap_insns;
	struct truth_edge *edges;	/* sorted by (src_obj, src, dst_obj, dst, kind) */
	size_t nr_edges, cap_edges;
	char *strs;
	size_t strs_len, strs_cap;
	struct truth_cnode *cnodes;	/* parents before children */
	size_t nr_cnodes, cap_cnodes;
	struct truth_cblock *cblocks;	/* sorted by (node, obj, vaddr) */
	size_t nr_cblocks, cap_cblocks;
};

struct truth *truth__new(void);
void truth__free(struct truth *t);
const char *truth__str(const struct truth *t, u32 off);
/* a string appended to the table (not deduplicated): its offset, or -ENOMEM */
s64 truth__add_str(struct truth *t, const char *s);
/* the object index of path, or TRUTH_NO_OBJECT */
u32 truth__object(const struct truth *t, const char *path);
/* the instruction record at (obj, vaddr), or NULL */
const struct truth_insn *truth__insn(const struct truth *t, u32 obj, u64 vaddr);

/* the orders the tables are kept in (qsort comparators; readers check them) */
int truth_insn__cmp(const void *a, const void *b);
int truth_edge__cmp(const void *a, const void *b);
int truth_cblock__cmp(const void *a, const void *b);

int truth__write(struct truth *t, const char *path);
/* to an outfile opened earlier; commits it, or discards it on failure */
struct outfile;
int truth__write_out(struct truth *t, struct outfile *o);
int truth__read(const char *path, struct truth **out);
int truth__parse(const void *buf, size_t size, const char *name, struct truth **out);

#endif /* HSBPF_TRUTH_FILE_H */
