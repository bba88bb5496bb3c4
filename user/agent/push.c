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
#include "agent/spool.h"
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

bool push__sanitize_label(const char *name, const char *value, char *name_out, size_t name_size,
			  char *value_out, size_t value_size)
{
	const unsigned char *v = (const unsigned char *)value;
	size_t n = 0, limit = value_size - 1 < 2048 ? value_size - 1 : 2048;
	bool changed = false;

	for (size_t i = 0; name[i] && i + 1 < name_size && i < 1024; i++) {
		char c = name[i];
		bool ok = c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (i && c >= '0' && c <= '9');

		name_out[i] = ok ? c : '_';
		name_out[i + 1] = '\0';
		changed |= !ok;
	}
	if (!*name) {
		snprintf(name_out, name_size, "_");
		changed = true;
	}
	changed |= strlen(name) >= name_size || strlen(name) > 1024;
	while (*v && n < limit) {
		/* one UTF-8 character: its length from the first byte, continuation bytes after */
		size_t len = *v < 0x80 ? 1 : (*v & 0xe0) == 0xc0 ? 2 : (*v & 0xf0) == 0xe0 ? 3 :
			     (*v & 0xf8) == 0xf0 ? 4 : 0;
		bool ok = len && n + len <= limit && !(len == 1 && (*v < 0x20 || *v == 0x7f));

		for (size_t k = 1; ok && k < len; k++)
			ok = (v[k] & 0xc0) == 0x80;
		if (!ok) {
			value_out[n++] = '_';
			v++;
			changed = true;
			continue;
		}
		memcpy(value_out + n, v, len);
		n += len;
		v += len;
	}
	value_out[n] = '\0';
	return changed || *v;
}

int push__check_url(const char *url, char *why, size_t size)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL;
	CURLUcode rc;
	int err = -EINVAL;

	if (!u) {
		snprintf(why, size, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	rc = curl_url_set(u, CURLUPART_URL, url, 0);
	if (rc)
		snprintf(why, size, "%s", curl_url_strerror(rc));
	else if (curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) ||
		 (strcmp(scheme, "http") && strcmp(scheme, "https")))
		snprintf(why, size, "not an http or https URL");
	else if (curl_url_get(u, CURLUPART_HOST, &host, 0) || !*host)
		snprintf(why, size, "no host");
	else
		err = 0;
	curl_free(scheme);
	curl_free(host);
	curl_url_cleanup(u);
	return err;
}

struct body {
	u8 *data;
	size_t len;
};

struct pusher {
	char *name, *url, *cacert;
	CURL *curl;
	CURLM *multi;
	struct curl_slist *headers;
	struct body *queue;	/* without a spool: a ring of max_queue */
	size_t max_queue, head, nr;
	struct spool *spool;
	struct body cur;	/* the request being sent */
	u64 cur_seq;		/* ... its number in the spool */
	bool busy;
	int timeout_ms;
	unsigned failures;	/* in a row */
	u64 next_try_ns;	/* CLOCK_MONOTONIC */
	struct pusher_stats st;
	char reply[256];	/* the start of the server's last reply */
	size_t reply_len;
	char errbuf[CURL_ERROR_SIZE];
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

static int set_up_curl(struct pusher *p, const struct pusher_opts *o)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) || !(p->curl = curl_easy_init()) ||
	    !(p->multi = curl_multi_init()))
		return -EIO;
	for (size_t i = 0; o->headers && o->headers[i]; i++)
		if (!(p->headers = curl_slist_append(p->headers, o->headers[i])))
			return -ENOMEM;
	/* the body at once: no waiting for "100 Continue" before large profiles */
	if (!(p->headers = curl_slist_append(p->headers, "Expect:")))
		return -ENOMEM;
	curl_easy_setopt(p->curl, CURLOPT_URL, p->url);
	curl_easy_setopt(p->curl, CURLOPT_HTTPHEADER, p->headers);
	curl_easy_setopt(p->curl, CURLOPT_USERAGENT, "hsbpf/" HSBPF_VERSION);
	curl_easy_setopt(p->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(p->curl, CURLOPT_WRITEFUNCTION, keep_reply);
	curl_easy_setopt(p->curl, CURLOPT_WRITEDATA, p);
	curl_easy_setopt(p->curl, CURLOPT_ERRORBUFFER, p->errbuf);
	if (p->cacert)
		curl_easy_setopt(p->curl, CURLOPT_CAINFO, p->cacert);
	return 0;
}

