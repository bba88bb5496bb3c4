// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Profiles with known stacks for the flame graph tests: their user frames are this
 * program's own functions (its mappings are read from /proc/self/maps, so the symbolizer
 * finds them in this file), their kernel frames the profile's own kernel symbols. Writes
 * DIR/base.data, new.data, flat.data, other-event.data, empty.data, and DIR/expected.json with
 * each known frame's share and its 95% half-width (hist__ci95: what the page must show);
 * with --big N (or --big-worst N), DIR/big.data of N distinct stacks instead. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "report/hist.h"
#include "hsbpf.h"
#include "profile/profile.h"

#define NOINLINE __attribute__((noinline, used))
NOINLINE void fg_main(void) { __asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop"); }
NOINLINE void fg_compute(void) { __asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop"); }
NOINLINE void fg_hash(void) { __asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop"); }
NOINLINE void fg_sort(void) { __asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop"); }
NOINLINE void fg_io(void) { __asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop"); }
NOINLINE void fg_read_file(void) { __asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop"); }
NOINLINE void fg_idle(void) { __asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop"); }

#define K 0xffffffff81000000ull
#define PID 7

static u64 at(void (*fn)(void))
{
	return (u64)(uintptr_t)fn + 4;	/* inside it, also as a return address (ip - 1) */
}

static int add_self_mappings(struct profile *p)
{
	char exe[4096], line[8192];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f = fopen("/proc/self/maps", "r");
	int err = 0;

	if (n < 0 || !f) {
		if (f)
			fclose(f);
		return -errno;
	}
	exe[n] = 0;
	while (!err && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8], path[4096] = "";

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &start, &end, perms, &off, path) < 4)
			continue;
		if (perms[2] == 'x' && !strcmp(path, exe))
			err = profile__add_mapping(p, PID, 0, start, end - start, off, exe, NULL, 0);
	}
	fclose(f);
	return err;
}

static struct profile *new_profile(const char *event)
{
	struct profile *p = profile__new();

	if (!p)
		return NULL;
	snprintf(p->meta.event, sizeof(p->meta.event), "%s", event);
	snprintf(p->meta.unit, sizeof(p->meta.unit), "%s", strcmp(event, "cpu-clock") ? "events" : "ns");
	p->meta.event_type = strcmp(event, "cpu-clock") ? 1 : 1;
	p->meta.event_config = strcmp(event, "cpu-clock") ? 2 : 0;
	p->meta.period = 1000000;
	p->meta.duration_ns = 1000000000;	/* rates: per second of a 1 s recording */
	snprintf(p->meta.target, sizeof(p->meta.target), "command: app (flame graph fixture)");
	snprintf(p->meta.call_graph, sizeof(p->meta.call_graph), "dwarf");
	if (profile__add_comm(p, PID, 0, "app", false) || profile__add_ksym(p, K, "_stext") ||
	    profile__add_ksym(p, K + 0x1000, "ksys_read") || profile__add_ksym(p, K + 0x2000, "vfs_read") ||
	    profile__add_ksym(p, K + 0x3000, "_etext") || add_self_mappings(p)) {
		profile__free(p);
		return NULL;
	}
	return p;
}

/* the four stacks: main;compute;hash  main;compute;sort  main;io;read_file;ksys_read;vfs_read
 * main;idle, with these counts */
static int add_stacks(struct profile *p, const u64 counts[4], bool with_stacks)
{
	const u64 users[4][4] = {
		{ at(fg_hash), at(fg_compute), at(fg_main) },
		{ at(fg_sort), at(fg_compute), at(fg_main) },
		{ at(fg_read_file), at(fg_io), at(fg_main) },
		{ at(fg_idle), at(fg_main) },
	};
	const u32 nr[4] = { 3, 3, 3, 2 };
	const u64 kernel[2] = { K + 0x2010, K + 0x1010 };
	s64 kst = with_stacks ? profile__add_stack(p, kernel, 2, 0, 0) : 0;

	if (kst < 0)
		return -ENOMEM;
	for (int i = 0; i < 4; i++) {
		bool in_kernel = i == 2;
		struct profile_sample s = { .pid = PID, .flags = in_kernel ? HSBPF_KEY_KERNEL : 0,
					    .ip = in_kernel ? kernel[0] : users[i][0],
					    .count = counts[i], .weight = counts[i] * 1000000 };
		int err = profile__add_sample(p, &s);

		if (!err && with_stacks) {
			s64 u = profile__add_stack(p, users[i], nr[i], HSBPF_STACK_COMPLETE, 0);

			err = u < 0 ? (int)u : profile__add_stack_sample(p, &(struct profile_stack_sample){
					.pid = PID, .flags = s.flags, .user = u + 1,
					.kernel = in_kernel ? kst + 1 : 0,
					.count = counts[i], .weight = s.weight });
		}
		if (err)
			return err;
	}
	return 0;
}

static int write_profile(const char *dir, const char *name, const char *event, const u64 counts[4],
			 bool with_stacks)
{
	char path[4096];
	struct profile *p = new_profile(event);
	int err;

	if (!p)
		return -ENOMEM;
	err = counts ? add_stacks(p, counts, with_stacks) : 0;
	profile__finish(p);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!err)
		err = profile__write(p, path);
	profile__free(p);
	return err;
}

/* n distinct stacks over 3000 kernel functions. Random: depth 8 to 23, a few wide roots then
 * ever more distinct callees, counts 1 to 64. Worst: 11,000 chains 20 deep with a share each
 * just over the width a frame needs to be drawn (1/12,000), so that nothing but the leaves
 * can be merged: the largest page a 1200 px graph can need at that depth. */
static int write_big(const char *dir, u64 n, bool worst)
{
	struct profile *p = new_profile("cpu-clock");
	char path[4096], name[32];
	u64 seed = 88172645463325252ull, ips[24];
	int err = 0;

	if (!p)
		return -ENOMEM;
	for (int i = 0; i < 3000 && !err; i++) {
		snprintf(name, sizeof(name), "kfunc_%04d", i);
		err = profile__add_ksym(p, K + 0x10000 + i * 0x100ull, name);
	}
	for (u64 i = 0; i < n && !err; i++) {
		u32 depth = 8 + i % 16;
		s64 st;

		if (worst) {
			u64 c = i % 11000;

			depth = 21;
			for (u32 d = 0; d < 20; d++)
				ips[20 - d] = K + 0x10000 + ((d == 0 ? c % 3000 : d == 1 ? c / 3000 :
							      c * 7 + d) % 3000) * 0x100 + 8;
			ips[0] = K + 0x10000 + (i / 11000 % 3000) * 0x100 + 8;
			goto add;
		}
		/* a few wide roots, then ever more distinct callees: a realistic fan-out */
		for (u32 d = 0; d < depth; d++) {
			u64 span = d < 2 ? 4 : d < 4 ? 40 : 3000;

			seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
			ips[depth - 1 - d] = K + 0x10000 + (seed % span) * 0x100 + 8;
		}
		ips[0] = K + 0x10000 + (i % 3000) * 0x100 + 8;	/* distinct with the loop index */
add:
		st = profile__add_stack(p, ips, depth, 0, 0);
		if (st < 0)
			err = st;
		else
			err = profile__add_stack_sample(p, &(struct profile_stack_sample){
				.pid = PID, .flags = HSBPF_KEY_KERNEL, .kernel = st + 1,
				.count = worst ? 10 : 1 + seed % 64, .weight = 1000000 });
		if (!err)
			err = profile__add_sample(p, &(struct profile_sample){ .pid = PID,
				.flags = HSBPF_KEY_KERNEL, .ip = ips[0], .count = worst ? 10 : 1 + seed % 64 });
	}
	profile__finish(p);
	snprintf(path, sizeof(path), "%s/big.data", dir);
	if (!err)
		err = profile__write(p, path);
	profile__free(p);
	return err;
}

static void expect(FILE *f, const char *name, u64 count, u64 total, bool last)
{
	fprintf(f, "  \"%s\": {\"count\": %" PRIu64 ", \"share\": %.2f, \"ci\": %.2f}%s\n", name, count,
		100.0 * count / total, 100 * hist__ci95(count, total), last ? "" : ",");
}

int main(int argc, char **argv)
{
	static const u64 base[4] = { 400, 200, 300, 100 }, new[4] = { 250, 210, 440, 100 };
	char path[4096];
	FILE *f;
	int err;

	if (argc == 4 && (!strcmp(argv[2], "--big") || !strcmp(argv[2], "--big-worst"))) {
		err = write_big(argv[1], strtoull(argv[3], NULL, 10), !strcmp(argv[2], "--big-worst"));
		return err ? 1 : 0;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: flame-fixtures DIR [--big N | --big-worst N]\n");
		return 2;
	}
	err = write_profile(argv[1], "base.data", "cpu-clock", base, true);
	if (!err)
		err = write_profile(argv[1], "new.data", "cpu-clock", new, true);
	if (!err)
		err = write_profile(argv[1], "flat.data", "cpu-clock", base, false);
	if (!err)
		err = write_profile(argv[1], "other-event.data", "page-faults", new, true);
	if (!err)
		err = write_profile(argv[1], "empty.data", "cpu-clock", NULL, false);
	if (err) {
		fprintf(stderr, "flame-fixtures: %s\n", strerror(-err));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/expected.json", argv[1]);
	f = fopen(path, "w");
	if (!f)
		return 1;
	fputs("{\n", f);
	expect(f, "fg_main", 1000, 1000, false);
	expect(f, "fg_compute", 600, 1000, false);
	expect(f, "fg_hash", 400, 1000, false);
	expect(f, "fg_sort", 200, 1000, false);
	expect(f, "fg_read_file", 300, 1000, false);
	expect(f, "vfs_read", 300, 1000, false);
	expect(f, "fg_idle", 100, 1000, true);
	fputs("}\n", f);
	return fclose(f) ? 1 : 0;
}
