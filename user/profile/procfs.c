// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What /proc tells about processes: the mappings and comms of those older than the recording
 * (perf's synthesized events), which ones are alive, their namespace PIDs. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "profile/procfs.h"

/* the names of pid's other threads that differ from the process's (later renames come
 * from the sideband) */
static int synthesize_threads(struct profile *p, u32 pid, const char *pcomm, u64 t)
{
	char path[96], comm[64];
	struct dirent *de;
	DIR *d;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return 0;	/* gone meanwhile: its comm says enough */
	while (!err && (de = readdir(d))) {
		u64 tid;
		FILE *f;

		if (parse_u64(de->d_name, &tid) || !tid || tid == pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, (u32)tid);
		f = fopen(path, "re");
		if (!f)
			continue;
		comm[0] = 0;
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
		if (strcmp(comm, pcomm))
			err = profile__add_thread_comm(p, pid, (u32)tid, t, comm);
	}
	closedir(d);
	return err;
}

int procfs__synthesize(struct profile *p, u32 pid)
{
	return procfs__synthesize_at(p, pid, 0);
}

int procfs__synthesize_at(struct profile *p, u32 pid, u64 t)
{
	char path[64], line[4096 + 128], comm[64] = "";
	int err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fgets(comm, sizeof(comm), f))
		comm[strcspn(comm, "\n")] = 0;
	fclose(f);
	err = profile__add_comm(p, pid, t, comm, false);
	if (!err)
		err = synthesize_threads(p, pid, comm, t);
	if (err)
		return err;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff;
		char perms[8], file[4096];
		int n;

		file[0] = 0;
		n = sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &start, &end, perms, &pgoff, file);
		if (n < 4 || perms[2] != 'x' || !file[0])
			continue;
		err = profile__add_mapping(p, pid, t, start, end - start, pgoff, file, NULL, 0);
	}
	fclose(f);
	return err;
}

int procfs__pids(u32 **pids, size_t *nr)
{
	struct dirent *de;
	DIR *d = opendir("/proc");
	size_t cap = 0;
	int err = 0;

	*pids = NULL;
	*nr = 0;
	if (!d) {
		err = -errno;
		return fail(err, "cannot open /proc: %s", strerror(-err));
	}
	while ((de = readdir(d))) {
		u64 pid;

		if (parse_u64(de->d_name, &pid) || !pid)
			continue;
		if (array__reserve((void **)pids, &cap, *nr + 1, sizeof(**pids))) {
			err = fail(-ENOMEM, "cannot list processes: %s", strerror(ENOMEM));
			break;
		}
		(*pids)[(*nr)++] = pid;
	}
	closedir(d);
	return err;
}

int procfs__synthesize_all(struct profile *p)
{
	return procfs__synthesize_all_at(p, 0, NULL);
}

int procfs__synthesize_all_at(struct profile *p, u64 t, u32 *gone)
{
	size_t nr;
	u32 *pids;
	int err = procfs__pids(&pids, &nr);

	for (size_t i = 0; i < nr && !err; i++) {
		err = procfs__synthesize_at(p, pids[i], t);
		if ((err == -ENOENT || err == -ESRCH) && gone)
			(*gone)++;
		if (err == -ENOENT || err == -ESRCH || err == -EACCES)
			err = 0;	/* gone meanwhile, or a kernel thread */
	}
	free(pids);
	return err;
}

int procfs__children(u32 pid, u32 **kids, size_t *nr, size_t *cap)
{
	char path[96];
	struct dirent *de;
	int err = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		unsigned long long kid;
		u64 tid;
		FILE *f;

		if (parse_u64(de->d_name, &tid) || !tid)
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%u/children", pid, (u32)tid);
		f = fopen(path, "re");
		if (!f)
			continue;	/* a thread that exited meanwhile */
		while (!err && fscanf(f, "%llu", &kid) == 1) {
			if (array__reserve((void **)kids, cap, *nr + 1, sizeof(**kids)))
				err = -ENOMEM;
			else
				(*kids)[(*nr)++] = kid;
		}
		fclose(f);
	}
	closedir(d);
	return err;
}

bool procfs__alive(u32 pid)
{
	char path[64], buf[512], *close_paren;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOENT && errno != ESRCH;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	close_paren = strrchr(buf, ')');	/* the command may hold spaces and parentheses */
	return !close_paren || (close_paren[1] && close_paren[2] != 'Z' && close_paren[2] != 'X');
}

/* the inode of our PID namespace, 0 if unknown */
static ino_t own_pid_ns(void)
{
	static ino_t ino;
	static bool known;
	struct stat st;

	if (!known) {
		ino = stat("/proc/self/ns/pid", &st) ? 0 : st.st_ino;
		known = true;
	}
	return ino;
}

u32 procfs__nspid(u32 pid)
{
	char path[64], line[256];
	u32 inner = 0;
	struct stat st;
	FILE *f;

	/* most processes live in our namespace: its inode says so without the status file,
	 * which the kernel renders whole (signal masks, memory, capabilities) for each read */
	snprintf(path, sizeof(path), "/proc/%u/ns/pid", pid);
	if (own_pid_ns()) {
		if (!stat(path, &st)) {
			if (st.st_ino == own_pid_ns())
				return 0;
		} else if (errno == ENOENT) {
			return 0;	/* gone already */
		}
	}
	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p, *last = NULL, *save = NULL;

		if (strncmp(line, "NSpid:", 6))
			continue;
		for (p = strtok_r(line + 6, " \t\n", &save); p; p = strtok_r(NULL, " \t\n", &save))
			last = p;
		if (last)
			inner = strtoul(last, NULL, 10);
		break;
	}
	fclose(f);
	return inner == pid ? 0 : inner;
}

/* pid's inner pid into p's table when it lives in another PID namespace */
static void add_nspid(struct profile *p, u32 pid)
{
	u32 ns = procfs__nspid(pid);

	if (ns)
		profile__add_nspid(p, pid, ns);
}

static int cmp_pid(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

void procfs__fill_nspids(struct profile *p, size_t from_comm, size_t from_fork)
{
	size_t n = 0, nr;
	u32 *pids;

	from_comm = from_comm < p->nr_comms ? from_comm : p->nr_comms;
	from_fork = from_fork < p->nr_forks ? from_fork : p->nr_forks;
	nr = (p->nr_comms - from_comm) + (p->nr_forks - from_fork);
	if (!nr)
		return;
	/* each process once: a fork, its exec and its renames are records of one pid (the
	 * churn of a busy machine: a stat of /proc per record was most of the agent's time) */
	pids = malloc(nr * sizeof(*pids));
	if (!pids) {	/* no room to sort: each record's process looked at, as they come */
		for (size_t i = from_comm; i < p->nr_comms; i++)
			add_nspid(p, p->comms[i].pid);
		for (size_t i = from_fork; i < p->nr_forks; i++)
			add_nspid(p, p->forks[i].pid);
		return;
	}
	for (size_t i = from_comm; i < p->nr_comms; i++)
		pids[n++] = p->comms[i].pid;
	for (size_t i = from_fork; i < p->nr_forks; i++)
		pids[n++] = p->forks[i].pid;
	qsort(pids, n, sizeof(*pids), cmp_pid);
	for (size_t i = 0; i < n; i++)
		if (!i || pids[i] != pids[i - 1])
			add_nspid(p, pids[i]);
	free(pids);
}
