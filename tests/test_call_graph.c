// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* call_graph: the modes' table, names to modes and back, --call-graph MODE[,DEPTH]. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include "record/call_graph.h"
#include "hsbpf.h"
#include "record/session.h"

Test(call_graph, known_modes)
{
	static const struct {
		const char *name;
		u32 bpf_mode;
		bool unwind_tables, late_unwind, lbr_call_stack;
	} cases[] = {
		{ "dwarf", HSBPF_CALL_GRAPH_DWARF, true, true, false },
		{ "fp", HSBPF_CALL_GRAPH_FP, false, false, false },
		{ "lbr", HSBPF_CALL_GRAPH_LBR, false, false, true },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct call_graph *cg = call_graph__find(cases[i].name);

		cr_assert(cg, "%s", cases[i].name);
		cr_expect_str_eq(cg->name, cases[i].name);
		cr_expect_eq(cg->bpf_mode, cases[i].bpf_mode, "%s", cases[i].name);
		cr_expect_eq(cg->unwind_tables, cases[i].unwind_tables, "%s", cases[i].name);
		cr_expect_eq(cg->late_unwind, cases[i].late_unwind, "%s", cases[i].name);
		cr_expect_eq(cg->lbr_call_stack, cases[i].lbr_call_stack, "%s", cases[i].name);
		cr_expect(cg->return_addresses, "%s", cases[i].name);
		cr_expect_eq(cg->max_frames, HSBPF_MAX_FRAMES, "%s", cases[i].name);
	}
	cr_expect_null(call_graph__at(sizeof(cases) / sizeof(cases[0])));
	cr_expect_str_eq(call_graph__find(CALL_GRAPH_DEFAULT)->name, "dwarf");
}

/* every row: its name and its constant lead back to it, and each is its own */
Test(call_graph, names_and_constants_round_trip)
{
	const struct call_graph *cg;

	for (size_t i = 0; (cg = call_graph__at(i)); i++) {
		const struct call_graph *parsed;
		u32 mode = 0, depth = 99;

		cr_expect_eq(call_graph__find(cg->name), cg, "%s", cg->name);
		cr_expect_eq(call_graph__get(cg->bpf_mode), cg, "%s", cg->name);
		cr_expect_neq(cg->bpf_mode, HSBPF_CALL_GRAPH_NONE, "%s", cg->name);
		cr_expect_eq(call_graph__parse(cg->name, &parsed, &depth), 0, "%s", cg->name);
		cr_expect_eq(parsed, cg, "%s", cg->name);
		cr_expect_eq(depth, 0, "%s", cg->name);
		cr_expect_eq(session__parse_call_graph(cg->name, &mode, &depth), 0, "%s", cg->name);
		cr_expect_eq(mode, cg->bpf_mode, "%s", cg->name);
		for (size_t j = 0; j < i; j++) {
			cr_expect_str_neq(call_graph__at(j)->name, cg->name);
			cr_expect_neq(call_graph__at(j)->bpf_mode, cg->bpf_mode, "%s", cg->name);
		}
	}
}

/* what a profile may say that is no mode: none, an import, the harness's truth */
Test(call_graph, no_mode)
{
	cr_expect_null(call_graph__find(""));
	cr_expect_null(call_graph__find("exact"));
	cr_expect_null(call_graph__find("dwarf,64"));
	cr_expect_null(call_graph__find("DWARF"));
	cr_expect_null(call_graph__get(HSBPF_CALL_GRAPH_NONE));
	cr_expect_null(call_graph__get(1000));
	cr_expect_eq(call_graph__max_frames(NULL, 16), 0);
	cr_expect_eq(call_graph__max_frames(call_graph__find("fp"), 0), HSBPF_MAX_FRAMES);
	cr_expect_eq(call_graph__max_frames(call_graph__find("fp"), 16), 16);
}

