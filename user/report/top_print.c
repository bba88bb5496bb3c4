// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* top's rows as text lines of a given width: which columns fit, in what order they go. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "symbols/bblock.h"
#include "report/callchain.h"
#include "report/top.h"

#define FLEX_MIN 20	/* the flexible column (symbol, command, container) gets at least this */
#define MAX_CELLS (2 + CELLS_MAX)

/* an amount of v's unit: bytes ("1.5 MiB") or objects; signed: "+1.5 MiB" */
static void memory_amount(const struct top_view *v, double n, bool sign, char *buf, size_t size)
{
	bool objects = v->mview == MEMORY_ALLOC_OBJECTS || v->mview == MEMORY_INUSE_OBJECTS;
	char b[32];

	if (objects)
		snprintf(buf, size, sign ? "%+.0f" : "%.0f", n);
	else
		snprintf(buf, size, "%s%s", sign ? n < 0 ? "-" : "+" : "", memory__bytes(fabs(n), b, sizeof(b)));
}

/* --memory: the amount (a rate in the alloc views' last interval), its share with the 95%
 * interval of the estimate, and for the live set its growth since top's first interval */
static int memory_cells(const struct top_view *v, const struct hist_row *r, double total, struct cell *c)
{
	static const char *const titles[MEMORY_VIEW_NR][2] = {
		[MEMORY_ALLOC_SPACE] = { "Bytes/s", "Bytes" }, [MEMORY_ALLOC_OBJECTS] = { "Objects/s", "Objects" },
		[MEMORY_INUSE_SPACE] = { "Live", "Live" }, [MEMORY_INUSE_OBJECTS] = { "Live obj", "Live obj" },
	};
	bool inuse = v->mview == MEMORY_INUSE_SPACE || v->mview == MEMORY_INUSE_OBJECTS;
	int n = 2;

	c[0] = (struct cell){ .title = titles[v->mview][!v->decay], .width = 10, .right = true };
	c[1] = (struct cell){ .title = "Percent +-CI95", .width = 15, .right = true };
	if (r->count > 0 || r->first > 0)
		memory_amount(v, r->count, false, c[0].text, sizeof(c[0].text));
	if (total > 0)
		snprintf(c[1].text, sizeof(c[1].text), "%.2f%% +-%.2f", 100.0 * r->count / total,
			 100.0 * 1.96 * sqrt(r->var) / total);
	if (inuse) {
		c[n] = (struct cell){ .title = "Growth", .width = 10, .right = true, .drop = 1 };
		if (r->count > 0 || r->first > 0)
			memory_amount(v, r->count - r->first, true, c[n].text, sizeof(c[n].text));
		n++;
	}
	return n;
}

/* the cells of a row: its samples and share, then the key's columns with the row's process
 * and container (r a zeroed row: for the titles) */
static int make_cells(const struct top_view *v, const struct hist_row *r, double total, struct cell *c)
{
	const struct cells_opts o = { .style = CELLS_LIVE | CELLS_OWNER };

	if (v->memory) {
		int n = memory_cells(v, r, total, c);

		return n + sort_key__cells(&v->key, 1, &o, r, c + n);
	}
	c[0] = (struct cell){ .title = "Samples", .width = 8, .right = true };
	c[1] = (struct cell){ .title = "Percent +-CI95", .width = 14, .right = true };
	if (v->off_cpu) {	/* time, measured at every switch: no interval */
		c[0].title = "Time ms";
		c[1].title = "Percent";
		snprintf(c[0].text, sizeof(c[0].text), "%.1f", r->count / 1e3);
		if (total > 0)
			snprintf(c[1].text, sizeof(c[1].text), "%.2f%%", 100.0 * r->count / total);
		return 2 + sort_key__cells(&v->key, 1, &o, r, c + 2);
	}
	snprintf(c[0].text, sizeof(c[0].text), "%.0f", r->count);
	if (total > 0)
		snprintf(c[1].text, sizeof(c[1].text), "%.2f%% +-%.2f", 100.0 * r->count / total,
			 100.0 * hist__ci95(llround(r->count), llround(total)));
	return 2 + sort_key__cells(&v->key, 1, &o, r, c + 2);
}

