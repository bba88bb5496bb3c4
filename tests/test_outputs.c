// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* outputs: where the commands that read a profile write (-o), run through the hsbpf binary:
 * never onto their input, never through a link at the output's name, a full or read-only
 * file system said as such with what was there kept; and what they write: hostile names
 * escaped in every format. A hang fails: every command runs under timeout(1). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include "helpers.h"

#define TIMEOUT "timeout -s KILL 60"	/* status 137: it hung */

TestSuite(outputs, .fini = cleanup_tmpdir, .timeout = 300);

static const char *tpath(const char *name)
{
	static char buf[8][600];
	static int n;
	char *b = buf[n++ % 8];

	snprintf(b, 600, "%s/%s", tmpdir(), name);
	return b;
}

/* a committed profile with call stacks: every format can be made from it */
static const char *stacks_profile(void)
{
	return env_path("OUTPUT", ".output", "../tests/fixtures/profiles/v1.3-callpaths-g.hsbpf");
}

/* every command and format that reads a profile and writes a file: %1$s the input, %2$s the
 * output */
static const char *const writers[] = {
	"report -i %1$s -o %2$s",
	"report -i %1$s --format json -o %2$s",
	"report -i %1$s --format csv -o %2$s",
	"report -i %1$s --format folded -o %2$s",
	"report -i %1$s --format pprof -o %2$s",
	"report -i %1$s --format speedscope -o %2$s",
	"flamegraph -i %1$s -o %2$s",
	"flamegraph -i %1$s -o %2$s.svg",
	"import %1$s -o %2$s",
};

static bool same_bytes(const char *a, const char *b)
{
	struct run_result r;

	return run(&r, "cmp -s '%s' '%s'", a, b) == 0;
}

/* import reads a perf.data, the others a profile */
static const char *input_for(const char *fmt)
{
	return strncmp(fmt, "import", 6) ? stacks_profile() :
	       env_path("LBR_DATA", "../shared/data/lbr", "test.lbr");
}

static void run_writer(struct run_result *r, const char *fmt, const char *in, const char *out)
{
	char args[2000];

	snprintf(args, sizeof(args), fmt, in, out);
	run(r, TIMEOUT " %s %s", hsbpf_bin(), args);
}

/* the input by its own name, a hard link and a symbolic link to it: refused (status 1, one
 * message), the input byte for byte as it was; flamegraph --diff by either profile too */
Test(outputs, never_onto_the_input)
{
	static const char *const ways[] = { "same", "hard", "sym" };
	const char *in = tpath("in.data"), *orig = tpath("orig.data");
	struct run_result r;

	cr_assert_eq(run(&r, "cp %s %s && cp %s %s && cp %s %s.svg && ln %s %s && ln -s in.data %s && "
			 "ln -s in.data.svg %s.svg", stacks_profile(), orig, stacks_profile(), in,
			 stacks_profile(), in, in, tpath("hard"), tpath("sym"), tpath("sym")), 0, "%s", r.err);
	for (size_t w = 0; w < sizeof(writers) / sizeof(writers[0]); w++) {
		for (size_t k = 0; k < sizeof(ways) / sizeof(ways[0]); k++) {
			bool svg = strstr(writers[w], ".svg") != NULL;
			const char *out = k == 0 ? in : tpath(ways[k]);

			/* the .svg case writes NAME.svg: its input is that file */
			if (svg && k == 0)
				continue;
			run_writer(&r, writers[w], svg ? tpath("in.data.svg") : in, out);
			if (svg && k == 1)	/* no hard link NAME.svg: a new file, fine */
				continue;
			cr_expect_eq(r.status, 1, "%s by %s: status %d: %s", writers[w], ways[k], r.status,
				     r.err);
			cr_expect(strstr(r.err, "is the input") && strstr(r.err, "not overwritten"),
				  "%s by %s: %s", writers[w], ways[k], r.err);
			cr_expect(same_bytes(orig, svg ? tpath("in.data.svg") : in),
				  "%s by %s: the input changed", writers[w], ways[k]);
		}
	}
	for (size_t k = 0; k < sizeof(ways) / sizeof(ways[0]); k++) {
		const char *out = k == 0 ? in : tpath(ways[k]);

		run(&r, TIMEOUT " %s flamegraph --diff %s %s -o %s", hsbpf_bin(), orig, in, out);
		cr_expect_eq(r.status, 1, "--diff A B -o B by %s: %s", ways[k], r.err);
		run(&r, TIMEOUT " %s flamegraph --diff %s %s -o %s", hsbpf_bin(), in, orig, out);
		cr_expect_eq(r.status, 1, "--diff B A -o B by %s: %s", ways[k], r.err);
		cr_expect(same_bytes(orig, in), "--diff by %s: the input changed", ways[k]);
	}
	/* the symbolic link is still one */
	cr_expect_eq(run(&r, "test -L %s", tpath("sym")), 0);
	/* and a different file is written as ever */
	run(&r, TIMEOUT " %s report -i %s -o %s", hsbpf_bin(), in, tpath("other"));
	cr_expect_eq(r.status, 0, "%s", r.err);
}

