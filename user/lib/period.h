/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Sampling periods: fixed, prime, randomized (uniform jitter of up to 1/8 of the period,
 * the literature's pfmon mask), prime-randomized, and phase (the default for clocks: a fixed
 * period whose phase is redrawn at random moments, PERIOD_PHASE_GAP_NS apart on average). */
#ifndef HSBPF_PERIOD_H
#define HSBPF_PERIOD_H

#include "lib/util.h"

enum period_mode {
	PERIOD_FIXED,
	PERIOD_PRIME,
	PERIOD_RANDOM,
	PERIOD_PRIME_RANDOM,
	PERIOD_PHASE,
};

/* phase: the mean time between two restarts of a CPU's event at a random moment (ns). Each
 * restart moves the sampling grid to a uniform phase of any loop, so every sample is unbiased;
 * a restart costs one wake-up and one PERF_EVENT_IOC_PERIOD (about 20 us of CPU on a VM), so
 * their rate is set by time, 4 a second: 0.01% of a CPU at any frequency. The price is
 * variance on a loop exactly in step with the period, where the samples between two restarts
 * land alike: the independent draws are then the restarts, not the samples
 * (docs/how-it-works.md, "Phase"). */
#define PERIOD_PHASE_GAP_NS	250000000ull

/* the longest base period taken: the kernel refuses periods with bit 63 set, and a
 * randomized one may grow by 1/8 */
#define PERIOD_MAX (1ull << 62)

int period__parse_mode(const char *s, enum period_mode *mode);
const char *period__mode_name(enum period_mode mode);
bool period__is_random(enum period_mode mode);
bool period__is_prime(u64 n);
/* the smallest prime >= n (n >= 2); 0 if none fits in 64 bits */
u64 period__next_prime(u64 n);
/* the first period to program for this mode (prime applied, no jitter yet) */
u64 period__initial(enum period_mode mode, u64 base);
/* a fresh period: base + uniform [0, base/8), then prime if asked; rng is xorshift state */
u64 period__draw(enum period_mode mode, u64 base, u64 *rng);
/* phase: the wait before the next restart, uniform in [0, 2 * mean) ns */
u64 period__phase_gap(u64 mean, u64 *rng);

#endif /* HSBPF_PERIOD_H */
