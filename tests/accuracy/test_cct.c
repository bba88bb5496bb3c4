// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cct: the calling-context tree of the truth against trees computed by hand on the fixtures
 * (tests/fixtures/cct.c, cct_exc.cc), whose leaves and recursions are written in assembly so
 * that every instruction is counted by hand; and the file section's checks. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "helpers.h"
#include "symbols/elf_image.h"
#include "accuracy/truth.h"

TestSuite(cct, .fini = cleanup_tmpdir, .timeout = 300);

/* a truth with each node's path of names, "a;b;c" from the thread's root down */
struct tree {
	struct truth *t;
	char **path;
	u64 *incl;
	bool *sizeless;		/* the function's symbol has no size (callgrind ignores those) */
};

static void tree_free(struct tree *tr)
{
	for (size_t i = 0; tr->path && i < tr->t->nr_cnodes; i++)
		free(tr->path[i]);
	free(tr->path);
	free(tr->incl);
	free(tr->sizeless);
	truth__free(tr->t);
}

/* the tree of prog (a fixture's name, or a path) run with args; name names its files */
static void tree_run(struct tree *tr, const char *prog, const char *name, const char *args)
{
	struct elf_image **imgs;
	struct run_result r;
	char out[512];

	snprintf(out, sizeof(out), "%s/cct-%s.truth", tmpdir(), name);
	run(&r, "%s truth -o %s -- %s %s >/dev/null", hsbpf_bin(), out, prog[0] == '/' ? prog : fixture(prog),
	    args);
	cr_assert_eq(r.status, 0, "truth %s %s: %d: %s", prog, args, r.status, r.err);
	cr_assert_eq(truth__read(out, &tr->t), 0);
	cr_assert(tr->t->meta.cct, "no calling contexts in %s", out);
	imgs = calloc(tr->t->nr_objects + 1, sizeof(*imgs));
	tr->path = calloc(tr->t->nr_cnodes + 1, sizeof(*tr->path));
	tr->incl = calloc(tr->t->nr_cnodes + 1, sizeof(*tr->incl));
	tr->sizeless = calloc(tr->t->nr_cnodes + 1, sizeof(*tr->sizeless));
	cr_assert(imgs && tr->path && tr->incl && tr->sizeless);
	for (u32 o = 0; o < tr->t->nr_objects; o++)
		imgs[o] = elf_image__open(truth__str(tr->t, tr->t->objects[o].path));
	for (size_t i = 0; i < tr->t->nr_cnodes; i++) {
		const struct truth_cnode *n = &tr->t->cnodes[i];
		const struct elf_func *f = n->obj < tr->t->nr_objects && imgs[n->obj] ?
					   elf_image__func_at(imgs[n->obj], n->func) : NULL;
		const char *name = f && f->addr == n->func ? f->name : "?";
		const char *up = n->parent == TRUTH_NO_NODE ? NULL : tr->path[n->parent];

		tr->sizeless[i] = f && !f->size;

		cr_assert(asprintf(&tr->path[i], "%s%s%s", up ? up : "", up ? ";" : "", name) > 0);
	}
	for (u32 o = 0; o < tr->t->nr_objects; o++)
		elf_image__close(imgs[o]);
	free(imgs);
	truth__cct_inclusive(tr->t, tr->incl);
}

static void tree_of(struct tree *tr, const char *fix, const char *arg)
{
	tree_run(tr, fix, arg, arg);
}

/* the node whose path ends in suffix (whole names), or -1; fails if two do in one thread */
static long node(const struct tree *tr, const char *suffix)
{
	long found = -1;
	size_t sl = strlen(suffix);

	for (size_t i = 0; i < tr->t->nr_cnodes; i++) {
		const char *p = tr->path[i];
		size_t pl = strlen(p);

		if (pl < sl || strcmp(p + pl - sl, suffix) || (pl > sl && p[pl - sl - 1] != ';'))
			continue;
		cr_assert(found < 0 || tr->t->cnodes[found].thread != tr->t->cnodes[i].thread,
			  "two nodes end in %s: %s and %s", suffix, tr->path[found], p);
		found = i;
	}
	return found;
}

