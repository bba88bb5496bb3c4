// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Printing a histogram: a text table that fits 100 columns, JSON, and CSV. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/bblock.h"
#include "record/container_id.h"
#include "report/callchain.h"
#include "report/hist.h"
#include "record/offcpu.h"
#include "symbols/inline.h"
#include "lib/json_writer.h"
#include "record/memory.h"

#define TEXT_WIDTH 100

/* whether a row's inlined chain is its own: its key holds the address or the line */
static bool row_keyed_by_address(const struct hist *h)
{
	for (int k = 0; k < h->nr_keys; k++)
		if (sort_key__ops(h->keys[k])->own_inlined)
			return true;
	return false;
}

static int row_cells(const struct hist *h, const struct hist_row *r, struct cell *c)
{
	const struct cells_opts o = { .insns_per_sample = h->insns_per_sample, .has_lbr = h->has_lbr };

	return sort_key__cells(h->keys, h->nr_keys, &o, r, c);
}

/* print cells into what is left of the line; a cut value ends in '+' */
static void print_cells(FILE *out, const struct cell *c, int n, bool titles, int used)
{
	for (int i = 0; i < n; i++) {
		char esc[4 * sizeof(c[i].text)];
		const char *s = titles ? c[i].title : str__escape(c[i].text, esc, sizeof(esc));
		int left = TEXT_WIDTH - used - 1;
		/* the last column takes the rest; a flexible one (width 0) before it, 24 */
		int w = i == n - 1 ? left : c[i].width ? c[i].width : 24;
		int len = strlen(s);
		bool last;

		if (w > left)
			w = left;
		if (w <= 0)
			break;
		/* the last column printed: no padding after it */
		last = i == n - 1 || left - w - 1 <= 0;
		if (len > w && c[i].cut_left && !titles) {
			/* "…/file": the longest tail after a '/' that fits, else the tail */
			const char *tail = s + len - (w - 1), *slash = strchr(tail, '/');

			if (slash && slash[1])
				tail = slash;
			fprintf(out, "\u2026%s%*s", tail, last ? 0 : (int)(w - 1 - strlen(tail) + 1), "");
		} else if (len > w)
			fprintf(out, "%.*s+%s", w - 1, s, last ? "" : " ");
		else if (!last)
			fprintf(out, "%-*s ", w, s);
		else
			fputs(s, out);
		if (last)
			break;
		used += w + 1;
	}
	fputc('\n', out);
}

/* text cut at spaces into lines of at most width columns (a longer word stands alone), the
 * later ones indented as "#   " */
static void print_wrapped(FILE *out, const char *text, int width)
{
	const char *s = text;
	int indent = 0;

	while (*s) {
		int room = width - indent, len = strlen(s), cut = len;

		if (len > room) {
			for (cut = room; cut > 0 && s[cut] != ' '; cut--)
				;
			if (cut == 0)	/* one long word: to its end */
				cut = strcspn(s, " ");
		}
		fprintf(out, "%s%.*s\n", indent ? "#   " : "", cut, s);
		s += cut;
		while (*s == ' ')
			s++;
		indent = 4;
	}
}

