/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Stacks the kernel could not unwind yet: a sample whose pc is in no mapping the kernel knows
 * (a new program's first milliseconds, before user space has read its mappings and built
 * their tables; more of them on a busy machine) comes to user space with its registers and a
 * copy of its stack (struct late_stack, bpf/hsbpf.h), and is unwound here at the end, by the
 * kernel's own rules (unwind_walk), from the tables of the objects its process had mapped. An
 * off-CPU block's copy is sent as the task leaves the CPU, its time when it runs again
 * (struct late_block): the two are joined here by the copy's token. */
#ifndef HSBPF_LATE_STACKS_H
#define HSBPF_LATE_STACKS_H

#include "hsbpf.h"
#include "profile/profile.h"

#define LATE_STACKS_MAX	1024	/* copies kept (about 17 KB each); past them a sample keeps its pc */

struct late_stacks;

struct late_stacks *late_stacks__new(void);
void late_stacks__free(struct late_stacks *ls);
/* keep a copy of a sample the kernel sent; past LATE_STACKS_MAX it goes into p now with its
 * sampled pc alone, ended "no mapping", and counted (stats.stack_late_dropped) */
int late_stacks__add(struct late_stacks *ls, struct profile *p, const struct late_stack *l);
/* the time of an off-CPU block whose copy (a late_stack with b's token) came before it: the
 * copy is counted with it once unwound; when the copy was not kept, the block goes into p now
 * with its pc alone, ended "no mapping" */
int late_stacks__add_block(struct late_stacks *ls, struct profile *p, const struct late_block *b);
/* unwind the kept samples with the tables of what their process images mapped (p's
 * mappings) and add them to p's stack samples; 0 or -ENOMEM */
int late_stacks__resolve(struct late_stacks *ls, struct profile *p);

#endif /* HSBPF_LATE_STACKS_H */
