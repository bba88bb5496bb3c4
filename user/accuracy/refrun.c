// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The reference run: checks, the qemu-x86_64 child with the plugin, its status, its truth. */
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
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

/* is dir/rel a file? buf holds the path (a path too long for it is not) */
static bool beside(char *buf, size_t size, const char *dir, const char *rel)
{
	return (size_t)snprintf(buf, size, "%s/%s", dir, rel) < size && is_file(buf);
}

/* the plugin: given, $HSBPF_REF_PLUGIN, or next to the hsbpf binary; 0 or -ENOENT (reported) */
static int refrun__find_plugin(const char *given, char *buf, size_t size)
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
			if (beside(buf, size, exe, ".output/ref/libhsbpf-ref.so") ||
			    beside(buf, size, exe, "ref/libhsbpf-ref.so") ||	/* inside an output folder */
			    beside(buf, size, exe, "../lib/hsbpf/libhsbpf-ref.so"))
				return 0;
		}
	}
	return fail(-ENOENT, "cannot find the reference collector libhsbpf-ref.so (build it with "
		    "make, or give --plugin or HSBPF_REF_PLUGIN)");
}

/* check that argv[0] is an x86-64 ELF program we can run; fills its resolved path */
static int refrun__check_program(const char *prog, char *path, size_t size)
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
	return refrun__collect_vpmu(argv, given_plugin, &(struct vpmu_opts){ .edges = edges, .no_cct = true }, out);
}

/* an unnamed temporary file (O_TMPFILE, else unlinked at once): nothing is left behind
 * however hsbpf ends, SIGKILL included. A close-on-exec fd or -errno */
static int unnamed_tmp(void)
{
	const char *dir = getenv("TMPDIR");
	char path[PATH_MAX];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
	snprintf(path, sizeof(path), "%s/hsbpf-ref-XXXXXX", dir);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unlink(path);
	return fd;
}

/* wait for the collector; SIGINT, SIGTERM, SIGHUP or SIGQUIT to hsbpf meanwhile kill it. The signals
 * are blocked and taken with sigwaitinfo (stop holds them and SIGCHLD), so none is lost
 * between a check and a wait. 0 and *st, or the signal that interrupted the run */
static int wait_collector(pid_t pid, const sigset_t *stop, int *st)
{
	sigset_t term = *stop;
	const struct timespec now = {};
	int sig;

	sigdelset(&term, SIGCHLD);
	for (;;) {
		sig = sigwaitinfo(stop, NULL);
		if (sig < 0 && errno == EINTR)
			continue;
		if (sig == SIGCHLD || sig < 0) {
			pid_t w = waitpid(pid, st, WNOHANG);

			if (w == pid)
				break;
			if (w < 0 && errno != EINTR)
				return SIGKILL;	/* cannot happen: our child */
			continue;
		}
		kill(pid, SIGKILL);
		while (waitpid(pid, st, 0) < 0 && errno == EINTR)
			;
		return sig;
	}
	/* a signal that came with the end (Ctrl-C reaches the emulator too) still counts */
	sig = sigtimedwait(&term, NULL, &now);
	return sig > 0 ? sig : 0;
}

int refrun__collect_vpmu(char *const argv[], const char *given_plugin, const struct vpmu_opts *v,
			 struct truth **out)
{
	return refrun__collect_vpmus(argv, given_plugin, v, v ? 1 : 0, out);
}

/* v == NULL: edges and calling contexts on; v->event == NULL: no edges (--no-edges) unless
 * v->edges; else nv virtual PMUs. v->no_cct (of the first) leaves the calling contexts out;
 * v->stacks (exact per-sample stacks) takes one PMU. */