/* which cells fit in width, and the flexible one's width */
static int fit(struct cell *c, int n, int width, bool *keep)
{
	for (;;) {
		int used = 0, worst = -1, flex;

		for (int i = 0; i < n; i++) {
			if (!keep[i])
				continue;
			used += c[i].width + (used ? 1 : 0);
			if (c[i].drop && (worst < 0 || c[i].drop > c[worst].drop))
				worst = i;
		}
		flex = width - used - 1;
		if (flex >= FLEX_MIN || worst < 0)
			return flex < 4 ? 4 : flex;
		keep[worst] = false;
	}
}

static void render(struct cell *c, int n, int width, bool titles, char *buf, size_t size)
{
	bool keep[MAX_CELLS];
	size_t off = 0;
	int flex;

	for (int i = 0; i < n; i++)
		keep[i] = true;
	flex = fit(c, n, width, keep);
	buf[0] = 0;
	for (int i = 0; i < n && off + 1 < size; i++) {
		/* names come from processes and binaries: no terminal controls get through */
		char esc[4 * sizeof(c[i].text)], cut[4 * sizeof(c[i].text)];
		const char *s = titles ? c[i].title : str__escape(c[i].text, esc, sizeof(esc));
		int w = c[i].width ? c[i].width : flex;
		int len;

		if (!keep[i])
			continue;
		/* a value cut to its column ends in '+', as in report's tables */
		len = str__fit(s, w, cut, sizeof(cut));
		off += snprintf(buf + off, size - off, "%s%*s%s", off ? " " : "",
				c[i].right ? w - len : 0, "", cut);
		if (!c[i].right && i + 1 < n)
			off += snprintf(buf + off, size - off, "%*s", w - len, "");
		if (off >= size)
			off = size - 1;
	}
	if (off > (size_t)width)	/* narrower than the fixed columns: cut */
		buf[off = width] = 0;
	while (off > 0 && buf[off - 1] == ' ')	/* no trailing padding */
		buf[--off] = 0;
}

void top__format_titles(const struct top_view *v, int width, char *buf, size_t size)
{
	static const struct hist_row titles;
	struct cell c[MAX_CELLS];

	render(c, make_cells(v, &titles, 0, c), width, true, buf, size);
}

void top__format_row(const struct top_view *v, const struct hist_row *r, double view_total,
		     int width, char *buf, size_t size)
{
	struct cell c[MAX_CELLS];

	render(c, make_cells(v, r, view_total, c), width, false, buf, size);
}

