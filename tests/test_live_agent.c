// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf agent for real, pushing to a loopback receiver that speaks Pyroscope's push path
 * (tests/agent_receiver.py): every interval arrives as a PushRequest with the right labels
 * and a valid gzipped pprof whose rate matches a parallel record -a; a server that is down
 * is retried and does not hold the exit; a refusing one stops only its sink; SIGHUP reads
 * the configuration again. Waits are on conditions (files appearing), never fixed sleeps. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "helpers.h"
#include "profile.pb-c.h"
#include "push.pb-c.h"

TestSuite(live_agent, .fini = cleanup_tmpdir, .timeout = 120);

struct receiver {
	pid_t pid;
	int port;
	char dir[PATH_MAX];
};

static void start_receiver(struct receiver *rc, const char *name, int status)
{
	char cmd[PATH_MAX * 2], path[PATH_MAX + 32];
	FILE *f;

	snprintf(rc->dir, sizeof(rc->dir), "%s/%s", tmpdir(), name);
	cr_assert_eq(mkdir(rc->dir, 0755), 0);
	snprintf(cmd, sizeof(cmd), "exec python3 tests/agent_receiver.py %s %d", rc->dir, status);
	rc->pid = spawn(cmd);
	snprintf(path, sizeof(path), "%s/port", rc->dir);
	cr_assert(wait_file_contains(path, "\n", 15000), "the receiver did not start");
	f = fopen(path, "r");
	cr_assert(f && fscanf(f, "%d", &rc->port) == 1);
	fclose(f);
}

static bool body_path(const struct receiver *rc, int i, char *path, size_t size)
{
	struct stat st;

	snprintf(path, size, "%s/%04d.body", rc->dir, i);
	return !stat(path, &st);
}

/* up to timeout_ms for the receiver to have n requests */
static bool wait_bodies(const struct receiver *rc, int n, int timeout_ms)
{
	char path[PATH_MAX + 32];

	for (int waited = 0; waited < timeout_ms; waited += 20) {
		if (body_path(rc, n, path, sizeof(path)))
			return true;
		usleep(20000);
	}
	return false;
}

static int nr_bodies(const struct receiver *rc)
{
	char path[PATH_MAX + 32];
	int n = 0;

	while (body_path(rc, n + 1, path, sizeof(path)))
		n++;
	return n;
}

static pid_t start_agent(const char *args, const char *err_path)
{
	char cmd[PATH_MAX * 6];

	snprintf(cmd, sizeof(cmd), "exec %s agent %s 2>%s", hsbpf_bin(), args, err_path);
	return spawn(cmd);
}

/* SIGTERM and the exit status */
static int stop_agent(pid_t pid)
{
	int status;

	kill(pid, SIGTERM);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void slurp_file(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, size - 1, f) : 0;

	buf[n] = '\0';
	if (f)
		fclose(f);
}

static u8 *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	u8 *buf;
	long n;

	cr_assert(f, "%s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	cr_assert(buf && fread(buf, 1, n, f) == (size_t)n);
	fclose(f);
	*len = n;
	return buf;
}

