// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* top's model without the kernel: the slots of each interval's map fed by hand, a profile whose process maps the hot7030 fixture, and the text
 * lines at several widths; Python's Self from stack leaves fed by hand, in a process mapping
 * the pyloop fixture (a function named as CPython's evaluation loop). */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/elf_image.h"
#include "helpers.h"
#include "report/callchain.h"
#include "hsbpf.h"
#include "symbols/symbolizer.h"
#include "report/pyself.h"
#include "report/top.h"
#include "report/top_pyself.h"

#define PID 4242
#define BASE 0x555555554000ull

static struct profile *p;
static struct top *t;
static u64 work_70, work_30;	/* ELF addresses of the fixture's two functions */

static void setup(void)
{
	struct elf_image *img = elf_image__open(fixture("hot7030"));

	cr_assert_not_null(img);
	for (size_t i = 0; i < img->nr_funcs; i++) {
		if (!strcmp(img->funcs[i].name, "work_70"))
			work_70 = img->funcs[i].addr;
		if (!strcmp(img->funcs[i].name, "work_30"))
			work_30 = img->funcs[i].addr;
	}
	elf_image__close(img);
	cr_assert(work_70 && work_30);
	p = profile__new();
	cr_assert_not_null(p);
	/* the whole file mapped from offset 0, as the loader maps a PIE's first segment */
	cr_assert_eq(profile__add_mapping(p, PID, 0, BASE, 0x10000, 0, fixture("hot7030"), NULL, 0), 0);
	cr_assert_eq(profile__add_comm(p, PID, 0, "hot7030", false), 0);
	cr_assert_eq(profile__add_comm(p, PID + 1, 0, "other", false), 0);
	t = top__new(p, NULL);
	cr_assert_not_null(t);
}

static void teardown(void)
{
	top__free(t);
	profile__free(p);
}

TestSuite(top, .init = setup, .fini = teardown);

static struct profile_sample slot(u32 pid, u64 ip, u64 count)
{
	return (struct profile_sample){ .pid = pid, .ip = ip, .count = count, .weight = count * 1000 };
}

static double row_count(const struct hist_row *rows, size_t nr, const char *sym)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(rows[i].sym, sym))
			return rows[i].count;
	return -1;
}

/* each interval's map holds that interval's samples; top accumulates and decays them per key */
Test(top, intervals_accumulate_and_decay)
{
	struct top_view acc = { .key = SORT_SYM }, dec = acc;
	struct profile_sample s1[] = { slot(PID, BASE + work_70 + 4, 70), slot(PID, BASE + work_30 + 4, 30) };
	struct profile_sample s2[] = { slot(PID, BASE + work_30 + 4, 100) };
	const struct hist_row *rows;
	size_t nr;
	double total;

	dec.decay = true;
	cr_assert_eq(top__update_from(t, s1, 2), 0);
	top__status(t)->interval_s = 1;
	cr_assert_eq(top__update_from(t, s2, 1), 0);	/* work_70 idle, work_30 +100 */
	cr_assert_eq(top__rows(t, &acc, &rows, &nr, &total), 0);
	cr_assert_eq(nr, 2);
	cr_expect_eq(total, 200);
	cr_expect_eq(row_count(rows, nr, "work_30"), 130);
	cr_expect_eq(row_count(rows, nr, "work_70"), 70);
	cr_expect_str_eq(rows[0].sym, "work_30", "most samples first");
	cr_expect_eq(top__status(t)->total, 200);
	cr_expect_eq(top__status(t)->rate, 100, "the last interval's rate: %f", top__status(t)->rate);
	cr_expect_eq(top__status(t)->keys, 2);
	cr_expect_eq(top__status(t)->slots, 1, "the last interval's map");
	cr_assert_eq(top__rows(t, &dec, &rows, &nr, &total), 0);
	cr_expect_float_eq(row_count(rows, nr, "work_70"), 70 * TOP_DECAY, 1e-9);
	cr_expect_float_eq(row_count(rows, nr, "work_30"), 30 * TOP_DECAY + 100, 1e-9);
}

/* a key back after idle intervals adds to what it had; IPs show as ELF addresses */
Test(top, a_key_seen_again_adds_up)
{
	struct top_view v = { .key = SORT_IP };
	struct profile_sample a = slot(PID, BASE + work_70, 50), b = slot(PID, BASE + work_70, 5);
	const struct hist_row *rows;
	size_t nr;
	double total;

	cr_assert_eq(top__update_from(t, &a, 1), 0);
	cr_assert_eq(top__update_from(t, NULL, 0), 0);
	cr_assert_eq(top__update_from(t, &b, 1), 0);
	cr_assert_eq(top__rows(t, &v, &rows, &nr, &total), 0);
	cr_assert_eq(nr, 1);
	cr_expect_eq(rows[0].count, 55);
	cr_expect_eq(rows[0].vaddr, work_70, "IPs are shown as ELF addresses");
	cr_expect_str_eq(rows[0].sym, "work_70");
}

