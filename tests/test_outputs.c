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
#include "hsbpf.h"

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
	       lbr_data("test.lbr");
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
	/* report's --truth file is an input too */
	run(&r, TIMEOUT " %s report -i %s --truth %s -o %s", hsbpf_bin(), orig, in, tpath("sym"));
	cr_expect_eq(r.status, 1, "--truth T -o T: %s", r.err);
	cr_expect(same_bytes(orig, in), "--truth T -o T: the truth file changed");
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
		/* /proc takes no new files: a clear refusal, nothing written anywhere else */
		run_writer(&r, writers[w], input_for(writers[w]), "/proc/hsbpf-out");
		cr_expect_eq(r.status, 1, "%s onto /proc: %s", writers[w], r.err);
		cr_expect(strstr(r.err, "cannot create '/proc/hsbpf-out'"), "%s: %s", writers[w], r.err);
	}
	cr_expect_eq(run(&r, "test -c /dev/null"), 0, "/dev/null was replaced");
	/* a link to a device is a link like any other: replaced, the device not written */
	cr_assert_eq(symlink("/dev/full", tpath("lfull")), 0);
	run(&r, TIMEOUT " %s report -i %s -o %s", hsbpf_bin(), stacks_profile(), tpath("lfull"));
	cr_expect_eq(r.status, 0, "a link to /dev/full: %s", r.err);
	cr_expect_eq(run(&r, "test -f %s && ! test -L %s && test -c /dev/full", tpath("lfull"),
			 tpath("lfull")), 0, "the link to /dev/full was not replaced");
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

/* -o /dev/stdout (a link to one of the process's own descriptors, as /dev/fd/1 and
 * /proc/self/fd/1 are): written where the descriptor goes, the link left alone. Checked on a
 * link of the test's own and on /proc/self/fd/1, so that a failure cannot replace /dev/stdout */
