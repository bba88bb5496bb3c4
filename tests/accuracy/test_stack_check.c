// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* stack_check: the kind of each hand-made (exact, unwound) pair, the location of each address
 * of a hand-made table's functions, and the profile comparison on hand-made profiles (counts,
 * an empty input, a profile without stacks, profiles of different runs). */
#include <criterion/criterion.h>
#include <string.h>
#include "accuracy/stack_check.h"

TestSuite(stack_check);

static const struct {
	const char *what;
	u64 exact[6];
	u32 ne;
	u64 got[6];
	u32 ng;
	enum sc_kind kind;
	u32 at;
} pairs[] = {
	{ "equal", { 1, 2, 3, 4 }, 4, { 1, 2, 3, 4 }, 4, SC_EQUAL, 4 },
	{ "ends early", { 1, 2, 3, 4 }, 4, { 1, 2 }, 2, SC_MISSING, 2 },
	{ "only the pc", { 1, 2, 3 }, 3, { 1 }, 1, SC_MISSING, 1 },
	{ "no stack at all", { 1, 2 }, 2, { 0 }, 0, SC_MISSING, 0 },
	{ "skips one frame", { 1, 2, 3, 4 }, 4, { 1, 3, 4 }, 3, SC_MISSING, 1 },
	{ "skips two frames", { 1, 2, 3, 4, 5 }, 5, { 1, 4, 5 }, 3, SC_MISSING, 1 },
	{ "skips then ends", { 1, 2, 3, 4 }, 4, { 1, 3 }, 2, SC_MISSING, 1 },
	{ "goes on past the end", { 1, 2, 3 }, 3, { 1, 2, 3, 9 }, 4, SC_EXTRA, 3 },
	{ "a frame too many", { 1, 2, 3 }, 3, { 1, 9, 2, 3 }, 4, SC_EXTRA, 1 },
	{ "two too many", { 1, 2, 3 }, 3, { 1, 8, 9, 2, 3 }, 5, SC_EXTRA, 1 },
	{ "wrong caller", { 1, 2, 3 }, 3, { 1, 7, 3 }, 3, SC_WRONG_CALLER, 1 },
	{ "wrong then lost", { 1, 2, 3 }, 3, { 1, 7, 8, 9 }, 4, SC_WRONG_CALLER, 1 },
	{ "wrong pc", { 1, 2 }, 2, { 5, 2 }, 2, SC_WRONG_CALLER, 0 },
	/* both readings possible: a skipped frame is told first */
	{ "skip or extra", { 1, 2, 3, 2 }, 4, { 1, 3, 2 }, 3, SC_MISSING, 1 },
	{ "both empty", { 0 }, 0, { 0 }, 0, SC_EQUAL, 0 },
};

Test(stack_check, kinds_of_hand_made_pairs)
{
	for (size_t i = 0; i < ARRAY_SIZE(pairs); i++) {
		u32 at = 99;
		enum sc_kind k = stack_check__kind(pairs[i].exact, pairs[i].ne, pairs[i].got, pairs[i].ng, &at);

		cr_expect_eq(k, pairs[i].kind, "%s: %s, expected %s", pairs[i].what, sc_kind_names[k],
			     sc_kind_names[pairs[i].kind]);
		cr_expect_eq(at, pairs[i].at, "%s: first difference at %u, expected %u", pairs[i].what, at,
			     pairs[i].at);
	}
}

/* two functions and code without information, ELF addresses from 0x1000:
 *   0x1000-0x1040 f, frameless (-O2): push rbx; sub rsp,32; a push inside the body; add rsp,
 *                 pop rbx, ret at 0x1034; then more body after the early return
 *   0x1040-0x1060 g, rbp frame: push rbp; mov rbp,rsp; ...; pop rbp at 0x105c; ret at 0x105d
 *   0x1060-       no information */
#define R(PC, REG, OFF) { .pc = (PC), .cfa = HSBPF_CFA_REG, .cfa_reg = (REG), .cfa_off = (OFF), \
			  .saved = HSBPF_SAVED_CFA, .ra_off = -8 }
static struct unwind_row rows[] = {
	R(0x00, HSBPF_DWARF_RSP, 8), R(0x01, HSBPF_DWARF_RSP, 16), R(0x05, HSBPF_DWARF_RSP, 48),
	R(0x20, HSBPF_DWARF_RSP, 56), R(0x24, HSBPF_DWARF_RSP, 48), R(0x30, HSBPF_DWARF_RSP, 16),
	R(0x34, HSBPF_DWARF_RSP, 8), R(0x35, HSBPF_DWARF_RSP, 48),
	R(0x40, HSBPF_DWARF_RSP, 8), R(0x41, HSBPF_DWARF_RSP, 16), R(0x44, HSBPF_DWARF_RBP, 16),
	R(0x5d, HSBPF_DWARF_RSP, 8),
	{ .pc = 0x60, .cfa = HSBPF_CFA_NONE },
};
static struct unwind_page page = { .first = 0, .nr = ARRAY_SIZE(rows) };
static struct unwind_table table = { .base = 0x1000, .end = 0x2000, .rows = rows, .nr_rows = ARRAY_SIZE(rows),
				     .pages = &page, .nr_pages = 1 };

