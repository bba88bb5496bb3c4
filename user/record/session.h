/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A sampling session, what record (and top) run: checks the event, period and target, starts
 * the command or finds the processes, loads and attaches the sampler, follows the sideband
 * (maps, comms, forks, namespace pids, cgroup names) while it runs, and at the end gathers
 * the samples into a profile ready to write. */
#ifndef HSBPF_SESSION_H
#define HSBPF_SESSION_H

#include <signal.h>
#include <stdbool.h>
#include "record/event.h"
#include "lib/period.h"
#include "profile/profile.h"
#include "record/sampler.h"

struct cgroup_names;
struct buildid_keeper;

struct session_opts {
	/* passed to the sampler as given: mode (--period-mode), map_entries, seed, live (read by
	 * intervals while running: top), call_graph and max_frames (-g, --call-graph MODE,DEPTH),
	 * the finer sample keys (record --per-thread, --per-cpu, --time-buckets), off-CPU time
	 * (record --off-cpu, --wall, --min-block, --max-block; user/record/offcpu.h) */
	union {
		struct sampler_params params;
		struct sampler_params;
	};
	const char *event;	/* "cpu-clock" when NULL */
	u64 freq;		/* -F; 0 for the default (999) unless period is set */
	u64 period;		/* -c */
	bool mode_given;	/* --period-mode; else phase where the period is fixed, fixed else */
	bool all;		/* -a */
	const char *pids;	/* -p list */
	const char *cgroup;	/* --cgroup PATH */
	const char *cpus;	/* -C list; NULL: online CPUs */
	bool branch_stack;	/* -b */
	char **argv;		/* a command to run */
	bool no_kill_with_parent;	/* the command may outlive a killed hsbpf */
	bool keep_objects;	/* hold the mapped objects open for the build-id cache */
	/* the build-id cache the unwind tables are read from and kept in (table_cache.h); NULL:
	 * each built */
	const char *table_cache;
	/* live: the longest time between two reads of the maps (top's refresh, the agent's
	 * interval), 0 if not known; the kernel's maps are sized for what it can sample */
	double live_interval_s;
	/* with mappings_by_vma: an object's table only once a sample landed in it
	 * (session__want_tables), and freed when no process maps it (session__forget_exited) */
	bool lazy_tables;
	/* --memory --snapshot-every: allocations counted by numbered intervals, a snapshot of
	 * the live set at each session__memory_snapshot (user/record/memory_snapshot.h) */
	bool mem_intervals;
	/* a count of ending signals, bumped by the caller's handler: one more while a command
	 * that ignores SIGTERM is waited for has it killed at once */
	const volatile sig_atomic_t *interrupts;
};

struct session;

/* where session__poll's rounds spent their time (its wait left out), summed since the last
 * session__take_times: the agent says it per interval (-v) */
struct session_times {
	u64 rounds;
	u64 round_max_ns;	/* the longest round */
	u64 sideband_ns;	/* the sideband's rings drained */
	u64 ids, ids_ns;	/* ... build-ids read for the new objects mapped, and their time */
	u64 resync_ns;		/* /proc read again after the kernel lost sideband records */
	u64 feed_ns;		/* its records given to the unwinder and the Python tracker */
	u64 tables_ns;		/* unwind tables: given to the worker (lazy tables), loaded into
				 * the kernel */
	u64 tables_max_ns;	/* ... the longest round's */
	u64 tables;		/* ... how many objects */
	u64 built_ns;		/* ... the worker's building meanwhile (off the loop) */
	u64 other_ns;		/* the rest: Python, namespace pids, cgroup names, perf maps */
	u64 wait_ns;		/* waiting for the sideband (epoll) */
	u64 oversleep_max_ns;	/* ... the longest past the timeout asked (a starved CPU) */
};

/* kernel.perf_event_max_sample_rate: 0, or -errno (not said) */
int session__max_sample_rate(u64 *rate);
/* "dwarf", "fp,64", ...: 0, or -EINVAL after saying what is wrong */
int session__parse_call_graph(const char *arg, u32 *mode, u32 *max_frames);

/* a session for opts, checked: -EINVAL after saying what is wrong is a usage error (the
 * event, the period, the pid or CPU list), -ENODEV a CPU that is not online; *out is to be
 * closed either way */