Test(top, groups_filters_and_zooms)
{
	struct profile_sample s[] = {
		slot(PID, BASE + work_70 + 4, 60), slot(PID, BASE + work_70 + 8, 10),
		slot(PID, BASE + work_30 + 4, 30), slot(PID + 1, 0x1000, 150),
	};
	struct top_view v = { .key = SORT_PID };
	const struct hist_row *rows;
	size_t nr;
	double total;

	cr_assert_eq(top__update_from(t, s, 4), 0);
	cr_assert_eq(top__rows(t, &v, &rows, &nr, &total), 0);
	cr_assert_eq(nr, 2);
	cr_expect_eq(rows[0].count, 150);
	cr_expect_eq(rows[1].pid, PID);
	cr_expect_str_eq(rows[1].comm, "hot7030");
	cr_expect_eq(rows[1].count, 100);
	/* the two IPs of work_70 make one function row */
	v.key = SORT_SYM;
	cr_assert_eq(top__rows(t, &v, &rows, &nr, &total), 0);
	cr_expect_eq(row_count(rows, nr, "work_70"), 70);
	cr_expect_eq(row_count(rows, nr, "[unknown]"), 150, "the other process's unmapped IP");
	v.zoom_pid = PID;
	cr_assert_eq(top__rows(t, &v, &rows, &nr, &total), 0);
	cr_expect_eq(nr, 2);
	cr_expect_eq(total, 100);
	strcpy(v.filter, "WORK_3");
	cr_assert_eq(top__rows(t, &v, &rows, &nr, &total), 0);
	cr_assert_eq(nr, 1);
	cr_expect_str_eq(rows[0].sym, "work_30");
	cr_expect_eq(total, 30);
	v.order = TOP_BY_NAME;
	v.filter[0] = 0;
	cr_assert_eq(top__rows(t, &v, &rows, &nr, &total), 0);
	cr_expect_str_eq(rows[0].sym, "work_30", "by name");
}

/* every line fits the width, and the columns that go first when it is narrow are the
 * container, then the process, then the object */
Test(top, lines_fit_the_width)
{
	struct profile_sample s[] = { slot(PID, BASE + work_70 + 4, 70), slot(PID, BASE + work_30 + 4, 30) };
	static const int widths[] = { 40, 60, 80, 100, 200 };
	struct top_view v = { 0 };
	const struct hist_row *rows;
	char l1[512], l2[512], line[512];
	size_t nr;
	double total;

	cr_assert_eq(top__update_from(t, s, 2), 0);
	top__status(t)->event = "cpu-clock";
	top__status(t)->target = "all CPUs";
	top__status(t)->freq = 999;
	for (int g = 0; g < TOP_NR_KEYS; g++) {
		v.key = top_keys[g];
		cr_assert_eq(top__rows(t, &v, &rows, &nr, &total), 0);
		for (size_t w = 0; w < ARRAY_SIZE(widths); w++) {
			top__format_header(top__status(t), &v, total, widths[w], l1, l2, sizeof(l1));
			cr_expect_leq(strlen(l1), (size_t)widths[w], "%s", l1);
			cr_expect_leq(strlen(l2), (size_t)widths[w], "%s", l2);
			top__format_titles(&v, widths[w], line, sizeof(line));
			cr_expect_leq(strlen(line), (size_t)widths[w], "%s", line);
			for (size_t i = 0; i < nr; i++) {
				top__format_row(&v, &rows[i], total, widths[w], line, sizeof(line));
				cr_expect_leq(strlen(line), (size_t)widths[w], "%s", line);
			}
		}
	}
	v.key = SORT_SYM;
	cr_assert_eq(top__rows(t, &v, &rows, &nr, &total), 0);
	top__format_titles(&v, 80, line, sizeof(line));
	cr_expect(strstr(line, "Symbol") && strstr(line, "Object") && strstr(line, "Process"), "%s", line);
	cr_expect(!strstr(line, "Container"), "%s", line);
	top__format_titles(&v, 100, line, sizeof(line));
	cr_expect(strstr(line, "Container"), "%s", line);
	top__format_row(&v, &rows[0], total, 80, line, sizeof(line));
	cr_expect(strstr(line, "70.00% +-"), "%s", line);
	cr_expect(strstr(line, "work_70") && strstr(line, "hot7030 4242"), "%s", line);
	top__format_header(top__status(t), &v, total, 80, l1, l2, sizeof(l1));
	cr_expect(strstr(l1, "cpu-clock 999 Hz") && strstr(l1, "dropped 0"), "%s", l1);
	cr_expect(strstr(l2, "functions by samples"), "%s", l2);
}

Test(top, grouping_names)
{
	enum sort_key g;

	cr_expect_eq(top__parse_key("bb", &g), 0);
	cr_expect_eq(g, SORT_BB);
	cr_expect_eq(top__parse_key("cgroup", &g), 0);
	cr_expect_eq(g, SORT_CGROUP);
	cr_expect_eq(top__parse_key("pid", &g), 0);
	cr_expect_eq(g, SORT_PID);
	cr_expect_eq(top__parse_key("nonsense", &g), -EINVAL);
}

