// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf agent for real, pushing to a loopback receiver that speaks Pyroscope's push path and
 * OTLP's (tests/agent_receiver.py): every interval arrives as a PushRequest with the right
 * labels and a valid gzipped pprof whose rate matches a parallel record -a, and as an OTLP
 * request that Debian's protoc decodes against proto/otlp.proto with the same counts; a
 * server that is down, failing (500, 429), slow or closing mid-reply is retried, its
 * profiles spooled on disk and sent in order when it is back, the loss past the spool's
 * bound counted, and the exit is not held; a refusing one, or one whose TLS certificate is
 * not trusted, stops only its sink; a full output disk is counted; /metrics is scraped;
 * SIGHUP reads the configuration again; the cgroup followed removed ends the agent after its
 * last interval; a stepped wall clock moves no interval and the folder keeps the newest
 * profiles. Waits are on conditions (files appearing), never
 * fixed sleeps. */
#include <bpf/bpf.h>
#include <criterion/criterion.h>
#include <dirent.h>
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
#include "hsbpf.h"
#include "agent/outdir.h"
#include "record/cgroup.h"
#include "symbols/build_id.h"
#include "otlp.pb-c.h"
#include "profile.pb-c.h"
#include "push.pb-c.h"

TestSuite(live_agent, .fini = cleanup_tmpdir, .timeout = 120);

struct receiver {
	pid_t pid;
	int port;
	char dir[PATH_MAX];
};

/* a receiver answering status, in tmpdir()/name (made unless it is there: a restart),
 * with more of agent_receiver.py's options */
static void start_receiver_with(struct receiver *rc, const char *name, int status, const char *more)
{
	char cmd[PATH_MAX * 3], path[PATH_MAX + 32];
	FILE *f;

	snprintf(rc->dir, sizeof(rc->dir), "%s/%s", tmpdir(), name);
	cr_assert(!mkdir(rc->dir, 0755) || errno == EEXIST);
	snprintf(path, sizeof(path), "%s/port", rc->dir);
	unlink(path);
	snprintf(cmd, sizeof(cmd), "exec /usr/bin/python3.11 tests/agent_receiver.py %s %d %s", rc->dir,
		 status, more);
	rc->pid = spawn(cmd);
	snprintf(path, sizeof(path), "%s/port", rc->dir);
	cr_assert(wait_file_contains(path, "\n", 15000), "the receiver did not start");
	f = fopen(path, "r");
	cr_assert(f && fscanf(f, "%d", &rc->port) == 1);
	fclose(f);
}

static void start_receiver(struct receiver *rc, const char *name, int status)
{
	start_receiver_with(rc, name, status, "");
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

/* a gzipped pprof's times and counts (out's labels left alone) */
static void decode_pprof(const u8 *gz, size_t len, s64 pid, const char *func, struct pushed *out)
{
	Perftools__Profiles__Profile *prof;
	s64 pid_key = -1;
	size_t plen;
	u8 *pb;

	pb = gunzip(gz, len, &plen);
	prof = perftools__profiles__profile__unpack(NULL, plen, pb);
	cr_assert(prof, "not a pprof");
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
	free(pb);
}

/* request i: its path and content type, and its one series decoded */
static void decode(const struct receiver *rc, int i, s64 pid, const char *func,
		   struct pushed *out)
{
	char path[PATH_MAX + 32], meta[512];
	Push__V1__PushRequest *req;
	Push__V1__RawSample *raw;
	size_t len;
	u8 *body;

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
	decode_pprof(raw->raw_profile.data, raw->raw_profile.len, pid, func, out);
	push__v1__push_request__free_unpacked(req, NULL);
	free(body);
}


/* the number after key in text, -1 if none */
static long long number_after(const char *text, const char *key)
{
	const char *s = strstr(text, key);

	return s ? strtoll(s + strlen(key), NULL, 10) : -1;
}

#define INTERVAL_NS 1000000000ull	/* --interval 1 */

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

Test(live_agent, every_interval_arrives_with_labels_and_a_valid_pprof)
{
	char args[PATH_MAX * 2], err_path[PATH_MAX], err[8192], cmd[PATH_MAX + 32], host[65] = "";
	u64 agent_samples = 0, agent_ns = 0, mid[64], mid_end = 0, median;
	u64 over_samples = 0, over_ns = 0;
	struct receiver rc;
	struct profile *p;
	bool func = false;
	size_t nr_mid = 0;
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
	if (!wait_bodies(&rc, nr_bodies(&rc) + 1, 20000)) {
		slurp_file(err_path, err, sizeof(err));
		cr_assert_fail("no interval pushed after the recording (%d so far): %s", nr_bodies(&rc), err);
	}
	/* at least four whole intervals between the first and the last */
	cr_assert(wait_bodies(&rc, 6, 20000));
	status = stop_agent(a);
	reap(w);
	slurp_file(err_path, err, sizeof(err));
	cr_assert_eq(status, 0, "%s", err);
	n = nr_bodies(&rc);
	cr_expect_geq(n, 6, "%s", err);
	cr_assert_leq(n, 64, "%s", err);
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
		/* the first lasts from the start, the last until the exit: the others in between */
		if (i > 1 && i < n) {
			if (nr_mid)
				cr_expect(llabs((long long)(got.time_ns - mid_end)) <= (long long)(INTERVAL_NS / 10),
					  "request %d starts %lld ns away from the end of the one before", i,
					  (long long)(got.time_ns - mid_end));
			mid[nr_mid++] = got.duration_ns;
			mid_end = got.time_ns + got.duration_ns;
		}
		/* the intervals within the recording's time rate the hot process as it does */
		if (got.time_ns >= p->meta.start_realtime_ns &&
		    got.time_ns + got.duration_ns <= p->meta.start_realtime_ns + p->meta.duration_ns) {
			agent_samples += got.pid_samples;
			agent_ns += got.duration_ns;
		}
		if (got.time_ns < p->meta.start_realtime_ns + p->meta.duration_ns &&
		    got.time_ns + got.duration_ns > p->meta.start_realtime_ns) {
			over_samples += got.pid_samples;
			over_ns += got.duration_ns;
		}
	}
	/* at load 9 the agent's intervals came late enough that none fell wholly within the 4 s
	 * recording: then those that overlap it (hot7030 runs steadily, its rate is the same
	 * over a little more time) */
	if (!agent_ns) {
		agent_samples = over_samples;
		agent_ns = over_ns;
	}
	cr_expect(func, "work_70 is in a pushed profile's stacks");
	/* the schedule: an interval the machine's load delays is followed by a shorter one (the
	 * agent keeps its times), so the median is the interval however loaded the machine is */
	qsort(mid, nr_mid, sizeof(*mid), cmp_u64);
	median = nr_mid % 2 ? mid[nr_mid / 2] : (mid[nr_mid / 2 - 1] + mid[nr_mid / 2]) / 2;
	cr_expect(fabs((double)median / INTERVAL_NS - 1) <= 0.25, "the intervals' median is %llu ns",
		  (unsigned long long)median);
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
	/* the kernel's maps hold a minute's samples: a longer interval is said not to fit surely */
	write_text(conf, "interval = 120\nlabel.stage = four\n");
	kill(a, SIGHUP);
	cr_expect(wait_file_contains(err_path, "sized at the start for 60 s", 15000),
		  "a longer interval than the maps hold, not said");
	status = stop_agent(a);
	slurp_file(err_path, err, sizeof(err));
	cr_expect_eq(status, 0, "%s", err);
	cr_expect(strstr(err, "agent.conf:3: expected key = value"), "%s", err);
	reap(rc.pid);
}