/* the node at suffix: entered calls times, self and inclusive instructions as given */
static void expect_node(const struct tree *tr, const char *suffix, u64 calls, u64 self, u64 incl)
{
	long n = node(tr, suffix);

	cr_assert_geq(n, 0, "no node %s", suffix);
	cr_expect_eq(tr->t->cnodes[n].calls, calls, "%s: %llu calls, expected %llu", suffix,
		     (unsigned long long)tr->t->cnodes[n].calls, (unsigned long long)calls);
	cr_expect_eq(tr->t->cnodes[n].self, self, "%s: self %llu, expected %llu", suffix,
		     (unsigned long long)tr->t->cnodes[n].self, (unsigned long long)self);
	cr_expect_eq(tr->incl[n], incl, "%s: inclusive %llu, expected %llu", suffix,
		     (unsigned long long)tr->incl[n], (unsigned long long)incl);
}

/* every instruction is in exactly one context, and each context's blocks make its self */
static void expect_whole(const struct tree *tr)
{
	u64 sum = 0, *self = calloc(tr->t->nr_cnodes + 1, sizeof(*self));

	cr_assert(self);
	for (size_t i = 0; i < tr->t->nr_cnodes; i++)
		sum += tr->t->cnodes[i].self;
	cr_expect_eq(sum, tr->t->meta.total_insns, "contexts hold %llu instructions, the run %llu",
		     (unsigned long long)sum, (unsigned long long)tr->t->meta.total_insns);
	for (size_t i = 0; i < tr->t->nr_cblocks; i++)
		self[tr->t->cblocks[i].node] += tr->t->cblocks[i].insns;
	for (size_t i = 0; i < tr->t->nr_cnodes; i++)
		cr_expect_eq(self[i], tr->t->cnodes[i].self, "%s: blocks %llu, self %llu", tr->path[i],
			     (unsigned long long)self[i], (unsigned long long)tr->t->cnodes[i].self);
	free(self);
}

Test(cct, recursion_of_known_depth)
{
	struct tree tr = {};

	tree_of(&tr, "cct", "rec");
	/* rec(5) .. rec(1): test, je, sub, call, ret; rec(0): test, je, ret */
	expect_node(&tr, "main;rec", 1, 5, 28);
	expect_node(&tr, "main;rec;rec;rec", 1, 5, 18);
	expect_node(&tr, "main;rec;rec;rec;rec;rec;rec", 1, 3, 3);
	cr_expect_lt(node(&tr, "main;rec;rec;rec;rec;rec;rec;rec"), 0, "deeper than rec(0)");
	cr_expect_eq(tr.t->meta.cct_unmatched_rets, 0);
	expect_whole(&tr);
	tree_free(&tr);
}

Test(cct, mutual_recursion)
{
	struct tree tr = {};

	tree_of(&tr, "cct", "mutual");
	expect_node(&tr, "main;is_even", 1, 5, 24);
	expect_node(&tr, "main;is_even;is_odd", 1, 5, 19);
	expect_node(&tr, "main;is_even;is_odd;is_even;is_odd", 1, 5, 9);
	expect_node(&tr, "main;is_even;is_odd;is_even;is_odd;is_even", 1, 4, 4);
	cr_expect_lt(node(&tr, "is_even;is_even"), 0);
	expect_whole(&tr);
	tree_free(&tr);
}

Test(cct, tail_call_replaces_the_frame)
{
	struct tree tr = {};
	long n;

	tree_of(&tr, "cct", "tail");
	/* tailer: nop, jmp; leaf3 in its place under main: nop, nop, ret */
	expect_node(&tr, "main;tailer", 1, 2, 2);
	expect_node(&tr, "main;leaf3", 1, 3, 3);
	n = node(&tr, "main;leaf3");
	cr_expect_eq(tr.t->cnodes[n].kind, CCT_TAIL);
	cr_expect_lt(node(&tr, "tailer;leaf3"), 0);
	expect_whole(&tr);
	tree_free(&tr);
}

Test(cct, longjmp_out_of_three_frames)
{
	struct tree tr = {};

	tree_of(&tr, "cct", "longjmp");
	cr_expect_geq(node(&tr, "main;lj_top;l1;l2;l3"), 0);
	/* after the longjmp, lj_top goes on in its own frame: after_jump is its callee */
	expect_node(&tr, "main;lj_top;after_jump", 1, 3, 3);
	cr_expect_lt(node(&tr, "l3;after_jump"), 0);
	cr_expect_geq(tr.t->meta.cct_longjmps, 1);
	cr_expect_eq(tr.t->meta.cct_unmatched_rets, 0);
	expect_whole(&tr);
	tree_free(&tr);
}

