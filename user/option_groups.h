/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The option groups several commands take, defined once as entries of their option tables
 * (options.h): a session's event, target and call graph (record, top), the sample filters
 * (report, script), how symbols are resolved (report, script, annotate, top), the comparison
 * of two profiles (diff, flamegraph --diff). */
#ifndef HSBPF_OPTION_GROUPS_H
#define HSBPF_OPTION_GROUPS_H

#include "lib/options.h"
#include "lib/period.h"
#include "report/profile_diff.h"
#include "report/sample_filter.h"
#include "record/session.h"

/* the callbacks behind the groups: 0, or -EINVAL after saying what is wrong */
int option_groups__freq(const struct option_spec *opt, const char *arg);
int option_groups__period_mode(const struct option_spec *opt, const char *arg);
int option_groups__dwarf(const struct option_spec *opt, const char *arg);
int option_groups__call_graph(const struct option_spec *opt, const char *arg);
int option_groups__python_frames(const struct option_spec *opt, const char *arg);
int option_groups__ids(const struct option_spec *opt, const char *arg);
int option_groups__time(const struct option_spec *opt, const char *arg);
int option_groups__buildid_dir(const struct option_spec *opt, const char *arg);
int option_groups__compare(const struct option_spec *opt, const char *arg);
int option_groups__work(const struct option_spec *opt, const char *arg);

/* a session's event and period (struct session_opts *so) */
#define OPTIONS_SESSION_EVENT(so, event_help)						\
	OPT_STRING('e', "event", &(so)->event, "EVENT", event_help),			\
	OPT_CALLBACK('F', "freq", (so), "HZ", "samples per second per CPU (default 999); max: "	\
		     "the kernel's limit, kernel.perf_event_max_sample_rate", option_groups__freq), \
	OPT_U64('c', "count", &(so)->period, "PERIOD",					\
		"fixed period: ns for clock events, events otherwise", 1, PERIOD_MAX,	\
		"invalid period '%s' (%llu to %llu)"),					\
	OPT_CALLBACK(0, "period-mode", (so), "M", "phase (default: a fixed period "	\
		     "restarted at random moments, unbiased on periodic programs), fixed "	\
		     "(perf's), prime, random (+ up to 1/8 jitter), prime-random",		\
		     option_groups__period_mode)

/* what a session samples: -a (its help says whether it is the default), -p, -G, -C */
#define OPTIONS_SESSION_TARGET(so, all_help)						\
	OPT_FLAG('a', "all-cpus", &(so)->all, all_help),				\
	OPT_STRING('p', "pid", &(so)->pids, "PIDS",					\
		   "running processes, all their threads and children"),		\
	OPT_STRING('G', "cgroup", &(so)->cgroup, "PATH",				\
		   "one cgroup v2 (a container) and its descendants, filtered in the kernel"), \
	OPT_STRING('C', "cpu", &(so)->cpus, "CPUS", "only these CPUs, e.g. 0-3,6")

/* the session's maps: the sample map's size, the seed of randomized periods */
#define OPTIONS_SESSION_MAPS(so, entries_help)						\
	OPT_U32(0, "map-entries", &(so)->map_entries, "N", entries_help, 1, 1u << 26, NULL), \
	OPT_U64(0, "seed", &(so)->seed, "N", "seed for randomized periods", 0, 0,	\
		"invalid seed '%s'")

/* call stacks: -g, --call-graph MODE[,DEPTH] through session__parse_call_graph() */
#define OPTIONS_CALL_GRAPH(so)								\
	OPT_CALLBACK('g', NULL, (so), NULL, "call stacks: --call-graph dwarf",		\
		     option_groups__dwarf),						\
	OPT_CALLBACK(0, "call-graph", (so), "MODE[,DEPTH]", "dwarf: unwound in the "	\
		     "kernel from .eh_frame and .debug_frame tables (frame pointers in "	\
		     "objects without them); fp: frame pointers only; lbr: the LBR's "	\
		     "call-stack mode (a hardware event, Intel); DEPTH: user frames kept, 1 "	\
		     "to 256 (256); dwarf,SIZE over 256: perf's bytes of stack (a multiple of 8 "	\
		     "up to 65528), kept as SIZE/32 frames", option_groups__call_graph),	\
	OPT_CALLBACK(0, "python-frames", (so), "MODE", "CPython's own frames in call "	\
		     "stacks (docs/python.md): interleave (default: each evaluation loop's "	\
		     "Python frames beside its native frame), replace (instead of it), off",	\
		     option_groups__python_frames)

