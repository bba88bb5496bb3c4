// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Comparing two profiles' rates, shares or estimates: the tests, the correction for many keys, hsbpf
 * diff's table. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "record/memory.h"
#include "report/profile_diff.h"

#define Z95 1.959963984540054

const char *profile_diff__method(const struct diff_basis *basis)
{
	if (basis->compare == DIFF_SHARES)
		return "two-proportion z-test (Fisher's exact test when an expected count is under 5), "
		       "Benjamini-Hochberg correction, false discovery rate 5%";
	if (basis->compare == DIFF_ESTIMATES)
		return "z-test of the difference of two estimates, each with its sampling variance, "
		       "Benjamini-Hochberg correction, false discovery rate 5%";
	return "z-test of two Poisson rates given both counts (the exact binomial test when an "
	       "expected count is under 5), Benjamini-Hochberg correction, false discovery rate 5%";
}

const char *profile_diff__question(const struct diff_basis *basis)
{
	if (basis->compare == DIFF_SHARES)
		return "shares (samples of a key over all samples of its profile)";
	if (basis->compare == DIFF_ESTIMATES)
		return "estimates of sampled allocations (each stands for what it was sampled from)";
	return basis->work ? "rates (samples per unit of work, in BASE's sampling period)" :
	       "rates (samples per second of each recording, in BASE's sampling period)";
}

int profile_diff__parse_compare(const char *s, enum diff_compare *c)
{
	if (!strcmp(s, "rates"))
		*c = DIFF_RATES;
	else if (!strcmp(s, "shares"))
		*c = DIFF_SHARES;
	else
		return -EINVAL;
	return 0;
}

int profile_diff__parse_work(const char *s, double *work)
{
	char *end;

	work[0] = strtod(s, &end);
	if (end == s || *end != ',' || !(work[0] > 0))
		return -EINVAL;
	s = end + 1;
	work[1] = strtod(s, &end);
	if (end == s || *end || !(work[1] > 0))
		return -EINVAL;
	return 0;
}

const char *profile_diff__test_name(enum diff_test t)
{
	return t == DIFF_TEST_Z ? "z" : t == DIFF_TEST_FISHER ? "fisher" :
	       t == DIFF_TEST_BINOMIAL ? "binom" : "-";
}

/* Wilson's interval of count/total, from the half-width report shows (hist__ci95) */
static void wilson(u64 count, u64 total, double *lo, double *hi)
{
	double n = total, p, center;

	if (!total) {
		*lo = 0;
		*hi = 1;
		return;
	}
	p = count / n;
	center = (p + Z95 * Z95 / (2 * n)) / (1 + Z95 * Z95 / n);
	*lo = fmax(0, center - hist__ci95(count, total));
	*hi = fmin(1, center + hist__ci95(count, total));
}

static double log_choose(u64 n, u64 k)
{
	return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0);
}

/* two-sided Fisher's exact test of the 2x2 table (a, na - a; b, nb - b): the probability of
 * every table with the same margins no likelier than this one */
static double fisher(u64 a, u64 na, u64 b, u64 nb)
{
	u64 m = a + b, n = na + nb;
	u64 lo = m > nb ? m - nb : 0, hi = m < na ? m : na;
	double base = log_choose(n, m), obs, sum = 0;

	obs = log_choose(na, a) + log_choose(nb, b) - base;
	for (u64 x = lo; x <= hi; x++) {
		double lp = log_choose(na, x) + log_choose(nb, m - x) - base;

		/* a relative tolerance: tables as likely as the observed one count too */
		if (lp <= obs + 1e-7)
			sum += exp(lp);
	}
	return fmin(1, sum);
}

void profile_diff__test(u64 a, u64 na, u64 b, u64 nb, struct diff_stat *s)
{
	double la, ha, lb, hb, pool, se, z, n = (double)na + nb, emin;
	u64 m = a + b;

	*s = (struct diff_stat){ .a = a, .na = na, .b = b, .nb = nb, .p = 1, .q = 1 };
	s->pa = na ? (double)a / na : 0;
	s->pb = nb ? (double)b / nb : 0;
	s->delta = s->pb - s->pa;
	wilson(a, na, &la, &ha);
	wilson(b, nb, &lb, &hb);
	/* Newcombe's hybrid score interval: each share's Wilson bounds combined */
	s->lo = s->delta - sqrt((s->pb - lb) * (s->pb - lb) + (ha - s->pa) * (ha - s->pa));
	s->hi = s->delta + sqrt((hb - s->pb) * (hb - s->pb) + (s->pa - la) * (s->pa - la));
	if (!na || !nb || (a == na && b == nb) || (!a && !b))
		return;		/* nothing to test: an empty profile, or the same share by definition */
	/* the smallest expected count of the table (in/out of the key, BASE/NEW) */
	emin = fmin(fmin(m, n - m) * na / n, fmin(m, n - m) * nb / n);
	if (emin < 5 && fmin(m, n - m) < 1e6) {
		s->test = DIFF_TEST_FISHER;
		s->p = fisher(a, na, b, nb);
		return;
	}
	s->test = DIFF_TEST_Z;
	pool = m / n;
	se = sqrt(pool * (1 - pool) * (1.0 / na + 1.0 / nb));
	z = se > 0 ? fabs(s->delta) / se : 0;
	s->p = erfc(z / M_SQRT2);
}

