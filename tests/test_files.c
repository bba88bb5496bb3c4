// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* files: what the commands do with unlucky or hostile files (FIFOs and devices, full disks,
 * huge or forged inputs, odd names), run through the hsbpf binary. A hang fails: every command
 * runs under timeout(1) with SIGKILL, and 137 is then its status. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "symbols/elf_image.h"
#include "helpers.h"
#include "lib/file_format.h"
#include "profile/profile.h"
#include "profile/truth_file.h"

#define TIMEOUT "timeout -s KILL 20"	/* status 137: it hung */

TestSuite(files, .fini = cleanup_tmpdir, .timeout = 240);



static const char *tpath(const char *name)
{
	static char buf[8][600];
	static int n;
	char *b = buf[n++ % 8];

	snprintf(b, 600, "%s/%s", tmpdir(), name);
	return b;
}


static bool is_char_device(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISCHR(st.st_mode);
}

/* a profile and a truth file that read (contents do not matter), a FIFO and a device that
 * reads forever (like /dev/zero) */
static void make_inputs(void)
{
	struct profile *p = profile__new();
	struct profile_sample s = { .pid = 1, .ip = 0x1000, .count = 1 };
	struct truth *t = truth__new();

	cr_assert(p && t);
	cr_assert_eq(profile__add_sample(p, &s), 0);
	cr_assert_eq(profile__write(p, tpath("good.data")), 0);
	cr_assert_eq(truth__write(t, tpath("good.truth")), 0);
	profile__free(p);
	truth__free(t);
	cr_assert_eq(mkfifo(tpath("fifo"), 0600), 0);
	cr_assert_eq(mknod(tpath("zero"), S_IFCHR | 0666, makedev(1, 5)), 0, "mknod: %s", strerror(errno));
}

