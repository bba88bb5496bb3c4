// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Test helpers shared by the live suites. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "record/cgroup.h"
#include "helpers.h"
#include "hsbpf.h"
#include "lib/section_pack.h"
#include "report/hist.h"
#include "symbols/symbolizer.h"

static char tmp[256];

/* recordings made by the tests keep no objects (a -a recording on a busy machine would copy
 * every compiler the other jobs run), and none in the user's cache: the build-id cache's own
 * suites turn it on, each in a folder of its own */
__attribute__((constructor)) static void no_buildid_cache(void)
{
	setenv("HSBPF_BUILDID_DIR", "/tmp/hsbpf-test-buildid", 0);
	setenv("HSBPF_NO_BUILDID_CACHE", "1", 0);
}

static void slurp(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	buf[0] = 0;
	if (!f)
		return;
	n = fread(buf, 1, size - 1, f);
	buf[n] = 0;
	fclose(f);
}

int run(struct run_result *r, const char *fmt, ...)
{
	char cmd[4096], full[8192], outp[300], errp[300];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(outp, sizeof(outp), "%s/.out", tmpdir());
	snprintf(errp, sizeof(errp), "%s/.err", tmpdir());
	snprintf(full, sizeof(full), "( %s ) >%s 2>%s </dev/null", cmd, outp, errp);
	st = system(full);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	slurp(outp, r->out, sizeof(r->out));
	slurp(errp, r->err, sizeof(r->err));
	return r->status;
}

const char *hsbpf_bin(void)
{
	const char *b = getenv("HSBPF");

	return b ? b : "./hsbpf";
}

const char *env_path(const char *var, const char *dflt, const char *name)
{
	static char bufs[4][1024];
	static int next;
	const char *dir = getenv(var);
	char *b = bufs[next++ % 4];

	snprintf(b, 1024, "%s/%s", dir ? dir : dflt, name);
	return b;
}

const char *fixture(const char *name)
{
	return env_path("FIXTURES", ".output/fixtures", name);
}

const char *lbr_data(const char *name)
{
	const char *path = env_path("LBR_DATA", "tests/data/lbr", name);

	cr_assert(!access(path, R_OK), "test data '%s' is missing: %s", path, strerror(errno));
	return path;
}

const char *tmpdir(void)
{
	if (!tmp[0]) {
		strcpy(tmp, "/tmp/hsbpf-test-XXXXXX");
		if (!mkdtemp(tmp))
			abort();
	}
	return tmp;
}

/* what spawn started, for cleanup_tmpdir to stop what a failed test left running */
static pid_t spawned[256];
static size_t nr_spawned;

static char pywork_truth[PATH_MAX];

void pywork_truth_begin(void)
{
	snprintf(pywork_truth, sizeof(pywork_truth), "%s/pywork.truth", tmpdir());
	unlink(pywork_truth);
	cr_assert_eq(setenv("PYWORK_TRUTH", pywork_truth, 1), 0);
}

double pywork_truth_share(const char *a, const char *b)
{
	unsigned long long ns, na = 0, nb = 0;
	char name[64];
	FILE *f = fopen(pywork_truth, "r");

	cr_assert(f, "no truth from pywork.py at '%s'", pywork_truth);
	while (fscanf(f, "%63s %llu", name, &ns) == 2) {
		if (!strcmp(name, a))
			na = ns;
		else if (!strcmp(name, b))
			nb = ns;
	}
	fclose(f);
	cr_assert_gt(na + nb, 0, "pywork.py's truth has neither %s nor %s", a, b);
	return (double)na / (na + nb);
}

/* a spawned process still running and not reaped (still this process's child: a pid reaped
 * and reused by another is not) is killed; without it a test that failed halfway left its
 * busy loops and receivers running, loading the machine for every test after it */
static void kill_spawned(void)
{
	for (size_t i = 0; i < nr_spawned; i++) {
		int st;

		if (waitpid(spawned[i], &st, WNOHANG) == 0) {
			kill(spawned[i], SIGKILL);
			waitpid(spawned[i], &st, 0);
		}
	}
	nr_spawned = 0;
}

