// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sideband: decoding the kernel's MMAP2/COMM/FORK/LOST records, and refusing bad ones. */
#include <criterion/criterion.h>
#include <linux/perf_event.h>
#include <string.h>
#include <unistd.h>
#include "profile/procfs.h"
#include "record/sideband.h"
#include "symbols/symbolizer.h"

struct rec {
	u8 buf[512];
	size_t len;
};

static void put(struct rec *r, const void *p, size_t n)
{
	memcpy(r->buf + r->len, p, n);
	r->len += n;
}

static void finish(struct rec *r, u32 type, u16 misc, u64 time)
{
	struct perf_event_header h = { .type = type, .misc = misc };
	struct { u32 pid, tid; u64 time; } id = { 1, 1, time };

	r->len = (r->len + 7) & ~7ul;
	put(r, &id, sizeof(id));
	h.size = r->len;
	memcpy(r->buf, &h, sizeof(h));
}

static struct rec mmap2(u32 pid, u64 addr, const char *path, bool with_id, u32 prot)
{
	struct rec r = { .len = sizeof(struct perf_event_header) };
	struct {
		u32 pid, tid;
		u64 addr, len, pgoff;
		u8 id_size, r1;
		u16 r2;
		u8 id[20];
		u32 prot, flags;
	} m = { pid, pid, addr, 0x2000, 0x1000, 20, 0, 0, { 0xab }, prot, 0 };

	put(&r, &m, sizeof(m));
	put(&r, path, strlen(path) + 1);
	finish(&r, PERF_RECORD_MMAP2, with_id ? (1 << 14) : 0, 77);
	return r;
}

Test(sideband, mmap2_comm_fork_lost)
{
	struct profile *p = profile__new();
	struct rec r = mmap2(9, 0x400000, "/usr/bin/x", true, 5);
	u64 lost = 0;

	cr_assert_eq(sideband__record(p, r.buf, r.len, &lost), 0);
	cr_assert_eq(p->nr_mappings, 1);
	cr_expect_eq(p->mappings[0].start, 0x400000);
	cr_expect_eq(p->mappings[0].pgoff, 0x1000);
	cr_expect_eq(p->mappings[0].time_ns, 77);
	cr_expect_eq(p->mappings[0].build_id_size, 20);
	cr_expect_eq(p->mappings[0].build_id[0], 0xab);
	cr_expect_str_eq(profile__str(p, p->mappings[0].path), "/usr/bin/x");

	r = mmap2(9, 0x500000, "/data", true, 1);	/* not executable: not kept */
	cr_assert_eq(sideband__record(p, r.buf, r.len, &lost), 0);
	r = mmap2(9, 0x600000, "/old/kernel", false, 5);	/* no build-id in the record */
	cr_assert_eq(sideband__record(p, r.buf, r.len, &lost), 0);
	cr_expect_eq(p->nr_mappings, 2);
	cr_expect_eq(p->mappings[1].build_id_size, 0);

	struct rec c = { .len = sizeof(struct perf_event_header) };
	u32 ids[2] = { 9, 9 };
	put(&c, ids, sizeof(ids));
	put(&c, "newname", 8);
	finish(&c, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, 80);
	cr_assert_eq(sideband__record(p, c.buf, c.len, &lost), 0);
	cr_assert_eq(p->nr_comms, 1);
	cr_expect(p->comms[0].exec);
	cr_expect_eq(p->comms[0].time_ns, 80);

	struct rec f = { .len = sizeof(struct perf_event_header) };
	struct { u32 pid, ppid, tid, ptid; u64 time; } fk = { 12, 9, 12, 9, 90 };
	put(&f, &fk, sizeof(fk));
	finish(&f, PERF_RECORD_FORK, 0, 90);
	cr_assert_eq(sideband__record(p, f.buf, f.len, &lost), 0);
	fk.tid = 13;	/* a thread: not a new process */
	memcpy(f.buf + sizeof(struct perf_event_header), &fk, sizeof(fk));
	cr_assert_eq(sideband__record(p, f.buf, f.len, &lost), 0);
	cr_expect_eq(p->nr_forks, 1);

	struct rec l = { .len = sizeof(struct perf_event_header) };
	u64 lv[2] = { 1, 33 };
	put(&l, lv, sizeof(lv));
	finish(&l, PERF_RECORD_LOST, 0, 1);
	cr_assert_eq(sideband__record(p, l.buf, l.len, &lost), 0);
	cr_expect_eq(lost, 33);
	profile__free(p);
}

Test(sideband, malformed_records)
{
	struct profile *p = profile__new();
	struct rec r = mmap2(9, 0x400000, "/usr/bin/x", true, 5);
	u64 lost = 0;

	/* header size disagrees with the buffer */
	cr_expect_eq(sideband__record(p, r.buf, r.len - 8, &lost), -EINVAL);
	/* path without its NUL before the trailer */
	memset(r.buf + sizeof(struct perf_event_header) + 64, 'x', r.len - 16 - 8 - 64);
	cr_expect_eq(sideband__record(p, r.buf, r.len, &lost), -EINVAL);
	cr_expect_eq(sideband__record(p, r.buf, 4, &lost), -EINVAL);
	cr_expect_eq(p->nr_mappings, 0);
	profile__free(p);
}

