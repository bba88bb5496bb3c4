/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* One function's disassembly with its blocks, sample counts, estimated block executions and,
 * given a truth file, the exact counts beside them; source lines interleaved. */
#ifndef HSBPF_ANNOTATE_H
#define HSBPF_ANNOTATE_H

#include <stdio.h>
#include "lib/output.h"
#include "profile/profile.h"
#include "symbols/symbolizer.h"
#include "profile/truth_file.h"

struct annotate_opts {
	const char *symbol;
	const struct truth *truth;	/* or NULL */
	enum output_format format;	/* text or json */
	bool raw_names;		/* --no-demangle */
};

/* 0, or -ENOENT (reported) when no object of the profile has that function */
int annotate__function(const struct profile *p, struct symbolizer *sy,
		       const struct annotate_opts *o, FILE *out);

#endif
