// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The reference run: checks, the qemu-x86_64 child with the plugin, its status, its truth. */
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "glibc_env.h"
#include "refrun.h"

#define EMULATOR "qemu-x86_64"

static bool is_file(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISREG(st.st_mode);
}

int refrun__find_plugin(const char *given, char *buf, size_t size)
{
	const char *env = getenv("HSBPF_REF_PLUGIN");
	char exe[PATH_MAX], *slash;
	ssize_t n;

	if (given || env) {
		snprintf(buf, size, "%s", given ? given : env);
		if (!is_file(buf))
			return fail(-ENOENT, "cannot find the reference collector '%s'", buf);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			snprintf(buf, size, "%s/.output/ref/libhsbpf-ref.so", exe);
			if (is_file(buf))
				return 0;
			snprintf(buf, size, "%s/ref/libhsbpf-ref.so", exe);	/* inside an output folder */
			if (is_file(buf))
				return 0;
			snprintf(buf, size, "%s/../lib/hsbpf/libhsbpf-ref.so", exe);
			if (is_file(buf))
				return 0;
		}
	}
	return fail(-ENOENT, "cannot find the reference collector libhsbpf-ref.so (build it with "
		    "make, or give --plugin or HSBPF_REF_PLUGIN)");
}

int refrun__check_program(const char *prog, char *path, size_t size)
{
	unsigned char e[20];
	u16 machine;
	int fd;

	if (strchr(prog, '/')) {
		snprintf(path, size, "%s", prog);
	} else {
		const char *p = getenv("PATH");
		char *copy = strdup(p ? p : "/usr/bin:/bin"), *dir, *save = NULL;
		bool found = false;

		if (!copy)
			return -ENOMEM;
		for (dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
			snprintf(path, size, "%s/%s", dir, prog);
			found = is_file(path) && !access(path, X_OK);
		}
		free(copy);
		if (!found)
			return fail(-ENOENT, "cannot run '%s': No such file or directory", prog);
	}
	fd = file__open_regular(path);
	if (fd < 0)
		return fail(fd, "cannot run '%s': %s", prog, file__strerror(fd));
	if (read(fd, e, sizeof(e)) != sizeof(e) || memcmp(e, ELFMAG, SELFMAG)) {
		close(fd);
		return fail(-ENOEXEC, "'%s' is not an ELF program (scripts run as: hsbpf truth -- "
			    "/bin/sh SCRIPT)", prog);
	}
	close(fd);
	memcpy(&machine, e + 18, 2);
	if (e[EI_CLASS] != ELFCLASS64 || machine != EM_X86_64)
		return fail(-ENOEXEC, "'%s' is not an x86-64 ELF program", prog);
	return 0;
}

static void describe_status(int st, struct truth_meta *m)
{
	if (WIFSIGNALED(st)) {
		m->signal = WTERMSIG(st);
		snprintf(m->status, sizeof(m->status), "killed by signal %u (%s)", m->signal,
			 strsignal(m->signal));
	} else {
		m->exit_code = WEXITSTATUS(st);
		snprintf(m->status, sizeof(m->status), "exited with status %u", m->exit_code);
	}
}

static void emulator_version(char *buf, size_t size)
{
	FILE *f = popen(EMULATOR " --version 2>/dev/null", "r");

	snprintf(buf, size, "%s", EMULATOR);
	if (f) {
		if (fgets(buf, size, f))
			buf[strcspn(buf, "\n")] = 0;
		pclose(f);
	}
}

int refrun__collect(char *const argv[], const char *given_plugin, bool edges, struct truth **out)
{
	return refrun__collect_vpmu(argv, given_plugin, edges ? NULL : &(struct vpmu_opts){}, out);
}

/* v == NULL: edges on; v->event == NULL: blocks only (--no-edges); else the virtual PMU */
int refrun__collect_vpmu(char *const argv[], const char *given_plugin, const struct vpmu_opts *v,
			 struct truth **out)
{
	bool edges = !v || v->event;
	char plugin[PATH_MAX], prog[PATH_MAX], raw[] = "/tmp/hsbpf-ref-XXXXXX", arg[PATH_MAX + 64];
	char crash[] = "/tmp/hsbpf-crash-XXXXXX", catcher[PATH_MAX], preload[2 * PATH_MAX], crashenv[64];
	const char *user_preload = getenv("LD_PRELOAD");
	struct truth *t = NULL;
	int fd, st, err, argc = 0, crash_fd = -1, q = 0;
	unsigned char sig = 0;
	u64 t0, wall0;
	char **qargv = NULL;
	pid_t pid;

