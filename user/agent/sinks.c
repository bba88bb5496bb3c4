// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The agent's sinks together (sinks.h). */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "agent/health.h"
#include "agent/otlp.h"
#include "agent/outdir.h"
#include "agent/push.h"
#include "agent/sinks.h"

/* requests kept in memory for a server that does not answer, without a spool: 30
 * intervals, 5 minutes by default */
#define SINKS_QUEUE 30
/* a spool's bound when the configuration gives none */
#define SINKS_SPOOL_MAX (100ull << 20)
/* a try's bound: a slow server holds only its own sink (the sending does not block) */
#define SINKS_TRY_MS 10000

enum { SINK_PYROSCOPE, SINK_OTLP, NR_HTTP };

static const char *const http_names[NR_HTTP] = { "pyroscope", "otlp" };
static const char *const pyroscope_headers[] = {
	"Content-Type: " PUSH_CONTENT_TYPE, "Connect-Protocol-Version: 1", NULL,
};
static const char *const otlp_headers[] = { "Content-Type: " OTLP_CONTENT_TYPE, NULL };

struct sinks {
	struct agent_config cfg;
	char host[65];
	struct pusher *http[NR_HTTP];
	struct health *metrics;
	struct outdir *out;		/* cfg.output_dir's */
	/* the labels as Pyroscope takes them */
	char service[128];
	char names[AGENT_MAX_LABELS][64];
	char values[AGENT_MAX_LABELS][128];
	u64 intervals, samples, lost, files, file_failures;
};

static const char *http_url(const struct agent_config *c, int i)
{
	return i == SINK_PYROSCOPE ? c->server : c->otlp;
}

static struct pusher *open_http(const struct agent_config *c, int i)
{
	struct pusher_opts o = {
		.name = http_names[i],
		.url = http_url(c, i),
		.path = i == SINK_PYROSCOPE ? PUSH_PATH : OTLP_PATH,
		.headers = i == SINK_PYROSCOPE ? pyroscope_headers : otlp_headers,
		.max_queue = SINKS_QUEUE,
		.spool_max = c->spool_max ? c->spool_max : SINKS_SPOOL_MAX,
		.cacert = c->cacert[0] ? c->cacert : NULL,
		.timeout_ms = SINKS_TRY_MS,
	};
	char spool[sizeof(c->spool_dir) + 16];

	if (c->spool_dir[0]) {
		/* one spool per sink, under the configured folder */
		if (mkdir(c->spool_dir, 0700) && errno != EEXIST) {
			error("cannot create the spool '%s': %s", c->spool_dir, strerror(errno));
			return NULL;
		}
		snprintf(spool, sizeof(spool), "%s/%s", c->spool_dir, http_names[i]);
		o.spool_dir = spool;
	}
	return pusher__new(&o);
}

/* the same server, spool and CA: the sink stays as it is */
static bool same_http(const struct agent_config *a, const struct agent_config *b, int i)
{
	return !strcmp(http_url(a, i), http_url(b, i)) && !strcmp(a->spool_dir, b->spool_dir) &&
	       a->spool_max == b->spool_max && !strcmp(a->cacert, b->cacert);
}

/* Pyroscope's copies of the labels, and a warning for each it had to change */
static void sanitize_labels(struct sinks *k)
{
	char name[64];

	if (push__sanitize_label("service_name", k->cfg.service_name, name, sizeof(name), k->service,
				 sizeof(k->service)))
		warning("service name '%s' is not valid for Pyroscope (UTF-8, no control characters): "
			"sent as '%s'", k->cfg.service_name, k->service);
	for (size_t i = 0; i < k->cfg.nr_labels; i++) {
		const struct agent_label *l = &k->cfg.labels[i];

		if (push__sanitize_label(l->name, l->value, k->names[i], sizeof(k->names[i]),
					 k->values[i], sizeof(k->values[i])))
			warning("label '%s=%s' is not valid for Pyroscope (names [a-zA-Z_][a-zA-Z0-9_]*, "
				"values UTF-8 without control characters): sent as '%s=%s'", l->name,
				l->value, k->names[i], k->values[i]);
	}
}

int sinks__reconfigure(struct sinks *k, const struct agent_config *c, int flush_ms)
{
	struct agent_config old = k->cfg;
	int err = 0;

	k->cfg = *c;
	sanitize_labels(k);
	for (int i = 0; i < NR_HTTP; i++) {
		if (k->http[i] && same_http(&old, c, i))
			continue;
		if (k->http[i]) {
			/* the server changed or went: what it had queued gets one last try */
			pusher__flush(k->http[i], flush_ms);
			pusher__free(k->http[i]);
			k->http[i] = NULL;
		}
		if (http_url(c, i)[0] && !(k->http[i] = open_http(c, i))) {
			warning("the %s sink '%s' is not in use", http_names[i], http_url(c, i));
			err = -errno;
		}
	}
	return err;
}

struct sinks *sinks__new(const struct agent_config *c, const char *host)
{
	struct sinks *k = calloc(1, sizeof(*k));
	int err;

