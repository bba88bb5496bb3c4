// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Rows of hsbpf stat: values and their intervals, the metric each event has when its base
 * was counted too, the order of the sets, and the statistics of repeated runs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "stat/stat_report.h"

/* the value a metric divides by: an event's row, or a clock's, or the elapsed time */
static bool metric_base(const struct stat_events *evs, const struct stat_metric_def *def,
			const struct stat_event *ev, const struct stat_row *rows, u64 elapsed_ns,
			struct stat_value *out)
{
	static const struct event_spec plain;
	int i = -1;

	switch (def->base) {
	case STAT_BASE_EVENT:
		i = stat_events__find(evs, def->base_type, def->base_config, &ev->spec);
		break;
	case STAT_BASE_CLOCK:
		i = stat_events__find(evs, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, &plain);
		if (i < 0)
			i = stat_events__find(evs, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, &plain);
		break;
	case STAT_BASE_ELAPSED:
		*out = (struct stat_value){ .counted = true, .value = elapsed_ns, .running_pct = 100 };
		return elapsed_ns > 0;
	}
	if (i < 0 || rows[i].status != STAT_ROW_COUNTED)
		return false;
	*out = rows[i].v;
	return true;
}

void stat_report__rows(const struct stat_events *evs, const enum stat_counter_status *status,
		       const struct stat_reading *r, const struct stat_acc *pooled, u64 elapsed_ns,
		       bool no_scale, struct stat_row *rows)
{
	for (int e = 0; e < evs->n; e++) {
		struct stat_row *row = &rows[e];

		*row = (struct stat_row){ .event = &evs->v[e], .time_s = -1, .runs = 1 };
		if (status[e] != STAT_COUNTER_OK) {
			row->status = STAT_ROW_NOT_SUPPORTED;
			continue;
		}
		row->raw = r[e];
		stat__estimate(&r[e], pooled ? &pooled[e] : NULL, !no_scale, &row->v);
		row->status = row->v.counted ? STAT_ROW_COUNTED : STAT_ROW_NOT_COUNTED;
	}
	/* the metrics, once every value is known */
	for (int e = 0; e < evs->n; e++) {
		const struct stat_metric_def *def;
		struct stat_value base;

		if (rows[e].status != STAT_ROW_COUNTED)
			continue;
		def = stat_metric__find(evs->v[e].spec.type, evs->v[e].spec.config);
		if (def && metric_base(evs, def, &evs->v[e], rows, elapsed_ns, &base))
			stat_metric__ratio(def, &rows[e].v, &base, &rows[e].metric);
	}
}

static int kind_rank(enum stat_set_kind k)
{
	return k == STAT_SET_CGROUP ? 0 : k == STAT_SET_IDLE ? 1 : k == STAT_SET_UNATTRIBUTED ? 2 :
	       k == STAT_SET_TARGET ? 3 : 4;
}

struct set_ref {
	enum stat_set_kind kind;
	const char *name;
	u64 id;
	size_t index;
	bool by_name;
};

static int cmp_set(const void *a, const void *b)
{
	const struct set_ref *x = a, *y = b;
	int c;

	if (kind_rank(x->kind) != kind_rank(y->kind))
		return kind_rank(x->kind) - kind_rank(y->kind);
	if (x->by_name) {
		/* unnamed (a cgroup gone before it was seen) after the named, by id */
		if (!x->name != !y->name)
			return x->name ? -1 : 1;
		if (x->name && (c = strcmp(x->name, y->name)))
			return c;
		if (x->id != y->id)
			return x->id < y->id ? -1 : 1;
	}
	return x->index < y->index ? -1 : x->index > y->index;
}

static void order_refs(struct set_ref *refs, size_t n, size_t *order)
{
	qsort(refs, n, sizeof(*refs), cmp_set);
	for (size_t i = 0; i < n; i++)
		order[i] = refs[i].index;
}

void stat_report__order(const struct stat_run *run, bool by_name, size_t *order)
{
	struct set_ref *refs = calloc(run->nr_sets ? run->nr_sets : 1, sizeof(*refs));

	for (size_t i = 0; i < run->nr_sets; i++) {
		if (refs)
			refs[i] = (struct set_ref){ run->sets[i].kind, run->sets[i].name, run->sets[i].id,
						    i, by_name };
		order[i] = i;
	}
	if (refs)
		order_refs(refs, run->nr_sets, order);
	free(refs);
}

