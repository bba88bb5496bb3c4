// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The build-id cache: its layout and one copy per build-id; live, a program deleted after
 * its recording, or while it runs, still symbolized from the cache. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "symbols/build_id.h"
#include "symbols/buildid_cache.h"
#include "helpers.h"

static char cache[PATH_MAX];

/* each test its own cache, in its temporary folder, for the recorder too */
static void setup(void)
{
	snprintf(cache, sizeof(cache), "%s/cache", tmpdir());
	setenv("HSBPF_BUILDID_DIR", cache, 1);
	unsetenv("HSBPF_NO_BUILDID_CACHE");
}

TestSuite(buildid_cache, .init = setup, .fini = cleanup_tmpdir, .timeout = 60);

/* the files under dir, recursively */
static int count_files(const char *dir, int *tmp_files)
{
	DIR *d = opendir(dir);
	int n = 0;

	for (struct dirent *e; d && (e = readdir(d));) {
		char path[PATH_MAX];
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			n += count_files(path, tmp_files);
		} else {
			n++;
			if (strstr(e->d_name, ".tmp."))
				(*tmp_files)++;
		}
	}
	if (d)
		closedir(d);
	return n;
}

Test(buildid_cache, layout_and_one_copy_per_build_id)
{
	const u8 id[20] = { 0xab, 0xcd, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
			    0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12 };
	char path[PATH_MAX], want[PATH_MAX + 64];
	int fd = open(fixture("hot7030"), O_RDONLY), tmps = 0;
	u64 added = 1;
	struct stat st;

	cr_assert_geq(fd, 0);
	cr_expect_eq(buildid_cache__find(cache, id, sizeof(id), BUILDID_CACHE_ELF, path, sizeof(path)),
		     -ENOENT);
	cr_assert_eq(buildid_cache__add_fd(cache, id, sizeof(id), BUILDID_CACHE_ELF, fd, &added), 0);
	cr_assert_eq(fstat(fd, &st), 0);
	cr_expect_eq(added, (u64)st.st_size, "copied %llu of %lld bytes", (unsigned long long)added,
		     (long long)st.st_size);
	cr_assert_eq(buildid_cache__find(cache, id, sizeof(id), BUILDID_CACHE_ELF, path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/ab/cd0102030405060708090a0b0c0d0e0f101112/elf", cache);
	cr_expect_str_eq(path, want);
	/* again: nothing written */
	cr_assert_eq(buildid_cache__add_fd(cache, id, sizeof(id), BUILDID_CACHE_ELF, fd, &added), 0);
	cr_expect_eq(added, 0);
	cr_expect_eq(count_files(cache, &tmps), 1);
	cr_expect_eq(tmps, 0, "a temporary file was left behind");
	close(fd);
	cr_expect_eq(buildid_cache__path(cache, id, 0, BUILDID_CACHE_ELF, path, sizeof(path)), -EINVAL);
}

/* a copy of hot7030 under a name of its own, in the test's folder */
static const char *copy_fixture(const char *name)
{
	static char path[PATH_MAX];
	struct run_result r;

	snprintf(path, sizeof(path), "%s/%s", tmpdir(), name);
	cr_assert_eq(run(&r, "cp %s %s", fixture("hot7030"), path), 0);
	return path;
}

/* report's top symbols of a profile */
static void expect_named(const char *data, const char *deleted)
{
	struct run_result r;

	run(&r, "%s report -i %s --sort sym", hsbpf_bin(), data);
	cr_assert_eq(r.status, 0, "report failed: %s", r.err);
	cr_expect(strstr(r.out, "work_70") && strstr(r.out, "work_30"),
		  "%s deleted: work_70 and work_30 not named:\n%s\n%s", deleted, r.out, r.err);
}

Test(buildid_cache, program_deleted_after_the_recording)
{
	const char *prog = copy_fixture("gone-after");
	char data[PATH_MAX], entry[PATH_MAX];
	struct stat first, again;
	struct run_result r;
	u8 id[BUILD_ID_MAX];
	size_t len;
	int tmps = 0;

	snprintf(data, sizeof(data), "%s/p.data", tmpdir());
	cr_assert_eq(build_id__read(prog, id, sizeof(id), &len), 0);
	run(&r, "%s record -F 499 -o %s -- %s 0.5", hsbpf_bin(), data, prog);
	cr_assert_eq(r.status, 0, "record failed: %s", r.err);
	cr_expect(strstr(r.err, "build-id cache"), "record says nothing of the cache: %s", r.err);
	cr_assert_eq(unlink(prog), 0);
	expect_named(data, prog);
	cr_assert_eq(buildid_cache__find(cache, id, len, BUILDID_CACHE_ELF, entry, sizeof(entry)), 0);
	cr_assert_eq(stat(entry, &first), 0);

	/* recorded again: the program's copy is not written again, nor a second one made */
	cr_assert_eq(run(&r, "cp %s %s", fixture("hot7030"), prog), 0);
	run(&r, "%s record -F 499 -o %s -- %s 0.3", hsbpf_bin(), data, prog);
	cr_assert_eq(r.status, 0, "record failed: %s", r.err);
	cr_expect(strstr(r.err, "there already") && !strstr(r.err, ", 0 there already"),
		  "the second recording found nothing in the cache: %s", r.err);
	cr_assert_eq(stat(entry, &again), 0);
	cr_expect(first.st_ino == again.st_ino && first.st_mtim.tv_sec == again.st_mtim.tv_sec &&
		  first.st_mtim.tv_nsec == again.st_mtim.tv_nsec, "the program was copied again");
	count_files(cache, &tmps);
	cr_expect_eq(tmps, 0, "a temporary file was left behind");
}

Test(buildid_cache, no_buildid_cache_keeps_nothing)
{
	const char *prog = copy_fixture("not-kept");
	char data[PATH_MAX];
	struct run_result r;
	int tmps = 0;

	snprintf(data, sizeof(data), "%s/p.data", tmpdir());
	run(&r, "%s record --no-buildid-cache -F 499 -o %s -- %s 0.3", hsbpf_bin(), data, prog);
	cr_assert_eq(r.status, 0, "record failed: %s", r.err);
	cr_expect_eq(count_files(cache, &tmps), 0);
	cr_assert_eq(unlink(prog), 0);
	run(&r, "%s report -i %s --sort sym", hsbpf_bin(), data);
	cr_expect(!strstr(r.out, "work_70"), "named without a copy:\n%s", r.out);
	cr_expect(strstr(r.err, "build-id cache has no copy"), "no word of the cache: %s", r.err);
}

/* record (-- COMMAND or -p) a copy of hot7030 that is deleted while it runs */
static void deleted_while_running(bool attach)
{
	const char *prog = copy_fixture("gone-while-running");
	char data[PATH_MAX], cmd[2 * PATH_MAX];
	pid_t rec, target = 0, runner = 0;
	int st;

	snprintf(data, sizeof(data), "%s/p.data", tmpdir());
	if (attach) {
		snprintf(cmd, sizeof(cmd), "exec %s 3", prog);
		runner = spawn(cmd);
		target = wait_descendant(runner, "gone-while-runn", 1);
		cr_assert_gt(target, 0);
		cr_assert_eq(unlink(prog), 0);
		snprintf(cmd, sizeof(cmd), "exec %s record -F 499 -d 0.5 -o %s -p %d 2>/dev/null",
			 hsbpf_bin(), data, (int)target);
		rec = spawn(cmd);
	} else {
		snprintf(cmd, sizeof(cmd), "exec %s record -F 499 -o %s -- %s 1 2>/dev/null",
			 hsbpf_bin(), data, prog);
		rec = spawn(cmd);
		cr_assert_gt(wait_descendant(rec, "gone-while-runn", 1), 0);
		cr_assert_eq(unlink(prog), 0);
	}
	cr_assert_eq(waitpid(rec, &st, 0), rec);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "record failed (%d)", st);
	if (runner)
		reap(runner);
	expect_named(data, prog);
}

Test(buildid_cache, command_deleted_while_running)
{
	deleted_while_running(false);
}

Test(buildid_cache, process_deleted_before_attaching)
{
	deleted_while_running(true);
}

/* ---- a cache another user could write to ---- */

static const u8 sec_id[20] = { 0xab, 0xcd, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
			       0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12 };
#define SEC_ENTRY "ab/cd0102030405060708090a0b0c0d0e0f101112"
#define NOBODY 65534

/* a root-only file another user would like overwritten: its path */
static const char *victim(void)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/victim", tmpdir());
	write_bytes(path, "secret\n", 7);
	cr_assert_eq(chmod(path, 0600), 0);
	return path;
}