int refrun__collect_vpmus(char *const argv[], const char *given_plugin, const struct vpmu_opts *v,
			  size_t nv, struct truth **out)
{
	struct profile *outs[TRUTH_MAX_PMUS];
	bool edges = !v || v->event || v->edges;
	bool cct = !(v && v->no_cct);
	char plugin[PATH_MAX], prog[PATH_MAX], arg[PATH_MAX + 1024];
	char catcher[PATH_MAX], preload[2 * PATH_MAX], crashenv[64];
	const char *user_preload = getenv("LD_PRELOAD");
	struct sigaction dfl = { .sa_handler = SIG_DFL }, old_chld;
	struct truth *t = NULL;
	int st, err, argc = 0, raw_fd = -1, crash_fd = -1, q = 0, sig;
	unsigned char crash_sig = 0;
	sigset_t stop, old_mask;
	pid_t pid, parent = getpid();
	u64 t0, wall0;
	char **qargv = NULL;
	struct stat rs;

	*out = NULL;
	if (nv > TRUTH_MAX_PMUS)
		return fail(-E2BIG, "at most %d virtual PMUs in one run", TRUTH_MAX_PMUS);
	for (size_t k = 0; k < nv; k++)
		if (v[k].stacks && nv > 1)
			return fail(-EINVAL, "exact sample stacks take one virtual PMU, not %zu", nv);
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
	/* the collector's output, and where a fatal signal is told: files without a name,
	 * handed to the emulator as inherited descriptors */
	raw_fd = unnamed_tmp();
	crash_fd = raw_fd < 0 ? raw_fd : unnamed_tmp();
	if (raw_fd < 0 || crash_fd < 0) {
		err = fail(raw_fd < 0 ? raw_fd : crash_fd, "cannot create a temporary file: %s",
			   strerror(-(raw_fd < 0 ? raw_fd : crash_fd)));
		goto cleanup;
	}
	while (argv[argc])
		argc++;
	qargv = calloc(argc + 10, sizeof(*qargv));
	if (!qargv) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* /proc/self/fd/N in the emulator is its inherited copy of raw_fd */
	if (v && v->event) {
		int len = snprintf(arg, sizeof(arg), "%s,out=/proc/self/fd/%d,vpmu=%s,period=%llu,mode=%d,"
				   "lbr=%d,skid=%d", plugin, raw_fd, v->event,
				   (unsigned long long)v->period, v->mode, v->lbr, v->skid);

		if (v->sampling)
			len += snprintf(arg + len, sizeof(arg) - len, ",sampling=%s", v->sampling);
		/* the plugin's arguments are split at commas: its assignments take colons */
		if (v->timing && len < (int)sizeof(arg)) {
			len += snprintf(arg + len, sizeof(arg) - len, ",timing=");
			for (const char *c = v->timing; *c && len < (int)sizeof(arg) - 1; c++)
				arg[len++] = *c == ',' ? ':' : *c;
			if (len < (int)sizeof(arg))
				arg[len] = 0;
		}
		/* the other PMUs sample the same run, on the same core */
		for (size_t k = 1; k < nv && len < (int)sizeof(arg); k++)
			len += snprintf(arg + len, sizeof(arg) - len, ",pmu=%s:%llu:%d:%d:%d:%s", v[k].event,
					(unsigned long long)v[k].period, v[k].mode, v[k].lbr, v[k].skid,
					v[k].sampling ? v[k].sampling : "exact");
		if (len >= (int)sizeof(arg)) {
			err = fail(-E2BIG, "the collector's arguments are too long");
			goto cleanup;
		}
	}
	else
		snprintf(arg, sizeof(arg), "%s,out=/proc/self/fd/%d%s", plugin, raw_fd,
			 edges ? "" : ",edges=off");
	if (cct && strlen(arg) + 8 < sizeof(arg))
		strcat(arg, ",cct=on");
	if (cct && v && v->event && v->stacks && strlen(arg) + 12 < sizeof(arg))
		strcat(arg, ",vstacks=on");
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

	sigemptyset(&stop);
	sigaddset(&stop, SIGCHLD);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigaddset(&stop, SIGQUIT);
	sigprocmask(SIG_BLOCK, &stop, &old_mask);
	sigaction(SIGCHLD, &dfl, &old_chld);	/* not SIG_IGN, which would reap it for us */
	wall0 = now_ns(CLOCK_REALTIME);
	t0 = now_ns(CLOCK_MONOTONIC);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		error("cannot fork: %s", strerror(-err));
		sigaction(SIGCHLD, &old_chld, NULL);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		goto cleanup;
	}
	if (pid == 0) {
		/* the emulator dies with hsbpf, however hsbpf ends; if hsbpf is already gone,
		 * it does not start */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(127);
		fcntl(raw_fd, F_SETFD, 0);
		fcntl(crash_fd, F_SETFD, 0);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		sigaction(SIGCHLD, &old_chld, NULL);
		execvp(EMULATOR, qargv);
		fprintf(stderr, "hsbpf: cannot run %s: %s (install qemu-user)\n", EMULATOR, strerror(errno));
		_exit(127);
	}
	sig = wait_collector(pid, &stop, &st);
	sigaction(SIGCHLD, &old_chld, NULL);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	if (sig) {
		err = fail(-EINTR, "interrupted (%s): %s stopped, no counts written", strsignal(sig),
			   EMULATOR);
		goto cleanup;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127 && !fstat(raw_fd, &rs) && rs.st_size == 0) {
		err = -ENOENT;	/* the child said why */
		goto cleanup;
	}
	for (size_t k = 0; k < nv && k < TRUTH_MAX_PMUS; k++)
		outs[k] = v[k].out;
	err = truth__from_raw_pmus(raw_fd, "the reference collector's output", &t, outs,
				   v && v->event ? nv : 0);
	if (err)
		goto cleanup;
	truth__drop_object(t, truth__object(t, catcher));
	if (pread(crash_fd, &crash_sig, 1, 0) == 1 && crash_sig) {
		/* the catcher turned the fatal signal into exit_group(128 + sig) */
		st = crash_sig;	/* as if WIFSIGNALED */
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
	if (raw_fd >= 0)
		close(raw_fd);
	free(qargv);
	truth__free(t);
	return err;
}
