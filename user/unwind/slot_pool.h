/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Free ranges of one of the kernel unwinder's arrays (rows, pages, objects): first fit, freed
 * ranges merged with their neighbours, and a freed range reused only after a grace period, so
 * that a sample handler still reading an unloaded table never meets another table's rows. */
#ifndef HSBPF_SLOT_POOL_H
#define HSBPF_SLOT_POOL_H

#include "lib/util.h"

struct slot_pool;

/* capacity slots, all free; NULL (errno set) without memory */
struct slot_pool *slot_pool__new(u32 capacity);
void slot_pool__free(struct slot_pool *sp);
/* nr slots in a row, the lowest free range first; 0, -ENOSPC (no free range of nr slots that
 * is past its grace at now_ns) or -ENOMEM. nr 0 takes nothing */
int slot_pool__alloc(struct slot_pool *sp, u32 nr, u64 now_ns, u32 *first);
/* [first, first + nr) freed at now_ns: reusable from now_ns + grace_ns on; 0 or -ENOMEM */
int slot_pool__release(struct slot_pool *sp, u32 first, u32 nr, u64 now_ns, u64 grace_ns);
/* slots taken (not free, whether or not past their grace) */
u32 slot_pool__used(const struct slot_pool *sp);
/* the free ranges (for tests) */
size_t slot_pool__nr_ranges(const struct slot_pool *sp);

#endif /* HSBPF_SLOT_POOL_H */
