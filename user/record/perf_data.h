/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A reader of perf.data files (perf record's format): header, attributes with their ids,
 * the data section's records, sample_id_all trailers, and the build-id feature section.
 * Every size and offset is checked; what cannot be read is reported, never guessed. */
#ifndef HSBPF_PERF_DATA_H
#define HSBPF_PERF_DATA_H

#include <linux/perf_event.h>
#include "lib/util.h"

#define PERF_DATA_MAX_BRANCHES 128
#define PERF_DATA_MAX_CALLCHAIN 1024	/* entries, context markers included */

struct perf_branch {
	u64 from, to, flags;
};

struct perf_sample {
	const struct perf_event_attr *attr;
	u32 pid, tid;
	u64 ip, time, period, id, cpu;
	u16 misc;		/* PERF_RECORD_MISC_*: user or kernel */
	u64 nr_branches;	/* 0: no branch stack */
	const struct perf_branch *branches;	/* entry 0 is the newest */
	/* PERF_SAMPLE_CALLCHAIN: the sampled ip first; PERF_CONTEXT_* markers (>= -4095 as
	 * signed) say whose frames follow */
	u64 nr_callchain;
	const u64 *callchain;
	/* --call-graph dwarf: PERF_SAMPLE_REGS_USER (in the attribute's sample_regs_user order)
	 * and the copy of the user stack from the sampled stack pointer up */
	u64 regs_abi;		/* PERF_SAMPLE_REGS_ABI_*: 0, no user registers */
	u64 nr_regs;
	const u64 *regs;
	u64 stack_size;		/* bytes of stack valid in stack[] (the kernel's dyn_size) */
	const u8 *stack;
	u8 copy_err;		/* PERF_COPY_*: what was wrong with the registers or the stack */
};

/* a sample's register or stack copy that cannot be used (the sample itself is kept) */
enum {
	PERF_COPY_OK = 0,
	PERF_COPY_SHORT_REGS,	/* the registers run past the record */
	PERF_COPY_SHORT_STACK,	/* the stack copy (or its dyn_size) runs past the record */
	PERF_COPY_DYN_SIZE,	/* dyn_size larger than the copy */
};

struct perf_data_callbacks {
	void *ctx;
	int (*sample)(void *ctx, const struct perf_sample *s);
	/* MMAP and MMAP2 (exec mappings only), COMM, FORK: as the recorder's sideband */
	int (*mmap)(void *ctx, u32 pid, u64 start, u64 len, u64 pgoff, const char *path, u64 time);
	int (*comm)(void *ctx, u32 pid, const char *comm, bool exec, u64 time);
	int (*fork)(void *ctx, u32 pid, u32 ppid, u64 time);
	/* the build-id section's records, and those of --buildid-mmap's mmap records */
	int (*build_id)(void *ctx, const char *path, const u8 *id, size_t len);
	/* set: the records are read in two passes, the process history and build-ids first,
	 * then the samples, and samples_begin (when set) is called between them (perf writes
	 * each CPU's buffer in turn: a sample may come after a later mmap record) */
	bool history_first;
	int (*samples_begin)(void *ctx);
};

struct perf_data_stats {
	u64 samples, mmaps, comms, forks, lost, unknown, build_ids;
	u32 nr_attrs;
	/* what the file says of the recording's kernel: where its text was (the synthesized
	 * [kernel.kallsyms] mapping), and its release (HEADER_OSRELEASE, "" without) */
	bool kernel_map;
	u64 kernel_start;
	char os_release[65];
};

/* parse a whole perf.data in memory; 0, or -EINVAL after reporting what is wrong */
int perf_data__parse(const void *buf, size_t size, const char *name,
		     const struct perf_data_callbacks *cb, struct perf_data_stats *st);
int perf_data__read(const char *path, const struct perf_data_callbacks *cb,
		    struct perf_data_stats *st);

#endif
