// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* speedscope export: report's resolved stacks grouped by process, one sampled profile each,
 * the heaviest first (the one speedscope opens with). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "json_writer.h"
#include "pprof.h"
#include "speedscope.h"

struct proc {
	u32 pid;
	size_t first, nr;	/* in the sorted stack order */
	u64 weight;
};

static const struct callchain *sort_cc;

static int cmp_stack_pid(const void *a, const void *b)
{
	const struct callchain_stack *x = &sort_cc->stacks[*(const u32 *)a];
	const struct callchain_stack *y = &sort_cc->stacks[*(const u32 *)b];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return *(const u32 *)a < *(const u32 *)b ? -1 : 1;
}

static int cmp_proc(const void *a, const void *b)
{
	const struct proc *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int write_frames(const struct callchain *cc, json_writer_t *w)
{
	u32 *first = malloc((cc->nr_funcs + 1) * sizeof(*first));
	char buf[NAME_MAX + 16];

	if (!first)
		return -ENOMEM;
	memset(first, 0xff, (cc->nr_funcs + 1) * sizeof(*first));
	for (size_t i = 0; i < cc->nr_frames; i++)
		if (first[cc->frames[i].func] == UINT32_MAX)
			first[cc->frames[i].func] = i;
	jsonw_name(w, "shared");
	jsonw_start_object(w);
	jsonw_name(w, "frames");
	jsonw_start_array(w);
	/* frame i is function i, and one more for lost stacks */
	for (u32 i = 0; i < cc->nr_funcs; i++) {
		const struct callchain_frame *f = &cc->frames[first[i]];

		jsonw_start_object(w);
		jsonw_string_field(w, "name", pprof__frame_name(f, buf, sizeof(buf)));
		jsonw_string_field(w, "file", f->kernel ? "[kernel.kallsyms]" : f->dso ? f->dso : "[unknown]");
		jsonw_end_object(w);
	}
	jsonw_start_object(w);
	jsonw_string_field(w, "name", PPROF_LOST_FRAME);
	jsonw_end_object(w);
	jsonw_end_array(w);
	jsonw_end_object(w);
	free(first);
	return 0;
}

int speedscope__write(const struct callchain *cc, struct symbolizer *sy, const char *name, FILE *out)
{
	const struct profile *p = cc->p;
	bool ns = !strcmp(p->meta.unit, "ns");
	u32 *order = calloc(cc->nr_stacks + 1, sizeof(*order));
	struct proc *procs = calloc(cc->nr_stacks + 1, sizeof(*procs));
	size_t nr_procs = 0;

	json_writer_t *w = NULL;
	int err = -ENOMEM;

	if (!order || !procs)
		goto cleanup;
	for (size_t i = 0; i < cc->nr_stacks; i++)
		order[i] = i;
	sort_cc = cc;
	qsort(order, cc->nr_stacks, sizeof(*order), cmp_stack_pid);
	sort_cc = NULL;
	for (size_t i = 0; i < cc->nr_stacks; i++) {
		const struct callchain_stack *st = &cc->stacks[order[i]];

		if (!nr_procs || procs[nr_procs - 1].pid != st->pid)
			procs[nr_procs++] = (struct proc){ .pid = st->pid, .first = i };
		procs[nr_procs - 1].nr++;
		procs[nr_procs - 1].weight += st->weight;
	}
	qsort(procs, nr_procs, sizeof(*procs), cmp_proc);

	w = jsonw_new(out);
	if (!w)
		goto cleanup;
	jsonw_start_object(w);
	jsonw_string_field(w, "$schema", "https://www.speedscope.app/file-format-schema.json");
	jsonw_string_field(w, "name", name);
	jsonw_string_field(w, "exporter", "hsbpf " HSBPF_VERSION);
	jsonw_uint_field(w, "activeProfileIndex", 0);
	if (write_frames(cc, w))
		goto cleanup;
	jsonw_name(w, "profiles");
	jsonw_start_array(w);
	for (size_t i = 0; i < nr_procs; i++) {
		const struct proc *pr = &procs[i];
		const struct callchain_stack *st0 = &cc->stacks[order[pr->first]];
		const char *comm = symbolizer__comm(sy, st0->pid, st0->exec_ns);
		char title[128];

		/* off-CPU time is weighed in ns as CPU time is: the title says which it is */
		snprintf(title, sizeof(title), "%s (pid %u)%s", comm && *comm ? comm : "[unknown]", pr->pid,
			 !strcmp(p->meta.offcpu, "off") ? ", off-CPU time" :
			 !strcmp(p->meta.offcpu, "wall") ? ", on- and off-CPU time" : "");
		jsonw_start_object(w);
		jsonw_string_field(w, "type", "sampled");
		jsonw_string_field(w, "name", title);
		/* a clock's weights are CPU time; other events' are their counts */
		jsonw_string_field(w, "unit", ns ? "nanoseconds" : "none");
		jsonw_uint_field(w, "startValue", 0);
		jsonw_uint_field(w, "endValue", pr->weight);
		jsonw_name(w, "samples");
		jsonw_start_array(w);
		for (size_t j = 0; j < pr->nr; j++) {
			const struct callchain_stack *st = &cc->stacks[order[pr->first + j]];

			jsonw_start_array(w);
			/* root first */
			for (u32 k = st->nr; k-- > 0;)
				jsonw_uint(w, cc->frames[st->first + k].func);
			if (!st->nr)
				jsonw_uint(w, cc->nr_funcs);
			jsonw_end_array(w);
		}
		jsonw_end_array(w);
		jsonw_name(w, "weights");
		jsonw_start_array(w);
		for (size_t j = 0; j < pr->nr; j++) {
			const struct callchain_stack *st = &cc->stacks[order[pr->first + j]];

			jsonw_uint(w, st->weight);
		}
		jsonw_end_array(w);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
	jsonw_end_object(w);
	err = 0;
cleanup:
	if (w)
		jsonw_destroy(&w);	/* a half-written file stays invalid JSON */
	free(order);
	free(procs);
	if (err)
		error("cannot write speedscope: %s", strerror(-err));
	return err;
}