/* request i's path is OTLP's */
static bool is_otlp(const struct receiver *rc, int i)
{
	char path[PATH_MAX + 32], meta[512];

	snprintf(path, sizeof(path), "%s/%04d.meta", rc->dir, i);
	slurp_file(path, meta, sizeof(meta));
	return !strcmp(meta, "/v1development/profiles\napplication/x-protobuf\n");
}

/* what request i was answered: the status, or 0 for a connection closed */
static int answered(const struct receiver *rc, int i)
{
	char path[PATH_MAX + 32], text[32];

	snprintf(path, sizeof(path), "%s/%04d.status", rc->dir, i);
	slurp_file(path, text, sizeof(text));
	return atoi(text);
}

struct otlp_got {
	u64 samples;		/* the values over all resources */
	u64 time_ns;
	size_t resources;
	bool pid, comm, host, service;	/* resource attributes seen */
	char label[128];	/* the value of the attribute asked for, "" if none */
};

/* OTLP request i decoded with protobuf-c */
static void decode_otlp(const struct receiver *rc, int i, const char *key, struct otlp_got *got)
{
	Opentelemetry__Proto__Profiles__V1development__ExportProfilesServiceRequest *req;
	char path[PATH_MAX + 32];
	size_t len;
	u8 *body;

	memset(got, 0, sizeof(*got));
	cr_assert(body_path(rc, i, path, sizeof(path)));
	body = read_all(path, &len);
	req = opentelemetry__proto__profiles__v1development__export_profiles_service_request__unpack(NULL, len, body);
	cr_assert(req, "request %d is not an ExportProfilesServiceRequest", i);
	cr_assert(req->dictionary);
	got->resources = req->n_resource_profiles;
	for (size_t r = 0; r < req->n_resource_profiles; r++) {
		const Opentelemetry__Proto__Profiles__V1development__ResourceProfiles *rp = req->resource_profiles[r];

		for (size_t a = 0; a < rp->resource->n_attributes; a++) {
			const char *k = rp->resource->attributes[a]->key;

			got->pid |= !strcmp(k, "process.pid");
			got->comm |= !strcmp(k, "process.executable.name");
			got->host |= !strcmp(k, "host.name");
			got->service |= !strcmp(k, "service.name");
			if (key && !strcmp(k, key))
				snprintf(got->label, sizeof(got->label), "%s",
					 rp->resource->attributes[a]->value->string_value);
		}
		for (size_t sp = 0; sp < rp->n_scope_profiles; sp++)
			for (size_t p = 0; p < rp->scope_profiles[sp]->n_profiles; p++) {
				const Opentelemetry__Proto__Profiles__V1development__Profile *prof =
					rp->scope_profiles[sp]->profiles[p];

				got->time_ns = prof->time_nanos;
				for (size_t s = 0; s < prof->n_sample; s++) {
					cr_assert_eq(prof->sample[s]->n_values, 1);
					got->samples += prof->sample[s]->values[0];
					cr_assert_leq(prof->sample[s]->locations_start_index +
						      prof->sample[s]->locations_length, prof->n_location_indices);
				}
			}
	}
	opentelemetry__proto__profiles__v1development__export_profiles_service_request__free_unpacked(req, NULL);
	free(body);
}

Test(live_agent, otlp_and_pyroscope_at_once_decode_with_protoc_and_add_up)
{
	char args[PATH_MAX * 2], proto_cmd[PATH_MAX * 2];
	struct run_result r;
	struct receiver rc;
	u64 push_time[16], push_samples[16];
	int n, nr_push = 0, nr_otlp = 0, matched = 0;
	pid_t busy[2];

	start_receiver(&rc, "both", 200);
	/* two processes on the CPU in every interval, whatever else the machine runs: each
	 * interval's OTLP request has a resource per process, so at least two */
	for (int i = 0; i < 2; i++)
		busy[i] = spawn("while :; do :; done");
	snprintf(args, sizeof(args), "--server http://127.0.0.1:%d --otlp http://127.0.0.1:%d/ -F 99 "
		 "--interval 1 -n 3 --label bad-name=x", rc.port, rc.port);
	run(&r, "%s agent %s", hsbpf_bin(), args);
	for (int i = 0; i < 2; i++)
		reap(busy[i]);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "label 'bad-name=x' is not valid for Pyroscope") &&
		  strstr(r.err, "sent as 'bad_name=x'"), "%s", r.err);
	cr_expect_eq(number_after(r.err, "; pushed "), 3, "%s", r.err);
	cr_expect_eq(number_after(r.err, "; otlp sent "), 3, "%s", r.err);
	n = nr_bodies(&rc);
	cr_assert_eq(n, 6, "%s", r.err);
	for (int i = 1; i <= n; i++) {
		struct pushed got;

		if (is_otlp(&rc, i))
			continue;
		decode(&rc, i, -1, NULL, &got);
		cr_expect(strstr(got.labels, "bad_name=x;"), "%s", got.labels);
		push_time[nr_push] = got.time_ns;
		push_samples[nr_push++] = got.samples;
	}
	for (int i = 1; i <= n; i++) {
		struct otlp_got got;
		char path[PATH_MAX + 32];

		if (!is_otlp(&rc, i))
			continue;
		nr_otlp++;
		body_path(&rc, i, path, sizeof(path));
		/* Debian's protoc reads it against our copy of the definitions */
		snprintf(proto_cmd, sizeof(proto_cmd), "protoc --proto_path=proto "
			 "--decode=opentelemetry.proto.profiles.v1development.ExportProfilesServiceRequest "
			 "otlp.proto < %s | grep -o 'key: \"[a-z.-]*\"\\|aggregation_temporality: [A-Z_]*' "
			 "| sort -u", path);
		run(&r, "%s", proto_cmd);
		cr_assert_eq(r.status, 0, "protoc: %s", r.err);
		cr_expect(strstr(r.out, "key: \"host.name\"") && strstr(r.out, "key: \"service.name\"") &&
			  strstr(r.out, "key: \"process.pid\"") &&
			  strstr(r.out, "key: \"process.executable.name\"") &&
			  strstr(r.out, "key: \"bad-name\"") &&
			  strstr(r.out, "AGGREGATION_TEMPORALITY_DELTA"), "request %d: %s", i, r.out);
		decode_otlp(&rc, i, "bad-name", &got);
		cr_expect_str_eq(got.label, "x", "OTLP takes the label as it is");
		cr_expect(got.pid && got.comm && got.host && got.service);
		cr_expect_gt(got.resources, 1, "one resource per process");
		/* the same interval's pprof pushed to Pyroscope counts the same samples */
		for (int k = 0; k < nr_push; k++)
			if (push_time[k] == got.time_ns) {
				cr_expect_eq(got.samples, push_samples[k], "request %d", i);
				matched++;
			}
	}
	cr_expect_eq(nr_otlp, 3);
	cr_expect_eq(matched, 3, "each OTLP request has its Pyroscope twin");
	reap(rc.pid);
}

/* the number just before key in text, -1 if none */
static long long number_before(const char *text, const char *key)
{
	const char *s = strstr(text, key);

	if (!s)
		return -1;
	while (s > text && s[-1] >= '0' && s[-1] <= '9')
		s--;
	return strtoll(s, NULL, 10);
}

/* the requests in a spool folder */
static int spooled(const char *dir)
{
	struct dirent *d;
	DIR *dp = opendir(dir);
	int n = 0;

	while (dp && (d = readdir(dp)))
		n += strlen(d->d_name) > 4 && !strcmp(d->d_name + strlen(d->d_name) - 4, ".req");
	if (dp)
		closedir(dp);
	return n;
}