Test(outputs, links_to_own_descriptors_are_written_through)
{
	const char *link = tpath("stdout"), *got = tpath("got"), *want = tpath("want");
	const char *outs[] = { link, "/proc/self/fd/1" };
	struct run_result r;

	cr_assert_eq(symlink("/proc/self/fd/1", link), 0);
	run(&r, "%s report -i %s > %s", hsbpf_bin(), stacks_profile(), want);
	cr_assert_eq(r.status, 0, "%s", r.err);
	for (size_t i = 0; i < 2; i++) {
		unlink(got);
		run(&r, "%s report -i %s -o %s > %s", hsbpf_bin(), stacks_profile(), outs[i], got);
		cr_expect_eq(r.status, 0, "-o %s: %s", outs[i], r.err);
		cr_expect(same_bytes(want, got), "-o %s: not the report", outs[i]);
		/* appended, as a shell's >> asks */
		run(&r, "%s report -i %s -o %s >> %s && cat %s %s | cmp - %s", hsbpf_bin(),
		    stacks_profile(), outs[i], got, want, want, got);
		cr_expect_eq(r.status, 0, "-o %s >> : %s", outs[i], r.err);
	}
	cr_expect_eq(run(&r, "test -L %s", link), 0, "the link was replaced");
	/* another process's descriptors are not ours: a link to them is replaced */
	unlink(got);
	write_bytes(got, "", 0);
	run(&r, "exec 7>>%s; ln -s /proc/$$/fd/7 %s; " TIMEOUT " %s report -i %s -o %s; "
	    "test -s %s && echo written-through", got, tpath("other"), hsbpf_bin(), stacks_profile(),
	    tpath("other"), got);
	cr_expect_eq(r.status, 1, "%s%s", r.out, r.err);
	cr_expect(!strstr(r.out, "written-through"), "wrote through another process's descriptor");
	cr_expect_eq(run(&r, "test -f %s && ! test -L %s", tpath("other"), tpath("other")), 0,
		     "the link to another process's descriptor was not replaced");
	/* a link another user made to /dev/fd/N names whatever hsbpf holds open as N (an object
	 * it symbolizes: a root-owned binary was appended to): replaced, never written through */
	for (int k = 0; k < 2; k++) {
		char theirs[600], out[600];

		/* tpath's ring is short: copies */
		snprintf(theirs, sizeof(theirs), "%s", tpath(k ? "theirs-fd5" : "theirs-stdout"));
		snprintf(out, sizeof(out), "%s", tpath("theirs-got"));
		cr_assert_eq(symlink(k ? "/dev/fd/5" : "/proc/self/fd/1", theirs), 0);
		cr_assert_eq(lchown(theirs, 65534, 65534), 0);
		run(&r, "%s report -i %s --format pprof -o %s > %s", hsbpf_bin(), stacks_profile(), theirs,
		    out);
		cr_expect_eq(r.status, 0, "%s", r.err);
		cr_expect_eq(run(&r, "test -f %s && ! test -L %s && ! test -s %s", theirs, theirs, out), 0,
			     "another user's link to a descriptor was written through");
	}
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

/* ---- hostile names ---- */

#define KBASE 0xffffffff81000000ull

/* a profile whose every name source is hostile: the command (comm), a thread's name, a
 * mapped object's path, a JIT function, a kernel symbol and a C++ (mangled) JIT name, each
 * with an escape sequence, a newline, the folded format's ';', a bell and markup that would
 * end the flame graph page's script. Two distinct stacks (three samples), flat samples too */
static void write_hostile_profile(const char *path, bool hostile)
{
	const char *comm = hostile ? "\x1b[31mred\n;x" : "plain";
	const char *thread = hostile ? "th\a;\n</script><script>alert(1)</script>" : "thread";
	const char *obj = hostile ? "/nonexistent/e\x1b]0;t\a/li\nb;</SCRIPT>.so" : "/nonexistent/lib.so";
	const char *jit = hostile ? "jit\x1b[2J;\n<script>x()</script>" : "jit_fn";
	const char *cxx = hostile ? "_ZN3fooIXadL_Z1xEEE3barEv\n;\x1b[0m</script" : "_ZN3foo3barEv";
	const char *ksym = hostile ? "k\x1b[1m;\n</script >" : "k_fn";
	struct profile *p = profile__new();
	u64 user1[] = { 0x7000010, 0x10000020 }, user2[] = { 0x7000110, 0x10000020 };
	u64 kern[] = { KBASE + 0x10 };
	s64 u1, u2, k;

	cr_assert(p);
	snprintf(p->meta.event, sizeof(p->meta.event), "cpu-clock");
	snprintf(p->meta.unit, sizeof(p->meta.unit), "ns");
	snprintf(p->meta.sample_keys, sizeof(p->meta.sample_keys), "tid");
	snprintf(p->meta.target, sizeof(p->meta.target), "%s", comm);
	snprintf(p->meta.call_graph, sizeof(p->meta.call_graph), "dwarf");
	p->meta.period = 1000000;
	cr_assert_eq(profile__add_comm(p, 7, 0, comm, false), 0);
	cr_assert_eq(profile__add_thread_comm(p, 7, 9, 0, thread), 0);
	cr_assert_eq(profile__add_mapping(p, 7, 0, 0x10000000, 0x1000, 0, obj, NULL, 0), 0);
	cr_assert_eq(profile__add_jitsym(p, 7, 0x7000000, 0x100, jit, 1, 0), 0);
	cr_assert_eq(profile__add_jitsym(p, 7, 0x7000100, 0x100, cxx, 2, 0), 0);
	cr_assert_eq(profile__add_ksym(p, KBASE, ksym), 0);
	cr_assert_eq(profile__add_ksym(p, KBASE + 0x100, ""), 0);
	u1 = profile__add_stack(p, user1, 2, 0, 0);
	u2 = profile__add_stack(p, user2, 2, 0, 0);
	k = profile__add_stack(p, kern, 1, 0, 0);
	cr_assert(u1 >= 0 && u2 >= 0 && k >= 0);
	cr_assert_eq(profile__add_stack_sample_keyed(p, &(struct profile_stack_sample){ .pid = 7,
		     .user = u1 + 1, .kernel = k + 1, .flags = HSBPF_KEY_KERNEL, .count = 2,
		     .weight = 2000000 }, &(struct profile_sample_key){ .tid = 9 }), 0);
	cr_assert_eq(profile__add_stack_sample_keyed(p, &(struct profile_stack_sample){ .pid = 7,
		     .user = u2 + 1, .count = 1, .weight = 1000000 },
		     &(struct profile_sample_key){ .tid = 9 }), 0);
	cr_assert_eq(profile__add_sample_keyed(p, &(struct profile_sample){ .pid = 7, .ip = KBASE + 0x10,
		     .flags = HSBPF_KEY_KERNEL, .count = 2, .weight = 2000000 },
		     &(struct profile_sample_key){ .tid = 9 }), 0);
	cr_assert_eq(profile__add_sample_keyed(p, &(struct profile_sample){ .pid = 7, .ip = 0x7000110,
		     .count = 1, .weight = 1000000 }, &(struct profile_sample_key){ .tid = 9 }), 0);
	profile__finish(p);
	cr_assert_eq(profile__write(p, path), 0);
	profile__free(p);
}

/* the first raw control byte in buf (a tab and a newline are the formats' own), or NULL */
static const char *raw_control(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = buf[i];

		if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
			return buf + i;
	}
	return NULL;
}