void cleanup_tmpdir(void)
{
	char cmd[300];

	kill_spawned();
	if (!tmp[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", tmp);
	tmp[0] = 0;
}

u64 samples_in_symbol(const struct profile *p, const char *sym)
{
	struct symbolizer *sy = symbolizer__new(p);
	u64 n = 0;

	for (size_t i = 0; sy && i < p->nr_samples; i++) {
		struct sym_result r;

		symbolizer__resolve(sy, &p->samples[i], &r);
		if (!strcmp(r.sym, sym))
			n += p->samples[i].count;
	}
	symbolizer__free(sy);
	return n;
}

u64 samples_in_pid(const struct profile *p, u32 pid)
{
	u64 n = 0;

	for (size_t i = 0; i < p->nr_samples; i++)
		if (p->samples[i].pid == pid)
			n += p->samples[i].count;
	return n;
}

int python_frames(const struct profile *p, const struct profile_stack_sample *ss, const char **names,
		  u32 *lines, int max)
{
	const struct profile_stack *st = profile__stack(p, ss->user);
	const u64 *f = st ? profile__frames(p, st) : NULL;
	int n = 0;

	for (u32 j = 0; st && j < st->nr && n < max; j++) {
		const struct profile_pyframe *y;

		if (!HSBPF_PY_IS_FRAME(f[j]))
			continue;
		y = profile__find_pyframe(p, ss->pid, f[j]);
		names[n] = y ? profile__str(p, y->name) : NULL;
		lines[n] = y ? y->line : 0;
		n++;
	}
	return n;
}

bool python_importing(const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], "_find_and_load"))
			return true;
	return false;
}

pid_t spawn(const char *cmdline)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		execl("/bin/sh", "sh", "-c", cmdline, (char *)NULL);
		_exit(127);
	}
	if (nr_spawned < sizeof(spawned) / sizeof(spawned[0]))
		spawned[nr_spawned++] = pid;
	return pid;
}

pid_t spawn_jvm(void)
{
	const char *cls = fixture("jit/Hot.class");
	char dir[PATH_MAX], ready[PATH_MAX], cmd[3 * PATH_MAX + 64];
	pid_t pid;

	if (access(cls, R_OK) || access("/usr/bin/java", X_OK))
		cr_skip_test("no JDK (javac, java): %s is not built", cls);
	cr_assert(realpath(cls, dir), "cannot resolve %s: %s", cls, strerror(errno));
	*strrchr(dir, '/') = 0;
	snprintf(ready, sizeof(ready), "%s/jvm-ready", tmpdir());
	snprintf(cmd, sizeof(cmd), "cd %s && exec java -cp %s Hot %s", tmpdir(), dir, ready);
	pid = spawn(cmd);
	cr_assert(wait_file_contains(ready, "ready", 60000), "the JVM did not get ready");
	return pid;
}

static bool read_small(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, size - 1, f);
	buf[n] = 0;
	fclose(f);
	return n > 0;
}

/* the parent of pid from /proc/PID/stat (after the command's closing parenthesis) */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (!read_small(path, buf, sizeof(buf)) || !(p = strrchr(buf, ')')))
		return 0;
	return strtol(p + 4, NULL, 10);	/* ") S PPID" */
}

static bool descends_from(pid_t pid, pid_t root)
{
	for (int depth = 0; pid > 1 && depth < 64; depth++, pid = parent_of(pid))
		if (pid == root)
			return true;
	return false;
}

static int nr_threads(pid_t pid)
{
	char path[64];
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

pid_t wait_descendant(pid_t root, const char *comm, int min_threads)
{
	for (int i = 0; i < 1500; i++) {
		DIR *d = opendir("/proc");
		pid_t found = 0;

		for (struct dirent *e; d && !found && (e = readdir(d));) {
			char path[300], name[64];
			pid_t pid = strtol(e->d_name, NULL, 10);

			if (pid <= 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/comm", pid);
			if (!read_small(path, name, sizeof(name)))
				continue;
			name[strcspn(name, "\n")] = 0;
			if (!strcmp(name, comm) && descends_from(pid, root) && nr_threads(pid) >= min_threads)
				found = pid;
		}
		if (d)
			closedir(d);
		if (found)
			return found;
		usleep(10000);
	}
	cr_assert_fail("no process '%s' with %d threads under pid %d after 15 s", comm, min_threads, root);
	return 0;
}

bool wait_file_contains(const char *path, const char *text, int timeout_ms)
{
	static char buf[1 << 20];

	for (int waited = 0;; waited += 10) {
		slurp(path, buf, sizeof(buf));
		if (strstr(buf, text))
			return true;
		if (waited >= timeout_ms)
			return false;
		usleep(10000);
	}
}

void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

void remove_cgroup(const char *dir)
{
	for (int i = 0; i < 50 && rmdir(dir) && errno == EBUSY; i++)
		usleep(20000);
}

/* kill what runs in dir (cgroup.kill, 5.14 and later) and remove it, its children first */
static void remove_cgroup_tree(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);
	FILE *f;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_type == DT_DIR && e->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			remove_cgroup_tree(path);
		}
	}
	closedir(d);
	snprintf(path, sizeof(path), "%s/cgroup.kill", dir);
	f = fopen(path, "w");
	if (f) {
		fputs("1", f);
		fclose(f);
	}
	remove_cgroup(dir);
}