Test(stack_check, locations_from_the_rows)
{
	static const struct {
		u64 start, end, vaddr;
		bool plt, ret;
		enum sc_loc loc;
	} cases[] = {
		{ 0x1000, 0x1040, 0x1000, false, false, SC_PROLOGUE },	/* entry */
		{ 0x1000, 0x1040, 0x1003, false, false, SC_PROLOGUE },	/* after push rbx */
		{ 0x1000, 0x1040, 0x1005, false, false, SC_BODY },	/* the body rule reached */
		{ 0x1000, 0x1040, 0x1010, false, false, SC_BODY },
		{ 0x1000, 0x1040, 0x1021, false, false, SC_BODY },	/* a push in the body: deeper */
		{ 0x1000, 0x1040, 0x1031, false, false, SC_EPILOGUE },	/* after add rsp */
		{ 0x1000, 0x1040, 0x1034, false, true, SC_EPILOGUE },	/* the ret */
		{ 0x1000, 0x1040, 0x1036, false, false, SC_BODY },	/* after the early return */
		{ 0x1000, 0x1040, 0x1010, false, true, SC_EPILOGUE },	/* a ret in the body */
		{ 0x1040, 0x1060, 0x1040, false, false, SC_PROLOGUE },
		{ 0x1040, 0x1060, 0x1042, false, false, SC_PROLOGUE },
		{ 0x1040, 0x1060, 0x1044, false, false, SC_BODY },	/* rbp-based from here */
		{ 0x1040, 0x1060, 0x105d, false, true, SC_EPILOGUE },	/* after pop rbp: the ret */
		{ 0x1060, 0x1070, 0x1064, false, false, SC_UNKNOWN },	/* no information */
		{ 0x1000, 0x1040, 0x1050, false, false, SC_UNKNOWN },	/* outside the function */
		{ 0x3000, 0x3040, 0x3010, false, false, SC_UNKNOWN },	/* outside the table */
		{ 0x1000, 0x1040, 0x1010, true, false, SC_PLT },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		enum sc_loc l = stack_check__location(&table, cases[i].start, cases[i].end, cases[i].vaddr,
						      cases[i].plt, cases[i].ret);

		cr_expect_eq(l, cases[i].loc, "%#llx: %s, expected %s", (unsigned long long)cases[i].vaddr,
			     sc_loc_names[l], sc_loc_names[cases[i].loc]);
	}
	cr_expect_eq(stack_check__location(NULL, 0x1000, 0x1040, 0x1010, false, false), SC_UNKNOWN);
	cr_expect_eq(stack_check__location(NULL, 0, 0, 0x1010, true, false), SC_PLT);
}

static void add(struct profile *p, u32 tid, u32 time, const u64 *ips, u32 nr)
{
	struct profile_stack_sample s = { .pid = 7, .count = 1, .weight = 1 };
	struct profile_sample_key k = { .tid = tid, .time = time };
	s64 idx = profile__add_stack(p, ips, nr, HSBPF_STACK_COMPLETE, 0);

	cr_assert_geq(idx, 0);
	s.user = idx + 1;
	cr_assert_eq(profile__add_stack_sample_keyed(p, &s, &k), 0);
}

static struct profile *new_profile(const char *mode)
{
	struct profile *p = profile__new();

	cr_assert(p);
	snprintf(p->meta.call_graph, sizeof(p->meta.call_graph), "%s", mode);
	return p;
}

Test(stack_check, profiles_counted_by_kind)
{
	struct profile *e = new_profile("exact"), *g = new_profile("dwarf");
	const u64 s1[] = { 1, 2, 3 }, s2[] = { 1, 3 }, s3[] = { 1, 9, 2, 3 }, s4[] = { 1, 7, 3 };
	struct stack_check sc;

	for (u32 i = 0; i < 4; i++)
		add(e, 100 + i % 2, i, s1, 3);
	add(g, 100, 0, s1, 3);
	add(g, 101, 1, s2, 2);
	add(g, 100, 2, s3, 4);
	add(g, 101, 3, s4, 3);
	cr_assert_eq(stack_check__profiles(e, g, &sc), 0);
	cr_expect_eq(sc.compared, 4);
	cr_expect_eq(sc.equal, 1);
	/* no mappings: every location unknown, every cause no information */
	cr_expect_eq(sc.at_loc[SC_UNKNOWN], 4);
	cr_expect_eq(sc.n[SC_EQUAL][SC_UNKNOWN], 1);
	cr_expect_eq(sc.n[SC_MISSING][SC_UNKNOWN], 1);
	cr_expect_eq(sc.n[SC_EXTRA][SC_UNKNOWN], 1);
	cr_expect_eq(sc.n[SC_WRONG_CALLER][SC_UNKNOWN], 1);
	cr_expect_eq(sc.cause[SC_CAUSE_NO_INFO], 3);
	cr_expect_str_eq(sc.mode, "dwarf");
	profile__free(e);
	profile__free(g);
}

Test(stack_check, refuses_empty_stackless_and_foreign_profiles)
{
	struct profile *e = new_profile("exact"), *g = new_profile("fp"), *other = new_profile("dwarf");
	struct profile_sample flat = { .pid = 7, .ip = 1, .count = 1, .weight = 1 };
	const u64 s1[] = { 1, 2 };
	struct stack_check sc;

	/* empty */
	cr_expect_eq(stack_check__profiles(e, g, &sc), -ENODATA);
	/* samples without stacks */
	cr_assert_eq(profile__add_sample(g, &flat), 0);
	add(e, 1, 0, s1, 2);
	cr_expect_eq(stack_check__profiles(e, g, &sc), -ENODATA);
	/* another run: other keys, another count */
	add(g, 1, 5, s1, 2);
	cr_expect_eq(stack_check__profiles(e, g, &sc), -EINVAL);
	add(other, 1, 0, s1, 2);
	add(other, 1, 1, s1, 2);
	cr_expect_eq(stack_check__profiles(e, other, &sc), -EINVAL);
	/* not an exact profile */
	cr_expect_eq(stack_check__profiles(other, other, &sc), -EINVAL);
	profile__free(e);
	profile__free(g);
	profile__free(other);
}
