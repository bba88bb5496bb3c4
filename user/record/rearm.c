// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The randomized-period controller. PERF_EVENT_IOC_PERIOD restarts the event's period from the
 * moment it lands, and the kernel keeps forwarding by the value written until the next write.
 * So for clock events the value written is the drawn interval less the time already elapsed
 * since the sample and less how long a write takes to land, which is learned from the
 * intervals themselves: interval = (elapsed + landing) + written. */
#include <stdlib.h>
#include <string.h>
#include "record/rearm.h"


void rearm_ctl__init(struct rearm_ctl *c, enum period_mode mode, u64 base, bool is_clock,
		     u64 seed, bool keep_log)
{
	memset(c, 0, sizeof(*c));
	c->mode = mode;
	c->base = base;
	c->is_clock = is_clock;
	c->rng = seed;
	c->keep_log = keep_log;
	c->st.interval_min = UINT64_MAX;
}

void rearm_ctl__free(struct rearm_ctl *c)
{
	free(c->log);
	c->log = NULL;
	c->nr_log = c->cap_log = 0;
}

bool rearm__in_window(u64 base, u64 interval)
{
	return interval >= base - base / 50 && interval <= base + base / 4;
}

static void log_interval(struct rearm_ctl *c, const struct rearm_token *t, bool armed)
{
	struct rearm_record *r;

	/* a log that cannot grow is only shorter: -v output, never data */
	if (!c->keep_log || c->nr_log >= REARM_LOG_MAX ||
	    array__reserve((void **)&c->log, &c->cap_log, c->nr_log + 1, sizeof(*c->log)))
		return;
	r = &c->log[c->nr_log++];
	*r = (struct rearm_record){
		.time_ns = t->time_ns, .interval = t->interval, .cpu = t->cpu, .counted = t->counted,
		.designed = armed ? c->designed : 0, .written = armed ? c->written : 0,
		.elapsed = armed ? c->elapsed : 0,
	};
}

static int cmp_s64(const void *a, const void *b)
{
	s64 x = *(const s64 *)a, y = *(const s64 *)b;

	return x < y ? -1 : x > y;
}

/* the landing time is the median of the last REARM_LANDING_SEEN observations: a host
 * hiccup (a vCPU descheduled while the write was under way) is one wild value that a mean
 * would carry into the next intervals, and the median ignores */
static void learn_landing(struct rearm_ctl *c, s64 seen)
{
	s64 sorted[REARM_LANDING_SEEN];
	size_t n;

	/* longer than this, the interval was stretched by something other than the write: an idle
	 * vCPU that woke late for its timer, a host preemption */
	if (seen < 0 || seen > (s64)(c->base / 4 > REARM_LANDING_MAX ? c->base / 4 : REARM_LANDING_MAX))
		return;
	c->seen[c->nr_seen++ % REARM_LANDING_SEEN] = seen;
	n = c->nr_seen < REARM_LANDING_SEEN ? c->nr_seen : REARM_LANDING_SEEN;
	memcpy(sorted, c->seen, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_s64);
	c->landing = sorted[(n - 1) / 2];	/* the lower median: two values give the smaller */
}

void rearm_ctl__account(struct rearm_ctl *c, const struct rearm_token *t)
{
	struct profile_stats *st = &c->st;
	/* the armed interval is the one the first sample after the write ends; a sample that
	 * came before the write landed ended an interval of the period in force before */
	bool armed = c->armed && t->time_ns > c->write_done;

	if (armed) {
		c->armed = false;
		if (c->is_clock)
			learn_landing(c, (s64)t->interval - (s64)c->written - (s64)c->elapsed);
	}
	log_interval(c, t, armed);
	/* the first interval on a CPU runs from enable; intervals outside the target (an idle
	 * CPU) say nothing about the target's sampling */
	if (t->counted && t->interval && t->counter != t->interval) {
		st->intervals++;
		st->interval_sum += t->interval;
		st->interval_sumsq += (double)t->interval * t->interval;
		if (t->interval < st->interval_min)
			st->interval_min = t->interval;
		if (t->interval > st->interval_max)
			st->interval_max = t->interval;
		if (t->interval == c->last_interval)
			st->interval_repeats++;
		if (!rearm__in_window(c->base, t->interval))
			st->interval_outside++;
		if (armed) {
			u64 err = t->interval > c->designed ? t->interval - c->designed :
							      c->designed - t->interval;

			st->intervals_armed++;
			st->interval_err_sum += err;
			if (err > st->interval_err_max)
				st->interval_err_max = err;
		}
	}
	c->last_interval = t->interval;
}

u64 rearm_ctl__plan(struct rearm_ctl *c, const struct rearm_token *t, u64 now_ns)
{
	u64 next = period__draw(c->mode, c->base, &c->rng), lead, floor;

	c->designed = next;
	c->elapsed = now_ns > t->time_ns ? now_ns - t->time_ns : 0;
	if (!c->is_clock) {
		/* event counts that passed before the write cannot be known: the interval is
		 * the draw plus what ran meanwhile (weights stay the measured ones) */
		c->written = next;
		return next;
	}
	/* the value written is also the period the kernel keeps if the next re-arm is late: never
	 * below half the base, or a late thread would bring on a storm of short intervals that
	 * keeps it late (seen on an idle vCPU whose timer fired 9 ms late) */
	floor = c->base / 2 > REARM_MIN_CLOCK_PERIOD ? c->base / 2 : REARM_MIN_CLOCK_PERIOD;
	lead = c->elapsed + c->landing;
	if (lead + floor > next) {
		/* too late to meet the draw: the interval runs long, and is counted so */
		c->st.rearm_late++;
		c->written = floor;
	} else {
		c->written = next - lead;
	}
	return c->written;
}

void rearm_ctl__written(struct rearm_ctl *c, u64 before_ns, u64 after_ns, int err)
{
	(void)before_ns;
	if (err) {
		c->st.rearm_failed++;
		c->armed = false;
		return;
	}
	c->st.rearms++;
	c->armed = true;
	c->write_done = after_ns;
}

void rearm_ctl__merge(const struct rearm_ctl *c, struct profile_stats *st)
{
	const struct profile_stats *s = &c->st;

	st->rearms += s->rearms;
	st->rearm_late += s->rearm_late;
	st->rearm_failed += s->rearm_failed;
	if (!s->intervals)
		return;
	if (!st->intervals || s->interval_min < st->interval_min)
		st->interval_min = s->interval_min;
	if (s->interval_max > st->interval_max)
		st->interval_max = s->interval_max;
	st->intervals += s->intervals;
	st->interval_sum += s->interval_sum;
	st->interval_sumsq += s->interval_sumsq;
	st->interval_repeats += s->interval_repeats;
	st->interval_outside += s->interval_outside;
	st->intervals_armed += s->intervals_armed;
	st->interval_err_sum += s->interval_err_sum;
	if (s->interval_err_max > st->interval_err_max)
		st->interval_err_max = s->interval_err_max;
}
