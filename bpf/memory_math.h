/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The arithmetic of memory sampling (docs/memory.md), shared by the BPF programs
 * (bpf/memory.bpf.h) and user space (user/record/memory.c, which fills the tables and tests the
 * draws' mean): integer only, so that both sides compute the very same numbers.
 *
 * - the bytes to a thread's next sample, drawn from an exponential distribution of mean
 *   period: period * -ln(U), with -ln(U) from a table of log2 over 24 random bits;
 * - the weight of a sampled allocation of size s: it was sampled with p = 1 - exp(-s/period),
 *   so it stands for s/p bytes and 1/p objects; s/p = period * g(s/period), g(x) = x/(1-e^-x),
 *   from a table of g over [0, 32) (past 32, p is 1 within 1e-14). */
#ifndef HSBPF_MEMORY_MATH_H
#define HSBPF_MEMORY_MATH_H

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define HSBPF_MEM_LOG_BITS	8	/* the table of log2(1 + i/256), Q16 */
#define HSBPF_MEM_LOG_N		((1 << HSBPF_MEM_LOG_BITS) + 1)
#define HSBPF_MEM_G_STEP	4	/* g's table: steps of 1/16 ... */
#define HSBPF_MEM_G_MAX_X	32	/* ... up to x = 32 */
#define HSBPF_MEM_G_N		(HSBPF_MEM_G_MAX_X * (1 << HSBPF_MEM_G_STEP) + 1)
#define HSBPF_MEM_OBJ_SHIFT	10	/* objects are counted in 1/1024ths (a sample's 1/p) */
#define HSBPF_MEM_LN2_Q16	45426	/* ln 2 in Q16 */
#define HSBPF_MEM_RAND_BITS	24

/* floor(log2 v), v > 0 */
static __always_inline __u32 mem_ilog2(__u64 v)
{
	__u32 n = 0;

	if (v >= 1ull << 32) { v >>= 32; n += 32; }
	if (v >= 1ull << 16) { v >>= 16; n += 16; }
	if (v >= 1ull << 8) { v >>= 8; n += 8; }
	if (v >= 1ull << 4) { v >>= 4; n += 4; }
	if (v >= 1ull << 2) { v >>= 2; n += 2; }
	if (v >= 1ull << 1) n += 1;
	return n;
}

/* the bytes to the next sample from a random 32-bit word: period * -ln(U), U in (0, 1] in
 * steps of 2^-24; at least 1 */
static __always_inline __u64 mem_draw(__u32 rnd, __u64 period, const volatile __u32 *log2_q16)
{
	__u64 v = (rnd >> (32 - HSBPF_MEM_RAND_BITS)) + 1;	/* 1 .. 2^24 */
	__u32 n = mem_ilog2(v), i, frac;
	__u64 m, l, nl, left;

	/* the mantissa's leading one at bit 24: the next 8 bits index, the 16 after interpolate */
	m = v << (HSBPF_MEM_RAND_BITS - n);
	i = (m >> 16) & ((1 << HSBPF_MEM_LOG_BITS) - 1);
	frac = m & 0xffff;
	l = ((__u64)n << 16) + log2_q16[i] + (((__u64)(log2_q16[i + 1] - log2_q16[i]) * frac) >> 16);
	nl = ((__u64)HSBPF_MEM_RAND_BITS << 16) - l;		/* -log2(U), Q16 */
	left = (period * ((nl * HSBPF_MEM_LN2_Q16) >> 16)) >> 16;
	return left ? left : 1;
}

/* a sampled allocation of size bytes: the bytes it stands for (s/p) */
static __always_inline __u64 mem_weight(__u64 size, __u64 period, const volatile __u32 *g_q16)
{
	__u64 x, g;
	__u32 i;

	if (!size || size >= HSBPF_MEM_G_MAX_X * period)
		return size;
	x = (size << 16) / period;				/* Q16, below 32 << 16 */
	i = (x >> (16 - HSBPF_MEM_G_STEP)) & (HSBPF_MEM_G_N - 2);
	g = g_q16[i] + (((__u64)(g_q16[i + 1] - g_q16[i]) * (x & ((1 << (16 - HSBPF_MEM_G_STEP)) - 1))) >>
			(16 - HSBPF_MEM_G_STEP));
	return (period * g) >> 16;
}

/* ... and the objects it stands for (1/p), in 1/1024ths */
static __always_inline __u64 mem_objects(__u64 size, __u64 weight)
{
	return size ? (weight << HSBPF_MEM_OBJ_SHIFT) / size : 1 << HSBPF_MEM_OBJ_SHIFT;
}

#endif /* HSBPF_MEMORY_MATH_H */
