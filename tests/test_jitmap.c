// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* jitmap: perf map files parsed (bad lines counted, never fatal), read only for followed
 * processes, only when root or the process's user owns them, from where the last read ended
 * and up to a bound, kept in the profile's JITSYMS section, and named by the symbolizer. */
#include <inttypes.h>
#include <criterion/criterion.h>
#include <sched.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"
#include "symbols/jitmap.h"
#include "symbols/symbolizer.h"

TestSuite(jitmap, .fini = cleanup_tmpdir);

static const char good_and_bad[] =
	"7f0000001000 80 JS:*hotLoop /tmp/hot.js:1:17\n"
	"0x7f0000002000 0x40 LazyCompile:~coldLoop /tmp/hot.js:2:18\n"
	"\n"					/* empty: skipped, not counted */
	"7f0000003000 10\n"			/* no name */
	"zz 10 name\n"				/* not hex */
	"7f0000004000 0 zero_size\n"		/* covers nothing */
	"7f0000005000 100000000 too_large\n"	/* 4 GB */
	"ffffffffffffff00 1000 wraps\n"
	"7f0000006000 20 Builtin:ArgumentsAdaptor\r\n"	/* CRLF */
	"7f0000001010 8 JS:*inner_later\n"	/* inside hotLoop: a later line wins */
	"7f0000007000 20 _ZN2v88internal6String11WriteToFlatIhEEvS1_\n";

Test(jitmap, lines_parsed_and_bad_ones_counted)
{
	struct profile *p = profile__new();
	struct jitmap_stats st = {};
	const struct profile_jitsym *j;

	cr_assert_eq(jitmap__parse(p, 42, 7, good_and_bad, strlen(good_and_bad), &st), 0);
	cr_expect_eq(st.syms, 5);
	cr_expect_eq(st.malformed, 5);
	profile__finish(p);
	j = profile__find_jitsym(p, 42, 0x7f0000001000);
	cr_assert(j);
	cr_expect_str_eq(profile__str(p, j->name), "JS:*hotLoop /tmp/hot.js:1:17");
	cr_expect_eq(j->size, 0x80);
	cr_expect_eq(j->time_ns, 7);
	j = profile__find_jitsym(p, 42, 0x7f0000001014);
	cr_expect_str_eq(profile__str(p, j->name), "JS:*inner_later");
	j = profile__find_jitsym(p, 42, 0x7f0000001018);	/* past inner_later: hotLoop again */
	cr_expect_str_eq(profile__str(p, j->name), "JS:*hotLoop /tmp/hot.js:1:17");
	j = profile__find_jitsym(p, 42, 0x7f000000203f);
	cr_expect_str_eq(profile__str(p, j->name), "LazyCompile:~coldLoop /tmp/hot.js:2:18");
	cr_expect_null(profile__find_jitsym(p, 42, 0x7f0000002040));	/* one past the end */
	cr_expect_null(profile__find_jitsym(p, 43, 0x7f0000001000));	/* another process */
	j = profile__find_jitsym(p, 42, 0x7f0000006000);
	cr_expect_str_eq(profile__str(p, j->name), "Builtin:ArgumentsAdaptor");
	profile__free(p);
}

static void write_map(const char *dir, u32 pid, const char *text)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/perf-%u.map", dir, pid);
	write_bytes(path, text, strlen(text));
}

static void append_map(const char *dir, u32 pid, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/perf-%u.map", dir, pid);
	f = fopen(path, "a");
	cr_assert(f);
	cr_assert_geq(fputs(text, f), 0);
	cr_assert_eq(fclose(f), 0);
}

static void chown_map(const char *dir, u32 pid, uid_t uid)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/perf-%u.map", dir, pid);
	cr_assert_eq(chown(path, uid, uid), 0, "chown %s: %s", path, strerror(errno));
}

/* a pid with no process */
static u32 dead_pid(void)
{
	u32 pid = 4000000;

	while (pid > 1000 && (kill(pid, 0) == 0 || errno != ESRCH))
		pid--;
	return pid;
}

/* read from a folder, again only when changed; a line being written waits; the section
 * survives a write and a read. The pids are live root processes: this test's, its runner's */
