// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* speedscope export: valid against the schema speedscope's npm package ships (checked by
 * ajv), one sampled profile per process, the heaviest first, stacks root first, weights in
 * the profile's unit; for a profile with stacks and one without. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "callchain.h"
#include "export_check.h"
#include "helpers.h"
#include "hsbpf.h"
#include "profile.h"
#include "speedscope.h"
#include "symbolizer.h"

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