/* up to timeout_ms for cond(ctx) */
static bool wait_until(bool (*cond)(const void *ctx), const void *ctx, int timeout_ms)
{
	for (int waited = 0; waited < timeout_ms; waited += 20) {
		if (cond(ctx))
			return true;
		usleep(20000);
	}
	return cond(ctx);
}

struct spool_wait {
	const char *dir;
	int at_least, at_most;
};

static bool spool_holds(const void *ctx)
{
	const struct spool_wait *w = ctx;
	int n = spooled(w->dir);

	return n >= w->at_least && n <= w->at_most;
}

/* the requests answered 200, their OTLP times strictly increasing (sent in order); their count */
static int delivered_in_order(const struct receiver *rc)
{
	u64 last = 0;
	int n = 0;

	for (int i = 1; i <= nr_bodies(rc); i++) {
		struct otlp_got got;

		if (answered(rc, i) != 200)
			continue;
		decode_otlp(rc, i, NULL, &got);
		/* an empty interval has no profile, hence no time, to order it by */
		if (got.resources) {
			cr_expect_gt(got.time_ns, last, "request %d arrived out of order", i);
			last = got.time_ns;
		}
		n++;
	}
	return n;
}

static void write_fault(const struct receiver *rc, const char *name, const char *text)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/%s", rc->dir, name);
	if (text)
		write_text(path, text);
	else
		unlink(path);
}

Test(live_agent, a_failing_server_is_spooled_for_and_gets_everything_in_order)
{
	char args[PATH_MAX * 3], err_path[PATH_MAX], err[16384], spool[PATH_MAX + 16];
	struct spool_wait empty;
	struct receiver rc;
	long long intervals;
	pid_t a;
	int status;

	start_receiver(&rc, "failing", 200);
	write_fault(&rc, "status", "500");
	snprintf(err_path, sizeof(err_path), "%s/agent.err", tmpdir());
	snprintf(spool, sizeof(spool), "%s/spool/otlp", tmpdir());
	snprintf(args, sizeof(args), "--otlp http://127.0.0.1:%d --spool-dir %s/spool --interval 1 "
		 "--no-call-graph", rc.port, tmpdir());
	a = start_agent(args, err_path);
	cr_assert(wait_bodies(&rc, 2, 30000), "no retry");
	write_fault(&rc, "status", "429");
	cr_assert(wait_bodies(&rc, 3, 30000), "no retry after 429");
	cr_expect_geq(spooled(spool), 1, "the intervals wait on disk");
	write_fault(&rc, "status", NULL);
	/* the backoff is at most 4 s after three failures: then the spool empties */
	empty = (struct spool_wait){ spool, 0, 0 };
	cr_assert(wait_until(spool_holds, &empty, 30000), "the spool did not empty");
	status = stop_agent(a);
	slurp_file(err_path, err, sizeof(err));
	cr_assert_eq(status, 0, "%s", err);
	intervals = number_before(err, " intervals, ");
	cr_expect_eq(answered(&rc, 1), 500);
	cr_expect_eq(answered(&rc, 3), 429);
	cr_expect(strstr(err, "trying again with backoff"), "%s", err);
	cr_expect_geq(number_after(err, "failed tries "), 3, "%s", err);
	cr_expect_eq(number_after(err, "dropped "), 0, "%s", err);
	cr_expect_eq(number_after(err, "spooled "), 0, "%s", err);
	/* nothing lost: every interval taken once, in order */
	cr_expect_eq(number_after(err, "; otlp sent "), intervals, "%s", err);
	cr_expect_eq(delivered_in_order(&rc), intervals, "%s", err);
	reap(rc.pid);
}

Test(live_agent, a_server_down_for_a_while_loses_nothing_up_to_the_spool)
{
	char args[PATH_MAX * 3], err_path[PATH_MAX], err[16384], spool[PATH_MAX + 16], more[64];
	struct spool_wait some, empty;
	struct receiver rc;
	pid_t a;
	int status, port;

	/* down: nothing listens on its port */
	start_receiver(&rc, "down", 200);
	port = rc.port;
	kill(rc.pid, SIGTERM);
	reap(rc.pid);
	snprintf(err_path, sizeof(err_path), "%s/agent.err", tmpdir());
	snprintf(spool, sizeof(spool), "%s/spool/otlp", tmpdir());
	snprintf(args, sizeof(args), "--otlp http://127.0.0.1:%d --spool-dir %s/spool --interval 1 "
		 "--no-call-graph", port, tmpdir());
	a = start_agent(args, err_path);
	some = (struct spool_wait){ spool, 3, 1000 };
	cr_assert(wait_until(spool_holds, &some, 30000), "nothing spooled");
	/* back on the same port */
	snprintf(more, sizeof(more), "--port %d", port);
	start_receiver_with(&rc, "down", 200, more);
	empty = (struct spool_wait){ spool, 0, 0 };
	cr_assert(wait_until(spool_holds, &empty, 40000), "the spool did not empty");
	status = stop_agent(a);
	slurp_file(err_path, err, sizeof(err));
	cr_assert_eq(status, 0, "%s", err);
	cr_expect_geq(number_after(err, "failed tries "), 1, "%s", err);
	cr_expect_eq(number_after(err, "dropped "), 0, "%s", err);
	cr_expect_eq(number_after(err, "; otlp sent "), number_before(err, " intervals, "), "%s", err);
	cr_expect_eq(delivered_in_order(&rc), number_before(err, " intervals, "), "%s", err);
	reap(rc.pid);
}

