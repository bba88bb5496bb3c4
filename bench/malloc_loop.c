// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The malloc-heavy workload of make bench-memory (bench/memory.sh): THREADS threads each
 * allocating CALLS small objects (16 to 256 bytes, a fixed cycle of sizes) in batches of 64,
 * each batch freed before the next, nothing else between the calls.
 *
 *   malloc_loop CALLS [THREADS]
 *
 * On stdout: "calls N" (mallocs, as many frees), "bytes N" (asked), "elapsed_ns NS" (wall
 * time of the threads' loops) and "ns_per_call NS" (the elapsed time per malloc+free pair
 * and thread: each thread's own rate). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BATCH	64

static long calls;

/* arg: the thread's bytes asked, out */
__attribute__((noinline)) static void *alloc_loop(void *arg)
{
	void *batch[BATCH];
	long long bytes = 0;

	for (long i = 0; i < calls; i++) {
		size_t size = 16 + (i * 7 % 16) * 16;

		bytes += size;
		batch[i % BATCH] = malloc(size);
		*(volatile char *)batch[i % BATCH] = 0;
		if (i % BATCH == BATCH - 1)
			for (int j = 0; j < BATCH; j++)
				free(batch[j]);
	}
	for (long i = calls - calls % BATCH; i < calls; i++)
		free(batch[i % BATCH]);
	*(long long *)arg = bytes;
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	pthread_t tid[64];
	struct timespec t0, t1;
	long long ns, bytes = 0, each[64];

	calls = argc > 1 ? atol(argv[1]) : 1000000;
	if (calls < 1 || threads < 1 || threads > 64) {
		fprintf(stderr, "usage: malloc_loop CALLS [THREADS (1-64)]\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int t = 0; t < threads; t++)
		if (pthread_create(&tid[t], NULL, alloc_loop, &each[t]))
			return 1;
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (int t = 0; t < threads; t++)
		bytes += each[t];
	ns = (t1.tv_sec - t0.tv_sec) * 1000000000LL + t1.tv_nsec - t0.tv_nsec;
	printf("calls %lld\nbytes %lld\nelapsed_ns %lld\nns_per_call %.1f\n", (long long)calls * threads,
	       bytes, ns, (double)ns / calls);
	return 0;
}
