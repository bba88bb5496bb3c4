/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The randomized-period controller of one CPU: from the handler's sample tokens it decides the
 * period to write so that each interval is the one drawn, and accounts every interval against
 * its design. Pure arithmetic on times and counts: sampler.c owns the threads and the fds. */
#ifndef HSBPF_REARM_H
#define HSBPF_REARM_H

#include "hsbpf.h"
#include "lib/period.h"
#include "profile/profile.h"

/* The kernel's floor for a clock event's period (perf_swevent_start_hrtimer) */
#define REARM_MIN_CLOCK_PERIOD	10000
/* record warns when re-arming takes more than this share of the sampled CPUs */
#define REARM_COST_WARN	0.05
/* a landing time above this (and above a quarter of the base) is not learned from: a timer
 * interrupt reaches a VM's vCPU 30-60 us after it is due here, an idle vCPU wakes for it
 * milliseconds late */
#define REARM_LANDING_MAX	500000
/* how many recent landing times the estimate is the median of */
#define REARM_LANDING_SEEN	15

/* -v keeps at most this many intervals per CPU (about 4 minutes at 1 kHz, 10 MB) */
#define REARM_LOG_MAX	(256 * 1024)

/* One interval as the controller saw it (for -v and tests) */
struct rearm_record {
	u64 time_ns;		/* the sample that ended the interval */
	u64 interval;		/* measured: the event count since the previous sample */
	u64 designed;		/* drawn for it, 0 if no re-arm aimed at it */
	u64 written;		/* the period written to get it */
	u64 elapsed;		/* sample -> the write, when it was armed */
	u32 cpu;
	u32 counted;		/* a target's interval */
};

struct rearm_ctl {
	enum period_mode mode;
	u64 base;
	bool is_clock;		/* ns: the elapsed time can be taken off */
	u64 rng;
	/* the interval armed by the last write */
	bool armed;
	u64 designed, written, elapsed, write_done;
	/* ns from the clock read just before the write to the restart in the kernel: the median
	 * of the last observations */
	u64 landing;
	s64 seen[REARM_LANDING_SEEN];
	size_t nr_seen;
	u64 last_interval;
	struct profile_stats st;	/* rearms, intervals, interval_* of this CPU */
	/* -v: every interval, in order */
	struct rearm_record *log;
	size_t nr_log, cap_log;
	bool keep_log;
};

void rearm_ctl__init(struct rearm_ctl *c, enum period_mode mode, u64 base, bool is_clock,
		     u64 seed, bool keep_log);
void rearm_ctl__free(struct rearm_ctl *c);
/* account the interval a token ends (every token, in order) */
void rearm_ctl__account(struct rearm_ctl *c, const struct rearm_token *t);
/* the period to write at now_ns for the interval that began at token t (the newest of its
 * CPU); the draw is kept as the interval's design */
u64 rearm_ctl__plan(struct rearm_ctl *c, const struct rearm_token *t, u64 now_ns);
/* the write of the planned period: began at before_ns (the now given to plan), done at
 * after_ns; err is the write's -errno, 0 on success */
void rearm_ctl__written(struct rearm_ctl *c, u64 before_ns, u64 after_ns, int err);
/* add this CPU's interval statistics into st */
void rearm_ctl__merge(const struct rearm_ctl *c, struct profile_stats *st);

/* the promise an interval is checked against: drawn from [base, base + base/8), it may land a
 * little early (the re-arm is timed in user space: 2% of the base, 20 us at 1 ms) or late
 * (the host or an interrupt delays the sample: up to another 1/8 of the base) */
bool rearm__in_window(u64 base, u64 interval);

#endif /* HSBPF_REARM_H */
