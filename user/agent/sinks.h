/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The agent's sinks together: each interval's gzipped pprof goes to the rotating folder
 * (outdir.h), Grafana Pyroscope (push.h) and an OTLP receiver (otlp.h), whichever the
 * configuration names; a sink that fails says so and the others go on. They count what
 * went where, for the summary at exit, the line logged each interval and /metrics
 * (health.h). */
#ifndef HSBPF_AGENT_SINKS_H
#define HSBPF_AGENT_SINKS_H

#include <stdio.h>
#include "agent/agent_config.h"
#include "lib/util.h"

/* what an interval is, for the sinks */
struct sinks_interval {
	const u8 *pprof;	/* gzipped */
	size_t len;
	u64 start_realtime_ns;
	u64 samples;
	u64 lost;		/* samples the kernel could not count (its maps full) */
};

struct sinks;

/* the sinks of the configuration c for this host; NULL with errno set, after saying why */
struct sinks *sinks__new(const struct agent_config *c, const char *host);
/* the configuration c from now on (SIGHUP): a sink whose URL stayed keeps its queue, one
 * that changed or went gets one last try within flush_ms; 0, or -errno when a sink could not
 * be opened (said; the others are in use) */
int sinks__reconfigure(struct sinks *k, const struct agent_config *c, int flush_ms);
/* the interval given to every sink, then its line in the log */
void sinks__send(struct sinks *k, const struct sinks_interval *iv);
/* the HTTP sinks' sending moved on, /metrics answered; without waiting */
void sinks__work(struct sinks *k);
/* at exit: what the servers have not taken gets its last try within deadline_ms */
void sinks__flush(struct sinks *k, int deadline_ms);
/* the Prometheus text of /metrics */
void sinks__write_metrics(FILE *f, void *k);
/* the summary line at exit */
void sinks__summary(const struct sinks *k, FILE *f);
void sinks__free(struct sinks *k);

#endif /* HSBPF_AGENT_SINKS_H */
