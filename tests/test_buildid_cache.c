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
#include "build_id.h"
#include "buildid_cache.h"
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
