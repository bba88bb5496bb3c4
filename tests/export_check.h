/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The exports checked by their real readers: go tool pprof (Debian's golang-go) and the JSON
 * schema of speedscope's npm package (tests/speedscope); shared by the pprof, speedscope and
 * live export suites. */
#ifndef HSBPF_TEST_EXPORT_CHECK_H
#define HSBPF_TEST_EXPORT_CHECK_H

#include "lib/util.h"

/* `go tool pprof ARGS FILE` with its home, cache and module path in the test's temporary
 * folder and no network; stdout to out_path, stderr in err (size bytes); the exit status */
int go_pprof(const char *args, const char *file, const char *out_path, char *err, size_t size);

/* export the profile at path with hsbpf report --format pprof; then go tool pprof's -top
 * (flat and cumulative samples per function, -noinlines), -traces and -raw (samples and weight) must
 * equal hsbpf report's --children csv (or flat csv without stacks); the number of functions
 * compared */
size_t check_pprof_matches_report(const char *path);

/* a profile of sampled allocations (record --memory) exported as a Go heap profile: each of
 * its four sample types read by go tool pprof -sample_index= (and pprof's -inuse_space...)
 * equals report --sample-type's --children csv, each function's cumulative amount (report's
 * self is the allocation's caller, pprof's flat the allocator), and its total;
 * inuse_space shown first (report --sample-type's type when given); the functions compared */
size_t check_pprof_heap_matches_report(const char *path);

/* the speedscope export of the profile at path is valid against speedscope's schema, and its
 * weights sum to the profile's (its stack samples' when it has stacks) */
void check_speedscope(const char *path);

#endif
