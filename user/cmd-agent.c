// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf agent: a continuous profiler. Runs a live session (user/record/session.c) until
 * stopped; every interval its maps are read into one profile (user/agent/interval.c), encoded
 * as a gzipped pprof and given to the sinks (user/agent/sinks.c): a rotating folder,
 * Grafana Pyroscope's push API, an OTLP receiver, with a disk spool and a /metrics endpoint.
 * The configuration file (user/agent/agent_config.c) is read again on SIGHUP; SIGTERM and
 * SIGINT send the last interval and end, and so does the removal of the --cgroup followed
 * (exit status 1). docs/agent.md. */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "agent/agent_config.h"
#include "agent/interval.h"
#include "agent/push.h"
#include "agent/sinks.h"
#include "cmds.h"
#include "lib/caps.h"
#include "option_groups.h"
#include "record/call_graph.h"
#include "record/cgroup.h"
#include "record/sampler.h"
#include "record/session.h"
#include "symbols/buildid_cache.h"
#include "symbols/ksyms.h"

#define AGENT_FREQ 19
#define AGENT_INTERVAL 10
#define AGENT_MAP_SECONDS 60	/* the kernel's maps hold at least this long's samples */
#define AGENT_SERVICE "hsbpf"
/* the last tries' bound at exit, all sinks together, and a changed sink's on SIGHUP */
#define FLUSH_DEADLINE_MS 5000
/* the loop's rounds at least this far apart (at most 50 a second) */
#define POLL_GAP_NS 20000000ull

static struct env {
	struct session_opts so;
	const char *config;
	const char *server, *otlp, *output_dir, *service, *spool_dir, *metrics_listen, *cacert;
	struct agent_config cli;	/* the command line's settings, over the file's */
	bool no_call_graph;
	u64 iterations;
} env;

static volatile sig_atomic_t exiting, reload;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reload = 1;
	else
		exiting = 1;
}

static const struct options_cmd agent_cmd = {
	.name = "hsbpf agent",
	.usage =
	"usage: hsbpf agent [-F HZ] [-g | --call-graph MODE | --no-call-graph] [-a | --cgroup PATH]\n"
	"                   [--interval SECONDS] [--output-dir DIR] [--server URL] [--otlp URL]\n"
	"                   [--spool-dir DIR] [--metrics-listen ADDR:PORT] [--config FILE]\n",
	.intro = "Samples until stopped (SIGTERM, SIGINT); every interval one profile (pprof) goes\n"
		 "to each sink. SIGHUP reads the configuration file again. docs/agent.md\n",
};

static int label(const struct option_spec *opt, const char *arg)
{
	struct agent_config *c = opt->value;
	const char *eq = strchr(arg, '=');
	char line[256];

	snprintf(line, sizeof(line), "label.%.*s = %s", eq ? (int)(eq - arg) : 0, arg, eq ? eq + 1 : "");
	if (!eq || agent_config__parse(c, line, "--label"))
		return fail(-EINVAL, "invalid --label '%s' (NAME=VALUE)", arg);
	return 0;
}

