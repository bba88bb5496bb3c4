// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* perf script text: "PID PERF_RECORD_MMAP2 PID/TID: [0xSTART(0xLEN) @ 0xPGOFF ...]: PROT PATH"
 * and "PID IP" sample lines; aggregated into (pid, ip) slots. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hsbpf.h"
#include "import/perf_script.h"

struct slot {
	u32 pid;
	u64 ip;
	u64 count;
};

static int cmp_slot(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->ip < y->ip ? -1 : x->ip > y->ip;
}

int perf_script__parse(const char *path, u64 period, struct profile *p)
{
	struct slot *s = NULL;
	size_t nr = 0, cap = 0, cap_line = 0;
	char *line = NULL;
	u64 order = 1;
	int err = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return fail(-errno, "cannot open '%s': %s", path, strerror(errno));
	while (!err && getline(&line, &cap_line, f) > 0) {
		unsigned long long start, len, pgoff, ip;
		unsigned pid, mpid;
		char *m = strstr(line, "PERF_RECORD_MMAP2 "), *path_at;
		char prot[8];

		if (m) {
			char *tail = strstr(m, "]: ");
			int pos = 0;

			if (!tail || sscanf(m, "PERF_RECORD_MMAP2 %u/%*u: [0x%llx(0x%llx) @ %lli",
					    &mpid, &start, &len, &pgoff) != 4 ||
			    sscanf(tail + 3, "%7s %n", prot, &pos) != 1 || !pos || prot[2] != 'x')
				continue;
			path_at = tail + 3 + pos;
			path_at[strcspn(path_at, "\n")] = 0;
			err = profile__add_mapping(p, mpid, order++, start, len, pgoff, path_at, NULL, 0);
			continue;
		}
		if (strstr(line, "PERF_RECORD_"))
			continue;
		if (sscanf(line, "%u %llx", &pid, &ip) != 2)
			continue;
		if (array__reserve((void **)&s, &cap, nr + 1, sizeof(*s))) {
			err = -ENOMEM;
			break;
		}
		s[nr++] = (struct slot){ pid, ip, 1 };
	}
	free(line);
	fclose(f);
	if (nr > 1)
		qsort(s, nr, sizeof(*s), cmp_slot);
	for (size_t i = 0; !err && i < nr;) {
		struct profile_sample ps = { .pid = s[i].pid, .ip = s[i].ip };
		size_t j = i;

		while (j < nr && !cmp_slot(&s[i], &s[j]))
			j++;
		ps.count = j - i;
		ps.weight = ps.count * period;
		if ((s64)ps.ip < 0)
			ps.flags = HSBPF_KEY_KERNEL;
		err = profile__add_sample(p, &ps);
		i = j;
	}
	free(s);
	profile__finish(p);
	return err;
}
