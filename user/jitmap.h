/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* JIT code's names from perf map files (/tmp/perf-PID.map: "START SIZE NAME" lines in hex, as
 * node --perf-basic-prof, the JVM's agents, LuaJIT and others write them), copied into the
 * profile while the processes live, since the files are theirs and may go with them. */
#ifndef HSBPF_JITMAP_H
#define HSBPF_JITMAP_H

#include "profile.h"

#define JITMAP_DIR		"/tmp"
#define JITMAP_MAX_SIZE		(256u << 20)	/* a larger file is read up to here */

struct jitmap_stats {
	u64 syms;		/* symbols added */
	u64 malformed;		/* lines skipped: not START SIZE NAME, or a size of 0 or >= 4 GB */
};

/* the symbols of a perf map file's text, added to p as pid's (read at time_ns) */
int jitmap__parse(struct profile *p, u32 pid, u64 time_ns, const char *buf, size_t len,
		  struct jitmap_stats *st);

/* what was read of each process's map file, so that an unchanged file is not read again */
struct jitmaps;

struct jitmaps *jitmaps__new(const char *dir);
void jitmaps__free(struct jitmaps *j);
/* DIR/perf-PID.map into p, replacing what an earlier read of it gave, unless the file is as it
 * was then; the profile's jit_* counters are kept. 0, or -ENOENT without a file, -errno */
int jitmaps__read(struct jitmaps *j, struct profile *p, u32 pid, u64 time_ns);
/* every perf-PID.map of DIR that changed; 0 or -errno (the folder cannot be read) */
int jitmaps__scan(struct jitmaps *j, struct profile *p, u64 time_ns);

#endif /* HSBPF_JITMAP_H */