Test(jitmap, files_read_when_changed_and_saved_in_the_profile)
{
	const char *dir = tmpdir();
	struct jitmaps *j = jitmaps__new(dir);
	struct profile *p = profile__new(), *q;
	u32 me = getpid(), runner = getppid();
	char path[512];

	write_map(dir, me, "1000 10 first\n2000 10 seco");
	cr_assert_eq(jitmaps__read(j, p, me, 1), 0);
	cr_expect_eq(p->nr_jitsyms, 1);
	cr_expect_eq(p->stats.jit_malformed, 1, "an unterminated last line is not taken");
	cr_expect_eq(p->stats.jit_maps, 1);
	cr_assert_eq(jitmaps__read(j, p, me, 2), 0);	/* unchanged: nothing new */
	cr_expect_eq(p->nr_jitsyms, 1);
	cr_expect_eq(profile__find_jitsym(p, me, 0x1000)->time_ns, 1);
	write_map(dir, me, "1000 10 first\n2000 10 second\n");
	cr_assert_eq(jitmaps__read(j, p, me, 3), 0);
	cr_expect_eq(p->nr_jitsyms, 2);
	cr_expect_eq(profile__find_jitsym(p, me, 0x1000)->time_ns, 1, "the first line not read again");
	cr_expect_eq(p->stats.jit_malformed, 0, "the line is complete now");
	cr_expect_eq(p->stats.jit_maps, 1);
	cr_expect_eq(jitmaps__read(j, p, runner, 3), -ENOENT);
	write_map(dir, runner, "5000 10 other\nbad line\n");
	cr_assert_eq(jitmaps__read(j, p, runner, 4), 0);
	cr_expect(profile__find_jitsym(p, runner, 0x5008));
	cr_expect_eq(p->stats.jit_malformed, 1);
	cr_expect_eq(p->stats.jit_maps, 2);

	snprintf(path, sizeof(path), "%s/p.data", dir);
	p->stats.jit_ignored = 3;	/* format 1.6's counters */
	p->stats.jit_capped = 4;
	cr_assert_eq(profile__write(p, path), 0);
	cr_assert_eq(profile__read(path, &q), 0);
	cr_expect_eq(q->stats.jit_ignored, 3);
	cr_expect_eq(q->stats.jit_capped, 4);
	cr_expect_eq(q->nr_jitsyms, 3);
	cr_expect_str_eq(profile__str(q, profile__find_jitsym(q, me, 0x2004)->name), "second");
	profile__free(q);
	/* an older profile, without them, is still read */
	cr_assert_eq(profile__read(env_path("OUTPUT", ".output",
					    "../tests/fixtures/profiles/v1.3-callpaths-g.hsbpf"), &q), 0);
	cr_expect_eq(q->stats.jit_ignored, 0);
	cr_expect_eq(q->stats.jit_capped, 0);
	profile__free(q);
	profile__free(p);
	jitmaps__free(j);
}

/* perf's rule: a map is taken when root or its process's user owns it, and is a regular file
 * (not a link, not a FIFO); one not taken is counted once. A process whose user cannot be
 * known (it is gone) has its map not even opened */
