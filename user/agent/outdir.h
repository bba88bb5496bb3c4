/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The agent's --output-dir sink: one gzipped pprof file per interval, numbered in the order
 * written and named by its start too, the oldest (the lowest numbers) removed past a count or
 * a total size: a step of the wall clock changes no order. */
#ifndef HSBPF_AGENT_OUTDIR_H
#define HSBPF_AGENT_OUTDIR_H

#include <stddef.h>
#include "lib/util.h"

#define OUTDIR_PREFIX "hsbpf-"
#define OUTDIR_SUFFIX ".pb.gz"

/* profiles numbered with this many digits (at least), so that they sort by name too */
#define OUTDIR_SEQ_DIGITS 10

struct outdir;

/* "hsbpf-0000000042-20261127T061530.123456Z.pb.gz": profile seq of the folder, which started
 * at a wall-clock time (ns since the epoch, UTC) */
void outdir__name(u64 seq, u64 realtime_ns, char *buf, size_t size);
/* the folder dir, made if missing, numbered on from the highest number of its profiles (1 for
 * none: the unnumbered names of earlier versions count as older than any); NULL with errno
 * set, after saying why */
struct outdir *outdir__open(const char *dir);
/* buf as the folder's next profile, started at realtime_ns, through a temporary file and a
 * rename so that a reader never sees half a profile; then the oldest profiles go while there
 * are more than max_files or they take more than max_bytes (0: no bound), the newest always
 * kept. 0 or -errno (said) */
int outdir__write(struct outdir *o, u64 realtime_ns, const void *buf, size_t len, u64 max_files,
		  u64 max_bytes);
const char *outdir__dir(const struct outdir *o);
void outdir__free(struct outdir *o);
/* only the rotation: *removed counts what went; 0 or -errno (said) */
int outdir__rotate(const char *dir, u64 max_files, u64 max_bytes, size_t *removed);

#endif /* HSBPF_AGENT_OUTDIR_H */
