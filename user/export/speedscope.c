// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* speedscope export: report's resolved stacks grouped by process, one sampled profile each,
 * the heaviest first (the one speedscope opens with); with time buckets (record --timeline),
 * one evented profile per thread after them too: its time line as a flame chart. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "hsbpf.h"
#include "lib/json_writer.h"
#include "export/pprof.h"
#include "export/speedscope.h"
#include "report/sample_filter.h"

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

/* --wall: an off-CPU stack's frames are frames of their own, named "FUNC [off-CPU]", after the
 * lost frame: the same code on and off the CPU makes two towers, as in the flame graphs
 * (where they are drawn in blue). In an --off-cpu profile every frame is off-CPU: its title
 * says so */
static bool split_offcpu(const struct callchain *cc)
{
	return !strcmp(cc->p->meta.offcpu, "wall");
}

/* the frame index of function func in stack st */
static u32 frame_id(const struct callchain *cc, const struct callchain_stack *st, u32 func)
{
	return split_offcpu(cc) && (st->flags & HSBPF_KEY_OFFCPU) ? func + cc->nr_funcs + 1 : func;
}

/* the frame's name kept whole (C++ names run long), with suffix: 0 or -ENOMEM */
static int write_frame(const struct callchain_frame *f, const char *suffix, json_writer_t *w)
{
	char buf[NAME_MAX + 16], *name = NULL;
	const char *fn = pprof__frame_name(f, buf, sizeof(buf));

	if (*suffix) {
		name = malloc(strlen(fn) + strlen(suffix) + 1);
		if (!name)
			return -ENOMEM;
		strcpy(name, fn);
		strcat(name, suffix);
	}
	jsonw_start_object(w);
	jsonw_string_field(w, "name", name ? name : fn);
	jsonw_string_field(w, "file", f->kernel ? "[kernel.kallsyms]" : f->dso ? f->dso : "[unknown]");
	jsonw_end_object(w);
	free(name);
	return 0;
}

static int write_frames(const struct callchain *cc, json_writer_t *w)
{
	u32 *first = malloc((cc->nr_funcs + 1) * sizeof(*first));
	int err = 0;

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
	/* frame i is function i, and one more for lost stacks (then --wall's off-CPU frames) */
	for (u32 i = 0; i < cc->nr_funcs; i++)
		write_frame(&cc->frames[first[i]], "", w);
	jsonw_start_object(w);
	jsonw_string_field(w, "name", PPROF_LOST_FRAME);
	jsonw_end_object(w);
	for (u32 i = 0; split_offcpu(cc) && i < cc->nr_funcs && !err; i++)
		err = write_frame(&cc->frames[first[i]], " [off-CPU]", w);
	jsonw_end_array(w);
	jsonw_end_object(w);
	free(first);
	return err;
}

/* ---- the time line: one evented profile per thread, from the time buckets ---- */

struct tl_entry {
	u32 pid, tid, time;
	u32 stack;		/* in cc->stacks */
};