	if (!k) {
		error("cannot start the sinks: %s", strerror(ENOMEM));
		errno = ENOMEM;
		return NULL;
	}
	snprintf(k->host, sizeof(k->host), "%s", host);
	err = sinks__reconfigure(k, c, 0);
	if (!err && c->metrics_listen[0] && !(k->metrics = health__listen(c->metrics_listen)))
		err = -errno;
	if (err) {
		sinks__free(k);
		errno = -err;
		return NULL;
	}
	if (k->metrics)
		fprintf(stderr, "hsbpf agent: /metrics on port %d\n", health__port(k->metrics));
	return k;
}

void sinks__free(struct sinks *k)
{
	if (!k)
		return;
	for (int i = 0; i < NR_HTTP; i++)
		pusher__free(k->http[i]);
	health__free(k->metrics);
	outdir__free(k->out);
	free(k);
}

/* a random id of the profile, for the server's deduplication */
static void profile_id(char *buf, size_t size)
{
	snprintf(buf, size, "%08lx%08lx%08lx%08lx", random(), random(), random(), random());
}

static void send_pyroscope(struct sinks *k, const struct sinks_interval *iv)
{
	struct push_label labels[3 + AGENT_MAX_LABELS] = {
		{ "service_name", k->service },
		{ "__name__", "process_cpu" },
		{ "host", k->host },
	};
	size_t nr = 3, body_len;
	char id[40];
	u8 *body;

	for (size_t i = 0; i < k->cfg.nr_labels; i++)
		labels[nr++] = (struct push_label){ k->names[i], k->values[i] };
	profile_id(id, sizeof(id));
	if (!push__encode(labels, nr, iv->pprof, iv->len, id, &body, &body_len))
		pusher__add(k->http[SINK_PYROSCOPE], body, body_len);
}

static void send_otlp(struct sinks *k, const struct sinks_interval *iv)
{
	struct push_label labels[AGENT_MAX_LABELS];
	struct otlp_resource res = {
		.host = k->host, .service = k->cfg.service_name, .labels = labels,
		.nr_labels = k->cfg.nr_labels,
	};
	size_t len;
	u8 *body;

	for (size_t i = 0; i < k->cfg.nr_labels; i++)
		labels[i] = (struct push_label){ k->cfg.labels[i].name, k->cfg.labels[i].value };
	if (!otlp__encode(iv->pprof, iv->len, &res, &body, &len))
		pusher__add(k->http[SINK_OTLP], body, len);
}

/* the HTTP sinks' counts added up */
static void http_totals(const struct sinks *k, struct pusher_stats *t)
{
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < NR_HTTP; i++) {
		const struct pusher_stats *st = k->http[i] ? pusher__stats(k->http[i]) : NULL;

		if (!st)
			continue;
		t->sent += st->sent;
		t->attempts_failed += st->attempts_failed;
		t->dropped += st->dropped;
		t->spooled += st->spooled;
		t->spool_bytes += st->spool_bytes;
	}
}

/* the interval into the output folder, opened at its first profile (again when SIGHUP
 * named another); 0 or -errno (said) */
static int write_file(struct sinks *k, const struct sinks_interval *iv)
{
	if (k->out && strcmp(outdir__dir(k->out), k->cfg.output_dir)) {
		outdir__free(k->out);
		k->out = NULL;
	}
	if (!k->out && !(k->out = outdir__open(k->cfg.output_dir)))
		return -errno;
	return outdir__write(k->out, iv->start_realtime_ns, iv->pprof, iv->len, k->cfg.max_files,
			     k->cfg.max_bytes);
}

void sinks__send(struct sinks *k, const struct sinks_interval *iv)
{
	struct pusher_stats t;

	k->intervals++;
	k->samples += iv->samples;
	k->lost += iv->lost;
	if (k->cfg.output_dir[0]) {
		/* a full disk: said and counted, the other sinks go on */
		if (write_file(k, iv))
			k->file_failures++;
		else
			k->files++;
	}
	if (k->http[SINK_PYROSCOPE])
		send_pyroscope(k, iv);
	if (k->http[SINK_OTLP])
		send_otlp(k, iv);
	http_totals(k, &t);
	fprintf(stderr, "hsbpf agent: interval %" PRIu64 ": samples=%" PRIu64 " lost=%" PRIu64
		" sends=%" PRIu64 " failures=%" PRIu64 " drops=%" PRIu64 " spool_bytes=%" PRIu64
		" rss_bytes=%" PRIu64 " cpu_seconds=%.2f\n", k->intervals, iv->samples, iv->lost,
		t.sent, t.attempts_failed + k->file_failures, t.dropped, t.spool_bytes,
		health__rss_bytes(), health__cpu_seconds());
}

void sinks__work(struct sinks *k)
{
	for (int i = 0; i < NR_HTTP; i++)
		if (k->http[i])
			pusher__work(k->http[i]);
	if (k->metrics)
		health__serve(k->metrics, sinks__write_metrics, k);
}