static void expect_victim_untouched(const char *path)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n;

	cr_assert_geq(fd, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	cr_expect(n == 7 && !memcmp(buf, "secret\n", 7), "the link's target was written (%zd bytes)", n);
}

/* the build-id cache's copy of hot7030 under sec_id: its size, -1 if there is none */
static long long copy_size(void)
{
	char path[PATH_MAX];
	struct stat st;

	if (buildid_cache__find(cache, sec_id, sizeof(sec_id), BUILDID_CACHE_ELF, path, sizeof(path)) ||
	    lstat(path, &st) || !S_ISREG(st.st_mode))
		return -1;
	return st.st_size;
}

static int add_hot7030(u64 *added)
{
	int fd = open(fixture("hot7030"), O_RDONLY), err;

	cr_assert_geq(fd, 0);
	err = buildid_cache__add_fd(cache, sec_id, sizeof(sec_id), BUILDID_CACHE_ELF, fd, added);
	close(fd);
	return err;
}

Test(buildid_cache, planted_temporary_names_are_not_followed)
{
	const char *target = victim();
	char link[PATH_MAX + 64];
	struct run_result r;
	struct stat st;
	u64 added = 0;

	/* the old temporary names (elf.tmp.PID) of this pid and the next ones, and the
	 * random ones' prefix, all links to the victim, owned by someone else */
	cr_assert_eq(run(&r, "mkdir -p %s/%s", cache, SEC_ENTRY), 0);
	for (int i = 0; i < 64; i++) {
		snprintf(link, sizeof(link), "%s/%s/elf.tmp.%d", cache, SEC_ENTRY, (int)getpid() + i);
		cr_assert_eq(symlink(target, link), 0);
		cr_assert_eq(lchown(link, NOBODY, NOBODY), 0);
	}
	cr_assert_eq(add_hot7030(&added), 0);
	expect_victim_untouched(target);
	cr_assert_eq(stat(fixture("hot7030"), &st), 0);
	cr_expect_eq(copy_size(), (long long)st.st_size, "the copy was not placed");
	cr_expect_eq(added, (u64)st.st_size);
}

