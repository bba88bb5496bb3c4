// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* stat_print: perf-like text, and JSON and CSV rows with the same fields; names from the
 * system (cgroup paths, commands) escaped. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include "stat/stat_print.h"

static struct stat_events evs;

static void setup(void)
{
	memset(&evs, 0, sizeof(evs));
	cr_assert_eq(stat_events__parse(&evs, "task-clock,cycles,instructions,page-faults"), 0);
}

static void teardown(void)
{
	stat_events__free(&evs);
}

TestSuite(stat_print, .init = setup, .fini = teardown);

/* task-clock 1234.5678 ms; cycles not supported; instructions scaled 3000 +- 1053.94 at 50%
 * with an IPC of 1.5; page-faults 1234567 in a cgroup */
static void rows_of(struct stat_row *rows, const char *cgroup)
{
	rows[0] = (struct stat_row){ .event = &evs.v[0], .time_s = -1, .runs = 1,
		.v = { .counted = true, .value = 1234567800, .running_pct = 100 },
		.raw = { 1234567800, 1234567800, 1234567800 } };
	rows[1] = (struct stat_row){ .event = &evs.v[1], .time_s = -1, .runs = 1,
		.status = STAT_ROW_NOT_SUPPORTED };
	rows[2] = (struct stat_row){ .event = &evs.v[2], .time_s = -1, .runs = 1,
		.v = { .counted = true, .scaled = true, .value = 3000, .running_pct = 50,
		       .has_ci = true, .lo = 1946.06, .hi = 4053.94 },
		.raw = { 1500, 300000000, 150000000 } };
	rows[2].metric = (struct stat_metric){
		.def = stat_metric__find(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS), .value = 1.5 };
	rows[3] = (struct stat_row){ .event = &evs.v[3], .time_s = -1, .runs = 1,
		.v = { .counted = true, .value = 1234567, .running_pct = 100 },
		.raw = { 1234567, 5, 5 } };
	for (int i = 0; i < 4; i++) {
		rows[i].cgroup = cgroup;
		rows[i].kind = cgroup ? STAT_SET_CGROUP : STAT_SET_TARGET;
	}
}

static char *print(enum output_format fmt, const char *cgroup, const char *target)
{
	struct stat_print_info info = { .target = target, .runs = 1, .cgroups = cgroup != NULL };
	struct stat_row rows[4], elapsed = { .time_s = -1, .runs = 1,
		.v = { .counted = true, .value = 1.5, .running_pct = 100 } };
	struct stat_printer *p;
	size_t size;
	char *buf;
	FILE *f = open_memstream(&buf, &size);

	cr_assert(f);
	p = stat_printer__new(f, fmt, &info);
	cr_assert(p);
	rows_of(rows, cgroup);
	for (int i = 0; i < 4; i++)
		stat_printer__row(p, &rows[i]);
	stat_printer__footer(p, &elapsed, NULL);
	stat_printer__free(p);
	fclose(f);
	return buf;
}

Test(stat_print, text_as_perf_shows_it)
{
	char *out = print(OUT_TEXT, NULL, "'./prog 1'");

	cr_expect(strstr(out, "\n Performance counter stats for './prog 1':\n\n"), "%s", out);
	cr_expect(strstr(out, "          1,234.57 msec task-clock"), "%s", out);
	cr_expect(strstr(out, "   <not supported>      cycles\n"), "%s", out);
	cr_expect(strstr(out, "             3,000      instructions"), "%s", out);
	cr_expect(strstr(out, "#    1.500 insn per cycle  ( +- 35.13% )  (50.00%)\n"), "%s", out);
	cr_expect(strstr(out, "         1,234,567      page-faults\n"), "%s", out);
	cr_expect(strstr(out, "       1.500000000 seconds time elapsed\n"), "%s", out);
	cr_expect(strstr(out, "half the 95% interval of a count scaled"), "the legend: %s", out);
	cr_expect_null(strstr(out, " \n"), "a line ends in blanks: %s", out);
	free(out);
}

Test(stat_print, hostile_names_are_escaped_in_text)
{
	char *out = print(OUT_TEXT, "/evil\033]0;owned\007", "'\033[2Jrm'");

	cr_expect_null(strchr(out, '\033'), "an escape reached the terminal: %s", out);
	cr_expect_null(strchr(out, '\007'), "a bell reached the terminal: %s", out);
	cr_expect(strstr(out, "/evil\\x1b]0;owned\\x07"), "%s", out);
	cr_expect(strstr(out, "'\\x1b[2Jrm'"), "%s", out);
	free(out);
}

