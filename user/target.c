// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Targets: pid lists, the gated child for a command (sampling starts at its exec), CPU lists. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "target.h"

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

int command__spawn(char *const argv[], struct command *cmd)
{
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

int cpus__parse(const char *s, int **cpus, int *nr)
{
	char *copy = strdup(s ? s : ""), *tok, *save = NULL;
	size_t cap = 0;
	int err = 0, n = 0;

	*cpus = NULL;
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",\n", &save); tok && !err; tok = strtok_r(NULL, ",\n", &save)) {
		char *dash = strchr(tok, '-');
		u64 lo, hi;

		if (dash)
			*dash = 0;
		if (parse_u64(tok, &lo) || (dash ? parse_u64(dash + 1, &hi) : (hi = lo, 0)) ||
		    hi < lo || hi >= 4096) {
			err = -EINVAL;
			break;
		}
		for (u64 c = lo; c <= hi; c++) {
			if (array__reserve((void **)cpus, &cap, n + 1, sizeof(**cpus))) {
				err = -ENOMEM;
				break;
			}
			(*cpus)[n++] = c;
		}
	}
	free(copy);
	if (!err && !n)
		err = -EINVAL;
	if (err) {
		free(*cpus);
		*cpus = NULL;
		return err;
	}
	qsort(*cpus, n, sizeof(**cpus), cmp_int);
	*nr = 0;
	for (int i = 0; i < n; i++)	/* unique */
		if (!*nr || (*cpus)[*nr - 1] != (*cpus)[i])
			(*cpus)[(*nr)++] = (*cpus)[i];
	return 0;
}

int cpus__online(int **cpus, int *nr)
{
	char buf[4096] = "";
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int err;

	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	err = cpus__parse(buf, cpus, nr);
	return err;
}
