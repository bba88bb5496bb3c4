// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Targets: pid lists, the gated child for a command (sampling starts at its exec), CPU lists. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "record/target.h"

int target__parse_pids(const char *s, u32 **pids, int *nr)
{
	char *copy = strdup(s ? s : ""), *tok, *save = NULL;
	size_t cap = 0;
	int err = 0;

	*pids = NULL;
	*nr = 0;
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		u64 v;

		if (parse_u64(tok, &v) || v == 0 || v > INT32_MAX) {
			err = -EINVAL;
			error("invalid pid '%s'", tok);
			break;
		}
		if (array__reserve((void **)pids, &cap, *nr + 1, sizeof(**pids))) {
			err = -ENOMEM;
			break;
		}
		(*pids)[(*nr)++] = v;
	}
	if (!err && !*nr) {
		err = -EINVAL;
		error("invalid pid list '%s'", s ? s : "");
	}
	free(copy);
	if (err) {
		free(*pids);
		*pids = NULL;
		*nr = 0;
	}
	return err;
}

int target__check_pids(const u32 *pids, int nr)
{
	for (int i = 0; i < nr; i++) {
		char path[32];

		snprintf(path, sizeof(path), "/proc/%u", pids[i]);
		if (access(path, F_OK))
			return fail(-ESRCH, "no process with pid %u", pids[i]);
	}
	return 0;
}

