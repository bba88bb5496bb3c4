// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf stat output: perf-like text, JSON and CSV from one list of fields per row. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "lib/json_writer.h"
#include "stat/stat_print.h"

struct stat_printer {
	FILE *f;
	enum output_format fmt;
	struct stat_print_info info;
	json_writer_t *jw;
	bool any_ci, any_scaled, any_not_counted, any_idle, any_unattributed;
};

/* -------- fields: one list for JSON and CSV -------- */

const char *const stat_print_columns[] = {
	"time", "set", "cgroup", "event", "status", "value", "unit", "count", "enabled_ns",
	"running_ns", "running_pct", "scaled", "runs", "stddev", "ci95_low", "ci95_high",
	"metric", "metric_value", "metric_unit", "metric_ci95_low", "metric_ci95_high",
};
const size_t stat_print_nr_columns = ARRAY_SIZE(stat_print_columns);

struct cell {
	enum { C_NULL, C_STR, C_U64, C_NUM, C_BOOL } t;
	const char *s;
	u64 u;
	double d;
};

#define NR_COLUMNS ARRAY_SIZE(stat_print_columns)

static struct cell str(const char *s) { return s ? (struct cell){ C_STR, .s = s } : (struct cell){ C_NULL }; }
static struct cell u64c(u64 u) { return (struct cell){ C_U64, .u = u }; }
static struct cell num(double d) { return (struct cell){ C_NUM, .d = d }; }
static struct cell boolc(bool b) { return (struct cell){ C_BOOL, .u = b }; }
static const struct cell null = { C_NULL };

static bool is_clock(const struct stat_row *r)
{
	return r->event && r->event->spec.is_clock;
}

static const char *set_name(enum stat_set_kind k)
{
	static const char *const names[] = { "target", "cgroup", "idle", "unattributed", "total" };

	return names[k];
}

static const char *status_name(enum stat_row_status s)
{
	return s == STAT_ROW_COUNTED ? "counted" : s == STAT_ROW_NOT_SUPPORTED ? "not supported"
									       : "not counted";
}

/* what a value is shown in: clocks in ms, as perf does */
static double shown(const struct stat_row *r, double v)
{
	return is_clock(r) ? v / 1e6 : v;
}

static void row_cells(const struct stat_row *r, const char *event, const char *unit,
		      struct cell *c)
{
	bool counted = r->status == STAT_ROW_COUNTED;
	const struct stat_metric *m = &r->metric;

	c[0] = r->time_s >= 0 ? num(r->time_s) : null;
	c[1] = str(set_name(r->kind));
	c[2] = str(r->cgroup);
	c[3] = str(event);
	c[4] = str(status_name(r->status));
	c[5] = counted ? num(shown(r, r->v.value)) : null;
	c[6] = str(unit);
	c[7] = r->event && r->status != STAT_ROW_NOT_SUPPORTED ? u64c(r->raw.count) : null;
	c[8] = r->event && r->status != STAT_ROW_NOT_SUPPORTED ? u64c(r->raw.enabled) : null;
	c[9] = r->event && r->status != STAT_ROW_NOT_SUPPORTED ? u64c(r->raw.running) : null;
	c[10] = counted && r->event ? num(r->v.running_pct) : null;
	c[11] = boolc(r->v.scaled);
	c[12] = u64c(r->runs);
	c[13] = counted && r->runs > 1 ? num(shown(r, r->stddev)) : null;
	c[14] = counted && r->v.has_ci ? num(shown(r, r->v.lo)) : null;
	c[15] = counted && r->v.has_ci ? num(shown(r, r->v.hi)) : null;
	c[16] = m->def ? str(m->def->name) : null;
	c[17] = m->def ? num(m->value) : null;
	c[18] = m->def ? str(m->def->unit) : null;
	c[19] = m->def && m->has_ci ? num(m->lo) : null;
	c[20] = m->def && m->has_ci ? num(m->hi) : null;
}

