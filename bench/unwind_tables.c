// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What unwind tables cost: the table of each object given, or with --all of every executable
 * object some process maps now (each once), built as record builds it: rows, kernel bytes,
 * build time, peak memory. Prints a markdown table and the totals.
 *   unwind_tables [--all] [PATH...] */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "unwind/unwind_table.h"

static char **paths;
static size_t nr_paths, cap_paths;

static void add_path(const char *p)
{
	for (size_t i = 0; i < nr_paths; i++)
		if (!strcmp(paths[i], p))
			return;
	if (array__reserve((void **)&paths, &cap_paths, nr_paths + 1, sizeof(*paths)))
		exit(1);
	paths[nr_paths++] = strdup(p);
}

/* every executable file mapping of every process */
static void all_mapped(void)
{
	DIR *d = opendir("/proc");

	for (struct dirent *e; d && (e = readdir(d));) {
		char path[300], line[4200];
		FILE *f;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/maps", e->d_name);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f)) {
			char perm[8], file[4096] = "";

			if (sscanf(line, "%*s %7s %*s %*s %*s %4095s", perm, file) == 2 && perm[2] == 'x' &&
			    file[0] == '/' && !strstr(line, "(deleted)"))
				add_path(file);
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	u64 rows = 0, bytes = 0, ns = 0, fdes = 0, unsupported = 0;
	size_t built = 0, none = 0, failed = 0;
	struct rusage ru;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--all"))
			all_mapped();
		else
			add_path(argv[i]);
	}
	qsort(paths, nr_paths, sizeof(*paths), cmp_str);
	printf("| object | FDEs | rows | unsupported rows | kernel bytes | build ms |\n|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < nr_paths; i++) {
		struct unwind_table *t;
		u64 t0 = now_ns(CLOCK_MONOTONIC), dt, b;
		int err = unwind_table__build_path(paths[i], &t);

		dt = now_ns(CLOCK_MONOTONIC) - t0;
		ns += dt;
		if (err) {
			err == -ENODATA ? none++ : failed++;
			printf("| %s | - | - | - | - | %s |\n", paths[i], err == -ENODATA ? "no CFI" : strerror(-err));
			continue;
		}
		b = t->nr_rows * sizeof(*t->rows) + t->nr_pages * (sizeof(*t->pages) + sizeof(*t->subs)) +
		    sizeof(struct unwind_obj);
		printf("| %s | %u | %zu | %u | %llu | %.1f |\n", paths[i], t->st.fdes, t->nr_rows,
		       t->st.rows_unsupported, (unsigned long long)b, dt / 1e6);
		built++;
		rows += t->nr_rows;
		bytes += b;
		fdes += t->st.fdes;
		unsupported += t->st.rows_unsupported;
		unwind_table__free(t);
	}
	getrusage(RUSAGE_SELF, &ru);
	printf("\n%zu objects with tables, %zu without call-frame information, %zu unreadable: %llu FDEs, "
	       "%llu rows (%llu unsupported), %.1f MB in the kernel, built in %.2f s; peak RSS %.1f MB\n",
	       built, none, failed, (unsigned long long)fdes, (unsigned long long)rows,
	       (unsigned long long)unsupported, bytes / 1048576.0, ns / 1e9, ru.ru_maxrss / 1024.0);
	return 0;
}