Test(cct, exception_through_two_frames)
{
	struct tree tr = {};
	long n;

	tree_of(&tr, "cct_exc", "x");
	cr_expect_geq(node(&tr, "main;top;mid;thrower"), 0);
	/* the handler runs in top's frame; after_exc in main's */
	n = node(&tr, "main;top;caught");
	cr_assert_geq(n, 0, "caught is not top's callee");
	cr_expect_eq(tr.t->cnodes[n].calls, 1);
	n = node(&tr, "main;after_exc");
	cr_assert_geq(n, 0, "after_exc is not main's callee");
	cr_expect_eq(tr.t->cnodes[n].calls, 1);
	cr_expect_lt(node(&tr, "thrower;caught"), 0);
	cr_expect_geq(tr.t->meta.cct_unwinds, 1);
	cr_expect_eq(tr.t->meta.cct_unmatched_rets, 0);
	expect_whole(&tr);
	tree_free(&tr);
}

/* a tail node entered by a conditional jump: at -O2 the throw is in thrower.cold, which
 * thrower enters by je; its calls are those jumps (before: 0), one a throw. thrower itself is
 * called 2N times; both are mid's callees (the cold part takes thrower's place) */
Test(cct, cold_part_entered_by_a_conditional_jump)
{
	struct tree tr = {};
	long n;

	tree_run(&tr, "cxx/throwcold", "throwcold", "3000");
	n = node(&tr, "main;_Z3midi;_Z7throweri.cold");
	cr_assert_geq(n, 0, "no thrower.cold under mid");
	cr_expect_eq(tr.t->cnodes[n].kind, CCT_TAIL);
	cr_expect_eq(tr.t->cnodes[n].calls, 3000);
	n = node(&tr, "main;_Z3midi;_Z7throweri");
	cr_assert_geq(n, 0, "no thrower under mid");
	cr_expect_eq(tr.t->cnodes[n].calls, 6000);
	n = node(&tr, "main;_Z3midi");
	cr_assert_geq(n, 0, "no mid under main");
	cr_expect_eq(tr.t->cnodes[n].calls, 6000);
	expect_whole(&tr);
	tree_free(&tr);
}

Test(cct, signal_handler)
{
	struct tree tr = {};
	long n;

	tree_of(&tr, "cct", "signal");
	n = node(&tr, "handler");
	cr_assert_geq(n, 0, "no handler node");
	cr_expect_eq(tr.t->cnodes[n].kind, CCT_SIGNAL);
	cr_expect_eq(tr.t->cnodes[n].calls, 1);
	/* delivered inside raise, called from main */
	cr_expect(strstr(tr.path[n], ";main;"), "handler at %s", tr.path[n]);
	expect_node(&tr, "handler;hleaf", 1, 3, 3);
	/* after sigreturn, main goes on in its own frame */
	expect_node(&tr, "main;after_sig", 1, 3, 3);
	cr_expect_eq(tr.t->meta.cct_signals, 1);
	cr_expect_eq(tr.t->meta.cct_sigreturns, 1);
	expect_whole(&tr);
	tree_free(&tr);
}

Test(cct, two_threads_with_different_paths)
{
	struct tree tr = {};
	long a, b;

	tree_of(&tr, "cct", "threads");
	cr_expect_eq(tr.t->meta.threads, 3);
	expect_node(&tr, "ta;path_a", 1, 3, 3);
	expect_node(&tr, "tb;path_b", 1, 3, 3);
	a = node(&tr, "ta;path_a");
	b = node(&tr, "tb;path_b");
	cr_expect_neq(tr.t->cnodes[a].thread, 0);
	cr_expect_neq(tr.t->cnodes[b].thread, 0);
	cr_expect_neq(tr.t->cnodes[a].thread, tr.t->cnodes[b].thread);
	cr_expect_lt(node(&tr, "main;ta"), 0, "ta runs in its own thread");
	expect_whole(&tr);
	tree_free(&tr);
}