static int cmp_tl(const void *a, const void *b)
{
	const struct tl_entry *x = a, *y = b;
	const struct callchain_stack *s, *t;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	/* within a bucket the order is not known: stacks root first in order, so that the
	 * ones sharing callers are drawn side by side */
	s = &sort_cc->stacks[x->stack];
	t = &sort_cc->stacks[y->stack];
	for (u32 i = 0; i < s->nr && i < t->nr; i++) {
		u32 f = sort_cc->frames[s->first + s->nr - 1 - i].func;
		u32 g = sort_cc->frames[t->first + t->nr - 1 - i].func;

		if (f != g)
			return f < g ? -1 : 1;
	}
	if (s->nr != t->nr)
		return s->nr < t->nr ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* the function at depth d of a stack (root first); cc->nr_funcs for a lost stack's frame */
static u32 func_at(const struct callchain *cc, const struct callchain_stack *st, u32 d)
{
	return st->nr ? frame_id(cc, st, cc->frames[st->first + st->nr - 1 - d].func) : cc->nr_funcs;
}

static void event(json_writer_t *w, const char *type, u32 frame, u64 at)
{
	jsonw_start_object(w);
	jsonw_string_field(w, "type", type);
	jsonw_uint_field(w, "frame", frame);
	jsonw_uint_field(w, "at", at);
	jsonw_end_object(w);
}

/* one thread's entries [e, e + n): each bucket's stacks side by side from the bucket's start,
 * each as long as its weight (CPU time: a thread has at most the bucket's) or, for other
 * units, its share of the bucket; frames shared by neighbours stay open */
static void write_thread(const struct callchain *cc, struct symbolizer *sy, const struct tl_entry *e,
			 size_t n, json_writer_t *w)
{
	const struct profile *p = cc->p;
	const u64 len = p->meta.time_bucket_ns;
	bool ns = !strcmp(p->meta.unit, "ns");
	const struct callchain_stack *open = NULL;
	u32 depth = 0;	/* frames of open that are open */
	const char *comm = symbolizer__comm(sy, e->pid, cc->stacks[e->stack].exec_ns);
	char title[160];
	u64 at = 0, end;

	comm = sample_filter__thread_comm(p, e->pid, e->tid, comm ? comm : "");
	snprintf(title, sizeof(title), "%s (pid %u, tid %u): time line", comm && *comm ? comm :
		 "[unknown]", e->pid, e->tid);
	jsonw_start_object(w);
	jsonw_string_field(w, "type", "evented");
	jsonw_string_field(w, "name", title);
	jsonw_string_field(w, "unit", "nanoseconds");
	jsonw_uint_field(w, "startValue", (u64)e->time * len);
	end = ((u64)e[n - 1].time + 1) * len;
	jsonw_uint_field(w, "endValue", end);
	jsonw_name(w, "events");
	jsonw_start_array(w);
	for (size_t i = 0; i < n;) {
		size_t j;
		u64 sum = 0, start = (u64)e[i].time * len;

		for (j = i; j < n && e[j].time == e[i].time; j++)
			sum += cc->stacks[e[j].stack].weight;
		if (at < start) {	/* a gap: every frame closes */
			while (depth)
				event(w, "C", func_at(cc, open, --depth), at);
			at = start;
		}
		for (; i < j; i++) {
			const struct callchain_stack *st = &cc->stacks[e[i].stack];
			u32 nr = st->nr ? st->nr : 1, keep = 0;
			u64 dur = !sum ? 0 : ns && sum <= len ? st->weight : len * st->weight / sum;

			if (!dur)
				continue;
			while (keep < depth && keep < nr && func_at(cc, open, keep) == func_at(cc, st, keep))
				keep++;
			while (depth > keep)
				event(w, "C", func_at(cc, open, --depth), at);
			for (; depth < nr; depth++)
				event(w, "O", func_at(cc, st, depth), at);
			open = st;
			at += dur;
		}
	}
	while (depth)
		event(w, "C", func_at(cc, open, --depth), at);
	jsonw_end_array(w);
	jsonw_end_object(w);
}

/* the evented profiles of a profile with time buckets, one per thread (per process without
 * thread keys); 0 or -ENOMEM */
static int write_timelines(const struct callchain *cc, struct symbolizer *sy, json_writer_t *w)
{
	const struct profile *p = cc->p;
	struct tl_entry *e;
	size_t n = 0;

	if (!p->meta.time_bucket_ns || !profile__has_key(p, "time") || !p->nr_stack_sample_keys)
		return 0;
	e = calloc(cc->nr_stacks + 1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < cc->nr_stacks; i++) {
		const struct callchain_stack *st = &cc->stacks[i];
		const struct profile_sample_key *k = profile__stack_sample_key(p, st->sample);

		e[n++] = (struct tl_entry){ .pid = st->pid, .tid = k->tid ? k->tid : st->pid,
					    .time = k->time, .stack = i };
	}
	sort_cc = cc;
	qsort(e, n, sizeof(*e), cmp_tl);
	sort_cc = NULL;
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && e[j].pid == e[i].pid && e[j].tid == e[i].tid; j++)
			;
		write_thread(cc, sy, e + i, j - i, w);
	}
	free(e);
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
				jsonw_uint(w, frame_id(cc, st, cc->frames[st->first + k].func));
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
	if (write_timelines(cc, sy, w))
		goto cleanup;
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
