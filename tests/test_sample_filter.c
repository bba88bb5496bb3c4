// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sample_filter: known samples with threads, CPUs and time buckets, kept or dropped whole by
 * each filter, flat and stack samples alike; the 1.4 sections round-trip and are checked;
 * a 1.2 profile still reads. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <string.h>
#include "helpers.h"
#include "profile/profile.h"
#include "report/sample_filter.h"
#include "report/callchain.h"
#include "report/hist.h"
#include "hsbpf.h"
#include "symbols/symbolizer.h"

TestSuite(sample_filter, .fini = cleanup_tmpdir);

/* pid 10: threads 10 (main), 11 (alpha), 12 (beta), each tid * 10 + bucket samples; three time buckets of 100 ms whose first
 * starts 50 ms before the recording; CPU = tid - 10 */
static struct profile *keyed_profile(void)
{
	struct profile *p = profile__new();

	cr_assert(p);
	strcpy(p->meta.sample_keys, "tid,cpu,time");
	p->meta.start_mono_ns = 1000000000;
	p->meta.time_origin_ns = 950000000;
	p->meta.time_bucket_ns = 100000000;
	for (u32 tid = 10; tid <= 12; tid++)
		for (u32 t = 0; t < 3; t++) {
			struct profile_sample s = { .pid = 10, .ip = 0x1000 + tid, .count = tid * 10 + t,
						    .weight = 1 };
			struct profile_sample_key k = { .tid = tid, .cpu = tid - 10, .time = t };
			struct profile_stack_sample ss = { .pid = 10, .count = 1, .weight = 1 };

			cr_assert_eq(profile__add_sample_keyed(p, &s, &k), 0);
			cr_assert_eq(profile__add_stack_sample_keyed(p, &ss, &k), 0);
		}
	cr_assert_eq(profile__add_comm(p, 10, 0, "workers", false), 0);
	cr_assert_eq(profile__add_thread_comm(p, 10, 11, 0, "thread-1"), 0);
	cr_assert_eq(profile__add_thread_comm(p, 10, 11, 5, "worker-alpha"), 0);
	cr_assert_eq(profile__add_thread_comm(p, 10, 12, 5, "worker-beta"), 0);
	profile__finish(p);
	return p;
}

static u64 filtered(struct sample_filter f, u64 *stacks)
{
	struct profile *p = keyed_profile();
	u64 dropped, n;

	cr_assert_eq(sample_filter__apply(&f, p, NULL, &dropped), 0);
	n = profile__total_samples(p);
	cr_expect_eq(n + dropped, 999);
	cr_expect_eq(p->nr_sample_keys, p->nr_samples);
	cr_expect_eq(p->nr_stack_sample_keys, p->nr_stack_samples);
	*stacks = p->nr_stack_samples;
	profile__free(p);
	return n;
}

Test(sample_filter, each_filter_keeps_its_samples_whole)
{
	struct sample_filter f = {};
	u64 st;

	cr_expect_eq(filtered(f, &st), 999);
	cr_expect_eq(st, 9);
	cr_expect_eq(filtered((struct sample_filter){ .tids = "11" }, &st), 333);
	cr_expect_eq(st, 3);
	cr_expect_eq(filtered((struct sample_filter){ .tids = "12,10" }, &st), 303 + 363);
	cr_expect_eq(st, 6);
	cr_expect_eq(filtered((struct sample_filter){ .pids = "11" }, &st), 0);
	cr_expect_eq(filtered((struct sample_filter){ .pids = "10" }, &st), 999);
	cr_expect_eq(filtered((struct sample_filter){ .cpus = "1-2" }, &st), 333 + 363);
	cr_expect_eq(st, 6);
	/* buckets' middles: -0.0 (bucket 0 starts 50 ms early), 0.1, 0.2 s */
	f = (struct sample_filter){};
	cr_assert_eq(sample_filter__parse_time(&f, "0.05,0.15"), 0);
	cr_expect_eq(filtered(f, &st), 101 + 111 + 121);
	cr_expect_eq(st, 3);
	cr_assert_eq(sample_filter__parse_time(&f, ",0.05"), 0);
	cr_expect_eq(filtered(f, &st), 100 + 110 + 120);
	cr_assert_eq(sample_filter__parse_time(&f, "0.15,"), 0);
	cr_expect_eq(filtered(f, &st), 102 + 112 + 122);
}

