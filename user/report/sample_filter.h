/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* report's sample filters, as perf report has them (--comm, --pid, --tid, --dso, --symbols,
 * --cpu, --time): the samples and stack samples of a profile that fail them are taken out
 * before any view is made, so that flat tables, call graphs, folded stacks, JSON and CSV
 * all count the same samples. */
#ifndef HSBPF_SAMPLE_FILTER_H
#define HSBPF_SAMPLE_FILTER_H

#include "profile/profile.h"
#include "symbols/symbolizer.h"

struct sample_filter {
	const char *comms;	/* comma-separated lists; NULL: any */
	const char *pids;
	const char *tids;
	const char *dsos;	/* an object's path or file name */
	const char *syms;
	const char *cpus;	/* CPU list: 0-3,6 */
	bool by_time;
	u64 time_start, time_end;	/* ns after the recording's start; end exclusive */
};

/* "START,END" in seconds after the recording's start, either side may be empty: 0, or
 * -EINVAL after saying what is wrong */
int sample_filter__parse_time(struct sample_filter *f, const char *arg);
/* a --pid or --tid list (opt names it in the message): numbers, comma-separated, none
 * empty; 0, or -EINVAL after saying what is wrong */
int sample_filter__parse_ids(const char *arg, const char *opt);
/* whether any filter is set */
bool sample_filter__active(const struct sample_filter *f);
/* the profile without the samples that fail f; -EINVAL after saying why (a key the profile
 * was recorded without), -ENOMEM. *dropped: the samples taken out */
int sample_filter__apply(const struct sample_filter *f, struct profile *p, struct symbolizer *sy,
			 u64 *dropped);
/* the same for a command that draws or compares name's samples (flamegraph, diff): with
 * sy NULL a symbolizer of its own names them; -ENODATA after saying so when none is left */
int sample_filter__keep(const struct sample_filter *f, struct profile *p, struct symbolizer *sy,
			const char *name);
/* the name a sample's thread had (its thread name, else its command), for comm columns */
const char *sample_filter__thread_comm(const struct profile *p, u32 pid, u32 tid, const char *comm);

#endif /* HSBPF_SAMPLE_FILTER_H */