/* past the key limit, keys that faded are forgotten and their samples counted as aged out */
Test(top, faded_keys_age_out_past_the_limit)
{
	struct profile_sample old = slot(PID, BASE + work_30, 7), hot = slot(PID, BASE + work_70, 1);
	struct profile_sample both[] = { hot, slot(PID, BASE + work_70 + 1, 1) };
	struct top_view v = { .key = SORT_IP };
	const struct hist_row *rows;
	size_t nr;
	double total;

	top__limit_keys(t, 2);
	cr_assert_eq(top__update_from(t, &old, 1), 0);
	for (int i = 0; i < 50; i++)	/* 0.875^50 x 7 < 0.01 */
		cr_assert_eq(top__update_from(t, &hot, 1), 0);
	cr_expect_eq(top__status(t)->keys, 2, "within the limit nothing goes");
	cr_assert_eq(top__update_from(t, both, 2), 0);
	cr_expect_eq(top__status(t)->keys, 2);
	cr_expect_eq(top__status(t)->aged_out, 7);
	cr_assert_eq(top__rows(t, &v, &rows, &nr, &total), 0);
	cr_expect_eq(nr, 2);
	cr_expect_eq(total, 52, "work_70's keys stay whole");
	cr_assert_eq(top__update_from(t, &hot, 1), 0);
	cr_assert_eq(top__rows(t, &v, &rows, &nr, &total), 0);
	cr_expect_eq(total, 53, "the index still finds the keys kept");
	cr_expect_eq(top__status(t)->keys, 2);
}

/* ---- the rows kept between refreshes (each key linked to its row once) ---- */

/* the same rows, field for field, in the same order: counts to the last bit */
static void expect_same_rows(struct top *a, struct top *b, const struct top_view *v, size_t limit)
{
	const struct hist_row *ra, *rb;
	size_t na, nb;
	double ta, tb;

	cr_assert_eq(top__rows_first(b, v, limit, &rb, &nb, &tb), 0);
	cr_assert_eq(top__rows_first(a, v, limit, &ra, &na, &ta), 0);
	cr_assert_eq(na, nb, "key %d: %zu rows, a new view %zu", v->key, na, nb);
	cr_expect_eq(ta, tb, "key %d: total %.17g, a new view's %.17g", v->key, ta, tb);
	for (size_t i = 0; i < na; i++) {
		cr_expect_eq(ra[i].count, rb[i].count, "key %d row %zu: %.17g, a new view's %.17g",
			     v->key, i, ra[i].count, rb[i].count);
		cr_expect_str_eq(ra[i].sym, rb[i].sym, "key %d row %zu", v->key, i);
		cr_expect_str_eq(ra[i].dso, rb[i].dso);
		cr_expect_str_eq(ra[i].comm, rb[i].comm);
		cr_expect_str_eq(ra[i].container, rb[i].container);
		cr_expect_eq(ra[i].pid, rb[i].pid);
		cr_expect_eq(ra[i].vaddr, rb[i].vaddr);
		cr_expect_eq(ra[i].many_pids, rb[i].many_pids);
		cr_expect_eq(ra[i].many_comms, rb[i].many_comms);
	}
}

/* the views a refresh may show, every grouping in both modes, zoomed and filtered */
static void views(struct top_view *out, size_t *n)
{
	*n = 0;
	for (int g = 0; g < TOP_NR_KEYS; g++) {
		for (int d = 0; d < 2; d++)
			out[(*n)++] = (struct top_view){ .key = top_keys[g], .decay = d };
	}
	out[(*n)++] = (struct top_view){ .key = SORT_SYM, .decay = true, .zoom_pid = PID };
	out[(*n)++] = (struct top_view){ .key = SORT_IP, .decay = true, .filter = "work_3" };
	out[(*n)++] = (struct top_view){ .key = SORT_SYM, .order = TOP_BY_NAME };
	out[(*n)++] = (struct top_view){ .key = SORT_PID, .order = TOP_BY_PROCESS, .decay = true };
}

/* Intervals fed to a top asked for its rows after each (the views changing between, as keys
 * do on the screen) and to one asked only at the end: the same rows, counts to the last bit,
 * and the order of a full sort in the first rows of a partial one. The known answer: after
 * 60 intervals of work_70 and one of work_30 at the start, work_30 has faded away
 * (7 x 0.875^59 < 0.01) in the decayed view and not in the totals */
