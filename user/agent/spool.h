/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A sink's disk spool (--spool-dir): the requests a server has not taken yet, one file each
 * (NNNNNNNNNNNNNNNNNNNN.req, numbered in the order they came, written through a temporary
 * file and a rename), at most max_bytes in all: past it the oldest are removed and counted.
 * What is left at exit is sent by the next run, oldest first. */
#ifndef HSBPF_AGENT_SPOOL_H
#define HSBPF_AGENT_SPOOL_H

#include <stddef.h>
#include "lib/util.h"

#define SPOOL_SUFFIX ".req"

struct spool;

/* the spool in dir (made if missing), what it holds from an earlier run included; NULL with
 * errno set, after saying why */
struct spool *spool__open(const char *dir, u64 max_bytes);
/* a request added as the newest, then the oldest removed while the spool holds more than
 * max_bytes (the new one too when it alone is larger); 0 or -errno (said: the disk full) */
int spool__push(struct spool *s, const void *buf, size_t len);
/* the oldest request in a malloc'd buffer and its number; 0, -ENOENT when empty, or -errno
 * (said; the file is then removed and counted as dropped) */
int spool__peek(struct spool *s, u8 **buf, size_t *len, u64 *seq);
/* request seq removed once sent, if it is still the oldest (the bound may have removed it
 * meanwhile) */
void spool__pop(struct spool *s, u64 seq);
size_t spool__count(const struct spool *s);
u64 spool__bytes(const struct spool *s);
/* requests removed unsent: the size bound, unreadable files */
u64 spool__dropped(const struct spool *s);
const char *spool__dir(const struct spool *s);
void spool__free(struct spool *s);

#endif /* HSBPF_AGENT_SPOOL_H */
