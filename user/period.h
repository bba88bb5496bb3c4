/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Sampling periods: fixed, prime, randomized (uniform jitter of up to 1/8 of the period,
 * the literature's pfmon mask) and prime-randomized. */
#ifndef HSBPF_PERIOD_H
#define HSBPF_PERIOD_H

#include "util.h"

enum period_mode {
	PERIOD_FIXED,
	PERIOD_PRIME,
	PERIOD_RANDOM,
	PERIOD_PRIME_RANDOM,
};

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

#endif /* HSBPF_PERIOD_H */
