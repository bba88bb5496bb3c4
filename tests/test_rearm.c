// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The randomized-period controller against a simulated clock event: samples, a re-arm thread
 * that takes its time to see each token, and writes that take their time to land, as the
 * kernel does it (a write restarts the period; without one the kernel forwards by the value
 * last written). Each case is one of the ways intervals went wrong before. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include "record/rearm.h"

#define P 1000000ull	/* base period, ns */

struct sim {
	struct rearm_ctl c;
	u64 t;			/* time of the last sample */
	u64 in_force;		/* what the kernel forwards by */
	u64 counter;
	/* per interval, filled by the run */
	u64 measured[4096], drawn[4096];
	size_t n;
};

/* how late the thread sees token k, and how long write k takes to land */
typedef u64 (*delay_fn)(size_t k);

static void sim_init(struct sim *s, bool is_clock)
{
	memset(s, 0, sizeof(*s));
	rearm_ctl__init(&s->c, PERIOD_RANDOM, P, is_clock, 42, true);
	s->t = 1000000000ull;
	s->in_force = P;
	s->counter = 123;	/* the first interval runs from enable: not counted */
}

/* n samples; returns when done. The thread sees token k at t + seen(k); its write lands
 * land(k) after it begins. A token seen after the next sample is stale: the thread takes
 * the newer one instead, as one poll hands it both. */
static void sim_run(struct sim *s, size_t n, delay_fn seen, delay_fn land)
{
	u64 prev = s->t - P;

	for (size_t k = 0; k < n && s->n < 4096; k++) {
		struct rearm_token tok = { .cpu = 0, .counted = 1, .time_ns = s->t };
		u64 next_sample, at = s->t + seen(k);

		tok.interval = s->t - prev;
		tok.counter = s->counter += tok.interval;
		rearm_ctl__account(&s->c, &tok);
		if (k > 0) {
			s->measured[s->n] = tok.interval;
			s->drawn[s->n] = s->c.nr_log ? s->c.log[s->c.nr_log - 1].designed : 0;
			s->n++;
		}
		prev = s->t;
		next_sample = s->t + s->in_force;
		if (at < next_sample) {
			u64 w = rearm_ctl__plan(&s->c, &tok, at), restart = at + land(k);

			rearm_ctl__written(&s->c, at, restart + 1000, 0);
			s->in_force = w;
			next_sample = restart + w;
		}
		s->t = next_sample;
	}
}

static u64 d16us(size_t k) { (void)k; return 16000; }
static u64 d40us(size_t k) { (void)k; return 40000; }
/* 30-50 us, spread evenly */
static u64 jitter(size_t k) { return 30000 + (k * 7919) % 20001; }

Test(rearm, constant_delays_are_learned_and_intervals_are_the_draws)
{
	struct sim s;

	sim_init(&s, true);
	sim_run(&s, 2000, d16us, d40us);
	/* the first armed interval lands one landing late; from the second on, exact */
	for (size_t i = 2; i < s.n; i++) {
		cr_assert_neq(s.drawn[i], 0, "interval %zu not armed", i);
		cr_assert_eq(s.measured[i], s.drawn[i], "interval %zu: %llu, drawn %llu", i,
			     (unsigned long long)s.measured[i], (unsigned long long)s.drawn[i]);
	}
	cr_expect_eq(s.c.st.interval_outside, 0);
	cr_expect_eq(s.c.st.rearm_late, 0);
	cr_expect_eq(s.c.landing, 40000);
	/* uniform on [P, 1.125 P): the mean within 4 standard errors of 1.0625 P */
	cr_expect(fabs((double)s.c.st.interval_sum / s.c.st.intervals - 1.0625 * P) <
		  4 * 0.125 * P / sqrt(12.0 * s.c.st.intervals));
	rearm_ctl__free(&s.c);
}

/* the old controller averaged a lateness it had already taken off, and settled at half of it */
Test(rearm, jittery_landings_leave_no_bias)
{
	struct sim s;
	double err = 0;

	sim_init(&s, true);
	sim_run(&s, 2000, d16us, jitter);
	for (size_t i = 20; i < s.n; i++) {
		s64 e = (s64)s.measured[i] - (s64)s.drawn[i];

		cr_assert(llabs(e) <= 20000, "interval %zu off its draw by %lld ns", i, (long long)e);
		err += e;
	}
	cr_expect(fabs(err / (s.n - 20)) < 2000, "mean error %.0f ns", err / (s.n - 20));
	rearm_ctl__free(&s.c);
}

/* one interval stretched by something else (an idle vCPU waking 9 ms late) must not be
 * learned as a landing time: before, it made every later write "late" */
static u64 one_stall(size_t k) { return k == 100 ? 9000000 : 40000; }