void sinks__flush(struct sinks *k, int deadline_ms)
{
	u64 end = now_ns(CLOCK_MONOTONIC) + (u64)deadline_ms * 1000000;

	/* the deadline is for all of them: a slow server leaves the others less time */
	for (int i = 0; i < NR_HTTP; i++) {
		u64 now = now_ns(CLOCK_MONOTONIC);

		if (k->http[i])
			pusher__flush(k->http[i], now < end ? (int)((end - now) / 1000000) : 0);
	}
}

static void metric(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP hsbpf_agent_%s %s\n# TYPE hsbpf_agent_%s %s\n", name, help, name, type);
}

void sinks__write_metrics(FILE *f, void *ctx)
{
	const struct sinks *k = ctx;
	static const struct {
		const char *name, *type, *help;
		size_t off;
	} per_sink[] = {
		{ "sends_total", "counter", "Profiles the sink's server took.",
		  offsetof(struct pusher_stats, sent) },
		{ "send_failures_total", "counter", "Tries that failed (retried with backoff).",
		  offsetof(struct pusher_stats, attempts_failed) },
		{ "dropped_profiles_total", "counter", "Profiles given up: queue or spool full, sink stopped.",
		  offsetof(struct pusher_stats, dropped) },
		{ "spool_profiles", "gauge", "Profiles in the sink's spool on disk.",
		  offsetof(struct pusher_stats, spooled) },
		{ "spool_bytes", "gauge", "Bytes in the sink's spool on disk.",
		  offsetof(struct pusher_stats, spool_bytes) },
	};

	metric(f, "intervals_total", "counter", "Profiles made, one per interval.");
	fprintf(f, "hsbpf_agent_intervals_total %" PRIu64 "\n", k->intervals);
	metric(f, "samples_total", "counter", "Samples in the profiles.");
	fprintf(f, "hsbpf_agent_samples_total %" PRIu64 "\n", k->samples);
	metric(f, "lost_samples_total", "counter", "Samples the kernel could not count (its maps full).");
	fprintf(f, "hsbpf_agent_lost_samples_total %" PRIu64 "\n", k->lost);
	metric(f, "files_written_total", "counter", "Profiles written to the output folder.");
	fprintf(f, "hsbpf_agent_files_written_total %" PRIu64 "\n", k->files);
	metric(f, "file_failures_total", "counter", "Profiles the output folder could not take.");
	fprintf(f, "hsbpf_agent_file_failures_total %" PRIu64 "\n", k->file_failures);
	for (size_t m = 0; m < sizeof(per_sink) / sizeof(per_sink[0]); m++) {
		metric(f, per_sink[m].name, per_sink[m].type, per_sink[m].help);
		for (int i = 0; i < NR_HTTP; i++) {
			const struct pusher_stats *st = k->http[i] ? pusher__stats(k->http[i]) : NULL;

			if (st)
				fprintf(f, "hsbpf_agent_%s{sink=\"%s\"} %" PRIu64 "\n", per_sink[m].name,
					http_names[i], *(const u64 *)((const char *)st + per_sink[m].off));
		}
	}
	metric(f, "sink_stopped", "gauge", "1 when the sink's server refused for good.");
	for (int i = 0; i < NR_HTTP; i++)
		if (k->http[i])
			fprintf(f, "hsbpf_agent_sink_stopped{sink=\"%s\"} %d\n", http_names[i],
				pusher__stats(k->http[i])->stopped);
	metric(f, "resident_memory_bytes", "gauge", "The agent's resident memory.");
	fprintf(f, "hsbpf_agent_resident_memory_bytes %" PRIu64 "\n", health__rss_bytes());
	metric(f, "cpu_seconds_total", "counter", "The agent's CPU time, user and system.");
	fprintf(f, "hsbpf_agent_cpu_seconds_total %.3f\n", health__cpu_seconds());
}

void sinks__summary(const struct sinks *k, FILE *f)
{
	fprintf(f, "hsbpf agent: %" PRIu64 " intervals, %" PRIu64 " samples", k->intervals, k->samples);
	if (k->cfg.output_dir[0]) {
		fprintf(f, "; %" PRIu64 " files written to '%s'", k->files, k->cfg.output_dir);
		if (k->file_failures)
			fprintf(f, " (%" PRIu64 " could not be written)", k->file_failures);
	}
	for (int i = 0; i < NR_HTTP; i++) {
		const struct pusher_stats *st = k->http[i] ? pusher__stats(k->http[i]) : NULL;

		if (!st)
			continue;
		fprintf(f, "; %s %" PRIu64 ", failed tries %" PRIu64 ", dropped %" PRIu64,
			i == SINK_PYROSCOPE ? "pushed" : "otlp sent", st->sent, st->attempts_failed,
			st->dropped);
		if (k->cfg.spool_dir[0])
			fprintf(f, ", spooled %" PRIu64, st->spooled);
		if (st->stopped)
			fputs(" (refused)", f);
	}
	fputc('\n', f);
}
