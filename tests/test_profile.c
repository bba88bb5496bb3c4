// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* profile: the file round-trips, and every kind of damage is refused with a clear error;
 * process images across exec and fork. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "helpers.h"
#include "hsbpf.h"
#include "lib/file_format.h"
#include "profile/profile.h"

static struct profile *sample_profile(void)
{
	struct profile *p = profile__new();
	struct profile_sample s = { .pid = 42, .ip = 0x401000, .cgroup_id = 7, .count = 3, .weight = 3000 };
	u8 id[20] = { 0xde, 0xad, 0xbe, 0xef };

	cr_assert(p);
	strcpy(p->meta.event, "cpu-clock");
	strcpy(p->meta.period_mode, "random");
	strcpy(p->meta.target, "command: ./x a=b");
	p->meta.period = 1000000;
	p->meta.duration_ns = 123456789;
	p->stats.dropped_full = 5;
	p->stats.interval_sumsq = 1.5e18;
	cr_assert_eq(profile__add_sample(p, &s), 0);
	s.ip = 0xffffffff81000010ull;
	s.flags = 1;
	s.count = 1;
	cr_assert_eq(profile__add_sample(p, &s), 0);
	cr_assert_eq(profile__add_mapping(p, 42, 10, 0x400000, 0x1000, 0, "/bin/x", id, 20), 0);
	cr_assert_eq(profile__add_comm(p, 42, 5, "x", true), 0);
	cr_assert_eq(profile__add_fork(p, 42, 1, 4), 0);
	cr_assert_eq(profile__add_ksym(p, 0xffffffff81000000ull, "do_thing"), 0);
	cr_assert_eq(profile__add_cgroup(p, 7, "/a/b"), 0);
	cr_assert_eq(profile__add_nspid(p, 42, 1), 0);
	cr_assert_eq(profile__add_nspid(p, 42, 1), 0); /* known already: not added twice */
	return p;
}

static char *path_in_tmp(const char *name)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "%s/%s", tmpdir(), name);
	return buf;
}

static void *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	void *buf;

	cr_assert(f);
	fseek(f, 0, SEEK_END);
	*size = ftell(f);
	rewind(f);
	buf = malloc(*size);
	cr_assert_eq(fread(buf, 1, *size, f), *size);
	fclose(f);
	return buf;
}

TestSuite(profile, .fini = cleanup_tmpdir);



/* what the test wrote to its redirected stderr holds text */
static bool stderr_has(const char *text)
{
	static char buf[8192];
	FILE *f;
	size_t n;

	fflush(stderr);
	f = cr_get_redirected_stderr();
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	if (!strstr(buf, text))
		fprintf(stdout, "stderr: %s\n", buf);
	return strstr(buf, text);
}

