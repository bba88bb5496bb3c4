/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Missing debug files and objects fetched by build-id from debuginfod servers through
 * elfutils' client library, kept in the build-id cache, and told on stderr. */
#ifndef HSBPF_DEBUGINFOD_H
#define HSBPF_DEBUGINFOD_H

#include "lib/util.h"

/* the servers to ask (space-separated URLs as in DEBUGINFOD_URLS): urls, else
 * $DEBUGINFOD_URLS; none: nothing is fetched. Each transfer that makes no progress for
 * $DEBUGINFOD_TIMEOUT seconds (DEBUGINFOD_DEFAULT_TIMEOUT if unset) is tried again
 * $DEBUGINFOD_RETRY_LIMIT times (DEBUGINFOD_DEFAULT_RETRIES) and then given up, and a
 * server that fails so is not asked again in this run. 0 or -ENOMEM. */
#define DEBUGINFOD_DEFAULT_TIMEOUT "5"
#define DEBUGINFOD_DEFAULT_RETRIES "1"
int debuginfod__setup(const char *urls);
void debuginfod__end(void);
bool debuginfod__enabled(void);

/* the separate debug file (debuginfo) or the object itself (executable) of a build-id:
 * from the build-id cache, else fetched. An open fd and *path (malloc'd), or -errno
 * (-ENOENT: no server has it; -ENOSYS: no server to ask). name says whose, in messages. */
int debuginfod__find_debuginfo(const char *name, const u8 *id, size_t len, char **path);
int debuginfod__find_executable(const char *name, const u8 *id, size_t len, char **path);

#endif /* HSBPF_DEBUGINFOD_H */
