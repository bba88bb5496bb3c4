/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The agent's HTTP sinks. Grafana Pyroscope's push API (--server): POST
 * URL/push.v1.PusherService/Push (Connect protocol, unary, application/proto) with a
 * PushRequest (proto/push.proto) of one series per interval: the labels and the interval's
 * gzipped pprof. The pusher sends any sink's requests (OTLP's too, otlp.h) with libcurl from
 * a bounded queue, in memory or on disk (spool.h): a failure (no connection, a timeout, a
 * 5xx, 408, 429, a reply cut short) is tried again after a backoff that doubles with each
 * failure (1 s up to 60 s) with jitter, the oldest request dropped (counted) when the queue
 * is full; a 4xx that will not succeed or a TLS certificate that is not trusted stops the
 * sink, said once. */
#ifndef HSBPF_AGENT_PUSH_H
#define HSBPF_AGENT_PUSH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include "lib/util.h"

#define PUSH_PATH "/push.v1.PusherService/Push"
#define PUSH_CONTENT_TYPE "application/proto"
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
/* a label as Pyroscope takes it (its validation: names [a-zA-Z_][a-zA-Z0-9_]*, values valid
 * UTF-8 without control characters, names up to 1024 bytes, values up to 2048): other
 * characters become '_'; true when it had to change anything */
bool push__sanitize_label(const char *name, const char *value, char *name_out, size_t name_size,
			  char *value_out, size_t value_size);

struct pusher_stats {
	u64 sent;		/* requests the server took */
	u64 attempts_failed;	/* tries that failed (each retried unless dropped) */
	u64 dropped;		/* requests given up: the queue or spool full, the sink stopped, the
				 * exit without a spool, a spool write failing */
	u64 spooled;		/* requests in the spool now */
	u64 spool_bytes;	/* ... their size */
	bool stopped;		/* the server refused for good (a 4xx, a TLS certificate) */
};

struct pusher_opts {
	const char *name;		/* the sink's name in messages: "pyroscope", "otlp" */
	const char *url;		/* the server's base URL */
	const char *path;		/* added to it: PUSH_PATH, OTLP_PATH */
	const char *const *headers;	/* "Name: value", NULL-terminated */
	size_t max_queue;		/* requests kept in memory when there is no spool */
	const char *spool_dir;		/* NULL: no spool (spool.h) */
	u64 spool_max;			/* its bound in bytes, 0 none */
	const char *cacert;		/* CA certificates for https (NULL: the system's) */
	int timeout_ms;			/* a try's bound */
};

struct pusher;

/* url parses as an http or https URL with a host; 0, or -EINVAL with why in buf */
int push__check_url(const char *url, char *why, size_t size);

/* a sender of requests to one server, one at a time in the background (libcurl's multi
 * interface: the caller's loop is never held by a slow server); NULL with errno set, after
 * saying why */
struct pusher *pusher__new(const struct pusher_opts *o);
/* queue a request (the pusher frees it): in the spool when there is one, else in memory;
 * 0 (a failure to spool is said and counted) */
int pusher__add(struct pusher *p, u8 *body, size_t len);
/* the sending moved on without waiting: a try finished is accounted for, the next started
 * when the backoff allows */
void pusher__work(struct pusher *p);
/* requests queued (or spooled) and not sent */
size_t pusher__pending(const struct pusher *p);
const struct pusher_stats *pusher__stats(const struct pusher *p);
/* the server's URL (with the path) */
const char *pusher__url(const struct pusher *p);
const char *pusher__name(const struct pusher *p);
/* at exit: what is queued is sent, backoff or not, within deadline_ms in all; what is left
 * stays in the spool for the next run, or is dropped without one */
void pusher__flush(struct pusher *p, int deadline_ms);
void pusher__free(struct pusher *p);

#endif /* HSBPF_AGENT_PUSH_H */