Test(profile, round_trip)
{
	struct profile *p = sample_profile(), *q;
	const char *path = path_in_tmp("p.data");
	struct stat st;

	cr_assert_eq(profile__write(p, path), 0);
	cr_assert_eq(stat(path, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
	cr_assert_eq(profile__read(path, &q), 0);
	cr_expect_str_eq(q->meta.event, "cpu-clock");
	cr_expect_str_eq(q->meta.target, "command: ./x a=b");
	cr_expect_eq(q->meta.period, 1000000);
	cr_expect_eq(q->meta.duration_ns, 123456789);
	cr_expect_eq(q->stats.dropped_full, 5);
	cr_expect_eq(q->stats.interval_sumsq, 1.5e18);
	cr_assert_eq(q->nr_samples, 2);
	cr_expect_eq(q->samples[0].ip, 0x401000);
	cr_expect_eq(q->samples[0].weight, 3000);
	cr_expect_eq(profile__total_samples(q), 4);
	cr_assert_eq(q->nr_mappings, 1);
	cr_expect_str_eq(profile__str(q, q->mappings[0].path), "/bin/x");
	cr_expect_eq(q->mappings[0].build_id_size, 20);
	cr_expect_eq(q->mappings[0].build_id[3], 0xef);
	cr_expect_str_eq(profile__str(q, q->comms[0].comm), "x");
	cr_expect(q->comms[0].exec);
	cr_expect_eq(q->forks[0].ppid, 1);
	cr_expect_str_eq(profile__str(q, q->ksyms[0].name), "do_thing");
	cr_expect_str_eq(profile__str(q, q->cgroups[0].path), "/a/b");
	cr_expect_eq(q->nr_nspids, 1);
	cr_expect_eq(profile__nspid(q, 42), 1);
	cr_expect_eq(profile__nspid(q, 43), 0, "a pid in the host namespace has no ns pid");
	profile__free(p);
	profile__free(q);
}

/* a file with many strings reads back (the string index is sized from the table) */
Test(profile, many_strings_round_trip)
{
	struct profile *p = profile__new(), *q;
	const char *path = path_in_tmp("s.data");

	for (int i = 0; i < 3000; i++) {
		char s[32];

		snprintf(s, sizeof(s), "/lib/object-%d.so", i);
		cr_assert_eq(profile__add_mapping(p, i, 0, 0x1000, 0x1000, 0, s, NULL, 0), 0);
	}
	cr_assert_eq(profile__write(p, path), 0);
	cr_assert_eq(profile__read(path, &q), 0);
	cr_expect_eq(q->nr_mappings, 3000);
	cr_expect_eq(profile__intern(q, "/lib/object-2999.so"), profile__intern(q, "/lib/object-2999.so"));
	cr_expect_eq(q->strs.len, p->strs.len, "interning a known string must not grow the table");
	profile__free(p);
	profile__free(q);
}

Test(profile, strings_are_interned)
{
	struct profile *p = profile__new();
	s64 a = profile__intern(p, "libc.so.6"), b = profile__intern(p, "libc.so.6");

	cr_expect_eq(a, b);
	cr_expect_neq(profile__intern(p, "other"), a);
	for (int i = 0; i < 5000; i++) {
		char s[32];

		snprintf(s, sizeof(s), "sym%d", i);
		cr_assert_geq(profile__intern(p, s), 0);
	}
	cr_expect_eq(profile__intern(p, "libc.so.6"), a);
	profile__free(p);
}

/* every truncation point and a flipped bit in every region is refused, never crashes */
Test(profile, damage_is_refused, .init = cr_redirect_stderr)
{
	struct profile *p = sample_profile(), *q;
	const char *path = path_in_tmp("d.data");
	size_t size;
	u8 *buf;

	cr_assert_eq(profile__write(p, path), 0);
	buf = read_file(path, &size);
	for (size_t cut = 0; cut < size; cut += (cut < 128 ? 1 : 7))
		cr_expect_neq(profile__parse(buf, cut, "cut", &q), 0, "accepted at %zu bytes", cut);
	for (size_t at = 0; at < size; at++) {
		buf[at] ^= 0x10;
		cr_expect_neq(profile__parse(buf, size, "flip", &q), 0, "accepted flip at %zu", at);
		buf[at] ^= 0x10;
	}
	cr_expect_eq(profile__parse(buf, size, "ok", &q), 0);
	profile__free(q);
	free(buf);
	profile__free(p);
}

Test(profile, newer_version_is_refused_with_a_reason)
{
	struct profile *p = sample_profile(), *q;
	const char *path = path_in_tmp("v.data");
	size_t size;
	u8 *buf;
	u16 v = PROFILE_VERSION_MAJOR + 1;
	u32 crc = 0;

	cr_assert_eq(profile__write(p, path), 0);
	buf = read_file(path, &size);
	memcpy(buf + 8, &v, 2);
	memcpy(buf + 36, &crc, 4);
	crc = crc32(0, buf, 64);
	memcpy(buf + 36, &crc, 4);
	cr_expect_eq(profile__parse(buf, size, "v", &q), -EPROTO);
	free(buf);
	profile__free(p);
}

Test(profile, not_a_profile)
{
	struct profile *q;

	cr_expect_eq(profile__parse("PERFILE2........", 16, "x", &q), -EINVAL);
	cr_expect_eq(profile__read(path_in_tmp("missing"), &q), -ENOENT);
	cr_expect_neq(profile__read(tmpdir(), &q), 0);
}

/* the folder holds nothing but the names given (and the test's own .out/.err) */
static int others_in(const char *dir, const char *const *names, size_t nr)
{
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(dir);

	cr_assert(d);
	while ((de = readdir(d))) {
		bool known = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");

		for (size_t i = 0; i < nr; i++)
			known |= !strcmp(de->d_name, names[i]);
		if (!known) {
			fprintf(stderr, "left behind: %s\n", de->d_name);
			n++;
		}
	}
	closedir(d);
	return n;
}

Test(profile, failed_write_leaves_nothing, .init = cr_redirect_stderr)
{
	struct profile *p = sample_profile();
	const char *const keep[] = { "ro" };
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/ro", tmpdir());
	cr_assert_eq(mkdir(dir, 0755), 0);
	cr_expect_neq(profile__write(p, "/nonexistent-dir/p.data"), 0);
	/* a path that is a directory */
	cr_expect_neq(profile__write(p, dir), 0);
	/* no temporary file of any name: every entry but the folder itself is left over */
	cr_expect_eq(others_in(tmpdir(), keep, 1), 0, "temporary files left behind");
	profile__free(p);
}

/* the history of the pids kept, of the pids with samples and of their fork ancestors stays;
 * the rest goes */
Test(profile, keep_pids_keeps_ancestors_and_sampled)
{
	struct profile *p = profile__new();
	struct profile_sample s = { .pid = 7, .count = 1 };
	u32 keep[] = { 3, 3, 99 };
	bool seen[10] = {};

	for (u32 pid = 1; pid <= 7; pid++) {
		cr_assert_eq(profile__add_mapping(p, pid, 0, 0x1000 * pid, 0x1000, 0, "/bin/x", NULL, 0), 0);
		cr_assert_eq(profile__add_comm(p, pid, 0, "x", false), 0);
	}
	cr_assert_eq(profile__add_fork(p, 3, 2, 10), 0);	/* 3 forked from 2, 2 from 1 */
	cr_assert_eq(profile__add_fork(p, 2, 1, 5), 0);
	cr_assert_eq(profile__add_fork(p, 5, 4, 5), 0);	/* 4 and 5: nobody keeps them */
	cr_assert_eq(profile__add_sample(p, &s), 0);	/* 7 has samples */
	cr_assert_eq(profile__keep_pids(p, keep, 3), 0);
	for (size_t i = 0; i < p->nr_mappings; i++)
		seen[p->mappings[i].pid] = true;
	cr_expect(seen[1] && seen[2] && seen[3] && seen[7], "kept: 1 %d 2 %d 3 %d 7 %d", seen[1],
		  seen[2], seen[3], seen[7]);
	cr_expect(!seen[4] && !seen[5] && !seen[6], "dropped: 4 %d 5 %d 6 %d", seen[4], seen[5], seen[6]);
	cr_expect_eq(p->nr_mappings, 4);
	cr_expect_eq(p->nr_comms, 4);
	cr_expect_eq(p->nr_forks, 2);
	profile__free(p);
}

/* the strings of what keep_pids dropped go (a dead node's JIT symbols once made up 84 KB of
 * a 5 KB profile); every kept reference still names its string, through a write and read */
/* a sorted table with rows appended (a live session's sideband) is sorted as a whole sort
 * would: the appended rows merged in, equal addresses in the order they came */
Test(profile, finish_merges_what_was_appended)
{
	static const u64 first[] = { 0x10, 0x30, 0x50, 0x70, 0x90, 0xb0 }, later[] = { 0xa0, 0x30, 0x05, 0xff };
	static const char *const want[] = { "l05", "f10", "f30", "l30", "f50", "f70", "f90", "la0", "fb0", "lff" };
	struct profile *p = profile__new();
	char name[8];

	cr_assert_not_null(p);
	for (size_t i = 0; i < ARRAY_SIZE(first); i++) {
		snprintf(name, sizeof(name), "f%02llx", (unsigned long long)first[i]);
		cr_assert_eq(profile__add_ksym(p, first[i], name), 0);
	}
	profile__finish(p);
	for (size_t i = 0; i < ARRAY_SIZE(later); i++) {
		snprintf(name, sizeof(name), "l%02llx", (unsigned long long)later[i]);
		cr_assert_eq(profile__add_ksym(p, later[i], name), 0);
	}
	profile__finish(p);
	cr_assert_eq(p->nr_ksyms, ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		cr_expect_str_eq(profile__str(p, p->ksyms[i].name), want[i], "ksym %zu", i);
	profile__free(p);
}

Test(profile, compacting_strings_keeps_what_is_referred_to)
{
	struct profile *p = profile__new(), *q;
	struct profile_sample s = { .pid = 7, .count = 1 };
	size_t before;
	u32 keep = 7;

	cr_assert_eq(profile__add_mapping(p, 7, 0, 0x1000, 0x1000, 0, "/bin/kept", NULL, 0), 0);
	cr_assert_eq(profile__add_comm(p, 7, 0, "kept", false), 0);
	cr_assert_eq(profile__add_sample(p, &s), 0);
	for (int i = 0; i < 1000; i++) {
		char name[64];

		snprintf(name, sizeof(name), "JS:~someone_elses_function_%d", i);
		cr_assert_eq(profile__add_jitsym(p, 99, 0x10000 + 16 * i, 16, name, i, 0), 0);
	}
	cr_assert_eq(profile__add_jitsym(p, 7, 0x5000, 16, "JS:*mine", 0, 0), 0);
	cr_assert_eq(profile__add_mapping(p, 99, 0, 0x1000, 0x1000, 0, "/bin/dropped", NULL, 0), 0);
	cr_assert_eq(profile__keep_pids(p, &keep, 1), 0);
	before = p->strs.len;
	cr_assert_eq(profile__compact_strings(p), 0);
	cr_expect_lt(p->strs.len, before / 100, "%zu bytes of strings, %zu before", p->strs.len, before);
	cr_expect_str_eq(profile__str(p, 0), "");
	cr_expect_str_eq(profile__str(p, p->mappings[0].path), "/bin/kept");
	cr_expect_str_eq(profile__str(p, p->comms[0].comm), "kept");
	cr_assert_eq(p->nr_jitsyms, 1);
	cr_expect_str_eq(profile__str(p, p->jitsyms[0].name), "JS:*mine");
	/* interning still finds what is there and adds what is not */
	cr_expect_eq(profile__intern(p, "kept"), p->comms[0].comm);
	before = p->strs.len;
	cr_expect_eq(profile__intern(p, "/bin/dropped"), (s64)before, "appended, as it was gone");
	cr_assert_eq(profile__write(p, path_in_tmp("compact.data")), 0);
	cr_assert_eq(profile__read(path_in_tmp("compact.data"), &q), 0);
	cr_expect_str_eq(profile__str(q, q->jitsyms[0].name), "JS:*mine");
	cr_expect_str_eq(profile__str(q, q->mappings[0].path), "/bin/kept");
	profile__free(q);
	profile__free(p);
}

/* a "Name: N kB" line of /proc/self/status */
static unsigned long long status_kb(const char *name)
{
	unsigned long long v = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	cr_assert(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, strlen(name)))
			sscanf(line + strlen(name), "%llu", &v);
	fclose(f);
	return v;
}

/* a 3 GB sparse file with a profile's magic and a bogus header: refused from its first bytes,
 * not after reading 3 GB */
Test(profile, huge_file_refused_from_its_header, .init = cr_redirect_stderr)
{
	const char *path = path_in_tmp("huge.data");
	struct profile *q;
	unsigned long long hwm, rss;
	char head[64] = PROFILE_MAGIC;
	u64 t0;
	FILE *f = fopen(path, "wb");

	cr_assert(f);
	cr_assert_eq(fwrite(head, 1, sizeof(head), f), sizeof(head));
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(truncate(path, 3ll << 30), 0);
	/* the peak from here: this process's before the read (the runner it was forked from,
	 * ASan's shadow) is not the reader's (511 MB once in a sanitizer run) */
	f = fopen("/proc/self/clear_refs", "w");
	cr_assert(f && fputs("5", f) >= 0 && !fclose(f), "cannot reset the peak RSS");
	rss = status_kb("VmRSS:");
	t0 = now_ns(CLOCK_MONOTONIC);
	cr_expect_eq(profile__read(path, &q), -EINVAL);
	cr_expect_lt(now_ns(CLOCK_MONOTONIC) - t0, 500000000ull, "took %llu ms",
		     (unsigned long long)(now_ns(CLOCK_MONOTONIC) - t0) / 1000000);
	/* what the read added to the peak (the kernel updates VmHWM lazily: at least VmRSS):
	 * under 100 MB, the file being 3 GB */
	hwm = status_kb("VmHWM:");
	if (hwm < status_kb("VmRSS:"))
		hwm = status_kb("VmRSS:");
	cr_expect_lt(hwm < rss ? 0 : hwm - rss, 100 * 1024, "peak memory %llu kB, %llu kB before the read",
		     hwm, rss);
	cr_expect(stderr_has("is corrupt: header checksum mismatch"));
}

/* the same section twice: which copy is meant? Refused, for a known and an unknown type */
Test(profile, duplicate_section_is_refused, .init = cr_redirect_stderr)
{
	static const char meta[] = "event=cpu-clock\n";
	struct profile_sample_rec s = { .pid = 1, .ip = 0x1000, .count = 1 };
	struct test_section secs[3] = {
		{ SEC_META, meta, sizeof(meta) - 1 }, { SEC_SAMPLES, &s, sizeof(s) },
		{ SEC_SAMPLES, &s, sizeof(s) },
	};
	struct profile *q;
	size_t size;
	void *buf = build_container(PROFILE_MAGIC, 1, 2, secs, 2, &size);

	cr_assert_eq(profile__parse(buf, size, "once", &q), 0);
	profile__free(q);
	free(buf);
	buf = build_container(PROFILE_MAGIC, 1, 2, secs, 3, &size);
	cr_expect_eq(profile__parse(buf, size, "twice", &q), -EINVAL);
	free(buf);
	secs[1].type = secs[2].type = 99;	/* a newer version's: still one of each */
	buf = build_container(PROFILE_MAGIC, 1, 2, secs, 3, &size);
	cr_expect_eq(profile__parse(buf, size, "twice", &q), -EINVAL);
	free(buf);
	fflush(stderr);
	cr_expect_stderr_eq_str("hsbpf: 'twice' is corrupt: section 3 appears twice\n"
				"hsbpf: 'twice' is corrupt: section 99 appears twice\n");
}

/* counts whose sum wraps (2^63 + 2^63 = 0) printed as 92233720368547758080.00% and -nan%:
 * refused, for samples, weights and branch records */
Test(profile, overflowing_counts_are_refused, .init = cr_redirect_stderr)
{
	struct profile_sample_rec s[2] = {
		{ .pid = 1, .ip = 0x1000, .count = 1ull << 63, .weight = 1 },
		{ .pid = 1, .ip = 0x1004, .count = 1ull << 63, .weight = 1 },
	};
	struct profile_lbr l[2] = {
		{ .pid = 1, .kind = 1, .a = 1, .b = 2, .count = UINT64_MAX },
		{ .pid = 1, .kind = 1, .a = 3, .b = 4, .count = 1 },
	};
	struct test_section sec = { SEC_SAMPLES, s, sizeof(s) };
	struct profile *q;
	size_t size;
	void *buf;

	for (int i = 0; i < 4; i++) {
		if (i == 1) {
			s[0].count = s[1].count = 1;
			s[0].weight = s[1].weight = 1ull << 63;
		} else if (i == 2) {
			sec = (struct test_section){ SEC_LBR, l, sizeof(l) };
		} else if (i == 3) {
			s[0].weight = (1ull << 63) - 1;	/* the largest sums that fit */
			l[0].count = UINT64_MAX - 1;
			buf = build_container(PROFILE_MAGIC, 1, 2,
					      (struct test_section[]){ { SEC_SAMPLES, s, sizeof(s) },
								       { SEC_LBR, l, sizeof(l) } }, 2, &size);
			cr_expect_eq(profile__parse(buf, size, "fits", &q), 0);
			cr_expect_eq(profile__total_weight(q), UINT64_MAX);
			profile__free(q);
			free(buf);
			break;
		}
		buf = build_container(PROFILE_MAGIC, 1, 2, &sec, 1, &size);
		cr_expect_eq(profile__parse(buf, size, "hostile", &q), -EINVAL, "case %d", i);
		free(buf);
	}
	fflush(stderr);
	cr_expect_stderr_eq_str("hsbpf: 'hostile' is corrupt: sample counts overflow\n"
				"hsbpf: 'hostile' is corrupt: sample counts overflow\n"
				"hsbpf: 'hostile' is corrupt: branch record counts overflow\n");
}

/* a device stays a device (a record -o /dev/null replaced it with a 0600 file); a FIFO with a
 * reader gets the profile's bytes */
Test(profile, devices_and_fifos_are_written_in_place)
{
	struct profile *p = sample_profile(), *q;
	char null[512], fifo[512], got[512];
	struct stat st;
	int status;
	pid_t pid;

	snprintf(null, sizeof(null), "%s", path_in_tmp("null"));
	snprintf(fifo, sizeof(fifo), "%s", path_in_tmp("fifo"));
	cr_assert_eq(mknod(null, S_IFCHR | 0666, makedev(1, 3)), 0, "mknod: %s", strerror(errno));
	cr_assert_eq(profile__write(p, null), 0);
	cr_assert_eq(stat(null, &st), 0);
	cr_expect(S_ISCHR(st.st_mode), "the device became mode %o", st.st_mode);
	cr_expect_eq(st.st_rdev, makedev(1, 3));

	cr_assert_eq(mkfifo(fifo, 0600), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		/* the reader: the FIFO's bytes into got.data */
		char cmd[1200];

		snprintf(cmd, sizeof(cmd), "cat '%s' > '%s'", fifo, path_in_tmp("got.data"));
		_exit(system(cmd) ? 1 : 0);
	}
	cr_assert_eq(profile__write(p, fifo), 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect_eq(status, 0);
	cr_assert_eq(stat(fifo, &st), 0);
	cr_expect(S_ISFIFO(st.st_mode));
	snprintf(got, sizeof(got), "%s", path_in_tmp("got.data"));
	cr_assert_eq(profile__read(got, &q), 0);
	cr_expect_eq(profile__total_samples(q), profile__total_samples(p));
	profile__free(q);
	profile__free(p);
}

/* a valid output name of 250 characters: the temporary file's name must not exceed NAME_MAX */
Test(profile, output_name_of_250_characters)
{
	struct profile *p = sample_profile(), *q;
	char name[251], path[1024];
	const char *const keep[] = { name };

	memset(name, 'n', 250);
	name[250] = 0;
	snprintf(path, sizeof(path), "%s/%s", tmpdir(), name);
	cr_assert_eq(profile__write(p, path), 0);
	cr_assert_eq(profile__read(path, &q), 0);
	cr_expect_eq(profile__total_samples(q), 4);
	cr_expect_eq(others_in(tmpdir(), keep, 1), 0);
	profile__free(q);
	profile__free(p);
}

/* the metadata fields as profile.c lists them: every string with every byte it can hold
 * (1 to 255), filled to its maximum length, and numbers at their extremes, come back as they
 * were written, whatever the bytes (a newline in a command broke the key=value section) */
#define MS(f) { #f, 's', offsetof(struct profile_meta, f), sizeof(((struct profile_meta *)0)->f) }
#define MN(f) { #f, 'n', offsetof(struct profile_meta, f), sizeof(((struct profile_meta *)0)->f) }
#define MD(f) { #f, 'd', offsetof(struct profile_meta, f), sizeof(double) }
static const struct {
	const char *key;
	char kind;
	size_t off, size;
} meta_fields[] = {
	MS(version), MS(event), MN(event_type), MN(event_config), MN(precise), MN(period), MN(freq),
	MS(period_mode), MS(unit), MS(target), MS(host), MS(kernel), MN(start_realtime_ns),
	MN(start_mono_ns), MN(duration_ns), MN(nr_cpus), MS(call_graph), MN(max_frames), MS(exec_tags),
	MS(sample_keys), MN(time_bucket_ns), MN(time_origin_ns), MS(offcpu), MN(min_block_ns),
	MN(max_block_ns), MN(alloc_period), MD(offcpu_sample),
};

/* the keys of a key=value section, counted */
static size_t count_keys(const char *buf, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += buf[i] == '\n';
	return n;
}

Test(profile, metadata_round_trips_every_byte)
{
	const char *path = path_in_tmp("m.data");
	size_t rounds = 0;

	/* as many rounds as the smallest string field needs to see all 255 bytes */
	for (size_t i = 0; i < ARRAY_SIZE(meta_fields); i++)
		if (meta_fields[i].kind == 's' && (255 + meta_fields[i].size - 2) / (meta_fields[i].size - 1) > rounds)
			rounds = (255 + meta_fields[i].size - 2) / (meta_fields[i].size - 1);
	cr_assert_geq(rounds, 37, "unit[8] needs 37 rounds of 7 bytes");
	for (size_t r = 0; r < rounds; r++) {
		struct profile *p = profile__new(), *q;
		size_t seen[256] = {};

		cr_assert(p);
		for (size_t i = 0; i < ARRAY_SIZE(meta_fields); i++) {
			char *f = (char *)&p->meta + meta_fields[i].off;
			size_t n = meta_fields[i].size;

			if (meta_fields[i].kind == 's') {
				/* n - 1 bytes: the longest string the field holds */
				for (size_t k = 0; k + 1 < n; k++)
					f[k] = 1 + (r * (n - 1) + k) % 255;
				f[n - 1] = 0;
			} else if (meta_fields[i].kind == 'd') {	/* numbers: the extremes */
				*(double *)f = r & 1 ? 1.7976931348623157e308 : 4.9e-324;
			} else if (n == 8) {
				*(u64 *)f = r & 1 ? UINT64_MAX - r : r;
			} else {
				*(u32 *)f = r & 1 ? UINT32_MAX - r : r;
			}
		}
		p->stats.samples = UINT64_MAX;
		p->stats.interval_sumsq = r & 1 ? 1.7976931348623157e308 : 4.9e-324;
		cr_assert_eq(profile__write(p, path), 0, "round %zu", r);
		cr_assert_eq(profile__read(path, &q), 0, "round %zu: the written profile does not read back", r);
		for (size_t i = 0; i < ARRAY_SIZE(meta_fields); i++) {
			const char *a = (const char *)&p->meta + meta_fields[i].off;
			const char *b = (const char *)&q->meta + meta_fields[i].off;

			cr_expect_eq(memcmp(a, b, meta_fields[i].size), 0, "round %zu: %s differs", r,
				     meta_fields[i].key);
			if (meta_fields[i].kind == 's')
				for (size_t k = 0; a[k]; k++)
					seen[(u8)a[k]]++;
		}
		cr_expect_eq(q->stats.samples, UINT64_MAX);
		cr_expect_eq(q->stats.interval_sumsq, p->stats.interval_sumsq);
		for (int b = 1; r == 0 && b < 256; b++)
			cr_expect(seen[b], "byte %d not tried in round 0", b);
		profile__free(p);
		profile__free(q);
	}
	/* the list above is profile.c's: a field added there and not here fails */
	{
		struct profile *p = profile__new();
		size_t size;
		u8 *buf;
		u32 nr, type;
		u64 off, len;

		cr_assert_eq(profile__write(p, path), 0);
		buf = read_file(path, &size);
		memcpy(&nr, buf + 32, 4);
		for (u32 i = 0; i < nr; i++) {
			memcpy(&type, buf + 64 + i * 24, 4);
			memcpy(&off, buf + 64 + i * 24 + 8, 8);
			memcpy(&len, buf + 64 + i * 24 + 16, 8);
			if (type == SEC_META)
				cr_expect_eq(count_keys((char *)buf + off, len), ARRAY_SIZE(meta_fields));
		}
		free(buf);
		profile__free(p);
	}
}

/* the escapes came with format 1.2: a 1.1 file's backslashes are its own, read as they are;
 * in a 1.2 file an unknown escape is damage */
Test(profile, older_metadata_reads_unescaped, .init = cr_redirect_stderr)
{
	/* the text a\nb \\ (backslashes as written, no newline in it) */
	static const char meta[] = "target=a\\nb \\\\\n";
	struct test_section sec = { SEC_META, meta, sizeof(meta) - 1 };
	struct profile *q;
	size_t size;
	void *buf = build_container(PROFILE_MAGIC, 1, 1, &sec, 1, &size);

	cr_assert_eq(profile__parse(buf, size, "old", &q), 0);
	cr_expect_str_eq(q->meta.target, "a\\nb \\\\");
	profile__free(q);
	free(buf);
	buf = build_container(PROFILE_MAGIC, 1, 2, &sec, 1, &size);
	cr_assert_eq(profile__parse(buf, size, "new", &q), 0);
	cr_expect_str_eq(q->meta.target, "a\nb \\");
	profile__free(q);
	free(buf);
	for (int i = 0; i < 2; i++) {
		sec.data = i ? "target=a\\q\n" : "target=a\\\n";
		sec.size = strlen(sec.data);
		buf = build_container(PROFILE_MAGIC, 1, 2, &sec, 1, &size);
		cr_expect_eq(profile__parse(buf, size, "bad", &q), -EINVAL, "%s", (char *)sec.data);
		free(buf);
	}
}

/* -o through a link: the link is replaced by the new file, the file it named is untouched
 * (another user's link in a folder root writes to must not redirect the write) */
Test(profile, a_link_at_the_output_is_replaced_not_followed)
{
	struct profile *p = sample_profile(), *q;
	char file[512], link[512], buf[8] = {};
	struct stat st;
	FILE *f;

	snprintf(file, sizeof(file), "%s", path_in_tmp("real.data"));
	snprintf(link, sizeof(link), "%s", path_in_tmp("link.data"));
	write_bytes(file, "old", 3);
	cr_assert_eq(symlink(file, link), 0);
	cr_assert_eq(profile__write(p, link), 0);
	cr_assert_eq(lstat(link, &st), 0);
	cr_expect(S_ISREG(st.st_mode), "the link is still there (mode %o)", st.st_mode);
	cr_assert_eq(profile__read(link, &q), 0);
	cr_expect_eq(profile__total_samples(q), 4);
	profile__free(q);
	f = fopen(file, "r");
	cr_assert(f);
	cr_expect_eq(fread(buf, 1, sizeof(buf), f), 3);
	fclose(f);
	cr_expect_str_eq(buf, "old", "the file the link names was written");
	profile__free(p);
}

/* 1.6: mapping generations go beside SAMPLES and STACK_SAMPLES, whose records keep their
 * 48 bytes; written only when one is set, read back into their samples */
/* pid 10 runs [old], execs [new] at t=100 (BPF tags its samples exec_ns=150), dlopens at
 * t=300, forks pid 11 at t=200, which never execs; pid 12 forked from 10 at t=50 */
static struct profile *timeline(void)
{
	struct profile *p = profile__new();

	profile__add_comm(p, 10, 0, "old", false);
	profile__add_mapping(p, 10, 0, 0x1000, 0x1000, 0, "[old]", NULL, 0);
	profile__add_comm(p, 10, 100, "new", true);
	profile__add_mapping(p, 10, 110, 0x1000, 0x2000, 0, "[new]", NULL, 0);
	profile__add_mapping(p, 10, 300, 0x8000, 0x1000, 0, "[dlopened]", NULL, 0);
	profile__add_fork(p, 11, 10, 200);
	profile__add_fork(p, 12, 10, 50);
	profile__finish(p);
	return p;
}

static const char *dso_of(const struct profile *p, u32 pid, u64 exec_ns, u64 ip)
{
	const struct profile_mapping *m = profile__find_mapping(p, pid, exec_ns, 0, ip);

	return m ? profile__str(p, m->path) : "(none)";
}

Test(profile, images_across_exec_and_fork)
{
	struct profile *p = timeline();
	static const struct {
		u32 pid;
		u64 exec_ns, ip;
		const char *want;
	} cases[] = {
		{ 10, 0, 0x1800, "[old]" },		/* before the exec */
		{ 10, 0, 0x2800, "(none)" },		/* [new] is not in the old image */
		{ 10, 150, 0x1800, "[new]" },		/* after the exec */
		{ 10, 150, 0x2800, "[new]" },
		{ 10, 150, 0x8010, "[dlopened]" },	/* loaded later in the same image */
		{ 11, 0, 0x1800, "[new]" },		/* forked after the exec */
		{ 11, 0, 0x8010, "(none)" },		/* forked before the dlopen */
		{ 12, 0, 0x1800, "[old]" },		/* forked before the exec */
		{ 13, 0, 0x1800, "(none)" },		/* unknown process */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_str_eq(dso_of(p, cases[i].pid, cases[i].exec_ns, cases[i].ip),
				 cases[i].want, "case %zu", i);
	cr_expect_str_eq(profile__comm(p, 10, 0), "old");
	cr_expect_str_eq(profile__comm(p, 10, 150), "new");
	cr_expect_str_eq(profile__comm(p, 11, 0), "new");
	cr_expect_str_eq(profile__comm(p, 0, 0), "swapper");
	profile__free(p);
}

/* tags taken at the exec's rename come a moment before the exec's COMM record: with meta
 * exec_tags "rename" the record just after a tag starts its image, not ends it */
Test(profile, rename_tags_name_the_image_their_record_starts)
{
	struct profile *p = timeline();

	profile__add_comm(p, 10, 100000500, "third", true);
	profile__finish(p);
	snprintf(p->meta.exec_tags, sizeof(p->meta.exec_tags), "rename");
	cr_expect_str_eq(profile__comm(p, 10, 0), "old");		/* no tag: before any exec */
	cr_expect_str_eq(profile__comm(p, 10, 99), "new");		/* 1 ns before its record */
	cr_expect_str_eq(profile__comm(p, 10, 100), "new");		/* at it */
	cr_expect_str_eq(dso_of(p, 10, 99, 0x2800), "[new]");
	cr_expect_str_eq(profile__comm(p, 10, 100000400), "third");
	/* a tag whose own record was lost is not taken for the next exec's, 100 ms on */
	cr_expect_str_eq(profile__comm(p, 10, 150), "new");
	/* the same tags taken after their records (sched_process_exec) */
	p->meta.exec_tags[0] = 0;
	cr_expect_str_eq(profile__comm(p, 10, 99), "old");
	cr_expect_str_eq(profile__comm(p, 10, 150), "new");
	cr_expect_str_eq(profile__comm(p, 10, 100000400), "new");
	cr_expect_str_eq(profile__comm(p, 10, 100000600), "third");
	profile__free(p);
}

Test(profile, mapping_generations_round_trip, .init = cr_redirect_stderr)
{
	struct profile *p = sample_profile(), *q;
	struct profile_stack_sample ss = { .pid = 42, .exec_ns = 5, .map_ns = 77, .count = 2, .weight = 2 };
	char path[600], plain[600];
	struct profile_sample_rec rec = { .pid = 42, .ip = 0x1000, .count = 1 };
	struct test_section secs[2] = { { SEC_SAMPLES, &rec, sizeof(rec) },
					{ SEC_SAMPLE_MAPS, (u64[2]){ 1, 2 }, 16 } };
	struct stat with, without;
	size_t size;
	void *buf;

	snprintf(path, sizeof(path), "%s", path_in_tmp("maps.data"));
	snprintf(plain, sizeof(plain), "%s", path_in_tmp("plain.data"));
	cr_assert_eq(profile__write(p, plain), 0);
	p->samples[1].map_ns = 123456789;
	cr_assert_eq(profile__add_stack_sample(p, &ss), 0);
	cr_assert_eq(profile__write(p, path), 0);
	cr_assert_eq(profile__read(path, &q), 0);
	cr_assert_eq(q->nr_samples, 2);
	cr_expect_eq(q->samples[0].map_ns, 0);
	cr_expect_eq(q->samples[1].map_ns, 123456789);
	cr_expect_eq(q->samples[1].ip, 0xffffffff81000010ull);
	cr_assert_eq(q->nr_stack_samples, 1);
	cr_expect_eq(q->stack_samples[0].map_ns, 77);
	cr_expect_eq(q->stack_samples[0].exec_ns, 5);
	cr_expect_eq(q->stack_samples[0].count, 2);
	profile__free(q);
	/* none set: no section, the file as 1.5 wrote it but for the version */
	cr_assert_eq(stat(plain, &without), 0);
	cr_assert_eq(stat(path, &with), 0);
	cr_expect_gt(with.st_size, without.st_size);
	cr_assert_eq(profile__read(plain, &q), 0);
	cr_expect_eq(q->samples[1].map_ns, 0);
	profile__free(q);
	/* a 1.5 file: its records read as they did */
	buf = build_container(PROFILE_MAGIC, 1, 5, secs, 1, &size);
	cr_assert_eq(profile__parse(buf, size, "old", &q), 0);
	cr_expect_eq(q->nr_samples, 1);
	cr_expect_eq(q->samples[0].ip, 0x1000);
	cr_expect_eq(q->samples[0].map_ns, 0);
	profile__free(q);
	free(buf);
	/* generations that do not match their samples */
	buf = build_container(PROFILE_MAGIC, 1, 6, secs, 2, &size);
	cr_expect_eq(profile__parse(buf, size, "bad", &q), -EINVAL);
	free(buf);
	fflush(stderr);
	cr_expect_stderr_eq_str("hsbpf: 'bad' is corrupt: sample mapping generations do not match the samples\n");
	profile__free(p);
}

Test(profile, python_frames_keep_their_names_through_the_file)
{
	struct profile *p = sample_profile(), *q;
	const char *path = path_in_tmp("py.data");
	u64 a = HSBPF_PY_FRAME(0x7f0000001230ull, 12), b = HSBPF_PY_FRAME(0x7f0000004560ull, 3);

	cr_assert_eq(profile__add_pyframe(p, 7, b, "Outer.meth", "/srv/app.py", 40), 0);
	cr_assert_eq(profile__add_pyframe(p, 7, a, "inner", "/srv/app.py", 12), 0);
	profile__finish(p);
	cr_assert_eq(profile__write(p, path), 0);
	cr_assert_eq(profile__read(path, &q), 0);
	cr_assert_eq(q->nr_pyframes, 2);
	/* found with or without the entry bit, for its own process only */
	cr_assert(profile__find_pyframe(q, 7, a | HSBPF_PY_ENTRY));
	cr_expect_str_eq(profile__str(q, profile__find_pyframe(q, 7, a)->name), "inner");
	cr_expect_eq(profile__find_pyframe(q, 7, a)->line, 12);
	cr_expect_str_eq(profile__str(q, profile__find_pyframe(q, 7, b)->file), "/srv/app.py");
	cr_expect_null(profile__find_pyframe(q, 8, a));
	cr_expect_null(profile__find_pyframe(q, 7, HSBPF_PY_FRAME(0x7f0000001230ull, 13)));
	profile__free(p);
	profile__free(q);
}

/* 2.0: the sections are packed (columns and zstd) where that makes them smaller, and come back
 * as they were */
Test(profile, packed_sections_round_trip)
{
	struct profile *p = sample_profile(), *q;
	const char *path = path_in_tmp("packed.data");
	size_t size, packed = 0;
	u16 major;
	u32 nsec;
	u8 *buf;

	for (u32 i = 0; i < 2000; i++) {
		struct profile_sample s = { .pid = 100 + i / 10, .ip = 0x401000 + i % 10 * 16,
					    .exec_ns = 5 + i / 10, .count = 1 + i % 3,
					    .weight = 1000 * (1 + i % 3) };

		cr_assert_eq(profile__add_sample(p, &s), 0);
	}
	cr_assert_eq(profile__write(p, path), 0);
	buf = read_file(path, &size);
	memcpy(&major, buf + 8, 2);
	cr_expect_eq(major, 2);
	memcpy(&nsec, buf + 32, 4);
	for (u32 i = 0; i < nsec; i++) {
		u32 type;

		memcpy(&type, buf + 64 + i * 24, 4);
		packed += !!(type & FILE_SECTION_PACKED);
		if ((type & ~FILE_SECTION_PACKED) == SEC_SAMPLES)
			cr_expect(type & FILE_SECTION_PACKED, "the samples are not packed");
	}
	cr_expect_gt(packed, 0);
	cr_expect_lt(size, 2002 * 48 / 4, "%zu bytes", size);
	cr_assert_eq(profile__read(path, &q), 0);
	cr_assert_eq(q->nr_samples, p->nr_samples);
	for (size_t i = 0; i < p->nr_samples; i++)
		cr_expect_eq(memcmp(&q->samples[i], &p->samples[i], sizeof(p->samples[i])), 0,
			     "sample %zu", i);
	cr_expect_str_eq(q->meta.target, "command: ./x a=b");
	cr_expect_eq(q->nr_comms, 1);
	profile__free(q);
	free(buf);
	profile__free(p);
}

/* a packed section whose bytes are whole (its CRC right) but do not unpack: refused with the
 * section and the reason; the packed bit means nothing in a 1.x file (an unknown type) */
Test(profile, damaged_packed_section_is_refused, .init = cr_redirect_stderr)
{
	static const char meta[] = "event=cpu-clock\n";
	struct profile_sample_rec s[4] = { { .pid = 1, .ip = 0x1000, .count = 1 } };
	struct test_section secs[2] = { { SEC_META, meta, sizeof(meta) - 1 } };
	u8 garbage[64];
	struct profile *q;
	size_t size, psize;
	void *buf, *packed;

	memset(garbage, 0x5a, sizeof(garbage));
	memcpy(garbage, &(u64){ 48 }, 8);
	garbage[8] = 0;
	secs[1] = (struct test_section){ SEC_SAMPLES | FILE_SECTION_PACKED, garbage, sizeof(garbage) };
	buf = build_container(PROFILE_MAGIC, 2, 0, secs, 2, &size);
	cr_expect_eq(profile__parse(buf, size, "bad", &q), -EINVAL);
	free(buf);
	/* a real packed section, cut short (and its CRC made to match) */
	cr_assert_eq(pack_section(s, sizeof(s), NULL, &packed, &psize), 0);
	secs[1] = (struct test_section){ SEC_SAMPLES | FILE_SECTION_PACKED, packed, psize - 5 };
	buf = build_container(PROFILE_MAGIC, 2, 0, secs, 2, &size);
	cr_expect_eq(profile__parse(buf, size, "cut", &q), -EINVAL);
	free(buf);
	/* whole, it reads */
	secs[1].size = psize;
	buf = build_container(PROFILE_MAGIC, 2, 0, secs, 2, &size);
	cr_assert_eq(profile__parse(buf, size, "whole", &q), 0);
	cr_expect_eq(q->nr_samples, 4);
	cr_expect_eq(q->samples[0].ip, 0x1000);
	profile__free(q);
	free(buf);
	/* in a 1.11 file the same section is of a type 1.11 does not know: skipped */
	buf = build_container(PROFILE_MAGIC, 1, 11, secs, 2, &size);
	cr_assert_eq(profile__parse(buf, size, "old", &q), 0);
	cr_expect_eq(q->nr_samples, 0);
	profile__free(q);
	free(buf);
	free(packed);
	fflush(stderr);
	cr_expect_stderr_eq_str("hsbpf: 'bad' is corrupt: section 3: packed section does not decompress\n"
				"hsbpf: 'cut' is corrupt: section 3: packed section does not decompress\n");
}

/* a 1.x file (format 1.10, off-CPU with stacks and wakers) reads, and rewritten as 2.0 reads
 * back the same */
Test(profile, old_file_rewritten_packed_reads_the_same)
{
	struct profile *p, *q;
	const char *path = path_in_tmp("re.data");

	cr_assert_eq(profile__read("tests/data/offcpu-1.10.hsbpf", &p), 0);
	cr_assert_gt(p->nr_stack_samples, 0);
	cr_assert_eq(profile__write(p, path), 0);
	cr_assert_eq(profile__read(path, &q), 0);
#define SAME(arr, nr) do { \
		cr_expect_eq(q->nr, p->nr, #nr); \
		if (q->nr == p->nr && p->nr) \
			cr_expect_eq(memcmp(q->arr, p->arr, p->nr * sizeof(*p->arr)), 0, #arr); \
	} while (0)
	SAME(samples, nr_samples);
	SAME(stack_samples, nr_stack_samples);
	SAME(stacks, nr_stacks);
	SAME(frames, nr_frames);
	SAME(mappings, nr_mappings);
	SAME(comms, nr_comms);
	SAME(forks, nr_forks);
	SAME(ksyms, nr_ksyms);
	SAME(sample_keys, nr_sample_keys);
	SAME(stack_sample_keys, nr_stack_sample_keys);
	SAME(stack_sample_wakers, nr_stack_sample_wakers);
#undef SAME
	cr_expect_eq(p->strs.len, q->strs.len);
	cr_expect_eq(memcmp(&p->meta, &q->meta, sizeof(p->meta)), 0);
	cr_expect_eq(memcmp(&p->stats, &q->stats, sizeof(p->stats)), 0);
	profile__free(q);
	profile__free(p);
}

/* a Python frame's generation (HSBPF_PY_GEN: a code object at an address another had held)
 * round-trips with its code object, offset and entry bit; no native address, user or kernel,
 * nor an object frame, is taken for a Python frame */
Test(profile, python_frame_generations_round_trip)
{
	const u64 code = 0x7ffff0001238ull, natives[] = {
		0, 0x401000ull, 0x7f0000001230ull, 0x00007fffffffe000ull, 0xffffffff81000000ull,
		0xffffffffffffffffull, PROFILE_OBJ_FRAME(3, 0x1234),
	};
	u64 seen[HSBPF_PY_GENS];

	for (u32 g = 0; g < HSBPF_PY_GENS; g++) {
		u64 v = HSBPF_PY_FRAME_GEN(code, 32767, g), e = HSBPF_PY_FRAME_GEN(code, 5 | HSBPF_PY_ENTRY, g);

		cr_expect(HSBPF_PY_IS_FRAME(v), "gen %u: %#llx", g, (unsigned long long)v);
		cr_expect_eq(HSBPF_PY_GEN(v), g);
		cr_expect_eq(HSBPF_PY_CODE(v), code);
		cr_expect_eq(HSBPF_PY_OFF(v), 32767);
		cr_expect_not(HSBPF_PY_IS_ENTRY(v));
		cr_expect(HSBPF_PY_IS_ENTRY(e));
		cr_expect_eq(HSBPF_PY_OFF(e), 5);
		cr_expect_eq(HSBPF_PY_KEY(e), HSBPF_PY_FRAME_GEN(code, 5, g));
		cr_expect_eq(HSBPF_PY_GEN(HSBPF_PY_KEY(e)), g);
		cr_expect_eq(HSBPF_PY_WITH_GEN(HSBPF_PY_FRAME(code, 7), g), HSBPF_PY_FRAME_GEN(code, 7, g));
		cr_expect_eq(HSBPF_PY_WITH_GEN(v, 0), HSBPF_PY_FRAME(code, 32767));
		cr_expect_not(PROFILE_IS_OBJ_FRAME(v), "gen %u is an object frame", g);
		for (u32 h = 0; h < g; h++)
			cr_expect_neq(seen[h], v, "gens %u and %u", h, g);
		seen[g] = v;
	}
	/* generation 0 is the encoding profiles had before generations */
	cr_expect_eq(HSBPF_PY_FRAME(code, 9), HSBPF_PY_TAG | (code >> 3) << HSBPF_PY_OFF_BITS | 9);
	for (size_t i = 0; i < sizeof(natives) / sizeof(natives[0]); i++)
		cr_expect_not(HSBPF_PY_IS_FRAME(natives[i]), "%#llx", (unsigned long long)natives[i]);
}

/* two generations of one address are two frames, each with its name */
Test(profile, python_frames_of_two_generations_are_apart)
{
	struct profile *p = sample_profile();
	u64 a = HSBPF_PY_FRAME_GEN(0x7f0000001230ull, 12, 0), b = HSBPF_PY_FRAME_GEN(0x7f0000001230ull, 12, 1);

	cr_assert_eq(profile__add_pyframe(p, 7, b, "bravo", "<b>", 3), 0);
	cr_assert_eq(profile__add_pyframe(p, 7, a, "alpha", "<a>", 3), 0);
	profile__finish(p);
	cr_assert(profile__find_pyframe(p, 7, a | HSBPF_PY_ENTRY));
	cr_assert(profile__find_pyframe(p, 7, b | HSBPF_PY_ENTRY));
	cr_expect_str_eq(profile__str(p, profile__find_pyframe(p, 7, a)->name), "alpha");
	cr_expect_str_eq(profile__str(p, profile__find_pyframe(p, 7, b)->name), "bravo");
	cr_expect_null(profile__find_pyframe(p, 7, HSBPF_PY_FRAME_GEN(0x7f0000001230ull, 12, 2)));
	profile__free(p);
}