/* 1234567 -> "1,234,567" */
static const char *thousands(u64 v, char *buf, size_t size)
{
	char tmp[32];
	int len = snprintf(tmp, sizeof(tmp), "%" PRIu64, v), o = 0;

	for (int i = 0; i < len && o + 2 < (int)size; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = 0;
	return buf;
}

/* append " | part" (or part) while it fits in width */
static void append(char *line, size_t size, int width, const char *part)
{
	size_t len = strlen(line);

	if ((int)(len + strlen(part) + 3) > width && len)
		return;
	snprintf(line + len, size - len, "%s%s", len ? " | " : "", part);
}

/* --memory's first line: the period, the rate, what was sampled (the interval's, the run's),
 * what is live, and the processes whose live set went with them */
static void memory_header(const struct top_status *st, int width, char *line, size_t size)
{
	char part[160], a[32], b[32];

	snprintf(part, sizeof(part), "allocations, one sampled per %s", memory__bytes(st->alloc_period, a,
										  sizeof(a)));
	append(line, size, width, part);
	snprintf(part, sizeof(part), "%s/s allocated", memory__bytes(st->rate, a, sizeof(a)));
	append(line, size, width, part);
	snprintf(part, sizeof(part), "sampled %s (run %s)", thousands(st->mem_sampled_interval, a, sizeof(a)),
		 thousands(st->mem_sampled, b, sizeof(b)));
	append(line, size, width, part);
	snprintf(part, sizeof(part), "live %s", memory__bytes(st->live_bytes, a, sizeof(a)));
	append(line, size, width, part);
	if (st->exited_procs) {
		snprintf(part, sizeof(part), "exited %s (%s live allocations dropped)",
			 thousands(st->exited_procs, a, sizeof(a)), thousands(st->exited_allocs, b, sizeof(b)));
		append(line, size, width, part);
	}
}

/* line 1's first parts: what is sampled, and at what rate */
static void sampled_parts(const struct top_status *st, const struct top_view *v, int width, char *line,
			  size_t size)
{
	char part[160], a[32], esc[4 * sizeof(v->filter)];

	if (v->memory) {
		memory_header(st, width, line, size);
		return;
	}
	if (v->off_cpu)
		snprintf(part, sizeof(part), "off-CPU time at every context switch");
	else if (st->freq)
		snprintf(part, sizeof(part), "%s %" PRIu64 " Hz", str__escape(st->event, esc, sizeof(esc)),
			 st->freq);
	else
		snprintf(part, sizeof(part), "%s every %" PRIu64, str__escape(st->event, esc, sizeof(esc)),
			 st->period);
	append(line, size, width, part);
	if (v->off_cpu)	/* the rate of microseconds is threads off the CPU on average */
		snprintf(part, sizeof(part), "%.1f threads blocked", st->rate / 1e6);
	else
		snprintf(part, sizeof(part), "%s samples/s", thousands(llround(st->rate), a, sizeof(a)));
	append(line, size, width, part);
}

/* "view N" or the run's "total N" in v's unit: samples, seconds off the CPU, bytes allocated */
static void amount_part(const struct top_view *v, const char *what, double n, char *part, size_t size)
{
	char a[32];

	if (v->memory)
		memory_amount(v, n, false, a, sizeof(a));
	else if (v->off_cpu)
		snprintf(a, sizeof(a), "%.3f s", n / 1e6);
	else
		thousands(llround(n), a, sizeof(a));
	snprintf(part, size, "%s %s", what, a);
}

void top__format_header(const struct top_status *st, const struct top_view *v, double view_total,
			int width, char *line1, char *line2, size_t size)
{
	char part[160], a[32], b[32], esc[4 * sizeof(v->filter)];
	time_t now = time(NULL);
	struct tm tm;

	line1[0] = line2[0] = 0;
	/* line 1: what is sampled and what it costs */
	sampled_parts(st, v, width, line1, size);
	snprintf(part, sizeof(part), "dropped %s", thousands(st->dropped + st->sideband_lost + st->mem_lost,
							     a, sizeof(a)));
	append(line1, size, width, part);
	if (st->cpu >= 0 && st->bpf_cpu >= 0)
		snprintf(part, sizeof(part), "hsbpf %.1f%% CPU + BPF %.1f%%", st->cpu, st->bpf_cpu);
	else if (st->cpu >= 0)
		snprintf(part, sizeof(part), "hsbpf %.1f%% CPU", st->cpu);
	else
		part[0] = 0;
	if (part[0])
		append(line1, size, width, part);

	/* line 2: what is shown */
	if (st->ended)
		append(line2, size, width, "TARGET ENDED");
	else if (st->paused)
		append(line2, size, width, "PAUSED");
	append(line2, size, width, str__escape(st->target, esc, sizeof(esc)));
	if (v->memory)
		snprintf(part, sizeof(part), "%s by %s, %s", hist__key_title(v->key), memory__view_name(v->mview),
			 v->mview >= MEMORY_INUSE_SPACE ? "live now" : v->decay ? "last interval" : "accumulated");
	else
		snprintf(part, sizeof(part), "%s by %s, %s", hist__key_title(v->key), top__order_name(v->order),
			 v->decay ? "decaying" : "accumulated");
	append(line2, size, width, part);
	if (v->zoom_pid) {
		snprintf(part, sizeof(part), "zoom: pid %u", v->zoom_pid);
		append(line2, size, width, part);
	}
	if (v->zoomed_cgroup) {
		snprintf(part, sizeof(part), "zoom: cgroup %" PRIu64, v->zoom_cgroup);
		append(line2, size, width, part);
	}
	if (v->filter[0]) {
		snprintf(part, sizeof(part), "filter: %s", str__escape(v->filter, esc, sizeof(esc)));
		append(line2, size, width, part);
	}
	if (v->zoom_pid || v->zoomed_cgroup || v->filter[0]) {
		amount_part(v, "view", view_total, part, sizeof(part));
		append(line2, size, width, part);
	}
	/* memory: the bytes allocated whatever the view */
	amount_part(v->memory ? &(struct top_view){ .memory = true } : v, v->memory ? "allocated" : "total",
		    st->total, part, sizeof(part));
	append(line2, size, width, part);
	snprintf(part, sizeof(part), "keys %s", thousands(st->keys, a, sizeof(a)));
	append(line2, size, width, part);
	if (st->aged_out) {
		snprintf(part, sizeof(part), "aged out %s", thousands(st->aged_out, a, sizeof(a)));
		append(line2, size, width, part);
	}
	snprintf(part, sizeof(part), "map %s/%s", thousands(st->slots, a, sizeof(a)),
		 thousands(st->capacity, b, sizeof(b)));
	append(line2, size, width, part);
	localtime_r(&now, &tm);
	snprintf(part, sizeof(part), "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
	append(line2, size, width, part);
	line1[width < (int)size ? width : (int)size - 1] = 0;
	line2[width < (int)size ? width : (int)size - 1] = 0;
}

/* ---- callers trees (top -g --stdio) ---- */

struct caller {
	const char *sym;	/* NULL: the stack ends at the function */
	bool kernel;
	u64 count;
	u32 parent;		/* CALLER_TOP: called by the function itself */
};
#define CALLER_TOP UINT32_MAX

struct callers {
	struct caller *v;
	size_t n, cap;
};

/* the node under parent for frame f (NULL: no caller), made when new; its index or -ENOMEM */
static s64 caller_node(struct callers *c, u32 parent, const struct callchain_frame *f)
{
	const char *sym = f ? f->sym : NULL;
	bool kernel = f && f->kernel;

	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].parent == parent && c->v[i].kernel == kernel &&
		    (c->v[i].sym == sym || (sym && c->v[i].sym && !strcmp(c->v[i].sym, sym))))
			return i;
	if (array__reserve((void **)&c->v, &c->cap, c->n + 1, sizeof(*c->v)))
		return -ENOMEM;
	c->v[c->n] = (struct caller){ .sym = sym, .kernel = kernel, .parent = parent };
	return c->n++;
}

