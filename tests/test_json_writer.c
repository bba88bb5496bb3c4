// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* json_writer: commas, nesting and escaping. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include "json_writer.h"

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
