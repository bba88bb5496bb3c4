/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* report --sort edge|range: a profile's branch-stack edges or fall-through ranges, resolved. */
#ifndef HSBPF_LBR_REPORT_H
#define HSBPF_LBR_REPORT_H

#include <stdio.h>
#include "lib/output.h"
#include "profile/profile.h"
#include "symbols/symbolizer.h"

/* kind: HSBPF_LBR_EDGE or HSBPF_LBR_RANGE; limit 0: all; -ENODATA (reported) without branch data */
int lbr_report__print(const struct profile *p, struct symbolizer *sy, u32 kind,
		      enum output_format fmt,
		      size_t limit, FILE *out);

#endif