Test(sample_filter, bad_times_and_missing_keys_are_refused, .init = cr_redirect_stderr)
{
	static const char *const bad[] = { "", "1", "2,1", "1,1", "a,", ",b", "1,2,3", "-1,", "nan," };
	struct sample_filter f = {};
	struct profile *p = keyed_profile();
	u64 dropped;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(sample_filter__parse_time(&f, bad[i]), -EINVAL, "'%s'", bad[i]);
	strcpy(p->meta.sample_keys, "cpu");
	f = (struct sample_filter){ .tids = "11" };
	cr_expect_eq(sample_filter__apply(&f, p, NULL, &dropped), -EINVAL);
	f = (struct sample_filter){ .cpus = "1" };
	cr_expect_eq(sample_filter__apply(&f, p, NULL, &dropped), 0);
	f = (struct sample_filter){ .by_time = true, .time_end = 1 };
	cr_expect_eq(sample_filter__apply(&f, p, NULL, &dropped), -EINVAL);
	profile__free(p);
}

/* --pid and --tid lists: numbers only, none empty (as record's -p), matched by value */
Test(sample_filter, pid_and_tid_lists_are_numbers, .init = cr_redirect_stderr)
{
	static const char *const bad[] = { "abc", "1x", ",,,", "", "1,", ",1", "1,,2", "-1", " 1",
					   "4294967296", "1 2" };
	static const char *const good[] = { "1", "0", "10,11", "007", "4294967295", "0x0a" };
	u64 st;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(sample_filter__parse_ids(bad[i], "--pid"), -EINVAL, "'%s'", bad[i]);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		cr_expect_eq(sample_filter__parse_ids(good[i], "--tid"), 0, "'%s'", good[i]);
	cr_expect_eq(filtered((struct sample_filter){ .tids = "011,0012" }, &st), 333 + 363);
	cr_expect_eq(filtered((struct sample_filter){ .pids = "0x0a" }, &st), 999);
}

/* the thread a name belongs to, as it changes; the 1.4 sections round-trip */
Test(sample_filter, thread_names_and_keys_round_trip)
{
	struct profile *p = keyed_profile(), *q;
	char path[512];

	cr_expect_str_eq(profile__thread_name(p, 10, 11, 1), "thread-1");
	cr_expect_str_eq(profile__thread_name(p, 10, 11, UINT64_MAX), "worker-alpha");
	cr_expect_str_eq(profile__thread_name(p, 10, 12, 0), "worker-beta");	/* its first */
	cr_expect_null(profile__thread_name(p, 10, 13, 0));
	cr_expect_str_eq(sample_filter__thread_comm(p, 10, 10, "workers"), "workers");
	snprintf(path, sizeof(path), "%s/k.data", tmpdir());
	cr_assert_eq(profile__write(p, path), 0);
	cr_assert_eq(profile__read(path, &q), 0);
	cr_expect_eq(q->nr_sample_keys, 9);
	cr_expect_eq(q->nr_stack_sample_keys, 9);
	cr_expect_eq(memcmp(q->sample_keys, p->sample_keys, 9 * sizeof(*p->sample_keys)), 0);
	cr_expect_eq(q->nr_thread_comms, 3);
	cr_expect_str_eq(profile__thread_name(q, 10, 12, 9), "worker-beta");
	cr_expect(profile__has_key(q, "tid") && profile__has_key(q, "time") &&
		  !profile__has_key(q, "ti"));
	cr_expect_eq(q->meta.time_bucket_ns, 100000000);
	profile__free(q);
	profile__free(p);
}

/* keys fill in with zeros for samples added before the first keyed one; a table of keys that
 * does not match its samples is refused */
Test(sample_filter, keys_stay_parallel, .init = cr_redirect_stderr)
{
	struct profile *p = profile__new(), *q;
	struct profile_sample s = { .pid = 1, .count = 1 };
	struct profile_sample_rec rec = { .pid = 1, .count = 1 };
	struct profile_sample_key k = { .tid = 7 };
	struct test_section secs[2];
	size_t size;
	void *buf;

	cr_assert_eq(profile__add_sample_keyed(p, &s, NULL), 0);
	cr_expect_eq(p->nr_sample_keys, 0);
	cr_assert_eq(profile__add_sample_keyed(p, &s, &k), 0);
	cr_assert_eq(p->nr_sample_keys, 2);
	cr_expect_eq(profile__sample_key(p, 0)->tid, 0);
	cr_expect_eq(profile__sample_key(p, 1)->tid, 7);
	profile__free(p);

	secs[0] = (struct test_section){ SEC_SAMPLES, &rec, sizeof(rec) };
	secs[1] = (struct test_section){ SEC_SAMPLE_KEYS, (struct profile_sample_key[2]){}, 32 };
	buf = build_container(PROFILE_MAGIC, 1, 4, secs, 2, &size);
	cr_expect_eq(profile__parse(buf, size, "k", &q), -EINVAL);
	free(buf);
}