/* 1. a newline in a command's argument: the profile (and the truth file) written read back */
Test(files, newline_in_a_command_reads_back)
{
	struct run_result r;
	struct profile *p;
	struct truth *t;

	run(&r, "%s record -o %s -- sh -c \"$(printf 'true\\ntrue')\"", hsbpf_bin(), tpath("nl.data"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	run(&r, "%s report -i %s", hsbpf_bin(), tpath("nl.data"));
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(profile__read(tpath("nl.data"), &p), 0);
	cr_expect(strstr(p->meta.target, "true\ntrue"), "%s", p->meta.target);
	profile__free(p);
	run(&r, "%s truth -o %s -- /bin/sh -c \"$(printf 'true\\ntrue')\"", hsbpf_bin(), tpath("nl.truth"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	run(&r, "%s truth -i %s --what summary", hsbpf_bin(), tpath("nl.truth"));
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(truth__read(tpath("nl.truth"), &t), 0);
	cr_expect(strstr(t->meta.command, "true\ntrue"), "%s", t->meta.command);
	truth__free(t);
}

/* 2. an output that is a device is written to, not replaced (it became a 0600 file) */
Test(files, device_outputs_stay_devices)
{
	static const char *const cmds[] = { "record -o %s -- true", "import %s -o %%s",
					    "truth -o %s -- /bin/true" };
	const char *null = tpath("null");
	struct run_result r;

	cr_assert_eq(mknod(null, S_IFCHR | 0666, makedev(1, 3)), 0, "mknod: %s", strerror(errno));
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char args[1200];

		if (i == 1) {
			char fmt[100];

			snprintf(fmt, sizeof(fmt), cmds[i], lbr_data("test.lbr"));
			snprintf(args, sizeof(args), fmt, null);
		} else {
			snprintf(args, sizeof(args), cmds[i], null);
		}
		run(&r, TIMEOUT " %s %s", hsbpf_bin(), args);
		cr_expect_eq(r.status, 0, "%s: %s", args, r.err);
		cr_expect(is_char_device(null), "%s replaced the device", args);
	}
}

/* 2. a FIFO as output: its reader gets the file (record, import, truth) */
Test(files, fifo_outputs_feed_their_reader)
{
	const char *fifo = tpath("out.fifo"), *got = tpath("got");
	struct run_result r;
	struct profile *p;
	struct truth *t;

	cr_assert_eq(mkfifo(fifo, 0600), 0);
	run(&r, TIMEOUT " cat %s > %s & " TIMEOUT " %s import %s -o %s; wait", fifo, got, hsbpf_bin(),
	    lbr_data("test.lbr"), fifo);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(profile__read(got, &p), 0);
	cr_expect_eq(profile__total_samples(p), 9232);
	profile__free(p);
	run(&r, TIMEOUT " cat %s > %s & " TIMEOUT " %s record -o %s -- %s 0.2; wait", fifo, got, hsbpf_bin(),
	    fifo, fixture("hot7030"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(profile__read(got, &p), 0);
	cr_expect_gt(profile__total_samples(p), 0);
	profile__free(p);
	run(&r, TIMEOUT " cat %s > %s & " TIMEOUT " %s truth -o %s -- %s; wait", fifo, got, hsbpf_bin(), fifo,
	    fixture("counts"));
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_assert_eq(truth__read(got, &t), 0);
	cr_expect_gt(t->meta.total_insns, 0);
	truth__free(t);
	cr_expect(!access(fifo, F_OK));
}

/* tmpl with {bad} and {dir} replaced */
static void fill(char *out, size_t size, const char *tmpl, const char *bad, const char *dir)
{
	size_t o = 0;

	for (const char *p = tmpl; *p && o + 1 < size; ) {
		const char *with = !strncmp(p, "{bad}", 5) ? bad : !strncmp(p, "{dir}", 5) ? dir : NULL;

		if (with) {
			o += snprintf(out + o, size - o, "%s", with);
			p += 5;
		} else {
			out[o++] = *p++;
		}
	}
	out[o < size ? o : size - 1] = 0;
}

/* 3. a FIFO or a device as any input: refused at once, never waited on */
Test(files, fifo_and_device_inputs_are_refused)
{
	static const char *const cmds[] = {
		"report -i {bad}", "report -i {dir}/good.data --truth {bad}", "annotate main -i {bad}",
		"annotate main -i {dir}/good.data --truth {bad}", "eval -i {bad} --truth {dir}/good.truth",
		"eval -i {dir}/good.data --truth {bad}", "import {bad} -o {dir}/x.data", "truth -i {bad}",
		"truth -o {dir}/x.truth -- {bad}", "import {dir}/good.lbr --binary {bad} -o {dir}/x.data",
	};
	static const char *const bad[] = { "fifo", "zero" };
	struct run_result r;

	make_inputs();
	cr_assert_eq(symlink(lbr_data("test.lbr"), tpath("good.lbr")), 0);
	for (size_t b = 0; b < 2; b++)
		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
			char args[2000];

			fill(args, sizeof(args), cmds[i], tpath(bad[b]), tmpdir());
			run(&r, TIMEOUT " %s %s", hsbpf_bin(), args);
			cr_expect_eq(r.status, 1, "%s: status %d: %s", args, r.status, r.err);
			cr_expect(strstr(r.err, "not a regular file"), "%s: %s", args, r.err);
		}
	cr_expect_neq(access(tpath("x.data"), F_OK), 0);
	cr_expect_neq(access(tpath("x.truth"), F_OK), 0);
}

/* 3. objects named by a profile or a truth file, or debug files beside them, that are FIFOs or
 * devices: reports go on without them, none is opened to block */
Test(files, fifo_and_device_objects_are_never_opened)
{
	struct profile *p = profile__new();
	struct truth *t = truth__new();
	struct elf_image *img = elf_image__open(fixture("hot7030"));
	const struct elf_func *f = NULL;
	struct run_result r;
	char dir[600], stripped[700], fifo[700], zero[700];
	const char *objs[3] = { fifo, zero, stripped };
	size_t size;
	u8 *buf;

	cr_assert(p && t && img);
	make_inputs();
	snprintf(dir, sizeof(dir), "%s", tpath("stripped"));
	snprintf(fifo, sizeof(fifo), "%s", tpath("fifo"));
	snprintf(zero, sizeof(zero), "%s", tpath("zero"));
	for (size_t i = 0; i < img->nr_funcs; i++)
		if (!strcmp(img->funcs[i].name, "work_70"))
			f = &img->funcs[i];
	cr_assert(f);
	/* a copy without its debug sections, and a FIFO where its separate debug file would be */
	cr_assert_eq(mkdir(dir, 0755), 0);
	snprintf(stripped, sizeof(stripped), "%s/hot7030", dir);
	cr_assert_eq(run(&r, "objcopy --strip-debug %s %s && mkfifo %s/hot7030.debug", fixture("hot7030"),
			 stripped, dir), 0, "%s", r.err);
	for (u32 i = 0; i < 3; i++) {
		/* text is mapped at file offset = vaddr in the fixture: ip = start + vaddr */
		struct profile_sample s = { .pid = 10 + i, .ip = 0x10000000 + f->addr, .count = 5 };

		cr_assert_eq(profile__add_mapping(p, 10 + i, 0, 0x10000000, 0x10000, 0, objs[i], NULL, 0), 0);
		cr_assert_eq(profile__add_comm(p, 10 + i, 0, "x", false), 0);
		cr_assert_eq(profile__add_sample(p, &s), 0);
	}
	cr_assert_eq(profile__write(p, tpath("objs.data")), 0);
	/* a truth file whose objects are the FIFO and the device */
	buf = calloc(1, 1 + strlen(objs[0]) + 1 + strlen(objs[1]) + 1);
	strcpy((char *)buf + 1, objs[0]);
	strcpy((char *)buf + 2 + strlen(objs[0]), objs[1]);
	size = 1 + strlen(objs[0]) + 1 + strlen(objs[1]) + 1;
	free(t->strs);
	t->strs = (char *)buf;
	t->strs_len = t->strs_cap = size;
	t->objects = calloc(2, sizeof(*t->objects));
	t->objects[0].path = 1;
	t->objects[1].path = 2 + strlen(objs[0]);
	t->nr_objects = t->cap_objects = 2;
	snprintf(t->meta.program, sizeof(t->meta.program), "%s", objs[0]);
	cr_assert_eq(truth__write(t, tpath("objs.truth")), 0);

	for (int k = 0; k < 4; k++) {
		static const char *const sorts[] = { "sym", "line", "bb", "dso" };

		run(&r, TIMEOUT " %s report -i %s --sort %s", hsbpf_bin(), tpath("objs.data"), sorts[k]);
		cr_expect_eq(r.status, 0, "--sort %s: status %d: %s", sorts[k], r.status, r.err);
		cr_expect(strstr(r.err, "not a regular file"), "--sort %s: %s", sorts[k], r.err);
	}
	/* the stripped copy still resolves, from its own symbol table */
	run(&r, TIMEOUT " %s report -i %s --sort line", hsbpf_bin(), tpath("objs.data"));
	cr_expect(strstr(r.out, "work_70") || strstr(r.out, "hot7030"), "%s", r.out);
	cr_expect(strstr(r.err, "debug file candidate"), "%s", r.err);
	run(&r, TIMEOUT " %s truth -i %s --what blocks", hsbpf_bin(), tpath("objs.truth"));
	cr_expect_neq(r.status, 137, "truth -i hung on an object");
	cr_expect(strstr(r.err, "not a regular file"), "%s", r.err);
	for (int k = 0; k < 2; k++) {
		run(&r, TIMEOUT " %s eval -i %s --truth %s --object %s", hsbpf_bin(), tpath("objs.data"),
		    tpath("objs.truth"), objs[k]);
		cr_expect_eq(r.status, 1, "eval %s: %d: %s", objs[k], r.status, r.err);
		cr_expect(strstr(r.err, "not a regular file"), "eval %s: %s", objs[k], r.err);
	}
	run(&r, TIMEOUT " %s annotate work_70 -i %s --truth %s", hsbpf_bin(), tpath("objs.data"),
	    tpath("objs.truth"));
	cr_expect_neq(r.status, 137, "annotate hung: %s", r.err);
	elf_image__close(img);
	profile__free(p);
	truth__free(t);
}

/* 4. standard output on a full device: one message, status 1, for every command that writes
 * there; and the same commands on /dev/null succeed */
Test(files, standard_output_write_errors, .timeout = 900)
{
	const char *stacks = env_path("OUTPUT", ".output",
				      "../tests/fixtures/profiles/v1.3-callpaths-g.hsbpf");
	char cmds[20][1500];
	size_t n = 0;
	struct run_result r;

	cr_assert_eq(run(&r, "%s import %s --binary %s -o %s", hsbpf_bin(), lbr_data("test.lbr"),
			 lbr_data("test.binary"), tpath("lbr.data")), 0, "%s", r.err);
	cr_assert_eq(run(&r, "%s truth --vpmu insns --period 10000 -o %s --profile %s -- %s", hsbpf_bin(),
			 tpath("v.truth"), tpath("v.data"), fixture("counts")), 0, "%s", r.err);
	snprintf(cmds[n++], 1500, "--version");
	snprintf(cmds[n++], 1500, "--help");
	snprintf(cmds[n++], 1500, "report -i %s", tpath("lbr.data"));
	snprintf(cmds[n++], 1500, "report -i %s --format json", tpath("lbr.data"));
	snprintf(cmds[n++], 1500, "report -i %s --format csv", tpath("lbr.data"));
	snprintf(cmds[n++], 1500, "report -i %s --sort edge", tpath("lbr.data"));
	snprintf(cmds[n++], 1500, "annotate longest_match -i %s", tpath("lbr.data"));
	snprintf(cmds[n++], 1500, "eval -i %s --truth %s", tpath("v.data"), tpath("v.truth"));
	snprintf(cmds[n++], 1500, "truth -i %s", tpath("v.truth"));
	snprintf(cmds[n++], 1500, "truth -i %s --format json", tpath("v.truth"));
	snprintf(cmds[n++], 1500, "top --stdio -a -d 0.2 -n 2");
	snprintf(cmds[n++], 1500, "selftest");
	snprintf(cmds[n++], 1500, "flamegraph -i %s -o -", stacks);
	snprintf(cmds[n++], 1500, "report -i %s --format folded", stacks);
	snprintf(cmds[n++], 1500, "report -i %s --format pprof", stacks);
	snprintf(cmds[n++], 1500, "report -i %s --format speedscope", stacks);
	for (size_t i = 0; i < n; i++) {
		const char *m;
		/* selftest puts every program through the verifier: 9 s of system time, 22-140 s
		 * of wall time on a machine at load 10 */
		const char *limit = strncmp(cmds[i], "selftest", 8) ? TIMEOUT : "timeout -s KILL 600";

		run(&r, "%s %s %s >/dev/null", limit, hsbpf_bin(), cmds[i]);
		cr_expect_eq(r.status, 0, "%s >/dev/null: %d: %s", cmds[i], r.status, r.err);
		run(&r, "%s %s %s >/dev/full", limit, hsbpf_bin(), cmds[i]);
		cr_expect_eq(r.status, 1, "%s >/dev/full: %d: %s", cmds[i], r.status, r.err);
		m = strstr(r.err, "hsbpf: cannot write standard output: No space left on device\n");
		cr_expect(m, "%s >/dev/full: %s", cmds[i], r.err);
		cr_expect(!m || !strstr(m + 10, "cannot write standard output"), "%s: said twice: %s",
			  cmds[i], r.err);
		cr_expect(!strstr(r.err, "Input/output error"), "%s: %s", cmds[i], r.err);
	}
	/* commands that write nothing there are not disturbed by it */
	run(&r, "%s import %s -o %s >/dev/full", hsbpf_bin(), lbr_data("test.lbr"), tpath("i.data"));
	cr_expect_eq(r.status, 0, "%s", r.err);
	run(&r, "%s record -o %s -- true >/dev/full", hsbpf_bin(), tpath("i.data"));
	cr_expect_eq(r.status, 0, "%s", r.err);
}

/* 5. a full file system: record and truth fail before the work, at once, leaving nothing */
static char mnt[600];

static void unmount_tmpfs(void)
{
	if (mnt[0])
		umount2(mnt, MNT_DETACH);
	mnt[0] = 0;
	cleanup_tmpdir();
}

Test(files, full_disk_is_found_before_recording, .fini = unmount_tmpfs)
{
	static const char *const cmds[] = { "record -o %s/out.data -d 20 -- %s 30",
					    "truth -o %s/out.truth -- %s 30" };
	struct run_result r;

	snprintf(mnt, sizeof(mnt), "%s", tpath("mnt"));
	cr_assert_eq(mkdir(mnt, 0755), 0);
	cr_assert_eq(mount("tmpfs", mnt, "tmpfs", 0, "size=64k"), 0, "mount: %s", strerror(errno));
	run(&r, "dd if=/dev/zero of=%s/fill bs=4k 2>/dev/null; df -k %s | tail -1", mnt, mnt);
	cr_assert(strstr(r.out, " 100% "), "not full: %s", r.out);
	for (size_t i = 0; i < 2; i++) {
		char args[1500];
		u64 t0 = now_ns(CLOCK_MONOTONIC), ms;

		snprintf(args, sizeof(args), cmds[i], mnt, fixture("hot7030"));
		run(&r, TIMEOUT " %s %s", hsbpf_bin(), args);
		ms = (now_ns(CLOCK_MONOTONIC) - t0) / 1000000;
		cr_expect_eq(r.status, 1, "%s: %d: %s", args, r.status, r.err);
		cr_expect(strstr(r.err, "No space left on device"), "%s: %s", args, r.err);
		cr_expect_lt(ms, 5000, "%s: failed after %llu ms, not before the work", args,
			     (unsigned long long)ms);
		run(&r, "ls -A %s", mnt);
		cr_expect_str_eq(r.out, "fill\n", "%s left: %s", args, r.out);
	}
}

/* 8. a 3 GB sparse file that claims to be a profile, a truth file or a perf.data: refused from
 * its header in well under a second and without reading it into memory */
Test(files, huge_inputs_are_refused_from_their_header)
{
	static const struct {
		const char *magic, *cmd;
	} cases[] = {
		{ "HSBPFPRF", "report -i %s" },
		{ "HSBPFTRU", "truth -i %s" },
		{ "PERFILE2", "import %s -o /dev/null" },
	};
	const char *path = tpath("huge");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char head[128] = {}, args[800], err[800];
		struct rusage ru;
		u64 t0;
		pid_t pid;
		int st;

		memcpy(head, cases[i].magic, 8);
		write_bytes(path, head, sizeof(head));
		cr_assert_eq(truncate(path, 3ll << 30), 0);
		snprintf(args, sizeof(args), cases[i].cmd, path);
		snprintf(err, sizeof(err), "%s.err", path);
		t0 = now_ns(CLOCK_MONOTONIC);
		pid = fork();
		cr_assert_geq(pid, 0);
		if (pid == 0) {
			char cmd[1000];
			int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);

			dup2(fd, 2);
			snprintf(cmd, sizeof(cmd), "exec %s %s", hsbpf_bin(), args);
			execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
			_exit(127);
		}
		cr_assert_eq(wait4(pid, &st, 0, &ru), pid);
		t0 = (now_ns(CLOCK_MONOTONIC) - t0) / 1000000;
		cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 1, "%s: status %#x", args, st);
		cr_expect_lt(t0, 1000, "%s: %llu ms", args, (unsigned long long)t0);
		cr_expect_lt(ru.ru_maxrss, 64 * 1024, "%s: peak memory %ld kB", args, ru.ru_maxrss);
	}
}

/* 9. an output name of 250 characters (the temporary's name exceeded NAME_MAX) */
Test(files, output_name_of_250_characters)
{
	static const char *const cmds[] = { "import %s -o %%s", "record -o %s -- true",
					    "truth -o %s -- /bin/true" };
	char name[251], path[900];
	struct run_result r;

	memset(name, 'x', 250);
	name[250] = 0;
	snprintf(path, sizeof(path), "%s/%s", tmpdir(), name);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char args[2000], fmt[200];

		unlink(path);
		if (i == 0) {
			snprintf(fmt, sizeof(fmt), cmds[i], lbr_data("test.lbr"));
			snprintf(args, sizeof(args), fmt, path);
		} else {
			snprintf(args, sizeof(args), cmds[i], path);
		}
		run(&r, TIMEOUT " %s %s", hsbpf_bin(), args);
		cr_expect_eq(r.status, 0, "%s: %s", cmds[i], r.err);
		cr_expect_eq(access(path, F_OK), 0, "%s wrote nothing", cmds[i]);
	}
	run(&r, "ls -A %s | grep -v '^\\.out$\\|^\\.err$\\|^xxxxxxxx'", tmpdir());
	cr_expect_str_eq(r.out, "", "left behind: %s", r.out);
}

