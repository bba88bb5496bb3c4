/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* hsbpf stat's output, chosen in one place: text aligned as perf stat's (the metric as a
 * comment, the interval and the share of time a counter ran at the end), or JSON and CSV
 * whose rows have the same fields. Rows are written as they come (-I streams). */
#ifndef HSBPF_STAT_PRINT_H
#define HSBPF_STAT_PRINT_H

#include <stdio.h>
#include <sys/resource.h>
#include "lib/output.h"
#include "stat/stat_report.h"

struct stat_print_info {
	const char *target;	/* what was counted, as the header says it: "'ls -l'" */
	u32 runs;		/* -r */
	u64 interval_ns;	/* -I, 0 without */
	bool cgroups;		/* rows carry cgroups */
	bool no_scale;
};

/* the columns of a JSON row and of CSV, in order */
extern const char *const stat_print_columns[];
extern const size_t stat_print_nr_columns;

struct stat_printer;

/* writes the header at once; NULL when out of memory */
struct stat_printer *stat_printer__new(FILE *f, enum output_format fmt,
				       const struct stat_print_info *info);
void stat_printer__row(struct stat_printer *p, const struct stat_row *row);
/* the end of one -I interval's rows */
void stat_printer__interval_end(struct stat_printer *p);
/* the elapsed time (a row of stat_repeats__elapsed), and the command's user and system
 * time (NULL when there is none, or over repeated runs); then the notes */
void stat_printer__footer(struct stat_printer *p, const struct stat_row *elapsed,
			  const struct rusage *ru);
/* ends the document (JSON) and frees */
void stat_printer__free(struct stat_printer *p);

#endif /* HSBPF_STAT_PRINT_H */