Test(top, rows_kept_are_a_new_views)
{
	struct top *fresh = top__new(p, NULL);
	struct top_view vs[16], dec = { .key = SORT_SYM, .decay = true };
	const struct hist_row *rows;
	double total, want = 0;
	size_t nv, nr;

	cr_assert_not_null(fresh);
	views(vs, &nv);
	for (int i = 0; i < 60; i++) {
		/* ties in counts (the two unknown IPs, work_70's two IPs) and a faded key */
		struct profile_sample s[] = {
			slot(PID, BASE + work_70 + 8, 3), slot(PID, BASE + work_70 + 12, 3),
			slot(PID + 1, 0x1000 + i % 2, 2), slot(PID + 1, 0x2000, 2),
			slot(PID, BASE + work_30 + 4, 7),
		};
		size_t n = i ? 4 : 5;

		cr_assert_eq(top__update_from(t, s, n), 0);
		cr_assert_eq(top__update_from(fresh, s, n), 0);
		cr_assert_eq(top__rows_first(t, &vs[i % nv], i % 3, &rows, &nr, &total), 0);
		want = want * TOP_DECAY + 6;
	}
	for (size_t i = 0; i < nv; i++) {
		expect_same_rows(t, fresh, &vs[i], 0);
		expect_same_rows(t, fresh, &vs[i], 2);
		expect_same_rows(t, fresh, &vs[(i + 1) % nv], 1);
	}
	cr_assert_eq(top__rows(t, &dec, &rows, &nr, &total), 0);
	cr_expect_eq(row_count(rows, nr, "work_70"), want, "%.17g, not %.17g", row_count(rows, nr, "work_70"), want);
	cr_expect_eq(row_count(rows, nr, "work_30"), -1, "faded");
	dec.decay = false;
	cr_assert_eq(top__rows_first(t, &dec, 1, &rows, &nr, &total), 0);
	cr_assert_eq(nr, 1);
	cr_expect_str_eq(rows[0].sym, "work_70");
	cr_expect_eq(rows[0].count, 360);
	cr_expect_eq(total, 360 + 240 + 7, "the other process's unknown IPs, and work_30 whole");
	top__free(fresh);
}

/* a key whose process's mapping was not read yet is [unknown], then its function's once the
 * mapping comes: it leaves the unknown row for its own */
Test(top, a_key_named_later_moves_to_its_row)
{
	struct profile_sample s = slot(PID + 2, BASE + work_70 + 4, 10);
	struct top_view v = { .key = SORT_SYM };
	struct top *fresh;
	const struct hist_row *rows;
	size_t nr;
	double total;

	cr_assert_eq(top__update_from(t, &s, 1), 0);
	cr_assert_eq(top__rows(t, &v, &rows, &nr, &total), 0);
	cr_assert_eq(nr, 1);
	cr_expect_str_eq(rows[0].sym, "[unknown]");
	cr_assert_eq(profile__add_mapping(p, PID + 2, 0, BASE, 0x10000, 0, fixture("hot7030"), NULL, 0), 0);
	cr_assert_eq(profile__add_comm(p, PID + 2, 0, "late", false), 0);
	cr_assert_eq(top__update_from(t, &s, 1), 0);
	cr_assert_eq(top__rows(t, &v, &rows, &nr, &total), 0);
	cr_assert_eq(nr, 1, "the unknown row gone");
	cr_expect_str_eq(rows[0].sym, "work_70");
	cr_expect_str_eq(rows[0].comm, "late");
	cr_expect_eq(rows[0].count, 20);
	fresh = top__new(p, NULL);
	cr_assert_not_null(fresh);
	cr_assert_eq(top__update_from(fresh, &s, 1), 0);
	cr_assert_eq(top__update_from(fresh, &s, 1), 0);
	expect_same_rows(t, fresh, &v, 0);
	top__free(fresh);
}

/* A process that execs another program (or a PID reused) is a new key for the same PID: by
 * process, a row per program; by function, the same function's samples of both programs in
 * one row of several commands. The rows kept already held the PID's old program */
Test(top, a_pid_that_execs_is_a_new_row)
{
	const u64 later = 1000000, base2 = 0x7f0000000000ull;
	struct profile_sample old = slot(PID, BASE + work_70 + 4, 30), now = slot(PID, base2 + work_70 + 4, 12);
	struct top_view by_pid = { .key = SORT_PID }, by_sym = { .key = SORT_SYM };
	struct top *fresh;
	const struct hist_row *rows;
	size_t nr;
	double total;

	now.exec_ns = later;
	cr_assert_eq(top__update_from(t, &old, 1), 0);
	cr_assert_eq(top__rows(t, &by_pid, &rows, &nr, &total), 0);
	cr_assert_eq(top__rows(t, &by_sym, &rows, &nr, &total), 0);
	cr_assert_eq(profile__add_comm(p, PID, later, "reborn", true), 0);
	cr_assert_eq(profile__add_mapping(p, PID, later, base2, 0x10000, 0, fixture("hot7030"), NULL, 0), 0);
	cr_assert_eq(top__update_from(t, &now, 1), 0);
	cr_assert_eq(top__rows(t, &by_pid, &rows, &nr, &total), 0);
	cr_assert_eq(nr, 2);
	cr_expect_str_eq(rows[0].comm, "hot7030");
	cr_expect_eq(rows[0].count, 30);
	cr_expect_str_eq(rows[1].comm, "reborn");
	cr_expect_eq(rows[1].count, 12);
	cr_expect_eq(rows[1].pid, PID);
	cr_assert_eq(top__rows(t, &by_sym, &rows, &nr, &total), 0);
	cr_assert_eq(nr, 1);
	cr_expect_str_eq(rows[0].sym, "work_70");
	cr_expect_eq(rows[0].count, 42);
	cr_expect(rows[0].many_comms, "two programs");
	cr_expect(!rows[0].many_pids, "one PID");
	fresh = top__new(p, NULL);
	cr_assert_not_null(fresh);
	cr_assert_eq(top__update_from(fresh, &old, 1), 0);
	cr_assert_eq(top__update_from(fresh, &now, 1), 0);
	expect_same_rows(t, fresh, &by_pid, 0);
	expect_same_rows(t, fresh, &by_sym, 0);
	top__free(fresh);
}