/* the meta strings come from the profile file, which anyone may have written */
static void print_header(const struct profile *p, const struct hist *h, FILE *out)
{
	const struct profile_meta *m = &p->meta;
	char a[4 * sizeof(m->target)], b[4 * sizeof(m->host)], c[4 * sizeof(m->kernel)];
	/* the counts kept apart from the samples cannot follow a filter: said to be the whole's */
	const char *whole = p->filtered ? " (in the whole profile)" : "";

	if (offcpu__only(p)) {
		offcpu__print_event(p, h->total, "# ", out);
		if (p->filtered)
			fprintf(out, "# the filters left out %.3f ms\n", p->filtered_out / 1e3);
	} else {
		fprintf(out, "# event %s, ", memory__in_profile(p) ? "memory" :
			str__escape(m->event, a, sizeof(a)));
		if (memory__in_profile(p))	/* allocations, sampled by bytes */
			fprintf(out, "alloc period %s", memory__bytes(m->alloc_period, a, sizeof(a)));
		else if (m->freq)
			fprintf(out, "%" PRIu64 " Hz", m->freq);
		else
			fprintf(out, "period %" PRIu64 " %s", m->period, str__escape(m->unit, a, sizeof(a)));
		if (offcpu__in_profile(p))	/* its counts are microseconds */
			fprintf(out, " (%s), %.3f ms", str__escape(m->period_mode, a, sizeof(a)),
				h->total / 1e3);
		else if (memory__in_profile(p))	/* its counts are bytes or objects */
			fprintf(out, ", %s %s", strstr(m->memory_view, "space") ?
				memory__bytes(h->total, a, sizeof(a)) : "", m->memory_view);
		else
			fprintf(out, " (%s), %" PRIu64 " samples", str__escape(m->period_mode, a, sizeof(a)),
				(u64)h->total);
		if (p->filtered)
			fprintf(out, " (the filters left out %" PRIu64 ")", p->filtered_out);
		fprintf(out, ", %" PRIu64 " dropped%s\n", p->stats.dropped_full, whole);
	}
	{
		char line[sizeof(a) + sizeof(b) + sizeof(c) + 64];
		int n;

		/* what is known: an imported perf.data may have no duration, host or kernel */
		n = snprintf(line, sizeof(line), "# target %s", str__escape(m->target, a, sizeof(a)));
		if (m->duration_ns)
			n += snprintf(line + n, sizeof(line) - n, ", %.2f s", m->duration_ns / 1e9);
		if (m->host[0])
			n += snprintf(line + n, sizeof(line) - n, "%s on %s", m->duration_ns ? "" : ",",
				      str__escape(m->host, b, sizeof(b)));
		if (m->kernel[0])
			snprintf(line + n, sizeof(line) - n, " (%s)", str__escape(m->kernel, c, sizeof(c)));
		if (m->target[0] || m->duration_ns || m->host[0] || m->kernel[0])
			print_wrapped(out, line, TEXT_WIDTH);
	}
	if (p->stats.dropped_full)
		fprintf(out, "# WARNING: %" PRIu64 " samples were dropped because the sample map was "
			"full (raise --map-entries)%s\n", p->stats.dropped_full, whole);
	if (p->stats.sideband_lost)
		fprintf(out, "# WARNING: the kernel lost %" PRIu64 " mmap/comm records: some samples "
			"may be [unknown]%s\n", p->stats.sideband_lost, whole);
	if (p->stats.jit_malformed)
		fprintf(out, "# WARNING: %" PRIu64 " malformed lines of perf map files (JIT symbols) "
			"were skipped%s\n", p->stats.jit_malformed, whole);
	if (p->stats.jit_ignored)
		fprintf(out, "# WARNING: %" PRIu64 " perf map files were ignored as untrusted (owner, "
			"or not a file; record -v says why)%s\n", p->stats.jit_ignored, whole);
	if (p->stats.jit_capped)
		fprintf(out, "# WARNING: %" PRIu64 " perf map files were too large: read only up to "
			"the bound (docs/symbols.md)%s\n", p->stats.jit_capped, whole);
	if (p->stats.rearm_lost)
		fprintf(out, "# WARNING: %" PRIu64 " randomized re-arms were lost: those intervals "
			"kept the previous period%s\n", p->stats.rearm_lost, whole);
	if (offcpu__in_profile(p))
		offcpu__print_header(p, "# ", out);
	if (memory__in_profile(p))
		memory__print_header(p, "# ", out);
	if (p->nr_stack_samples)
		callchain__print_ends(p, "# ", out);
	if (p->stats.intervals) {
		const struct profile_stats *st = &p->stats;
		double mean = (double)st->interval_sum / st->intervals;

		fprintf(out, "# intervals: mean %.0f, min %" PRIu64 ", max %" PRIu64 " %s over %" PRIu64
			" samples%s; %.2f%% outside the window", mean, st->interval_min, st->interval_max,
			m->unit, st->intervals, whole, 100.0 * st->interval_outside / st->intervals);
		if (st->intervals_armed)
			fprintf(out, "; mean |measured - drawn| %.0f %s", (double)st->interval_err_sum /
				st->intervals_armed, m->unit);
		fprintf(out, "\n");
		if (st->rearm_late || st->rearm_failed)
			fprintf(out, "# WARNING: %" PRIu64 " re-arms came too late to meet their draw, %"
				PRIu64 " failed%s\n", st->rearm_late, st->rearm_failed, whole);
	}
	fprintf(out, "#\n");
}

