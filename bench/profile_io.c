// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What reading and writing a profile costs this build: profile_io FILE [REPS] reads FILE and
 * writes it back (into FILE.io, removed after) REPS times, and prints the median milliseconds
 * of each and the size written. Built against an older hsbpf's library it gives the before
 * (docs/benchmarks.md, "Off-CPU profiles of a whole machine"). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "profile/profile.h"

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	double rd[64], wr[64];
	char out[4096];
	struct stat st = {};
	int reps = argc > 2 ? atoi(argv[2]) : 5;

	if (argc < 2 || reps < 1 || reps > 64) {
		fprintf(stderr, "usage: profile_io FILE [REPS (1-64)]\n");
		return 2;
	}
	snprintf(out, sizeof(out), "%s.io", argv[1]);
	for (int i = 0; i < reps; i++) {
		struct profile *p;
		double t0 = now_ms(), t1;

		if (profile__read(argv[1], &p))
			return 1;
		t1 = now_ms();
		if (profile__write(p, out))
			return 1;
		rd[i] = t1 - t0;
		wr[i] = now_ms() - t1;
		profile__free(p);
	}
	stat(out, &st);
	unlink(out);
	qsort(rd, reps, sizeof(*rd), cmp_double);
	qsort(wr, reps, sizeof(*wr), cmp_double);
	printf("read %.1f ms, write %.1f ms (medians of %d), %lld bytes written\n", rd[reps / 2],
	       wr[reps / 2], reps, (long long)st.st_size);
	return 0;
}