/* a value cut to its column ends in '+', as report's tables cut them: "work_70+0x4" in a
 * narrow Symbol column is not shown as a shorter, wrong offset */
Test(top, a_cut_value_is_marked)
{
	struct profile_sample s[] = { slot(PID, BASE + work_70 + 4, 70) };
	struct top_view v = { .key = SORT_IP };
	const struct hist_row *rows;
	char line[512], want[64];
	size_t nr;
	double total;

	cr_assert_eq(top__update_from(t, s, 1), 0);
	cr_assert_eq(top__rows(t, &v, &rows, &nr, &total), 0);
	cr_assert_eq(nr, 1);
	cr_assert_str_eq(rows[0].sym, "work_70");
	/* Samples, Percent, Address: 43 columns; the symbol gets 7 of 51 */
	top__format_row(&v, &rows[0], total, 51, line, sizeof(line));
	snprintf(want, sizeof(want), "%#-18" PRIx64 " work_7+", work_70 + 4);
	cr_expect(strstr(line, want) && line[strlen(line) - 1] == '+', "%s", line);
	/* with room, whole and unmarked */
	top__format_row(&v, &rows[0], total, 60, line, sizeof(line));
	snprintf(want, sizeof(want), "%#-18" PRIx64 " work_70+0x4", work_70 + 4);
	cr_expect(strstr(line, want), "%s", line);
	cr_expect_neq(line[strlen(line) - 1], '+', "%s", line);
	/* the helper: cut to width - 1 and marked, or whole */
	cr_expect_eq(str__fit("liblzma.so.5.4.1+0x15ae0", 22, line, sizeof(line)), 22);
	cr_expect_str_eq(line, "liblzma.so.5.4.1+0x15+");
	cr_expect_eq(str__fit("abc", 3, line, sizeof(line)), 3);
	cr_expect_str_eq(line, "abc");
	cr_expect_eq(str__fit("abc", 1, line, sizeof(line)), 1);
	cr_expect_str_eq(line, "+");
}

#define K 0xffffffff81000000ull

/* a profile of kernel stacks with known names: leaf <- mid_a <- entry 3 samples, leaf <-
 * mid_b <- entry 1, leaf alone 1 */
static struct profile *stacks_profile(void)
{
	struct profile *sp = profile__new();
	u64 a[] = { K + 0x100, K + 0x1005, K + 0x3005 }, b[] = { K + 0x104, K + 0x2005, K + 0x3005 };
	u64 alone[] = { K + 0x108 };
	s64 sa, sb, sl;

	cr_assert(sp);
	cr_assert_eq(profile__add_comm(sp, 7, 0, "proc", false), 0);
	cr_assert_eq(profile__add_ksym(sp, K, "k_start"), 0);
	cr_assert_eq(profile__add_ksym(sp, K + 0x80, "k_leaf"), 0);
	cr_assert_eq(profile__add_ksym(sp, K + 0x1000, "k_mid_a"), 0);
	cr_assert_eq(profile__add_ksym(sp, K + 0x2000, "k_mid_b"), 0);
	cr_assert_eq(profile__add_ksym(sp, K + 0x3000, "k_entry"), 0);
	cr_assert_eq(profile__add_ksym(sp, K + 0x4000, ""), 0);
	sa = profile__add_stack(sp, a, 3, 0, 0);
	sb = profile__add_stack(sp, b, 3, 0, 0);
	sl = profile__add_stack(sp, alone, 1, 0, 0);
	cr_assert(sa >= 0 && sb >= 0 && sl >= 0);
	cr_assert_eq(profile__add_stack_sample(sp, &(struct profile_stack_sample){ .pid = 7,
			.flags = HSBPF_KEY_KERNEL, .kernel = sa + 1, .count = 3, .weight = 3 }), 0);
	cr_assert_eq(profile__add_stack_sample(sp, &(struct profile_stack_sample){ .pid = 7,
			.flags = HSBPF_KEY_KERNEL, .kernel = sb + 1, .count = 1, .weight = 1 }), 0);
	cr_assert_eq(profile__add_stack_sample(sp, &(struct profile_stack_sample){ .pid = 7,
			.flags = HSBPF_KEY_KERNEL, .kernel = sl + 1, .count = 1, .weight = 1 }), 0);
	profile__finish(sp);
	return sp;
}

static char *callers_text(const struct callchain *cc, const char *sym, double min_share, int width)
{
	char *text = NULL;
	size_t len;
	FILE *out = open_memstream(&text, &len);

	cr_assert(out);
	cr_assert_eq(top__print_callers(cc, sym, NULL, TOP_GRAPH_DEPTH, min_share, 4, width, out), 0);
	fclose(out);
	return text;
}

/* top -g --stdio's callers tree: from the function up, shares of its stacks' samples, most
 * first, a stack that ends at it "[no caller]", small branches left out, lines cut marked */
