// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* LBR rows: most frequent first, both ends as symbol+offset in their object (ELF addresses). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "hsbpf.h"
#include "lib/json_writer.h"
#include "report/lbr_report.h"

static int cmp_count(const void *a, const void *b)
{
	const struct profile_lbr *x = *(const struct profile_lbr *const *)a;
	const struct profile_lbr *y = *(const struct profile_lbr *const *)b;

	if (x->count != y->count)
		return cmp_u64_desc(x->count, y->count);
	/* ties whole: the profile's order of branch records is no order (an import's came
	 * from a hash table's) */
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	if (x->b != y->b)
		return x->b < y->b ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->exec_ns < y->exec_ns ? -1 : x->exec_ns > y->exec_ns;
}

static void end_name(struct symbolizer *sy, const struct profile_lbr *l, u64 addr, char *buf,
		     size_t size, struct sym_result *r)
{
	struct profile_sample s = { .pid = l->pid, .ip = addr, .exec_ns = l->exec_ns };

	symbolizer__resolve(sy, &s, r);
	snprintf(buf, size, "%s+%#" PRIx64, r->sym, r->sym_off);
}

int lbr_report__print(const struct profile *p, struct symbolizer *sy, u32 kind,
		      enum output_format fmt, size_t limit, FILE *out)
{
	const struct profile_lbr **rows = calloc(p->nr_lbr + 1, sizeof(*rows));
	json_writer_t *w = NULL;
	size_t nr = 0;
	u64 total = 0;

	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < p->nr_lbr; i++)
		if (p->lbr[i].kind == kind) {
			rows[nr++] = &p->lbr[i];
			total += p->lbr[i].count;
		}
	if (!nr) {
		free(rows);
		return fail(-ENODATA, "the profile has no branch stacks (record with -e lbr or -b, or "
			    "import a perf record -b recording)");
	}
	qsort(rows, nr, sizeof(*rows), cmp_count);
	if (limit && limit < nr)
		nr = limit;
	if (fmt == OUT_JSON) {
		w = jsonw_new(out);
		jsonw_start_object(w);
		jsonw_string_field(w, "kind", kind == HSBPF_LBR_EDGE ? "edge" : "range");
		jsonw_uint_field(w, "total", total);
		jsonw_name(w, "rows");
		jsonw_start_array(w);
	} else {
		fprintf(out, "# %s from branch stacks: %" PRIu64 " in all\n",
			kind == HSBPF_LBR_EDGE ? "taken branches" : "fall-through ranges", total);
		fprintf(out, "%9s %8s  %-34s %-34s %s\n", "Count", "Percent",
			kind == HSBPF_LBR_EDGE ? "From" : "First", kind == HSBPF_LBR_EDGE ? "To" : "Last",
			"Object");
	}
	for (size_t i = 0; i < nr; i++) {
		const struct profile_lbr *l = rows[i];
		char a[160], b[160];
		struct sym_result ra, rb;

		end_name(sy, l, l->a, a, sizeof(a), &ra);
		end_name(sy, l, l->b, b, sizeof(b), &rb);
		if (w) {
			char x[32], y[32];

			snprintf(x, sizeof(x), "%#" PRIx64, ra.vaddr);
			snprintf(y, sizeof(y), "%#" PRIx64, rb.vaddr);
			jsonw_start_object(w);
			jsonw_uint_field(w, "count", l->count);
			jsonw_string_field(w, kind == HSBPF_LBR_EDGE ? "from" : "first", x);
			jsonw_string_field(w, kind == HSBPF_LBR_EDGE ? "to" : "last", y);
			jsonw_string_field(w, "from_symbol", a);
			jsonw_string_field(w, "to_symbol", b);
			jsonw_string_field(w, "dso", ra.dso);
			jsonw_end_object(w);
		} else {
			char ea[4 * sizeof(a)], eb[4 * sizeof(b)], eo[64];

			fprintf(out, "%9" PRIu64 " %7.2f%%  %-34.34s %-34.34s %.12s\n", l->count,
				100.0 * l->count / total, str__escape(a, ea, sizeof(ea)),
				str__escape(b, eb, sizeof(eb)), str__escape(path__base(ra.dso), eo, sizeof(eo)));
		}
	}
	if (w) {
		jsonw_end_array(w);
		jsonw_end_object(w);
		jsonw_destroy(&w);
	}
	free(rows);
	return 0;
}