void remove_stale_test_cgroups(void)
{
	char mnt[PATH_MAX], path[2 * PATH_MAX];
	struct dirent *e;
	DIR *d;

	if (cgroup__find_mount("/proc/self/mountinfo", mnt, sizeof(mnt)) || !(d = opendir(mnt)))
		return;
	while ((e = readdir(d))) {
		const char *dash = strrchr(e->d_name, '-');
		char *end;
		long pid;

		if (e->d_type != DT_DIR || strncmp(e->d_name, "hsbpf-", 6) || !dash)
			continue;
		pid = strtol(dash + 1, &end, 10);
		if (*end || pid <= 0 || !kill(pid, 0) || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", mnt, e->d_name);
		remove_cgroup_tree(path);
	}
	closedir(d);
}

void make_docker_cgroup(const char *base, char c, char *out, size_t size)
{
	snprintf(out, size, "%s/docker-%064d.scope", base, 0);
	memset(strstr(out, "docker-") + 7, c, 64);
	cr_assert_eq(mkdir(out, 0755), 0, "cannot create cgroup %s: %s", out, strerror(errno));
}

int pack_section(const void *src, size_t size, const u8 *cols, void **out, size_t *out_size)
{
	struct section_pack *pk = section_pack__new(3);
	int err;

	cr_assert(pk);
	err = section_pack__encode(pk, src, size, cols, out, out_size);
	section_pack__free(pk);
	return err;
}

void *build_container(const char magic[8], u16 major, u16 minor, const struct test_section *secs,
		      size_t nr, size_t *size)
{
	size_t off = 64 + nr * 24;
	u8 *buf, *hdr;
	u32 crc;

	for (size_t i = 0; i < nr; i++)
		off += secs[i].size;
	buf = calloc(1, off);
	cr_assert(buf);
	*size = off;
	hdr = buf;
	memcpy(hdr, magic, 8);
	memcpy(hdr + 8, &major, 2);
	memcpy(hdr + 10, &minor, 2);
	crc = 64;
	memcpy(hdr + 12, &crc, 4);	/* header_size */
	memcpy(hdr + 16, &(u64){ off }, 8);
	memcpy(hdr + 24, &(u64){ 64 }, 8);
	memcpy(hdr + 32, &(u32){ nr }, 4);
	off = 64 + nr * 24;
	for (size_t i = 0; i < nr; i++) {
		u8 *d = buf + 64 + i * 24;

		memcpy(d, &secs[i].type, 4);
		crc = crc32(0, secs[i].data, secs[i].size);
		memcpy(d + 4, &crc, 4);
		memcpy(d + 8, &(u64){ off }, 8);
		memcpy(d + 16, &(u64){ secs[i].size }, 8);
		memcpy(buf + off, secs[i].data, secs[i].size);
		off += secs[i].size;
	}
	crc = crc32(0, buf + 64, nr * 24);
	memcpy(hdr + 40, &crc, 4);
	crc = crc32(0, buf, 64);
	memcpy(hdr + 36, &crc, 4);
	return buf;
}

void write_bytes(const char *path, const void *buf, size_t size)
{
	FILE *f = fopen(path, "wb");

	cr_assert(f, "cannot create %s", path);
	cr_assert_eq(fwrite(buf, 1, size, f), size);
	cr_assert_eq(fclose(f), 0);
}

const char *profile_path(void)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "%s/p.data", tmpdir());
	return buf;
}