static const struct caller *sort_callers;

static int cmp_caller(const void *a, const void *b)
{
	const struct caller *x = &sort_callers[*(const u32 *)a], *y = &sort_callers[*(const u32 *)b];

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->sym ? x->sym : "", y->sym ? y->sym : "");
}

static int print_level(const struct callers *c, u32 parent, u64 total, double min_share, int level,
		       int indent, int width, FILE *out)
{
	u32 *kids = malloc((c->n + 1) * sizeof(*kids));
	size_t nk = 0;
	int err = 0;

	if (!kids)
		return -ENOMEM;
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].parent == parent && c->v[i].count >= min_share * total)
			kids[nk++] = i;
	sort_callers = c->v;
	qsort(kids, nk, sizeof(*kids), cmp_caller);
	sort_callers = NULL;
	for (size_t i = 0; i < nk && !err; i++) {
		const struct caller *k = &c->v[kids[i]];
		char text[600], esc[4 * sizeof(text)], line[4 * sizeof(text)];

		snprintf(text, sizeof(text), "%*s%6.2f%%  %s%s", indent + 2 * level, "",
			 100.0 * k->count / total, k->sym ? k->sym : "[no caller]",
			 k->kernel ? " [k]" : "");
		str__fit(str__escape(text, esc, sizeof(esc)), width, line, sizeof(line));
		fprintf(out, "%s\n", line);
		err = print_level(c, kids[i], total, min_share, level + 1, indent, width, out);
	}
	free(kids);
	return err;
}