Test(jitmap, maps_of_other_owners_links_and_dead_processes_are_ignored)
{
	const char *dir = tmpdir();
	struct jitmaps *j = jitmaps__new(dir);
	struct profile *p = profile__new();
	u32 me = getpid(), runner = getppid(), dead = dead_pid();
	char path[512], link[512];

	cr_assert_eq(geteuid(), 0, "the test runs as root");
	write_map(dir, me, "1000 10 by_nobody\n");
	chown_map(dir, me, 65534);
	cr_expect_eq(jitmaps__read(j, p, me, 1), -EPERM);
	cr_expect_eq(p->nr_jitsyms, 0, "a root process's map owned by uid 65534 is not read");
	cr_expect_eq(p->stats.jit_ignored, 1);
	cr_expect_eq(p->stats.jit_maps, 0);
	cr_expect_eq(jitmaps__read(j, p, me, 2), -EPERM);
	cr_expect_eq(p->stats.jit_ignored, 1, "counted once");
	chown_map(dir, me, 0);
	cr_expect_eq(jitmaps__read(j, p, me, 3), 0);
	cr_expect(profile__find_jitsym(p, me, 0x1000), "owned by root: read");
	cr_expect_eq(p->stats.jit_maps, 1);

	/* a link to a good map is not followed */
	snprintf(path, sizeof(path), "%s/perf-%u.map", dir, me);
	snprintf(link, sizeof(link), "%s/perf-%u.map", dir, runner);
	cr_assert_eq(symlink(path, link), 0);
	cr_expect_eq(jitmaps__read(j, p, runner, 4), -EPERM);
	cr_expect_null(profile__find_jitsym(p, runner, 0x1000));
	cr_expect_eq(p->stats.jit_ignored, 2);
	/* a FIFO: not a regular file, and the open does not block */
	snprintf(path, sizeof(path), "%s/perf-1.map", dir);
	cr_assert_eq(mkfifo(path, 0600), 0);
	cr_expect_eq(jitmaps__read(j, p, 1, 5), -EPERM);
	cr_expect_eq(p->stats.jit_ignored, 3);
	/* a dead process's map: not opened */
	write_map(dir, dead, "1000 10 stale\n");
	cr_expect_eq(jitmaps__read(j, p, dead, 6), -EPERM);
	cr_expect_null(profile__find_jitsym(p, dead, 0x1000));
	cr_expect_eq(p->stats.jit_ignored, 4);
	cr_expect_eq(jitmaps__stats(j)->opened, 4, "opened: me's 3 times, the FIFO; not the "
		     "link, not the dead pid's: %llu",
		     (unsigned long long)jitmaps__stats(j)->opened);
	profile__free(p);
	jitmaps__free(j);
}

/* a process that becomes uid 65534 by an exec: its user is taken again then, and its own map
 * (owned by 65534) read; after it is gone, what it appended is still read */
Test(jitmap, a_process_users_own_map_is_read)
{
	const char *dir = tmpdir();
	struct jitmaps *j = jitmaps__new(dir);
	struct profile *p = profile__new();
	int go[2], ready[2], hold[2];
	u32 child;
	pid_t pid;
	char c;

	cr_assert_eq(pipe(go), 0);
	cr_assert_eq(pipe(ready), 0);
	cr_assert_eq(pipe(hold), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		close(hold[1]);	/* its end is the test's alone: closed, it frees the child */
		if (read(go[0], &c, 1) != 1 || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534) || write(ready[1], "r", 1) != 1)
			_exit(1);
		(void)!read(hold[0], &c, 1);	/* until the test is done */
		_exit(0);
	}
	child = pid;
	close(hold[0]);
	cr_assert_eq(jitmaps__target(j, &child, 1), 0);	/* root's yet */
	write_map(dir, child, "1000 10 nobodys\n");
	chown_map(dir, child, 65534);
	cr_expect_eq(jitmaps__read(j, p, child, 1), -EPERM, "a root process's map owned by 65534");
	cr_expect_eq(p->stats.jit_ignored, 1);
	cr_assert_eq(write(go[1], "g", 1), 1);
	cr_assert_eq(read(ready[0], &c, 1), 1, "the child could not become uid 65534");
	profile__add_comm(p, child, 2, "nobody", true);	/* as the sideband gives an exec */
	cr_assert_eq(jitmaps__scan(j, p, 3), 0);
	cr_expect(profile__find_jitsym(p, child, 0x1000), "its own user's map");
	close(hold[1]);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	append_map(dir, child, "2000 10 later\n");
	cr_expect_eq(jitmaps__read(j, p, child, 4), 0);
	cr_expect(profile__find_jitsym(p, child, 0x2000), "its user was remembered");
	cr_expect_eq(p->stats.jit_ignored, 1);
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
	profile__free(p);
	jitmaps__free(j);
}

/* lines appended between two reads are found, and the old ones not parsed again; a
 * replaced file (another inode) or a cut one is read whole, the old symbols gone */