static const struct option_spec agent_opts[] = {
	OPT_U64('F', "freq", &env.so.freq, "HZ", "samples per second per CPU (default 19)", 1, 0,
		"invalid frequency '%s'"),
	OPT_FLAG('a', "all-cpus", &env.so.all, "the whole machine (the default)"),
	OPT_STRING('G', "cgroup", &env.so.cgroup, "PATH",
		   "one cgroup v2 (a container) and its descendants, filtered in the kernel"),
	OPTIONS_CALL_GRAPH(&env.so),
	OPT_FLAG(0, "no-call-graph", &env.no_call_graph, "sampled functions only (stacks are the default: dwarf)"),
	OPT_SECONDS(0, "interval", &env.cli.interval, "SECONDS", "one profile per interval (default 10)",
		    1, 3600, "invalid interval '%s' (%g to %g seconds)"),
	OPT_STRING(0, "output-dir", &env.output_dir, "DIR", "write each profile there (pprof, "
		   "gzipped), the oldest removed past --max-files or --max-bytes"),
	OPT_U64(0, "max-files", &env.cli.max_files, "N", "profiles kept in --output-dir", 1, 0,
		"invalid count '%s'"),
	OPT_U64(0, "max-bytes", &env.cli.max_bytes, "N", "their total size", 1, 0, "invalid size '%s'"),
	OPT_STRING(0, "server", &env.server, "URL", "push each profile to Grafana Pyroscope at URL "
		   "(e.g. http://localhost:4040)"),
	OPT_STRING(0, "otlp", &env.otlp, "URL", "send each profile to an OpenTelemetry Collector "
		   "(OTLP/HTTP, URL/v1development/profiles)"),
	OPT_STRING(0, "spool-dir", &env.spool_dir, "DIR", "keep what a server has not taken on disk "
		   "there (one folder per sink), sent by the next run if need be"),
	OPT_U64(0, "spool-max", &env.cli.spool_max, "N", "each sink's spool at most N bytes (default "
		"100 MiB), the oldest dropped", 1, 0, "invalid size '%s'"),
	OPT_STRING(0, "metrics-listen", &env.metrics_listen, "ADDR:PORT", "serve the agent's health "
		   "as Prometheus text at /metrics"),
	OPT_STRING(0, "cacert", &env.cacert, "FILE", "CA certificates for https servers"),
	OPT_STRING(0, "service-name", &env.service, "NAME", "the service_name label (default hsbpf)"),
	OPT_CALLBACK(0, "label", &env.cli, "NAME=VALUE", "one more label of every profile", label),
	OPT_STRING(0, "config", &env.config, "FILE", "settings as key = value lines (docs/agent.md), "
		   "read again on SIGHUP; the options win"),
	OPTIONS_SESSION_MAPS(&env.so, "sample and stack-sample map slots per interval "
			     "(default: twice a minute's samples, at most 262144)"),
	OPT_U64('n', "iterations", &env.iterations, "N", "stop after N intervals", 1, 0,
		"invalid iterations '%s'"),
	OPT_VERBOSE("more messages"),
	OPT_END(),
};

/* a URL option that does not parse: said, -EINVAL */
static int check_url(const char *opt, const char *url)
{
	char why[128];

	if (url && push__check_url(url, why, sizeof(why)))
		return fail(-EINVAL, "invalid %s URL '%s': %s", opt, url, why);
	return 0;
}

/* 0, -ECANCELED after --help, or -EINVAL after saying what is wrong */
static int parse_args(int argc, char **argv)
{
	int nr;

	memset(&env, 0, sizeof(env));
	env.so.event = "cpu-clock";
	env.so.live = true;
	env.so.stack_intervals = true;
	env.so.mappings_by_vma = true;
	env.so.lazy_tables = true;
	env.so.table_cache = buildid_cache__dir_in_use();
	env.so.call_graph = call_graph__find(CALL_GRAPH_DEFAULT)->bpf_mode;
	nr = options__parse(&agent_cmd, agent_opts, argc, argv);
	if (nr < 0)
		return nr;
	if (nr)
		nr = fail(-EINVAL, "the agent samples running processes: no command");
	else if (env.so.all && env.so.cgroup)
		nr = fail(-EINVAL, "choose one target: -a or --cgroup");
	if (nr) {
		usage_hint(agent_cmd.name);
		return nr;
	}
	if (!env.so.cgroup)
		env.so.all = true;
	if (!env.so.freq)
		env.so.freq = AGENT_FREQ;
	if (env.no_call_graph)
		env.so.call_graph = 0;
	if (check_url("--server", env.server) || check_url("--otlp", env.otlp)) {
		usage_hint(agent_cmd.name);
		return -EINVAL;
	}
	snprintf(env.cli.server, sizeof(env.cli.server), "%s", env.server ? env.server : "");
	snprintf(env.cli.otlp, sizeof(env.cli.otlp), "%s", env.otlp ? env.otlp : "");
	snprintf(env.cli.spool_dir, sizeof(env.cli.spool_dir), "%s", env.spool_dir ? env.spool_dir : "");
	snprintf(env.cli.metrics_listen, sizeof(env.cli.metrics_listen), "%s",
		 env.metrics_listen ? env.metrics_listen : "");
	snprintf(env.cli.cacert, sizeof(env.cli.cacert), "%s", env.cacert ? env.cacert : "");
	snprintf(env.cli.output_dir, sizeof(env.cli.output_dir), "%s", env.output_dir ? env.output_dir : "");
	snprintf(env.cli.service_name, sizeof(env.cli.service_name), "%s", env.service ? env.service : "");
	return 0;
}