struct pusher *pusher__new(const struct pusher_opts *o)
{
	struct pusher *p = calloc(1, sizeof(*p));
	size_t n = strlen(o->url);
	char why[128];
	int err = 0;

	if (push__check_url(o->url, why, sizeof(why))) {
		error("invalid %s URL '%s': %s", o->name, o->url, why);
		err = -EINVAL;
		goto fail;
	}
	if (!p)
		goto nomem;
	while (n && o->url[n - 1] == '/')
		n--;
	p->max_queue = o->max_queue ? o->max_queue : 1;
	p->timeout_ms = o->timeout_ms ? o->timeout_ms : 10000;
	p->queue = calloc(p->max_queue, sizeof(*p->queue));
	if (!p->queue || !(p->name = strdup(o->name)) ||
	    (o->cacert && !(p->cacert = strdup(o->cacert))) ||
	    asprintf(&p->url, "%.*s%s", (int)n, o->url, o->path) < 0)
		goto nomem;
	if (o->spool_dir && !(p->spool = spool__open(o->spool_dir, o->spool_max))) {
		err = -errno;
		goto fail;
	}
	err = set_up_curl(p, o);
	if (err == -ENOMEM)
		goto nomem;
	if (err) {
		error("cannot start libcurl for '%s'", p->url);
		goto fail;
	}
	return p;
nomem:
	err = -ENOMEM;
	error("cannot start the %s sink '%s': %s", o->name, o->url, strerror(ENOMEM));
fail:
	pusher__free(p);
	errno = -err;
	return NULL;
}

void pusher__free(struct pusher *p)
{
	if (!p)
		return;
	if (p->busy)
		curl_multi_remove_handle(p->multi, p->curl);
	free(p->cur.data);
	for (size_t i = 0; i < p->nr; i++)
		free(p->queue[(p->head + i) % p->max_queue].data);
	free(p->queue);
	spool__free(p->spool);
	curl_slist_free_all(p->headers);
	if (p->multi)
		curl_multi_cleanup(p->multi);
	if (p->curl) {
		curl_easy_cleanup(p->curl);
		curl_global_cleanup();
	}
	free(p->url);
	free(p->name);
	free(p->cacert);
	free(p);
}

static void drop_oldest(struct pusher *p)
{
	free(p->queue[p->head].data);
	p->head = (p->head + 1) % p->max_queue;
	p->nr--;
	p->st.dropped++;
}

static void update_spool_stats(struct pusher *p)
{
	if (!p->spool)
		return;
	p->st.spooled = spool__count(p->spool);
	p->st.spool_bytes = spool__bytes(p->spool);
}

int pusher__add(struct pusher *p, u8 *body, size_t len)
{
	if (p->st.stopped) {
		free(body);
		p->st.dropped++;
		return 0;
	}
	if (p->spool) {
		u64 before = spool__dropped(p->spool);

		if (spool__push(p->spool, body, len))
			p->st.dropped++;
		p->st.dropped += spool__dropped(p->spool) - before;
		free(body);
		update_spool_stats(p);
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

/* the oldest request taken for sending and the try started; false when there is none */
static bool start_try(struct pusher *p)
{
	p->cur = (struct body){};
	if (p->spool) {
		u64 before = spool__dropped(p->spool);
		int err;

		while ((err = spool__peek(p->spool, &p->cur.data, &p->cur.len, &p->cur_seq)) &&
		       err != -ENOENT)
			;
		p->st.dropped += spool__dropped(p->spool) - before;
		update_spool_stats(p);
		if (err)
			return false;
	} else {
		if (!p->nr)
			return false;
		p->cur = p->queue[p->head];
		p->head = (p->head + 1) % p->max_queue;
		p->nr--;
	}
	p->reply_len = 0;
	p->reply[0] = '\0';
	p->errbuf[0] = '\0';
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDS, p->cur.data);
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)p->cur.len);
	curl_easy_setopt(p->curl, CURLOPT_TIMEOUT_MS, (long)p->timeout_ms);
	curl_easy_setopt(p->curl, CURLOPT_CONNECTTIMEOUT_MS, 3000L);
	curl_multi_add_handle(p->multi, p->curl);
	p->busy = true;
	return true;
}

/* the request being sent back at the front of the queue (a spooled one is still on disk) */
static void put_back(struct pusher *p)
{
	if (!p->spool) {
		if (p->nr == p->max_queue) {
			free(p->cur.data);
			p->st.dropped++;
		} else {
			p->head = (p->head + p->max_queue - 1) % p->max_queue;
			p->queue[p->head] = p->cur;
			p->nr++;
		}
		p->cur.data = NULL;
	}
	free(p->cur.data);
	p->cur = (struct body){};
}

