// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* debuginfod: a stripped fixture whose debug file only a real debuginfod server (started
 * here on a free port, and waited for until it serves the file) has: its symbols and source
 * lines appear only through the server; a server that never answers costs a bounded wait
 * and a clear message; a server that answers with another program's file leaves nothing
 * behind, so that a right server is asked the next time. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "symbols/build_id.h"
#include "symbols/buildid_cache.h"
#include "helpers.h"

static char prog[PATH_MAX], data[PATH_MAX + 16], hex[2 * BUILD_ID_MAX + 1];
static u8 id[BUILD_ID_MAX];
static size_t id_len;

/* a stripped copy of hot7030, its debug file alone in srv/, and a recording of it */
static void setup(void)
{
	struct run_result r;
	char cache[PATH_MAX + 16];

	snprintf(cache, sizeof(cache), "%s/cache", tmpdir());
	setenv("HSBPF_BUILDID_DIR", cache, 1);
	unsetenv("HSBPF_NO_BUILDID_CACHE");
	snprintf(cache, sizeof(cache), "%s/client", tmpdir());
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	unsetenv("DEBUGINFOD_URLS");
	snprintf(prog, sizeof(prog), "%s/stripped", tmpdir());
	snprintf(data, sizeof(data), "%s/p.data", tmpdir());
	cr_assert_eq(run(&r, "mkdir %s/srv && objcopy --only-keep-debug %s %s/srv/prog.debug && "
			 "strip -o %s %s", tmpdir(), fixture("hot7030"), tmpdir(), prog,
			 fixture("hot7030")), 0, "%s", r.err);
	cr_assert_eq(build_id__read(prog, id, sizeof(id), &id_len), 0);
	build_id__hex(id, id_len, hex, sizeof(hex));
	run(&r, "%s record -F 499 -o %s -- %s 0.5", hsbpf_bin(), data, prog);
	cr_assert_eq(r.status, 0, "record failed: %s", r.err);
}

TestSuite(debuginfod, .init = setup, .fini = cleanup_tmpdir, .timeout = 90);

/* a loopback socket listening on a port the kernel chose: its fd and port */
static int listen_loopback(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(listen(fd, 8), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* the HTTP status of GET path on 127.0.0.1:port, 0 if it does not answer */
static int http_status(int port, const char *path)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), status = 0;
	struct timeval tv = { .tv_sec = 2 };
	char buf[256];
	ssize_t n;

	if (fd < 0)
		return 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (!connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		snprintf(buf, sizeof(buf), "GET %s HTTP/1.0\r\n\r\n", path);
		if (write(fd, buf, strlen(buf)) == (ssize_t)strlen(buf) &&
		    (n = read(fd, buf, sizeof(buf) - 1)) > 0) {
			buf[n] = 0;
			sscanf(buf, "HTTP/%*s %d", &status);
		}
	}
	close(fd);
	return status;
}

static void report(struct run_result *r, const char *extra)
{
	run(r, "%s report -i %s --sort sym,line %s", hsbpf_bin(), data, extra);
	cr_assert_eq(r->status, 0, "report failed: %s", r->err);
}

/* a real debuginfod serving srv/, once it serves our debug file: its pid and port */
static pid_t start_debuginfod(int *port_out)
{
	char cmd[2 * PATH_MAX], path[128];
	pid_t server;
	int fd, port, status = 0;

	/* a port that was free a moment ago: debuginfod cannot take a socket from us */
	fd = listen_loopback(&port);
	close(fd);
	snprintf(cmd, sizeof(cmd), "exec debuginfod -F -p %d -d %s/db.sqlite -t 0 -g 0 %s/srv "
		 "2>%s/server.log", port, tmpdir(), tmpdir(), tmpdir());
	server = spawn(cmd);
	/* until it serves the file (it scans srv/ after it starts listening); 60 s at most */
	snprintf(path, sizeof(path), "/buildid/%s/debuginfo", hex);
	for (time_t end = time(NULL) + 60; time(NULL) < end && status != 200;) {
		status = http_status(port, path);
		if (status != 200)
			usleep(20000);
	}
	cr_assert_eq(status, 200, "debuginfod on port %d does not serve %s (%d)", port, path, status);
	*port_out = port;
	return server;
}

Test(debuginfod, lines_and_symbols_only_through_the_server)
{
	char url[64];
	struct run_result r;
	pid_t server;
	int port;

	/* alone: the stripped program has no names */
	report(&r, "");
	cr_expect(!strstr(r.out, "work_70") && !strstr(r.out, "hot7030.c:"), "named without a "
		  "server:\n%s", r.out);

	server = start_debuginfod(&port);
	snprintf(url, sizeof(url), "--debuginfod http://127.0.0.1:%d", port);
	report(&r, url);
	reap(server);
	cr_expect(strstr(r.out, "work_70") && strstr(r.out, "hot7030.c:"), "not named through the "
		  "server:\n%s\n%s", r.out, r.err);
	cr_expect(strstr(r.err, "debuginfod: fetched the debug file of") && strstr(r.err, hex),
		  "the report does not say what it fetched: %s", r.err);

	/* kept: named again with the server gone, and without asking */
	report(&r, "");
	cr_expect(strstr(r.out, "hot7030.c:"), "not kept in the build-id cache:\n%s", r.out);
	cr_expect(!strstr(r.err, "fetched"), "fetched again: %s", r.err);
}

