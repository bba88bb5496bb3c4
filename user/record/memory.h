/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Sampled allocations in profiles (record --memory, bpf/memory.bpf.h, docs/memory.md): the
 * options, the target's glibc, the sampling tables the BPF side reads, the recording's
 * metadata and counters, and for report the four views (alloc_space, alloc_objects,
 * inuse_space, inuse_objects) in which every row weighs bytes or objects. */
#ifndef HSBPF_MEMORY_H
#define HSBPF_MEMORY_H

#include <stdio.h>
#include "hsbpf.h"
#include "memory_math.h"
#include "profile/profile.h"

struct session_opts;

#define MEMORY_DEFAULT_PERIOD	(512 * 1024)	/* bytes, as tcmalloc's */
#define MEMORY_MAX_PERIOD	(1ull << 30)	/* a sample a GiB: beyond, nothing is sampled */
#define MEMORY_PROBES		13		/* uprobes and uretprobes on the malloc family */
#define MEMORY_TRACE_UPROBE_SESSION	57	/* enum bpf_attach_type (Linux 6.13), which the
						 * linux/bpf.h this builds with lacks */

/* the views of report --sample-type, as pprof names them */
enum memory_view {
	MEMORY_ALLOC_SPACE = 0,
	MEMORY_ALLOC_OBJECTS,
	MEMORY_INUSE_SPACE,
	MEMORY_INUSE_OBJECTS,
	MEMORY_VIEW_NR,
};

/* --alloc-period BYTES (with a K, M or G suffix: KiB...) into bytes; -EINVAL after saying
 * what is wrong with it */
int memory__parse_period(const char *arg, u64 *bytes);
/* the memory options against the rest: -EINVAL after saying what is wrong; call graphs
 * default to dwarf */
int memory__settle_opts(struct session_opts *o);
/* the glibc whose malloc the target calls, into libc: the command's (argv, argv[0] looked up
 * in PATH: dynamically linked with glibc's loader, whose libc is the one hsbpf runs with, by
 * the same LD_LIBRARY_PATH; or glibc's loader run with a program, its --library-path's libc)
 * or process pid's (from its mappings); -ENOENT after saying why when there is none, it has
 * no dynamic malloc symbol to probe, or another allocator takes its place (a static or musl
 * program; jemalloc, tcmalloc or mimalloc linked, preloaded by LD_PRELOAD, or mapped in the
 * process) */
int memory__find_libc(char *const *argv, int pid, char *libc, size_t size);
/* libc can have the probes: a 64-bit libc of this machine whose dynamic malloc and free hsbpf
 * finds; else -ENOENT (or open's -errno) after saying why */
int memory__check_libc(const char *libc);

/* where fn's uprobe goes in libc, from its start: an instruction uprobes emulate rather than
 * single-step (docs/memory.md: a single step costs 17 us under this hypervisor). glibc's free
 * begins with test %rdi,%rdi, which is single-stepped, then a jcc, which is emulated and sees
 * the same argument: 3 for it, 0 for any other start */
size_t memory__probe_offset(const char *libc, const char *fn);

/* the kernel has session uprobes (Linux 6.13, the kfunc bpf_session_is_return), by which an
 * unsampled call has no return probe; false too with HSBPF_MEMORY_PROBES=classic in the
 * environment (make bench-memory compares the two) */
bool memory__have_sessions(void);
/* a session uprobe (a uprobe_multi link of attach type BPF_TRACE_UPROBE_SESSION) running
 * prog_fd at fn's entry and return in libc, in process pid's calls (any process's for -1): its
 * link's fd, or -errno */
int memory__attach_session(int prog_fd, const char *libc, const char *fn, int pid);

/* the BPF side's tables: log2(1 + i/256) and g(i/16) = x/(1-exp(-x)), Q16
 * (bpf/memory_math.h) */
void memory__fill_tables(u32 log2_q16[HSBPF_MEM_LOG_N], u32 g_q16[HSBPF_MEM_G_N]);
/* META alloc_period; STATS mem_* from the kernel's counters (HSBPF_MEM_*) */
void memory__fill_meta(struct profile_meta *m, const struct session_opts *o);
void memory__fill_stats(struct profile_stats *st, const u64 c[HSBPF_MEM_STAT_NR]);

/* the profile holds sampled allocations (META alloc_period) */
bool memory__in_profile(const struct profile *p);
/* a view's name to its number; -EINVAL after listing the names */
int memory__parse_view(const char *name, enum memory_view *view);
const char *memory__view_name(enum memory_view view);
/* report's view: only the samples of its kind stay, each counting its bytes or objects */
void memory__select(struct profile *p, enum memory_view view);
/* the same, each sample's weight the variance of its count's estimate (bytes^2 or objects^2;
 * diff's intervals): its allocations taken as all of one size, their mean */
void memory__select_variance(struct profile *p, enum memory_view view);
/* the variance of a slot's estimate, of its bytes or (of_objects) its objects: objects
 * (1/1024ths) and bytes estimated from n allocations of s bytes, each sampled with p = 1 -
 * exp(-s/period) and weighing s/p: B s (1 - p)/p, or O (1 - p)/p (docs/memory.md) */
double memory__variance(u64 objects, u64 bytes, u64 period, bool of_objects);
/* an export's views, the four at once (pprof, as Go's heap profiles have them): every sample
 * of sampled allocations stays, counting its objects (rounded as the objects views round them)
 * and weighing its bytes, its kind in its flags (memory__is_inuse); meta.memory_view is "all",
 * meta.memory_first names first, the view to show first */
void memory__select_all(struct profile *p, enum memory_view first);
/* a sample's flags say an allocation in use at the end (HSBPF_MEM_INUSE), not one made */
bool memory__is_inuse(u32 flags);
/* "12.5 MiB" */
const char *memory__bytes(double bytes, char *buf, size_t size);
/* the header's lines: the totals of the four views, and what was lost */
void memory__print_header(const struct profile *p, const char *prefix, FILE *out);

#endif /* HSBPF_MEMORY_H */
