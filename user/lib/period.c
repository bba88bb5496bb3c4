// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Period arithmetic: primality by deterministic Miller-Rabin, jitter by xorshift64*. */
#include <string.h>
#include "lib/period.h"

static const char *const names[] = {
	[PERIOD_FIXED] = "fixed",
	[PERIOD_PRIME] = "prime",
	[PERIOD_RANDOM] = "random",
	[PERIOD_PRIME_RANDOM] = "prime-random",
	[PERIOD_PHASE] = "phase",
};

int period__parse_mode(const char *s, enum period_mode *mode)
{
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if (!strcmp(s, names[i])) {
			*mode = i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *period__mode_name(enum period_mode mode)
{
	return mode < ARRAY_SIZE(names) ? names[mode] : "?";
}

bool period__is_random(enum period_mode mode)
{
	return mode == PERIOD_RANDOM || mode == PERIOD_PRIME_RANDOM;
}

static u64 mulmod(u64 a, u64 b, u64 m)
{
	return (unsigned __int128)a * b % m;
}

static u64 powmod(u64 b, u64 e, u64 m)
{
	u64 r = 1;

	b %= m;
	while (e) {
		if (e & 1)
			r = mulmod(r, b, m);
		b = mulmod(b, b, m);
		e >>= 1;
	}
	return r;
}

bool period__is_prime(u64 n)
{
	static const u64 bases[] = { 2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37 };
	u64 d = n - 1;
	int s = 0;

	if (n < 2)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(bases); i++) {
		if (n == bases[i])
			return true;
		if (n % bases[i] == 0)
			return false;
	}
	while (!(d & 1)) {
		d >>= 1;
		s++;
	}
	/* these bases decide every n < 3.3e24, so all of u64 */
	for (size_t i = 0; i < ARRAY_SIZE(bases); i++) {
		u64 x = powmod(bases[i], d, n);

		if (x == 1 || x == n - 1)
			continue;
		for (int r = 1; r < s && x != n - 1; r++)
			x = mulmod(x, x, n);
		if (x != n - 1)
			return false;
	}
	return true;
}

u64 period__next_prime(u64 n)
{
	if (n <= 2)
		return 2;
	for (u64 c = n | 1; c >= n; c += 2)
		if (period__is_prime(c))
			return c;
	return 0;
}

u64 period__initial(enum period_mode mode, u64 base)
{
	return mode == PERIOD_PRIME ? period__next_prime(base) : base;
}

static u64 xorshift(u64 *s)
{
	u64 x = *s ? *s : 0x9E3779B97F4A7C15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

u64 period__draw(enum period_mode mode, u64 base, u64 *rng)
{
	u64 p = base, span = base / 8;

	if (period__is_random(mode) && span)
		p += xorshift(rng) % span;
	if (mode == PERIOD_PRIME || mode == PERIOD_PRIME_RANDOM)
		p = period__next_prime(p);
	return p;
}

u64 period__phase_gap(u64 mean, u64 *rng)
{
	u64 span = 2 * mean;

	return span ? xorshift(rng) % span : 0;
}