/* -------- repeated runs -------- */

struct rep_event {
	struct stat_runs value, metric, count, enabled, running, pct;
	const struct stat_metric_def *def;
	bool scaled;
	u32 counted;		/* runs it was counted in */
};

struct rep_set {
	enum stat_set_kind kind;
	u64 id;
	char *name;
	u32 seen;		/* runs it was in */
	struct stat_row *first;	/* its rows in the first of them */
	struct rep_event *ev;
};

struct stat_repeats {
	const struct stat_events *evs;
	bool no_scale;
	u32 runs;
	enum stat_counter_status status[STAT_MAX_EVENTS];
	struct stat_runs elapsed;
	struct rep_set *sets;
	size_t nr_sets;
};

struct stat_repeats *stat_repeats__new(const struct stat_events *evs, bool no_scale)
{
	struct stat_repeats *rp = calloc(1, sizeof(*rp));

	if (!rp)
		return NULL;
	rp->evs = evs;
	rp->no_scale = no_scale;
	return rp;
}

static struct rep_set *rep_set(struct stat_repeats *rp, const struct stat_set *s)
{
	struct rep_set *sets, *r;

	for (size_t i = 0; i < rp->nr_sets; i++)
		if (rp->sets[i].kind == s->kind && rp->sets[i].id == s->id)
			return &rp->sets[i];
	sets = realloc(rp->sets, (rp->nr_sets + 1) * sizeof(*sets));
	if (!sets)
		return NULL;
	rp->sets = sets;
	r = &sets[rp->nr_sets];
	memset(r, 0, sizeof(*r));
	r->kind = s->kind;
	r->id = s->id;
	r->ev = calloc(rp->evs->n ? rp->evs->n : 1, sizeof(*r->ev));
	r->first = calloc(rp->evs->n ? rp->evs->n : 1, sizeof(*r->first));
	if (!r->ev || !r->first || (s->name && !(r->name = strdup(s->name)))) {
		free(r->ev);
		free(r->first);
		return NULL;
	}
	rp->nr_sets++;
	return r;
}

int stat_repeats__add(struct stat_repeats *rp, const struct stat_run *run)
{
	struct stat_row *rows = calloc(rp->evs->n ? rp->evs->n : 1, sizeof(*rows));

	if (!rows)
		return -ENOMEM;
	memcpy(rp->status, run->status, sizeof(rp->status));
	stat_runs__add(&rp->elapsed, run->elapsed_ns / 1e9);
	for (size_t i = 0; i < run->nr_sets; i++) {
		const struct stat_set *s = &run->sets[i];
		struct stat_reading totals[STAT_MAX_EVENTS];
		struct rep_set *r = rep_set(rp, s);

		if (!r) {
			free(rows);
			return -ENOMEM;
		}
		if (!r->name && s->name)	/* a name found in a later run */
			r->name = strdup(s->name);
		for (int e = 0; e < rp->evs->n; e++)
			totals[e] = s->acc[e].total;
		stat_report__rows(rp->evs, run->status, totals, s->acc, run->elapsed_ns, rp->no_scale,
				  rows);
		if (!r->seen)
			memcpy(r->first, rows, rp->evs->n * sizeof(*rows));
		r->seen++;
		for (int e = 0; e < rp->evs->n; e++) {
			struct rep_event *re = &r->ev[e];

			if (rows[e].status != STAT_ROW_COUNTED)
				continue;
			re->counted++;
			re->scaled |= rows[e].v.scaled;
			stat_runs__add(&re->value, rows[e].v.value);
			stat_runs__add(&re->count, rows[e].raw.count);
			stat_runs__add(&re->enabled, rows[e].raw.enabled);
			stat_runs__add(&re->running, rows[e].raw.running);
			stat_runs__add(&re->pct, rows[e].v.running_pct);
			if (rows[e].metric.def) {
				re->def = rows[e].metric.def;
				stat_runs__add(&re->metric, rows[e].metric.value);
			}
		}
	}
	rp->runs++;
	free(rows);
	return 0;
}