/* the score interval of a Poisson mean from count x (Wilson's, for a rate) */
static void poisson_score(u64 x, double *lo, double *hi)
{
	double c = x + Z95 * Z95 / 2, h = Z95 * sqrt(x + Z95 * Z95 / 4);

	*lo = fmax(0, c - h);
	*hi = c + h;
}

/* two-sided exact binomial test of k of m at p: every outcome no likelier than k */
static double binomial_exact(u64 k, u64 m, double p)
{
	double obs, sum = 0, lp0 = log(p), lq0 = log1p(-p);

	obs = log_choose(m, k) + k * lp0 + (m - k) * lq0;
	for (u64 x = 0; x <= m; x++) {
		double lp = log_choose(m, x) + x * lp0 + (m - x) * lq0;

		if (lp <= obs + 1e-7)
			sum += exp(lp);
	}
	return fmin(1, sum);
}

void profile_diff__test_rates(u64 a, double ea, u64 b, double eb, struct diff_stat *s)
{
	double la, ha, lb, hb, pi, mu, emin, sd;
	u64 m = a + b;

	*s = (struct diff_stat){ .a = a, .b = b, .p = 1, .q = 1 };
	if (!(ea > 0) || !(eb > 0))
		return;
	s->pa = a / ea;
	s->pb = b / eb;
	s->delta = s->pb - s->pa;
	poisson_score(a, &la, &ha);
	poisson_score(b, &lb, &hb);
	la /= ea, ha /= ea, lb /= eb, hb /= eb;
	/* the same construction as Newcombe's for shares: each rate's score bounds combined */
	s->lo = s->delta - sqrt((s->pb - lb) * (s->pb - lb) + (ha - s->pa) * (ha - s->pa));
	s->hi = s->delta + sqrt((hb - s->pb) * (hb - s->pb) + (s->pa - la) * (s->pa - la));
	if (!m)
		return;		/* no samples on either side: nothing to test */
	pi = eb / (ea + eb);
	mu = m * pi;
	emin = fmin(mu, m - mu);
	if (emin < 5 && m < 1000000) {
		s->test = DIFF_TEST_BINOMIAL;
		s->p = binomial_exact(b, m, pi);
		return;
	}
	s->test = DIFF_TEST_Z;
	sd = sqrt(m * pi * (1 - pi));
	s->p = sd > 0 ? erfc(fabs(b - mu) / sd / M_SQRT2) : 1;
}

void profile_diff__test_estimates(u64 a, double va, u64 b, double vb, struct diff_stat *s)
{
	double sd = sqrt(fmax(0, va) + fmax(0, vb));

	*s = (struct diff_stat){ .a = a, .b = b, .pa = a, .pb = b, .p = 1, .q = 1 };
	s->delta = s->pb - s->pa;
	s->lo = s->delta - Z95 * sd;
	s->hi = s->delta + Z95 * sd;
	if (!a && !b)
		return;		/* nothing on either side: nothing to test */
	s->test = DIFF_TEST_Z;
	/* no variance: allocations far larger than the period, counted exactly */
	s->p = sd > 0 ? erfc(fabs(s->delta) / sd / M_SQRT2) : s->delta ? 0 : 1;
}

void profile_diff__compare(const struct diff_basis *basis, u64 a, u64 na, u64 b, u64 nb,
			   struct diff_stat *s)
{
	if (basis->compare == DIFF_SHARES) {
		profile_diff__test(a, na, b, nb, s);
		return;
	}
	profile_diff__test_rates(a, basis->exposure[0], b, basis->exposure[1], s);
	s->na = na;
	s->nb = nb;
}