Test(top, callers_trees_go_from_the_function_up)
{
	struct profile *sp = stacks_profile();
	struct symbolizer *sy = symbolizer__new(sp);
	struct callchain *cc = sy ? callchain__new(sp, sy) : NULL;
	char *text;

	cr_assert(cc);
	text = callers_text(cc, "k_leaf", 0.05, 100);
	cr_expect_str_eq(text,
		"    callers of k_leaf (5 samples with stacks):\n"
		"       60.00%  k_mid_a [k]\n"
		"         60.00%  k_entry [k]\n"
		"       20.00%  [no caller]\n"
		"       20.00%  k_mid_b [k]\n"
		"         20.00%  k_entry [k]\n");
	free(text);
	text = callers_text(cc, "k_leaf", 0.25, 100);
	cr_expect_str_eq(text,
		"    callers of k_leaf (5 samples with stacks):\n"
		"       60.00%  k_mid_a [k]\n"
		"         60.00%  k_entry [k]\n");
	free(text);
	/* a caller's own callers: k_mid_b's stack alone */
	text = callers_text(cc, "k_mid_b", 0.05, 100);
	cr_expect_str_eq(text,
		"    callers of k_mid_b (1 sample with stacks):\n"
		"      100.00%  k_entry [k]\n");
	free(text);
	text = callers_text(cc, "k_leaf", 0.25, 20);
	cr_expect_str_eq(text,
		"    callers of k_le+\n"
		"       60.00%  k_mi+\n"
		"         60.00%  k_+\n");
	free(text);
	text = callers_text(cc, "nowhere", 0.05, 100);
	cr_expect_str_eq(text, "");
	free(text);
	callchain__free(cc);
	symbolizer__free(sy);
	profile__free(sp);
}

/* top keeps its call graph from refresh to refresh while the profile's string table grows
 * (new processes' names, paths, kernel symbols) and moves: the graph's names are its own.
 * Known answer: the tree above, after a megabyte of new names */
Test(top, a_kept_call_graph_outlives_the_string_table_growing)
{
	struct profile *sp = stacks_profile();
	struct symbolizer *sy = symbolizer__new(sp);
	struct callchain *cc = sy ? callchain__new_live(sp, sy) : NULL;
	char name[64], *text;

	cr_assert(cc);
	for (u32 i = 0; i < 40000; i++) {
		snprintf(name, sizeof(name), "a-process-name-that-grows-the-table-%u", i);
		cr_assert_eq(profile__add_comm(sp, 100 + i, i, name, false), 0);
	}
	text = callers_text(cc, "k_leaf", 0.25, 100);
	cr_expect_str_eq(text,
		"    callers of k_leaf (5 samples with stacks):\n"
		"       60.00%  k_mid_a [k]\n"
		"         60.00%  k_entry [k]\n");
	free(text);
	callchain__free(cc);
	symbolizer__free(sy);
	profile__free(sp);
}

/* --memory: slots of allocations made (their objects in 1/1024ths, their bytes) and of the live
 * set now, as the kernel's; a rate of the last interval, totals, the live set with its growth,
 * and the estimate's variance B s (1 - p)/p, s the key's mean size */
static struct profile_sample mem_slot(u64 ip, u32 kind, u64 bytes, u64 objects)
{
	return (struct profile_sample){ .pid = PID, .ip = ip, .flags = HSBPF_KEY_MEMORY |
		kind << HSBPF_KEY_STATE_SHIFT, .count = objects << HSBPF_MEM_OBJ_SHIFT, .weight = bytes };
}

static const struct hist_row *find_row(const struct hist_row *rows, size_t nr, const char *sym)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(rows[i].sym, sym))
			return &rows[i];
	return NULL;
}

