/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Event names as perf spells them (cpu-clock, cycles:pp, r01c4, ...) and what they mean
 * for perf_event_open; also tells whether the machine can count them. */
#ifndef HSBPF_EVENT_H
#define HSBPF_EVENT_H

#include <linux/perf_event.h>
#include "lib/util.h"

struct event_spec {
	char name[64];		/* as written */
	u32 type;		/* PERF_TYPE_* */
	u64 config;
	u32 precise;		/* 0..3 */
	bool exclude_user;
	bool exclude_kernel;
	bool is_clock;		/* period in ns */
	bool branch_stack;	/* sample the last branch records too (-e lbr, -b) */
	bool lbr_call_stack;	/* --call-graph lbr: the LBR in call-stack mode */
};

/* 0, or -EINVAL after reporting what is wrong with the name */
int event__parse(const char *name, struct event_spec *ev);
/* fill a sampling attr for the event with a fixed period or a frequency */
void event__attr(const struct event_spec *ev, u64 period, u64 freq, struct perf_event_attr *attr);
/* does this machine have a core PMU (hardware events)? */
bool event__have_pmu(void);
/* explain a perf_event_open failure for this event once; returns err */
int event__explain_open_error(const struct event_spec *ev, int err);

#endif /* HSBPF_EVENT_H */
