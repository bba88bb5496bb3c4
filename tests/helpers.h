/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Test helpers: run the hsbpf binary and fixtures, capture their output, load profiles. */
#ifndef HSBPF_TEST_HELPERS_H
#define HSBPF_TEST_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "profile/profile.h"

struct run_result {
	int status;		/* exit status, or 128 + signal */
	char out[65536];
	char err[65536];
};

/* run a shell command line; stdout and stderr captured */
int run(struct run_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *hsbpf_bin(void);
/* NAME inside the directory environment variable VAR names, DFLT when unset (static
 * buffer ring of 4) */
const char *env_path(const char *var, const char *dflt, const char *name);
const char *fixture(const char *name);	/* path of a built fixture (env_path's ring) */
/* a recording the repository carries in tests/data/lbr (LBR_DATA overrides the folder); the
 * test fails with the path it looked for when the file is not there */
const char *lbr_data(const char *name);
/* a fresh temporary directory for this test, removed by cleanup_tmpdir */
const char *tmpdir(void);
void cleanup_tmpdir(void);
/* samples of p in symbol sym (any object), or in objects whose path ends in dso_suffix */
u64 samples_in_symbol(const struct profile *p, const char *sym);
u64 samples_in_pid(const struct profile *p, u32 pid);
/* the Python frames of a stack sample's user stack, innermost first, as the profile names
 * them: names (NULL where unnamed) and lines, max at most; how many */
int python_frames(const struct profile *p, const struct profile_stack_sample *ss, const char **names,
		  u32 *lines, int max);
/* whether a stack's Python frames (python_frames' names) are in an import: a module's body runs
 * once and its code object is freed at once, often before hsbpf read its name (docs/python.md) */
bool python_importing(const char *const *names, int n);
/* pywork.py's split and own measure each function's CPU time around its calls: the file
 * they write it to set in PYWORK_TRUTH (inherited by what the test runs), and a's share of a
 * and b from it afterwards (the test fails when the file has neither) */
void pywork_truth_begin(void);
double pywork_truth_share(const char *a, const char *b);
/* run a shell command line in the background, stdout to /dev/null; its pid (it fails the
 * test when it cannot fork) */
pid_t spawn(const char *cmdline);
/* the fixture's JVM (jit/Hot.class) started in the test's temporary folder, where the JVM
 * leaves its attach files, once it says its JIT code is compiled; skips without a JDK */
pid_t spawn_jvm(void);
/* the process that root is or has among its descendants whose comm is comm, once it exists
 * with at least min_threads threads; waited for up to 15 s, else the test fails */
pid_t wait_descendant(pid_t root, const char *comm, int min_threads);
/* up to timeout_ms for the file to contain text */
bool wait_file_contains(const char *path, const char *text, int timeout_ms);
/* SIGKILL and wait */
void reap(pid_t pid);
/* rmdir a cgroup once its processes have gone (they may take a moment to leave) */
void remove_cgroup(const char *dir);
/* the cgroups an earlier test run left at the top of the v2 tree (hsbpf-NAME-PID, PID gone:
 * a test killed by its timeout before its cleanup), their processes killed, removed: they
 * would show up in the next run's containers */
void remove_stale_test_cgroups(void);
/* a cgroup named as docker names a container's: BASE/docker-<64 x c>.scope, made */
void make_docker_cgroup(const char *base, char c, char *out, size_t size);

/* a file in hsbpf's container format built by hand, for hostile files: sections in this
 * order, checksums right; malloc'd, *size set */
struct test_section {
	u32 type;
	const void *data;
	size_t size;
};
/* src packed as format 2.0 packs a section (section_pack__encode, by a packer of its own) */
int pack_section(const void *src, size_t size, const u8 *cols, void **out, size_t *out_size);
void *build_container(const char magic[8], u16 major, u16 minor, const struct test_section *secs,
		      size_t nr, size_t *size);
/* TMPDIR/p.data: where the live suites record */
const char *profile_path(void);
/* hsbpf record -o profile_path() ARGS (printf-style), which must succeed; the profile read */
struct profile *record_profile(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* record_profile, again (up to five times) while the recording lost sideband records (counted
 * and said by record: the machine's other processes filled the ring), for a test whose premise
 * is a complete sideband (each mapping and comm known) */
struct profile *record_profile_whole(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* what the last record_profile's hsbpf record said on stderr (its warnings) */
const char *record_profile_err(void);
/* report's flat rows of p by function (SORT_SYM), resolved by sy: must succeed */
struct hist;
struct symbolizer;
struct hist *flat_hist(const struct profile *p, struct symbolizer *sy);
/* the standard deviation of a share want measured on n binomial samples */
double binomial_sd(double want, u64 n);
/* k of n within tol of the share want (a Criterion expectation, named what) */
void expect_share_within(u64 k, u64 n, double want, double tol, const char *what);
/* ... within 4 standard deviations, and at least 3 points for scheduling noise */
void expect_share(u64 k, u64 n, double want, const char *what);
/* write size bytes to path (fails the test if it cannot) */
void write_bytes(const char *path, const void *buf, size_t size);

/* the CPU time of up to 8 threads (tids, of any process) while something runs, for floors
 * derived from it rather than from a machine's idle speed: a thread polls their run time
 * about every millisecond from start to stop; cpu_ns gives thread i's CPU between two
 * CLOCK_MONOTONIC moments, interpolated between the polls around them, window_ns its CPU
 * while profile p was recorded */
struct cpu_watch;
struct cpu_watch *cpu_watch__start(const pid_t *tids, int n);
void cpu_watch__stop(struct cpu_watch *w);
double cpu_watch__cpu_ns(const struct cpu_watch *w, int i, u64 from_ns, u64 to_ns);
double cpu_watch__window_ns(const struct cpu_watch *w, int i, const struct profile *p);
void cpu_watch__free(struct cpu_watch *w);
/* the threads of pid other than its main one, oldest (lowest tid) first, at most max: how
 * many */
int worker_tids(pid_t pid, pid_t *tids, int max);
/* the fewest samples cpu_ns of CPU gives at a clock period: cpu / period less 4 Poisson
 * standard deviations and 3 (the polls' and the window's edges) */
double samples_floor(double cpu_ns, u64 period_ns);

/* record_profile ARGS, again (up to 4 recordings) until each of the threads tids had 30
 * samples' worth of CPU while sampled (a busy machine gives each a fraction of a CPU);
 * cpu[i]: thread i's CPU in the last recording's window, ns */
struct profile *record_profile_cpu(const pid_t *tids, int n, double *cpu, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* got samples at least samples_floor's for cpu_ns of CPU, and some (a Criterion expectation) */
void expect_samples_for_cpu(u64 got, double cpu_ns, u64 period_ns, const char *what);

/* pid 9's 3 samples in JIT code whose symbol demangles to a C++ template name of over 1,000
 * characters (*want, malloc'd): no output may cut it */
struct profile *long_name_profile(char **want);

#endif