static u8 *gunzip(const u8 *in, size_t len, size_t *out_len)
{
	size_t cap = 1 << 16;
	u8 *out = malloc(cap);
	z_stream z = { .next_in = (u8 *)in, .avail_in = len };
	int rc;

	cr_assert(out);
	cr_assert_eq(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
	do {
		if (z.total_out == cap) {
			cap *= 2;
			out = realloc(out, cap);
			cr_assert(out);
		}
		z.next_out = out + z.total_out;
		z.avail_out = cap - z.total_out;
		rc = inflate(&z, Z_NO_FLUSH);
	} while (rc == Z_OK);
	cr_assert_eq(rc, Z_STREAM_END, "the raw profile is not gzip");
	*out_len = z.total_out;
	inflateEnd(&z);
	return out;
}

struct pushed {
	char labels[1024];	/* "name=value;" for each series label */
	u64 samples;		/* value[0] over all samples */
	u64 pid_samples;	/* ... of the samples whose pid label is the one asked for */
	u64 time_ns, duration_ns;
	bool has_func;		/* the function asked for is in the string table */
};

/* request i: its path and content type, and its one series decoded */
static void decode(const struct receiver *rc, int i, s64 pid, const char *func,
		   struct pushed *out)
{
	char path[PATH_MAX + 32], meta[512];
	Perftools__Profiles__Profile *prof;
	Push__V1__PushRequest *req;
	Push__V1__RawSample *raw;
	size_t len, plen;
	u8 *body, *pb;
	s64 pid_key = -1;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "%s/%04d.meta", rc->dir, i);
	slurp_file(path, meta, sizeof(meta));
	cr_expect_str_eq(meta, "/push.v1.PusherService/Push\napplication/proto\n");
	cr_assert(body_path(rc, i, path, sizeof(path)));
	body = read_all(path, &len);
	req = push__v1__push_request__unpack(NULL, len, body);
	cr_assert(req, "request %d is not a PushRequest", i);
	cr_assert_eq(req->n_series, 1);
	for (size_t l = 0; l < req->series[0]->n_labels; l++) {
		size_t n = strlen(out->labels);

		snprintf(out->labels + n, sizeof(out->labels) - n, "%s=%s;",
			 req->series[0]->labels[l]->name, req->series[0]->labels[l]->value);
	}
	cr_assert_eq(req->series[0]->n_samples, 1);
	raw = req->series[0]->samples[0];
	cr_expect_gt(strlen(raw->id), 0);
	pb = gunzip(raw->raw_profile.data, raw->raw_profile.len, &plen);
	prof = perftools__profiles__profile__unpack(NULL, plen, pb);
	cr_assert(prof, "request %d's raw profile is not a pprof", i);
	cr_expect_gt(prof->time_nanos, 0);
	out->duration_ns = prof->duration_nanos;
	out->time_ns = prof->time_nanos;
	for (size_t s = 0; s < prof->n_string_table; s++) {
		if (!strcmp(prof->string_table[s], "pid"))
			pid_key = s;
		if (func && !strcmp(prof->string_table[s], func))
			out->has_func = true;
	}
	for (size_t s = 0; s < prof->n_sample; s++) {
		Perftools__Profiles__Sample *smp = prof->sample[s];

		cr_assert_geq(smp->n_value, 1);
		out->samples += smp->value[0];
		for (size_t l = 0; l < smp->n_label; l++)
			if (smp->label[l]->key == pid_key && smp->label[l]->num == pid)
				out->pid_samples += smp->value[0];
	}
	perftools__profiles__profile__free_unpacked(prof, NULL);
	push__v1__push_request__free_unpacked(req, NULL);
	free(pb);
	free(body);
}

/* the number after key in text, -1 if none */
static long long number_after(const char *text, const char *key)
{
	const char *s = strstr(text, key);

	return s ? strtoll(s + strlen(key), NULL, 10) : -1;
}