static char *slurp_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	cr_assert(f, "cannot open %s", path);
	cr_assert_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	cr_assert(buf);
	cr_assert_eq(fread(buf, 1, n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	*len = n;
	return buf;
}

static size_t count_ci(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *s = hay; (s = strcasestr(s, needle)); s++)
		n++;
	return n;
}

/* every text format: no raw control byte from the names, the names there (escaped) */
Test(outputs, hostile_names_are_escaped_in_every_text_format)
{
	static const char *const formats[] = {
		"", "--format json", "--format csv", "--format folded", "--format speedscope",
		"-g", "--sort comm,tid,dso,sym", "--sort comm,tid --format csv",
		"--sort comm,tid --format json", "--no-children -g --call-graph caller",
	};
	char in[700], out[700];

	snprintf(in, sizeof(in), "%s", tpath("hostile.data"));
	snprintf(out, sizeof(out), "%s", tpath("out"));
	write_hostile_profile(in, true);
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		const char *bad;
		size_t len;
		char *buf;
		struct run_result r;

		run(&r, TIMEOUT " %s report -i %s %s -o %s", hsbpf_bin(), in, formats[i], out);
		cr_assert_eq(r.status, 0, "%s: %s", formats[i], r.err);
		buf = slurp_file(out, &len);
		bad = raw_control(buf, len);
		cr_expect(!bad, "%s: raw byte %#x at %zu: ...%.60s", formats[i], bad ? *bad : 0,
			  bad ? (size_t)(bad - buf) : 0, bad ? bad - (bad - buf < 30 ? bad - buf : 30) : "");
		/* the names are there, escaped, not dropped */
		cr_expect(strstr(buf, "red") || strstr(buf, "jit") || strstr(buf, "th\\x07"),
			  "%s: no names:\n%s", formats[i], buf);
		free(buf);
	}
}

/* folded: one line per distinct stack, each "frame;frame;... count": no frame holds a
 * newline or the separator */
Test(outputs, hostile_names_keep_folded_stacks_one_per_line)
{
	const char *in = tpath("hostile.data"), *out = tpath("folded");
	struct run_result r;
	size_t len, lines = 0, total = 0;
	char *buf, *save = NULL;

	write_hostile_profile(in, true);
	run(&r, TIMEOUT " %s report -i %s --format folded -o %s", hsbpf_bin(), in, out);
	cr_assert_eq(r.status, 0, "%s", r.err);
	buf = slurp_file(out, &len);
	cr_expect(!raw_control(buf, len), "%s", buf);
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(l, ' ');
		size_t frames = 1;

		lines++;
		cr_assert(sp, "no count: %s", l);
		total += strtoull(sp + 1, NULL, 10);
		for (char *c = l; c < sp; c++)
			frames += *c == ';';
		/* comm; JIT or C++ frame; object frame (callers first), + the kernel frame */
		cr_expect(frames == 3 || frames == 4, "%zu frames: %s", frames, l);
		cr_expect(!strncmp(l, "\\x1b[31mred", 10), "the command escaped as elsewhere: %s", l);
	}
	cr_expect_eq(lines, 2, "two distinct stacks, %zu lines:\n%s", lines, buf);
	cr_expect_eq(total, 3);
	free(buf);
}

/* the flame graph page and SVG: no markup from the data (as many script tags as a page of
 * plain names), no raw control byte */
Test(outputs, hostile_names_stay_data_in_flame_graphs)
{
	static const char *const exts[] = { "html", "svg" };
	const char *hostile = tpath("hostile.data"), *plain = tpath("plain.data");

	write_hostile_profile(hostile, true);
	write_hostile_profile(plain, false);
	for (size_t i = 0; i < 2; i++) {
		char ho[700], po[700];
		size_t hl, pl;
		char *hb, *pb;
		struct run_result r;

		snprintf(ho, sizeof(ho), "%s/h.%s", tmpdir(), exts[i]);
		snprintf(po, sizeof(po), "%s/p.%s", tmpdir(), exts[i]);
		run(&r, TIMEOUT " %s flamegraph -i %s -o %s", hsbpf_bin(), hostile, ho);
		cr_assert_eq(r.status, 0, "%s", r.err);
		run(&r, TIMEOUT " %s flamegraph -i %s -o %s", hsbpf_bin(), plain, po);
		cr_assert_eq(r.status, 0, "%s", r.err);
		hb = slurp_file(ho, &hl);
		pb = slurp_file(po, &pl);
		cr_expect(!raw_control(hb, hl), "%s: a raw control byte", exts[i]);
		cr_expect_eq(count_ci(hb, "<script"), count_ci(pb, "<script"), "%s: <script from the data",
			     exts[i]);
		cr_expect_eq(count_ci(hb, "</script"), count_ci(pb, "</script"),
			     "%s: </script from the data", exts[i]);
		cr_expect(strstr(hb, "red"), "%s: the names are not there", exts[i]);
		free(hb);
		free(pb);
	}
}

