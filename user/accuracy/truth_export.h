/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Exporting a truth file: summary, instructions, blocks and edges as text or JSON. */
#ifndef HSBPF_TRUTH_EXPORT_H
#define HSBPF_TRUTH_EXPORT_H

#include <stdio.h>
#include "truth.h"

/* what: comma-separated summary,insns,blocks,edges (NULL: all); -EINVAL for a bad list */
int truth__export(const struct truth *t, const char *what, bool json, FILE *out);

#endif
