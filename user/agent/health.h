/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The agent's health endpoint (--metrics-listen ADDR:PORT): GET /metrics answered with
 * Prometheus' text format, served from the agent's loop without a thread: the listening
 * socket does not block, and a client gets at most a second to send its request. The
 * process's own figures (RSS, CPU time) are read here too. */
#ifndef HSBPF_AGENT_HEALTH_H
#define HSBPF_AGENT_HEALTH_H

#include <stdio.h>
#include "lib/util.h"

struct health;

/* listening on "ADDR:PORT" (":PORT" or "PORT": all addresses; PORT 0: any free one);
 * NULL with errno set, after saying why */
struct health *health__listen(const char *addr);
/* the port it listens on */
int health__port(const struct health *m);
/* the requests waiting answered, the body of /metrics written by fill (other paths: 404) */
void health__serve(struct health *m, void (*fill)(FILE *f, void *ctx), void *ctx);
void health__free(struct health *m);

/* this process's resident memory in bytes and CPU time (user and system) in seconds */
u64 health__rss_bytes(void);
double health__cpu_seconds(void);

#endif /* HSBPF_AGENT_HEALTH_H */
