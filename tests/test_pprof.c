// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* pprof export: a profile made by hand (kernel stacks named by its own kernel symbols, a user
 * stack in an object that is not on the machine, a lost stack, two processes, a container)
 * encoded, gunzipped and decoded again by protobuf-c, each field checked; then committed
 * profiles, with stacks and without, read by go tool pprof, its numbers equal to hsbpf
 * report's; and the command's bad input. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "report/callchain.h"
#include "export_check.h"
#include "helpers.h"
#include "hsbpf.h"
#include "export/pprof.h"
#include "profile/profile.h"
#include "record/memory.h"
#include "profile.pb-c.h"
#include "symbols/symbolizer.h"

TestSuite(pprof, .fini = cleanup_tmpdir);

#define K 0xffffffff81000000ull
#define CGROUP "system.slice/docker-1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d1a2b.scope"
static const u8 build_id[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

/* pid 7 "proc" in a docker container: k_leaf <- k_mid <- k_entry 3 times (30 ns), twice with
 * the same entry; k_leaf <- k_entry once; a user stack of 3 frames in /nonexistent/libx.so
 * (build-id deadbeef...) 2 times; with_lost, a lost stack once (its sample in the library).
 * pid 8 "other": k_leaf <- k_entry once. The flat histogram of the same samples. */
static struct profile *made_profile(bool ns, bool with_lost)
{
	struct profile *p = profile__new();
	u64 k1[] = { K + 0x100, K + 0x1105, K + 0x3105 }, k2[] = { K + 0x104, K + 0x3105 };
	u64 user[] = { 0x7f0000001010, 0x7f0000002020, 0x7f0000003030 };
	s64 a, b, u, lost;

	cr_assert(p);
	snprintf(p->meta.event, sizeof(p->meta.event), "%s", ns ? "cpu-clock" : "page-faults");
	snprintf(p->meta.unit, sizeof(p->meta.unit), "%s", ns ? "ns" : "events");
	p->meta.period = ns ? 1000000 : 1;
	p->meta.start_realtime_ns = 1700000000123456789ull;
	p->meta.duration_ns = 2500000000ull;
	cr_assert_eq(profile__add_comm(p, 7, 0, "proc", false), 0);
	cr_assert_eq(profile__add_comm(p, 8, 0, "other", false), 0);
	cr_assert_eq(profile__add_cgroup(p, 42, CGROUP), 0);
	cr_assert_eq(profile__add_ksym(p, K, "k_start"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x80, "k_leaf"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x1000, "k_mid"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x3000, "k_entry"), 0);
	cr_assert_eq(profile__add_ksym(p, K + 0x4000, ""), 0);
	cr_assert_eq(profile__add_mapping(p, 7, 0, 0x7f0000000000, 0x10000, 0, "/nonexistent/libx.so",
					  build_id, sizeof(build_id)), 0);
	a = profile__add_stack(p, k1, 3, 0, 0);
	b = profile__add_stack(p, k2, 2, 0, 0);
	u = profile__add_stack(p, user, 3, HSBPF_STACK_COMPLETE, 0);
	lost = profile__add_stack(p, NULL, 0, PROFILE_STACK_LOST, 0);
	cr_assert(a >= 0 && b >= 0 && u >= 0 && lost >= 0);
	struct profile_stack_sample ss[] = {
		{ .pid = 7, .flags = HSBPF_KEY_KERNEL, .cgroup_id = 42, .kernel = a + 1, .count = 3, .weight = 30 },
		{ .pid = 7, .flags = HSBPF_KEY_KERNEL, .cgroup_id = 42, .kernel = b + 1, .count = 1, .weight = 10 },
		{ .pid = 7, .cgroup_id = 42, .user = u + 1, .count = 2, .weight = 20 },
		{ .pid = 7, .cgroup_id = 42, .user = lost + 1, .count = 1, .weight = 10 },
		{ .pid = 8, .flags = HSBPF_KEY_KERNEL, .kernel = b + 1, .count = 1, .weight = 10 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(ss); i++)
		if (with_lost || i != 3)
			cr_assert_eq(profile__add_stack_sample(p, &ss[i]), 0);
	struct profile_sample flat[] = {
		{ .pid = 7, .flags = HSBPF_KEY_KERNEL, .cgroup_id = 42, .ip = K + 0x100, .count = 3, .weight = 30 },
		{ .pid = 7, .flags = HSBPF_KEY_KERNEL, .cgroup_id = 42, .ip = K + 0x104, .count = 1, .weight = 10 },
		{ .pid = 7, .cgroup_id = 42, .ip = 0x7f0000001010, .count = 2 + with_lost, .weight = 20 + 10 * with_lost },
		{ .pid = 8, .flags = HSBPF_KEY_KERNEL, .ip = K + 0x104, .count = 1, .weight = 10 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(flat); i++)
		cr_assert_eq(profile__add_sample(p, &flat[i]), 0);
	profile__finish(p);
	return p;
}

static u8 *gunzip(const u8 *in, size_t len, size_t *out_len)
{
	size_t cap = 1 << 20;
	u8 *out = malloc(cap);
	z_stream z = {};

	cr_assert(out);
	cr_assert_eq(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (u8 *)in;
	z.avail_in = len;
	z.next_out = out;
	z.avail_out = cap;
	cr_assert_eq(inflate(&z, Z_FINISH), Z_STREAM_END, "not one whole gzip stream");
	*out_len = z.total_out;
	inflateEnd(&z);
	return out;
}

/* the export of p, decoded */
static Perftools__Profiles__Profile *decoded(struct profile *p, bool flat)
{
	struct symbolizer *sy = symbolizer__new(p);
	struct callchain *cc = flat ? callchain__new_flat(p, sy) : callchain__new(p, sy);
	Perftools__Profiles__Profile *pb;
	size_t len, raw_len;
	u8 *buf, *raw;

	cr_assert(sy && cc);
	cr_assert_eq(pprof__encode(cc, sy, &buf, &len), 0);
	cr_assert(len > 18 && buf[0] == 0x1f && buf[1] == 0x8b, "not gzip");
	raw = gunzip(buf, len, &raw_len);
	pb = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	cr_assert(pb, "protobuf-c cannot decode the export");
	free(raw);
	free(buf);
	callchain__free(cc);
	symbolizer__free(sy);
	return pb;
}

static const char *str(const Perftools__Profiles__Profile *pb, int64_t i)
{
	cr_assert(i >= 0 && (size_t)i < pb->n_string_table, "string %lld of %zu", (long long)i,
		  pb->n_string_table);
	return pb->string_table[i];
}

static const Perftools__Profiles__Location *loc(const Perftools__Profiles__Profile *pb, u64 id)
{
	cr_assert(id >= 1 && id <= pb->n_location);
	cr_assert_eq(pb->location[id - 1]->id, id);
	return pb->location[id - 1];
}

static const char *func_name(const Perftools__Profiles__Profile *pb, u64 loc_id)
{
	const Perftools__Profiles__Location *l = loc(pb, loc_id);
	u64 f;

	cr_assert_eq(l->n_line, 1);
	f = l->line[0]->function_id;
	cr_assert(f >= 1 && f <= pb->n_function);
	cr_assert_eq(pb->function[f - 1]->id, f);
	return str(pb, pb->function[f - 1]->name);
}

/* "k_leaf k_mid k_entry": the sample's functions, leaf first */
static void sample_names(const Perftools__Profiles__Profile *pb, const Perftools__Profiles__Sample *s,
			 char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < s->n_location_id; i++)
		n += snprintf(buf + n, size - n, "%s%s", i ? " " : "", func_name(pb, s->location_id[i]));
}

static const Perftools__Profiles__Label *label(const Perftools__Profiles__Profile *pb,
					       const Perftools__Profiles__Sample *s, const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (!strcmp(str(pb, s->label[i]->key), key))
			return s->label[i];
	return NULL;
}

Test(pprof, the_message_holds_every_stack_leaf_first_with_its_values_and_labels)
{
	struct profile *p = made_profile(true, true);
	Perftools__Profiles__Profile *pb = decoded(p, false);
	static const struct {
		const char *names;
		s64 count, weight;
		u32 pid;
	} want[] = {
		{ "k_leaf k_mid k_entry", 3, 30, 7 },
		{ "k_leaf k_entry", 1, 10, 7 },
		{ "[unknown in libx.so] [unknown in libx.so] [unknown in libx.so]", 2, 20, 7 },
		{ PPROF_LOST_FRAME, 1, 10, 7 },
		{ "k_leaf k_entry", 1, 10, 8 },
	};
	char names[512];

	cr_assert_str_eq(pb->string_table[0], "");
	cr_assert_eq(pb->n_sample_type, 2);
	cr_expect_str_eq(str(pb, pb->sample_type[0]->type), "samples");
	cr_expect_str_eq(str(pb, pb->sample_type[0]->unit), "count");
	cr_expect_str_eq(str(pb, pb->sample_type[1]->type), "cpu");
	cr_expect_str_eq(str(pb, pb->sample_type[1]->unit), "nanoseconds");
	cr_assert(pb->period_type);
	cr_expect_str_eq(str(pb, pb->period_type->type), "cpu");
	cr_expect_str_eq(str(pb, pb->period_type->unit), "nanoseconds");
	cr_expect_eq(pb->period, 1000000);
	cr_expect_eq(pb->time_nanos, 1700000000123456789ll);
	cr_expect_eq(pb->duration_nanos, 2500000000ll);
	cr_assert_eq(pb->n_sample, ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];
		const Perftools__Profiles__Label *l;

		sample_names(pb, s, names, sizeof(names));
		cr_expect_str_eq(names, want[i].names, "sample %zu", i);
		cr_assert_eq(s->n_value, 2);
		cr_expect_eq(s->value[0], want[i].count, "sample %zu", i);
		cr_expect_eq(s->value[1], want[i].weight, "sample %zu", i);
		l = label(pb, s, "pid");
		cr_assert(l, "sample %zu: no pid label", i);
		cr_expect_eq(l->num, want[i].pid);
		cr_expect_eq(l->str, 0, "pid is a number label");
		l = label(pb, s, "comm");
		cr_assert(l);
		cr_expect_str_eq(str(pb, l->str), want[i].pid == 7 ? "proc" : "other");
		l = label(pb, s, "cgroup");
		if (want[i].pid == 7) {
			cr_assert(l);
			cr_expect_str_eq(str(pb, l->str), CGROUP);
			l = label(pb, s, "container");
			cr_assert(l, "no container label");
			cr_expect_str_eq(str(pb, l->str), "docker 1a2b3c4d5e6f");
		} else {
			cr_expect_null(l, "pid 8 has no known cgroup");
			cr_expect_null(label(pb, s, "container"));
		}
	}
	/* one location per (mapping, address): k_entry + 0x105 is one, in three samples */
	cr_expect_eq(pb->sample[0]->location_id[2], pb->sample[1]->location_id[1]);
	cr_expect_eq(pb->sample[1]->location_id[1], pb->sample[4]->location_id[1]);
	cr_expect_eq(loc(pb, pb->sample[0]->location_id[2])->address, K + 0x3105);
	/* the kernel's mapping, and the library's with its build-id */
	const Perftools__Profiles__Location *kl = loc(pb, pb->sample[0]->location_id[0]);
	const Perftools__Profiles__Location *ul = loc(pb, pb->sample[2]->location_id[1]);
	cr_assert(kl->mapping_id >= 1 && kl->mapping_id <= pb->n_mapping);
	cr_assert(ul->mapping_id >= 1 && ul->mapping_id <= pb->n_mapping);
	const Perftools__Profiles__Mapping *km = pb->mapping[kl->mapping_id - 1], *um = pb->mapping[ul->mapping_id - 1];
	cr_expect_str_eq(str(pb, km->filename), "[kernel.kallsyms]");
	cr_expect(km->memory_start <= K + 0x100 && km->memory_limit > K + 0x3105);
	cr_expect_str_eq(str(pb, um->filename), "/nonexistent/libx.so");
	cr_expect_str_eq(str(pb, um->build_id), "deadbeef0102030405060708090a0b0c0d0e0f10");
	cr_expect_eq(um->memory_start, 0x7f0000000000);
	cr_expect_eq(um->memory_limit, 0x7f0000010000);
	cr_expect_eq(ul->address, 0x7f0000002020);
	/* symbolized by hsbpf, unknown code too: pprof does not try again */
	cr_expect(um->has_functions && km->has_functions);
	cr_expect_not(um->has_line_numbers, "libx.so has no lines");
	/* the program's mapping first (pprof names the profile after it) */
	cr_expect_str_eq(str(pb, pb->mapping[0]->filename), "/nonexistent/libx.so");
	perftools__profiles__profile__free_unpacked(pb, NULL);
	profile__free(p);
}

Test(pprof, without_stacks_each_sample_is_a_one_frame_stack_and_events_have_their_unit)
{
	struct profile *p = made_profile(false, true);
	Perftools__Profiles__Profile *pb = decoded(p, true);
	static const char *const names[] = { "k_leaf", "k_leaf", "[unknown in libx.so]", "k_leaf" };
	static const s64 counts[] = { 3, 1, 3, 1 };
	char buf[512];

	cr_expect_str_eq(str(pb, pb->sample_type[1]->type), "page-faults");
	cr_expect_str_eq(str(pb, pb->sample_type[1]->unit), "events");
	cr_expect_str_eq(str(pb, pb->period_type->type), "page-faults");
	cr_expect_eq(pb->period, 1);
	cr_assert_eq(pb->n_sample, 4);
	for (size_t i = 0; i < 4; i++) {
		sample_names(pb, pb->sample[i], buf, sizeof(buf));
		cr_expect_str_eq(buf, names[i]);
		cr_expect_eq(pb->sample[i]->value[0], counts[i]);
		cr_expect_eq(pb->sample[i]->value[1], 10 * counts[i]);
	}
	/* the kernel's k_leaf at +0x100 and +0x104: two locations, one function; +0x104 in two
	 * processes: one location */
	cr_expect_neq(pb->sample[0]->location_id[0], pb->sample[1]->location_id[0]);
	cr_expect_eq(loc(pb, pb->sample[0]->location_id[0])->line[0]->function_id,
		     loc(pb, pb->sample[1]->location_id[0])->line[0]->function_id);
	cr_expect_eq(pb->sample[1]->location_id[0], pb->sample[3]->location_id[0]);
	perftools__profiles__profile__free_unpacked(pb, NULL);
	profile__free(p);
}

/* a profile keyed by thread: each sample carries its tid and its thread's name */
Test(pprof, threads_are_labelled_with_their_tid_and_name)
{
	struct profile *p = profile__new();
	Perftools__Profiles__Profile *pb;
	const Perftools__Profiles__Label *l;

	cr_assert(p);
	snprintf(p->meta.event, sizeof(p->meta.event), "cpu-clock");
	snprintf(p->meta.unit, sizeof(p->meta.unit), "ns");
	snprintf(p->meta.sample_keys, sizeof(p->meta.sample_keys), "tid");
	p->meta.period = 1000000;
	cr_assert_eq(profile__add_comm(p, 7, 0, "proc", false), 0);
	cr_assert_eq(profile__add_thread_comm(p, 7, 9, 0, "worker-x"), 0);
	cr_assert_eq(profile__add_sample_keyed(p, &(struct profile_sample){ .pid = 7, .ip = K + 0x100,
		     .flags = HSBPF_KEY_KERNEL, .count = 2, .weight = 2000000 },
		     &(struct profile_sample_key){ .tid = 9 }), 0);
	cr_assert_eq(profile__add_sample_keyed(p, &(struct profile_sample){ .pid = 7, .ip = K + 0x104,
		     .flags = HSBPF_KEY_KERNEL, .count = 1, .weight = 1000000 },
		     &(struct profile_sample_key){ .tid = 7 }), 0);
	profile__finish(p);
	pb = decoded(p, true);
	cr_assert_eq(pb->n_sample, 2);
	for (size_t i = 0; i < 2; i++) {
		const Perftools__Profiles__Sample *smp = pb->sample[i];
		bool worker = smp->value[0] == 2;

		l = label(pb, smp, "tid");
		cr_assert(l, "sample %zu: no tid label", i);
		cr_expect_eq(l->num, worker ? 9 : 7);
		l = label(pb, smp, "thread");
		cr_assert(l, "sample %zu: no thread label", i);
		cr_expect_str_eq(str(pb, l->str), worker ? "worker-x" : "proc");
	}
	perftools__profiles__profile__free_unpacked(pb, NULL);
	profile__free(p);
}

/* sampled allocations at a 64 KiB period in pid 7 (the recording's event left as cpu-clock): a
 * user stack of 3 frames allocated 4.5 objects (in 1/1024ths) of 300,000 bytes, 1 of 100,000
 * bytes in use at the end; one of 2 frames 2 objects of 2 MiB, freed */
static struct profile *made_heap_profile(void)
{
	struct profile *p = profile__new();
	u64 user[] = { 0x7f0000001010, 0x7f0000002020, 0x7f0000003030 };
	u32 alloc = HSBPF_KEY_MEMORY | HSBPF_MEM_ALLOC << HSBPF_KEY_STATE_SHIFT;
	u32 inuse = HSBPF_KEY_MEMORY | HSBPF_MEM_INUSE << HSBPF_KEY_STATE_SHIFT;
	s64 a, b;

	cr_assert(p);
	snprintf(p->meta.event, sizeof(p->meta.event), "cpu-clock");
	snprintf(p->meta.unit, sizeof(p->meta.unit), "ns");
	p->meta.alloc_period = 65536;
	cr_assert_eq(profile__add_comm(p, 7, 0, "proc", false), 0);
	cr_assert_eq(profile__add_mapping(p, 7, 0, 0x7f0000000000, 0x10000, 0, "/nonexistent/libx.so",
					  build_id, sizeof(build_id)), 0);
	a = profile__add_stack(p, user, 3, HSBPF_STACK_COMPLETE, 0);
	b = profile__add_stack(p, user + 1, 2, HSBPF_STACK_COMPLETE, 0);
	cr_assert(a >= 0 && b >= 0);
	struct profile_stack_sample ss[] = {
		{ .pid = 7, .flags = alloc, .user = a + 1, .count = 4608, .weight = 300000 },
		{ .pid = 7, .flags = inuse, .user = a + 1, .count = 1024, .weight = 100000 },
		{ .pid = 7, .flags = alloc, .user = b + 1, .count = 2048, .weight = 2 << 20 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(ss); i++)
		cr_assert_eq(profile__add_stack_sample(p, &ss[i]), 0);
	profile__finish(p);
	return p;
}

/* Go's heap profile: four sample types, space/bytes per period, inuse_space shown first (or
 * the view asked for); each stack's objects rounded and bytes, made and in use */
Test(pprof, a_memory_profile_is_a_go_heap_profile)
{
	static const char *const types[] = { "alloc_objects", "count", "alloc_space", "bytes",
					     "inuse_objects", "count", "inuse_space", "bytes" };
	struct profile *p = made_heap_profile();
	Perftools__Profiles__Profile *pb;

	memory__select_all(p, MEMORY_INUSE_SPACE);
	pb = decoded(p, false);
	cr_assert_eq(pb->n_sample_type, 4);
	for (size_t i = 0; i < 4; i++) {
		cr_expect_str_eq(str(pb, pb->sample_type[i]->type), types[2 * i]);
		cr_expect_str_eq(str(pb, pb->sample_type[i]->unit), types[2 * i + 1]);
	}
	cr_expect_str_eq(str(pb, pb->period_type->type), "space");
	cr_expect_str_eq(str(pb, pb->period_type->unit), "bytes");
	cr_expect_eq(pb->period, 65536);
	cr_expect_str_eq(str(pb, pb->default_sample_type), "inuse_space");
	cr_assert_geq(pb->n_comment, 1);
	cr_expect(strstr(str(pb, pb->comment[0]), "allocations sampled by bytes, one per 65536 bytes") &&
		  !strstr(str(pb, pb->comment[0]), "cpu-clock"), "%s", str(pb, pb->comment[0]));
	cr_assert_eq(pb->n_sample, 3);
	for (size_t i = 0; i < 3; i++) {
		const Perftools__Profiles__Sample *smp = pb->sample[i];
		bool big = smp->n_location_id == 2, in_use = smp->value[2] != 0;
		s64 want[4] = { big ? 2 : 5, big ? 2 << 20 : 300000, 0, 0 };

		cr_assert_eq(smp->n_value, 4);
		if (in_use)
			memcpy(want, (s64[]){ 0, 0, 1, 100000 }, sizeof(want));
		for (size_t j = 0; j < 4; j++)
			cr_expect_eq(smp->value[j], want[j], "sample %zu (%s%s) value %zu: %lld, want %lld", i,
				     big ? "2 MiB" : "300,000", in_use ? ", in use" : "", j,
				     (long long)smp->value[j], (long long)want[j]);
	}
	perftools__profiles__profile__free_unpacked(pb, NULL);
	profile__free(p);

	p = made_heap_profile();
	memory__select_all(p, MEMORY_ALLOC_OBJECTS);
	pb = decoded(p, false);
	cr_expect_str_eq(str(pb, pb->default_sample_type), "alloc_objects");
	perftools__profiles__profile__free_unpacked(pb, NULL);
	profile__free(p);
}

/* (a lost stack's sample is at its function in report's flat rows, at the lost frame in the
 * export: left out here) */
Test(pprof, go_tool_pprof_reads_the_made_profile_as_report_counts_it)
{
	struct profile *p = made_profile(true, false);
	char path[1100];

	snprintf(path, sizeof(path), "%s/made.hsbpf", tmpdir());
	cr_assert_eq(profile__write(p, path), 0);
	profile__free(p);
	cr_expect_geq(check_pprof_matches_report(path), 4);
}

/* hsbpf record -g of the stack fixture (callpaths: paths through qsort, a library, a signal
 * handler, deep recursion), 2006 samples; its objects resolve only where they were built */
Test(pprof, go_tool_pprof_reads_a_recorded_profile_with_stacks_as_report_counts_it)
{
	const char *path = env_path("OUTPUT", ".output", "../tests/fixtures/profiles/v1.3-callpaths-g.hsbpf");

	cr_expect_geq(check_pprof_matches_report(path), 20);
}

Test(pprof, go_tool_pprof_reads_a_profile_without_stacks_as_report_counts_it)
{
	const char *path = env_path("OUTPUT", ".output", "../tests/fixtures/profiles/v1.2-hot7030.hsbpf");

	cr_expect_geq(check_pprof_matches_report(path), 1);
}

Test(pprof, bad_input_is_refused_with_a_clear_message)
{
	const char *fixture_path = env_path("OUTPUT", ".output", "../tests/fixtures/profiles/v1.2-hot7030.hsbpf");
	struct profile *empty = profile__new();
	struct run_result r;
	char path[1100], out[1100];

	run(&r, "%s report -i %s --format xml", hsbpf_bin(), fixture_path);
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "unknown format 'xml' (known: text, json, csv, folded, pprof, speedscope)"),
		  "%s", r.err);
	/* binary to a terminal: refused before anything is read (script gives it one) */
	run(&r, "script -qec '%s report -i %s --format pprof' /dev/null", hsbpf_bin(), fixture_path);
	cr_expect_neq(r.status, 0);
	cr_expect(strstr(r.out, "pprof output is binary: write it with -o FILE or redirect it"), "%s", r.out);
	/* a profile without samples */
	cr_assert(empty);
	snprintf(path, sizeof(path), "%s/empty.hsbpf", tmpdir());
	snprintf(out, sizeof(out), "%s/empty.pb.gz", tmpdir());
	cr_assert_eq(profile__write(empty, path), 0);
	profile__free(empty);
	run(&r, "%s report -i %s --format pprof -o %s", hsbpf_bin(), path, out);
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "has no samples: nothing to export"), "%s", r.err);
	cr_expect_neq(access(out, F_OK), 0, "no output file is left");
	/* a missing profile, an output that cannot be written */
	run(&r, "%s report -i %s/none --format pprof -o %s", hsbpf_bin(), tmpdir(), out);
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "none"), "%s", r.err);
	run(&r, "%s report -i %s --format pprof -o %s/no/such/dir/x.pb.gz", hsbpf_bin(), fixture_path, tmpdir());
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "x.pb.gz"), "%s", r.err);
	/* a device that fails: said once, and the device is left alone */
	for (int i = 0; i < 2; i++) {
		struct stat st;

		run(&r, "%s report -i %s --format %s -o /dev/full", hsbpf_bin(), fixture_path,
		    i ? "speedscope" : "pprof");
		cr_expect_eq(r.status, 1);
		cr_expect(strstr(r.err, "cannot write '/dev/full': No space left on device"), "%s", r.err);
		cr_assert_eq(stat("/dev/full", &st), 0);
		cr_assert(S_ISCHR(st.st_mode), "/dev/full is no longer a device");
		run(&r, "%s report -i %s --format %s >/dev/full", hsbpf_bin(), fixture_path,
		    i ? "speedscope" : "pprof");
		cr_expect_eq(r.status, 1);
		cr_expect(strstr(r.err, "cannot write standard output: No space left on device"), "%s", r.err);
		cr_expect(!strstr(strstr(r.err, "cannot write") + 10, "cannot write"), "said twice: %s", r.err);
	}
	/* to a pipe it is written */
	run(&r, "%s report -i %s --format pprof | gzip -dc | wc -c", hsbpf_bin(), fixture_path);
	cr_expect_eq(r.status, 0);
	cr_expect_gt(atoi(r.out), 100, "%s", r.out);
}