Test(jitmap, appended_lines_are_read_once)
{
	const char *dir = tmpdir();
	struct jitmaps *j = jitmaps__new(dir);
	struct profile *p = profile__new();
	u32 me = getpid();
	char path[512], other[512];

	write_map(dir, me, "1000 10 one\n2000 10 two\n");
	cr_assert_eq(jitmaps__read(j, p, me, 1), 0);
	cr_expect_eq(jitmaps__stats(j)->lines, 2);
	append_map(dir, me, "3000 10 three\n4000 10 four\n");
	cr_assert_eq(jitmaps__read(j, p, me, 2), 0);
	cr_expect_eq(p->nr_jitsyms, 4);
	cr_expect_eq(jitmaps__stats(j)->lines, 4, "the first two lines parsed again: %llu lines",
		     (unsigned long long)jitmaps__stats(j)->lines);
	cr_expect_eq(jitmaps__stats(j)->bytes, 24 + 27, "bytes read twice");
	cr_expect_eq(profile__find_jitsym(p, me, 0x4000)->time_ns, 2);
	cr_expect_eq(profile__find_jitsym(p, me, 0x1000)->time_ns, 1);
	cr_assert_eq(jitmaps__read(j, p, me, 3), 0);
	cr_expect_eq(jitmaps__stats(j)->bytes, 24 + 27, "nothing appended: nothing read");
	/* a later line overlapping an earlier one still wins across reads */
	append_map(dir, me, "1000 8 one_again\n");
	cr_assert_eq(jitmaps__read(j, p, me, 4), 0);
	cr_expect_str_eq(profile__str(p, profile__find_jitsym(p, me, 0x1004)->name), "one_again");
	/* replaced by another file */
	snprintf(path, sizeof(path), "%s/perf-%u.map", dir, me);
	snprintf(other, sizeof(other), "%s/new.map", dir);
	write_bytes(other, "9000 10 nine\n", 13);
	cr_assert_eq(rename(other, path), 0);
	cr_assert_eq(jitmaps__read(j, p, me, 5), 0);
	cr_expect_eq(p->nr_jitsyms, 1, "the replaced file's symbols dropped");
	cr_expect(profile__find_jitsym(p, me, 0x9000));
	/* cut and written again in place, shorter */
	write_map(dir, me, "a000 1 x\n");
	cr_assert_eq(jitmaps__read(j, p, me, 6), 0);
	cr_expect_eq(p->nr_jitsyms, 1);
	cr_expect(profile__find_jitsym(p, me, 0xa000));
	cr_expect_eq(p->stats.jit_maps, 1);
	profile__free(p);
	jitmaps__free(j);
}

/* 20-byte lines: "%04x 10 fn%09d\n" */
static void write_lines(const char *dir, u32 pid, int n)
{
	char *text = malloc(20 * n + 1);

	for (int i = 0; i < n; i++)
		snprintf(text + 20 * i, 21, "%04x 10 fn%09d\n", 0x1000 + 16 * i, i);
	write_map(dir, pid, text);
	free(text);
}

/* a map over the bound is read up to it (its whole lines), counted once; so is one past
 * the bound on all maps together */
Test(jitmap, maps_past_the_bounds_are_capped_and_counted)
{
	const char *dir = tmpdir();
	struct jitmaps *j = jitmaps__new(dir);
	struct profile *p = profile__new();
	u32 me = getpid(), runner = getppid();

	jitmaps__set_limits(j, 110, 150, 1000);
	write_lines(dir, me, 10);
	cr_assert_eq(jitmaps__read(j, p, me, 1), 0);
	cr_expect_eq(p->nr_jitsyms, 5, "the lines within 110 bytes");
	cr_expect_eq(p->stats.jit_capped, 1);
	cr_expect_eq(p->stats.jit_malformed, 0, "the line the bound cuts is not malformed");
	cr_expect_leq(jitmaps__stats(j)->bytes, 110);
	cr_assert_eq(jitmaps__read(j, p, me, 2), 0);
	cr_expect_eq(p->stats.jit_capped, 1, "counted once");
	cr_expect_eq(p->nr_jitsyms, 5);
	/* 100 bytes taken of 150 in all: 50 left for another map */
	write_lines(dir, runner, 10);
	cr_assert_eq(jitmaps__read(j, p, runner, 3), 0);
	cr_expect_eq(p->nr_jitsyms, 7);
	cr_expect_eq(p->stats.jit_capped, 2);
	profile__free(p);
	jitmaps__free(j);
}