/* the keys of each {...} of the rows array, in order, joined by commas */
static void json_keys(const char *row, char *keys, size_t size)
{
	size_t n = 0;

	keys[0] = 0;
	for (const char *p = row; *p && *p != '}'; p++) {
		const char *end;

		if (*p != '"' || (p[-1] != '{' && p[-1] != ','))
			continue;
		end = strchr(p + 1, '"');
		if (!end || end[1] != ':')
			continue;
		n += snprintf(keys + n, size - n, "%s%.*s", n ? "," : "", (int)(end - p - 1), p + 1);
		p = end;
	}
}

Test(stat_print, json_and_csv_have_the_same_fields)
{
	char *json = print(OUT_JSON, "/a,b\"c", "'prog'");
	char *csv = print(OUT_CSV, "/a,b\"c", "'prog'");
	char header[1024], keys[1024];
	const char *row;
	int rows = 0;

	/* the header is the JSON rows' keys, in order */
	snprintf(header, sizeof(header), "%.*s", (int)strcspn(csv, "\n"), csv);
	for (row = strstr(json, "\"rows\":["); row && (row = strchr(row + 1, '{')); rows++) {
		json_keys(row, keys, sizeof(keys));
		cr_expect_str_eq(keys, header, "row %d", rows);
	}
	cr_expect_eq(rows, 5, "four events and the elapsed time: %s", json);
	cr_expect(strstr(json, "\"target\":\"'prog'\""), "%s", json);
	cr_expect(strstr(json, "\"cgroup\":\"/a,b\\\"c\""), "%s", json);
	cr_expect(strstr(json, "\"event\":\"cycles\",\"status\":\"not supported\",\"value\":null"),
		  "%s", json);
	cr_expect(strstr(json, "\"value\":3000,\"unit\":\"\",\"count\":1500,\"enabled_ns\":300000000,"
			       "\"running_ns\":150000000,\"running_pct\":50,\"scaled\":true"), "%s", json);
	cr_expect(strstr(json, "\"ci95_low\":1946.06,\"ci95_high\":4053.94,\"metric\":\"insn per cycle\""
			       ",\"metric_value\":1.5"), "%s", json);
	cr_expect(strstr(json, "\"event\":\"page-faults\",\"status\":\"counted\",\"value\":1234567,"),
		  "counts keep their digits: %s", json);
	cr_expect(strstr(json, "\"value\":1234.5678,\"unit\":\"msec\""), "%s", json);
	cr_expect(strstr(json, "\"event\":\"elapsed\",\"status\":\"counted\",\"value\":1.5,"
			       "\"unit\":\"s\""), "%s", json);
	/* CSV: the comma and the quote in the name are quoted; every line has every field */
	cr_expect(strstr(csv, ",cgroup,\"/a,b\"\"c\",instructions,counted,3000,,1500,300000000,"
			      "150000000,50,true,1,,1946.06,4053.94,insn per cycle,1.5,,,\n"), "%s", csv);
	rows = 0;
	for (const char *l = csv; *l; l = strchr(l, '\n') + 1, rows++) {
		int commas = 0;
		bool quoted = false;

		for (const char *c = l; *c != '\n'; c++) {
			quoted ^= *c == '"';
			commas += *c == ',' && !quoted;
		}
		cr_expect_eq(commas, (int)stat_print_nr_columns - 1, "line %d", rows);
	}
	cr_expect_eq(rows, 6, "a header, four events and the elapsed time");
	free(json);
	free(csv);
}

Test(stat_print, formats)
{
	enum output_format f;

	cr_expect_eq(output_format__parse("text", OUT_TABLES, &f), 0);
	cr_expect_eq(f, OUT_TEXT);
	cr_expect_eq(output_format__parse("json", OUT_TABLES, &f), 0);
	cr_expect_eq(f, OUT_JSON);
	cr_expect_eq(output_format__parse("csv", OUT_TABLES, &f), 0);
	cr_expect_eq(f, OUT_CSV);
	cr_expect_eq(output_format__parse("xml", OUT_TABLES, &f), -EINVAL);
}
