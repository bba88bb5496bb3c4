/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The agent's --output-dir sink: one gzipped pprof file per interval, named by its start so
 * that names sort by time, the oldest removed past a count or a total size. */
#ifndef HSBPF_AGENT_OUTDIR_H
#define HSBPF_AGENT_OUTDIR_H

#include <stddef.h>
#include "lib/util.h"

#define OUTDIR_PREFIX "hsbpf-"
#define OUTDIR_SUFFIX ".pb.gz"

/* "hsbpf-20261127T061530.123456Z.pb.gz" for a wall-clock time (ns since the epoch, UTC) */
void outdir__name(u64 realtime_ns, char *buf, size_t size);
/* buf as name in dir (made if missing), through a temporary file and a rename so that a
 * reader never sees half a profile; then the oldest profiles of dir go while there are more
 * than max_files or they take more than max_bytes (0: no bound), the newest always kept.
 * 0 or -errno (said) */
int outdir__write(const char *dir, const char *name, const void *buf, size_t len, u64 max_files,
		  u64 max_bytes);
/* only the rotation: *removed counts what went; 0 or -errno (said) */
int outdir__rotate(const char *dir, u64 max_files, u64 max_bytes, size_t *removed);

#endif /* HSBPF_AGENT_OUTDIR_H */
