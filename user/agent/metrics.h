/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The agent's health endpoint (--metrics-listen ADDR:PORT): GET /metrics answered with
 * Prometheus' text format, served from the agent's loop without a thread: the listening
 * socket does not block, and a client gets at most a second to send its request. The
 * process's own figures (RSS, CPU time) are read here too. */
#ifndef HSBPF_AGENT_METRICS_H
#define HSBPF_AGENT_METRICS_H

#include <stdio.h>
#include "lib/util.h"

struct metrics;

/* listening on "ADDR:PORT" (":PORT" or "PORT": all addresses; PORT 0: any free one);
 * NULL with errno set, after saying why */
struct metrics *metrics__listen(const char *addr);
/* the port it listens on */
int metrics__port(const struct metrics *m);
/* the requests waiting answered, the body of /metrics written by fill (other paths: 404) */
void metrics__serve(struct metrics *m, void (*fill)(FILE *f, void *ctx), void *ctx);
void metrics__free(struct metrics *m);

/* this process's resident memory in bytes and CPU time (user and system) in seconds */
u64 metrics__rss_bytes(void);
double metrics__cpu_seconds(void);

#endif /* HSBPF_AGENT_METRICS_H */
