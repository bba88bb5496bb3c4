// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* truth_file: a truth made by hand round-trips through its file, its lookups find what was
 * put in, and tables out of order or pointing nowhere are refused. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <string.h>
#include "helpers.h"
#include "profile/truth_file.h"

TestSuite(truth_file, .fini = cleanup_tmpdir);

/* two objects; /bin/a has instructions at 0x10 (5 times) and 0x14 (7 times) and an edge
 * 0x14 -> 0x10 taken 6 times; /lib/b one instruction at 0x20 (1 time) */
static struct truth *hand_made(void)
{
	struct truth *t = truth__new();
	static const struct truth_insn insns[] = {
		{ .obj = 0, .size = 4, .vaddr = 0x10, .count = 5 },
		{ .obj = 0, .size = 2, .vaddr = 0x14, .count = 7 },
		{ .obj = 1, .size = 1, .vaddr = 0x20, .count = 1 },
	};
	static const struct truth_edge edge = { .src_obj = 0, .dst_obj = 0, .src = 0x14, .dst = 0x10,
						.count = 6, .kind = EDGE_TAKEN };
	const char *paths[] = { "/bin/a", "/lib/b" };

	cr_assert(t);
	for (size_t i = 0; i < 2; i++) {
		s64 off = truth__add_str(t, paths[i]);

		cr_assert_geq(off, 0);
		cr_assert_eq(array__reserve((void **)&t->objects, &t->cap_objects, i + 1,
					    sizeof(*t->objects)), 0);
		t->objects[t->nr_objects++] = (struct truth_object){ .path = off };
	}
	cr_assert_eq(array__reserve((void **)&t->insns, &t->cap_insns, 3, sizeof(*t->insns)), 0);
	memcpy(t->insns, insns, sizeof(insns));
	t->nr_insns = 3;
	cr_assert_eq(array__reserve((void **)&t->edges, &t->cap_edges, 1, sizeof(*t->edges)), 0);
	t->edges[t->nr_edges++] = edge;
	t->meta.total_insns = 13;
	snprintf(t->meta.command, sizeof(t->meta.command), "a --flag");
	return t;
}

static void check_hand_made(const struct truth *t)
{
	const struct truth_insn *in;

	cr_expect_eq(t->nr_objects, 2);
	cr_expect_eq(truth__object(t, "/lib/b"), 1);
	cr_expect_eq(truth__object(t, "/bin/a"), 0);
	cr_expect_eq(truth__object(t, "/bin/c"), TRUTH_NO_OBJECT);
	in = truth__insn(t, 0, 0x14);
	cr_assert(in);
	cr_expect_eq(in->count, 7);
	cr_expect_eq(in->size, 2);
	cr_expect_null(truth__insn(t, 0, 0x12), "between two instructions");
	cr_expect_null(truth__insn(t, 1, 0x10), "another object's address");
	cr_expect_eq(truth__insn(t, 1, 0x20)->count, 1);
	cr_assert_eq(t->nr_edges, 1);
	cr_expect_eq(t->edges[0].count, 6);
	cr_expect_eq(t->edges[0].kind, EDGE_TAKEN);
	cr_expect_eq(t->meta.total_insns, 13);
	cr_expect_str_eq(t->meta.command, "a --flag");
}

Test(truth_file, round_trip_and_lookups)
{
	char path[4096];
	struct truth *t = hand_made(), *back;

	check_hand_made(t);
	snprintf(path, sizeof(path), "%s/hand.truth", tmpdir());
	cr_assert_eq(truth__write(t, path), 0);
	cr_assert_eq(truth__read(path, &back), 0);
	check_hand_made(back);
	cr_expect_eq(back->nr_cnodes, 0, "no calling-context tree was written");
	truth__free(back);
	truth__free(t);
}

Test(truth_file, table_orders)
{
	struct truth_insn a = { .obj = 0, .vaddr = 0x20 }, b = { .obj = 1, .vaddr = 0x10 };
	struct truth_edge e = { .src = 0x10, .dst = 0x20, .kind = EDGE_TAKEN }, f = e;
	struct truth_cblock x = { .node = 1, .obj = 0, .vaddr = 0x30 }, y = { .node = 2, .vaddr = 0x10 };

	cr_expect_lt(truth_insn__cmp(&a, &b), 0, "by object first");
	cr_expect_gt(truth_insn__cmp(&b, &a), 0);
	cr_expect_eq(truth_insn__cmp(&a, &a), 0);
	f.kind = EDGE_NOT_TAKEN;
	cr_expect_lt(truth_edge__cmp(&e, &f), 0, "by kind last");
	f.dst = 0x18;
	cr_expect_gt(truth_edge__cmp(&e, &f), 0, "by destination before kind");
	cr_expect_lt(truth_cblock__cmp(&x, &y), 0, "by node first");
}

/* tables the readers binary-search or index must be in order and point inside */
Test(truth_file, disorder_and_bad_references_are_refused, .init = cr_redirect_stderr)
{
	char path[4096];
	struct truth *t = hand_made(), *back = NULL;
	struct truth_insn swap = t->insns[0];

	snprintf(path, sizeof(path), "%s/bad.truth", tmpdir());
	t->insns[0] = t->insns[1];
	t->insns[1] = swap;
	cr_assert_eq(truth__write(t, path), 0);
	cr_expect_eq(truth__read(path, &back), -EINVAL, "instructions out of order");
	cr_expect_null(back);
	t->insns[1] = t->insns[0];
	t->insns[0] = swap;
	t->edges[0].dst_obj = 5;
	cr_assert_eq(truth__write(t, path), 0);
	cr_expect_eq(truth__read(path, &back), -EINVAL, "an edge to no object");
	t->edges[0].dst_obj = 0;
	t->objects[1].path = 1000000;
	cr_assert_eq(truth__write(t, path), 0);
	cr_expect_eq(truth__read(path, &back), -EINVAL, "a path outside the strings");
	truth__free(t);
}
