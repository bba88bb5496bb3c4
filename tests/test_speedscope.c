// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* speedscope export: valid against the schema speedscope's npm package ships (checked by
 * ajv), one sampled profile per process, the heaviest first, stacks root first, weights in
 * the profile's unit; for a profile with stacks and one without; with time buckets, an evented
 * time line per thread. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/callchain.h"
#include "export_check.h"
#include "helpers.h"
#include "hsbpf.h"
#include "profile/profile.h"
#include "export/speedscope.h"
#include "symbols/symbolizer.h"

TestSuite(speedscope, .fini = cleanup_tmpdir);

#define K 0xffffffff81000000ull

/* pid 7 "busy": k_leaf <- k_entry 3 times (weight 30), a lost stack once (10); pid 8 "idle":
 * k_leaf once (10) */
static struct profile *made_profile(void)
{
	struct profile *p = profile__new();
	u64 k[] = { K + 0x100, K + 0x3105 };
	s64 a, lost;

	cr_assert(p);
	snprintf(p->meta.unit, sizeof(p->meta.unit), "ns");
	cr_assert_eq(profile__add_comm(p, 7, 0, "busy", false), 0);
	cr_assert_eq(profile__add_comm(p, 8, 0, "idle", false), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x80, "k_leaf"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x3000, "k_entry"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x4000, ""), 0);
	a = profile__add_stack(p, k, 2, 0, 0);
	lost = profile__add_stack(p, NULL, 0, PROFILE_STACK_LOST, 0);
	cr_assert(a >= 0 && lost >= 0);
	struct profile_stack_sample ss[] = {
		{ .pid = 8, .flags = HSBPF_KEY_KERNEL, .kernel = a + 1, .count = 1, .weight = 10 },
		{ .pid = 7, .flags = HSBPF_KEY_KERNEL, .kernel = a + 1, .count = 3, .weight = 30 },
		{ .pid = 7, .user = lost + 1, .count = 1, .weight = 10 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(ss); i++)
		cr_assert_eq(profile__add_stack_sample(p, &ss[i]), 0);
	cr_assert_eq(profile__add_sample(p, &(struct profile_sample){ .pid = 7, .flags = HSBPF_KEY_KERNEL,
			.ip = K + 0x100, .count = 4, .weight = 40 }), 0);
	cr_assert_eq(profile__add_sample(p, &(struct profile_sample){ .pid = 8, .flags = HSBPF_KEY_KERNEL,
			.ip = K + 0x100, .count = 1, .weight = 10 }), 0);
	profile__finish(p);
	return p;
}

Test(speedscope, one_sampled_profile_per_process_heaviest_first_stacks_root_first)
{
	struct profile *p = made_profile();
	struct symbolizer *sy = symbolizer__new(p);
	struct callchain *cc = sy ? callchain__new(p, sy) : NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	cr_assert(cc && out);
	cr_assert_eq(speedscope__write(cc, sy, "made", out), 0);
	fclose(out);
	/* functions in callchain's order (sorted): k_entry 0, k_leaf 1; then the lost frame, 2 */
	cr_expect(strstr(buf, "\"frames\":[{\"name\":\"k_entry\",\"file\":\"[kernel.kallsyms]\"},"
			 "{\"name\":\"k_leaf\",\"file\":\"[kernel.kallsyms]\"},"
			 "{\"name\":\"[stack lost: map full]\"}]"), "%s", buf);
	cr_expect(strstr(buf, "\"profiles\":[{\"type\":\"sampled\",\"name\":\"busy (pid 7)\","
			 "\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":40,"
			 "\"samples\":[[0,1],[2]],\"weights\":[30,10]},"
			 "{\"type\":\"sampled\",\"name\":\"idle (pid 8)\",\"unit\":\"nanoseconds\","
			 "\"startValue\":0,\"endValue\":10,\"samples\":[[0,1]],\"weights\":[10]}]"), "%s", buf);
	free(buf);
	callchain__free(cc);
	symbolizer__free(sy);
	profile__free(p);
}

/* off-CPU time: weighed in ns (each block's time, not report's microsecond counts), the
 * profile's name saying it is time blocked */