/* 6. import onto its own input (by another name too) is refused and the input kept; a
 * --binary or --symfs that is not there is an error, not ignored */
Test(files, import_keeps_its_input_and_checks_its_options)
{
	struct run_result r;

	cr_assert_eq(run(&r, "cp %s %s && ln %s %s", lbr_data("test.lbr"), tpath("s.data"), tpath("s.data"),
			 tpath("h.data")), 0);
	run(&r, "%s import %s -o %s", hsbpf_bin(), tpath("s.data"), tpath("s.data"));
	cr_expect_eq(r.status, 1, "%s", r.err);
	cr_expect(strstr(r.err, "is the input"), "%s", r.err);
	run(&r, "cd %s && %s import s.data -o ./h.data", tmpdir(), hsbpf_bin());
	cr_expect_eq(r.status, 1, "%s", r.err);
	cr_expect(strstr(r.err, "is the input"), "%s", r.err);
	cr_expect_eq(run(&r, "cmp %s %s", lbr_data("test.lbr"), tpath("s.data")), 0, "the input changed");

	run(&r, "%s import %s --binary /nonexistent -o %s", hsbpf_bin(), tpath("s.data"), tpath("o.data"));
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "cannot read '/nonexistent': No such file or directory"), "%s", r.err);
	run(&r, "%s import %s --binary /etc/passwd -o %s", hsbpf_bin(), tpath("s.data"), tpath("o.data"));
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "'/etc/passwd' is not an ELF file"), "%s", r.err);
	run(&r, "%s import %s --symfs /nonexistent -o %s", hsbpf_bin(), tpath("s.data"), tpath("o.data"));
	cr_expect_eq(r.status, 1);
	cr_expect(strstr(r.err, "cannot use --symfs '/nonexistent'"), "%s", r.err);
	cr_expect_neq(access(tpath("o.data"), F_OK), 0);
	/* a binary without a build-id (test.binary has none) is matched by name */
	run(&r, "%s import %s --binary %s -o %s", hsbpf_bin(), tpath("s.data"), lbr_data("test.binary"),
	    tpath("o.data"));
	cr_expect_eq(r.status, 0, "%s", r.err);
}