Test(top, memory_views)
{
	u64 a = BASE + work_70 + 4, b = BASE + work_30 + 4;
	struct profile_sample s1[] = {
		mem_slot(a, HSBPF_MEM_ALLOC, 4000000, 1000), mem_slot(b, HSBPF_MEM_ALLOC, 1000000, 10),
		mem_slot(b, HSBPF_MEM_INUSE, 300000, 3),
	}, s2[] = {
		mem_slot(a, HSBPF_MEM_ALLOC, 1000000, 250), mem_slot(b, HSBPF_MEM_INUSE, 500000, 5),
	};
	struct top_view v = { .key = SORT_SYM, .memory = true, .decay = true };
	double total, p = -expm1(-4000 / 65536.0);
	const struct hist_row *rows, *r;
	char l1[512], l2[512], line[512];
	size_t nr;

	top__memory(t, 65536);
	top__status(t)->interval_s = 2;
	cr_assert_eq(top__update_from(t, s1, 3), 0);
	cr_assert_eq(top__update_from(t, s2, 2), 0);
	cr_expect_eq(top__status(t)->total, 6000000, "bytes allocated since the start");
	cr_expect_eq(top__status(t)->rate, 500000);
	cr_expect_eq(top__status(t)->live_bytes, 500000);
	/* alloc_space, the last interval: work_30 allocated nothing in it */
	cr_assert_eq(top__rows(t, &v, &rows, &nr, &total), 0);
	cr_assert_eq(nr, 1);
	cr_expect_str_eq(rows[0].sym, "work_70");
	cr_expect_float_eq(rows[0].count, 500000, 1e-6, "bytes per second");
	cr_expect_float_eq(rows[0].var, 1e6 * 4000 * (1 - p) / p / 4, 1e-3);
	top__format_titles(&v, 120, line, sizeof(line));
	cr_expect(strstr(line, "Bytes/s") && strstr(line, "Percent +-CI95") && !strstr(line, "Growth"), "%s", line);
	top__format_row(&v, &rows[0], total, 120, line, sizeof(line));
	cr_expect(strstr(line, "488.3 KiB") && strstr(line, "100.00% +-"), "%s", line);
	/* since the start */
	v.decay = false;
	cr_assert_eq(top__rows(t, &v, &rows, &nr, &total), 0);
	cr_assert_eq(nr, 2);
	cr_expect_float_eq(find_row(rows, nr, "work_70")->count, 5000000, 1e-6);
	cr_expect_float_eq(find_row(rows, nr, "work_70")->var, 5e6 * 4000 * (1 - p) / p, 1e-3);
	cr_expect_float_eq(find_row(rows, nr, "work_30")->count, 1000000, 1e-6);
	v.mview = MEMORY_ALLOC_OBJECTS;
	cr_assert_eq(top__rows(t, &v, &rows, &nr, &total), 0);
	cr_expect_float_eq(find_row(rows, nr, "work_70")->count, 1250, 1e-9);
	cr_expect_float_eq(find_row(rows, nr, "work_70")->var, 1250 * (1 - p) / p, 1e-6);
	cr_expect_float_eq(find_row(rows, nr, "work_30")->count, 10, 1e-9);
	/* live now, decay or not, and its growth since the first interval */
	for (int d = 0; d < 2; d++) {
		v.decay = d;
		v.mview = MEMORY_INUSE_SPACE;
		cr_assert_eq(top__rows(t, &v, &rows, &nr, &total), 0);
		cr_assert_eq(nr, 1);
		r = find_row(rows, nr, "work_30");
		cr_assert_not_null(r);
		cr_expect_float_eq(r->count, 500000, 1e-6);
		cr_expect_float_eq(r->first, 300000, 1e-6);
		top__format_titles(&v, 120, line, sizeof(line));
		cr_expect(strstr(line, "Live") && strstr(line, "Growth"), "%s", line);
		top__format_row(&v, r, total, 120, line, sizeof(line));
		cr_expect(strstr(line, "488.3 KiB") && strstr(line, "+195.3 KiB"), "%s", line);
		v.mview = MEMORY_INUSE_OBJECTS;
		cr_assert_eq(top__rows(t, &v, &rows, &nr, &total), 0);
		cr_expect_float_eq(rows[0].count, 5, 1e-9);
		cr_expect_float_eq(rows[0].first, 3, 1e-9);
	}
	top__status(t)->target = "4242";
	top__format_header(top__status(t), &v, total, 200, l1, l2, sizeof(l1));
	cr_expect(strstr(l1, "one sampled per 64.0 KiB") && strstr(l1, "488.3 KiB/s allocated") &&
		  strstr(l1, "live 488.3 KiB"), "%s", l1);
	cr_expect(strstr(l2, "functions by inuse_objects, live now") && strstr(l2, "allocated 5.7 MiB"), "%s", l2);
}

/* ---- Python's Self: the evaluation loop's samples given to the Python frames the stacks
 * had first, per interval ---- */

#define PY_PID (PID + 2)

static u64 py_loop, py_free;	/* pyloop's _PyEval_EvalFrameDefault and PyObject_Free */
static u64 py_seventy, py_thirty;	/* two Python frames */

static void py_setup(void)
{
	struct elf_image *img = elf_image__open(fixture("pyloop"));

	cr_assert_not_null(img);
	for (size_t i = 0; i < img->nr_funcs; i++) {
		if (!strcmp(img->funcs[i].name, PYSELF_EVAL_LOOP))
			py_loop = BASE + img->funcs[i].addr;
		if (!strcmp(img->funcs[i].name, "PyObject_Free"))
			py_free = BASE + img->funcs[i].addr;
	}
	elf_image__close(img);
	cr_assert(py_loop && py_free);
	cr_assert_eq(profile__add_mapping(p, PY_PID, 0, BASE, 0x10000, 0, fixture("pyloop"), NULL, 0), 0);
	cr_assert_eq(profile__add_comm(p, PY_PID, 0, "python3", false), 0);
	py_seventy = HSBPF_PY_FRAME(0x7f0000001000ull, 12);
	py_thirty = HSBPF_PY_FRAME(0x7f0000002000ull, 12);
	cr_assert_eq(profile__add_pyframe(p, PY_PID, py_seventy, "seventy", "w.py", 3), 0);
	cr_assert_eq(profile__add_pyframe(p, PY_PID, py_thirty, "thirty", "w.py", 7), 0);
	profile__sort_pyframes(p);
	cr_assert_eq(top__python_self(t, true), 0);
}

/* after the suite's setup, the Python process: the tests' slots need its addresses */
static void py_init(void)
{
	py_setup();
}

