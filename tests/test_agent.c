// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The agent's library modules without BPF: the configuration file, the rotating output
 * folder, the push request's encoding (decoded back with protobuf-c) and the backoff. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "agent/agent_config.h"
#include "agent/outdir.h"
#include "agent/push.h"
#include "helpers.h"
#include "push.pb-c.h"

TestSuite(agent, .fini = cleanup_tmpdir);

Test(agent, config_reads_keys_comments_and_labels)
{
	struct agent_config c = { .interval = 10 };
	const char *text =
		"# the agent\n"
		"\n"
		"server = http://localhost:4040/\n"
		"  output_dir=/var/lib/hsbpf  \n"
		"output_format = pprof\n"
		"max_files = 12\n"
		"max_bytes = 1000000\n"
		"interval = 2.5\n"
		"service_name = web\n"
		"label.env = prod\n"
		"label.region = eu = west\n"
		"label.env = staging\n";

	cr_assert_eq(agent_config__parse(&c, text, "t.conf"), 0);
	cr_expect_str_eq(c.server, "http://localhost:4040/");
	cr_expect_str_eq(c.output_dir, "/var/lib/hsbpf");
	cr_expect_eq(c.max_files, 12);
	cr_expect_eq(c.max_bytes, 1000000);
	cr_expect_eq(c.interval, 2.5);
	cr_expect_str_eq(c.service_name, "web");
	cr_assert_eq(c.nr_labels, 2, "a label given twice is set, not added");
	cr_expect_str_eq(c.labels[0].name, "env");
	cr_expect_str_eq(c.labels[0].value, "staging");
	cr_expect_str_eq(c.labels[1].name, "region");
	cr_expect_str_eq(c.labels[1].value, "eu = west");
}

Test(agent, config_rejects_what_it_does_not_know)
{
	static const char *bad[] = {
		"sever = http://x\n", "server http://x\n", "max_files = -1\n", "interval = 0\n",
		"interval = soon\n", "output_format = folded\n", "label. = x\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct agent_config c = {};

		cr_expect_eq(agent_config__parse(&c, bad[i], "t.conf"), -EINVAL, "%s", bad[i]);
	}
}

Test(agent, a_broken_file_leaves_the_config_as_it_was)
{
	struct agent_config c = {};
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/a.conf", tmpdir());
	f = fopen(path, "w");
	cr_assert(f);
	fputs("server = http://a\nmax_files = x\n", f);
	fclose(f);
	snprintf(c.server, sizeof(c.server), "http://before");
	cr_expect_eq(agent_config__load(&c, path), -EINVAL);
	cr_expect_str_eq(c.server, "http://before");
	cr_expect_lt(agent_config__load(&c, "/nonexistent/a.conf"), 0);
}

Test(agent, the_command_line_wins_over_the_file)
{
	struct agent_config c = { .interval = 10, .max_files = 5 }, cli = { .interval = 1 };

	snprintf(c.server, sizeof(c.server), "http://file");
	snprintf(cli.output_dir, sizeof(cli.output_dir), "/tmp/x");
	agent_config__overlay(&c, &cli);
	cr_expect_str_eq(c.server, "http://file");
	cr_expect_str_eq(c.output_dir, "/tmp/x");
	cr_expect_eq(c.interval, 1);
	cr_expect_eq(c.max_files, 5);
}

Test(agent, output_names_sort_by_number_then_say_the_time)
{
	char a[128], b[128];

	outdir__name(42, 1795768530123456789ull, a, sizeof(a));
	cr_expect_str_eq(a, "hsbpf-0000000042-20261127T083530.123456Z.pb.gz");
	/* the next profile, its clock stepped back an hour: still after */
	outdir__name(43, 1795768530123456789ull - 3600000000000ull, b, sizeof(b));
	cr_expect_lt(strcmp(a, b), 0);
}

static size_t count_profiles(const char *dir)
{
	char cmd[4200];
	struct run_result r;

	snprintf(cmd, sizeof(cmd), "ls %s | grep -c '^hsbpf-.*\\.pb\\.gz$'", dir);
	run(&r, "%s", cmd);
	return strtoul(r.out, NULL, 10);
}

static bool exists(const char *dir, const char *name)
{
	char path[4400];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !stat(path, &st);
}