Test(live_agent, past_the_spools_bound_the_oldest_go_counted_and_a_new_run_sends_the_rest)
{
	char args[PATH_MAX * 3], mnt[PATH_MAX], cg[PATH_MAX + 32];
	struct run_result r;
	struct receiver rc;
	long long dropped, left, sent, one;
	int port;

	start_receiver(&rc, "bound", 200);
	port = rc.port;
	kill(rc.pid, SIGTERM);
	reap(rc.pid);
	/* an empty cgroup's intervals: requests of one size whatever the machine does, so that
	 * the bound is known to hold exactly two of them (a whole machine's vary with its load) */
	cr_assert_eq(cgroup__find_mount("/proc/self/mountinfo", mnt, sizeof(mnt)), 0);
	snprintf(cg, sizeof(cg), "%s/hsbpf-spool-%d", mnt, getpid());
	cr_assert(!mkdir(cg, 0755) || errno == EEXIST, "cannot create %s: %s", cg, strerror(errno));
	snprintf(args, sizeof(args), "--otlp http://127.0.0.1:%d --spool-dir %s/one --interval 1 -n 1 "
		 "--no-call-graph --cgroup %s", port, tmpdir(), cg);
	run(&r, "%s agent %s", hsbpf_bin(), args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run(&r, "cat %s/one/otlp/*.req | wc -c", tmpdir());
	one = atoll(r.out);
	cr_assert_gt(one, 0, "no request spooled: %s", r.err);
	snprintf(args, sizeof(args), "--otlp http://127.0.0.1:%d --spool-dir %s/spool --spool-max %lld "
		 "--interval 1 -n 6 --no-call-graph --cgroup %s", port, tmpdir(), one * 5 / 2, cg);
	run(&r, "%s agent %s", hsbpf_bin(), args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	dropped = number_after(r.err, "dropped ");
	left = number_after(r.err, "spooled ");
	cr_expect_eq(dropped, 4, "%lld-byte requests, a bound of %lld: %s", one, one * 5 / 2, r.err);
	cr_expect_eq(left, 2, "%s", r.err);
	cr_expect_eq(dropped + left, 6, "every interval accounted for: %s", r.err);
	run(&r, "cat %s/spool/otlp/*.req | wc -c", tmpdir());
	cr_expect_leq(atoll(r.out), one * 5 / 2, "the bound holds");
	/* the next run, the server up: what was left goes first */
	{
		char more[64];

		snprintf(more, sizeof(more), "--port %d", port);
		start_receiver_with(&rc, "bound", 200, more);
	}
	run(&r, "%s agent %s", hsbpf_bin(), args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "in the spool") && strstr(r.err, "from an earlier run"), "%s", r.err);
	sent = number_after(r.err, "; otlp sent ");
	cr_expect_eq(sent, 6 + left, "%s", r.err);
	cr_expect_eq(delivered_in_order(&rc), sent);
	reap(rc.pid);
	remove_cgroup(cg);
}

Test(live_agent, a_slow_server_does_not_hold_the_exit_and_one_closing_mid_reply_is_retried)
{
	char args[PATH_MAX * 3], err_path[PATH_MAX], err[16384];
	struct timespec t0, t1;
	struct run_result r;
	struct receiver rc;
	long long sent;
	double took;
	pid_t a;
	int status;

	start_receiver(&rc, "slow", 200);
	write_fault(&rc, "delay", "5");
	snprintf(err_path, sizeof(err_path), "%s/agent.err", tmpdir());
	snprintf(args, sizeof(args), "--otlp http://127.0.0.1:%d --spool-dir %s/spool --interval 1 "
		 "--no-call-graph", rc.port, tmpdir());
	a = start_agent(args, err_path);
	/* the first request arrived; its answer is 5 s away */
	cr_assert(wait_bodies(&rc, 1, 30000));
	cr_assert(wait_file_contains(err_path, "interval 2:", 30000));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	status = stop_agent(a);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	took = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	slurp_file(err_path, err, sizeof(err));
	cr_assert_eq(status, 0, "%s", err);
	cr_expect_lt(took, 12, "the exit waited %.1f s", took);
	sent = number_after(err, "; otlp sent ");
	/* what the slow server did not take is still on disk for the next run */
	cr_expect_eq(sent + number_after(err, "spooled ") + number_after(err, "dropped "),
		     number_before(err, " intervals, "), "%s", err);
	cr_expect_eq(number_after(err, "dropped "), 0, "%s", err);
	reap(rc.pid);

	start_receiver(&rc, "closing", 200);
	write_fault(&rc, "close", "");
	snprintf(args, sizeof(args), "--otlp http://127.0.0.1:%d --interval 1 -n 3 --no-call-graph",
		 rc.port);
	run(&r, "%s agent %s", hsbpf_bin(), args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "trying again with backoff"), "%s", r.err);
	cr_expect_geq(number_after(r.err, "failed tries "), 2, "%s", r.err);
	cr_expect_eq(number_after(r.err, "; otlp sent "), 0, "%s", r.err);
	cr_expect_eq(number_after(r.err, "dropped "), 3, "without a spool the exit drops them, counted: %s",
		     r.err);
	cr_expect_geq(nr_bodies(&rc), 2);
	cr_expect_eq(answered(&rc, 1), 0, "closed");
	reap(rc.pid);
}

Test(live_agent, metrics_are_scraped_and_logged_each_interval)
{
	char args[PATH_MAX * 3], err_path[PATH_MAX], err[16384];
	struct run_result r;
	pid_t a;
	int status, port;

	snprintf(err_path, sizeof(err_path), "%s/agent.err", tmpdir());
	snprintf(args, sizeof(args), "--metrics-listen 127.0.0.1:0 --output-dir %s/out --interval 1 "
		 "--no-call-graph", tmpdir());
	a = start_agent(args, err_path);
	cr_assert(wait_file_contains(err_path, "interval 2:", 30000));
	slurp_file(err_path, err, sizeof(err));
	port = (int)number_after(err, "/metrics on port ");
	cr_assert_gt(port, 0, "%s", err);
	cr_expect(strstr(err, "interval 1: samples=") && strstr(err, " rss_bytes=") &&
		  strstr(err, " cpu_seconds="), "%s", err);
	run(&r, "curl -sS --max-time 10 http://127.0.0.1:%d/metrics", port);
	status = stop_agent(a);
	cr_expect_eq(status, 0);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "# TYPE hsbpf_agent_samples_total counter\n"), "%s", r.out);
	cr_expect_geq(number_after(r.out, "\nhsbpf_agent_intervals_total "), 2, "%s", r.out);
	cr_expect_gt(number_after(r.out, "\nhsbpf_agent_samples_total "), 0, "%s", r.out);
	cr_expect_geq(number_after(r.out, "\nhsbpf_agent_files_written_total "), 2, "%s", r.out);
	cr_expect_eq(number_after(r.out, "\nhsbpf_agent_lost_samples_total "), 0, "%s", r.out);
	cr_expect_gt(number_after(r.out, "\nhsbpf_agent_resident_memory_bytes "), 1 << 20, "%s", r.out);
	cr_expect(strstr(r.out, "\nhsbpf_agent_cpu_seconds_total "), "%s", r.out);
	run(&r, "curl -s -o /dev/null -w '%%{http_code}' --max-time 10 http://127.0.0.1:%d/", port);
	cr_expect_str_eq(r.out, "000", "the agent is gone");
}

Test(live_agent, bad_urls_are_usage_errors)
{
	struct run_result r;

	run(&r, "%s agent --server pyroscope:4040 -n 1", hsbpf_bin());
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(strstr(r.err, "invalid --server URL 'pyroscope:4040'"), "%s", r.err);
	run(&r, "%s agent --otlp ftp://collector -n 1", hsbpf_bin());
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(strstr(r.err, "invalid --otlp URL 'ftp://collector'"), "%s", r.err);
	write_text(profile_path(), "otlp = http://\n");
	run(&r, "%s agent --config %s -n 1", hsbpf_bin(), profile_path());
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(strstr(r.err, ":1: invalid value for otlp: 'http://'"), "%s", r.err);
	run(&r, "%s agent --metrics-listen nonsense -n 1 --no-call-graph", hsbpf_bin());
	cr_expect_neq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "invalid --metrics-listen 'nonsense'"), "%s", r.err);
}

Test(live_agent, an_untrusted_certificate_stops_its_sink_and_a_given_ca_is_trusted)
{
	char args[PATH_MAX * 3], dir[PATH_MAX], more[PATH_MAX * 2];
	struct run_result r;
	struct receiver rc;

	run(&r, "cd %s && openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 "
		"-addext subjectAltName=IP:127.0.0.1 -keyout key.pem -out cert.pem -days 1", tmpdir());
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(more, sizeof(more), "--tls %s/cert.pem %s/key.pem", tmpdir(), tmpdir());
	start_receiver_with(&rc, "tls", 200, more);
	snprintf(dir, sizeof(dir), "%s/out", tmpdir());
	snprintf(args, sizeof(args), "--otlp https://127.0.0.1:%d --output-dir %s --interval 1 -n 3 "
		 "--no-call-graph", rc.port, dir);
	run(&r, "%s agent %s", hsbpf_bin(), args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "has a TLS certificate that is not trusted"), "%s", r.err);
	cr_expect(strstr(r.err, "(refused)"), "%s", r.err);
	cr_expect_eq(number_after(r.err, "samples; "), 3, "the folder goes on: %s", r.err);
	cr_expect_eq(number_after(r.err, "; otlp sent "), 0, "%s", r.err);
	/* with the CA given, the same server is trusted */
	snprintf(args, sizeof(args), "--otlp https://127.0.0.1:%d --cacert %s/cert.pem --interval 1 "
		 "-n 2 --no-call-graph", rc.port, tmpdir());
	run(&r, "%s agent %s", hsbpf_bin(), args);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect_eq(number_after(r.err, "; otlp sent "), 2, "%s", r.err);
	reap(rc.pid);
}