int session__new(const struct session_opts *opts, struct session **out);
/* --memory with mem_intervals: the live allocations now, in use, in the interval ending
 * (sampler__memory_snapshot), whose number goes into *snap; 0 or -errno (said) */
int session__memory_snapshot(struct session *s, u32 *snap);
/* set everything up short of sampling: the pids exist, the cgroup opens, the command is
 * spawned (held before its exec), the sideband and the sampler are loaded */
int session__open(struct session *s);
/* attach and, for a command, let it exec; sampling starts here */
int session__start(struct session *s);
/* wait up to timeout_ms for sideband records and follow them: 1 when the target has ended
 * (the command exited, every -p process is gone), 0 to go on, -errno on error */
int session__poll(struct session *s, int timeout_ms);
/* stop sampling and fill the profile: samples, counters, metadata, the process history the
 * samples need, build-ids, kernel symbols and cgroup names. A command still running gets
 * SIGTERM; if it has not exited after SESSION_KILL_AFTER seconds, or at once when
 * opts.interrupts grows meanwhile, SIGKILL; what is waited for is said after a moment. */
#define SESSION_KILL_AFTER 5
int session__finish(struct session *s);
struct profile *session__profile(struct session *s);
/* the unwind tables of what runs, built now rather than a slice per session__poll (with
 * -a and --cgroup they are built after sampling starts); 0 or -ENOMEM (said) */
int session__build_tables(struct session *s);
/* a long live session (top) forgets the process history (maps, comms, forks) of processes
 * that have exited, except those in also (and the fork ancestors of what stays); call it
 * right after session__poll */
int session__forget_exited(struct session *s, const u32 *also, size_t nr_also);
/* a long live session (top, the agent) that kept unwind tables in the build-id cache
 * (table_cache) keeps the cache within its size: the least recently used entries removed,
 * none used in the last ten minutes; at most every ten minutes unless now. 0 or -errno
 * (said) */
int session__trim_table_cache(struct session *s, bool now);
/* the Python frames of the profile's stacks named now, from the live processes (top, whose
 * session has no end to name them at): 0, or -ENOMEM after saying so */
int session__name_python(struct session *s);
/* lazy_tables: the objects the profile's stack samples landed in without a table are queued,
 * their tables built by the next polls (a budget each); 0 or -ENOMEM (said). Needs
 * profile__finish */
int session__want_tables(struct session *s);
/* the rounds' times since the last call, then zeroed */
void session__take_times(struct session *s, struct session_times *t);
/* the command's wait status, -1 when there was none or it is still running */
int session__child_status(const struct session *s);
/* with keep_objects: the objects held open, for buildid_keeper__save; else NULL */
struct buildid_keeper *session__keeper(struct session *s);
/* whether session__finish had to SIGKILL the command (and said so) */
bool session__command_killed(const struct session *s);
/* whether the session ended the command (-d, a signal to hsbpf) rather than it ending itself */
bool session__command_stopped(const struct session *s);
/* after the kernel lost sideband records: how many times /proc was read again, and how many
 * sampled processes no record names (they had exited before) */
void session__sideband_recovery(const struct session *s, u32 *resyncs, u32 *unrecovered);
/* the build-ids read as mappings came, and the objects gone before they could be */
struct sideband_id_stats;
void session__sideband_ids(const struct session *s, struct sideband_id_stats *st);
const char *session__event_name(const struct session *s);
int session__nr_cpus(const struct session *s);
/* --cgroup: whether the cgroup opened at the start has been removed since (its events count
 * nothing from then on, and a new cgroup made at the same path is another cgroup, with
 * another id); *path (absolute) and *id say which it was */
bool session__cgroup_removed(const struct session *s, const char **path, u64 *id);
/* samples a second per CPU asked for (-F or the default), 0 when a period (-c) was given */
u64 session__freq(const struct session *s);
/* the base period: ns for clock events, events otherwise (0 with -F on a hardware event) */
u64 session__period(const struct session *s);
/* for top's live reads: the sampler, and the cgroup names the session keeps scanning */
struct sampler *session__sampler(struct session *s);
struct cgroup_names *session__cgroup_names(struct session *s);
/* the profile's metadata (event, period, target, host, ...) as session__finish fills it,
 * for a live session's readers (agent) that write profiles while it runs */
void session__fill_meta(struct session *s);
void session__close(struct session *s);

#endif /* HSBPF_SESSION_H */