Test(agent, the_folder_keeps_the_newest_by_count_and_size)
{
	char dir[4096], name[128], other[4200];
	struct outdir *o;
	u8 buf[100] = {};

	snprintf(dir, sizeof(dir), "%s/out", tmpdir());
	snprintf(other, sizeof(other), "%s/notes.txt", dir);
	o = outdir__open(dir);
	cr_assert(o);
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(outdir__write(o, 1795768530000000000ull + i * 1000000000ull, buf,
					   sizeof(buf), 3, 0), 0);
		if (!i)
			write_bytes(other, "x", 1);
	}
	cr_expect_eq(count_profiles(dir), 3);
	outdir__name(3, 1795768530000000000ull + 2 * 1000000000ull, name, sizeof(name));
	cr_expect(exists(dir, name), "the oldest went first: %s stays", name);
	cr_expect(exists(dir, "notes.txt"), "what is not a profile stays");
	/* by size: 250 bytes hold two of 100 */
	cr_assert_eq(outdir__write(o, 1795768540000000000ull, buf, sizeof(buf), 0, 250), 0);
	cr_expect_eq(count_profiles(dir), 2);
	/* the newest stays even alone over the bound */
	cr_assert_eq(outdir__write(o, 1795768550000000000ull, buf, sizeof(buf), 0, 10), 0);
	cr_expect_eq(count_profiles(dir), 1);
	outdir__name(7, 1795768550000000000ull, name, sizeof(name));
	cr_expect(exists(dir, name));
	outdir__free(o);
}

/* The wall clock stepped back an hour, then forward a day: the files keep the order they
 * were written in, so the rotation keeps the newest (by their names' times it would keep the
 * hour before the step and remove each new profile as the oldest), and none is overwritten */
Test(agent, the_folder_keeps_the_newest_across_clock_steps)
{
	static const s64 steps[] = { 0, 0, 0, -3600, -3600, -3600, 86400, 86400 };
	char dir[4096], name[128];
	u64 t = 1795768530000000000ull, at[8];
	struct outdir *o;
	u8 buf[100] = {};

	snprintf(dir, sizeof(dir), "%s/out", tmpdir());
	/* an earlier version's profile, unnumbered, and from a later time: older all the same */
	o = outdir__open(dir);
	cr_assert(o);
	{
		char old[4200];

		snprintf(old, sizeof(old), "%s/hsbpf-20300101T000000.000000Z.pb.gz", dir);
		write_bytes(old, buf, sizeof(buf));
	}
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		t += 1000000000ull;
		at[i] = t + steps[i] * 1000000000ll;
		cr_assert_eq(outdir__write(o, at[i], buf, sizeof(buf), 3, 0), 0);
		cr_expect_eq(count_profiles(dir), i < 2 ? i + 2 : 3, "after profile %zu", i + 1);
		/* the profile just written is there, whatever the clock said */
		outdir__name(i + 1, at[i], name, sizeof(name));
		cr_expect(exists(dir, name), "%s was removed as it was written", name);
	}
	cr_expect(!exists(dir, "hsbpf-20300101T000000.000000Z.pb.gz"), "the unnumbered one went first");
	/* the last three, the two of the step forward and the last of the step back */
	for (u64 i = 6; i <= 8; i++) {
		outdir__name(i, at[i - 1], name, sizeof(name));
		cr_expect(exists(dir, name), "%s is not kept", name);
	}
	outdir__free(o);
	/* a new run numbers on after the highest */
	o = outdir__open(dir);
	cr_assert(o);
	cr_assert_eq(outdir__write(o, 1795768530000000000ull, buf, sizeof(buf), 0, 0), 0);
	outdir__name(9, 1795768530000000000ull, name, sizeof(name));
	cr_expect(exists(dir, name), "the next run's first profile is %s", name);
	outdir__free(o);
}

Test(agent, a_push_request_decodes_back)
{
	static const struct push_label labels[] = {
		{ "service_name", "web" }, { "__name__", "process_cpu" }, { "host", "h1" },
	};
	static const u8 pprof[] = { 0x1f, 0x8b, 8, 0, 1, 2, 3 };
	Push__V1__PushRequest *req;
	size_t len;
	u8 *buf;

	cr_assert_eq(push__encode(labels, 3, pprof, sizeof(pprof), "id1", &buf, &len), 0);
	req = push__v1__push_request__unpack(NULL, len, buf);
	cr_assert(req);
	cr_assert_eq(req->n_series, 1);
	cr_assert_eq(req->series[0]->n_labels, 3);
	for (size_t i = 0; i < 3; i++) {
		cr_expect_str_eq(req->series[0]->labels[i]->name, labels[i].name);
		cr_expect_str_eq(req->series[0]->labels[i]->value, labels[i].value);
	}
	cr_assert_eq(req->series[0]->n_samples, 1);
	cr_expect_str_eq(req->series[0]->samples[0]->id, "id1");
	cr_assert_eq(req->series[0]->samples[0]->raw_profile.len, sizeof(pprof));
	cr_expect_eq(memcmp(req->series[0]->samples[0]->raw_profile.data, pprof, sizeof(pprof)), 0);
	push__v1__push_request__free_unpacked(req, NULL);
	/* the public field numbers: series 1 (tag 0x0a), its labels 1 (0x0a), name 1 (0x0a) */
	cr_expect_eq(buf[0], 0x0a);
	free(buf);
}