Test(rearm, a_stretched_interval_is_not_learned)
{
	struct sim s;

	sim_init(&s, true);
	sim_run(&s, 400, d16us, one_stall);
	cr_expect_eq(s.c.landing, 40000);
	cr_expect_eq(s.c.st.rearm_late, 0);
	for (size_t i = 102; i < s.n; i++)
		cr_assert_eq(s.measured[i], s.drawn[i], "interval %zu after the stall", i);
	cr_expect_eq(s.c.st.interval_outside, 1, "only the stretched interval is off the window");
	rearm_ctl__free(&s.c);
}

/* a token seen late: the draw cannot be met, the interval runs long and is counted, and the
 * value written (which the kernel keeps if the next write is late too) is never a short
 * one: a 10 us write once started a storm of samples that kept the thread behind */
static u64 late_once(size_t k) { return k == 50 ? P * 9 / 10 : 16000; }

Test(rearm, a_late_token_writes_no_short_period)
{
	struct sim s;

	sim_init(&s, true);
	sim_run(&s, 200, late_once, d40us);
	cr_expect_eq(s.c.st.rearm_late, 1);
	for (size_t i = 0; i < s.c.nr_log; i++)
		if (s.c.log[i].written)
			cr_assert_geq(s.c.log[i].written, P / 2, "record %zu wrote %llu", i,
				      (unsigned long long)s.c.log[i].written);
	for (size_t i = 52; i < s.n; i++)
		cr_assert_eq(s.measured[i], s.drawn[i], "interval %zu after the late token", i);
	rearm_ctl__free(&s.c);
}

/* a token seen after the next sample: the write applies to a later interval; the sample
 * that came first is not taken for the armed one, and the old, shortened period it ended is
 * not learned from */
static u64 stale_once(size_t k) { return k == 60 ? P * 3 : 16000; }

Test(rearm, a_stale_token_is_superseded)
{
	struct sim s;

	sim_init(&s, true);
	sim_run(&s, 300, stale_once, d40us);
	cr_expect_eq(s.c.landing, 40000);
	for (size_t i = 62; i < s.n; i++)
		cr_assert_eq(s.measured[i], s.drawn[i], "interval %zu after the stale token", i);
	rearm_ctl__free(&s.c);
}

/* hardware events count events, not time: what passed before the write is unknown, so the
 * draw is written as it is */
Test(rearm, event_counts_are_written_as_drawn)
{
	struct rearm_ctl c;
	struct rearm_token t = { .time_ns = 1000, .interval = P, .counter = 5 * P, .counted = 1 };

	rearm_ctl__init(&c, PERIOD_PRIME_RANDOM, P, false, 7, false);
	for (int i = 0; i < 100; i++) {
		u64 w = rearm_ctl__plan(&c, &t, 500000);

		cr_assert_eq(w, c.designed);
		cr_assert(w >= P && w < P + P / 8 + 1000 && period__is_prime(w), "%llu", (unsigned long long)w);
	}
	rearm_ctl__free(&c);
}

Test(rearm, a_failed_write_is_not_a_rearm)
{
	struct rearm_ctl c;
	struct rearm_token t = { .time_ns = 1000, .interval = P, .counter = 5 * P, .counted = 1 };

	rearm_ctl__init(&c, PERIOD_RANDOM, P, true, 7, false);
	rearm_ctl__plan(&c, &t, 20000);
	rearm_ctl__written(&c, 20000, 30000, -EBADF);
	cr_expect_eq(c.st.rearms, 0);
	cr_expect_eq(c.st.rearm_failed, 1);
	cr_expect(!c.armed);
	rearm_ctl__plan(&c, &t, 20000);
	rearm_ctl__written(&c, 20000, 30000, 0);
	cr_expect_eq(c.st.rearms, 1);
	cr_expect_eq(c.st.rearm_failed, 1);
	rearm_ctl__free(&c);
}

Test(rearm, window_bounds)
{
	cr_expect(rearm__in_window(P, P));
	cr_expect(rearm__in_window(P, P - P / 50));
	cr_expect(!rearm__in_window(P, P - P / 50 - 1));
	cr_expect(rearm__in_window(P, P + P / 4));
	cr_expect(!rearm__in_window(P, P + P / 4 + 1));
}

Test(rearm, merging_cpus_keeps_extremes_and_sums)
{
	struct rearm_ctl a, b;
	struct profile_stats st = { .interval_min = 0 };
	struct rearm_token t = { .counter = 10 * P, .counted = 1 };

	rearm_ctl__init(&a, PERIOD_RANDOM, P, true, 1, false);
	rearm_ctl__init(&b, PERIOD_RANDOM, P, true, 2, false);
	t.interval = P + 5;
	rearm_ctl__account(&a, &t);
	t.interval = P + 500;
	rearm_ctl__account(&b, &t);
	t.interval = P * 2;
	rearm_ctl__account(&b, &t);
	rearm_ctl__merge(&a, &st);
	rearm_ctl__merge(&b, &st);
	cr_expect_eq(st.intervals, 3);
	cr_expect_eq(st.interval_min, P + 5);
	cr_expect_eq(st.interval_max, 2 * P);
	cr_expect_eq(st.interval_sum, 4 * P + 505);
	cr_expect_eq(st.interval_outside, 1);
}
