// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* make bench-offcpu's futex workload: a pool of argv[2] thread pairs (default 2), each pair
 * passing a token back and forth through a futex argv[1] times (default 100000): every pass
 * is a FUTEX_WAKE of a thread blocked in FUTEX_WAIT, so a round is two wake-ups and two
 * context switches, as a lock or a condition variable handed between threads makes them.
 * Prints "futex_pool ROUNDS PAIRS NS WAKEUPS_PER_S": the wall time of the whole pool. */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct pair {
	_Atomic int turn;	/* 0: the first thread's, 1: the second's */
	long rounds;
};

static long long now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void futex(_Atomic int *addr, int op, int val)
{
	syscall(SYS_futex, addr, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

/* wait for my turn (me), then hand it over and wake the other */
static void play(struct pair *p, int me)
{
	for (long i = 0; i < p->rounds; i++) {
		int t;

		while ((t = atomic_load(&p->turn)) != me)
			futex(&p->turn, FUTEX_WAIT, t);
		atomic_store(&p->turn, !me);
		futex(&p->turn, FUTEX_WAKE, 1);
	}
}

static void *second(void *arg)
{
	play(arg, 1);
	return NULL;
}

static void *first(void *arg)
{
	play(arg, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 100000;
	int pairs = argc > 2 ? atoi(argv[2]) : 2;
	struct pair *p = calloc(pairs > 0 ? pairs : 1, sizeof(*p));
	pthread_t *t = calloc(2 * (pairs > 0 ? pairs : 1), sizeof(*t));
	long long t0;

	if (rounds <= 0 || pairs <= 0 || !p || !t) {
		fprintf(stderr, "usage: futex_pool [ROUNDS [PAIRS]]\n");
		return 2;
	}
	t0 = now();
	for (int i = 0; i < pairs; i++) {
		p[i].rounds = rounds;
		if (pthread_create(&t[2 * i], NULL, first, &p[i]) ||
		    pthread_create(&t[2 * i + 1], NULL, second, &p[i]))
			return 1;
	}
	for (int i = 0; i < 2 * pairs; i++)
		pthread_join(t[i], NULL);
	t0 = now() - t0;
	printf("futex_pool %ld %d %lld %.0f\n", rounds, pairs, t0, 2.0 * rounds * pairs / (t0 / 1e9));
	free(p);
	free(t);
	return 0;
}