/* the sample filters (struct sample_filter *sf): each sample kept or dropped whole */
#define OPTIONS_FILTERS(sf)								\
	OPT_GROUP("  Filters (comma-separated lists; a sample is kept or dropped whole):"), \
	OPT_STRING(0, "comm", &(sf)->comms, "COMMS", "commands or thread names"),	\
	OPT_CALLBACK(0, "pid", &(sf)->pids, "PIDS", "processes", option_groups__ids),	\
	OPT_CALLBACK(0, "tid", &(sf)->tids, "TIDS", "threads", option_groups__ids),	\
	OPT_STRING(0, "dso", &(sf)->dsos, "OBJECTS", "the sampled object, by path or file name"), \
	OPT_STRING('S', "symbols", &(sf)->syms, "SYMS", "the sampled function"),	\
	OPT_STRING(0, "cpu", &(sf)->cpus, "CPUS", "e.g. 0-3,6 (recorded with --per-cpu)"), \
	OPT_CALLBACK(0, "time", (sf), "START,END", "seconds after the recording's start, "	\
		     "either side may be empty; exact to the recording's --time-buckets",	\
		     option_groups__time)

/* names as mangled (bool *raw_names) */
#define OPT_NO_DEMANGLE(raw_names)							\
	OPT_FLAG(0, "no-demangle", (raw_names), "C++ and Rust symbols as mangled (demangled by default)")
/* no inlined functions (bool *inl, true by default) */
#define OPT_NO_INLINE(inl, h)								\
	{ .kind = OPTION_FLAG, .long_name = "no-inline", .value = (inl), .flags = OPTF_CLEAR, \
	  .help = (h) }
/* missing objects and debug files by build-id: the servers (const char **urls), the cache */
#define OPTIONS_DEBUGINFOD(urls)							\
	OPT_STRING(0, "debuginfod", (urls), "URLS", "fetch missing debug files and objects by "	\
		   "build-id from these servers (default $DEBUGINFOD_URLS; each transfer gives "	\
		   "up after $DEBUGINFOD_TIMEOUT s of no progress, default 5); what is fetched "	\
		   "is said, and kept in the build-id cache"),				\
	OPT_CALLBACK(0, "buildid-dir", NULL, "DIR", "the build-id cache, where objects "	\
		     "deleted or changed since the recording are read from (default "	\
		     "$HSBPF_BUILDID_DIR, else ~/.cache/hsbpf/buildid)",			\
		     option_groups__buildid_dir)
/* the profile read (const char **path) */
#define OPT_INPUT(path)	OPT_STRING('i', "input", (path), "FILE", "profile to read (default hsbpf.data)")

/* two profiles compared (diff, flamegraph --diff) */
struct diff_args {
	enum diff_compare compare;
	double work[2];
	bool has_work;
	bool force;
};
#define OPTIONS_DIFF(d)									\
	OPT_CALLBACK(0, "compare", &(d)->compare, "WHAT", "rates (default: samples per "	\
		     "second, or per unit of --work) or shares (of all samples)",		\
		     option_groups__compare),						\
	OPT_CALLBACK(0, "work", (d), "B,N", "the work BASE and NEW did (requests, "	\
		     "iterations, runs: any unit): rates per unit of work instead of per "	\
		     "second", option_groups__work),					\
	OPT_FLAG(0, "force", &(d)->force, "compare profiles of different events or units anyway")
/* 0, or -EINVAL after saying why the options do not go together */
int option_groups__check_diff(const struct diff_args *d);

#endif /* HSBPF_OPTION_GROUPS_H */
