// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* HotSpot's perf map asked for with jcmd at the end of a recording (see jvm_perfmap.h). The
 * JVM writes /tmp/perf-PID.map in its own /tmp with its own PID (the one in its namespace),
 * which is where jitmaps__read looks. */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "profile/procfs.h"
#include "symbols/jitmap.h"
#include "symbols/jvm_perfmap.h"

bool jvm_perfmap__is_jvm(u32 pid)
{
	char path[64], line[PATH_MAX + 128];
	bool jvm = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	/* its code mapped executable: a profiler (an hsbpf agent) reading the library's symbols
	 * or tables maps it too, but not executable, and jcmd's SIGQUIT would end it */
	while (!jvm && fgets(line, sizeof(line), f)) {
		char *name = strrchr(line, '/'), perms[8];

		jvm = name && !strcmp(name, "/libjvm.so\n") && sscanf(line, "%*s %7s", perms) == 1 &&
		      strchr(perms, 'x');
	}
	fclose(f);
	return jvm;
}

static bool has_map(u32 pid)
{
	char path[PATH_MAX];
	u32 nspid = procfs__nspid(pid);
	struct stat sb;

	snprintf(path, sizeof(path), "/proc/%u/root%s/perf-%u.map", pid, JITMAP_DIR,
		 nspid ? nspid : pid);
	return !stat(path, &sb);
}

/* the last line jcmd said, for the one line a failure gets */
static void last_line(char *buf, size_t len, char *out, size_t size)
{
	char *end, *start;

	buf[len] = 0;
	end = buf + strlen(buf);
	while (end > buf && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		*--end = 0;
	start = strrchr(buf, '\n');
	snprintf(out, size, "%s", start ? start + 1 : buf);
}

/* jcmd's output (its last 1 KB) in buf, until it closes it or the deadline passes: the bytes
 * kept, or -ETIMEDOUT */
static ssize_t collect(int fd, char *buf, size_t size, u64 deadline)
{
	size_t len = 0;

	for (;;) {
		u64 now = now_ns(CLOCK_MONOTONIC);
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		char chunk[512];
		ssize_t n;
		int r;

		if (now >= deadline)
			return -ETIMEDOUT;
		r = poll(&pfd, 1, (int)((deadline - now + 999999) / 1000000));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;	/* the deadline, checked above */
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return len;
		if (len + n >= size) {	/* keep the tail */
			size_t drop = len + n - (size - 1);

			drop = drop > len ? len : drop;
			memmove(buf, buf + drop, len - drop);
			len -= drop;
		}
		n = (size_t)n > size - 1 - len ? (ssize_t)(size - 1 - len) : n;
		memcpy(buf + len, chunk, n);
		len += n;
	}
}

int jvm_perfmap__ask(u32 pid, const char *jcmd, unsigned timeout_ms)
{
	char arg[16], buf[1024], said[256];
	int pipefd[2], st = 0, err;
	ssize_t len;
	pid_t child;

	if (!jvm_perfmap__is_jvm(pid))
		return -ENOENT;
	if (has_map(pid))
		return 0;
	if (pipe2(pipefd, O_CLOEXEC)) {
		err = -errno;
		goto fail;
	}
	snprintf(arg, sizeof(arg), "%u", pid);
	child = fork();
	if (child < 0) {
		err = -errno;
		close(pipefd[0]);
		close(pipefd[1]);
		goto fail;
	}
	if (!child) {
		int null = open("/dev/null", O_RDONLY);

		if (null >= 0)
			dup2(null, STDIN_FILENO);
		dup2(pipefd[1], STDOUT_FILENO);
		dup2(pipefd[1], STDERR_FILENO);
		execlp(jcmd, jcmd, arg, "Compiler.perfmap", (char *)NULL);
		dprintf(STDERR_FILENO, "cannot run '%s': %s\n", jcmd, strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	len = collect(pipefd[0], buf, sizeof(buf), now_ns(CLOCK_MONOTONIC) +
		      (u64)timeout_ms * 1000000);
	close(pipefd[0]);
	if (len < 0)
		kill(child, SIGKILL);
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	if (len < 0) {
		warning("'%s %u Compiler.perfmap' did not finish within %u ms: killed it, the JVM's "
			"JIT frames stay unnamed", jcmd, pid, timeout_ms);
		return -ETIMEDOUT;
	}
	if (WIFEXITED(st) && !WEXITSTATUS(st) && has_map(pid))
		return 0;
	last_line(buf, len, said, sizeof(said));
	warning("'%s %u Compiler.perfmap' wrote no perf map%s%s: the JVM's JIT frames stay "
		"unnamed", jcmd, pid, said[0] ? ": " : "", said);
	return -EIO;
fail:
	warning("cannot run '%s %u Compiler.perfmap': %s", jcmd, pid, strerror(-err));
	return err;
}