Test(sideband, procfs_synthesis_of_this_process)
{
	struct profile *p = profile__new();
	bool found = false;

	cr_assert_eq(procfs__synthesize(p, getpid()), 0);
	sideband__fill_build_ids(p);
	for (size_t i = 0; i < p->nr_mappings; i++) {
		const char *path = profile__str(p, p->mappings[i].path);

		if (strstr(path, "libc.so")) {
			found = true;
			cr_expect_gt(p->mappings[i].build_id_size, 0, "no build-id for %s", path);
		}
	}
	cr_expect(found, "libc not among our executable mappings");
	cr_expect_eq(procfs__synthesize(p, 999999999), -ENOENT);
	profile__free(p);
}

static struct rec ksymbol(u64 addr, u32 len, u16 type, u16 flags, const char *name)
{
	struct rec r = { .len = sizeof(struct perf_event_header) };
	struct { u64 addr; u32 len; u16 type, flags; } k = { addr, len, type, flags };

	put(&r, &k, sizeof(k));
	put(&r, name, strlen(name) + 1);
	finish(&r, PERF_RECORD_KSYMBOL, 0, 5);
	return r;
}

/* kernel code made while running (a BPF program): named as kallsyms names it, bounded by
 * its length, and kept after it is unloaded; a bound never hides a symbol at its address */
Test(sideband, ksymbol_names_bpf_programs)
{
	struct profile *p = profile__new();
	struct rec r = ksymbol(0xffffffffa0001000ull, 0x100, PERF_RECORD_KSYMBOL_TYPE_BPF, 0,
			       "bpf_prog_0123456789abcdef_hot");
	struct profile_sample s = { .pid = 1, .flags = 1 /* kernel */, .count = 1 };
	struct symbolizer *sy;
	struct sym_result res;

	cr_assert_eq(sideband__record(p, r.buf, r.len, NULL), 0);
	/* the next program right after it */
	r = ksymbol(0xffffffffa0001100ull, 0x80, PERF_RECORD_KSYMBOL_TYPE_BPF, 0, "bpf_prog_fedcba9876543210_next");
	cr_assert_eq(sideband__record(p, r.buf, r.len, NULL), 0);
	r = ksymbol(0xffffffffa0001000ull, 0x100, PERF_RECORD_KSYMBOL_TYPE_BPF,
		    PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER, "bpf_prog_0123456789abcdef_hot");
	cr_assert_eq(sideband__record(p, r.buf, r.len, NULL), 0);
	cr_expect_eq(p->nr_ksyms, 4, "two symbols and their bounds");
	profile__finish(p);
	sy = symbolizer__new(p);
	s.ip = 0xffffffffa0001010ull;
	symbolizer__resolve(sy, &s, &res);
	cr_expect_str_eq(res.sym, "bpf_prog_0123456789abcdef_hot");
	cr_expect_str_eq(res.dso, "[bpf]");
	cr_expect_eq(res.sym_off, 0x10);
	s.ip = 0xffffffffa0001100ull;
	symbolizer__resolve(sy, &s, &res);
	cr_expect_str_eq(res.sym, "bpf_prog_fedcba9876543210_next", "the bound hid the next program");
	s.ip = 0xffffffffa0001200ull;
	symbolizer__resolve(sy, &s, &res);
	cr_expect_str_eq(res.sym, "[unknown]", "past the last program's end");
	symbolizer__free(sy);
	profile__free(p);
}

/* the kernel lost this process's mappings after its exec's record (time 100): /proc read
 * again at time 1000 names the image its samples are tagged with, as records of that time,
 * and its comm is no new exec that would end the image */
Test(sideband, procfs_resynthesis_after_lost_records_names_the_current_image)
{
	struct profile *p = profile__new();
	const struct profile_mapping *m;
	u64 ip = (u64)(uintptr_t)&procfs__synthesize_at;
	u32 pid = getpid();

	cr_assert_not_null(p);
	cr_assert_eq(profile__add_comm(p, pid, 100, "test", true), 0);
	profile__finish(p);
	cr_expect_null(profile__find_mapping(p, pid, 100, 0, ip), "a mapping before the re-reading");
	cr_assert_eq(procfs__synthesize_at(p, pid, 1000), 0);
	profile__finish(p);
	for (size_t i = 0; i < p->nr_comms; i++)
		cr_expect(!p->comms[i].exec || p->comms[i].time_ns == 100, "the re-reading made an exec");
	m = profile__find_mapping(p, pid, 100, 0, ip);
	cr_assert_not_null(m, "the current image's sample has no mapping");
	cr_expect_eq(m->time_ns, 1000);
	cr_expect(ip >= m->start && ip - m->start < m->len);
	/* an image that ended before the re-reading is not given the new mappings */
	cr_assert_eq(profile__add_comm(p, pid, 500, "test", true), 0);
	profile__finish(p);
	cr_expect_null(profile__find_mapping(p, pid, 100, 0, ip), "an older image got the new mappings");
	profile__free(p);
}

/* -a's rings: 4 MiB a CPU, halved past 64 MiB in all, never below a command's 512 KiB */
Test(sideband, rings_for_the_whole_machine_are_sized_by_cpus)
{
	static const struct { int cpus; unsigned pages; } cases[] = {
		{ 1, 1024 }, { 2, 1024 }, { 16, 1024 }, { 17, 512 }, { 32, 512 }, { 64, 256 },
		{ 128, 128 }, { 1024, 128 }, { 0, 1024 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(sideband__pages_for_all(cases[i].cpus), cases[i].pages, "%d CPUs: %u pages",
			     cases[i].cpus, sideband__pages_for_all(cases[i].cpus));
	cr_expect_eq(SIDEBAND_PAGES, 128);
}