/* a symbolic link at the output's name (another user's, in a folder root writes to) is
 * replaced by the new file: the file it names is untouched */
Test(outputs, a_link_at_the_output_is_replaced_not_followed)
{
	const char *victim = tpath("victim"), *link = tpath("out");
	struct run_result r;

	for (size_t w = 0; w < sizeof(writers) / sizeof(writers[0]); w++) {
		const char *out = strstr(writers[w], ".svg") ? tpath("out.svg") : link;
		struct stat st;

		write_bytes(victim, "precious\n", 9);
		unlink(out);
		cr_assert_eq(symlink(victim, out), 0);
		run_writer(&r, writers[w], input_for(writers[w]), link);
		cr_expect_eq(r.status, 0, "%s: %s", writers[w], r.err);
		run(&r, "cat %s", victim);
		cr_expect_str_eq(r.out, "precious\n", "%s wrote through the link", writers[w]);
		cr_assert_eq(lstat(out, &st), 0);
		cr_expect(S_ISREG(st.st_mode), "%s: the link was not replaced (mode %o)", writers[w],
			  st.st_mode);
		cr_expect_gt(st.st_size, 0, "%s: empty", writers[w]);
	}
}

/* a folder: an error; /dev/null and a FIFO: written in place (the FIFO's reader gets it
 * all) */
Test(outputs, folders_devices_and_fifos)
{
	const char *fifo = tpath("fifo"), *got = tpath("got"), *html = tpath("page.html");
	struct run_result r;

	for (size_t w = 0; w < sizeof(writers) / sizeof(writers[0]); w++) {
		if (strstr(writers[w], ".svg"))
			continue;
		run_writer(&r, writers[w], input_for(writers[w]), tmpdir());
		cr_expect_eq(r.status, 1, "%s onto a folder: %s", writers[w], r.err);
		cr_expect(strstr(r.err, "is a directory"), "%s: %s", writers[w], r.err);
		run_writer(&r, writers[w], input_for(writers[w]), "/dev/null");
		cr_expect_eq(r.status, 0, "%s onto /dev/null: %s", writers[w], r.err);
	}
	cr_expect_eq(run(&r, "test -c /dev/null"), 0, "/dev/null was replaced");
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	run(&r, TIMEOUT " cat %s > %s & " TIMEOUT " %s flamegraph -i %s -o %s; wait", fifo, got,
	    hsbpf_bin(), stacks_profile(), fifo);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run(&r, TIMEOUT " %s flamegraph -i %s -o %s", hsbpf_bin(), stacks_profile(), html);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(same_bytes(got, html), "the FIFO's reader did not get the page");
	run(&r, TIMEOUT " cat %s > %s & " TIMEOUT " %s report -i %s --format folded -o %s; wait", fifo,
	    got, hsbpf_bin(), stacks_profile(), fifo);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run(&r, "%s report -i %s --format folded | cmp - %s", hsbpf_bin(), stacks_profile(), got);
	cr_expect_eq(r.status, 0, "the FIFO's reader did not get the folded stacks: %s", r.out);
}

static char mnt[600];

static void unmount_tmpfs(void)
{
	if (mnt[0])
		umount2(mnt, MNT_DETACH);
	mnt[0] = 0;
	cleanup_tmpdir();
}

/* a full file system and a read-only one: said as such (not "Input/output error"), status
 * 1, the file that was there kept as it was, no temporary left */
Test(outputs, full_and_read_only_file_systems, .fini = unmount_tmpfs)
{
	struct run_result r;

	snprintf(mnt, sizeof(mnt), "%s", tpath("mnt"));
	cr_assert_eq(mkdir(mnt, 0755), 0);
	cr_assert_eq(mount("tmpfs", mnt, "tmpfs", 0, "size=16k"), 0, "mount: %s", strerror(errno));
	run(&r, "printf old > %s/out && dd if=/dev/zero of=%s/fill bs=4k 2>/dev/null; df -k %s | tail -1",
	    mnt, mnt, mnt);
	cr_assert(strstr(r.out, " 100% "), "not full: %s", r.out);
	for (int ro = 0; ro < 2; ro++) {
		const char *want = ro ? "Read-only file system" : "No space left on device";

		if (ro)
			cr_assert_eq(mount(NULL, mnt, NULL, MS_REMOUNT | MS_RDONLY, NULL), 0,
				     "remount: %s", strerror(errno));
		for (size_t w = 0; w < sizeof(writers) / sizeof(writers[0]); w++) {
			char out[700];

			if (strstr(writers[w], ".svg"))
				continue;
			snprintf(out, sizeof(out), "%s/out", mnt);
			run_writer(&r, writers[w], input_for(writers[w]), out);
			cr_expect_eq(r.status, 1, "%s (%s): status %d: %s", writers[w], want, r.status,
				     r.err);
			cr_expect(strstr(r.err, want), "%s: %s", writers[w], r.err);
			cr_expect(!strstr(r.err, "Input/output error"), "%s: %s", writers[w], r.err);
			run(&r, "cat %s/out; ls -A %s | tr '\\n' ' '", mnt, mnt);
			cr_expect_str_eq(r.out, "oldfill out ", "%s: %s", writers[w], r.out);
		}
	}
}
