// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sort_key: every key's table entry, and the columns a row makes in report's and top's styles. */
#include <criterion/criterion.h>
#include <string.h>
#include "symbols/bblock.h"
#include "report/hist.h"
#include "hsbpf.h"

static const struct hist_row kernel_row = {
	.count = 3, .sym = "schedule", .sym_off = 0x10, .dso = "[kernel.kallsyms]",
	.vaddr = 0xffffffff81000010, .kernel = true, .pid = 42, .comm = "worker",
	.cgroup = "/", .container = "host",
};

static const struct hist_row user_row = {
	.count = 7, .sym = "work_70", .dso = "/usr/lib/libhot.so.1", .vaddr = 0x1142, .pid = 4242,
	.nspid = 7, .tid = 4243, .cpu = 1, .comm = "hot7030", .cgroup_id = 9, .file = "/src/hot.c",
	.line = 15, .many_pids = true,
};

/* off-CPU time, blocked in D */
static const struct hist_row blocked_row = {
	.count = 20, .sym = "io_schedule", .dso = "[kernel.kallsyms]", .kernel = true, .pid = 4242,
	.tid = 4244, .comm = "reader", .state = HSBPF_OFFCPU_D,
};

/* the titles and texts of a row's columns, "|"-separated */
static void cells(const enum sort_key *keys, int nr, unsigned style, const struct hist_row *r,
		  char *titles, char *texts, size_t size)
{
	const struct cells_opts o = { .style = style };
	struct cell c[CELLS_MAX];
	int n = sort_key__cells(keys, nr, &o, r, c);
	size_t a = 0, b = 0;

	titles[0] = texts[0] = 0;
	for (int i = 0; i < n; i++) {
		a += snprintf(titles + a, size - a, "%s%s", i ? "|" : "", c[i].title);
		b += snprintf(texts + b, size - b, "%s%s", i ? "|" : "", c[i].text);
	}
}

Test(sort_key, every_key_is_whole_and_parses_by_its_names)
{
	for (int k = 0; k < SORT_NR; k++) {
		const struct sort_key_ops *ops = sort_key__ops(k);
		enum sort_key back;

		cr_assert(ops && ops->name && ops->title && ops->hash && ops->cmp && ops->cells,
			  "key %d", k);
		cr_expect_eq(hist__parse_key(ops->name, &back), 0, "%s", ops->name);
		cr_expect_eq(back, k, "%s", ops->name);
		for (size_t a = 0; a < ARRAY_SIZE(ops->aliases) && ops->aliases[a]; a++) {
			cr_expect_eq(hist__parse_key(ops->aliases[a], &back), 0, "%s", ops->aliases[a]);
			cr_expect_eq(back, k, "%s", ops->aliases[a]);
		}
		cr_expect(strstr(sort_key__names(), ops->name), "%s", sort_key__names());
	}
	cr_expect_null(sort_key__ops(SORT_NR));
}

Test(sort_key, perf_names_srcline_and_srcfile)
{
	enum sort_key k;

	cr_assert_eq(hist__parse_key("srcline", &k), 0);
	cr_expect_eq(k, SORT_LINE);
	cr_assert_eq(hist__parse_key("SrcFile", &k), 0);
	cr_expect_eq(k, SORT_SRCFILE);
	cr_expect_str_eq(hist__key_name(SORT_SRCFILE), "srcfile");
	cr_expect_str_eq(hist__key_title(SORT_SRCFILE), "source files");
}

/* report's columns: the kernel marked before the symbol, the object once */
/* off-CPU time by state: the rows of one state group, states apart (and from on-CPU) */
Test(sort_key, state_groups_off_cpu_time)
{
	const struct sort_key_ops *ops = sort_key__ops(SORT_STATE);
	struct hist_row s1 = blocked_row, s2 = blocked_row, on = blocked_row;
	enum sort_key k;

	cr_assert_eq(hist__parse_key("State", &k), 0);
	cr_expect_eq(k, SORT_STATE);
	s1.state = s2.state = HSBPF_OFFCPU_S;
	s2.tid = 4245;
	on.state = 0;
	cr_expect_eq(ops->cmp(NULL, &s1, &s2), 0);
	cr_expect_eq(ops->hash(NULL, &s1, 1), ops->hash(NULL, &s2, 1));
	cr_expect_neq(ops->cmp(NULL, &s1, &blocked_row), 0);
	cr_expect_neq(ops->cmp(NULL, &s1, &on), 0);
	cr_expect_str_eq(ops->row_name(&s1), "S");
	cr_expect_str_eq(ops->row_name(&on), "on-CPU");
}