Test(debuginfod, a_server_that_never_answers_costs_a_bounded_wait)
{
	struct run_result r;
	char url[64];
	int port, fd = listen_loopback(&port);	/* connections queue up, nothing is answered */

	setenv("DEBUGINFOD_TIMEOUT", "1", 1);
	setenv("DEBUGINFOD_RETRY_LIMIT", "0", 1);
	snprintf(url, sizeof(url), "--debuginfod http://127.0.0.1:%d", port);
	report(&r, url);
	close(fd);
	cr_expect(strstr(r.err, "sent nothing for 1 s (DEBUGINFOD_TIMEOUT)"), "no clear message: %s",
		  r.err);
	cr_expect(strstr(r.out, "[unknown]") && !strstr(r.out, "hot7030.c:"), "%s", r.out);

	/* refused at once: said as such */
	report(&r, "--debuginfod http://127.0.0.1:1");
	cr_expect(strstr(r.err, "Connection refused"), "%s", r.err);
}

/* a server that answers every request with the file at path (another program): its pid */
static pid_t serve_wrong_file(const char *path, int *port)
{
	int lfd = listen_loopback(port);
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid) {
		close(lfd);
		return pid;
	}
	for (;;) {
		int c = accept(lfd, NULL, NULL), fd = open(path, O_RDONLY);
		char buf[4096], head[128];
		struct stat st;
		ssize_t n;
		size_t got = 0;

		if (c < 0 || fd < 0 || fstat(fd, &st))
			_exit(1);
		/* the request, to its blank line */
		while (got < sizeof(buf) - 1 && (n = read(c, buf + got, sizeof(buf) - 1 - got)) > 0) {
			got += n;
			buf[got] = 0;
			if (strstr(buf, "\r\n\r\n"))
				break;
		}
		n = snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %lld\r\n"
			     "Connection: close\r\n\r\n", (long long)st.st_size);
		if (write(c, head, n) != n)
			_exit(1);
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			if (write(c, buf, n) != n)
				break;
		close(fd);
		close(c);
	}
}

/* the files under dir whose path holds what, recursively (find's count) */
static int files_named(const char *dir, const char *what)
{
	struct run_result r;

	run(&r, "find %s -type f -path '*%s*' | wc -l", dir, what);
	return atoi(r.out);
}

Test(debuginfod, a_server_answering_with_a_wrong_file_leaves_nothing)
{
	char url[64], want[PATH_MAX + 256], cached[PATH_MAX], client[PATH_MAX + 16];
	struct run_result r;
	pid_t server;
	u64 added;
	int port, fd;

	snprintf(client, sizeof(client), "%s/client", tmpdir());
	server = serve_wrong_file(fixture("divloop"), &port);
	snprintf(url, sizeof(url), "--debuginfod http://127.0.0.1:%d", port);
	report(&r, url);
	reap(server);
	snprintf(want, sizeof(want), "answered the build-id %s of '%s' with a wrong file (build-id ",
		 hex, prog);
	cr_expect(strstr(r.err, want) && strstr(r.err, "not used, not kept"), "not said: %s", r.err);
	cr_expect(!strstr(r.err, "fetched the"), "%s", r.err);
	cr_expect(!strstr(r.out, "hot7030.c:"), "%s", r.out);
	cr_expect_eq(buildid_cache__find(getenv("HSBPF_BUILDID_DIR"), id, id_len, BUILDID_CACHE_DEBUG,
					 cached, sizeof(cached)), -ENOENT, "the wrong file was kept");
	cr_expect_eq(files_named(client, hex), 0, "the client kept the wrong file");

	/* a later run with a right server fetches the right one, even past a wrong file an
	 * older hsbpf kept */
	fd = open(fixture("divloop"), O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(buildid_cache__add_fd(getenv("HSBPF_BUILDID_DIR"), id, id_len, BUILDID_CACHE_DEBUG,
					   fd, &added), 0);
	close(fd);
	server = start_debuginfod(&port);
	snprintf(url, sizeof(url), "--debuginfod http://127.0.0.1:%d", port);
	report(&r, url);
	reap(server);
	cr_expect(strstr(r.err, "build-id cache: '") && strstr(r.err, ", not ") &&
		  strstr(r.err, "removed"), "the wrong file kept earlier not named: %s", r.err);
	cr_expect(strstr(r.err, "debuginfod: fetched the debug file of") && strstr(r.out, "hot7030.c:"),
		  "the right file not fetched after a wrong one:\n%s\n%s", r.out, r.err);
	cr_expect_eq(buildid_cache__find(getenv("HSBPF_BUILDID_DIR"), id, id_len, BUILDID_CACHE_DEBUG,
					 cached, sizeof(cached)), 0);
}