Test(live_agent, every_interval_arrives_with_labels_and_a_valid_pprof)
{
	char args[PATH_MAX * 2], err_path[PATH_MAX], err[8192], cmd[PATH_MAX + 32], host[65] = "";
	u64 agent_samples = 0, agent_ns = 0;
	struct receiver rc;
	struct profile *p;
	bool func = false;
	double agent_rate, record_rate, tol;
	pid_t w, a, hot;
	int n, status;

	gethostname(host, sizeof(host) - 1);
	start_receiver(&rc, "recv", 200);
	snprintf(cmd, sizeof(cmd), "exec %s 30", fixture("hot7030"));
	w = spawn(cmd);
	hot = wait_descendant(w, "hot7030", 1);
	snprintf(err_path, sizeof(err_path), "%s/agent.err", tmpdir());
	snprintf(args, sizeof(args), "--server http://127.0.0.1:%d/ -F 99 --interval 1 --service-name "
		 "test-svc --label team=perf", rc.port);
	a = start_agent(args, err_path);
	cr_assert(wait_bodies(&rc, 1, 20000), "no profile pushed");
	/* a recording of the same machine meanwhile, at the same rate */
	p = record_profile("-a -F 99 -d 4");
	cr_assert(wait_bodies(&rc, nr_bodies(&rc) + 1, 20000));
	status = stop_agent(a);
	reap(w);
	slurp_file(err_path, err, sizeof(err));
	cr_assert_eq(status, 0, "%s", err);
	n = nr_bodies(&rc);
	cr_expect_geq(n, 5, "%s", err);
	cr_expect_eq(number_after(err, "; pushed "), n, "the last interval is sent at exit: %s", err);
	cr_expect_eq(number_after(err, "failed tries "), 0, "%s", err);
	for (int i = 1; i <= n; i++) {
		struct pushed got;
		char want[256];

		decode(&rc, i, hot, "work_70", &got);
		snprintf(want, sizeof(want), "service_name=test-svc;__name__=process_cpu;host=%s;team=perf;", host);
		cr_expect_str_eq(got.labels, want, "request %d", i);
		cr_expect_gt(got.samples, 0, "request %d", i);
		func |= got.has_func;
		if (i > 1 && i < n)
			cr_expect(got.duration_ns > 500000000 && got.duration_ns < 2000000000,
				  "request %d lasted %llu ns", i, (unsigned long long)got.duration_ns);
		/* the intervals within the recording's time rate the hot process as it does */
		if (got.time_ns >= p->meta.start_realtime_ns &&
		    got.time_ns + got.duration_ns <= p->meta.start_realtime_ns + p->meta.duration_ns) {
			agent_samples += got.pid_samples;
			agent_ns += got.duration_ns;
		}
	}
	cr_expect(func, "work_70 is in a pushed profile's stacks");
	cr_assert_gt(agent_ns, 0, "no interval within the recording");
	agent_rate = agent_samples / (agent_ns / 1e9);
	record_rate = samples_in_pid(p, hot) / (p->meta.duration_ns / 1e9);
	cr_assert_gt(samples_in_pid(p, hot), 0, "record saw no hot7030");
	cr_assert_gt(agent_samples, 0, "the agent saw no hot7030");
	/* the same rate within 25%, or 4 standard deviations of the smaller count when the
	 * other core's load leaves hot7030 few samples */
	tol = fmax(0.25, 4 / sqrt((double)(agent_samples < samples_in_pid(p, hot) ? agent_samples :
					   samples_in_pid(p, hot))));
	cr_expect(fabs(agent_rate / record_rate - 1) <= tol,
		  "hot7030: %.1f samples/s pushed (%llu), %.1f recorded (%llu)", agent_rate,
		  (unsigned long long)agent_samples, record_rate,
		  (unsigned long long)samples_in_pid(p, hot));
	profile__free(p);
	reap(rc.pid);
}

Test(live_agent, a_server_down_is_retried_and_the_exit_does_not_hang)
{
	char args[PATH_MAX * 2];
	struct receiver rc;
	struct timespec t0, t1;
	struct run_result r;
	double took;

	/* a port nothing listens on any more */
	start_receiver(&rc, "gone", 200);
	reap(rc.pid);
	snprintf(args, sizeof(args), "--server http://127.0.0.1:%d --interval 1 -n 4 --no-call-graph",
		 rc.port);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	run(&r, "%s agent %s", hsbpf_bin(), args);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	took = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	const char *err = r.err;

	cr_assert_eq(r.status, 0, "%s", err);
	cr_expect(strstr(err, "trying again with backoff"), "%s", err);
	cr_expect_geq(number_after(err, "failed tries "), 2, "each try counted: %s", err);
	cr_expect_eq(number_after(err, "; pushed "), 0, "%s", err);
	cr_expect_eq(number_after(err, "dropped "), 4, "%s", err);
	cr_expect_lt(took, 20, "the exit waited %.1f s", took);
}