Test(buildid_cache, a_linked_or_foreign_folder_inside_is_refused)
{
	char elsewhere[PATH_MAX + 16], link[PATH_MAX + 16];
	struct run_result r;
	u64 added = 1;
	int tmps = 0;

	/* XX a link to a folder of another user's choosing: nothing written there */
	snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", tmpdir());
	cr_assert_eq(mkdir(elsewhere, 0777), 0);
	cr_assert_eq(chown(elsewhere, NOBODY, NOBODY), 0);
	cr_assert_eq(mkdir(cache, 0700), 0);
	snprintf(link, sizeof(link), "%s/ab", cache);
	cr_assert_eq(symlink(elsewhere, link), 0);
	cr_expect_lt(add_hot7030(&added), 0);
	cr_expect_eq(added, 0);
	cr_expect_eq(count_files(elsewhere, &tmps), 0, "written through a linked folder");
	cr_expect_lt(copy_size(), 0);

	/* a real folder, another user's: refused too, for reading as well */
	cr_assert_eq(unlink(link), 0);
	cr_assert_eq(run(&r, "mkdir -p %s/%s && chown -R %d %s/ab", cache, SEC_ENTRY, NOBODY, cache), 0);
	cr_expect_eq(add_hot7030(&added), -EPERM);
	cr_expect_eq(count_files(cache, &tmps), 0, "written in another user's folder");
	cr_assert_eq(run(&r, "cp %s %s/%s/elf && chown %d %s/%s/elf", fixture("hot7030"), cache,
			 SEC_ENTRY, NOBODY, cache, SEC_ENTRY), 0);
	cr_expect_lt(copy_size(), 0, "another user's copy is trusted");
}