/* the settings: defaults, the file's, the command line's; 0 or -errno (said) */
static int settle_config(struct agent_config *c)
{
	struct agent_config next = { .interval = AGENT_INTERVAL };
	int err;

	snprintf(next.service_name, sizeof(next.service_name), "%s", AGENT_SERVICE);
	if (env.config) {
		err = agent_config__load(&next, env.config);
		if (err)
			return err;
	}
	agent_config__overlay(&next, &env.cli);
	*c = next;
	return 0;
}

struct agent {
	struct agent_config cfg;
	struct sinks *sinks;
	u64 intervals;		/* taken so far */
};

static void reload_config(struct agent *ag)
{
	struct agent_config c;

	if (settle_config(&c)) {
		warning("keeping the configuration in use: '%s' is not right", env.config);
		return;
	}
	if (strcmp(c.metrics_listen, ag->cfg.metrics_listen))
		warning("metrics_listen changes at the next start");
	if (c.interval > env.so.live_interval_s && !env.so.map_entries)
		warning("the kernel's maps were sized at the start for %g s of samples: an interval of "
			"%g s may fill them (what they cannot take is counted as dropped); restart "
			"the agent to size them for it", env.so.live_interval_s, c.interval);
	ag->cfg = c;
	sinks__reconfigure(ag->sinks, &c, FLUSH_DEADLINE_MS);
	fprintf(stderr, "hsbpf agent: read '%s' again\n", env.config);
}

/* how long an interval's phases took (ns), for -v's second line */
struct interval_times {
	u64 late;		/* its end taken this long after its schedule */
	u64 drain, want, send, forget;
};

/* the loop's own time between intervals, outside session__poll */
static u64 sinks_ns, nap_ns;

/* one interval read and given to every sink; a sink that fails says so and the others go on */
static int take_interval(struct session *sess, struct interval_reader *r, struct agent *ag,
			 struct interval_times *t)
{
	const struct profile_stats *ps = &session__profile(sess)->stats;
	struct sinks_interval iv = {};
	u64 t0 = now_ns(CLOCK_MONOTONIC), t1;
	u8 *pprof = NULL;
	int err;

	err = interval_reader__take(r, &iv.samples);
	t1 = now_ns(CLOCK_MONOTONIC);
	t->drain = t1 - t0;
	/* the tables of the objects this interval's samples landed in without one */
	if (!err)
		err = session__want_tables(sess);
	t0 = now_ns(CLOCK_MONOTONIC);
	t->want = t0 - t1;
	if (!err)
		err = interval_reader__pprof(r, &pprof, &iv.len);
	if (err)
		return err;
	iv.pprof = pprof;
	iv.start_realtime_ns = interval_reader__start_realtime(r);
	iv.lost = ps->dropped_full + ps->stack_keys_full;
	/* the stack maps' occupancy after the drain (what the kernel holds of the next interval
	 * so far): the soak test and the tests read it to see that it stays bounded */
	if (verbose) {
		u32 objs, rows, pages;

		struct mallinfo2 mi = mallinfo2();
		const struct profile *p = session__profile(sess);

		sampler__unwind_usage(session__sampler(sess), &objs, &rows, &pages);
		debug("interval %" PRIu64 ": %" PRIu64 " samples, pprof %zu bytes, %" PRIu64
		      " stack map entries, %u unwind tables (%u rows); heap %zu KB in use, %zu KB "
		      "free; strings %zu KB, mappings %zu, comms %zu", ++ag->intervals, iv.samples,
		      iv.len, interval_reader__occupancy(r), objs, rows, mi.uordblks >> 10,
		      mi.fordblks >> 10, p->strs.len >> 10, p->nr_mappings, p->nr_comms);
	}
	t0 = now_ns(CLOCK_MONOTONIC);
	sinks__send(ag->sinks, &iv);
	t->send = now_ns(CLOCK_MONOTONIC) - t0;
	free(pprof);
	return 0;
}