Test(live_agent, a_refusing_server_stops_its_sink_and_the_folder_goes_on)
{
	char args[PATH_MAX * 3], dir[PATH_MAX];
	struct receiver rc;
	struct run_result r;

	start_receiver(&rc, "refuse", 400);
	snprintf(dir, sizeof(dir), "%s/out", tmpdir());
	snprintf(args, sizeof(args), "--server http://127.0.0.1:%d --output-dir %s --interval 1 -n 3 "
		 "--no-call-graph", rc.port, dir);
	run(&r, "%s agent %s", hsbpf_bin(), args);
	reap(rc.pid);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "HTTP 400") && strstr(r.err, "test refusal"), "%s", r.err);
	cr_expect(strstr(r.err, "(refused)"), "%s", r.err);
	cr_expect_eq(nr_bodies(&rc), 1, "no request after the refusal");
	cr_expect_eq(number_after(r.err, "samples; "), 3, "3 files written: %s", r.err);
	run(&r, "ls %s | grep -c 'pb.gz$'", dir);
	cr_expect_eq(atoi(r.out), 3);
}

static void write_text(const char *path, const char *text)
{
	write_bytes(path, text, strlen(text));
}

Test(live_agent, sighup_reads_the_config_again_and_keeps_it_when_broken)
{
	char args[PATH_MAX * 2], err_path[PATH_MAX], conf[PATH_MAX], err[8192];
	struct receiver rc;
	struct pushed got;
	bool two = false;
	pid_t a;
	int seen, status;

	start_receiver(&rc, "hup", 200);
	snprintf(conf, sizeof(conf), "%s/agent.conf", tmpdir());
	snprintf(err_path, sizeof(err_path), "%s/agent.err", tmpdir());
	write_text(conf, "# test\ninterval = 1\nlabel.stage = one\n");
	snprintf(args, sizeof(args), "--config %s --server http://127.0.0.1:%d --no-call-graph", conf, rc.port);
	a = start_agent(args, err_path);
	cr_assert(wait_bodies(&rc, 1, 20000), "no profile pushed");
	decode(&rc, 1, -1, NULL, &got);
	cr_expect(strstr(got.labels, "stage=one;"), "%s", got.labels);
	write_text(conf, "interval = 1\nlabel.stage = two\n");
	kill(a, SIGHUP);
	cr_assert(wait_file_contains(err_path, "again", 15000), "no reload said");
	seen = nr_bodies(&rc);
	cr_assert(wait_bodies(&rc, seen + 2, 20000));
	decode(&rc, seen + 2, -1, NULL, &got);
	two = strstr(got.labels, "stage=two;") != NULL;
	cr_expect(two, "after SIGHUP: %s", got.labels);
	write_text(conf, "interval = 1\nlabel.stage = three\nbroken\n");
	kill(a, SIGHUP);
	cr_assert(wait_file_contains(err_path, "keeping the configuration", 15000));
	seen = nr_bodies(&rc);
	cr_assert(wait_bodies(&rc, seen + 2, 20000));
	decode(&rc, seen + 2, -1, NULL, &got);
	cr_expect(strstr(got.labels, "stage=two;"), "the broken file is not used: %s", got.labels);
	status = stop_agent(a);
	slurp_file(err_path, err, sizeof(err));
	cr_expect_eq(status, 0, "%s", err);
	cr_expect(strstr(err, "agent.conf:3: expected key = value"), "%s", err);
	reap(rc.pid);
}

/* the debug lines of the agent's intervals: their samples and the stack maps' entries after
 * each drain */