/* a cache root as dir: whatever record says of it */
static void record_with_cache(const char *dir, struct run_result *r)
{
	const char *prog = copy_fixture("foreign-cache");
	char data[PATH_MAX];

	snprintf(data, sizeof(data), "%s/p.data", tmpdir());
	setenv("HSBPF_BUILDID_DIR", dir, 1);
	run(r, "%s record -F 499 -o %s -- %s 0.3", hsbpf_bin(), data, prog);
	cr_assert_eq(r->status, 0, "record failed: %s", r->err);
	cr_expect_eq(access(data, R_OK), 0, "no profile");
}

static int count(const char *s, const char *what)
{
	int n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

Test(buildid_cache, a_root_another_user_owns_or_can_write_is_refused)
{
	char want[PATH_MAX + 128], sym[PATH_MAX + 16];
	struct run_result r;
	u64 added = 1;
	int tmps = 0;

	/* /tmp/sc made by another user */
	cr_assert_eq(mkdir(cache, 0777), 0);
	cr_assert_eq(chmod(cache, 0777), 0);
	cr_assert_eq(chown(cache, NOBODY, NOBODY), 0);
	snprintf(want, sizeof(want), "build-id cache '%s' is owned by uid %d, not by you: not used",
		 cache, NOBODY);
	record_with_cache(cache, &r);
	cr_expect_eq(count(r.err, want), 1, "not said once: %s", r.err);
	cr_expect_eq(count_files(cache, &tmps), 0, "written in another user's cache");
	cr_expect_eq(add_hot7030(&added), -EPERM);
	cr_expect_eq(added, 0);

	/* ours, but others can write to it */
	cr_assert_eq(chown(cache, geteuid(), getegid()), 0);
	cr_assert_eq(chmod(cache, 0770), 0);
	record_with_cache(cache, &r);
	snprintf(want, sizeof(want), "build-id cache '%s' is writable by group or others: not used",
		 cache);
	cr_expect_eq(count(r.err, want), 1, "not said once: %s", r.err);
	cr_expect_eq(count_files(cache, &tmps), 0);

	/* ours, reached by another user's link */
	cr_assert_eq(chmod(cache, 0700), 0);
	snprintf(sym, sizeof(sym), "%s/sc", tmpdir());
	cr_assert_eq(symlink(cache, sym), 0);
	cr_assert_eq(lchown(sym, NOBODY, NOBODY), 0);
	record_with_cache(sym, &r);
	snprintf(want, sizeof(want), "build-id cache '%s' is a link owned by uid %d, not by you",
		 sym, NOBODY);
	cr_expect(strstr(r.err, want), "%s", r.err);
	cr_expect_eq(count_files(cache, &tmps), 0);

	/* and ours: used (the program, and libc or ld.so if they were sampled) */
	record_with_cache(cache, &r);
	cr_expect(strstr(r.err, "build-id cache '") && !strstr(r.err, " 0 added"), "%s", r.err);
	cr_expect_geq(count_files(cache, &tmps), 1);
	cr_expect(!strstr(r.err, "not used"), "%s", r.err);
}

/* the permission bits of path */
static unsigned mode_of(const char *fmt, const char *a, const char *b)
{
	char path[2 * PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), fmt, a, b);
	cr_assert_eq(lstat(path, &st), 0, "%s", path);
	return st.st_mode & 07777;
}