/* rows over the percent limit, as far as the row limit goes */
static size_t rows_shown(const struct hist *h, size_t limit)
{
	size_t n = limit && limit < h->nr_rows ? limit : h->nr_rows;

	if (h->percent_limit > 0 && h->total > 0) {
		size_t k = 0;

		while (k < n && 100.0 * (h->children ? h->rows[k].children : h->rows[k].count) /
		       h->total >= h->percent_limit)
			k++;
		n = k;
	}
	return n;
}

/* a row of off-CPU time estimated from blocks followed at random: its share with the
 * interval its blocks give (a row of on- and off-CPU time, --wall: as if all off; wider) */
static bool print_offcpu_estimate(const struct profile *p, const struct hist_row *r, u64 total, FILE *out)
{
	double share = 100.0 * r->count / total, half = share * offcpu__ci95(p, r->blocks);
	bool low = 2 * half >= share;

	fprintf(out, "%9.1f %7.2f%% %6.2f%%%c ", r->count / 1e3, share, half, low ? '*' : ' ');
	return low;
}

static void print_text(const struct hist *h, const struct profile *p, size_t limit, FILE *out)
{
	struct cell cells[CELLS_MAX];
	size_t shown = rows_shown(h, limit);
	bool any_low = false;
	char b[32];
	int n;

	print_header(p, h, out);
	if (!h->nr_rows) {
		fprintf(out, "# no samples\n");
		return;
	}
	n = row_cells(h, &h->rows[0], cells);
	if (h->children && h->show_nr)
		fprintf(out, "%8s %8s %9s %7s  ", "Children", "Self", "Samples", "CI95");
	else if (h->children)
		fprintf(out, "%8s %8s %7s  ", "Children", "Self", "CI95");
	else
		fprintf(out, "%9s %8s %7s  ", offcpu__in_profile(p) ? "Time ms" : !memory__in_profile(p) ?
			"Samples" : strstr(p->meta.memory_view, "space") ? "Bytes" : "Objects", "Percent", "CI95");
	print_cells(out, cells, n, true, 29);
	for (size_t i = 0; i < shown; i++) {
		const struct hist_row *r = &h->rows[i];
		u64 count = r->count, total = h->total;	/* a profile's samples: whole */
		u64 main = h->children ? r->children : count;
		bool low = hist__low_confidence(main, total);

		any_low |= low;
		n = row_cells(h, r, cells);
		if (h->children && h->show_nr)
			fprintf(out, "%7.2f%% %7.2f%% %9" PRIu64 " %6.2f%%%c ", 100.0 * r->children /
				total, 100.0 * count / total, count, 100.0 * hist__ci95(main, total),
				low ? '*' : ' ');
		else if (h->children)
			fprintf(out, "%7.2f%% %7.2f%% %6.2f%%%c ", 100.0 * r->children / total,
				100.0 * count / total, 100.0 * hist__ci95(main, total), low ? '*' : ' ');
		else if (offcpu__in_profile(p) && r->blocks)	/* estimated: --switch-sample */
			any_low |= print_offcpu_estimate(p, r, total, out);
		else if (offcpu__in_profile(p))	/* time, measured: no sampling interval */
			fprintf(out, "%9.1f %7.2f%% %7s  ", count / 1e3, 100.0 * count / total, "-");
		else if (memory__in_profile(p) && strstr(p->meta.memory_view, "space"))
			fprintf(out, "%9s %7.2f%% %7s  ", memory__bytes(count, b, sizeof(b)),
				100.0 * count / total, "-");
		else
			fprintf(out, "%9" PRIu64 " %7.2f%% %6.2f%%%c ", count, 100.0 * count / total,
				100.0 * hist__ci95(count, total), low ? '*' : ' ');
		print_cells(out, cells, n, false, 29);
		if (h->print_row_extra)
			h->print_row_extra(h->extra_ctx, h, i, out);
	}
	if (shown < h->nr_rows)
		fprintf(out, "# ... %zu more rows (%s)\n", h->nr_rows - shown, h->percent_limit > 0 ?
			"under --percent-limit, or past --limit" : "--limit 0 shows all");
	if (any_low)
		fprintf(out, "# * too few samples to rank: the 95%% interval is at least half the share\n");
	for (int k = 0; k < h->nr_keys; k++) {
		if (h->keys[k] != SORT_BB)
			continue;
		if (h->insns_per_sample)
			fprintf(out, "# Est.execs: samples x %.4g instructions per sample (%s) / block "
				"instructions\n", h->insns_per_sample, h->scale_source);
		else
			fprintf(out, "# Samp/insn: samples / block instructions (give --truth, or sample "
				"instructions, for executions)\n");
	}
}