Test(agent, the_backoff_doubles_with_jitter_up_to_a_bound)
{
	static const struct { unsigned failures; double jitter; u64 want; } cases[] = {
		{ 1, 0, PUSH_BACKOFF_MIN_NS / 2 },
		{ 1, 0.999999, PUSH_BACKOFF_MIN_NS - 1000 },
		{ 2, 0, PUSH_BACKOFF_MIN_NS },
		{ 3, 0.5, 3 * PUSH_BACKOFF_MIN_NS },
		{ 40, 0, PUSH_BACKOFF_MAX_NS / 2 },
		{ 40, 1, PUSH_BACKOFF_MAX_NS },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		u64 got = push__backoff_ns(cases[i].failures, cases[i].jitter);

		cr_expect(got >= cases[i].want && got <= cases[i].want + 1000, "%u failures, jitter %g: %llu",
			  cases[i].failures, cases[i].jitter, (unsigned long long)got);
	}
}

Test(agent, urls_that_do_not_parse_are_refused_with_why)
{
	static const char *good[] = { "http://localhost:4040", "https://pyroscope.example/",
				      "http://127.0.0.1:4318/base" };
	static const char *bad[] = { "localhost:4040", "ftp://x", "http://", "http//x", "" };
	char why[128];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		cr_expect_eq(push__check_url(good[i], why, sizeof(why)), 0, "%s: %s", good[i], why);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		cr_expect_eq(push__check_url(bad[i], why, sizeof(why)), -EINVAL, "%s", bad[i]);
		cr_expect_gt(strlen(why), 0, "%s: a reason", bad[i]);
	}
}

Test(agent, config_takes_the_sinks_keys_and_checks_the_urls)
{
	struct agent_config c = {};
	const char *text =
		"otlp = http://collector:4318\n"
		"spool_dir = /var/spool/hsbpf\n"
		"spool_max = 5000000\n"
		"metrics_listen = 127.0.0.1:9464\n"
		"cacert = /etc/ssl/ca.pem\n";

	cr_assert_eq(agent_config__parse(&c, text, "t.conf"), 0);
	cr_expect_str_eq(c.otlp, "http://collector:4318");
	cr_expect_str_eq(c.spool_dir, "/var/spool/hsbpf");
	cr_expect_eq(c.spool_max, 5000000);
	cr_expect_str_eq(c.metrics_listen, "127.0.0.1:9464");
	cr_expect_str_eq(c.cacert, "/etc/ssl/ca.pem");
	cr_expect_eq(agent_config__parse(&c, "server = pyroscope:4040\n", "t.conf"), -EINVAL);
	cr_expect_eq(agent_config__parse(&c, "otlp = ftp://x\n", "t.conf"), -EINVAL);
	cr_expect_str_eq(c.otlp, "http://collector:4318");
}

Test(agent, labels_are_sanitized_as_pyroscope_takes_them)
{
	static const struct {
		const char *name, *value, *want_name, *want_value;
		bool changed;
	} cases[] = {
		{ "team", "perf", "team", "perf", false },
		{ "my-team", "a/b c", "my_team", "a/b c", true },
		{ "1st", "x", "_st", "x", true },
		{ "k8s.pod", "web-0", "k8s_pod", "web-0", true },
		{ "env", "caf\xc3\xa9", "env", "caf\xc3\xa9", false },
		{ "env", "bad\xff" "byte", "env", "bad_byte", true },
		{ "env", "tab\there", "env", "tab_here", true },
		{ "", "x", "_", "x", true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[64], value[128];
		bool changed = push__sanitize_label(cases[i].name, cases[i].value, name, sizeof(name),
						    value, sizeof(value));

		cr_expect_str_eq(name, cases[i].want_name, "case %zu", i);
		cr_expect_str_eq(value, cases[i].want_value, "case %zu", i);
		cr_expect_eq(changed, cases[i].changed, "case %zu", i);
	}
}