/* a 1.1 file (no calling contexts) still reads; hostile trees are refused */
Test(cct, old_files_and_bad_trees)
{
	struct truth_object obj = { .path = 1 };
	struct truth_insn in = { .obj = 0, .size = 1, .vaddr = 0x1000, .count = 3 };
	struct truth_cnode nodes[2] = {
		{ .parent = TRUTH_NO_NODE, .obj = 0, .kind = CCT_ROOT, .func = 0x1000, .calls = 1, .self = 1 },
		{ .parent = 0, .obj = 0, .kind = CCT_CALL, .func = 0x1000, .calls = 1, .self = 2 },
	};
	struct truth_cblock cb[2] = { { 0, 0, 0x1000, 1 }, { 1, 0, 0x1000, 2 } };
	static const char strs[] = "\0/bin/x";
	struct test_section secs[5] = {
		{ 2, strs, sizeof(strs) }, { 3, &obj, sizeof(obj) }, { 4, &in, sizeof(in) },
		{ 6, nodes, sizeof(nodes) }, { 7, cb, sizeof(cb) },
	};
	struct truth *t;
	size_t size;
	void *buf;

	buf = build_container(TRUTH_MAGIC, 1, 1, secs, 3, &size);
	cr_assert_eq(truth__parse(buf, size, "old", &t), 0);
	cr_expect_eq(t->nr_cnodes, 0);
	cr_expect_eq(t->meta.cct, 0);
	truth__free(t);
	free(buf);
	buf = build_container(TRUTH_MAGIC, 1, 2, secs, 5, &size);
	cr_assert_eq(truth__parse(buf, size, "good", &t), 0);
	cr_expect_eq(t->nr_cnodes, 2);
	cr_expect_eq(t->nr_cblocks, 2);
	truth__free(t);
	free(buf);
	nodes[1].parent = 1;	/* its own parent */
	buf = build_container(TRUTH_MAGIC, 1, 2, secs, 5, &size);
	cr_expect_neq(truth__parse(buf, size, "loop", &t), 0);
	free(buf);
	nodes[1].parent = 0;
	cb[1].node = 0;		/* out of order */
	buf = build_container(TRUTH_MAGIC, 1, 2, secs, 5, &size);
	cr_expect_neq(truth__parse(buf, size, "order", &t), 0);
	free(buf);
	cb[1] = (struct truth_cblock){ 5, 0, 0x1000, 2 };	/* no such node */
	buf = build_container(TRUTH_MAGIC, 1, 2, secs, 5, &size);
	cr_expect_neq(truth__parse(buf, size, "node", &t), 0);
	free(buf);
}

/* ---- against callgrind's call graph ---- */

#include <gelf.h>
#include <fcntl.h>
#include <unistd.h>
#include "callgrind.h"

/* the bounds of path's PLT sections (.plt, .plt.got, .plt.sec) and .init, at most 4 */
static size_t plt_ranges(const char *path, u64 (*r)[2])
{
	int fd = open(path, O_RDONLY);
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx, n = 0;

	cr_assert_geq(fd, 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert(e && !elf_getshdrstrndx(e, &shstrndx));
	while ((scn = elf_nextscn(e, scn)) && n < 4) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		if (!strncmp(name, ".plt", 4) || !strcmp(name, ".init")) {
			r[n][0] = sh.sh_addr;
			r[n++][1] = sh.sh_addr + sh.sh_size;
		}
	}
	elf_end(e);
	close(fd);
	return n;
}

struct pair {
	char *caller, *callee;	/* in the program's object */
	u64 calls, incl;
	bool pure;		/* every instruction below stays in the program, none a rep */
};

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	int c = strcmp(x->caller, y->caller);

	return c ? c : strcmp(x->callee, y->callee);
}

/* callgrind's name of a function: its symbol, or its address */
static char *cg_fn_name(const struct tree *tr, long n, const char *prog)
{
	const char *p = tr->path[n], *semi = strrchr(p, ';');
	const char *name = semi ? semi + 1 : p;
	char *s;

	(void)prog;
	if (strcmp(name, "?") && !tr->sizeless[n])
		return strdup(name);
	cr_assert(asprintf(&s, "0x%016llx", (unsigned long long)tr->t->cnodes[n].func) > 0);
	return s;
}

/* is block (obj, vaddr) the source of a rep edge: the hardware retires it once, callgrind
 * counts each iteration */
static bool rep_block(const struct truth *t, u32 obj, u64 vaddr, u64 insns)
{
	(void)insns;
	for (size_t i = 0; i < t->nr_edges; i++)
		if (t->edges[i].kind == EDGE_REP && t->edges[i].src_obj == obj && t->edges[i].src >= vaddr &&
		    t->edges[i].src < vaddr + 64)
			return true;
	return false;
}