/* a scan reads up to its share, the next one goes on from there: not capped */
Test(jitmap, scans_take_their_share_and_go_on)
{
	const char *dir = tmpdir();
	struct jitmaps *j = jitmaps__new(dir);
	struct profile *p = profile__new();
	u32 me = getpid();

	jitmaps__set_limits(j, 1000, 1000, 110);
	cr_assert_eq(jitmaps__target(j, &me, 1), 0);
	write_lines(dir, me, 10);
	cr_assert_eq(jitmaps__scan(j, p, 1), 0);
	cr_expect_eq(p->nr_jitsyms, 5, "the lines within the share");
	cr_assert_eq(jitmaps__scan(j, p, 2), 0);
	cr_expect_eq(p->nr_jitsyms, 10, "the rest in the next scan");
	write_lines(dir, me, 20);	/* in place: 200 bytes appended */
	cr_assert_eq(jitmaps__read(j, p, me, 3), 0);
	cr_expect_eq(p->nr_jitsyms, 20, "a read outside a scan has no share");
	cr_expect_eq(p->stats.jit_capped, 0);
	cr_expect_eq(p->stats.jit_malformed, 0);
	profile__free(p);
	jitmaps__free(j);
}

/* a scan reads the targets' maps and their children's (from the profile's forks), and those
 * of nothing else, not even opened; a process that has exited is read once more, then not */
Test(jitmap, scans_read_only_followed_processes)
{
	const char *dir = tmpdir();
	struct jitmaps *j = jitmaps__new(dir);
	struct profile *p = profile__new();
	u32 me = getpid(), runner = getppid(), dead = dead_pid();

	write_map(dir, runner, "1000 10 runner\n");
	write_map(dir, me, "1000 10 me\n");
	write_map(dir, 1, "1000 10 init\n");
	write_map(dir, dead, "1000 10 dead\n");
	cr_assert_eq(jitmaps__target(j, &runner, 1), 0);
	profile__add_comm(p, 1, 1, "init", false);
	cr_assert_eq(jitmaps__scan(j, p, 2), 0);
	cr_expect(profile__find_jitsym(p, runner, 0x1000));
	cr_expect_null(profile__find_jitsym(p, me, 0x1000), "not a child yet");
	cr_expect_eq(jitmaps__stats(j)->opened, 1);
	profile__add_fork(p, me, runner, 3);
	profile__add_fork(p, dead, 1, 3);
	cr_assert_eq(jitmaps__scan(j, p, 4), 0);
	cr_expect(profile__find_jitsym(p, me, 0x1000), "the target's child");
	cr_expect_eq(jitmaps__stats(j)->opened, 3, "runner's and me's: %llu",
		     (unsigned long long)jitmaps__stats(j)->opened);
	cr_expect_null(profile__find_jitsym(p, 1, 0x1000));
	cr_expect_null(profile__find_jitsym(p, dead, 0x1000));
	/* an exit of a process not followed reads nothing */
	cr_assert_eq(jitmaps__exit(j, p, 1, 5), 0);
	cr_expect_eq(jitmaps__stats(j)->opened, 3);
	/* me exits: read a last time, then no more by scans */
	append_map(dir, me, "2000 10 at_exit\n");
	cr_assert_eq(jitmaps__exit(j, p, me, 6), 0);
	cr_expect(profile__find_jitsym(p, me, 0x2000));
	append_map(dir, me, "3000 10 after\n");
	cr_assert_eq(jitmaps__scan(j, p, 7), 0);
	cr_expect_null(profile__find_jitsym(p, me, 0x3000));
	cr_expect_eq(jitmaps__stats(j)->opened, 5, "runner's again, me's at its exit");
	/* its pid given to a new child of the target: a new process, followed again */
	profile__add_fork(p, me, runner, 8);
	cr_assert_eq(jitmaps__scan(j, p, 9), 0);
	cr_expect(profile__find_jitsym(p, me, 0x3000), "a reused pid's new process is not followed");
	cr_expect_eq(p->stats.jit_ignored, 0);
	profile__free(p);
	jitmaps__free(j);
}

