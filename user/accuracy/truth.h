/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Truths made by the harness: the reference collector's raw output resolved into a truth
 * (the model and its file are the product's, truth_file.h), and what the harness asks of
 * one beyond a report's lookups. */
#ifndef HSBPF_TRUTH_H
#define HSBPF_TRUTH_H

#include "profile/truth_file.h"

const char *edge__kind_name(enum edge_kind k);

/* each node's inclusive instructions (itself and its callees), into incl[nr_cnodes] */
void truth__cct_inclusive(const struct truth *t, u64 *incl);

/* read the plugin's raw output (ref/hsbpf-ref.c) from the start of the file raw_fd (which
 * messages call name) and resolve it into objects and ELF addresses; the meta fields the run
 * knows (command, status) are the caller's; several virtual PMUs may have sampled the same
 * run: vps[k] receives the k-th section's samples and branch records */
struct profile;
#define TRUTH_MAX_PMUS 8
int truth__from_raw_pmus(int raw_fd, const char *name, struct truth **out, struct profile **vps,
			 size_t nvp);

/* remove an object's instructions and edges (the crash catcher's), and its share of the total */
void truth__drop_object(struct truth *t, u32 obj);

#endif /* HSBPF_TRUTH_H */