/* the truth's caller -> callee pairs inside prog's object, merged over contexts (the
 * inclusive instructions of every call summed, as callgrind does) */
static struct pair *truth_pairs(const struct tree *tr, const char *prog, size_t *nr)
{
	const struct truth *t = tr->t;
	u32 po = truth__object(t, prog);
	bool *impure = calloc(t->nr_cnodes + 1, 1);
	struct pair *ps = calloc(t->nr_cnodes + 1, sizeof(*ps));
	size_t n = 0, o = 0;

	cr_assert(impure && ps && po != TRUTH_NO_OBJECT);
	for (size_t i = 0; i < t->nr_cblocks; i++)
		if (t->cblocks[i].obj != po || rep_block(t, t->cblocks[i].obj, t->cblocks[i].vaddr, 0))
			impure[t->cblocks[i].node] = true;
	for (size_t i = t->nr_cnodes; i-- > 0;)
		if (impure[i] && t->cnodes[i].parent != TRUTH_NO_NODE)
			impure[t->cnodes[i].parent] = true;
	u64 plt[4][2];
	size_t nplt = plt_ranges(prog, plt);

	for (size_t i = 0; i < t->nr_cnodes; i++) {
		const struct truth_cnode *c = &t->cnodes[i];
		bool in_plt = false;

		if (c->parent == TRUTH_NO_NODE || c->obj != po || t->cnodes[c->parent].obj != po ||
		    c->kind != CCT_CALL)
			continue;
		/* callgrind places PLT entries and _init in no object, named by run-time address */
		for (size_t k = 0; k < nplt; k++)
			in_plt |= c->func >= plt[k][0] && c->func < plt[k][1];
		if (in_plt)
			continue;
		ps[n] = (struct pair){ cg_fn_name(tr, c->parent, prog), cg_fn_name(tr, i, prog), c->calls,
				       tr->incl[i], !impure[i] };
		n++;
	}
	if (n > 1)
		qsort(ps, n, sizeof(*ps), cmp_pair);
	for (size_t i = 0; i < n; i++) {
		if (o && !cmp_pair(&ps[o - 1], &ps[i])) {
			ps[o - 1].calls += ps[i].calls;
			ps[o - 1].incl += ps[i].incl;
			ps[o - 1].pure &= ps[i].pure;
			free(ps[i].caller);
			free(ps[i].callee);
		} else {
			ps[o++] = ps[i];
		}
	}
	free(impure);
	*nr = o;
	return ps;
}

struct cg_stats {
	size_t pairs, pure;
};

/* every caller -> callee pair of the program's own functions: the calls agree with
 * callgrind's; so do the inclusive instructions where everything below stays in the program
 * and executes no rep string instruction (elsewhere glibc picks other routines under
 * valgrind's CPU than under QEMU's, and callgrind counts each rep iteration) */
static void compare_calls(const char *prog, const char *arg, const char *args, struct cg_stats *st)
{
	struct tree tr = {};
	struct run_result r;
	struct cg_calls cc;
	struct pair *ps;
	size_t n;

	memset(st, 0, sizeof(*st));
	tree_run(&tr, prog, arg, args);
	run(&r, "valgrind --tool=callgrind --dump-instr=yes --collect-jumps=yes --skip-plt=no "
	    "--callgrind-out-file=%s/cg-%s.out %s %s >/dev/null", tmpdir(), arg, prog[0] == '/' ? prog : fixture(prog),
	    args);
	cr_assert_eq(r.status, 0, "callgrind: %s", r.err);
	{
		char p[512];

		snprintf(p, sizeof(p), "%s/cg-%s.out", tmpdir(), arg);
		cr_assert_eq(callgrind__read_calls(p, &cc), 0);
	}
	{
		const char *path = prog[0] == '/' ? prog : fixture(prog);
		char real[4096];

		cr_assert(realpath(path, real));
		ps = truth_pairs(&tr, real, &n);
		for (size_t i = 0; i < n; i++) {
			const struct cg_call *c = callgrind__pair(&cc, real, ps[i].caller, real, ps[i].callee);

			cr_expect(c, "%s -> %s (%llu calls): callgrind has no such call", ps[i].caller,
				  ps[i].callee, (unsigned long long)ps[i].calls);
			if (!c)
				continue;
			cr_expect_eq(c->calls, ps[i].calls, "%s -> %s: callgrind %llu calls, truth %llu",
				     ps[i].caller, ps[i].callee, (unsigned long long)c->calls,
				     (unsigned long long)ps[i].calls);
			st->pairs++;
			if (ps[i].pure) {
				cr_expect_eq(c->incl, ps[i].incl, "%s -> %s: callgrind %llu inclusive, truth %llu",
					     ps[i].caller, ps[i].callee, (unsigned long long)c->incl,
					     (unsigned long long)ps[i].incl);
				st->pure++;
			}
		}
		for (size_t i = 0; i < n; i++) {
			free(ps[i].caller);
			free(ps[i].callee);
		}
		free(ps);
	}
	callgrind__free_calls(&cc);
	tree_free(&tr);
}

