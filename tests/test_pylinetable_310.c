// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* pylinetable_310: CPython 3.10's line table (PEP 626 byte pairs) gives the line co_lines()
 * gives, for every instruction of real 3.10 code objects (the standard library's modules,
 * compiled and dumped by pyenv's python3.10, skipped with a message where it is not
 * installed), and a hand-made table's known answers: empty ranges that only move the line,
 * ranges without a line, negative line changes, an offset past the end. */
#include <criterion/criterion.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "helpers.h"
#include "python/pyoffsets.h"

TestSuite(pylinetable_310, .fini = cleanup_tmpdir);

Test(pylinetable_310, known_answers)
{
	/* from line 10: [0,6) +1 -> 11; an empty range +2 -> 13; [6,10) -1 -> 12; [10,12) no
	 * line; [12,14) +0 -> still 12 */
	static const uint8_t table[] = { 6, 1, 0, 2, 4, 0xff, 2, 0x80, 2, 0 };
	static const struct {
		uint32_t instr;
		int line;	/* 0: none */
	} want[] = {
		{ 0, 11 }, { 2, 11 }, { 3, 12 }, { 4, 12 }, { 5, 0 }, { 6, 12 }, { 7, 0 },
		{ 1000, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		int line = -1, err = pylinetable__line_310(table, sizeof(table), 10, want[i].instr,
							   &line);

		if (want[i].line)
			cr_expect(!err && line == want[i].line, "instruction %u: line %d (%d), want %d",
				  want[i].instr, line, err, want[i].line);
		else
			cr_expect_eq(err, -ENOENT, "instruction %u: %d, want no line",
				     want[i].instr, err);
	}
	/* an odd byte at the end is no pair; nothing at all has no line */
	cr_expect_eq(pylinetable__line_310(table, 1, 10, 0, &(int){ 0 }), -ENOENT);
	cr_expect_eq(pylinetable__line_310(NULL, 0, 10, 0, &(int){ 0 }), -ENOENT);
}

/* every code object (nested ones too) of the modules compiled, one line each:
 * "firstlineno linetable-hex start,end,line ..." with line -1 for None */
static const char dumper[] =
	"import sys, types\n"
	"def walk(c, out):\n"
	"    r = ' '.join('%d,%d,%d' % (s, e, -1 if l is None else l) for s, e, l in c.co_lines())\n"
	"    out.write('%d %s %s\\n' % (c.co_firstlineno, c.co_linetable.hex() or '-', r))\n"
	"    for k in c.co_consts:\n"
	"        if isinstance(k, types.CodeType):\n"
	"            walk(k, out)\n"
	"import argparse, json.decoder, asyncio.tasks, dis\n"
	"src = 'def far():\\n    x = 1\\n' + '\\n' * 400 + '    return x\\n' + 'try:\\n    far()\\nexcept Exception:\\n    pass\\n'\n"
	"with open(sys.argv[1], 'w') as out:\n"
	"    for m in (argparse, json.decoder, asyncio.tasks, dis):\n"
	"        walk(compile(open(m.__file__).read(), m.__file__, 'exec'), out)\n"
	"    walk(compile(src, 'far.py', 'exec'), out)\n";

Test(pylinetable_310, every_instruction_as_co_lines_says)
{
	char python[PATH_MAX], script[PATH_MAX], dump[PATH_MAX], *line = NULL;
	struct run_result *r = malloc(sizeof(*r));
	size_t cap = 0, codes = 0, checked = 0, without = 0;
	glob_t g;
	FILE *f;

	if (glob("/root/.pyenv/versions/3.10.*/bin/python3.10", 0, NULL, &g) || !g.gl_pathc)
		cr_skip_test("no pyenv build of 3.10: its line tables are checked on known answers "
			     "only");
	snprintf(python, sizeof(python), "%s", g.gl_pathv[0]);
	globfree(&g);
	snprintf(script, sizeof(script), "%s/dump.py", tmpdir());
	snprintf(dump, sizeof(dump), "%s/lines.txt", tmpdir());
	write_bytes(script, dumper, strlen(dumper));
	cr_assert(r);
	run(r, "%s %s %s", python, script, dump);
	cr_assert_eq(r->status, 0, "python3.10 dump.py: %s", r->err);
	free(r);
	f = fopen(dump, "r");
	cr_assert(f);
	while (getline(&line, &cap, f) > 0) {
		char *save, *hex = NULL, *tok;
		uint8_t *table;
		size_t len;
		int first;

		first = atoi(strtok_r(line, " \n", &save));
		hex = strtok_r(NULL, " \n", &save);
		cr_assert(hex);
		len = strcmp(hex, "-") ? strlen(hex) / 2 : 0;
		table = malloc(len + 1);
		for (size_t i = 0; i < len; i++)
			sscanf(hex + 2 * i, "%2hhx", &table[i]);
		codes++;
		while ((tok = strtok_r(NULL, " \n", &save))) {
			unsigned start, end;
			int want, got, err;

			cr_assert_eq(sscanf(tok, "%u,%u,%d", &start, &end, &want), 3);
			/* offsets in bytes there, in code units (2 bytes) here */
			for (unsigned instr = start / 2; instr < end / 2; instr++) {
				err = pylinetable__line_310(table, len, first, instr, &got);
				if (want < 0) {
					cr_expect_eq(err, -ENOENT, "instruction %u: line %d, want none",
						     instr, got);
					without++;
				} else {
					cr_expect(!err && got == want, "code at line %d, instruction %u: "
						  "line %d (%d), want %d", first, instr, got, err, want);
				}
				checked++;
			}
		}
		free(table);
	}
	free(line);
	fclose(f);
	cr_log_info("%zu code objects, %zu instructions (%zu without a line)", codes, checked,
		    without);
	cr_expect_gt(codes, 100);
	cr_expect_gt(checked, 10000);
}
