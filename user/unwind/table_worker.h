/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Unwind tables built on a thread of their own: the agent's loop hands over an object to read
 * (a job: its path, where to open it, its build-id) and later takes the finished table back,
 * so that one big object (a compiler, a JVM: a second of work under load) never holds the
 * loop's sampling, sideband or intervals. The worker touches nothing but the job: it reads
 * the file and builds the table (table_job__run, which the synchronous callers use too);
 * loading the table into the kernel stays with the caller. Jobs are done in the order given. */
#ifndef HSBPF_TABLE_WORKER_H
#define HSBPF_TABLE_WORKER_H

#include "lib/util.h"
#include "profile/profile.h"

struct unwind_table;

struct table_job {
	char *path;		/* the object as processes map it ("[vdso]" for the vDSO) */
	char *open_path;	/* where it is read (through a process's root, map_files...);
				 * path instead once the job ran if that process had ended */
	u8 build_id[BUILD_ID_MAX];
	u8 build_id_size;	/* 0: none (the object is known by its path) */
	/* the answer: 0 and a table, -ESTALE when the file is not the build that was mapped,
	 * -ENODATA when it has no call-frame information, -ENOENT or -ESRCH when it could
	 * not be opened (a deleted file whose processes ended), or another -errno */
	int err;
	struct unwind_table *table;
	u64 build_ns;		/* how long the check and the build took (wall time) */
	const char *cache;	/* the build-id cache whose tables it reads and keeps (table_cache.h),
				 * NULL for none; alive while the job is */
	bool cached;		/* the table was read from it, not built */
	bool kept;		/* the table built was written there */
	struct table_job *next;
};

/* a job for path read at open_path; NULL with errno set */
struct table_job *table_job__new(const char *path, const char *open_path, const u8 *build_id,
				 u8 build_id_size);
/* the job done here, now: the table kept in the cache for its build-id, else the file
 * checked against the build-id, its table built (and kept there) */
void table_job__run(struct table_job *j);
void table_job__free(struct table_job *j);

struct table_worker;

/* the thread started; NULL with errno set (not said) */
struct table_worker *table_worker__new(void);
/* the job queued (the worker owns it until table_worker__take gives it back) */
void table_worker__submit(struct table_worker *w, struct table_job *j);
/* a finished job, the oldest first, or NULL when none is finished; it is the caller's */
struct table_job *table_worker__take(struct table_worker *w);
/* jobs given and not taken back yet */
size_t table_worker__busy(const struct table_worker *w);
/* the thread stopped after the job in hand; every job not taken freed */
void table_worker__free(struct table_worker *w);

#endif /* HSBPF_TABLE_WORKER_H */