Test(cct, calls_agree_with_callgrind_on_fixtures)
{
	static const char *const args[] = { "rec", "mutual", "longjmp", "signal" };
	struct cg_stats st;

	for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
		compare_calls("cct", args[i], args[i], &st);
		cr_expect_gt(st.pure, 0, "%s: no pair compared", args[i]);
	}
}

Test(cct, calls_agree_with_callgrind_on_gzip)
{
	struct cg_stats st;
	char args[600];

	/* a small input: a few hundred calls of gzip's own functions */
	snprintf(args, sizeof(args), "-c %s", fixture("cct.c"));
	compare_calls("/usr/bin/gzip", "gzip", "-c /usr/share/common-licenses/GPL-3", &st);
	cr_expect_gt(st.pairs, 10, "only %zu pairs compared", st.pairs);
	cr_expect_gt(st.pure, 5, "only %zu pairs compared inclusively", st.pure);
}

/* callgrind nests a tail-called function under the one that jumped; the truth puts it in the
 * jumper's place: tailer -> leaf3 there is main -> leaf3 (tail) here, and callgrind's
 * main -> tailer holds both */
Test(cct, tail_call_against_callgrind)
{
	struct tree tr = {};
	struct run_result r;
	struct cg_calls cc;
	const struct cg_call *c;
	char out[512], real[4096];
	long tl, lf;

	tree_of(&tr, "cct", "tail");
	snprintf(out, sizeof(out), "%s/cg-tail.out", tmpdir());
	run(&r, "valgrind --tool=callgrind --dump-instr=yes --collect-jumps=yes --skip-plt=no "
	    "--callgrind-out-file=%s %s tail", out, fixture("cct"));
	cr_assert_eq(r.status, 0, "callgrind: %s", r.err);
	cr_assert_eq(callgrind__read_calls(out, &cc), 0);
	cr_assert(realpath(fixture("cct"), real));
	tl = node(&tr, "main;tailer");
	lf = node(&tr, "main;leaf3");
	cr_assert(tl >= 0 && lf >= 0);
	c = callgrind__pair(&cc, real, "tailer", real, "leaf3");
	cr_assert(c, "callgrind has no tailer -> leaf3");
	cr_expect_eq(c->calls, tr.t->cnodes[lf].calls);
	cr_expect_eq(c->incl, tr.incl[lf]);
	c = callgrind__pair(&cc, real, "main", real, "tailer");
	cr_assert(c, "callgrind has no main -> tailer");
	cr_expect_eq(c->incl, tr.incl[tl] + tr.incl[lf]);
	cr_expect_null(callgrind__pair(&cc, real, "main", real, "leaf3"));
	callgrind__free_calls(&cc);
	tree_free(&tr);
}

/* eval --stacks on a live stack profile (hsbpf record -g, DWARF) of the call-chain kernel: at
 * -O2 f0..f8 end in tail calls, so the truth has f1..f9 in f0's place under main, and so has
 * every unwound stack. Each level's exact share is 1/10 of the loop; the sampled share of
 * n samples is off by about sqrt(p(1-p)/n) (under 0.8 points for 1,500 samples): the bound
 * is 5 points, with room for the native run's other start-up */