/* a C++ name of over 1,000 characters is the function's name whole */
Test(pprof, long_names_are_kept_whole)
{
	char *want;
	struct profile *p = long_name_profile(&want);
	Perftools__Profiles__Profile *pb = decoded(p, true);

	cr_assert_eq(pb->n_sample, 1);
	cr_expect_str_eq(func_name(pb, pb->sample[0]->location_id[0]), want);
	perftools__profiles__profile__free_unpacked(pb, NULL);
	free(want);
	profile__free(p);
}

/* off-CPU time: --off-cpu's one value is off_cpu in nanoseconds (each block's time, not report's
 * microsecond counts), with the state as a label; --wall's are cpu, off_cpu and their sum, wall,
 * which pprof shows by default */
Test(pprof, off_cpu_time_is_its_own_sample_type_in_nanoseconds)
{
	static const char *const wall_types[] = { "cpu", "off_cpu", "wall" };
	struct profile *p = made_profile(true, false);
	Perftools__Profiles__Profile *pb;
	const Perftools__Profiles__Label *l;

	/* the second and last stack samples: blocks, in S and R */
	p->stack_samples[1].flags |= HSBPF_KEY_OFFCPU | HSBPF_OFFCPU_S << HSBPF_KEY_STATE_SHIFT;
	p->stack_samples[3].flags |= HSBPF_KEY_OFFCPU | HSBPF_OFFCPU_R << HSBPF_KEY_STATE_SHIFT;
	snprintf(p->meta.offcpu, sizeof(p->meta.offcpu), "off");
	pb = decoded(p, false);
	cr_assert_eq(pb->n_sample_type, 1);
	cr_expect_str_eq(str(pb, pb->sample_type[0]->type), "off_cpu");
	cr_expect_str_eq(str(pb, pb->sample_type[0]->unit), "nanoseconds");
	cr_expect_eq(pb->period, 0);
	cr_assert_eq(pb->n_sample, 4);
	cr_assert_eq(pb->sample[1]->n_value, 1);
	cr_expect_eq(pb->sample[1]->value[0], 10);
	l = label(pb, pb->sample[1], "state");
	cr_assert(l);
	cr_expect_str_eq(str(pb, l->str), "S");
	cr_expect_null(label(pb, pb->sample[2], "state"), "an on-CPU sample has no state");
	cr_expect(strstr(str(pb, pb->comment[0]), "off-CPU time"), "%s", str(pb, pb->comment[0]));
	perftools__profiles__profile__free_unpacked(pb, NULL);

	snprintf(p->meta.offcpu, sizeof(p->meta.offcpu), "wall");
	pb = decoded(p, false);
	cr_assert_eq(pb->n_sample_type, 3);
	for (size_t i = 0; i < 3; i++) {
		cr_expect_str_eq(str(pb, pb->sample_type[i]->type), wall_types[i]);
		cr_expect_str_eq(str(pb, pb->sample_type[i]->unit), "nanoseconds");
	}
	/* on the CPU 30 ns (sample 0), off it 10 (sample 1) */
	cr_expect_eq(pb->sample[0]->value[0], 30);
	cr_expect_eq(pb->sample[0]->value[1], 0);
	cr_expect_eq(pb->sample[0]->value[2], 30);
	cr_expect_eq(pb->sample[1]->value[0], 0);
	cr_expect_eq(pb->sample[1]->value[1], 10);
	cr_expect_eq(pb->sample[1]->value[2], 10);
	cr_expect_eq(pb->period, 1000000);
	perftools__profiles__profile__free_unpacked(pb, NULL);
	profile__free(p);
}