/* report's --pid and --tid take what record's -p takes: anything else is a usage error
 * (status 2, the option and the value said), not an empty report */
Test(outputs, bad_pid_and_tid_lists_are_usage_errors)
{
	static const char *const bad[] = { "--pid abc", "--pid 1x", "--tid abc", "--pid ,,,",
					   "--pid ''", "--tid 1,", "--pid -1" };
	struct run_result r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		run(&r, "%s report -i %s %s", hsbpf_bin(), stacks_profile(), bad[i]);
		cr_expect_eq(r.status, 2, "%s: %d: %s", bad[i], r.status, r.err);
		cr_expect(strstr(r.err, "invalid --") && strstr(r.err, "comma-separated list of numbers"),
			  "%s: %s", bad[i], r.err);
		cr_expect_str_eq(r.out, "", "%s printed a report", bad[i]);
	}
}

/* every command's --help is printed as it is (fputs): no "%%" meant for printf */
Test(outputs, help_texts_have_no_printf_escapes)
{
	static const char *const cmds[] = { "record", "report", "annotate", "flamegraph", "diff",
					    "import", "top", "stat", "selftest", "truth", "eval",
					    "experiment" };
	struct run_result r;

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		run(&r, "%s %s --help", hsbpf_bin(), cmds[i]);
		cr_expect_eq(r.status, 0, "%s --help: %d: %s", cmds[i], r.status, r.err);
		cr_expect(strstr(r.out, "usage: hsbpf"), "%s --help: %s", cmds[i], r.out);
		cr_expect(!strstr(r.out, "%%"), "%s --help prints %%%%:\n%s", cmds[i], r.out);
	}
	run(&r, "%s --help", hsbpf_bin());
	cr_expect(!strstr(r.out, "%%") && !strstr(r.err, "%%"), "hsbpf --help prints %%%%");
}

/* stat -o is written as it goes (-I rows are read while it runs), but never through a link
 * either; a full device is said as such */
Test(outputs, stat_output_never_goes_through_a_link)
{
	const char *victim = tpath("victim"), *link = tpath("counts");
	struct run_result r;
	struct stat st;

	write_bytes(victim, "precious\n", 9);
	cr_assert_eq(symlink(victim, link), 0);
	run(&r, TIMEOUT " %s stat -e task-clock -o %s -- true", hsbpf_bin(), link);
	cr_assert_eq(r.status, 0, "%s", r.err);
	run(&r, "cat %s", victim);
	cr_expect_str_eq(r.out, "precious\n", "stat wrote through the link");
	cr_assert_eq(lstat(link, &st), 0);
	cr_expect(S_ISREG(st.st_mode), "the link was not replaced (mode %o)", st.st_mode);
	run(&r, "grep -c task-clock %s", link);
	cr_expect_str_eq(r.out, "1\n", "no counts in the new file");
	run(&r, TIMEOUT " %s stat -e task-clock -o /dev/full -- true", hsbpf_bin());
	cr_expect_eq(r.status, 1, "%s", r.err);
	cr_expect(strstr(r.err, "cannot write '/dev/full': No space left on device"), "%s", r.err);
}

/* reports and pages are made as fopen makes files (0666 less the umask), profiles private */
Test(outputs, text_outputs_follow_the_umask_profiles_are_private)
{
	static const char *const texts[] = { "report -i %1$s -o %2$s", "flamegraph -i %1$s -o %2$s",
					     "report -i %1$s --format speedscope -o %2$s" };
	const char *out = tpath("out");
	struct run_result r;
	struct stat st;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		char args[2000];

		unlink(out);
		snprintf(args, sizeof(args), texts[i], stacks_profile(), out);
		run(&r, "umask 022 && " TIMEOUT " %s %s", hsbpf_bin(), args);
		cr_assert_eq(r.status, 0, "%s: %s", texts[i], r.err);
		cr_assert_eq(stat(out, &st), 0);
		cr_expect_eq(st.st_mode & 0777, 0644, "%s: mode %o", texts[i], st.st_mode & 0777);
	}
	unlink(out);
	run(&r, "umask 022 && " TIMEOUT " %s import %s -o %s", hsbpf_bin(), input_for("import"), out);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(stat(out, &st), 0);
	cr_expect_eq(st.st_mode & 0777, 0600, "a profile: mode %o", st.st_mode & 0777);
}
