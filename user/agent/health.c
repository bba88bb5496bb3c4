// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The agent's /metrics endpoint (health.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "agent/health.h"

#define REQUEST_MS 1000

struct health {
	int fd;
	int port;
};

/* "ADDR:PORT" cut into its two halves ("[::1]:9464" too) */
static int split(const char *addr, char *host, size_t hsize, char *port, size_t psize)
{
	const char *colon = strrchr(addr, ':');
	size_t n;

	if (!colon) {
		snprintf(host, hsize, "%s", "");
		snprintf(port, psize, "%s", addr);
		return *addr ? 0 : -EINVAL;
	}
	n = colon - addr;
	if (n >= 2 && addr[0] == '[' && addr[n - 1] == ']') {
		addr++;
		n -= 2;
	}
	if (n >= hsize || !colon[1] || strlen(colon + 1) >= psize)
		return -EINVAL;
	snprintf(host, hsize, "%.*s", (int)n, addr);
	snprintf(port, psize, "%s", colon + 1);
	return 0;
}

struct health *health__listen(const char *addr)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE },
			*ai = NULL;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct health *m = calloc(1, sizeof(*m));
	char host[256], port[32];
	int one = 1, rc, err = 0;
	u64 nr;

	if (!m) {
		err = fail(-ENOMEM, "cannot serve /metrics: %s", strerror(ENOMEM));
		goto out;
	}
	m->fd = -1;
	if (split(addr, host, sizeof(host), port, sizeof(port)) || parse_u64(port, &nr) || nr > 65535) {
		err = fail(-EINVAL, "invalid --metrics-listen '%s' (ADDR:PORT)", addr);
		goto out;
	}
	rc = getaddrinfo(*host ? host : NULL, port, &hints, &ai);
	if (rc) {
		err = fail(-EINVAL, "invalid --metrics-listen '%s': %s", addr, gai_strerror(rc));
		goto out;
	}
	m->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (m->fd < 0 || setsockopt(m->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(m->fd, ai->ai_addr, ai->ai_addrlen) || listen(m->fd, 16) ||
	    getsockname(m->fd, (struct sockaddr *)&ss, &len)) {
		err = fail(-errno, "cannot listen on '%s' for /metrics: %s", addr, strerror(errno));
		goto out;
	}
	m->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port :
			((struct sockaddr_in *)&ss)->sin_port);
out:
	if (ai)
		freeaddrinfo(ai);
	if (err) {
		health__free(m);
		errno = -err;
		return NULL;
	}
	return m;
}

int health__port(const struct health *m)
{
	return m->port;
}

void health__free(struct health *m)
{
	if (!m)
		return;
	if (m->fd >= 0)
		close(m->fd);
	free(m);
}

/* the request's head, until its blank line, within REQUEST_MS; its length or -1 */
static ssize_t read_request(int fd, char *buf, size_t size)
{
	u64 end = now_ns(CLOCK_MONOTONIC) + REQUEST_MS * 1000000ull;
	size_t n = 0;

	while (n + 1 < size) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		u64 now = now_ns(CLOCK_MONOTONIC);
		ssize_t got;

		if (now >= end || poll(&pfd, 1, (int)((end - now) / 1000000) + 1) <= 0)
			return -1;
		got = read(fd, buf + n, size - 1 - n);
		if (got <= 0)
			return got < 0 && errno == EINTR ? 0 : -1;
		n += got;
		buf[n] = '\0';
		if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
			return n;
	}
	return n;
}

static void write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= n;
	}
}

static void answer(int fd, void (*fill)(FILE *f, void *ctx), void *ctx)
{
	struct timeval tv = { .tv_sec = REQUEST_MS / 1000 };
	char req[4096], head[256];
	char *body = NULL;
	size_t len = 0;
	bool found;
	FILE *f;

	/* the answer's writes do not wait long for a client that reads nothing */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (read_request(fd, req, sizeof(req)) <= 0)
		return;
	found = !strncmp(req, "GET /metrics ", 13) || !strncmp(req, "GET /metrics?", 13);
	f = open_memstream(&body, &len);
	if (!f)
		return;
	if (found)
		fill(f, ctx);
	else
		fputs("not found: the agent serves /metrics\n", f);
	if (fclose(f)) {
		free(body);
		return;
	}
	snprintf(head, sizeof(head), "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
		 "Connection: close\r\n\r\n", found ? "200 OK" : "404 Not Found",
		 found ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain", len);
	write_all(fd, head, strlen(head));
	write_all(fd, body, len);
	free(body);
}

void health__serve(struct health *m, void (*fill)(FILE *f, void *ctx), void *ctx)
{
	int fd;

	while ((fd = accept4(m->fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		answer(fd, fill, ctx);
		close(fd);
	}
}

u64 health__rss_bytes(void)
{
	unsigned long long size = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%llu %llu", &size, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return rss * (u64)sysconf(_SC_PAGESIZE);
}

double health__cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}
