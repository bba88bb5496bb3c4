// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The agent's /metrics endpoint (user/agent/health.c): a client's GET /metrics is answered
 * with what the caller writes, other paths with 404, a bad address refused; the process's
 * RSS and CPU time are there. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "agent/health.h"

TestSuite(health);

static void fill(FILE *f, void *ctx)
{
	fprintf(f, "hsbpf_agent_test %d\n", *(int *)ctx);
}

/* a request to the endpoint, answered in this thread; the reply in buf */
static void get(struct health *m, const char *request, char *buf, size_t size)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(health__port(m)) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), value = 42;
	size_t n = 0;
	ssize_t got;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert(fd >= 0);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0, "%s", strerror(errno));
	cr_assert_eq(write(fd, request, strlen(request)), (ssize_t)strlen(request));
	health__serve(m, fill, &value);
	while (n + 1 < size && (got = read(fd, buf + n, size - 1 - n)) > 0)
		n += got;
	buf[n] = '\0';
	close(fd);
}

Test(health, get_metrics_is_answered_with_the_callers_text)
{
	struct health *m = health__listen("127.0.0.1:0");
	char reply[4096];

	cr_assert(m);
	cr_assert_gt(health__port(m), 0);
	get(m, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", reply, sizeof(reply));
	cr_expect(!strncmp(reply, "HTTP/1.1 200 OK\r\n", 17), "%s", reply);
	cr_expect(strstr(reply, "Content-Type: text/plain; version=0.0.4"), "%s", reply);
	cr_expect(strstr(reply, "Content-Length: 20\r\n"), "%s", reply);
	cr_expect(strstr(reply, "\r\n\r\nhsbpf_agent_test 42\n"), "%s", reply);
	get(m, "GET /other HTTP/1.1\r\n\r\n", reply, sizeof(reply));
	cr_expect(!strncmp(reply, "HTTP/1.1 404", 12), "%s", reply);
	/* nothing waiting: serve returns at once */
	health__serve(m, fill, &(int){ 0 });
	health__free(m);
}

Test(health, bad_addresses_are_refused)
{
	static const char *bad[] = { "", "127.0.0.1:", "nohost.invalid.:80", "127.0.0.1:99999" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_null(health__listen(bad[i]), "%s", bad[i]);
}

Test(health, the_process_has_memory_and_cpu_time)
{
	volatile double x = 0;

	for (int i = 0; i < 1000000; i++)
		x += i;
	cr_expect_gt(health__rss_bytes(), 1 << 20);
	cr_expect_geq(health__cpu_seconds(), 0);
}
