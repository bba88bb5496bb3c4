// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Counting arithmetic: scaling and its interval, repeated runs, derived metrics. */
#include <linux/perf_event.h>
#include <math.h>
#include "stat/stat_math.h"

void stat_acc__add(struct stat_acc *a, const struct stat_reading *d)
{
	double w, x, delta, r;

	a->total.count += d->count;
	a->total.enabled += d->enabled;
	a->total.running += d->running;
	if (!d->running)
		return;
	/* West's weighted update of the mean and the sum of squares */
	w = d->running;
	x = (double)d->count / w;
	a->reads++;
	a->weight += w;
	delta = x - a->rate;
	r = delta * w / a->weight;
	a->rate += r;
	a->m2 += (a->weight - w) * delta * r;
}

/* t(0.975, df) for df 1..30; above, the Cornish-Fisher expansion (under 1e-4 off) */
static const double t95[] = {
	12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281,
	2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860,
	2.0796, 2.0739, 2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
};

double stat__t95(u32 df)
{
	const double z = 1.959964;
	double n = df;

	if (df == 0)
		return INFINITY;
	if (df <= ARRAY_SIZE(t95))
		return t95[df - 1];
	return z + (z * z * z + z) / (4 * n) +
	       (5 * pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * n * n);
}

void stat__estimate(const struct stat_reading *r, const struct stat_acc *pooled, bool scale,
		    struct stat_value *out)
{
	double f, s2, var, half;

	*out = (struct stat_value){ .value = r->count, .running_pct = 100 };
	if (!r->enabled) {		/* never enabled: nothing to scale, a plain zero */
		out->counted = true;
		return;
	}
	out->running_pct = 100.0 * r->running / r->enabled;
	out->counted = r->running > 0;
	if (!out->counted || !scale || r->running >= r->enabled)
		return;
	f = (double)r->running / r->enabled;
	out->scaled = true;
	out->value = r->count / f;
	if (!pooled || pooled->reads < 2)
		return;
	s2 = pooled->m2 / (pooled->reads - 1);
	var = (double)r->enabled * r->enabled * (1 - f) * s2 / r->running;
	half = stat__t95(pooled->reads - 1) * sqrt(var > 0 ? var : 0);
	out->has_ci = true;
	out->lo = out->value - half > 0 ? out->value - half : 0;
	out->hi = out->value + half;
}

void stat_runs__add(struct stat_runs *s, double v)
{
	double delta = v - s->mean;

	s->n++;
	s->mean += delta / s->n;
	s->m2 += delta * (v - s->mean);
}

double stat_runs__stddev(const struct stat_runs *s)
{
	return s->n > 1 && s->m2 > 0 ? sqrt(s->m2 / (s->n - 1)) : 0;
}

double stat_runs__ci95(const struct stat_runs *s)
{
	if (s->n < 2)
		return 0;
	return stat__t95(s->n - 1) * stat_runs__stddev(s) / sqrt(s->n);
}

#define HW(x) PERF_TYPE_HARDWARE, PERF_COUNT_HW_##x
#define SW(x) PERF_TYPE_SOFTWARE, PERF_COUNT_SW_##x

static const struct stat_metric_def metrics[] = {
	{ HW(INSTRUCTIONS), STAT_BASE_EVENT, HW(CPU_CYCLES), 1, "insn per cycle", "" },
	{ HW(BRANCH_MISSES), STAT_BASE_EVENT, HW(BRANCH_INSTRUCTIONS), 100, "of all branches", "%" },
	{ HW(CACHE_MISSES), STAT_BASE_EVENT, HW(CACHE_REFERENCES), 100, "of all cache refs", "%" },
	{ HW(CPU_CYCLES), STAT_BASE_CLOCK, 0, 0, 1, "GHz", "" },
	{ SW(TASK_CLOCK), STAT_BASE_ELAPSED, 0, 0, 1, "CPUs utilized", "" },
	{ SW(CPU_CLOCK), STAT_BASE_ELAPSED, 0, 0, 1, "CPUs utilized", "" },
	{ SW(CONTEXT_SWITCHES), STAT_BASE_CLOCK, 0, 0, 1e9, "per second", "/sec" },
	{ SW(CPU_MIGRATIONS), STAT_BASE_CLOCK, 0, 0, 1e9, "per second", "/sec" },
	{ SW(PAGE_FAULTS), STAT_BASE_CLOCK, 0, 0, 1e9, "per second", "/sec" },
	{ SW(PAGE_FAULTS_MIN), STAT_BASE_CLOCK, 0, 0, 1e9, "per second", "/sec" },
	{ SW(PAGE_FAULTS_MAJ), STAT_BASE_CLOCK, 0, 0, 1e9, "per second", "/sec" },
};

const struct stat_metric_def *stat_metric__find(u32 type, u64 config)
{
	for (size_t i = 0; i < ARRAY_SIZE(metrics); i++)
		if (metrics[i].type == type && metrics[i].config == config)
			return &metrics[i];
	return NULL;
}

/* half the interval's width relative to the value; 0 without an interval */
static double rel_half(const struct stat_value *v)
{
	/* the upper side: the lower one may be cut at zero */
	return v->has_ci && v->value > 0 ? (v->hi - v->value) / v->value : 0;
}

void stat_metric__ratio(const struct stat_metric_def *def, const struct stat_value *num,
			const struct stat_value *den, struct stat_metric *out)
{
	double rn, rd, rel;

	*out = (struct stat_metric){ 0 };
	if (!def || !num->counted || !den->counted || den->value <= 0)
		return;
	out->def = def;
	out->value = num->value / den->value * def->mult;
	if (!num->has_ci && !den->has_ci)
		return;
	rn = rel_half(num);
	rd = rel_half(den);
	rel = sqrt(rn * rn + rd * rd);
	out->has_ci = true;
	out->lo = out->value * (1 - rel > 0 ? 1 - rel : 0);
	out->hi = out->value * (1 + rel);
}
