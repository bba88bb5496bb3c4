/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the kernel's unwinder needs, kept current as processes come and go: a table per object
 * file (built once, shared by every process that maps it) and, per process image, where its
 * executable mappings are. Fed by the sideband's records; loaded through the sampler. */
#ifndef HSBPF_UNWIND_H
#define HSBPF_UNWIND_H

#include "lib/util.h"

struct profile;
struct sampler;

struct unwinder_stats {
	u32 objects;		/* object files with a table in the kernel */
	u32 objects_no_cfi;	/* ... without call-frame information (frame pointers there) */
	u32 objects_failed;	/* ... that could not be read */
	u32 objects_full;	/* ... that did not fit the kernel's table arrays */
	u64 rows;		/* rows loaded */
	u64 table_bytes;	/* their size in the kernel, rows and page index */
	u64 build_ns;		/* time spent building and loading tables */
	u64 load_ns;		/* ... loading them into the kernel */
	u64 mappings;		/* executable mappings given to the kernel */
	u64 map_entries;	/* ... as address prefixes */
	u64 map_full;		/* ... that did not fit */
	u64 stale;		/* mappings of an image an exec had already replaced */
	u64 wanted;		/* objects queued for a table once a sample landed in them */
	u64 objects_freed;	/* objects forgotten, their tables unloaded: nothing mapped them */
	u32 objects_cached;	/* objects whose table was read from the build-id cache */
	u32 objects_kept;	/* ... whose table built was written there */
};

struct unwinder;

struct unwinder *unwinder__new(struct sampler *s);
/* tables read from and kept in the build-id cache at dir (user/unwind/table_cache.h) rather
 * than built each time; dir must outlive the unwinder; NULL: none */
void unwinder__cache_tables(struct unwinder *u, const char *dir);
void unwinder__free(struct unwinder *u);

/* a file mapping of pid at time_ns (CLOCK_MONOTONIC; 0 for one older than the recording):
 * executable ones get their object's table (once per object) and their address prefixes */
int unwinder__mmap(struct unwinder *u, u32 pid, u64 start, u64 len, u64 pgoff, bool exec,
		   const char *path, const u8 *build_id, u8 build_id_size, u64 time_ns);
/* a new process runs its parent's image until it execs */
int unwinder__fork(struct unwinder *u, u32 pid, u32 ppid);
/* pid's image is replaced at time_ns (its exec record): its old mappings go, and the new
 * image's wait for the kernel's exec tracepoint, which tags them (unwinder__retry) */
int unwinder__exec(struct unwinder *u, u32 pid, u64 time_ns);
/* the mappings that wait for their exec to finish, again */
int unwinder__retry(struct unwinder *u);
int unwinder__exit(struct unwinder *u, u32 pid);
/* every process but these (sorted) has exited */
int unwinder__keep(struct unwinder *u, const u32 *pids, size_t nr);
/* Lazy tables (the kernel finds mappings by vma): the object of a mapping a sample landed in
 * is queued for its table unless it has one (or is queued). unwinder__build_wanted gives the
 * queue to a worker thread (user/unwind/table_worker.h) that builds the tables off the
 * caller's loop, and loads those it has finished into the kernel for at most budget_ns (at
 * least one); 0 or -ENOMEM. unwinder__nr_wanted: the objects queued or being built */
int unwinder__want(struct unwinder *u, u32 pid, u64 start, u64 len, const char *path,
		   const u8 *build_id, u8 build_id_size);
int unwinder__build_wanted(struct unwinder *u, u64 budget_ns);
size_t unwinder__nr_wanted(const struct unwinder *u);
/* the objects (kernel tables and what is kept of them here) that no mapping of p's processes
 * has named at three calls in a row are freed (by_vma only); how many */
size_t unwinder__release_unmapped(struct unwinder *u, const struct profile *p);
/* build, before it runs, the tables a command will map: the program, its interpreter and the
 * libraries the interpreter says it needs (ld.so --list, which maps them and runs nothing) */
int unwinder__prepare(struct unwinder *u, const char *name);
const struct unwinder_stats *unwinder__stats(const struct unwinder *u);

/* the aligned blocks of [start, end), each as (address, prefix bits of a 64-bit address):
 * fn is called once per block; for tests and for the kernel's trie */
void unwind__blocks(u64 start, u64 end, void (*fn)(void *ctx, u64 addr, int bits), void *ctx);

#endif /* HSBPF_UNWIND_H */