	*out = NULL;
	err = refrun__check_program(argv[0], prog, sizeof(prog));
	if (err)
		return err;
	err = refrun__find_plugin(given_plugin, plugin, sizeof(plugin));
	if (err)
		return err;
	/* the crash catcher lives next to the plugin */
	snprintf(catcher, sizeof(catcher), "%s", plugin);
	if (strrchr(catcher, '/'))
		snprintf(strrchr(catcher, '/') + 1, sizeof(catcher) - (strrchr(catcher, '/') + 1 - catcher),
			 "libhsbpf-crash.so");
	if (!is_file(catcher))
		return fail(-ENOENT, "cannot find the crash catcher '%s' (build it with make)", catcher);
	fd = mkstemp(raw);
	if (fd < 0)
		return fail(-errno, "cannot create a temporary file: %s", strerror(errno));
	close(fd);
	crash_fd = mkstemp(crash);	/* inherited by the program: where a fatal signal is told */
	if (crash_fd < 0) {
		err = fail(-errno, "cannot create a temporary file: %s", strerror(errno));
		goto cleanup;
	}
	unlink(crash);
	while (argv[argc])
		argc++;
	qargv = calloc(argc + 10, sizeof(*qargv));
	if (!qargv) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (v && v->event)
		snprintf(arg, sizeof(arg), "%s,out=%s,vpmu=%s,period=%llu,mode=%d,lbr=%d,skid=%d", plugin,
			 raw, v->event, (unsigned long long)v->period, v->mode, v->lbr, v->skid);
	else
		snprintf(arg, sizeof(arg), "%s,out=%s%s", plugin, raw, edges ? "" : ",edges=off");
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s%s%s", catcher, user_preload ? ":" : "",
		 user_preload ? user_preload : "");
	snprintf(crashenv, sizeof(crashenv), "HSBPF_CRASH_FD=%d", crash_fd);
	qargv[q++] = EMULATOR;
	qargv[q++] = "-plugin";
	qargv[q++] = arg;
	qargv[q++] = "-E";	/* the program's environment only, not QEMU's own */
	qargv[q++] = preload;
	qargv[q++] = "-E";
	qargv[q++] = crashenv;
	qargv[q++] = prog;
	for (int i = 1; i < argc; i++)
		qargv[q++] = argv[i];

	wall0 = now_ns(CLOCK_REALTIME);
	t0 = now_ns(CLOCK_MONOTONIC);
	pid = fork();
	if (pid < 0) {
		err = fail(-errno, "cannot fork: %s", strerror(errno));
		goto cleanup;
	}
	if (pid == 0) {
		execvp(EMULATOR, qargv);
		fprintf(stderr, "hsbpf: cannot run %s: %s (install qemu-user)\n", EMULATOR, strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			err = fail(-errno, "cannot wait for %s: %s", EMULATOR, strerror(errno));
			goto cleanup;
		}
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
		struct stat rs;

		if (!stat(raw, &rs) && rs.st_size == 0) {
			err = -ENOENT;	/* the child said why */
			goto cleanup;
		}
	}
	err = truth__from_raw(raw, &t, v && v->event ? v->out : NULL);
	if (err)
		goto cleanup;
	truth__drop_object(t, truth__object(t, catcher));
	if (pread(crash_fd, &sig, 1, 0) == 1 && sig) {
		/* the catcher turned the fatal signal into exit_group(128 + sig) */
		st = sig;	/* as if WIFSIGNALED */
	}
	describe_status(st, &t->meta);
	{
		char real[PATH_MAX];

		snprintf(t->meta.program, sizeof(t->meta.program), "%.1023s",
			 realpath(prog, real) ? real : prog);
	}
	t->meta.start_realtime_ns = wall0;
	t->meta.duration_ns = now_ns(CLOCK_MONOTONIC) - t0;
	emulator_version(t->meta.emulator, sizeof(t->meta.emulator));
	{
		size_t off = 0;

		for (int i = 0; i < argc && off < sizeof(t->meta.command); i++)
			off += snprintf(t->meta.command + off, sizeof(t->meta.command) - off, "%s%s",
					i ? " " : "", argv[i]);
	}
	if (glibc_env__native_tunables(plugin, t->meta.glibc_tunables, sizeof(t->meta.glibc_tunables)))
		snprintf(t->meta.glibc_tunables, sizeof(t->meta.glibc_tunables), "?");
	*out = t;
	t = NULL;
cleanup:
	if (crash_fd >= 0)
		close(crash_fd);
	unlink(raw);
	free(qargv);
	truth__free(t);
	return err;
}
