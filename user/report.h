/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* hsbpf report's work once its options are parsed (rows, call graphs, branch records,
 * exports), and the profile loading report's exports and script share. */
#ifndef HSBPF_REPORT_H
#define HSBPF_REPORT_H

#include <stdbool.h>
#include "report/hist.h"
#include "lib/output.h"
#include "profile/profile.h"
#include "report/sample_filter.h"

struct symbolizer;

struct report_opts {
	const char *input;
	const char *output;	/* NULL: standard output */
	const char *sort;
	const char *truth_path;
	const char *debuginfod;
	const char *sample_type;	/* record --memory's view (memory.h), NULL: alloc_space */
	enum output_format fmt;
	u64 limit;
	bool limit_set;
	bool per_cgroup;
	bool raw_names;
	bool inl;
	/* -1: as the profile has stacks or not */
	int graph;
	int children;
	int order;		/* enum callchain_order */
	int style;		/* enum callchain_style (-g graph, fractal, flat, folded) */
	double graph_limit;	/* -g's threshold; -1: --percent-limit's, else 0.5 */
	double percent_limit;	/* -1: the default */
	bool show_nr;		/* -n: a Samples column beside Children and Self */
	bool wakers;		/* --wakers: woken blocks' chains go on with their waker's frames */
	bool header;		/* --header: the profile's header before the rows */
	bool header_only;	/* --header-only: the header alone */
	struct sample_filter sf;
};

/* the profile at input with a symbolizer (names raw or demangled, inlined functions or not,
 * no source lines) and the filters applied; a profile without samples is an error whose
 * message ends with empty. *stacks (when not NULL): whether it had stacks before the
 * filters. 0, or -errno after saying what is wrong; *p and *sy are to be freed either way */
int report__load(const char *input, const struct sample_filter *sf, bool raw_names, bool inl,
		 const char *empty, struct profile **p, struct symbolizer **sy, bool *stacks);
/* the formats report writes (OUT_SET of each), for output_format__parse */
unsigned int report__formats(void);
/* print (or export) what o asks: the exit status, 0, 1 or 2 */
int report__run(const struct report_opts *o);

#endif /* HSBPF_REPORT_H */