Test(buildid_cache, a_copy_keeps_at_most_its_sources_permissions)
{
	const char *prog = copy_fixture("private");
	u64 added = 0;
	mode_t old = umask(0);	/* the modes as we ask for them, not as the umask cuts them */
	int fd;

	cr_assert_eq(chmod(prog, 0700), 0);
	fd = open(prog, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(buildid_cache__add_fd(cache, sec_id, sizeof(sec_id), BUILDID_CACHE_ELF, fd, &added), 0);
	close(fd);
	umask(old);
	cr_expect_eq(mode_of("%s/%s/elf", cache, SEC_ENTRY), 0600);
	cr_expect_eq(mode_of("%s%s", cache, ""), 0700);
	cr_expect_eq(mode_of("%s/%s", cache, "ab"), 0700);
	cr_expect_eq(mode_of("%s/%s", cache, SEC_ENTRY), 0700);
}

/* ---- listing, removing, and keeping within a size ---- */

static bool mode_exists(const char *fmt, const char *a)
{
	char path[PATH_MAX + 64];
	struct stat st;

	snprintf(path, sizeof(path), fmt, a);
	return !lstat(path, &st);
}

/* an entry of build-id 0xNN repeated, holding size bytes, last used age seconds ago */
static void make_entry(u8 byte, size_t size, int age)
{
	u8 id[20];
	char file[PATH_MAX], folder[PATH_MAX];
	char *buf = calloc(1, size + 1);
	struct timespec t[2];
	u64 added;
	int fd;

	memset(id, byte, sizeof(id));
	snprintf(file, sizeof(file), "%s/src-%02x", tmpdir(), byte);
	write_bytes(file, buf, size);
	free(buf);
	fd = open(file, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(buildid_cache__add_fd(cache, id, sizeof(id), BUILDID_CACHE_ELF, fd, &added), 0);
	close(fd);
	cr_assert_eq(buildid_cache__path(cache, id, sizeof(id), "", folder, sizeof(folder)), 0);
	folder[strlen(folder) - 1] = 0;		/* DIR/XX/YYYY/ without its slash */
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= age;
	t[1] = t[0];
	cr_assert_eq(utimensat(AT_FDCWD, folder, t, 0), 0, "%s", folder);
}

static const char *hex_of(u8 byte)
{
	static char hex[41];

	for (int i = 0; i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", byte);
	return hex;
}

Test(buildid_cache, listed_least_recently_used_first_and_removed)
{
	struct buildid_cache_entry *e;
	size_t nr;

	cr_assert_eq(buildid_cache__list(cache, &e, &nr), 0);	/* no cache yet: empty */
	cr_expect_eq(nr, 0);
	free(e);
	make_entry(0x11, 1000, 100);
	make_entry(0x22, 2000, 300);
	make_entry(0x33, 3000, 200);
	cr_assert_eq(buildid_cache__list(cache, &e, &nr), 0);
	cr_assert_eq(nr, 3);
	cr_expect_str_eq(e[0].id, hex_of(0x22));
	cr_expect_eq(e[0].size, 2000);
	cr_expect_str_eq(e[1].id, hex_of(0x33));
	cr_expect_str_eq(e[2].id, hex_of(0x11));
	cr_expect_str_eq(e[2].path, "");	/* not recorded: no path known */
	free(e);

	cr_expect_eq(buildid_cache__remove(cache, hex_of(0x33)), 0);
	cr_expect_eq(buildid_cache__remove(cache, hex_of(0x33)), -ENOENT);
	cr_expect_eq(buildid_cache__remove(cache, "xyz0"), -EINVAL);
	cr_expect_eq(buildid_cache__remove(cache, "../.."), -EINVAL);
	cr_assert_eq(buildid_cache__list(cache, &e, &nr), 0);
	cr_expect_eq(nr, 2);
	free(e);
	/* the first byte's folder went with its only entry */
	cr_expect_eq(mode_exists("%s/33", cache), false);
}

Test(buildid_cache, trimmed_least_recently_used_first_what_is_new_kept)
{
	struct buildid_cache_entry *e;
	struct timespec now;
	unsigned removed;
	size_t nr;
	u64 freed, since;

	make_entry(0x11, 1000, 100);
	make_entry(0x22, 2000, 300);
	make_entry(0x33, 3000, 200);
	make_entry(0x44, 4000, 0);
	/* 10,000 bytes within 6,000: the two oldest (0x22, 0x33) go, 5,000 bytes */
	cr_assert_eq(buildid_cache__trim(cache, 6000, UINT64_MAX, &removed, &freed), 0);
	cr_expect_eq(removed, 2);
	cr_expect_eq(freed, 5000);
	cr_assert_eq(buildid_cache__list(cache, &e, &nr), 0);
	cr_assert_eq(nr, 2);
	cr_expect_str_eq(e[0].id, hex_of(0x11));
	cr_expect_str_eq(e[1].id, hex_of(0x44));
	free(e);
	/* within 1,000, but what was used in the last 50 s stays: only 0x11 goes */
	clock_gettime(CLOCK_REALTIME, &now);
	since = (u64)(now.tv_sec - 50) * 1000000000;
	cr_assert_eq(buildid_cache__trim(cache, 1000, since, &removed, &freed), 0);
	cr_expect_eq(removed, 1);
	cr_expect_eq(freed, 1000);
	cr_assert_eq(buildid_cache__list(cache, &e, &nr), 0);
	cr_expect_eq(nr, 1);
	free(e);
	/* a use makes an entry recent again */
	make_entry(0x55, 10, 500);
	cr_assert_eq(buildid_cache__list(cache, &e, &nr), 0);
	cr_expect_str_eq(e[0].id, hex_of(0x55));
	free(e);
	{
		u8 id[20];
		char path[PATH_MAX];

		memset(id, 0x55, sizeof(id));
		cr_assert_eq(buildid_cache__find(cache, id, sizeof(id), BUILDID_CACHE_ELF, path,
						 sizeof(path)), 0);
	}
	cr_assert_eq(buildid_cache__list(cache, &e, &nr), 0);
	cr_expect_str_eq(e[nr - 1].id, hex_of(0x55), "a found entry is not the most recent");
	free(e);
}

static const struct { const char *s; u64 v; int err; } sizes[] = {
	{ "0", 0, 0 }, { "1048576", 1048576, 0 }, { "500M", 500ull << 20, 0 },
	{ "2G", 2ull << 30, 0 }, { "1K", 1024, 0 }, { "3T", 3ull << 40, 0 },
	{ "2GB", 2ull << 30, 0 }, { "2GiB", 2ull << 30, 0 },
	{ "", 0, -EINVAL }, { "-1", 0, -EINVAL }, { "1X", 0, -EINVAL }, { "G", 0, -EINVAL },
	{ "1Gx", 0, -EINVAL }, { "99999999999999T", 0, -EINVAL },
};

Test(buildid_cache, sizes_parsed)
{
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		u64 v = 0;

		cr_expect_eq(buildid_cache__parse_size(sizes[i].s, &v), sizes[i].err, "'%s'",
			     sizes[i].s);
		if (!sizes[i].err)
			cr_expect_eq(v, sizes[i].v, "'%s': %llu", sizes[i].s, (unsigned long long)v);
	}
}

Test(buildid_cache, the_limit_from_the_cache_or_the_environment)
{
	unsetenv("HSBPF_BUILDID_MAX_SIZE");
	cr_expect_eq(buildid_cache__max_size(cache), BUILDID_CACHE_DEFAULT_MAX);
	cr_assert_eq(buildid_cache__set_max_size(cache, 5ull << 20), 0);
	cr_expect_eq(buildid_cache__max_size(cache), 5ull << 20);
	cr_expect_eq(mode_of("%s/%s", cache, BUILDID_CACHE_MAX_SIZE_FILE), 0600);
	setenv("HSBPF_BUILDID_MAX_SIZE", "2G", 1);
	cr_expect_eq(buildid_cache__max_size(cache), 2ull << 30);
	unsetenv("HSBPF_BUILDID_MAX_SIZE");
}

/* an entry folder that is a link another hand put there: not followed, its target kept */
Test(buildid_cache, removing_follows_no_link)
{
	char target[PATH_MAX], link[PATH_MAX + 64], victim[PATH_MAX + 16];

	make_entry(0x66, 10, 0);
	snprintf(target, sizeof(target), "%s/elsewhere", tmpdir());
	cr_assert_eq(mkdir(target, 0700), 0);
	snprintf(victim, sizeof(victim), "%s/keep", target);
	write_bytes(victim, "x", 1);
	snprintf(link, sizeof(link), "%s/66/%s", cache, hex_of(0x77) + 2);
	cr_assert_eq(symlink(target, link), 0);
	cr_expect_neq(buildid_cache__remove(cache, hex_of(0x77)), 0);
	cr_expect(mode_exists("%s", victim), "a linked folder's file was removed");
}

/* hsbpf buildid-cache on what record kept: listed with its path, removed by path or build-id,
 * purged by path or all, bounded */
Test(buildid_cache, command_lists_removes_purges_and_bounds)
{
	const char *prog = copy_fixture("listed");
	char data[PATH_MAX], hex[41];
	struct run_result r;
	u8 id[BUILD_ID_MAX];
	size_t len;

	snprintf(data, sizeof(data), "%s/p.data", tmpdir());
	cr_assert_eq(build_id__read(prog, id, sizeof(id), &len), 0);
	build_id__hex(id, len, hex, sizeof(hex));
	run(&r, "%s record -F 499 -o %s -- %s 0.2", hsbpf_bin(), data, prog);
	cr_assert_eq(r.status, 0, "record failed: %s", r.err);
	run(&r, "%s buildid-cache --list", hsbpf_bin());
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, hex) && strstr(r.out, prog), "%s (%s) not listed:\n%s", prog, hex,
		  r.out);

	run(&r, "%s buildid-cache --remove %s", hsbpf_bin(), prog);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run(&r, "%s buildid-cache --remove %s", hsbpf_bin(), hex);
	cr_expect_eq(r.status, 1, "removed twice: %s", r.err);
	cr_expect(strstr(r.err, "no such entry"), "%s", r.err);

	run(&r, "%s record -F 499 -o %s -- %s 0.2 && %s buildid-cache --purge %s && "
	    "%s buildid-cache", hsbpf_bin(), data, prog, hsbpf_bin(), prog, hsbpf_bin());
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(!strstr(r.out, hex), "purged, still listed:\n%s", r.out);

	run(&r, "%s record -F 499 -o %s -- %s 0.2 && %s buildid-cache --purge-all && "
	    "%s buildid-cache", hsbpf_bin(), data, prog, hsbpf_bin(), hsbpf_bin());
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, ": 0 entries"), "purged all, still listed:\n%s", r.out);

	/* a limit below one object: the next recording keeps its own, the older ones go */
	make_entry(0x11, 1000, 100);
	run(&r, "%s buildid-cache --max-size 1K && %s record -F 499 -o %s -- %s 0.2 && "
	    "%s buildid-cache", hsbpf_bin(), hsbpf_bin(), data, prog, hsbpf_bin());
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, hex) && !strstr(r.out, hex_of(0x11)), "not bounded:\n%s\n%s",
		  r.out, r.err);
	cr_expect(strstr(r.err, "least recently used entries removed"), "%s", r.err);

	run(&r, "%s buildid-cache --max-size 12Q", hsbpf_bin());
	cr_expect_eq(r.status, 2, "%s", r.err);
	run(&r, "%s buildid-cache --list --purge-all", hsbpf_bin());
	cr_expect_eq(r.status, 2, "%s", r.err);
}