static u64 ms(u64 ns)
{
	return (ns + 500000) / 1000000;
}

/* -v: where the loop's time went since the last interval, and the interval's own phases */
static void say_times(struct session *sess, struct interval_reader *r, struct agent *ag,
		      const struct interval_times *t)
{
	struct session_times st;
	u64 sym, enc, trim;

	session__take_times(sess, &st);
	interval_reader__times(r, &sym, &enc, &trim);
	debug("interval %" PRIu64 " times: late %" PRIu64 " ms; loop %" PRIu64 " rounds, longest %"
	      PRIu64 " ms: sideband %" PRIu64 " ms (%" PRIu64 " build-ids read in %" PRIu64 " ms), "
	      "resync %" PRIu64 " ms, feed %" PRIu64 " ms, tables %" PRIu64 " in %"
	      PRIu64 " ms (longest round %" PRIu64 " ms; built off the loop %" PRIu64 " ms), other %"
	      PRIu64 " ms; waits %" PRIu64 " ms (overslept %" PRIu64 " ms at most), naps %" PRIu64
	      " ms, sinks %" PRIu64 " ms; interval: drain %" PRIu64 " ms, want %" PRIu64
	      " ms, symbolize %" PRIu64 " ms, encode %" PRIu64 " ms, trim %" PRIu64 " ms, send %"
	      PRIu64 " ms, forget %" PRIu64 " ms", ag->intervals, ms(t->late), st.rounds,
	      ms(st.round_max_ns), ms(st.sideband_ns), st.ids, ms(st.ids_ns), ms(st.resync_ns),
	      ms(st.feed_ns), st.tables, ms(st.tables_ns),
	      ms(st.tables_max_ns), ms(st.built_ns), ms(st.other_ns), ms(st.wait_ns),
	      ms(st.oversleep_max_ns), ms(nap_ns), ms(sinks_ns), ms(t->drain), ms(t->want), ms(sym),
	      ms(enc), ms(trim), ms(t->send), ms(t->forget));
	sinks_ns = nap_ns = 0;
}

/* --cgroup: the cgroup followed was removed (said). Its events count nothing any more, and a
 * cgroup made again at its path is another one, which this run does not see: the agent ends,
 * non-zero so that a service manager restarts it (the new run follows what the path names
 * then) */
static bool cgroup_removed(struct session *sess)
{
	const char *path;
	char now[80] = "";
	u64 id, new_id;

	if (!session__cgroup_removed(sess, &path, &id))
		return false;
	if (!cgroup__id(path, &new_id) && new_id != id)
		snprintf(now, sizeof(now), ", and a new one made at its path (id %" PRIu64 ")", new_id);
	error("the cgroup '%s' (id %" PRIu64 ") was removed%s: its last interval is sent, then the "
	      "agent exits with status 1%s", path, id, now, now[0] ? " (a new run follows the new one)" : "");
	return true;
}