Test(cct, eval_stacks_on_a_live_profile)
{
	struct tree tr = {};
	struct run_result r;
	char wl[600], pp[512], tp[512];
	const char *s;
	double share, mean, tv;

	snprintf(wl, sizeof(wl), "%s", fixture("../workloads/callchain"));
	snprintf(pp, sizeof(pp), "%s/cc.data", tmpdir());
	snprintf(tp, sizeof(tp), "%s/cct-cc.truth", tmpdir());
	tree_run(&tr, wl, "cc", "30000");
	run(&r, "%s record -g -o %s -- %s 2000000 >/dev/null", hsbpf_bin(), pp, wl);
	cr_assert_eq(r.status, 0, "record: %s", r.err);
	run(&r, "%s eval -i %s --truth %s --stacks --format json", hsbpf_bin(), pp, tp);
	cr_assert_eq(r.status, 0, "eval: %s", r.err);
	s = strstr(r.out, "\"complete_share\":");
	cr_assert(s && sscanf(s, "\"complete_share\":%lf", &share) == 1, "%s", r.out);
	s = strstr(r.out, "\"inclusive_error_mean\":");
	cr_assert(s && sscanf(s, "\"inclusive_error_mean\":%lf", &mean) == 1);
	s = strstr(r.out, "\"caller_tv_mean\":");
	cr_assert(s && sscanf(s, "\"caller_tv_mean\":%lf", &tv) == 1);
	cr_expect_gt(share, 0.9, "%s", r.out);
	cr_expect_lt(mean, 0.05, "%s", r.out);
	cr_expect_lt(tv, 0.1, "%s", r.out);
	cr_expect(strstr(r.out, "\"function\":\"f9\""), "%s", r.out);
	tree_free(&tr);
}

/* the same scoring of a perf record --call-graph dwarf recording, imported: its user stacks
 * unwound at import from perf's copies (seen: 100% complete, error mean 0.1 points) */
Test(cct, eval_stacks_on_an_imported_perf_dwarf_recording)
{
	struct run_result r;
	char wl[600], pd[512], pp[512], tp[512];
	const char *s;
	double share, mean, tv;

	snprintf(wl, sizeof(wl), "%s", fixture("../workloads/callchain"));
	snprintf(pd, sizeof(pd), "%s/cc.perf", tmpdir());
	snprintf(pp, sizeof(pp), "%s/cc-perf.data", tmpdir());
	snprintf(tp, sizeof(tp), "%s/cc-perf.truth", tmpdir());
	run(&r, "%s truth -o %s -- %s 30000 >/dev/null", hsbpf_bin(), tp, wl);
	cr_assert_eq(r.status, 0, "truth: %s", r.err);
	run(&r, "perf record -q -B --no-bpf-event --call-graph dwarf -o %s -- %s 2000000 >/dev/null && "
		"%s import %s -o %s", pd, wl, hsbpf_bin(), pd, pp);
	cr_assert_eq(r.status, 0, "perf record, import: %s", r.err);
	run(&r, "%s eval -i %s --truth %s --stacks --format json", hsbpf_bin(), pp, tp);
	cr_assert_eq(r.status, 0, "eval: %s", r.err);
	s = strstr(r.out, "\"complete_share\":");
	cr_assert(s && sscanf(s, "\"complete_share\":%lf", &share) == 1, "%s", r.out);
	s = strstr(r.out, "\"inclusive_error_mean\":");
	cr_assert(s && sscanf(s, "\"inclusive_error_mean\":%lf", &mean) == 1);
	s = strstr(r.out, "\"caller_tv_mean\":");
	cr_assert(s && sscanf(s, "\"caller_tv_mean\":%lf", &tv) == 1);
	cr_expect_gt(share, 0.9, "%s", r.out);
	cr_expect_lt(mean, 0.05, "%s", r.out);
	cr_expect_lt(tv, 0.1, "%s", r.out);
	cr_expect(strstr(r.out, "\"function\":\"f9\""), "%s", r.out);
}

/* hsbpf truth --vpmu ... -g: the virtual PMU's stacks are the shadow stacks, so with a sample
 * at every instruction (period 1) the sampled inclusive shares and caller splits are the
 * exact ones, but for the rep iterations the PMU counts as events and the truth folds
 * (a few hundred in glibc's start-up: well under 0.5 points) */