static void print_json(const struct hist *h, const struct profile *p, size_t limit, FILE *out)
{
	const struct profile_meta *m = &p->meta;
	size_t shown = rows_shown(h, limit);
	json_writer_t *w = jsonw_new(out);
	bool sym_known = false;

	if (!w)
		return;
	for (int k = 0; k < h->nr_keys; k++)
		sym_known |= sort_key__ops(h->keys[k])->code;
	jsonw_start_object(w);
	jsonw_string_field(w, "event", m->event);
	jsonw_uint_field(w, "period", m->period);
	jsonw_uint_field(w, "frequency", m->freq);
	jsonw_string_field(w, "period_mode", m->period_mode);
	jsonw_string_field(w, "unit", m->unit);
	jsonw_string_field(w, "target", m->target);
	jsonw_uint_field(w, "total_samples", (u64)h->total);
	jsonw_uint_field(w, "total_weight", h->total_weight);
	/* filtered: total_samples are the filters'; dropped to jit_capped the whole profile's */
	if (p->filtered)
		jsonw_uint_field(w, "filtered_out", p->filtered_out);
	jsonw_uint_field(w, "dropped", p->stats.dropped_full);
	jsonw_uint_field(w, "sideband_lost", p->stats.sideband_lost);
	jsonw_uint_field(w, "rearm_lost", p->stats.rearm_lost);
	jsonw_uint_field(w, "jit_symbols", p->nr_jitsyms);
	jsonw_uint_field(w, "jit_malformed", p->stats.jit_malformed);
	jsonw_uint_field(w, "jit_ignored", p->stats.jit_ignored);
	jsonw_uint_field(w, "jit_capped", p->stats.jit_capped);
	jsonw_float_field(w, "duration_s", m->duration_ns / 1e9);
	jsonw_uint_field(w, "handler_runs", p->stats.bpf_run_cnt);
	jsonw_uint_field(w, "handler_ns", p->stats.bpf_run_ns);
	jsonw_uint_field(w, "stack_samples", p->stats.stack_samples);
	jsonw_uint_field(w, "stack_ns", p->stats.stack_ns);
	jsonw_float_field(w, "insns_per_sample", h->insns_per_sample);
	jsonw_string_field(w, "scale", h->scale_source);
	jsonw_name(w, "sort");
	jsonw_start_array(w);
	for (int k = 0; k < h->nr_keys; k++)
		jsonw_string(w, hist__key_name(h->keys[k]));
	jsonw_end_array(w);
	jsonw_name(w, "rows");
	jsonw_start_array(w);
	for (size_t i = 0; i < shown; i++) {
		const struct hist_row *r = &h->rows[i];
		u64 count = r->count, total = h->total;

		jsonw_start_object(w);
		jsonw_uint_field(w, "samples", count);
		jsonw_float_field(w, "percent", 100.0 * count / total);
		if (h->children) {
			jsonw_uint_field(w, "children", r->children);
			jsonw_float_field(w, "children_percent", 100.0 * r->children / total);
		}
		jsonw_float_field(w, "ci95", 100.0 * hist__ci95(count, total));
		jsonw_bool_field(w, "low_confidence", hist__low_confidence(count, total));
		jsonw_uint_field(w, "weight", r->weight);
		if (r->nr_inl && row_keyed_by_address(h)) {
			/* innermost first, each with where it was inlined (a row of several
			 * addresses, by symbol, would show one of theirs) */
			jsonw_name(w, "inlined");
			jsonw_start_array(w);
			for (int k = 0; k < r->nr_inl; k++) {
				jsonw_start_object(w);
				jsonw_string_field(w, "symbol", r->inl[k].name);
				jsonw_string_field(w, "call_file", r->inl[k].call_file);
				jsonw_uint_field(w, "call_line", r->inl[k].call_line);
				jsonw_end_object(w);
			}
			jsonw_end_array(w);
		}
		for (int k = 0; k < h->nr_keys; k++)
			if (sort_key__ops(h->keys[k])->json)
				sort_key__ops(h->keys[k])->json(h, r, w);
		/* a row that groups several symbols has none of its own */
		jsonw_string_field(w, "symbol", sym_known ? r->sym : NULL);
		jsonw_string_field(w, "dso", sym_known || h->keys[0] == SORT_DSO ? r->dso : NULL);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
	if (h->print_json_extra)
		h->print_json_extra(h->extra_ctx, w);
	jsonw_end_object(w);
	jsonw_destroy(&w);
}

/* escaped first: a CSV file is read on terminals too */
static void csv_field(FILE *out, const char *raw)
{
	size_t size = 4 * strlen(raw ? raw : "") + 1;	/* whole, however long */
	char *s = malloc(size);

	if (!s) {
		fputs("?", out);
		return;
	}
	str__escape(raw, s, size);
	if (!strpbrk(s, ",\"")) {
		fputs(s, out);
		free(s);
		return;
	}
	fputc('"', out);
	for (const char *q = s; *q; q++) {
		if (*q == '"')
			fputc('"', out);
		fputc(*q, out);
	}
	fputc('"', out);
	free(s);
}

static void print_csv(const struct hist *h, size_t limit, FILE *out)
{
	struct cell cells[CELLS_MAX];
	size_t shown = rows_shown(h, limit);
	struct hist_row empty = {};
	int n = row_cells(h, h->nr_rows ? &h->rows[0] : &empty, cells);

	fputs("samples,percent,ci95,low_confidence", out);
	if (h->children)
		fputs(",children,children_percent", out);
	for (int i = 0; i < n; i++) {
		fputc(',', out);
		csv_field(out, cells[i].title);
	}
	fputc('\n', out);
	for (size_t i = 0; i < shown; i++) {
		const struct hist_row *r = &h->rows[i];
		u64 count = r->count, total = h->total;

		n = row_cells(h, r, cells);
		fprintf(out, "%" PRIu64 ",%.4f,%.4f,%d", count, 100.0 * count / total,
			100.0 * hist__ci95(count, total), hist__low_confidence(count, total));
		if (h->children)
			fprintf(out, ",%" PRIu64 ",%.4f", r->children, 100.0 * r->children / total);
		for (int c = 0; c < n; c++) {
			fputc(',', out);
			/* full object paths: CSV has no width to fit */
			csv_field(out, cells[c].cut_left && cells[c].whole ? cells[c].whole :
				  cells[c].text);
		}
		fputc('\n', out);
	}
}

void hist__print(const struct hist *h, const struct profile *p, enum output_format fmt,
		 size_t limit, FILE *out)
{
	switch (fmt) {
	case OUT_TEXT:
		print_text(h, p, limit, out);
		break;
	case OUT_JSON:
		print_json(h, p, limit, out);
		break;
	case OUT_CSV:
		print_csv(h, limit, out);
		break;
	default:	/* the other formats are not a table's */
		break;
	}
}
