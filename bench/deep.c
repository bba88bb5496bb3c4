// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* make bench-stacks' workload: CPU-bound work at the bottom of a stack DEPTH frames deep
 * (main, DEPTH - 3 recursive frames, the leaf; with _start and libc's two), built -O2
 * -fomit-frame-pointer as Debian builds.
 *   deep DEPTH ROUNDS: a fixed amount of work (ROUNDS x 200,000 leaf iterations), so that
 *   what a profiler takes shows as wall time, which it prints (elapsed_ns N) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

__attribute__((noipa)) static unsigned long leaf(unsigned long n)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < n; i++)
		x = x * 2862933555777941757ul + 3037000493ul;
	sink = x;
	return x;
}

__attribute__((noipa)) static unsigned long down(int depth, unsigned long n)
{
	unsigned long r;

	if (depth <= 0)
		return leaf(n);
	r = down(depth - 1, n);
	/* opaque to the compiler: without it, gcc -O2 turns the recursion into a loop (tail
	 * recursion with an accumulator) and the stack is one frame deep */
	__asm__ volatile("" : "+r"(r));
	return r + 1;	/* not a tail call: every frame stays */
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 32;
	long rounds = argc > 2 ? atol(argv[2]) : 1000;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);

	/* _start, __libc_start_main, __libc_start_call_main, main and leaf are the other five */
	depth = depth > 5 ? depth - 5 : 0;
	for (long r = 0; r < rounds; r++)
		down(depth, 200000);
	/* its own wall time, without what a profiler takes to start and to finish */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("elapsed_ns %lld\n", (t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec));
	return 0;
}