/* top__print_callers, the stacks' amounts in v's unit (NULL: samples) */
static int print_callers(const struct callchain *cc, const char *sym, const char *dso, int depth,
			 double min_share, int indent, int width, const struct top_view *v, double age,
			 FILE *out)
{
	struct callers c = {};
	/* whether each function (frame.func) is the one named: compared once per function, not
	 * once per frame (a busy machine's graph has a million frames, five rows at each refresh) */
	enum { UNSEEN, NAMED, OTHER } *named = calloc(cc->nr_funcs + 1, sizeof(*named));
	u64 total = 0;
	int err = named ? 0 : -ENOMEM;

	for (size_t i = 0; i < cc->nr_stacks && !err; i++) {
		const struct callchain_stack *st = &cc->stacks[i];
		const struct callchain_frame *fr = cc->frames + st->first;
		u32 at = st->nr, parent = CALLER_TOP;

		/* the function's first frame from the sampled one: its callers are the rest */
		for (u32 j = 0; j < st->nr && at == st->nr; j++) {
			u32 id = fr[j].func;

			if (named[id] == UNSEEN)
				named[id] = fr[j].sym && !strcmp(fr[j].sym, sym) &&
					    (!dso || (fr[j].dso && !strcmp(fr[j].dso, dso))) ? NAMED : OTHER;
			if (named[id] == NAMED)
				at = j;
		}
		if (at == st->nr)
			continue;
		total += st->count;
		for (int d = 1; d <= depth; d++) {
			bool end = at + d >= st->nr;
			s64 node;

			if (end && d > 1)
				break;
			node = caller_node(&c, parent, end ? NULL : &fr[at + d]);
			if (node < 0) {
				err = -ENOMEM;
				break;
			}
			c.v[node].count += st->count;
			parent = node;
			if (end)
				break;
		}
	}
	if (!err && total) {
		char text[600], esc[4 * sizeof(text)], line[4 * sizeof(text)];

		char amount[48], when[48] = "";

		/* a graph kept from an earlier refresh (top__callchain) says how old it is */
		if (age >= 0.5)
			snprintf(when, sizeof(when), ", as of %.0f s ago", age);
		if (v && v->memory)
			memory_amount(v, total, false, amount, sizeof(amount));
		else
			snprintf(amount, sizeof(amount), "%" PRIu64 " sample%s", total, total == 1 ? "" : "s");
		snprintf(text, sizeof(text), "%*scallers of %s (%s with stacks%s%s):", indent, "", sym, amount,
			 !v || !v->memory ? "" : v->mview >= MEMORY_INUSE_SPACE ? ", live now" : ", since the start",
			 when);
		str__fit(str__escape(text, esc, sizeof(esc)), width, line, sizeof(line));
		fprintf(out, "%s\n", line);
		err = print_level(&c, CALLER_TOP, total, min_share, 1, indent, width, out);
	}
	free(named);
	free(c.v);
	if (!err && ferror(out))
		err = -EIO;
	return err;
}

int top__print_callers(const struct callchain *cc, const char *sym, const char *dso, int depth,
		       double min_share, int indent, int width, FILE *out)
{
	return print_callers(cc, sym, dso, depth, min_share, indent, width, NULL, 0, out);
}

int top__print(struct top *t, const struct top_view *v, size_t limit, size_t graphs, int width,
	       FILE *out)
{
	const struct hist_row *rows;
	char l1[512], l2[512], line[1024];
	struct callchain *cc = NULL;
	double total;
	size_t nr;
	int err;

	if (width >= (int)sizeof(l1))
		width = sizeof(l1) - 1;
	err = top__rows_first(t, v, limit, &rows, &nr, &total);
	if (err)
		return fail(err, "cannot group the samples: %s", strerror(-err));
	top__format_header(top__status(t), v, total, width, l1, l2, sizeof(l1));
	fprintf(out, "%s\n%s\n", l1, l2);
	top__format_titles(v, width, line, sizeof(line));
	fprintf(out, "%s\n", line);
	/* call graphs of functions, from the stacks so far; none yet: the rows alone */
	if (graphs && v->key == SORT_SYM) {
		cc = top__callchain(t);
		if (!cc && errno != ENOENT)
			return fail(-errno, "cannot read the call stacks: %s", strerror(errno));
	}
	for (size_t i = 0; i < nr && (!limit || i < limit) && !err; i++) {
		top__format_row(v, &rows[i], total, width, line, sizeof(line));
		fprintf(out, "%s\n", line);
		if (cc && i < graphs) {
			err = print_callers(cc, rows[i].sym, rows[i].dso, TOP_GRAPH_DEPTH,
					    TOP_GRAPH_MIN_SHARE, 4, width, v, top__callchain_age(t), out);
			if (err == -ENOMEM)
				error("cannot print the call graphs: %s", strerror(ENOMEM));
		}
	}
	fprintf(out, "\n");
	return err ? err : ferror(out) ? -EIO : 0;
}