static int interval_lines(const char *err, u64 *samples, u64 *entries, int max)
{
	const char *s = err;
	int n = 0;

	while (n < max && (s = strstr(s, "debug: interval "))) {
		unsigned long long i, nr, bytes, e;

		if (sscanf(s, "debug: interval %llu: %llu samples, pprof %llu bytes, %llu stack map entries",
			   &i, &nr, &bytes, &e) == 4) {
			samples[n] = nr;
			entries[n++] = e;
		}
		s++;
	}
	return n;
}

Test(live_agent, many_intervals_keep_the_stack_maps_bounded_and_add_up)
{
	char args[PATH_MAX * 2], err_path[PATH_MAX], err[65536], cmd[PATH_MAX + 64];
	u64 samples[64], entries[64], total = 0, max_samples = 0, max_entries = 0;
	struct receiver rc;
	struct profile *p;
	pid_t churn, w, a;
	double agent_rate, record_rate, tol;
	u64 agent_samples = 0, agent_ns = 0;
	int n, bodies;

	start_receiver(&rc, "recv", 200);
	snprintf(cmd, sizeof(cmd), "exec %s 60", fixture("hot7030"));
	w = spawn(cmd);
	wait_descendant(w, "hot7030", 1);
	/* new processes all the time: new stacks in every interval */
	churn = spawn("exec sh -c 'while :; do /bin/true; done'");
	snprintf(err_path, sizeof(err_path), "%s/agent.err", tmpdir());
	snprintf(args, sizeof(args), "-v --server http://127.0.0.1:%d/ -F 99 --interval 1", rc.port);
	a = start_agent(args, err_path);
	cr_assert(wait_bodies(&rc, 2, 30000), "no profile pushed");
	p = record_profile("-a -F 99 -d 4");
	cr_assert(wait_bodies(&rc, nr_bodies(&rc) + 3, 30000));
	cr_assert_eq(stop_agent(a), 0);
	kill(churn, SIGKILL);
	reap(churn);
	reap(w);
	slurp_file(err_path, err, sizeof(err));
	n = interval_lines(err, samples, entries, 64);
	cr_assert_geq(n, 6, "%s", err);
	for (int i = 0; i < n; i++) {
		total += samples[i];
		max_samples = samples[i] > max_samples ? samples[i] : max_samples;
		max_entries = entries[i] > max_entries ? entries[i] : max_entries;
	}
	/* after a drain the maps hold what the kernel counted since the switch (a sample is
	 * one key and at most two stacks), never the run's history */
	cr_expect_leq(max_entries, 3 * max_samples + 64, "%llu entries, %llu samples an interval at most",
		      (unsigned long long)max_entries, (unsigned long long)max_samples);
	cr_expect_lt(max_entries, total, "%llu entries, %llu samples in all",
		     (unsigned long long)max_entries, (unsigned long long)total);
	/* the intervals within the recording count the machine's samples at its rate */
	bodies = nr_bodies(&rc);
	for (int i = 1; i <= bodies; i++) {
		struct pushed got;

		decode(&rc, i, -1, NULL, &got);
		if (got.time_ns >= p->meta.start_realtime_ns &&
		    got.time_ns + got.duration_ns <= p->meta.start_realtime_ns + p->meta.duration_ns) {
			agent_samples += got.samples;
			agent_ns += got.duration_ns;
		}
	}
	cr_assert_gt(agent_ns, 0, "no interval within the recording");
	agent_rate = agent_samples / (agent_ns / 1e9);
	record_rate = p->stats.samples / (p->meta.duration_ns / 1e9);
	tol = fmax(0.1, 4 / sqrt((double)agent_samples));
	cr_expect(fabs(agent_rate / record_rate - 1) <= tol, "%.1f samples/s pushed (%llu), %.1f recorded",
		  agent_rate, (unsigned long long)agent_samples, record_rate);
	profile__free(p);
	reap(rc.pid);
}