int profile_diff__basis(struct diff_basis *basis, enum diff_compare c, const struct profile *base,
			const char *base_name, const struct profile *new, const char *new_name,
			const double *work)
{
	const struct profile *ps[2] = { base, new };
	const char *names[2] = { base_name, new_name };

	*basis = (struct diff_basis){ .compare = c, .work = work != NULL };
	if (c == DIFF_SHARES || c == DIFF_ESTIMATES)
		return 0;
	for (int i = 0; i < 2; i++) {
		basis->exposure[i] = work ? work[i] : ps[i]->meta.duration_ns / 1e9;
		if (!(basis->exposure[i] > 0))
			return fail(-EINVAL, work ? "the work of '%s' must be positive" :
				    "'%s' has no duration to compare rates by (--work BASE,NEW gives "
				    "the work each run did; --compare shares compares shares)", names[i]);
	}
	/* NEW's samples counted in BASE's: a longer period makes each sample stand for more */
	if (base->meta.period && new->meta.period)
		basis->exposure[1] *= (double)base->meta.period / new->meta.period;
	return 0;
}

struct pidx {
	double p;
	size_t i;
};

static int cmp_pidx(const void *x, const void *y)
{
	const struct pidx *a = x, *b = y;

	if (a->p != b->p)
		return a->p < b->p ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

int profile_diff__adjust(const double *p, double *q, size_t n)
{
	struct pidx *s = malloc((n + 1) * sizeof(*s));
	double min = 1;

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		s[i] = (struct pidx){ .p = p[i], .i = i };
	qsort(s, n, sizeof(*s), cmp_pidx);
	/* q of the k-th smallest: min over j >= k of p_(j) * n / j */
	for (size_t k = n; k-- > 0;) {
		min = fmin(min, s[k].p * n / (k + 1));
		q[s[k].i] = min;
	}
	free(s);
	return 0;
}

int profile_diff__correct(struct diff_stat *st, size_t n)
{
	double *p = calloc(n + 1, sizeof(*p));
	size_t m = 0;
	int err;

	if (!p)
		return -ENOMEM;
	/* only what was tested counts toward the number of tests */
	for (size_t i = 0; i < n; i++)
		if (st[i].test != DIFF_TEST_NONE)
			p[m++] = st[i].p;
	err = profile_diff__adjust(p, p, m);
	m = 0;
	for (size_t i = 0; !err && i < n; i++) {
		if (st[i].test == DIFF_TEST_NONE)
			continue;
		st[i].q = p[m++];
		st[i].significant = st[i].q < DIFF_FDR;
	}
	free(p);
	return err;
}

int profile_diff__check(const struct profile *base, const char *base_name,
			const struct profile *new, const char *new_name, bool force)
{
	bool same = !strcmp(base->meta.event, new->meta.event) &&
		    base->meta.event_type == new->meta.event_type &&
		    base->meta.event_config == new->meta.event_config &&
		    !strcmp(base->meta.unit, new->meta.unit);

	if (same)
		return 0;
	if (!force)
		return fail(-EINVAL, "cannot compare '%s' (%s, %s) with '%s' (%s, %s): different events "
			    "(--force compares them anyway)", base_name, base->meta.event,
			    base->meta.unit, new_name, new->meta.event, new->meta.unit);
	warning("'%s' counts %s (%s) and '%s' %s (%s): comparing different events",
		base_name, base->meta.event, base->meta.unit, new_name, new->meta.event, new->meta.unit);
	return 0;
}

/* ---- the table ---- */

/* the row's columns as report shows them, as one text: for matching rows (label false: whole
 * values, tab-separated), or for the table (an object in brackets after its symbol) */
static char *row_text(const struct hist *h, const struct hist_row *r, bool label)
{
	const struct cells_opts o = {};
	struct cell c[CELLS_MAX];
	int n = sort_key__cells(h->keys, h->nr_keys, &o, r, c);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	for (int i = 0; i < n; i++) {
		if (!label)
			fprintf(m, "%s%s", i ? "\t" : "", c[i].whole ? c[i].whole : c[i].text);
		else if (c[i].aside)
			fprintf(m, c[i].text[0] == '[' ? " %s" : " [%s]", c[i].text);
		else	/* a path by its file name */
			fprintf(m, "%s%s", i ? "  " : "", c[i].cut_left ? path__base(c[i].text) :
				c[i].text);
	}
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static s64 find_row(const struct diff_table *t, const char *key)
{
	/* linear is fine for a table; keys are few thousands at most */
	for (size_t i = 0; i < t->nr; i++)
		if (!strcmp(t->rows[i].key, key))
			return i;
	return -1;
}

static int add_rows(struct diff_table *t, const struct hist *h, int side)
{
	for (size_t i = 0; i < h->nr_rows; i++) {
		const struct hist_row *r = &h->rows[i];
		char *key = row_text(h, r, false);
		s64 j;

		if (!key)
			return -ENOMEM;
		j = find_row(t, key);
		if (j < 0) {
			if (array__reserve((void **)&t->rows, &t->cap, t->nr + 1, sizeof(*t->rows))) {
				free(key);
				return -ENOMEM;
			}
			t->rows[t->nr] = (struct diff_row){ .key = key, .label = row_text(h, r, true) };
			j = t->nr++;	/* the row is there: freed with the table, label or not */
			if (!t->rows[j].label)
				return -ENOMEM;
		} else {
			free(key);
		}
		if (side)
			t->rows[j].st.b += (u64)r->count;
		else
			t->rows[j].st.a += (u64)r->count;
		t->rows[j].var[side] += r->weight;
	}
	return 0;
}

static void set_sym_keys(const enum sort_key *keys, int nr, bool *bb)
{
	*bb = false;
	for (int i = 0; i < nr; i++)
		if (keys[i] == SORT_BB)
			*bb = true;
}

int profile_diff__table(struct diff_table *t, const struct profile *base, const struct profile *new,
			const enum sort_key *keys, int nr_keys, const struct diff_basis *basis)
{
	const struct profile *ps[2] = { base, new };
	int err = 0;
	bool bb;

	t->basis = *basis;
	set_sym_keys(keys, nr_keys, &bb);
	if (bb)
		return fail(-EINVAL, "diff: --sort bb is not supported (blocks differ between builds)");
	for (int side = 0; side < 2 && !err; side++) {
		struct symbolizer *sy = symbolizer__new(ps[side]);
		struct hist *h = hist__new(keys, nr_keys);

		err = !sy || !h ? -ENOMEM : hist__add_profile(h, ps[side], sy);
		if (!err) {
			t->total[side] = (u64)h->total;
			err = add_rows(t, h, side);
		}
		hist__free(h);
		symbolizer__free(sy);
	}
	for (size_t i = 0; !err && i < t->nr; i++) {
		struct diff_stat *s = &t->rows[i].st;

		if (basis->compare == DIFF_ESTIMATES)
			profile_diff__test_estimates(s->a, t->rows[i].var[0], s->b, t->rows[i].var[1], s);
		else
			profile_diff__compare(basis, s->a, t->total[0], s->b, t->total[1], s);
	}
	if (!err) {
		struct diff_stat *st = malloc((t->nr + 1) * sizeof(*st));

		if (!st) {
			err = -ENOMEM;
		} else {
			for (size_t i = 0; i < t->nr; i++)
				st[i] = t->rows[i].st;
			err = profile_diff__correct(st, t->nr);
			for (size_t i = 0; !err && i < t->nr; i++)
				t->rows[i].st = st[i];
			free(st);
		}
	}
	if (err)
		error("cannot compare profiles: %s", strerror(-err));
	return err;
}

static int cmp_rows(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;
	double da = fabs(a->st.delta), db = fabs(b->st.delta);

	if (a->st.significant != b->st.significant)
		return a->st.significant ? -1 : 1;
	if (da != db)
		return da > db ? -1 : 1;
	return strcmp(a->key, b->key);
}

void profile_diff__sort(struct diff_table *t)
{
	qsort(t->rows, t->nr, sizeof(*t->rows), cmp_rows);
}

/* an estimate in the view's unit: bytes as report shows them ("12.5 MiB"), or objects */
static const char *amount(double v, bool bytes, bool sign, char *buf, size_t size)
{
	char b[32];

	if (!bytes)
		snprintf(buf, size, sign ? "%+.0f" : "%.0f", v);
	else
		snprintf(buf, size, "%s%s", v < 0 ? "-" : sign ? "+" : "", memory__bytes(fabs(v), b, sizeof(b)));
	return buf;
}

/* hsbpf diff of sampled allocations: estimates in the view's unit */
static void print_estimates(const struct diff_table *t, const char *base_name, const char *new_name,
			    size_t limit, bool all, FILE *out)
{
	bool bytes = strstr(t->basis.view, "space") != NULL;
	size_t shown = 0, sig = 0, hidden = 0;
	char a[32], b[32], d[32], lo[32], hi[32], ci[72];

	for (size_t i = 0; i < t->nr; i++)
		sig += t->rows[i].st.significant;
	fprintf(out, "# baseline: %s (%s %s)\n# new:      %s (%s %s)\n", base_name,
		amount(t->total[0], bytes, false, a, sizeof(a)), t->basis.view, new_name,
		amount(t->total[1], bytes, false, b, sizeof(b)), t->basis.view);
	fprintf(out, "# compared: %s, %s\n", profile_diff__question(&t->basis), t->basis.view);
	fprintf(out, "# %zu keys, %zu changed significantly\n#\n", t->nr, sig);
	fprintf(out, "%11s %11s %11s  %-27s %9s %-6s %s\n", "Baseline", "New", "Delta",
		"95% CI of delta", "p (adj)", "Test", "Key");
	for (size_t i = 0; i < t->nr; i++) {
		const struct diff_stat *s = &t->rows[i].st;

		if ((limit && shown >= limit) || (!all && !s->significant)) {
			hidden++;
			continue;
		}
		snprintf(ci, sizeof(ci), "[%s, %s]", amount(s->lo, bytes, true, lo, sizeof(lo)),
			 amount(s->hi, bytes, true, hi, sizeof(hi)));
		fprintf(out, "%11s %11s %11s  %-27s %9.2g %-6s %s%s\n", amount(s->pa, bytes, false, a, sizeof(a)),
			amount(s->pb, bytes, false, b, sizeof(b)), amount(s->delta, bytes, true, d, sizeof(d)),
			ci, s->q, profile_diff__test_name(s->test), s->significant ? "* " : "  ",
			t->rows[i].label);
		shown++;
	}
	if (hidden)
		fprintf(out, "# %zu rows not shown%s\n", hidden, all ? "" :
			" (no significant change; --all shows them)");
	fprintf(out, "# * significant: %s\n# p (adj): the p-value adjusted for the number of keys "
		"tested; Baseline, New and Delta in %s estimated from the sampled allocations\n",
		profile_diff__method(&t->basis), bytes ? "bytes" : "objects");
}

void profile_diff__print(const struct diff_table *t, const char *base_name, const char *new_name,
			 size_t limit, bool all, FILE *out)
{
	bool rates = t->basis.compare == DIFF_RATES;
	/* shares in percent of the samples; rates as they are, in samples per unit */
	double k = rates ? 1 : 100;
	size_t shown = 0, sig = 0, hidden = 0;

	if (t->basis.compare == DIFF_ESTIMATES) {
		print_estimates(t, base_name, new_name, limit, all, out);
		return;
	}
	for (size_t i = 0; i < t->nr; i++)
		sig += t->rows[i].st.significant;
	fprintf(out, "# baseline: %s (%" PRIu64 " samples)\n# new:      %s (%" PRIu64 " samples)\n",
		base_name, t->total[0], new_name, t->total[1]);
	fprintf(out, "# compared: %s\n", profile_diff__question(&t->basis));
	if (rates)
		fprintf(out, "# exposure: %.4g %s in baseline, %.4g in new\n", t->basis.exposure[0],
			t->basis.work ? "units of work" : "s", t->basis.exposure[1]);
	fprintf(out, "# %zu keys, %zu changed significantly\n#\n", t->nr, sig);
	fprintf(out, "%9s %9s %9s  %-19s %9s %-6s %s\n", "Baseline", "New", "Delta", "95% CI of delta",
		"p (adj)", "Test", "Key");
	for (size_t i = 0; i < t->nr; i++) {
		const struct diff_stat *s = &t->rows[i].st;
		char ci[32];

		if ((limit && shown >= limit) || (!all && !s->significant)) {
			hidden++;
			continue;
		}
		snprintf(ci, sizeof(ci), "[%+.2f, %+.2f]", k * s->lo, k * s->hi);
		fprintf(out, rates ? "%9.2f %9.2f %+9.2f  %-19s %9.2g %-6s %s%s\n" :
			"%8.2f%% %8.2f%% %+8.2f%%  %-19s %9.2g %-6s %s%s\n", k * s->pa, k * s->pb,
			k * s->delta, ci, s->q, profile_diff__test_name(s->test),
			s->significant ? "* " : "  ", t->rows[i].label);
		shown++;
	}
	if (hidden)
		fprintf(out, "# %zu rows not shown%s\n", hidden, all ? "" :
			" (no significant change; --all shows them)");
	fprintf(out, "# * significant: %s\n# p (adj): the p-value adjusted for the number of keys "
		"tested; %s\n", profile_diff__method(&t->basis), rates ? (t->basis.work ?
		"Baseline, New and Delta in samples per unit of work" :
		"Baseline, New and Delta in samples per second") :
		"Delta in percentage points of all samples");
}

void profile_diff__free(struct diff_table *t)
{
	for (size_t i = 0; i < t->nr; i++) {
		free(t->rows[i].key);
		free(t->rows[i].label);
	}
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
