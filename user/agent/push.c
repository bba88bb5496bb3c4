// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Pyroscope's push API: the request's encoding (protobuf-c, proto/push.proto) and its sending
 * (libcurl) with retries (push.h). */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "agent/push.h"
#include "push.pb-c.h"

int push__encode(const struct push_label *labels, size_t nr, const u8 *pprof, size_t len,
		 const char *id, u8 **out, size_t *out_len)
{
	Push__V1__LabelPair *pairs = calloc(nr + 1, sizeof(*pairs));
	Push__V1__LabelPair **pair_ptrs = calloc(nr + 1, sizeof(*pair_ptrs));
	Push__V1__RawSample sample = PUSH__V1__RAW_SAMPLE__INIT, *samples[1] = { &sample };
	Push__V1__RawProfileSeries series = PUSH__V1__RAW_PROFILE_SERIES__INIT, *all[1] = { &series };
	Push__V1__PushRequest req = PUSH__V1__PUSH_REQUEST__INIT;
	int err = 0;

	*out = NULL;
	if (!pairs || !pair_ptrs)
		goto nomem;
	for (size_t i = 0; i < nr; i++) {
		push__v1__label_pair__init(&pairs[i]);
		pairs[i].name = (char *)labels[i].name;
		pairs[i].value = (char *)labels[i].value;
		pair_ptrs[i] = &pairs[i];
	}
	sample.raw_profile.data = (u8 *)pprof;
	sample.raw_profile.len = len;
	sample.id = (char *)(id ? id : "");
	series.n_labels = nr;
	series.labels = pair_ptrs;
	series.n_samples = 1;
	series.samples = samples;
	req.n_series = 1;
	req.series = all;
	*out_len = push__v1__push_request__get_packed_size(&req);
	*out = malloc(*out_len + 1);
	if (!*out)
		goto nomem;
	push__v1__push_request__pack(&req, *out);
	goto cleanup;
nomem:
	err = fail(-ENOMEM, "cannot encode a push request: %s", strerror(ENOMEM));
cleanup:
	free(pairs);
	free(pair_ptrs);
	return err;
}

u64 push__backoff_ns(unsigned failures, double jitter)
{
	u64 b = PUSH_BACKOFF_MIN_NS;

	for (unsigned i = 1; i < failures && b < PUSH_BACKOFF_MAX_NS; i++)
		b *= 2;
	if (b > PUSH_BACKOFF_MAX_NS)
		b = PUSH_BACKOFF_MAX_NS;
	/* spread: agents restarted together do not retry together */
	return b / 2 + (u64)(b / 2 * jitter);
}

struct body {
	u8 *data;
	size_t len;
};

struct pusher {
	char *url;
	CURL *curl;
	struct curl_slist *headers;
	struct body *queue;	/* a ring of max_queue */
	size_t max_queue, head, nr;
	unsigned failures;	/* in a row */
	u64 next_try_ns;	/* CLOCK_MONOTONIC */
	struct pusher_stats st;
	char reply[256];	/* the start of the server's last reply */
	size_t reply_len;
};

static size_t keep_reply(char *data, size_t size, size_t n, void *ctx)
{
	struct pusher *p = ctx;
	size_t len = size * n, room = sizeof(p->reply) - 1 - p->reply_len;

	memcpy(p->reply + p->reply_len, data, len < room ? len : room);
	p->reply_len += len < room ? len : room;
	p->reply[p->reply_len] = '\0';
	return len;
}

struct pusher *pusher__new(const char *url, size_t max_queue)
{
	struct pusher *p = calloc(1, sizeof(*p));
	size_t n = strlen(url);

	if (!p)
		goto nomem;
	while (n && url[n - 1] == '/')
		n--;
	p->max_queue = max_queue ? max_queue : 1;
	p->queue = calloc(p->max_queue, sizeof(*p->queue));
	if (!p->queue || asprintf(&p->url, "%.*s%s", (int)n, url, PUSH_PATH) < 0)
		goto nomem;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) || !(p->curl = curl_easy_init())) {
		error("cannot start libcurl");
		pusher__free(p);
		errno = EIO;
		return NULL;
	}
	p->headers = curl_slist_append(NULL, "Content-Type: application/proto");
	if (p->headers)
		p->headers = curl_slist_append(p->headers, "Connect-Protocol-Version: 1");
	/* the body at once: no waiting for "100 Continue" before large profiles */
	if (p->headers)
		p->headers = curl_slist_append(p->headers, "Expect:");
	if (!p->headers)
		goto nomem;
	curl_easy_setopt(p->curl, CURLOPT_URL, p->url);
	curl_easy_setopt(p->curl, CURLOPT_HTTPHEADER, p->headers);
	curl_easy_setopt(p->curl, CURLOPT_USERAGENT, "hsbpf/" HSBPF_VERSION);
	curl_easy_setopt(p->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(p->curl, CURLOPT_WRITEFUNCTION, keep_reply);
	curl_easy_setopt(p->curl, CURLOPT_WRITEDATA, p);
	return p;
nomem:
	pusher__free(p);
	error("cannot start the push to '%s': %s", url, strerror(ENOMEM));
	errno = ENOMEM;
	return NULL;
}