Test(live_agent, a_full_output_disk_is_counted_and_the_other_sinks_go_on)
{
	char args[PATH_MAX * 3], mnt[PATH_MAX];
	struct run_result r;
	struct receiver rc;

	snprintf(mnt, sizeof(mnt), "%s/full", tmpdir());
	cr_assert_eq(mkdir(mnt, 0755), 0);
	run(&r, "mount -t tmpfs -o size=64k tmpfs %s", mnt);
	if (r.status)
		cr_skip_test("cannot mount a small tmpfs here: %s", r.err);
	run(&r, "dd if=/dev/zero of=%s/filler bs=4k count=100", mnt);
	start_receiver(&rc, "disk", 200);
	snprintf(args, sizeof(args), "--otlp http://127.0.0.1:%d --output-dir %s --interval 1 -n 3 "
		 "--no-call-graph", rc.port, mnt);
	run(&r, "%s agent %s", hsbpf_bin(), args);
	{
		struct run_result u;

		run(&u, "umount %s", mnt);
	}
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "No space left on device"), "%s", r.err);
	cr_expect(strstr(r.err, "files written to") && strstr(r.err, "(3 could not be written)"), "%s", r.err);
	cr_expect_eq(number_after(r.err, "; otlp sent "), 3, "%s", r.err);
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
	/* what is checked is the maps' bounds and the sums, not how late an interval is (the
	 * agent's benchmark measures that): at load 10 an interval came seconds late */
	if (!wait_bodies(&rc, nr_bodies(&rc) + 3, 60000)) {
		slurp_file(err_path, err, sizeof(err));
		cr_assert_fail("not three intervals pushed after the recording (%d so far): %s",
			       nr_bodies(&rc), err);
	}
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

/* the max_entries of the map named name among pid's BPF maps (its /proc/PID/fdinfo), 0 if none */
static u32 map_slots(pid_t pid, const char *name)
{
	char dir[64], path[PATH_MAX], line[256];
	struct dirent *de;
	u32 slots = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fdinfo", (int)pid);
	d = opendir(dir);
	cr_assert(d, "%s: %s", dir, strerror(errno));
	while (!slots && (de = readdir(d))) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f)) {
			struct bpf_map_info info = {};
			u32 len = sizeof(info), id;
			int fd;

			if (sscanf(line, "map_id: %u", &id) != 1)
				continue;
			fd = bpf_map_get_fd_by_id(id);
			if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) && !strcmp(info.name, name))
				slots = info.max_entries;
			if (fd >= 0)
				close(fd);
		}
		if (f)
			fclose(f);
	}
	closedir(d);
	return slots;
}

/* The kernel preallocates a hash map's slots: the agent's maps hold what a minute (or its
 * interval, if longer) can sample at its rate on every CPU, not the 262,144 samples and 65,536
 * stacks of a recording, and the unwinder's test probe has no 139 MB map outside the tests.
 * Known answer: at 19 Hz on N CPUs a minute is 1,140 N samples, two map slots a sample (and
 * four stacks) at least; under the defaults when N is small */
Test(live_agent, the_kernel_maps_are_sized_for_a_minute_of_samples)
{
	char err_path[PATH_MAX], err[65536];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	u64 minute = 19 * 60 * (u64)ncpu;
	u32 samples, stacks, keys;
	pid_t a;

	snprintf(err_path, sizeof(err_path), "%s/agent.err", tmpdir());
	a = start_agent("-F 19 --interval 10", err_path);
	cr_assert(wait_file_contains(err_path, "sampling", 30000), "the agent did not start");
	samples = map_slots(a, "samples");
	stacks = map_slots(a, "stacks");
	keys = map_slots(a, "stack_samples");
	cr_expect_geq(samples, 2 * minute < 262144 ? 2 * minute : 262144, "%u sample slots for %llu "
		      "samples a minute", samples, (unsigned long long)minute);
	cr_expect_geq(keys, 2 * minute < 262144 ? 2 * minute : 262144, "%u stack sample slots", keys);
	cr_expect_geq(stacks, 4 * minute < 65536 ? 4 * minute : 65536, "%u stack slots", stacks);
	if (minute * 4 < 262144 / 2) {
		cr_expect_lt(samples, 262144, "the default's slots: %u", samples);
		cr_expect_lt(keys, 262144, "the default's stack sample slots: %u", keys);
	}
	cr_expect_eq(map_slots(a, "probe_stacks"), 1, "the test probe's map outside the tests");
	cr_expect_eq(map_slots(a, "samples_odd"), samples, "both generations alike");
	cr_assert_eq(stop_agent(a), 0);
	slurp_file(err_path, err, sizeof(err));
	cr_expect(!strstr(err, "dropped"), "%s", err);
}

/* a copy of a fixture at dst with a build-id of its own (its last byte changed, and the one
 * before by salt: copies with different salts differ): no other process on the machine maps
 * that object */
static void copy_with_own_build_id(const char *src, const char *dst, u8 salt)
{
	u8 bid[BUILD_ID_MAX], *buf, *at = NULL;
	size_t len, n = 0;
	FILE *f;

	cr_assert_eq(build_id__read(src, bid, sizeof(bid), &n), 0);
	cr_assert_gt(n, 0, "%s has no build-id", src);
	buf = read_all(src, &len);
	for (size_t i = 0; i + n <= len && !at; i++)
		if (!memcmp(buf + i, bid, n))
			at = buf + i;
	cr_assert(at, "the build-id is not in %s", src);
	at[n - 1] ^= (u8)(getpid() | 1);
	at[n - 2] ^= salt;
	f = fopen(dst, "wb");
	cr_assert(f && fwrite(buf, 1, len, f) == len);
	fclose(f);
	cr_assert_eq(chmod(dst, 0755), 0);
	free(buf);
}

/* the kernel's object slot idx of the map with that id */
static struct unwind_obj read_unwind_obj(u32 map_id, u32 idx)
{
	struct unwind_obj o = {};
	int fd = bpf_map_get_fd_by_id(map_id);

	cr_assert_geq(fd, 0, "map %u: %s", map_id, strerror(errno));
	cr_assert_eq(bpf_map_lookup_elem(fd, &idx, &o), 0, "slot %u: %s", idx, strerror(errno));
	close(fd);
	return o;
}

Test(live_agent, a_table_is_built_once_sampled_and_unloaded_after_its_program_exits)
{
	char args[PATH_MAX * 2], err_path[PATH_MAX], err[1 << 17], prog[PATH_MAX], cmd[PATH_MAX + 16];
	char built[PATH_MAX + 32], gone[PATH_MAX + 64], again[64];
	unsigned int idx, map_id;
	struct unwind_obj o;
	const char *at;
	pid_t a, hot;

	snprintf(prog, sizeof(prog), "%s/lazyhot", tmpdir());
	copy_with_own_build_id(fixture("hot7030"), prog, 0);
	snprintf(err_path, sizeof(err_path), "%s/agent.err", tmpdir());
	snprintf(args, sizeof(args), "-v -F 99 --interval 1 --output-dir %s", tmpdir());
	a = start_agent(args, err_path);
	cr_assert(wait_file_contains(err_path, "sampling", 30000), "the agent did not start");
	snprintf(cmd, sizeof(cmd), "exec %s 60", prog);
	hot = spawn(cmd);
	/* sampled in an interval, its table built at the next poll */
	snprintf(built, sizeof(built), "'%s' has table ", prog);
	cr_assert(wait_file_contains(err_path, built, 30000), "no table for the sampled program");
	slurp_file(err_path, err, sizeof(err));
	at = strstr(err, built);
	cr_assert(at && sscanf(at + strlen(built), "%u in map %u", &idx, &map_id) == 2, "%s", err);
	o = read_unwind_obj(map_id, idx);
	cr_expect(o.end > o.base && o.nr_pages > 0, "table %u is not in the kernel", idx);
	/* gone: after the intervals that find it mapped no more, its slot is emptied */
	reap(hot);
	snprintf(gone, sizeof(gone), "'%s' is mapped no more: table %u unloaded", prog, idx);
	cr_assert(wait_file_contains(err_path, gone, 30000), "the table of the exited program stays");
	o = read_unwind_obj(map_id, idx);
	slurp_file(err_path, err, sizeof(err));
	/* the slot may have been taken by another table after its grace: said after the unload */
	snprintf(again, sizeof(again), "has table %u in map", idx);
	at = strstr(err, gone);
	cr_expect((o.end == 0 && o.nr_pages == 0) || (at && strstr(at, again)),
		  "slot %u still holds a table: %#llx-%#llx, %u pages", idx, (unsigned long long)o.base,
		  (unsigned long long)o.end, o.nr_pages);
	cr_assert_eq(stop_agent(a), 0);
}