int command__spawn(char *const argv[], bool kill_with_parent, struct command *cmd)
{
	pid_t parent = getpid();
	int gate[2], status[2];
	char c;

	if (pipe2(gate, O_CLOEXEC))
		return -errno;
	if (pipe2(status, O_CLOEXEC)) {
		close(gate[0]);
		close(gate[1]);
		return -errno;
	}
	cmd->pid = fork();
	if (cmd->pid < 0) {
		int err = -errno;

		close(gate[0]);
		close(gate[1]);
		close(status[0]);
		close(status[1]);
		return err;
	}
	if (cmd->pid == 0) {
		int e;

		close(gate[1]);
		close(status[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		/* hsbpf killed (SIGKILL leaves it no say) takes the command with it; a parent that
		 * died before the prctl is seen by getppid */
		if (kill_with_parent && (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent))
			_exit(127);
		if (read(gate[0], &c, 1) != 1)
			_exit(127);	/* the recorder went away */
		execvp(argv[0], argv);
		e = errno;
		if (write(status[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(gate[0]);
	close(status[1]);
	cmd->gate = gate[1];
	cmd->status = status[0];
	return 0;
}

int command__start(struct command *cmd, const char *name)
{
	char c = 1;
	int e = 0;
	ssize_t n;

	if (write(cmd->gate, &c, 1) != 1) {
		e = errno;
		goto fail;
	}
	close(cmd->gate);
	cmd->gate = -1;
	do
		n = read(cmd->status, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(cmd->status);
	cmd->status = -1;
	if (n == 0)
		return 0;
fail:
	error("cannot run '%s': %s", name, strerror(e ? e : EIO));
	waitpid(cmd->pid, NULL, 0);
	cmd->pid = -1;
	return -(e ? e : EIO);
}

void command__abort(struct command *cmd)
{
	if (cmd->gate >= 0)
		close(cmd->gate);
	if (cmd->status >= 0)
		close(cmd->status);
	cmd->gate = cmd->status = -1;
	if (cmd->pid > 0) {
		kill(cmd->pid, SIGKILL);
		waitpid(cmd->pid, NULL, 0);
		cmd->pid = -1;
	}
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* a CPU number: decimal digits only (strtoull would take " 1", "+1", "0x1", and 010 as 8) */
static int cpu_number(const char *s, size_t len, u64 *v)
{
	*v = 0;
	if (!len || len > 9)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		*v = *v * 10 + (s[i] - '0');
	}
	return 0;
}

/* one "N" or "N-M" of list s (the whole list, for the message) */
static int cpu_range(const char *s, const char *tok, size_t len, u64 *lo, u64 *hi, bool say)
{
	const char *dash = memchr(tok, '-', len);

	if (!len)
		return say ? fail(-EINVAL, "invalid CPU list '%s': an empty entry", s) : -EINVAL;
	if (dash ? cpu_number(tok, dash - tok, lo) || cpu_number(dash + 1, tok + len - dash - 1, hi)
		 : cpu_number(tok, len, lo) || ((*hi = *lo), 0))
		return say ? fail(-EINVAL, "invalid CPU list '%s': '%.*s' is not a CPU or a range "
				  "such as 0-3", s, (int)len, tok) : -EINVAL;
	if (*hi < *lo)
		return say ? fail(-EINVAL, "invalid CPU list '%s': the range '%.*s' goes down", s,
				  (int)len, tok) : -EINVAL;
	if (*hi >= CPUS_MAX)
		return say ? fail(-EINVAL, "invalid CPU list '%s': no kernel numbers a CPU above %d",
				  s, CPUS_MAX - 1) : -EINVAL;
	return 0;
}

static int parse_cpus(const char *s, int **cpus, int *nr, bool say)
{
	size_t cap = 0;
	int err = 0, n = 0;

	*cpus = NULL;
	*nr = 0;
	if (!s || !*s)
		return say ? fail(-EINVAL, "empty CPU list") : -EINVAL;
	for (const char *tok = s; !err; tok += strcspn(tok, ",") + 1) {
		size_t len = strcspn(tok, ",");
		u64 lo, hi;

		err = cpu_range(s, tok, len, &lo, &hi, say);
		for (u64 c = lo; !err && c <= hi; c++) {
			if (array__reserve((void **)cpus, &cap, n + 1, sizeof(**cpus)))
				err = -ENOMEM;
			else
				(*cpus)[n++] = c;
		}
		if (!tok[len])
			break;
	}
	if (err) {
		free(*cpus);
		*cpus = NULL;
		return err;
	}
	qsort(*cpus, n, sizeof(**cpus), cmp_int);
	for (int i = 0; i < n; i++)	/* unique */
		if (!*nr || (*cpus)[*nr - 1] != (*cpus)[i])
			(*cpus)[(*nr)++] = (*cpus)[i];
	return 0;
}

int cpus__parse(const char *s, int **cpus, int *nr)
{
	return parse_cpus(s, cpus, nr, true);
}

/* a sysfs CPU list ("0-1\n") */
static int read_cpus(const char *path, int **cpus, int *nr)
{
	char buf[4096] = "";
	FILE *f = fopen(path, "re");

	*cpus = NULL;
	*nr = 0;
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return parse_cpus(buf, cpus, nr, false);
}

int cpus__online(int **cpus, int *nr)
{
	return read_cpus("/sys/devices/system/cpu/online", cpus, nr);
}

void cpus__format(const int *cpus, int nr, char *buf, size_t size)
{
	size_t off = 0;

	buf[0] = 0;
	for (int i = 0; i < nr && off < size; ) {
		int j = i;

		while (j + 1 < nr && cpus[j + 1] == cpus[j] + 1)
			j++;
		if (j == i)
			off += snprintf(buf + off, size - off, "%s%d", i ? "," : "", cpus[i]);
		else
			off += snprintf(buf + off, size - off, "%s%d-%d", i ? "," : "", cpus[i], cpus[j]);
		i = j + 1;
	}
}

static bool has_cpu(const int *cpus, int nr, int cpu)
{
	return bsearch(&cpu, cpus, nr, sizeof(*cpus), cmp_int);
}

int cpus__check(const int *want, int nr, const int *online, int nr_online, const int *present,
		int nr_present)
{
	char list[256];

	if (!nr_present) {	/* no present list: what is online is all there is */
		present = online;
		nr_present = nr_online;
	}
	for (int i = 0; i < nr; i++) {
		if (has_cpu(online, nr_online, want[i]))
			continue;
		if (has_cpu(present, nr_present, want[i])) {
			cpus__format(online, nr_online, list, sizeof(list));
			return fail(-ENODEV, "CPU %d is offline (the online CPUs are %s)", want[i], list);
		}
		cpus__format(present, nr_present, list, sizeof(list));
		return fail(-ENODEV, "CPU %d does not exist (this machine has CPUs %s)", want[i], list);
	}
	return 0;
}

int cpus__check_machine(const int *want, int nr)
{
	int *online = NULL, *present = NULL, nr_online, nr_present, err;

	err = cpus__online(&online, &nr_online);
	if (!err && read_cpus("/sys/devices/system/cpu/present", &present, &nr_present))
		nr_present = 0;
	if (err)
		err = fail(err, "cannot read the online CPUs: %s", strerror(-err));
	else
		err = cpus__check(want, nr, online, nr_online, present, nr_present);
	free(online);
	free(present);
	return err;
}