struct hist *flat_hist(const struct profile *p, struct symbolizer *sy)
{
	enum sort_key key = SORT_SYM;
	struct hist *h = hist__new(&key, 1);

	cr_assert(h);
	cr_assert_eq(hist__add_profile(h, p, sy), 0);
	return h;
}

static char record_err[65536];

const char *record_profile_err(void)
{
	return record_err;
}

struct profile *record_profile(const char *fmt, ...)
{
	struct run_result r;
	struct profile *p;
	char args[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	unlink(profile_path());
	run(&r, "%s record -o %s %s", hsbpf_bin(), profile_path(), args);
	snprintf(record_err, sizeof(record_err), "%s", r.err);
	cr_assert_eq(r.status, 0, "record %s failed (%d): %s", args, r.status, r.err);
	cr_assert_eq(profile__read(profile_path(), &p), 0);
	return p;
}

struct profile *record_profile_whole(const char *fmt, ...)
{
	struct profile *p;
	char args[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	p = record_profile("%s", args);
	for (int i = 0; i < 4 && p->stats.sideband_lost; i++) {
		cr_log_info("record %s lost %llu sideband records: again", args,
			    (unsigned long long)p->stats.sideband_lost);
		profile__free(p);
		p = record_profile("%s", args);
	}
	cr_assert_eq(p->stats.sideband_lost, 0, "five recordings in a row lost sideband records");
	return p;
}

double binomial_sd(double want, u64 n)
{
	return sqrt(want * (1 - want) / (n ? n : 1));
}

void expect_share_within(u64 k, u64 n, double want, double tol, const char *what)
{
	double p = n ? (double)k / n : 0;

	cr_expect(fabs(p - want) <= tol, "%s: %.3f of %llu samples, want %.2f +- %.3f", what, p,
		  (unsigned long long)n, want, tol);
}

void expect_share(u64 k, u64 n, double want, const char *what)
{
	expect_share_within(k, n, want, fmax(4 * binomial_sd(want, n), 0.03), what);
}

struct profile *long_name_profile(char **want)
{
	struct profile *p = profile__new();
	char *mangled = NULL, *dm = NULL;
	size_t ml = 0, dl = 0;
	FILE *m = open_memstream(&mangled, &ml), *d = open_memstream(&dm, &dl);

	cr_assert(p && m && d);
	/* geo::Acc<A, A, ...> with A = X::X and X 30 characters: 17 times A by substitution
	 * (libiberty gives up on mangled names of some 1,000 characters) */
	fputs("_ZN3geo3AccIJN30abcdefghijabcdefghijabcdefghij30abcdefghijabcdefghijabcdefghijE", m);
	fputs("geo::Acc<", d);
	for (int i = 0; i < 17; i++) {
		if (i)
			fputs("S2_", m);
		fprintf(d, "%sabcdefghijabcdefghijabcdefghij::abcdefghijabcdefghijabcdefghij",
			i ? ", " : "");
	}
	fputs("EE3addEv", m);
	fputs(">::add", d);
	cr_assert(!fclose(m) && !fclose(d));
	cr_assert_gt(strlen(dm), 1000);
	profile__add_comm(p, 9, 0, "jit", false);
	cr_assert_eq(profile__add_jitsym(p, 9, 0x10000, 0x100, mangled, 0, 0), 0);
	cr_assert_eq(profile__add_sample(p, &(struct profile_sample){ .pid = 9, .ip = 0x10010,
									.count = 3, .weight = 3 }), 0);
	profile__finish(p);
	free(mangled);
	*want = dm;
	return p;
}

/* the CPU time of a few tasks while something runs: a thread polls their schedstat (run time,
 * ns) about every millisecond, each poll timestamped */
#define CPU_WATCH_TASKS 8
#define CPU_WATCH_POLLS 60000

struct cpu_watch {
	pthread_t thread;
	volatile bool stop;
	pid_t tids[CPU_WATCH_TASKS];
	int n;
	size_t nr;
	u64 t[CPU_WATCH_POLLS], cpu[CPU_WATCH_POLLS][CPU_WATCH_TASKS];
};

static u64 task_cpu_ns(pid_t tid, u64 last)
{
	char path[64];
	unsigned long long v;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", tid);	/* any thread's, listed or not */
	f = fopen(path, "r");
	if (!f)
		return last;	/* gone: it ran no more */
	ok = fscanf(f, "%llu", &v) == 1;
	fclose(f);
	return ok ? v : last;
}

static void *cpu_watch_poll(void *arg)
{
	struct cpu_watch *w = arg;
	struct timespec ms = { 0, 1000000 };

	while (!w->stop && w->nr < CPU_WATCH_POLLS) {
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		w->t[w->nr] = now.tv_sec * 1000000000ull + now.tv_nsec;
		for (int i = 0; i < w->n; i++)
			w->cpu[w->nr][i] = task_cpu_ns(w->tids[i], w->nr ? w->cpu[w->nr - 1][i] : 0);
		w->nr++;
		nanosleep(&ms, NULL);
	}
	return NULL;
}

struct cpu_watch *cpu_watch__start(const pid_t *tids, int n)
{
	struct cpu_watch *w = calloc(1, sizeof(*w));