/* truth --vpmu writes two files: one name for both lost the first */
Test(files, truth_outputs_are_two_files)
{
	struct run_result r;

	run(&r, "cd %s && %s truth --vpmu insns -o v.out --profile ./v.out -- /bin/true", tmpdir(),
	    hsbpf_bin());
	cr_expect_eq(r.status, 2, "%s", r.err);
	cr_expect(strstr(r.err, "name the same file"), "%s", r.err);
	cr_expect_neq(access(tpath("v.out"), F_OK), 0);
}

/* 10. a 2.0 profile whose packed section is whole (its CRC right) but does not unpack, or is
 * cut: every command that reads profiles refuses it with the section and the reason, status
 * 1, never a crash */
Test(files, damaged_packed_sections_are_refused)
{
	static const char meta[] = "event=cpu-clock\n";
	static const char *const cmds[] = {
		"report -i %s --stdio", "report -i %s --format pprof -o /dev/null", "script -i %s",
		"flamegraph -i %s -o /dev/null", "diff %s %s",
	};
	struct profile_sample_rec s[8] = { { .pid = 1, .ip = 0x1000, .count = 1 } };
	struct test_section secs[2] = { { SEC_META, meta, sizeof(meta) - 1 } };
	u8 garbage[64];
	size_t size, psize;
	void *buf, *packed;
	struct run_result r;

	memset(garbage, 0x5a, sizeof(garbage));
	memcpy(garbage, &(u64){ sizeof(s) }, 8);
	garbage[8] = 0;
	secs[1] = (struct test_section){ SEC_SAMPLES | FILE_SECTION_PACKED, garbage, sizeof(garbage) };
	buf = build_container(PROFILE_MAGIC, 2, 0, secs, 2, &size);
	write_bytes(tpath("garbage.data"), buf, size);
	free(buf);
	cr_assert_eq(pack_section(s, sizeof(s), NULL, &packed, &psize), 0);
	secs[1] = (struct test_section){ SEC_SAMPLES | FILE_SECTION_PACKED, packed, psize - 1 };
	buf = build_container(PROFILE_MAGIC, 2, 0, secs, 2, &size);
	write_bytes(tpath("cut.data"), buf, size);
	free(buf);
	free(packed);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		for (size_t f = 0; f < 2; f++) {
			const char *path = tpath(f ? "cut.data" : "garbage.data");
			char args[1500], want[700];

			snprintf(args, sizeof(args), cmds[i], path, path);
			run(&r, TIMEOUT " %s %s", hsbpf_bin(), args);
			cr_expect_eq(r.status, 1, "%s: %d: %s", args, r.status, r.err);
			snprintf(want, sizeof(want),
				 "'%s' is corrupt: section 3: packed section does not decompress", path);
			cr_expect(strstr(r.err, want), "%s: %s", args, r.err);
		}
}