static void json_row(struct stat_printer *p, const struct cell *c)
{
	jsonw_start_object(p->jw);
	for (size_t i = 0; i < NR_COLUMNS; i++) {
		jsonw_name(p->jw, stat_print_columns[i]);
		switch (c[i].t) {
		case C_NULL: jsonw_null(p->jw); break;
		case C_STR: jsonw_string(p->jw, c[i].s); break;
		case C_U64: jsonw_uint(p->jw, c[i].u); break;
		case C_NUM: jsonw_double(p->jw, c[i].d); break;
		case C_BOOL: jsonw_bool(p->jw, c[i].u); break;
		}
	}
	jsonw_end_object(p->jw);
}

/* RFC 4180: quoted when it holds a comma, a quote or a line break; control characters are
 * escaped first, so that none reaches a terminal or breaks a line */
static void csv_string(FILE *f, const char *s)
{
	char buf[4096];

	str__escape(s, buf, sizeof(buf));
	if (!buf[strcspn(buf, ",\"")]) {
		fputs(buf, f);
		return;
	}
	fputc('"', f);
	for (const char *q = buf; *q; q++) {
		if (*q == '"')
			fputc('"', f);
		fputc(*q, f);
	}
	fputc('"', f);
}

static void csv_row(struct stat_printer *p, const struct cell *c)
{
	for (size_t i = 0; i < NR_COLUMNS; i++) {
		if (i)
			fputc(',', p->f);
		switch (c[i].t) {
		case C_NULL: break;
		case C_STR: csv_string(p->f, c[i].s); break;
		case C_U64: fprintf(p->f, "%llu", (unsigned long long)c[i].u); break;
		case C_NUM: if (isfinite(c[i].d)) fprintf(p->f, "%.15g", c[i].d); break;
		case C_BOOL: fputs(c[i].u ? "true" : "false", p->f); break;
		}
	}
	fputc('\n', p->f);
}

/* -------- text -------- */