	cr_assert(w && n > 0 && n <= CPU_WATCH_TASKS);
	w->n = n;
	memcpy(w->tids, tids, n * sizeof(*tids));
	cr_assert_eq(pthread_create(&w->thread, NULL, cpu_watch_poll, w), 0);
	return w;
}

void cpu_watch__stop(struct cpu_watch *w)
{
	w->stop = true;
	pthread_join(w->thread, NULL);
}

/* task i's CPU at time t, interpolated between the polls around it */
static double cpu_watch_at(const struct cpu_watch *w, int i, u64 t)
{
	size_t k = 0;

	if (!w->nr)
		return 0;
	while (k + 1 < w->nr && w->t[k + 1] <= t)
		k++;
	if (t <= w->t[0] || k + 1 >= w->nr)
		return w->cpu[t <= w->t[0] ? 0 : w->nr - 1][i];
	return w->cpu[k][i] + (double)(w->cpu[k + 1][i] - w->cpu[k][i]) * (t - w->t[k]) /
	       (w->t[k + 1] - w->t[k]);
}

double cpu_watch__cpu_ns(const struct cpu_watch *w, int i, u64 from_ns, u64 to_ns)
{
	return cpu_watch_at(w, i, to_ns) - cpu_watch_at(w, i, from_ns);
}

double cpu_watch__window_ns(const struct cpu_watch *w, int i, const struct profile *p)
{
	return cpu_watch__cpu_ns(w, i, p->meta.start_mono_ns, p->meta.start_mono_ns + p->meta.duration_ns);
}

int worker_tids(pid_t pid, pid_t *tids, int max)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	cr_assert(d, "cannot list %s", path);
	while ((e = readdir(d)))
		if (atoi(e->d_name) > 0 && atoi(e->d_name) != pid && n < max)
			tids[n++] = atoi(e->d_name);
	closedir(d);
	for (int i = 1; i < n; i++)	/* insertion sort: a handful */
		for (int j = i; j > 0 && tids[j - 1] > tids[j]; j--) {
			pid_t t = tids[j];

			tids[j] = tids[j - 1];
			tids[j - 1] = t;
		}
	return n;
}

void cpu_watch__free(struct cpu_watch *w)
{
	free(w);
}

struct profile *record_profile_cpu(const pid_t *tids, int n, double *cpu, const char *fmt, ...)
{
	struct profile *p = NULL;
	char args[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	for (int attempt = 0; attempt < 4; attempt++) {
		struct cpu_watch *w = cpu_watch__start(tids, n);
		bool enough = true;

		profile__free(p);
		p = record_profile("%s", args);
		cpu_watch__stop(w);
		for (int i = 0; i < n; i++) {
			cpu[i] = cpu_watch__window_ns(w, i, p);
			enough = enough && cpu[i] >= 30.0 * p->meta.period;
		}
		cpu_watch__free(w);
		if (enough)
			break;
	}
	return p;
}

void expect_samples_for_cpu(u64 got, double cpu_ns, u64 period_ns, const char *what)
{
	cr_expect(got > 0 && got >= samples_floor(cpu_ns, period_ns),
		  "%s: %llu samples for %.1f ms of CPU (period %llu ns)", what,
		  (unsigned long long)got, cpu_ns / 1e6, (unsigned long long)period_ns);
}

double samples_floor(double cpu_ns, u64 period_ns)
{
	double want = cpu_ns / period_ns;

	return want - 4 * sqrt(want) - 3;
}