/* with no target, every process the profile hears of */
Test(jitmap, scans_without_targets_follow_every_process)
{
	const char *dir = tmpdir();
	struct jitmaps *j = jitmaps__new(dir);
	struct profile *p = profile__new();
	u32 me = getpid(), dead = dead_pid();

	write_map(dir, me, "1000 10 me\n");
	write_map(dir, 1, "1000 10 init\n");
	write_map(dir, dead, "1000 10 dead\n");
	profile__add_comm(p, 1, 1, "init", false);
	profile__add_fork(p, me, 1, 1);
	cr_assert_eq(jitmaps__target(j, NULL, 0), 0);
	cr_assert_eq(jitmaps__scan(j, p, 2), 0);
	cr_expect(profile__find_jitsym(p, me, 0x1000));
	cr_expect(profile__find_jitsym(p, 1, 0x1000));
	cr_expect_null(profile__find_jitsym(p, dead, 0x1000), "no process heard of");
	cr_expect_eq(jitmaps__stats(j)->opened, 2);
	profile__free(p);
	jitmaps__free(j);
}

/* a scan lists DIR once: a process without a map there costs no open, and a map that
 * appears later (a JIT starts writing it after its start) is read at the next scan */
Test(jitmap, a_scan_opens_only_the_maps_in_dir_and_reads_one_that_appears)
{
	const char *dir = tmpdir();
	struct jitmaps *j = jitmaps__new(dir);
	struct profile *p = profile__new();
	u32 me = getpid();

	profile__add_comm(p, 1, 1, "init", false);
	profile__add_fork(p, me, 1, 1);
	cr_assert_eq(jitmaps__target(j, NULL, 0), 0);
	cr_assert_eq(jitmaps__scan(j, p, 2), 0);
	cr_assert_eq(jitmaps__scan(j, p, 3), 0);
	cr_expect_eq(jitmaps__stats(j)->opened, 0);
	write_map(dir, me, "1000 10 late\n");
	cr_assert_eq(jitmaps__scan(j, p, 4), 0);
	cr_expect(profile__find_jitsym(p, me, 0x1000), "the map written after the first scans");
	cr_expect_eq(jitmaps__stats(j)->opened, 1);
	/* a file named like a map but not one (no digits, another ending) is not taken for one */
	write_map(dir, 1, "2000 10 init\n");
	{
		char bad[PATH_MAX];

		snprintf(bad, sizeof(bad), "%s/perf-x.map", dir);
		fclose(fopen(bad, "w"));
		snprintf(bad, sizeof(bad), "%s/perf-1.mapx", dir);
		fclose(fopen(bad, "w"));
	}
	cr_assert_eq(jitmaps__scan(j, p, 5), 0);
	cr_expect(profile__find_jitsym(p, 1, 0x2000));
	profile__free(p);
	jitmaps__free(j);
}

/* a busy machine's churn: a fork and its exec seen in one look are one stat of the process's
 * /proc folder for its user, not two; an exec seen in a later look is another (it may change
 * the user) */
Test(jitmap, a_fork_and_its_exec_seen_together_read_the_user_once)
{
	const char *dir = tmpdir();
	struct jitmaps *j = jitmaps__new(dir);
	struct profile *p = profile__new();
	u32 me = getpid();

	cr_assert_eq(jitmaps__target(j, NULL, 0), 0);
	profile__add_fork(p, me, 1, 1);
	profile__add_comm(p, me, 1, "exec'd", true);
	cr_assert_eq(jitmaps__scan(j, p, 2), 0);
	cr_expect_eq(jitmaps__stats(j)->users_read, 1, "a fork and its exec in one look: %" PRIu64
		     " stats", jitmaps__stats(j)->users_read);
	profile__add_comm(p, me, 3, "again", true);
	cr_assert_eq(jitmaps__scan(j, p, 4), 0);
	cr_expect_eq(jitmaps__stats(j)->users_read, 2, "an exec in a later look: %" PRIu64 " stats",
		     jitmaps__stats(j)->users_read);
	write_map(dir, me, "1000 10 mine\n");
	cr_assert_eq(jitmaps__scan(j, p, 5), 0);
	cr_expect(profile__find_jitsym(p, me, 0x1000), "the user taken once is the right one");
	profile__free(p);
	jitmaps__free(j);
}