Test(speedscope, off_cpu_time_is_weighed_in_nanoseconds_and_named)
{
	struct profile *p = made_profile();
	struct symbolizer *sy = symbolizer__new(p);
	struct callchain *cc;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	snprintf(p->meta.offcpu, sizeof(p->meta.offcpu), "off");
	for (size_t i = 0; i < p->nr_stack_samples; i++)
		p->stack_samples[i].count = 1000 * p->stack_samples[i].count;	/* the time view's */
	cc = sy ? callchain__new(p, sy) : NULL;
	cr_assert(cc && out);
	cr_assert_eq(speedscope__write(cc, sy, "made", out), 0);
	fclose(out);
	cr_expect(strstr(buf, "\"name\":\"busy (pid 7), off-CPU time\",\"unit\":\"nanoseconds\","
			 "\"startValue\":0,\"endValue\":40,"), "%s", buf);
	cr_expect(strstr(buf, "\"weights\":[30,10]"), "%s", buf);
	free(buf);
	callchain__free(cc);
	symbolizer__free(sy);
	profile__free(p);
}

/* --wall: an off-CPU stack's frames are their own ("FUNC [off-CPU]", after the lost frame), so
 * that the same function on and off the CPU makes two towers, as in the flame graphs */
Test(speedscope, wall_off_cpu_frames_are_their_own)
{
	struct profile *p = made_profile();
	struct symbolizer *sy = symbolizer__new(p);
	struct callchain *cc;
	char *buf = NULL, path[1100];
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	snprintf(p->meta.offcpu, sizeof(p->meta.offcpu), "wall");
	/* busy's 3 samples of k_entry -> k_leaf were off the CPU; idle's one, on it */
	for (size_t i = 0; i < p->nr_stack_samples; i++)
		if (p->stack_samples[i].pid == 7 && p->stack_samples[i].kernel)
			p->stack_samples[i].flags |= HSBPF_KEY_OFFCPU | HSBPF_OFFCPU_S << HSBPF_KEY_STATE_SHIFT;
	cc = sy ? callchain__new(p, sy) : NULL;
	cr_assert(cc && out);
	cr_assert_eq(speedscope__write(cc, sy, "made", out), 0);
	fclose(out);
	cr_expect(strstr(buf, "{\"name\":\"[stack lost: map full]\"},"
			 "{\"name\":\"k_entry [off-CPU]\",\"file\":\"[kernel.kallsyms]\"},"
			 "{\"name\":\"k_leaf [off-CPU]\",\"file\":\"[kernel.kallsyms]\"}]"), "%s", buf);
	cr_expect(strstr(buf, "\"name\":\"busy (pid 7), on- and off-CPU time\",\"unit\":\"nanoseconds\","
			 "\"startValue\":0,\"endValue\":40,\"samples\":[[3,4],[2]],\"weights\":[30,10]}"),
		  "%s", buf);
	cr_expect(strstr(buf, "\"samples\":[[0,1]],\"weights\":[10]"), "idle's on-CPU frames: %s", buf);
	free(buf);
	callchain__free(cc);
	symbolizer__free(sy);
	/* and valid: speedscope's schema */
	snprintf(path, sizeof(path), "%s/wall.hsbpf", tmpdir());
	cr_assert_eq(profile__write(p, path), 0);
	profile__free(p);
	check_speedscope(path);
}

Test(speedscope, the_schema_validates_exports_with_and_without_stacks)
{
	struct profile *p = made_profile();
	char path[1100];

	snprintf(path, sizeof(path), "%s/made.hsbpf", tmpdir());
	cr_assert_eq(profile__write(p, path), 0);
	profile__free(p);
	check_speedscope(path);
	check_speedscope(env_path("OUTPUT", ".output", "../tests/fixtures/profiles/v1.3-callpaths-g.hsbpf"));
	check_speedscope(env_path("OUTPUT", ".output", "../tests/fixtures/profiles/v1.2-hot7030.hsbpf"));
}

/* the validator is not a rubber stamp: a file without its frames is refused */
Test(speedscope, the_schema_refuses_a_broken_file)
{
	const char *validator = env_path("OUTPUT", ".output", "../tests/speedscope/validate.js");
	struct run_result r;
	char path[1100];
	FILE *f;

	snprintf(path, sizeof(path), "%s/broken.json", tmpdir());
	f = fopen(path, "w");
	cr_assert(f);
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"profiles\":"
	      "[{\"type\":\"sampled\",\"name\":\"x\",\"unit\":\"nanoseconds\",\"startValue\":0,"
	      "\"endValue\":1,\"samples\":[[0]],\"weights\":[1]}]}", f);
	fclose(f);
	run(&r, "node %s %s", validator, path);
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "shared"), "%s", r.err);
}