Test(call_graph, depths)
{
	static const struct {
		const char *arg;
		const char *mode;	/* NULL: refused */
		u32 depth;
	} cases[] = {
		{ "dwarf", "dwarf", 0 },
		{ "fp,64", "fp", 64 },
		{ "lbr,32", "lbr", 32 },
		{ "dwarf,1", "dwarf", 1 },
		{ "dwarf,256", "dwarf", 256 },
		/* perf's bytes of stack: 32 a frame, up to the most kept */
		{ "dwarf,8192", "dwarf", 256 },
		{ "dwarf,4096", "dwarf", 128 },
		{ "dwarf,1024", "dwarf", 32 },
		{ "dwarf,264", "dwarf", 8 },
		{ "dwarf,65528", "dwarf", 256 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct call_graph *cg = NULL;
		u32 depth = 99;

		cr_expect_eq(call_graph__parse(cases[i].arg, &cg, &depth), 0, "%s", cases[i].arg);
		cr_expect_eq(cg, call_graph__find(cases[i].mode), "%s", cases[i].arg);
		cr_expect_eq(depth, cases[i].depth, "%s", cases[i].arg);
	}
}

Test(call_graph, refusals_say_why, .init = cr_redirect_stderr)
{
	static const char *const bad[] = {
		"frames", "", ",64", "dwarfdwarfdwarfdwarf", "dwarf,0", "fp,257", "dwarf,x", "dwarf,",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const struct call_graph *cg;
		u32 mode = 7, depth = 99;

		cr_expect_eq(call_graph__parse(bad[i], &cg, &depth), -EINVAL, "%s", bad[i]);
		cr_expect_eq(depth, 99, "%s: the depth was set", bad[i]);
		cr_expect_eq(session__parse_call_graph(bad[i], &mode, &depth), -EINVAL, "%s", bad[i]);
	}
	fflush(stderr);
	cr_expect_stderr_eq_str(
		"hsbpf: invalid --call-graph 'frames' (known: dwarf, fp, lbr; then ,DEPTH)\n"
		"hsbpf: invalid --call-graph 'frames' (known: dwarf, fp, lbr; then ,DEPTH)\n"
		"hsbpf: invalid --call-graph '' (known: dwarf, fp, lbr; then ,DEPTH)\n"
		"hsbpf: invalid --call-graph '' (known: dwarf, fp, lbr; then ,DEPTH)\n"
		"hsbpf: invalid --call-graph ',64' (known: dwarf, fp, lbr; then ,DEPTH)\n"
		"hsbpf: invalid --call-graph ',64' (known: dwarf, fp, lbr; then ,DEPTH)\n"
		"hsbpf: invalid --call-graph 'dwarfdwarfdwarfdwarf' (known: dwarf, fp, lbr; then ,DEPTH)\n"
		"hsbpf: invalid --call-graph 'dwarfdwarfdwarfdwarf' (known: dwarf, fp, lbr; then ,DEPTH)\n"
		"hsbpf: invalid call-graph depth '0' (1 to 256 user frames)\n"
		"hsbpf: invalid call-graph depth '0' (1 to 256 user frames)\n"
		"hsbpf: invalid call-graph depth '257' (1 to 256 user frames)\n"
		"hsbpf: invalid call-graph depth '257' (1 to 256 user frames)\n"
		"hsbpf: invalid call-graph depth 'x' (1 to 256 user frames)\n"
		"hsbpf: invalid call-graph depth 'x' (1 to 256 user frames)\n"
		"hsbpf: invalid call-graph depth '' (1 to 256 user frames)\n"
		"hsbpf: invalid call-graph depth '' (1 to 256 user frames)\n");
}

/* bytes that are not perf's (not a multiple of 8, over 65528), and bytes for a mode
 * without a stack copy in perf: refused as depths */
Test(call_graph, perf_stack_sizes_are_checked, .init = cr_redirect_stderr)
{
	static const char *const bad[] = { "dwarf,260", "dwarf,65536", "fp,4096", "lbr,8192" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const struct call_graph *cg;
		u32 depth = 99;

		cr_expect_eq(call_graph__parse(bad[i], &cg, &depth), -EINVAL, "%s", bad[i]);
		cr_expect_eq(depth, 99, "%s: the depth was set", bad[i]);
	}
}

/* -g is the default mode, without a DEPTH */
Test(call_graph, dash_g_is_dwarf)
{
	u32 mode = 0, depth = 16;

	cr_expect_eq(session__parse_call_graph(CALL_GRAPH_DEFAULT, &mode, &depth), 0);
	cr_expect_eq(mode, HSBPF_CALL_GRAPH_DWARF);
	cr_expect_eq(depth, 0);
}