Test(sort_key, report_columns)
{
	static const struct { enum sort_key keys[2]; int nr; const struct hist_row *r;
			      const char *titles, *texts; } cases[] = {
		{ { SORT_SYM }, 1, &kernel_row, "Symbol|Object", "[k] schedule|[kernel.kallsyms]" },
		{ { SORT_IP }, 1, &kernel_row, "Address|Symbol+offset|Object",
		  "0xffffffff81000010|schedule+0x10|[kernel.kallsyms]" },
		{ { SORT_DSO, SORT_SYM }, 2, &user_row, "Object|Symbol", "/usr/lib/libhot.so.1|work_70" },
		{ { SORT_PID }, 1, &user_row, "Pid (in ns)|Command", "4242 (7)|hot7030" },
		{ { SORT_PID, SORT_COMM }, 2, &user_row, "Pid (in ns)|Command", "4242 (7)|hot7030" },
		{ { SORT_TID, SORT_CPU }, 2, &user_row, "Thread|CPU", "4243:hot7030|001" },
		{ { SORT_LINE }, 1, &user_row, "Source|Symbol", "hot.c:15|work_70" },
		{ { SORT_SRCFILE }, 1, &user_row, "Source file", "/src/hot.c" },
		{ { SORT_SRCFILE }, 1, &kernel_row, "Source file", "[unknown]" },
		{ { SORT_CGROUP }, 1, &user_row, "Container|Cgroup", "-|id 9" },
		{ { SORT_BB }, 1, &user_row, "Block|Insns|Samp/insn|Symbol|Object",
		  "[no block]|0|7|work_70|libhot.so.1" },
		{ { SORT_TID, SORT_STATE }, 2, &user_row, "Thread|State", "4243:hot7030|on-CPU" },
		{ { SORT_STATE }, 1, &blocked_row, "State", "D" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char titles[512], texts[512];

		cells(cases[i].keys, cases[i].nr, 0, cases[i].r, titles, texts, sizeof(titles));
		cr_expect_str_eq(titles, cases[i].titles, "case %zu", i);
		cr_expect_str_eq(texts, cases[i].texts, "case %zu", i);
	}
}

/* top's: the kernel as an object, the row's process and container after code; a process
 * row's container; a cgroup's label */
Test(sort_key, top_columns)
{
	static const struct { enum sort_key key; const struct hist_row *r; const char *titles, *texts;
			      int flexible; } cases[] = {
		{ SORT_SYM, &kernel_row, "Symbol|Object|Process|Container",
		  "schedule|[kernel]|worker 42|host", 0 },
		{ SORT_IP, &user_row, "Address|Symbol|Object|Process|Container",
		  "0x1142|work_70|libhot.so.1|hot7030 +|-", 1 },
		{ SORT_BB, &user_row, "Block|Insns|Symbol|Object|Process|Container",
		  "[no block]||work_70|libhot.so.1|hot7030 +|-", 2 },
		{ SORT_PID, &kernel_row, "Pid (in ns)|Command|Container", "42|worker|host", 2 },
		{ SORT_CGROUP, &kernel_row, "Container|Cgroup", "host|/", 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct cells_opts o = { .style = CELLS_LIVE | CELLS_OWNER };
		char titles[512], texts[512];
		struct cell c[CELLS_MAX];
		int n = sort_key__cells(&cases[i].key, 1, &o, cases[i].r, c), flex = 0;

		cells(&cases[i].key, 1, CELLS_LIVE | CELLS_OWNER, cases[i].r, titles, texts, sizeof(titles));
		cr_expect_str_eq(titles, cases[i].titles, "case %zu", i);
		cr_expect_str_eq(texts, cases[i].texts, "case %zu", i);
		for (int j = 0; j < n; j++)
			flex += !c[j].width;
		cr_expect_eq(flex, 1, "case %zu: one flexible column", i);
		cr_expect_eq(c[cases[i].flexible].width, 0, "case %zu", i);
	}
}

Test(sort_key, top_names_rows_by_their_key)
{
	cr_expect_str_eq(sort_key__row_name(SORT_SYM, &user_row), "work_70");
	cr_expect_str_eq(sort_key__row_name(SORT_PID, &user_row), "hot7030");
	cr_expect_str_eq(sort_key__row_name(SORT_CGROUP, &kernel_row), "host");
}
