// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* jvm_perfmap: only a live JVM is asked for its perf map; jcmd writes it (JDK 17's
 * Compiler.perfmap) with the fixture's JIT-compiled methods in it; a JVM that has one is not
 * asked again; a jcmd that fails, is missing or hangs past the bound is an error returned (and
 * said), never a crash or a wait without end. Skipped where there is no JDK. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "helpers.h"
#include "symbols/jvm_perfmap.h"

TestSuite(jvm_perfmap, .fini = cleanup_tmpdir, .timeout = 180);

static void map_path(pid_t pid, char *buf, size_t size)
{
	snprintf(buf, size, "/tmp/perf-%d.map", pid);
}

Test(jvm_perfmap, what_is_no_jvm_is_not_asked)
{
	cr_expect_not(jvm_perfmap__is_jvm(getpid()));
	cr_expect_eq(jvm_perfmap__ask(getpid(), "/nonexistent/jcmd", 1000), -ENOENT);
	cr_expect_eq(jvm_perfmap__ask(0x7ffffff0, "/nonexistent/jcmd", 1000), -ENOENT);
}

/* a profiler reading libjvm.so (the agent's symbolizer, its unwind tables) maps it, not as
 * code: jcmd's SIGQUIT would end it */
Test(jvm_perfmap, a_process_reading_libjvm_is_no_jvm)
{
	glob_t g;
	void *m;
	int fd;

	if (glob("/usr/lib/jvm/*/lib/server/libjvm.so", 0, NULL, &g) || !g.gl_pathc)
		cr_skip_test("no JDK: libjvm.so is not installed");
	fd = open(g.gl_pathv[0], O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "%s", g.gl_pathv[0]);
	m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	cr_assert_neq(m, MAP_FAILED);
	cr_expect_not(jvm_perfmap__is_jvm(getpid()), "a read-only mapping of %s is taken for a JVM",
		      g.gl_pathv[0]);
	munmap(m, 4096);
	close(fd);
	globfree(&g);
}

Test(jvm_perfmap, a_jvm_gets_its_map_once)
{
	pid_t pid = spawn_jvm();
	char path[64], *text = NULL;
	size_t cap = 0;
	bool hot = false;
	FILE *f;

	map_path(pid, path, sizeof(path));
	cr_expect(jvm_perfmap__is_jvm(pid));
	cr_assert(access(path, F_OK), "%s exists before it is asked for", path);
	cr_expect_eq(jvm_perfmap__ask(pid, JVM_JCMD, JVM_PERFMAP_TIMEOUT_MS), 0);
	f = fopen(path, "r");
	cr_assert(f, "jcmd wrote no %s", path);
	while (!hot && getline(&text, &cap, f) > 0)
		hot = strstr(text, " Hot.hotLoop(long)");
	fclose(f);
	free(text);
	cr_expect(hot, "%s does not name Hot.hotLoop", path);
	/* it has one now: jcmd is not run again (this one would fail) */
	cr_expect_eq(jvm_perfmap__ask(pid, "/nonexistent/jcmd", 1000), 0);
	reap(pid);
	unlink(path);
}

Test(jvm_perfmap, a_jcmd_that_fails_or_hangs_is_an_error)
{
	pid_t pid = spawn_jvm();
	char path[64], hang[PATH_MAX];
	static const char script[] = "#!/bin/sh\nexec sleep 60\n";

	map_path(pid, path, sizeof(path));
	cr_expect_eq(jvm_perfmap__ask(pid, "false", 10000), -EIO);
	cr_expect_eq(jvm_perfmap__ask(pid, "/nonexistent/jcmd", 10000), -EIO);
	snprintf(hang, sizeof(hang), "%s/hanging-jcmd", tmpdir());
	write_bytes(hang, script, sizeof(script) - 1);
	cr_assert_eq(chmod(hang, 0755), 0);
	cr_expect_eq(jvm_perfmap__ask(pid, hang, 200), -ETIMEDOUT);
	cr_expect(access(path, F_OK), "%s exists though jcmd never ran", path);
	reap(pid);
	unlink(path);
}