u32 stat_repeats__runs(const struct stat_repeats *rp)
{
	return rp->runs;
}

size_t stat_repeats__nr_sets(const struct stat_repeats *rp)
{
	return rp->nr_sets;
}

/* s with zeros for the runs it was not in, up to n runs */
static struct stat_runs padded(struct stat_runs s, u32 n)
{
	while (s.n < n)
		stat_runs__add(&s, 0);
	return s;
}

static u64 mean_u64(const struct stat_runs *s)
{
	return s->mean > 0 ? (u64)llround(s->mean) : 0;
}

void stat_repeats__rows(const struct stat_repeats *rp, size_t i, struct stat_row *rows)
{
	const struct rep_set *r = &rp->sets[i];

	for (int e = 0; e < rp->evs->n; e++) {
		const struct rep_event *re = &r->ev[e];
		struct stat_row *row = &rows[e];
		struct stat_runs value, count;
		double half;

		if (rp->runs == 1) {
			*row = r->first[e];
		} else {
			*row = (struct stat_row){ .event = &rp->evs->v[e], .time_s = -1, .runs = rp->runs };
			row->runs = re->counted + (rp->runs - r->seen);
			if (rp->status[e] != STAT_COUNTER_OK) {
				row->status = STAT_ROW_NOT_SUPPORTED;
			} else if (!re->counted) {
				row->status = STAT_ROW_NOT_COUNTED;
			} else {
				/* a run without this set counted nothing in it: a zero; one where the
				 * event never ran says nothing, and is left out */
				u32 n = re->counted + (rp->runs - r->seen);

				value = padded(re->value, n);
				count = padded(re->count, n);
				half = stat_runs__ci95(&value);
				row->v = (struct stat_value){
					.counted = true, .scaled = re->scaled, .value = value.mean,
					.running_pct = re->pct.mean, .has_ci = true,
					.lo = value.mean - half > 0 ? value.mean - half : 0,
					.hi = value.mean + half,
				};
				row->stddev = stat_runs__stddev(&value);
				row->raw.count = mean_u64(&count);
				row->raw.enabled = mean_u64(&re->enabled);
				row->raw.running = mean_u64(&re->running);
				if (re->def && re->metric.n) {
					half = stat_runs__ci95(&re->metric);
					row->metric = (struct stat_metric){
						.def = re->def, .value = re->metric.mean,
						.has_ci = re->metric.n > 1,
						.lo = re->metric.mean - half > 0 ? re->metric.mean - half : 0,
						.hi = re->metric.mean + half,
					};
				}
			}
		}
		row->kind = r->kind;
		row->cgroup = r->name;
		row->cgroup_id = r->id;
	}
}

void stat_repeats__elapsed(const struct stat_repeats *rp, struct stat_row *row)
{
	double half = stat_runs__ci95(&rp->elapsed);

	*row = (struct stat_row){
		.time_s = -1, .runs = rp->runs, .stddev = stat_runs__stddev(&rp->elapsed),
		.v = { .counted = true, .value = rp->elapsed.mean, .running_pct = 100,
		       .has_ci = rp->runs > 1, .lo = rp->elapsed.mean - half, .hi = rp->elapsed.mean + half },
	};
}

void stat_repeats__order(const struct stat_repeats *rp, bool by_name, size_t *order)
{
	struct set_ref *refs = calloc(rp->nr_sets ? rp->nr_sets : 1, sizeof(*refs));

	for (size_t i = 0; i < rp->nr_sets; i++) {
		if (refs)
			refs[i] = (struct set_ref){ rp->sets[i].kind, rp->sets[i].name, rp->sets[i].id, i,
						    by_name };
		order[i] = i;
	}
	if (refs)
		order_refs(refs, rp->nr_sets, order);
	free(refs);
}

void stat_repeats__free(struct stat_repeats *rp)
{
	if (!rp)
		return;
	for (size_t i = 0; i < rp->nr_sets; i++) {
		free(rp->sets[i].name);
		free(rp->sets[i].ev);
		free(rp->sets[i].first);
	}
	free(rp->sets);
	free(rp);
}