/* intervals first..last from the agent's -v "times:" lines: how late each was (ms) and the
 * longest round of the loop before it (how late an interval due during that round would have
 * been), the worse of the two in out[]; how many */
static int interval_lateness(const char *err, u64 first, u64 last, u64 *out, int max)
{
	const char *s = err;
	int n = 0;

	while (n < max && (s = strstr(s, "debug: interval "))) {
		unsigned long long i, late, rounds, round;

		if (sscanf(s, "debug: interval %llu times: late %llu ms; loop %llu rounds, longest %llu ms",
			   &i, &late, &rounds, &round) == 4 && i >= first && i <= last)
			out[n++] = late > round ? late : round;
		s++;
	}
	return n;
}

/* the number of the last interval whose "times:" line is in err, 0 before the first */
static u64 last_interval(const char *err)
{
	const char *s = err;
	u64 last = 0;

	while ((s = strstr(s, "debug: interval "))) {
		unsigned long long i;
		char word[8];

		if (sscanf(s, "debug: interval %llu %7s", &i, word) == 2 && !strcmp(word, "times:"))
			last = i;
		s++;
	}
	return last;
}

static u64 wait_interval(const char *err_path, char *err, size_t size, u64 n, int timeout_ms)
{
	u64 t0 = now_ns(CLOCK_MONOTONIC), last = 0;

	while (now_ns(CLOCK_MONOTONIC) - t0 < (u64)timeout_ms * 1000000) {
		slurp_file(err_path, err, size);
		last = last_interval(err);
		if (last >= n)
			break;
		usleep(100000);
	}
	return last;
}

/* the table of path built: loaded, or found too big for what the kernel's arrays have left
 * (a busy machine's tables, the previous copies' still in their grace) */
static bool wait_table(const char *err_path, char *err, size_t size, const char *path, int timeout_ms)
{
	char loaded[PATH_MAX + 64], full[PATH_MAX + 64];
	u64 t0 = now_ns(CLOCK_MONOTONIC);

	snprintf(loaded, sizeof(loaded), "'%s' has table ", path);
	snprintf(full, sizeof(full), "the table of '%s' (", path);
	while (now_ns(CLOCK_MONOTONIC) - t0 < (u64)timeout_ms * 1000000) {
		slurp_file(err_path, err, size);
		if (strstr(err, loaded) || strstr(err, full))
			return true;
		usleep(100000);
	}
	return false;
}

/* A new big program (the C++ compiler's cc1plus: half a million rows, a second or more of
 * work under load) gets its table without holding the loop: the table is built on the
 * agent's worker thread, and while three copies (each a build-id of its own, so a table
 * each) are sampled and get their tables, the intervals stay on time and no round of the
 * loop is long (an interval due during a round waits for its end: the rounds say it whatever
 * the phase). The bound comes from the same machine in the same test: the median of the quiet
 * intervals' lateness or longest round, four times over, and never under half an interval
 * (what the bench counts as late). With the tables built in the loop (the worker's job run
 * there instead) it failed at load 10: a 1.7 s round against a quiet median of 50 ms. */
Test(live_agent, a_big_new_program_does_not_make_the_intervals_late, .timeout = 300)
{
	char args[PATH_MAX * 2], err_path[PATH_MAX], cc1plus[PATH_MAX], src[PATH_MAX];
	char dir[PATH_MAX], copy[PATH_MAX + 16], cmd[PATH_MAX * 4];
	char stop[PATH_MAX + 8];
	static char err[1 << 21];
	int status;
	pid_t cc;
	bool ok;
	u64 quiet_last, busy_last, quiet[64], busy[256], median, bound, worst = 0;
	int nr_quiet, nr_busy;
	FILE *f;
	pid_t a;

	f = popen("g++ -print-prog-name=cc1plus", "r");
	cr_assert(f && fgets(cc1plus, sizeof(cc1plus), f), "g++ -print-prog-name failed");
	pclose(f);
	cc1plus[strcspn(cc1plus, "\n")] = 0;
	cr_assert_eq(access(cc1plus, X_OK), 0, "no cc1plus at '%s'", cc1plus);
	snprintf(src, sizeof(src), "%s/big.cc", tmpdir());
	f = fopen(src, "w");
	cr_assert(f);
	fputs("#include <bits/stdc++.h>\nint main() { std::vector<int> v; std::sort(v.begin(), v.end()); }\n", f);
	fclose(f);

	snprintf(err_path, sizeof(err_path), "%s/agent.err", tmpdir());
	snprintf(args, sizeof(args), "-v -F 99 --interval 1 --output-dir %s", tmpdir());
	a = start_agent(args, err_path);
	cr_assert(wait_file_contains(err_path, "sampling", 30000), "the agent did not start");
	/* the quiet intervals: the first two (the tables of what runs already) left out */
	quiet_last = wait_interval(err_path, err, sizeof(err), 10, 60000);
	cr_assert_geq(quiet_last, 10, "%s", err);
	for (int i = 0; i < 3; i++) {
		snprintf(dir, sizeof(dir), "%s/cc%d", tmpdir(), i);
		cr_assert_eq(mkdir(dir, 0755), 0);
		snprintf(copy, sizeof(copy), "%s/cc1plus", dir);
		copy_with_own_build_id(cc1plus, copy, (u8)(i + 1));
		/* compiled again and again until its table is in: a table finished after its
		 * object was unmapped for three intervals is dropped (a loaded machine builds
		 * it for seconds) */
		snprintf(cmd, sizeof(cmd), "exec sh -c 'while [ ! -e %s/stop ]; do g++ -B %s/ -O2 -c %s "
			 "-o /dev/null || exit 1; done'", dir, dir, src);
		cc = spawn(cmd);
		ok = wait_table(err_path, err, sizeof(err), copy, 120000);
		snprintf(stop, sizeof(stop), "%s/stop", dir);
		fclose(fopen(stop, "w"));
		cr_assert_eq(waitpid(cc, &status, 0), cc);
		cr_assert(WIFEXITED(status) && !WEXITSTATUS(status), "the compiler failed");
		cr_assert(ok, "no table for '%s': %.2000s", copy, strstr(err, copy) ? strstr(err, copy) : "");
	}
	/* two more intervals: the last table's round is in the one after it */
	slurp_file(err_path, err, sizeof(err));
	busy_last = wait_interval(err_path, err, sizeof(err), last_interval(err) + 2, 30000);
	cr_assert_eq(stop_agent(a), 0);
	slurp_file(err_path, err, sizeof(err));
	nr_quiet = interval_lateness(err, 3, quiet_last, quiet, 64);
	nr_busy = interval_lateness(err, quiet_last + 1, busy_last, busy, 256);
	cr_assert_geq(nr_quiet, 7, "%s", err);
	cr_assert_geq(nr_busy, 3, "%s", err);
	/* the median: the quiet intervals may meet another program's table too */
	qsort(quiet, nr_quiet, sizeof(*quiet), cmp_u64);
	median = quiet[nr_quiet / 2];
	bound = 4 * median > 500 ? 4 * median : 500;
	for (int i = 0; i < nr_busy; i++)
		worst = busy[i] > worst ? busy[i] : worst;
	cr_expect_leq(worst, bound, "an interval late by %llu ms, or a round of the loop that long, while "
		      "the big tables were built (the quiet intervals' median %llu ms, of %d; %d intervals)",
		      (unsigned long long)worst, (unsigned long long)median, nr_quiet, nr_busy);
}

