/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* JIT code's names from perf map files (/tmp/perf-PID.map: "START SIZE NAME" lines in hex, as
 * node --perf-basic-prof, the JVM's agents, LuaJIT and others write them), copied into the
 * profile while the processes live, since the files are theirs and may go with them. Only the
 * maps of followed processes are read, only when owned by root or by the process's user (the
 * folder is world-writable), incrementally and up to a bound. */
#ifndef HSBPF_JITMAP_H
#define HSBPF_JITMAP_H

#include "profile/profile.h"

#define JITMAP_DIR		"/tmp"
#define JITMAP_MAX_SIZE		(64ull << 20)	/* a larger map is read up to here */
#define JITMAP_MAX_TOTAL	(256ull << 20)	/* and all of a recording's maps together */
#define JITMAP_SCAN_BYTES	(4ull << 20)	/* a scan's share: the rest waits for the next */

struct jitmap_stats {
	u64 syms;		/* symbols added */
	u64 malformed;		/* lines skipped: not START SIZE NAME, or a size of 0 or >= 4 GB */
	u32 lines;		/* lines seen: the index the next line gets (0 to start a file) */
};

/* the symbols of a perf map file's text, added to p as pid's (read at time_ns) */
int jitmap__parse(struct profile *p, u32 pid, u64 time_ns, const char *buf, size_t len,
		  struct jitmap_stats *st);

/* the followed processes and what was read of each one's map file */
struct jitmaps;

struct jitmaps_stats {
	u64 opened;		/* map files opened */
	u64 bytes;		/* ... bytes read from them */
	u64 lines;		/* ... lines parsed */
	u64 users_read;		/* processes' users taken (a stat of /proc/PID each) */
};

struct jitmaps *jitmaps__new(const char *dir);
void jitmaps__free(struct jitmaps *j);
/* the processes followed: pids and their descendants (the profile's forks); nr 0: every
 * process the profile hears of (-a, --cgroup). Before any scan */
int jitmaps__target(struct jitmaps *j, const u32 *pids, size_t nr);
/* the bounds on what is read (per map, per recording, per scan); JITMAP_* by default */
void jitmaps__set_limits(struct jitmaps *j, u64 per_map, u64 total, u64 per_scan);
/* DIR/perf-PID.map into p: the lines appended since the last read, or the whole file when it
 * was replaced (what the earlier read gave dropped). pid is followed from now on; its user is
 * taken while it lives, and a map whose owner is neither root nor that user, or is no regular
 * file, is ignored (p->stats.jit_ignored). The profile's jit_* counters are kept. 0, or -ENOENT
 * without a file or a live process, -EPERM for a map ignored, -errno */
int jitmaps__read(struct jitmaps *j, struct profile *p, u32 pid, u64 time_ns);
/* pid is followed though it has gone (a recording imported after the fact): its map is
 * looked for in DIR under its recorded pid and taken only when owned by root or by uid (perf
 * report's rule: the user reading it). Before jitmaps__read; 0 or -ENOMEM */
int jitmaps__follow_gone(struct jitmaps *j, u32 pid, u32 uid);
/* pid has exited: its map read a last time if it is followed, and not again */
int jitmaps__exit(struct jitmaps *j, struct profile *p, u32 pid, u64 time_ns);
/* follow the processes new in p that are targets, and read the maps of those alive, up to
 * the scan's share (so that a recording's polls keep their pace); 0 or -ENOMEM */
int jitmaps__scan(struct jitmaps *j, struct profile *p, u64 time_ns);
const struct jitmaps_stats *jitmaps__stats(const struct jitmaps *j);

#endif /* HSBPF_JITMAP_H */
