// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* json_writer: commas, nesting and escaping. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lib/json_writer.h"

Test(json_writer, nesting_and_escaping)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_writer_t *w = jsonw_new(f);

	jsonw_start_object(w);
	jsonw_string_field(w, "s", "a\"b\\c\n\x01");
	jsonw_name(w, "arr");
	jsonw_start_array(w);
	jsonw_uint(w, 1);
	jsonw_start_object(w);
	jsonw_end_object(w);
	jsonw_float(w, NAN);
	jsonw_string(w, NULL);
	jsonw_end_array(w);
	jsonw_bool_field(w, "t", true);
	jsonw_end_object(w);
	jsonw_destroy(&w);
	fclose(f);
	cr_expect_str_eq(buf, "{\"s\":\"a\\\"b\\\\c\\n\\u0001\",\"arr\":[1,{},null,null],\"t\":true}\n");
	free(buf);
}

/* every string comes out as valid JSON text in valid UTF-8: controls, DEL and C1 as \u
 * escapes, UTF-8 as it is, bytes that are not UTF-8 as the text \xNN */
Test(json_writer, strings_are_valid_unicode)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "\x7f", "\"\\u007f\"" },
		{ "\xc2\x85", "\"\\u0085\"" },		/* C1 NEL */
		{ "\xff", "\"\\\\xff\"" },
		{ "a\xc3(", "\"a\\\\xc3(\"" },		/* a lead byte cut short */
		{ "\xed\xa0\x80", "\"\\\\xed\\\\xa0\\\\x80\"" },	/* a surrogate */
		{ "caf\xc3\xa9", "\"caf\xc3\xa9\"" },
		{ "\xf0\x9f\x94\xa5", "\"\xf0\x9f\x94\xa5\"" },
		{ "\x1b[2J\x07", "\"\\u001b[2J\\u0007\"" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		json_writer_t *w = jsonw_new(f);

		jsonw_string(w, cases[i].in);
		jsonw_destroy(&w);
		fclose(f);
		buf[strcspn(buf, "\n")] = 0;
		cr_expect_str_eq(buf, cases[i].out, "case %zu", i);
		free(buf);
	}
}
