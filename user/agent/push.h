/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The agent's --server sink: Grafana Pyroscope's push API, POST URL/push.v1.PusherService/Push
 * (Connect protocol, unary, application/proto) with a PushRequest (proto/push.proto) of one
 * series per interval: the labels and the interval's gzipped pprof. Sent with libcurl from a
 * bounded queue: a failure (no connection, a 5xx, 408, 429) is tried again after a backoff
 * that doubles with each failure (1 s up to 60 s) with jitter, the oldest profile dropped
 * when the queue is full; a 4xx that will not succeed stops the sink, said once. */
#ifndef HSBPF_AGENT_PUSH_H
#define HSBPF_AGENT_PUSH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include "lib/util.h"

#define PUSH_PATH "/push.v1.PusherService/Push"
#define PUSH_BACKOFF_MIN_NS (1000000000ull)
#define PUSH_BACKOFF_MAX_NS (60 * 1000000000ull)

struct push_label {
	const char *name;
	const char *value;
};

/* a PushRequest of one series (labels, one profile with id) in a malloc'd buffer; 0 or
 * -ENOMEM (said) */
int push__encode(const struct push_label *labels, size_t nr, const u8 *pprof, size_t len,
		 const char *id, u8 **out, size_t *out_len);
/* the backoff after `failures` failures in a row, jitter in [0, 1) spreading it by up to half
 * of it: half to all of min * 2^(failures-1), at most max */
u64 push__backoff_ns(unsigned failures, double jitter);

struct pusher_stats {
	u64 sent;		/* profiles the server took */
	u64 attempts_failed;	/* tries that failed (each retried unless dropped) */
	u64 dropped;		/* profiles given up: the queue full, the sink stopped, the exit */
	bool stopped;		/* the server refused for good (a 4xx) */
};

struct pusher;

/* for the server at url (base URL; PUSH_PATH is added), keeping at most max_queue profiles
 * not sent yet; NULL with errno set, after saying why */
struct pusher *pusher__new(const char *url, size_t max_queue);
/* queue a request (push__encode's; the pusher frees it); 0 or -ENOMEM */
int pusher__add(struct pusher *p, u8 *body, size_t len);
/* send what is queued, oldest first, while the server takes them and the backoff allows;
 * each try takes at most timeout_ms */
void pusher__work(struct pusher *p, int timeout_ms);
/* profiles queued and not sent */
size_t pusher__pending(const struct pusher *p);
const struct pusher_stats *pusher__stats(const struct pusher *p);
/* the server's URL */
const char *pusher__url(const struct pusher *p);
/* at exit: one try each for what is queued (backoff or not) within deadline_ms in all, the
 * rest dropped */
void pusher__flush(struct pusher *p, int deadline_ms);
void pusher__free(struct pusher *p);

#endif /* HSBPF_AGENT_PUSH_H */