/* a profile of format 1.2, committed: it reads, without keys */
Test(sample_filter, old_profiles_read)
{
	const char *path = env_path("OUTPUT", ".output", "../tests/fixtures/profiles/v1.2-hot7030.hsbpf");
	struct profile *p;

	cr_assert_eq(profile__read(path, &p), 0);
	cr_expect_gt(p->nr_samples, 0);
	cr_expect_eq(p->nr_sample_keys, 0);
	cr_expect_eq(p->nr_thread_comms, 0);
	cr_expect(!profile__has_key(p, "tid"));
	profile__free(p);
}

/* two processes with dwarf stacks: pid 1's 4 frames by tables (30 samples), pid 2's 4 by frame
 * pointer (10 samples): 25% of the whole's user frames by frame pointer; 12 samples dropped */
static struct profile *two_stack_profile(void)
{
	struct profile *p = profile__new();
	const u64 ips[4] = { 0x1000, 0x2000, 0x3000, 0x4000 };

	cr_assert(p);
	strcpy(p->meta.call_graph, "dwarf");
	strcpy(p->meta.event, "cpu-clock");
	p->stats.dropped_full = 12;
	p->stats.stack_frames = 160;
	p->stats.stack_fp_frames = 40;
	for (u32 pid = 1; pid <= 2; pid++) {
		s64 st = profile__add_stack(p, ips, 4, HSBPF_STACK_COMPLETE, pid == 2 ? 4 : 0);
		struct profile_sample s = { .pid = pid, .ip = 0x1000, .count = pid == 1 ? 30 : 10,
					    .weight = 1 };
		struct profile_stack_sample ss = { .pid = pid, .user = st + 1, .count = s.count,
						   .weight = s.count };

		cr_assert_geq(st, 0);
		cr_assert_eq(profile__add_sample(p, &s), 0);
		cr_assert_eq(profile__add_stack_sample(p, &ss), 0);
	}
	profile__finish(p);
	return p;
}

/* the header's figures: the frame-pointer share follows --pid; the dropped count, kept apart
 * from the samples, says it is the whole profile's */
Test(sample_filter, header_figures_follow_the_filters)
{
	static const struct {
		const char *pids;
		const char *fp, *first;	/* in the stacks line; in the first line (NULL: absent) */
	} cases[] = {
		{ NULL, "; 25.0% of user frames by frame pointer", "40 samples, 12 dropped\n" },
		{ "2", "; 100.0% of user frames by frame pointer",
		  "10 samples (the filters left out 30), 12 dropped (in the whole profile)\n" },
		{ "1", NULL, "30 samples (the filters left out 10), 12 dropped (in the whole profile)\n" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct profile *p = two_stack_profile();
		struct sample_filter f = { .pids = cases[i].pids };
		struct symbolizer *sy = symbolizer__new(p);
		enum sort_key k[1] = { SORT_PID };
		struct hist *h = hist__new(k, 1);
		char *buf = NULL;
		size_t len = 0;
		u64 dropped;
		FILE *out;

		cr_assert(sy && h);
		cr_assert_eq(sample_filter__apply(&f, p, sy, &dropped), 0);
		cr_assert_eq(hist__add_profile(h, p, sy), 0);
		hist__sort(h);
		out = open_memstream(&buf, &len);
		hist__print(h, p, OUT_TEXT, 0, out);
		fclose(out);
		cr_expect(strstr(buf, cases[i].first), "%zu: %s", i, buf);
		if (cases[i].fp)
			cr_expect(strstr(buf, cases[i].fp), "%zu: %s", i, buf);
		else
			cr_expect_null(strstr(buf, "by frame pointer"), "%zu: %s", i, buf);
		cr_expect(strstr(buf, "complete 100.0%"), "%zu: %s", i, buf);
		free(buf);
		hist__free(h);
		symbolizer__free(sy);
		profile__free(p);
	}
}