/* JIT code in an anonymous mapping is named from the map file, demangled when mangled */
Test(jitmap, symbolizer_names_jit_code)
{
	struct profile *p = profile__new();
	struct jitmap_stats st = {};
	struct symbolizer *sy;
	struct profile_sample s = { .pid = 42, .ip = 0x7f0000001004, .count = 1 };
	struct sym_result r;

	profile__add_mapping(p, 42, 0, 0x7f0000000000, 0x10000, 0, "//anon", NULL, 0);
	profile__add_comm(p, 42, 0, "node", false);
	cr_assert_eq(jitmap__parse(p, 42, 0, good_and_bad, strlen(good_and_bad), &st), 0);
	profile__finish(p);
	sy = symbolizer__new(p);
	symbolizer__resolve(sy, &s, &r);
	cr_expect_str_eq(r.sym, "JS:*hotLoop /tmp/hot.js:1:17");
	cr_expect_eq(r.sym_off, 4);
	cr_expect_str_eq(r.dso, "[JIT] perf-42.map");
	s.ip = 0x7f0000007008;
	symbolizer__resolve(sy, &s, &r);
	cr_expect_str_eq(r.sym, "v8::internal::String::WriteToFlat<unsigned char>");
	s.ip = 0x7f0000009000;	/* in the mapping, no symbol */
	symbolizer__resolve(sy, &s, &r);
	cr_expect_str_eq(r.sym, "[unknown]");
	cr_expect_eq(symbolizer__missing(sy), 0, "//anon is not a file to open");
	symbolizer__free(sy);
	profile__free(p);
}

/* a process in another PID namespace (unshare -p, as a container's) writes perf-NSPID.map
 * with its own PID (1 here) in its own root's folder: that file is read, through
 * /proc/PID/root, not the host's perf-PID.map */
Test(jitmap, a_process_in_another_pid_namespace_has_its_nspid_map_read)
{
	const char *dir = tmpdir();
	struct jitmaps *j = jitmaps__new(dir);
	struct profile *p = profile__new();
	int pids[2], hold[2];
	u32 inner;
	pid_t pid;
	char c;

	cr_assert_eq(pipe(pids), 0);
	cr_assert_eq(pipe(hold), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		pid_t gc;
		u32 host;

		close(hold[1]);
		if (unshare(CLONE_NEWPID))
			_exit(1);
		gc = fork();	/* PID 1 of the new namespace */
		if (gc < 0)
			_exit(1);
		if (!gc) {
			(void)!read(hold[0], &c, 1);	/* until the test is done */
			_exit(0);
		}
		host = gc;	/* its PID as this namespace (the host's) sees it */
		if (write(pids[1], &host, sizeof(host)) != sizeof(host))
			_exit(1);
		waitpid(gc, NULL, 0);
		_exit(0);
	}
	close(hold[0]);
	cr_assert_eq(read(pids[0], &inner, sizeof(inner)), sizeof(inner), "no PID namespace");
	write_map(dir, 1, "1000 10 in_the_namespace\n");
	write_map(dir, inner, "3000 10 the_hosts_pid\n");
	cr_assert_eq(jitmaps__target(j, &inner, 1), 0);
	cr_expect_eq(jitmaps__read(j, p, inner, 1), 0);
	cr_expect(profile__find_jitsym(p, inner, 0x1000), "perf-1.map, its namespace's PID");
	cr_expect_null(profile__find_jitsym(p, inner, 0x3000), "perf-%u.map is another process's", inner);
	close(hold[1]);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	close(pids[0]);
	close(pids[1]);
	profile__free(p);
	jitmaps__free(j);
}
