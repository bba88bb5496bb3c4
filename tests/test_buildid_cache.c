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