static struct top_pyleaf leaf(u64 frame, u64 stack, u64 count)
{
	return (struct top_pyleaf){ .pid = PY_PID, .stack = stack, .frame = frame, .count = count };
}

static void py_rows(const struct hist_row **rows, size_t *nr, double *total)
{
	struct top_view v = { .key = SORT_SYM };

	cr_assert_eq(top__rows(t, &v, rows, nr, total), 0);
}

/* the loop's samples go to the frames as the stacks' leaves grew; what Python called (a C
 * function) keeps its own; the total is the flat histogram's */
Test(top, python_self_is_the_python_functions, .init = py_init)
{
	struct profile_sample s[] = { slot(PY_PID, py_loop + 4, 100), slot(PY_PID, py_free + 2, 20) };
	/* two stacks end in seventy (two callers), one in thirty */
	struct top_pyleaf l[] = { leaf(py_seventy, 11, 50), leaf(py_seventy, 13, 20),
				  leaf(py_thirty, 15, 30) };
	const struct hist_row *rows;
	size_t nr;
	double total;

	cr_assert_eq(top__update_from_stacks(t, s, 2, l, 3), 0);
	py_rows(&rows, &nr, &total);
	cr_expect_eq(total, 120);
	cr_expect_eq(row_count(rows, nr, "seventy"), 70);
	cr_expect_eq(row_count(rows, nr, "thirty"), 30);
	cr_expect_eq(row_count(rows, nr, "PyObject_Free"), 20);
	cr_expect_eq(row_count(rows, nr, PYSELF_EVAL_LOOP), -1, "no row left to the loop");
	cr_expect_str_eq(rows[0].sym, "seventy");
	cr_expect_str_eq(rows[0].dso, "[python]");
}

/* the leaves' counts are totals since the start: each interval moves their growth; the loop
 * keeps what the stacks did not claim (samples whose stacks had no Python frame) */
Test(top, python_self_moves_each_intervals_growth, .init = py_init)
{
	struct profile_sample s1[] = { slot(PY_PID, py_loop + 4, 100) };
	struct profile_sample s2[] = { slot(PY_PID, py_loop + 4, 50) };
	struct top_pyleaf l1[] = { leaf(py_seventy, 11, 70), leaf(py_thirty, 15, 30) };
	struct top_pyleaf l2[] = { leaf(py_seventy, 11, 100), leaf(py_thirty, 15, 40) };
	const struct hist_row *rows;
	size_t nr;
	double total;

	cr_assert_eq(top__update_from_stacks(t, s1, 1, l1, 2), 0);
	cr_assert_eq(top__update_from_stacks(t, s2, 1, l2, 2), 0);
	py_rows(&rows, &nr, &total);
	cr_expect_eq(total, 150);
	cr_expect_eq(row_count(rows, nr, "seventy"), 100);
	cr_expect_eq(row_count(rows, nr, "thirty"), 40);
	cr_expect_eq(row_count(rows, nr, PYSELF_EVAL_LOOP), 10);
	/* an idle interval: nothing grew, nothing moves */
	cr_assert_eq(top__update_from_stacks(t, s2, 1, l2, 2), 0);
	py_rows(&rows, &nr, &total);
	cr_expect_eq(row_count(rows, nr, PYSELF_EVAL_LOOP), 60);
	cr_expect_eq(row_count(rows, nr, "seventy"), 100);
}

/* never more than the loop gained in the group: the last frames (by stack) get less, and
 * the rest at the next refresh; another group's leaves (another cgroup) take nothing */
Test(top, python_self_takes_at_most_the_loops_samples, .init = py_init)
{
	struct profile_sample s[] = { slot(PY_PID, py_loop + 4, 60) };
	struct top_pyleaf l[] = { leaf(py_seventy, 11, 70), leaf(py_thirty, 15, 30),
				  leaf(py_thirty, 17, 500) };
	const struct hist_row *rows;
	size_t nr;
	double total;

	l[2].cgroup_id = 99;
	cr_assert_eq(top__update_from_stacks(t, s, 1, l, 3), 0);
	py_rows(&rows, &nr, &total);
	cr_expect_eq(total, 60);
	cr_expect_eq(row_count(rows, nr, "seventy"), 60);
	cr_expect_eq(row_count(rows, nr, "thirty"), -1);
	cr_expect_eq(row_count(rows, nr, PYSELF_EVAL_LOOP), -1);
	/* the stacks' last samples are the next interval's flat ones: asked again, once */
	cr_assert_eq(top__update_from_stacks(t, s, 1, l, 3), 0);
	py_rows(&rows, &nr, &total);
	cr_expect_eq(row_count(rows, nr, "seventy"), 70);
	cr_expect_eq(row_count(rows, nr, "thirty"), 30);
	cr_expect_eq(row_count(rows, nr, PYSELF_EVAL_LOOP), 20);
	cr_assert_eq(top__update_from_stacks(t, s, 1, l, 3), 0);
	py_rows(&rows, &nr, &total);
	cr_expect_eq(row_count(rows, nr, PYSELF_EVAL_LOOP), 80, "nothing left to ask");
}