static int run(struct session *sess, struct interval_reader *r, struct agent *ag)
{
	u64 next = now_ns(CLOCK_MONOTONIC) + (u64)(ag->cfg.interval * 1e9), last_poll = 0;
	u64 intervals = 0;
	int err = 0;

	while (!exiting) {
		u64 now = now_ns(CLOCK_MONOTONIC);
		int wait;

		/* the sideband wakes the loop at every record (a busy machine: thousands a
		 * second, each a context switch): its rounds are spaced instead, the rings hold
		 * far more than a round's records */
		if (now < last_poll + POLL_GAP_NS && now < next) {
			struct timespec ts = { 0, (long)(last_poll + POLL_GAP_NS - now) };
			u64 t0 = now;

			nanosleep(&ts, NULL);
			now = now_ns(CLOCK_MONOTONIC);
			nap_ns += now - t0;
		}
		last_poll = now;
		wait = now >= next ? 0 : (int)((next - now) / 1000000);
		err = session__poll(sess, wait > 100 ? 100 : wait);
		if (err < 0)
			return err;
		if (cgroup_removed(sess))
			break;
		if (reload) {
			reload = 0;
			if (env.config)
				reload_config(ag);
		}
		if (now_ns(CLOCK_MONOTONIC) >= next) {
			struct interval_times t = { .late = now_ns(CLOCK_MONOTONIC) - next };
			u64 t0;

			err = take_interval(sess, r, ag, &t);
			t0 = now_ns(CLOCK_MONOTONIC);
			if (!err)
				err = session__forget_exited(sess, NULL, 0);
			if (err)
				return err;
			/* the tables it kept in the build-id cache: within its size (said) */
			session__trim_table_cache(sess, false);
			t.forget = now_ns(CLOCK_MONOTONIC) - t0;
			if (verbose)
				say_times(sess, r, ag, &t);
			next += (u64)(ag->cfg.interval * 1e9);
			if (next < now_ns(CLOCK_MONOTONIC))
				next = now_ns(CLOCK_MONOTONIC) + (u64)(ag->cfg.interval * 1e9);
			if (env.iterations && ++intervals >= env.iterations)
				return 0;
		}
		now = now_ns(CLOCK_MONOTONIC);
		sinks__work(ag->sinks);
		sinks_ns += now_ns(CLOCK_MONOTONIC) - now;
	}
	/* the last interval, however short: after a removed cgroup, what its processes ran
	 * until they left it */
	err = take_interval(sess, r, ag, &(struct interval_times){});
	return err ? err : exiting ? 0 : -ENOENT;
}

int cmd_agent(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct interval_reader *r = NULL;
	struct session *sess = NULL;
	struct agent ag = {};
	struct utsname u;
	char host[65] = "";
	int err;

	err = parse_args(argc, argv);
	if (err)
		return options__status(err);
	if (settle_config(&ag.cfg))
		return 2;
	/* the kernel's maps hold an interval's samples: a minute's, or a longer interval's, so
	 * that a reload may lengthen it up to that (reload_config) */
	env.so.live_interval_s = ag.cfg.interval > AGENT_MAP_SECONDS ? ag.cfg.interval : AGENT_MAP_SECONDS;
	if (!uname(&u))
		snprintf(host, sizeof(host), "%s", u.nodename);
	srandom(now_ns(CLOCK_REALTIME) ^ getpid());
	if (!ag.cfg.server[0] && !ag.cfg.otlp[0] && !ag.cfg.output_dir[0])
		warning("no sink: profiles go nowhere (--output-dir, --server, --otlp)");
	err = session__new(&env.so, &sess);
	if (err) {
		session__close(sess);
		return err == -EINVAL ? 2 : 1;
	}
	err = caps__check("hsbpf agent");
	if (!err && !(ag.sinks = sinks__new(&ag.cfg, host)))
		err = -errno;
	if (err)
		goto cleanup;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	err = session__open(sess);
	if (!err)
		err = session__start(sess);
	/* every kernel symbol once: later kernel IPs resolve without reading kallsyms again (read
	 * once sampling runs: the kernel renders the file for a tenth of a second) */
	if (!err)
		err = ksyms__save_all(session__profile(sess), "/proc/kallsyms");
	/* the first interval starts here: what was sampled before is in its maps still */
	if (!err && !(r = interval_reader__new(sess, env.so.call_graph != 0)))
		err = -errno;
	if (!err) {
		fprintf(stderr, "hsbpf agent: sampling %s at %" PRIu64 " Hz, a profile every %g s\n",
			env.so.cgroup ? env.so.cgroup : "all CPUs", env.so.freq, ag.cfg.interval);
		/* the machine's tables while it is sampled, before the first interval's end: that
		 * interval is the longer, the others are not held up by them */
		err = session__build_tables(sess);
	}
	if (!err) {
		err = run(sess, r, &ag);
	}
	sinks__flush(ag.sinks, FLUSH_DEADLINE_MS);
	sinks__summary(ag.sinks, stderr);
cleanup:
	sinks__free(ag.sinks);
	interval_reader__free(r);
	session__close(sess);
	return err ? 1 : 0;
}