Test(cct, vpmu_stacks_are_exact)
{
	struct run_result r;
	char tp[512], pp[512];
	const char *s;
	double share, mean, tv;

	snprintf(tp, sizeof(tp), "%s/v.truth", tmpdir());
	snprintf(pp, sizeof(pp), "%s/v.data", tmpdir());
	run(&r, "%s truth --vpmu insns --period 1 -g -o %s --profile %s -- %s rec", hsbpf_bin(), tp, pp,
	    fixture("cct"));
	cr_assert_eq(r.status, 0, "truth: %s", r.err);
	run(&r, "%s eval -i %s --truth %s --stacks --top 500 --format json", hsbpf_bin(), pp, tp);
	cr_assert_eq(r.status, 0, "eval: %s", r.err);
	s = strstr(r.out, "\"complete_share\":");
	cr_assert(s && sscanf(s, "\"complete_share\":%lf", &share) == 1, "%s", r.out);
	cr_expect_eq(share, 1, "%s", r.out);
	/* the program's functions (glibc's and ld.so's own have no symbols here: their frames
	 * are placed by the truth's blocks, which code shared by several contexts blurs) */
	for (size_t i = 0; i < 3; i++) {
		static const char *const fns[] = { "main", "rec", "__libc_start_main" };
		char key[64];
		double ex, sa;

		snprintf(key, sizeof(key), "\"function\":\"%s\",", fns[i]);
		s = strstr(r.out, key);
		cr_assert(s && sscanf(s + strlen(key), "\"exact\":%lf,\"sampled\":%lf,\"caller_tv\":%lf", &ex,
				      &sa, &tv) == 3, "%s: %s", fns[i], r.out);
		cr_expect_lt(fabs(ex - sa), 0.005, "%s: exact %g, sampled %g", fns[i], ex, sa);
		cr_expect_lt(tv, 0.005, "%s: caller split TV %g", fns[i], tv);
	}
	(void)mean;
	/* -g needs the virtual PMU */
	run(&r, "%s truth -g -o %s -- %s rec", hsbpf_bin(), tp, fixture("cct"));
	cr_expect_eq(r.status, 2);
	cr_expect(strstr(r.err, "-g goes with --vpmu"), "%s", r.err);
}

/* the plugin next to the hsbpf under test, as refrun finds it */
static const char *ref_plugin(char *buf, size_t size)
{
	char dir[512], *slash;

	snprintf(dir, sizeof(dir), "%s", hsbpf_bin());
	slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof(dir), ".");
	snprintf(buf, size, "%s/.output/ref/libhsbpf-ref.so", dir);
	if (access(buf, R_OK))
		snprintf(buf, size, "%s/ref/libhsbpf-ref.so", dir);
	return buf;
}

/* one calling-context tree per thread serves several virtual PMUs on one run (each its own
 * section); exact sample stacks (vstacks=on) take one PMU and the plugin says so */
Test(cct, several_pmus_share_the_tree_and_vstacks_take_one)
{
	struct run_result r;
	char plugin[600], out[512];
	int sections = -1, nodes = -1, vcs = -1;

	ref_plugin(plugin, sizeof(plugin));
	snprintf(out, sizeof(out), "%s/raw", tmpdir());
	run(&r, "qemu-x86_64 -plugin %s,out=%s,vpmu=insns,period=1000,vstacks=on,"
	    "pmu=branches:100:0:0:0:exact %s rec", plugin, out, fixture("cct"));
	cr_expect_neq(r.status, 0);
	cr_expect(strstr(r.err, "vstacks=on takes one virtual PMU, not 2"), "%s", r.err);
	run(&r, "qemu-x86_64 -plugin %s,out=%s,vpmu=insns,period=1000,cct=on,"
	    "pmu=cycles:5000:0:0:0:precise,pmu=branches:100:2:16:0:exact %s rec >/dev/null && "
	    "grep -c '^vpmu ' %s; grep -c '^cnode ' %s; grep -c '^vcsample ' %s",
	    plugin, out, fixture("cct"), out, out, out);
	cr_assert(sscanf(r.out, "%d %d %d", &sections, &nodes, &vcs) == 3, "%s %s", r.out, r.err);
	cr_expect_eq(sections, 3, "%s", r.out);
	cr_expect_gt(nodes, 3, "%s", r.out);
	cr_expect_eq(vcs, 0, "vcsample without vstacks=on");
	/* one PMU with vstacks: its samples carry their nodes, in its section */
	run(&r, "qemu-x86_64 -plugin %s,out=%s,vpmu=insns,period=1000,sampling=precise,vstacks=on "
	    "%s rec >/dev/null && sed -n '/^vpmu /,$p' %s | grep -c '^vcsample '", plugin, out,
	    fixture("cct"), out);
	cr_expect_gt(atoi(r.out), 0, "%s %s", r.out, r.err);
}