/* the profiles of an output folder: their numbers and names, by number; how many */
static int folder_profiles(const char *dir, u64 *nums, char (*names)[128], int max)
{
	struct dirent *d;
	DIR *dp = opendir(dir);
	int n = 0;

	while (dp && (d = readdir(dp))) {
		size_t len = strlen(d->d_name);

		if (strncmp(d->d_name, "hsbpf-", 6) || len < 7 || strcmp(d->d_name + len - 6, ".pb.gz"))
			continue;
		cr_assert_lt(n, max);
		nums[n] = strtoull(d->d_name + 6, NULL, 10);
		snprintf(names[n++], 128, "%s", d->d_name);
	}
	if (dp)
		closedir(dp);
	for (int i = 1; i < n; i++)		/* a few: insertion sort */
		for (int j = i; j > 0 && nums[j] < nums[j - 1]; j--) {
			u64 t = nums[j];
			char name[128];

			nums[j] = nums[j - 1];
			nums[j - 1] = t;
			memcpy(name, names[j], 128);
			memcpy(names[j], names[j - 1], 128);
			memcpy(names[j - 1], name, 128);
		}
	return n;
}

/* the profile in dir/name, decoded (pid's samples counted) */
static void decode_file(const char *dir, const char *name, s64 pid, struct pushed *out)
{
	char path[PATH_MAX + 160];
	size_t len;
	u8 *gz;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	gz = read_all(path, &len);
	memset(out, 0, sizeof(*out));
	decode_pprof(gz, len, pid, NULL, out);
	free(gz);
}

/* how long pid has run on a CPU (schedstat), ns */
static u64 run_time_ns(pid_t pid)
{
	char path[64], text[128];

	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	slurp_file(path, text, sizeof(text));
	return strtoull(text, NULL, 10);
}

/* up to timeout_ms for the agent to end: its status, or -1 */
static int wait_exit(pid_t pid, int timeout_ms)
{
	int status;

	for (int waited = 0; waited <= timeout_ms; waited += 20) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		usleep(20000);
	}
	return -1;
}

#define CGROUP_GONE_CPU_NS 200000000ull	/* the hot process's CPU in the last interval */

/* The cgroup followed removed while the agent runs: it names the cgroup, sends its last
 * interval (what the cgroup's process ran since the interval before, up to its move out) and
 * exits with status 1 (docs/agent.md) within a bounded time. */
Test(live_agent, a_cgroup_removed_ends_the_agent_after_its_last_interval)
{
	char mnt[PATH_MAX], cg[PATH_MAX + 32], procs[PATH_MAX + 64], out[PATH_MAX], cmd[PATH_MAX + 32];
	char args[PATH_MAX * 3], err_path[PATH_MAX], err[16384], names[64][128], pidtext[32];
	u64 nums[64], base_cpu, cpu, last_samples = 0, after_samples = 0, t0, took;
	struct pushed got;
	pid_t w, hot, a;
	int n, base, status;

	remove_stale_test_cgroups();
	cr_assert_eq(cgroup__find_mount("/proc/self/mountinfo", mnt, sizeof(mnt)), 0);
	snprintf(cg, sizeof(cg), "%s/hsbpf-agentgone-%d", mnt, getpid());
	cr_assert(!mkdir(cg, 0755) || errno == EEXIST, "cannot create %s: %s", cg, strerror(errno));
	snprintf(cmd, sizeof(cmd), "exec %s 60", fixture("hot7030"));
	w = spawn(cmd);
	hot = wait_descendant(w, "hot7030", 1);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	snprintf(pidtext, sizeof(pidtext), "%d\n", hot);
	write_bytes(procs, pidtext, strlen(pidtext));
	snprintf(out, sizeof(out), "%s/out", tmpdir());
	snprintf(err_path, sizeof(err_path), "%s/agent.err", tmpdir());
	snprintf(args, sizeof(args), "-F 99 --interval 1 --output-dir %s --cgroup %s", out, cg);
	a = start_agent(args, err_path);
	cr_assert(wait_file_contains(err_path, "interval 1:", 30000), "no interval");
	/* the process runs a while after the folder's latest profile, none newer meanwhile: the
	 * samples of that while are the last interval's */
	base = folder_profiles(out, nums, names, 64);
	base_cpu = run_time_ns(hot);
	for (int waited = 0;; waited += 10) {
		cr_assert_lt(waited, 30000, "the process did not run");
		n = folder_profiles(out, nums, names, 64);
		cpu = run_time_ns(hot);
		if (n != base) {
			base = n;
			base_cpu = cpu;
		} else if (cpu - base_cpu >= CGROUP_GONE_CPU_NS) {
			break;
		}
		usleep(10000);
	}
	/* moved out (to the root), the cgroup removed */
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", mnt);
	write_bytes(procs, pidtext, strlen(pidtext));
	cpu = run_time_ns(hot) - base_cpu;
	remove_cgroup(cg);
	t0 = now_ns(CLOCK_MONOTONIC);
	cr_assert_neq(access(cg, F_OK), 0, "%s is still there", cg);
	/* made again at once (a container restarted): another cgroup, not followed */
	cr_assert_eq(mkdir(cg, 0755), 0, "cannot create %s again: %s", cg, strerror(errno));
	status = wait_exit(a, 10000);
	took = now_ns(CLOCK_MONOTONIC) - t0;
	if (status < 0)
		status = stop_agent(a);
	reap(w);
	remove_cgroup(cg);
	slurp_file(err_path, err, sizeof(err));
	cr_assert_eq(status, 1, "the agent's status %d after %.1f s: %s", status, took / 1e9, err);
	cr_expect_lt(took, 5000000000ull, "the agent took %.1f s to end", took / 1e9);
	{
		char said[PATH_MAX + 64];

		snprintf(said, sizeof(said), "the cgroup '%s' (id ", cg);
		cr_expect(strstr(err, said) && strstr(err, "its last interval is sent, then the agent "
			  "exits with status 1"), "%s", err);
	}
	n = folder_profiles(out, nums, names, 64);
	cr_assert_gt(n, base, "no profile after the removal: %s", err);
	cr_expect_eq(number_after(err, "samples; "), n, "every interval written: %s", err);
	cr_expect_eq(nums[n - 1], (u64)n, "%s", err);
	/* the profiles since: the last interval's, and one more at most if an interval ended
	 * between the last look and the move */
	for (int i = base; i < n; i++) {
		decode_file(out, names[i], hot, &got);
		after_samples += got.pid_samples;
		if (i == n - 1)
			last_samples = got.pid_samples;
	}
	cr_log_info("the agent ended %.2f s after the removal; the last interval %llu samples of the "
		    "process, %llu since the profile before for %.0f ms of its CPU", took / 1e9,
		    (unsigned long long)last_samples, (unsigned long long)after_samples, cpu / 1e6);
	cr_expect_gt(last_samples, 0, "the last interval (%s) has none of the process's samples: %s",
		     names[n - 1], err);
	cr_expect_geq(after_samples, samples_floor(cpu, 1000000000ull / 99),
		      "%llu samples for %.0f ms of CPU before the removal", (unsigned long long)after_samples,
		      cpu / 1e6);
}