static void stop(struct pusher *p)
{
	p->st.stopped = true;
	while (p->nr)
		drop_oldest(p);
	if (p->spool && spool__count(p->spool))
		fprintf(stderr, "hsbpf agent: %zu profiles stay in the spool '%s' for a later run\n",
			spool__count(p->spool), spool__dir(p->spool));
}

/* the try that ended with rc: 0 sent, -EAGAIN to try again, -EPERM refused for good */
static int end_try(struct pusher *p, CURLcode rc)
{
	long code = 0;
	int err = -EAGAIN;

	curl_multi_remove_handle(p->multi, p->curl);
	p->busy = false;
	if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE) {
		error("the %s sink's server '%s' has a TLS certificate that is not trusted: %s; not "
		      "sending any more (cacert names a CA file)", p->name, p->url,
		      p->errbuf[0] ? p->errbuf : curl_easy_strerror(rc));
		err = -EPERM;
	} else if (rc != CURLE_OK) {
		debug("cannot send to '%s': %s", p->url, p->errbuf[0] ? p->errbuf : curl_easy_strerror(rc));
	} else {
		curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &code);
		if (code >= 200 && code < 300)
			err = 0;
		else if (refused(code)) {
			error("the server refused the profile: '%s' answered HTTP %ld%s%s; not pushing any more",
			      p->url, code, p->reply_len ? ": " : "", p->reply);
			err = -EPERM;
		} else {
			debug("cannot send to '%s': HTTP %ld", p->url, code);
		}
	}
	if (!err) {
		if (p->spool)
			spool__pop(p->spool, p->cur_seq);
		free(p->cur.data);
		p->cur = (struct body){};
		p->st.sent++;
		if (p->failures)
			fprintf(stderr, "hsbpf: pushing to '%s' again\n", p->url);
		p->failures = 0;
		p->next_try_ns = 0;
	} else {
		if (err == -EAGAIN) {
			p->st.attempts_failed++;
			if (!p->failures++)
				warning("cannot push to '%s': trying again with backoff", p->url);
			p->next_try_ns = now_ns(CLOCK_MONOTONIC) +
					 push__backoff_ns(p->failures, (double)random() / RAND_MAX);
		}
		put_back(p);
		if (err == -EPERM)
			stop(p);
	}
	update_spool_stats(p);
	return err;
}

/* the transfer moved on; the try's end when it ended (1), else 0 */
static int step(struct pusher *p, int *err)
{
	CURLMsg *msg;
	int running, left;

	curl_multi_perform(p->multi, &running);
	while ((msg = curl_multi_info_read(p->multi, &left)))
		if (msg->msg == CURLMSG_DONE && msg->easy_handle == p->curl) {
			*err = end_try(p, msg->data.result);
			return 1;
		}
	return 0;
}

void pusher__work(struct pusher *p)
{
	int err;

	if (p->busy && !step(p, &err))
		return;
	if (!p->busy && !p->st.stopped && now_ns(CLOCK_MONOTONIC) >= p->next_try_ns && start_try(p))
		step(p, &err);
}

void pusher__flush(struct pusher *p, int deadline_ms)
{
	u64 end = now_ns(CLOCK_MONOTONIC) + (u64)deadline_ms * 1000000;
	int err = 0;

	while (!p->st.stopped && !err) {
		u64 now = now_ns(CLOCK_MONOTONIC);

		if (now >= end)
			break;
		if (!p->busy && !start_try(p))
			break;
		curl_multi_poll(p->multi, NULL, 0, (int)((end - now) / 1000000) + 1 > 100 ? 100 :
			       (int)((end - now) / 1000000) + 1, NULL);
		/* one try each: a server that fails now is not tried again before the exit */
		step(p, &err);
	}
	if (p->busy) {
		curl_multi_remove_handle(p->multi, p->curl);
		p->busy = false;
		p->st.attempts_failed++;
		put_back(p);
	}
	while (p->nr)
		drop_oldest(p);
	update_spool_stats(p);
}

size_t pusher__pending(const struct pusher *p)
{
	return (p->spool ? spool__count(p->spool) : p->nr) + (p->busy && !p->spool);
}

const struct pusher_stats *pusher__stats(const struct pusher *p)
{
	return &p->st;
}

const char *pusher__url(const struct pusher *p)
{
	return p->url;
}

const char *pusher__name(const struct pusher *p)
{
	return p->name;
}