void pusher__free(struct pusher *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nr; i++)
		free(p->queue[(p->head + i) % p->max_queue].data);
	free(p->queue);
	curl_slist_free_all(p->headers);
	if (p->curl) {
		curl_easy_cleanup(p->curl);
		curl_global_cleanup();
	}
	free(p->url);
	free(p);
}

static void drop_oldest(struct pusher *p)
{
	free(p->queue[p->head].data);
	p->head = (p->head + 1) % p->max_queue;
	p->nr--;
	p->st.dropped++;
}

int pusher__add(struct pusher *p, u8 *body, size_t len)
{
	if (p->st.stopped) {
		free(body);
		p->st.dropped++;
		return 0;
	}
	if (p->nr == p->max_queue)
		drop_oldest(p);
	p->queue[(p->head + p->nr) % p->max_queue] = (struct body){ body, len };
	p->nr++;
	return 0;
}

/* a request that will not succeed however often it is sent */
static bool refused(long code)
{
	return code >= 400 && code < 500 && code != 408 && code != 429;
}

/* one try of the oldest: 0 sent, -EAGAIN to try again, -EPERM refused for good */
static int try_send(struct pusher *p, int timeout_ms)
{
	struct body *b = &p->queue[p->head];
	long code = 0;
	CURLcode rc;

	p->reply_len = 0;
	p->reply[0] = '\0';
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDS, b->data);
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)b->len);
	curl_easy_setopt(p->curl, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(p->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)(timeout_ms < 2000 ? timeout_ms : 2000));
	rc = curl_easy_perform(p->curl);
	if (rc != CURLE_OK) {
		debug("cannot push to '%s': %s", p->url, curl_easy_strerror(rc));
		return -EAGAIN;
	}
	curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 200 && code < 300)
		return 0;
	if (refused(code)) {
		error("the server refused the profile: '%s' answered HTTP %ld%s%s; not pushing any more",
		      p->url, code, p->reply_len ? ": " : "", p->reply);
		return -EPERM;
	}
	debug("cannot push to '%s': HTTP %ld", p->url, code);
	return -EAGAIN;
}

static void stop(struct pusher *p)
{
	p->st.stopped = true;
	while (p->nr)
		drop_oldest(p);
}

void pusher__work(struct pusher *p, int timeout_ms)
{
	while (p->nr && !p->st.stopped && now_ns(CLOCK_MONOTONIC) >= p->next_try_ns) {
		int err = try_send(p, timeout_ms);

		if (err == -EPERM) {
			stop(p);
			break;
		}
		if (err) {
			p->st.attempts_failed++;
			if (!p->failures++)
				warning("cannot push to '%s': trying again with backoff", p->url);
			p->next_try_ns = now_ns(CLOCK_MONOTONIC) +
					 push__backoff_ns(p->failures, (double)random() / RAND_MAX);
			break;
		}
		if (p->failures)
			fprintf(stderr, "hsbpf: pushing to '%s' again\n", p->url);
		p->failures = 0;
		p->next_try_ns = 0;
		free(p->queue[p->head].data);
		p->head = (p->head + 1) % p->max_queue;
		p->nr--;
		p->st.sent++;
	}
}

void pusher__flush(struct pusher *p, int deadline_ms)
{
	u64 end = now_ns(CLOCK_MONOTONIC) + (u64)deadline_ms * 1000000;

	while (p->nr && !p->st.stopped) {
		u64 now = now_ns(CLOCK_MONOTONIC);
		int err;

		if (now >= end)
			break;
		err = try_send(p, (int)((end - now) / 1000000) + 1);
		if (err == -EPERM) {
			stop(p);
			break;
		}
		if (err) {
			p->st.attempts_failed++;
			break;
		}
		free(p->queue[p->head].data);
		p->head = (p->head + 1) % p->max_queue;
		p->nr--;
		p->st.sent++;
	}
	while (p->nr)
		drop_oldest(p);
}

size_t pusher__pending(const struct pusher *p)
{
	return p->nr;
}

const struct pusher_stats *pusher__stats(const struct pusher *p)
{
	return &p->st;
}

const char *pusher__url(const struct pusher *p)
{
	return p->url;
}