/* the agent's wall clock moved by step seconds (HSBPF_TEST_CLOCK_STEP_FILE: read at every
 * reading), through a rename so that it never reads half a number */
static void step_clock(const char *path, long long step)
{
	char tmp[PATH_MAX + 8], text[32];

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	snprintf(text, sizeof(text), "%lld\n", step);
	write_bytes(tmp, text, strlen(text));
	cr_assert_eq(rename(tmp, path), 0);
}

/* the last "interval N:" line of the agent's log, 0 before the first */
static u64 last_sent(const char *err_path)
{
	static char err[1 << 16];
	const char *s = err;
	u64 last = 0;

	slurp_file(err_path, err, sizeof(err));
	while ((s = strstr(s, "hsbpf agent: interval "))) {
		s += strlen("hsbpf agent: interval ");
		last = strtoull(s, NULL, 10);
	}
	return last;
}

static bool wait_sent(const char *err_path, u64 n, int timeout_ms)
{
	for (int waited = 0; waited < timeout_ms; waited += 20) {
		if (last_sent(err_path) >= n)
			return true;
		usleep(20000);
	}
	return false;
}

#define STEP_KEEP 3		/* --max-files */
#define STEP_MAX 64

struct step_seen {
	u64 time_ns[STEP_MAX + 1], duration_ns[STEP_MAX + 1];	/* by number */
	bool seen[STEP_MAX + 1];
};

/* the folder holds the newest profiles, the last one sent among them: STEP_KEEP of them, numbered
 * one after the other, each named as its pprof's start says; their times kept in *sn */
static void check_kept(const char *dir, const char *err_path, struct step_seen *sn, const char *when)
{
	u64 nums[16], before = last_sent(err_path), after;
	char names[16][128];
	int n = folder_profiles(dir, nums, names, 16);

	after = last_sent(err_path);
	cr_assert_eq(n, STEP_KEEP, "%s: %d profiles kept", when, n);
	cr_expect(nums[n - 1] >= before && nums[n - 1] <= after + 1, "%s: the newest kept is %s, %llu "
		  "sent", when, names[n - 1], (unsigned long long)after);
	for (int i = 0; i < n; i++) {
		struct pushed got;
		char want[128];

		cr_expect_eq(nums[i], nums[n - 1] - (n - 1 - i), "%s: %s is not among the newest", when,
			     names[i]);
		cr_assert_leq(nums[i], STEP_MAX);
		decode_file(dir, names[i], -1, &got);
		outdir__name(nums[i], got.time_ns, want, sizeof(want));
		cr_expect_str_eq(names[i], want, "%s: the name is the pprof's start", when);
		sn->time_ns[nums[i]] = got.time_ns;
		sn->duration_ns[nums[i]] = got.duration_ns;
		sn->seen[nums[i]] = true;
	}
}

/* The wall clock stepped back an hour, then forward a day, while the agent writes a profile a
 * second to a folder that keeps 3: the intervals keep their schedule (the monotonic clock's),
 * the folder keeps the newest (by their numbers: by their names' times, every profile of the
 * hour after the step back went as soon as it was written), none is lost or overwritten, and
 * each pprof's start is what the wall clock said. The machine's clock is not stepped: the
 * agent's reading of it is (HSBPF_TEST_CLOCK_STEP_FILE). */
Test(live_agent, a_stepped_clock_keeps_the_schedule_and_the_newest_profiles)
{
	static const long long steps[] = { 0, -3600, 86400 };
	char out[PATH_MAX], step_path[PATH_MAX], err_path[PATH_MAX], cmd[PATH_MAX * 4], err[1 << 16];
	u64 from[3], real0, real1, mono0, mono1, durations[STEP_MAX], median, n;
	struct step_seen sn = {};
	int nr_durations = 0;
	pid_t a;

	snprintf(out, sizeof(out), "%s/out", tmpdir());
	snprintf(step_path, sizeof(step_path), "%s/clock-step", tmpdir());
	snprintf(err_path, sizeof(err_path), "%s/agent.err", tmpdir());
	step_clock(step_path, 0);
	snprintf(cmd, sizeof(cmd), "HSBPF_TEST_CLOCK_STEP_FILE=%s exec %s agent -F 99 --no-call-graph "
		 "--interval 1 --output-dir %s --max-files %d 2>%s", step_path, hsbpf_bin(), out, STEP_KEEP,
		 err_path);
	real0 = now_ns(CLOCK_REALTIME);
	a = spawn(cmd);
	cr_assert(wait_file_contains(err_path, "sampling", 30000), "the agent did not start");
	mono0 = now_ns(CLOCK_MONOTONIC);
	for (int s = 0; s < 3; s++) {
		char when[64];

		u64 sent = last_sent(err_path);

		/* interval sent + 1 started before the step (when interval sent was taken), sent + 2
		 * before or after it, the ones after it after */
		if (s)
			step_clock(step_path, steps[s]);
		from[s] = s ? sent + 3 : 1;
		cr_assert(wait_sent(err_path, from[s] + 2, 30000), "not three intervals after step %d", s);
		snprintf(when, sizeof(when), "%lld s", steps[s]);
		check_kept(out, err_path, &sn, when);
	}
	cr_assert_eq(stop_agent(a), 0);
	mono1 = now_ns(CLOCK_MONOTONIC);
	real1 = now_ns(CLOCK_REALTIME);
	slurp_file(err_path, err, sizeof(err));
	n = last_sent(err_path);
	check_kept(out, err_path, &sn, "at the end");
	/* every interval written, none failed: numbers 1..n, so none overwritten */
	cr_expect_eq(number_after(err, "samples; "), n, "%s", err);
	cr_expect(!strstr(err, "could not be written"), "%s", err);
	/* on schedule: about one interval a second of the monotonic clock, and the intervals'
	 * median (their lengths are the monotonic clock's) a second */
	cr_expect(fabs((double)n - (mono1 - mono0) / 1e9) <= 2 + (mono1 - mono0) / 1e9 / 4,
		  "%llu intervals in %.1f s", (unsigned long long)n, (mono1 - mono0) / 1e9);
	for (u64 i = 2; i < n && i <= STEP_MAX; i++)
		if (sn.seen[i])
			durations[nr_durations++] = sn.duration_ns[i];
	cr_assert_geq(nr_durations, 5);
	qsort(durations, nr_durations, sizeof(*durations), cmp_u64);
	median = durations[nr_durations / 2];
	cr_expect(fabs((double)median / INTERVAL_NS - 1) <= 0.25, "the intervals' median is %llu ns",
		  (unsigned long long)median);
	/* each start what the wall clock said then, the step included */
	for (int s = 0; s < 3; s++)
		for (u64 i = from[s]; i < (s < 2 ? from[s + 1] - 1 : n + 1) && i <= STEP_MAX; i++) {
			s64 t;

			if (!sn.seen[i])
				continue;
			t = (s64)sn.time_ns[i] - steps[s] * 1000000000ll;
			cr_expect(t >= (s64)real0 && t <= (s64)real1, "profile %llu starts %.1f s off the "
				  "wall clock stepped %lld s", (unsigned long long)i,
				  (t < (s64)real0 ? t - (s64)real0 : t - (s64)real1) / 1e9, steps[s]);
		}
}