/* a C++ name of over 1,000 characters is the frame's name whole */
Test(speedscope, long_names_are_kept_whole)
{
	char *want, *buf = NULL, *frame;
	struct profile *p = long_name_profile(&want);
	struct symbolizer *sy = symbolizer__new(p);
	struct callchain *cc = sy ? callchain__new_flat(p, sy) : NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	cr_assert(cc && out);
	cr_assert_eq(speedscope__write(cc, sy, "long", out), 0);
	fclose(out);
	cr_assert(asprintf(&frame, "{\"name\":\"%s\",\"file\":\"[JIT] perf-9.map\"}", want) > 0);
	cr_expect(strstr(buf, frame), "%s", buf);
	free(frame);
	free(buf);
	free(want);
	callchain__free(cc);
	symbolizer__free(sy);
	profile__free(p);
}

/* pid 7 "busy", thread 7, buckets of 10 ms: in bucket 0, k_leaf <- k_entry for 3 ms and
 * k_other <- k_entry for 2 ms; in bucket 2, k_leaf <- k_entry for the whole 10 ms */
static struct profile *timeline_profile(void)
{
	const u64 ms = 1000000;
	struct profile *p = profile__new();
	s64 a, b;

	cr_assert(p);
	snprintf(p->meta.unit, sizeof(p->meta.unit), "ns");
	snprintf(p->meta.event, sizeof(p->meta.event), "cpu-clock");
	snprintf(p->meta.sample_keys, sizeof(p->meta.sample_keys), "tid,time");
	p->meta.time_bucket_ns = 10 * ms;
	cr_assert_eq(profile__add_comm(p, 7, 0, "busy", false), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x80, "k_leaf"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x1000, "k_other"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x3000, "k_entry"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x4000, ""), 0);
	a = profile__add_stack(p, (u64[]){ K + 0x100, K + 0x3105 }, 2, 0, 0);
	b = profile__add_stack(p, (u64[]){ K + 0x1010, K + 0x3105 }, 2, 0, 0);
	cr_assert(a >= 0 && b >= 0);
	const struct { s64 st; u64 ip, w; u32 time; } s[] = {
		{ b, K + 0x1010, 2 * ms, 0 }, { a, K + 0x100, 3 * ms, 0 }, { a, K + 0x100, 10 * ms, 2 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(s); i++) {
		struct profile_sample_key k = { .tid = 7, .time = s[i].time };

		cr_assert_eq(profile__add_stack_sample_keyed(p, &(struct profile_stack_sample){
			.pid = 7, .flags = HSBPF_KEY_KERNEL, .kernel = s[i].st + 1, .count = s[i].w / ms,
			.weight = s[i].w }, &k), 0);
		cr_assert_eq(profile__add_sample_keyed(p, &(struct profile_sample){ .pid = 7,
			.flags = HSBPF_KEY_KERNEL, .ip = s[i].ip, .count = s[i].w / ms, .weight = s[i].w },
			&k), 0);
	}
	profile__finish(p);
	return p;
}

Test(speedscope, time_buckets_give_an_evented_time_line_per_thread)
{
	struct profile *p = timeline_profile();
	struct symbolizer *sy = symbolizer__new(p);
	struct callchain *cc = sy ? callchain__new(p, sy) : NULL;
	char *buf = NULL, path[600];
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	cr_assert(cc && out);
	cr_assert_eq(speedscope__write(cc, sy, "made", out), 0);
	fclose(out);
	/* k_entry 0, k_leaf 1, k_other 2: each bucket's stacks from its start, root first in
	 * order, k_entry kept open between its two callees; closed over the gap (bucket 1) */
#define O(f, t) "{\"type\":\"O\",\"frame\":" #f ",\"at\":" #t "}"
#define C(f, t) "{\"type\":\"C\",\"frame\":" #f ",\"at\":" #t "}"
	cr_expect(strstr(buf, "{\"type\":\"evented\",\"name\":\"busy (pid 7, tid 7): time line\","
			 "\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":30000000,\"events\":["
			 O(0, 0) "," O(1, 0) "," C(1, 3000000) "," O(2, 3000000) "," C(2, 5000000) ","
			 C(0, 5000000) "," O(0, 20000000) "," O(1, 20000000) "," C(1, 30000000) ","
			 C(0, 30000000) "]}"), "%s", buf);
#undef O
#undef C
	/* the sampled profile comes first, unchanged */
	cr_expect(strstr(buf, "\"profiles\":[{\"type\":\"sampled\",\"name\":\"busy (pid 7)\""), "%s", buf);
	free(buf);
	/* and speedscope's schema takes it */
	snprintf(path, sizeof(path), "%s/timeline.data", tmpdir());
	cr_assert_eq(profile__write(p, path), 0);
	check_speedscope(path);
	callchain__free(cc);
	symbolizer__free(sy);
	profile__free(p);
}