/* v with thousands separators and decimals digits after the point */
static const char *grouped(double v, int decimals, char *buf, size_t size)
{
	char digits[64], *dot;
	size_t n, lead, o = 0;

	snprintf(digits, sizeof(digits), "%.*f", decimals, v < 0 ? 0 : v);
	dot = strchr(digits, '.');
	n = dot ? (size_t)(dot - digits) : strlen(digits);
	lead = n % 3 ? n % 3 : 3;
	for (size_t i = 0; i < n && o + 2 < size; i++) {
		if (i >= lead && (i - lead) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = 0;
	if (dot)
		snprintf(buf + o, size - o, "%s", dot);
	return buf;
}

static const char *text_set(const struct stat_row *r, char *buf, size_t size)
{
	switch (r->kind) {
	case STAT_SET_IDLE:
		return "[idle]";
	case STAT_SET_TOTAL:
		return "[total]";
	case STAT_SET_UNATTRIBUTED:
		return "[unattributed]";
	case STAT_SET_CGROUP:
		if (r->cgroup)
			return str__escape(r->cgroup, buf, size);
		snprintf(buf, size, "[cgroup %llu]", (unsigned long long)r->cgroup_id);
		return buf;
	default:
		return "";
	}
}

/* appends to a line buffer */
struct line {
	char buf[2048];
	size_t len;
};

__attribute__((format(printf, 2, 3))) static void add(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len >= sizeof(l->buf))
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, sizeof(l->buf) - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += n;
	if (l->len >= sizeof(l->buf))
		l->len = sizeof(l->buf) - 1;
}

/* the line without the blanks that padded its last column */
static void put_line(FILE *f, struct line *l)
{
	while (l->len && l->buf[l->len - 1] == ' ')
		l->len--;
	l->buf[l->len] = 0;
	fprintf(f, "%s\n", l->buf);
}

static void text_metric(struct line *l, const struct stat_metric *m)
{
	double v = m->value, div = 1;
	const char *prefix = "";

	if (!m->def)
		return;
	if (!strcmp(m->def->unit, "/sec")) {
		if (v >= 1e9)
			div = 1e9, prefix = "G";
		else if (v >= 1e6)
			div = 1e6, prefix = "M";
		else if (v >= 1e3)
			div = 1e3, prefix = "K";
		add(l, "  # %8.3f %s/sec", v / div, prefix);
	} else if (!strcmp(m->def->unit, "%")) {
		add(l, "  # %7.2f%% %s", v, m->def->name);
	} else {
		add(l, "  # %8.3f %s", v, m->def->name);
	}
	if (m->has_ci && v > 0)
		add(l, " (+- %.1f%%)", 100 * (m->hi - v) / v);
}

static void text_row(struct stat_printer *p, const struct stat_row *r)
{
	char value[64], name[128], cg[1024];
	struct line l = { .len = 0 };

	str__escape(r->event->spec.name, name, sizeof(name));
	if (p->info.interval_ns)
		add(&l, "%16.9f ", r->time_s);
	if (r->status == STAT_ROW_NOT_SUPPORTED)
		snprintf(value, sizeof(value), "<not supported>");
	else if (r->status == STAT_ROW_NOT_COUNTED)
		snprintf(value, sizeof(value), "<not counted>");
	else
		grouped(shown(r, r->v.value), is_clock(r) ? 2 : 0, value, sizeof(value));
	add(&l, "%18s %-4s %-24s", value, is_clock(r) && r->status == STAT_ROW_COUNTED ? "msec" : "",
	    name);
	if (p->info.cgroups)
		add(&l, " %-20s", text_set(r, cg, sizeof(cg)));
	if (r->status != STAT_ROW_COUNTED) {
		p->any_not_counted |= r->status == STAT_ROW_NOT_COUNTED;
		put_line(p->f, &l);
		return;
	}
	text_metric(&l, &r->metric);
	if (r->v.has_ci && r->v.value > 0) {
		add(&l, "  ( +- %.2f%% )", 100 * (r->v.hi - r->v.value) / r->v.value);
		p->any_ci = true;
	}
	if (r->v.scaled || r->v.running_pct < 99.995) {
		add(&l, "  (%.2f%%)", r->v.running_pct);
		p->any_scaled = true;
	}
	p->any_idle |= r->kind == STAT_SET_IDLE;
	p->any_unattributed |= r->kind == STAT_SET_UNATTRIBUTED;
	put_line(p->f, &l);
}

static void text_header(struct stat_printer *p)
{
	char target[1024];

	str__escape(p->info.target, target, sizeof(target));
	if (p->info.interval_ns) {
		fprintf(p->f, "#%15s %18s %-4s %s\n", "time", "counts", "unit",
			p->info.cgroups ? "events                   cgroup" : "events");
		return;
	}
	fprintf(p->f, "\n Performance counter stats for %s", target);
	if (p->info.runs > 1)
		fprintf(p->f, " (%u runs)", p->info.runs);
	fprintf(p->f, ":\n\n");
}

struct stat_printer *stat_printer__new(FILE *f, enum output_format fmt,
				       const struct stat_print_info *info)
{
	struct stat_printer *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->f = f;
	p->fmt = fmt;
	p->info = *info;
	switch (fmt) {
	case OUT_TEXT:
		text_header(p);
		break;
	case OUT_JSON:
		p->jw = jsonw_new(f);
		if (!p->jw) {
			free(p);
			return NULL;
		}
		jsonw_start_object(p->jw);
		jsonw_string_field(p->jw, "target", info->target);
		jsonw_uint_field(p->jw, "runs", info->runs);
		jsonw_name(p->jw, "interval_ms");
		if (info->interval_ns)
			jsonw_double(p->jw, info->interval_ns / 1e6);
		else
			jsonw_null(p->jw);
		jsonw_bool_field(p->jw, "scaled", !info->no_scale);
		jsonw_name(p->jw, "rows");
		jsonw_start_array(p->jw);
		break;
	case OUT_CSV:
		for (size_t i = 0; i < NR_COLUMNS; i++)
			fprintf(f, "%s%s", i ? "," : "", stat_print_columns[i]);
		fputc('\n', f);
		break;
	default:	/* the other formats are not stat's */
		break;
	}
	return p;
}

void stat_printer__row(struct stat_printer *p, const struct stat_row *r)
{
	struct cell c[NR_COLUMNS];

	if (p->fmt == OUT_TEXT) {
		text_row(p, r);
		return;
	}
	row_cells(r, r->event->spec.name, is_clock(r) ? "msec" : "", c);
	if (p->fmt == OUT_JSON)
		json_row(p, c);
	else
		csv_row(p, c);
}

void stat_printer__interval_end(struct stat_printer *p)
{
	if (p->fmt == OUT_TEXT && p->info.cgroups)
		fputc('\n', p->f);
	fflush(p->f);
}

/* a footer figure as a row: elapsed, user or system time, in s */
static void footer_row(struct stat_printer *p, const struct stat_row *r, const char *name)
{
	struct cell c[NR_COLUMNS];

	row_cells(r, name, "s", c);
	if (p->fmt == OUT_JSON)
		json_row(p, c);
	else
		csv_row(p, c);
}

static void text_footer(struct stat_printer *p, const struct stat_row *e, const struct rusage *ru)
{
	FILE *f = p->f;

	if (!p->info.interval_ns) {
		fputc('\n', f);
		if (e->runs > 1 && e->v.has_ci)
			fprintf(f, "%18.9f +- %.9f seconds time elapsed  ( +- %.2f%% )\n", e->v.value,
				e->v.hi - e->v.value, e->v.value > 0 ? 100 * (e->v.hi - e->v.value) / e->v.value : 0);
		else
			fprintf(f, "%18.9f seconds time elapsed\n", e->v.value);
		if (ru)
			fprintf(f, "\n%18.9f seconds user\n%18.9f seconds sys\n",
				ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6,
				ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6);
		fputc('\n', f);
	}
	if (p->any_ci && p->info.runs > 1)
		fprintf(f, " ( +- ): half the 95%% interval of the mean of %u runs\n", p->info.runs);
	else if (p->any_ci)
		fprintf(f, " ( +- ): half the 95%% interval of a count scaled from the time its "
			"counter ran\n");
	if (p->any_scaled)
		fprintf(f, " (NN%%): the share of the time its counter ran: the PMU was multiplexed%s\n",
			p->info.no_scale ? " (--no-scale: counts not scaled)" : "");
	if (p->any_not_counted)
		fprintf(f, " <not counted>: enabled, but never scheduled on the PMU\n");
	if (p->any_idle)
		fprintf(f, " [idle]: the CPUs' idle tasks (in the root cgroup)\n");
	if (p->any_unattributed)
		fprintf(f, " [unattributed]: counted where the kernel did not run the program for a "
			"switch\n   between cgroups: they belong to one of the cgroups, which is not "
			"known\n");
}

void stat_printer__footer(struct stat_printer *p, const struct stat_row *elapsed,
			  const struct rusage *ru)
{
	if (p->fmt == OUT_TEXT) {
		text_footer(p, elapsed, ru);
		return;
	}
	footer_row(p, elapsed, "elapsed");
	if (ru) {
		struct stat_row r = *elapsed;

		r.v.has_ci = false;
		r.v.value = ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6;
		footer_row(p, &r, "user");
		r.v.value = ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
		footer_row(p, &r, "sys");
	}
}

void stat_printer__free(struct stat_printer *p)
{
	if (!p)
		return;
	if (p->jw) {
		jsonw_end_array(p->jw);
		jsonw_end_object(p->jw);
		jsonw_destroy(&p->jw);
	}
	free(p);
}
