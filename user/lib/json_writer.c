// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Streaming JSON: a depth-indexed "first element" flag decides where commas go. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lib/json_writer.h"

#define JSONW_MAX_DEPTH 64

struct json_writer {
	FILE *f;
	int depth;
	bool first[JSONW_MAX_DEPTH];
	bool after_name;
};

json_writer_t *jsonw_new(FILE *f)
{
	json_writer_t *w = calloc(1, sizeof(*w));

	if (w) {
		w->f = f;
		w->first[0] = true;
	}
	return w;
}

void jsonw_destroy(json_writer_t **self)
{
	if (!*self)
		return;
	fputc('\n', (*self)->f);
	free(*self);
	*self = NULL;
}

static void sep(json_writer_t *w)
{
	if (w->after_name) {
		w->after_name = false;
		return;
	}
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = false;
}

static void open_(json_writer_t *w, char c)
{
	sep(w);
	fputc(c, w->f);
	if (w->depth < JSONW_MAX_DEPTH - 1)
		w->depth++;
	w->first[w->depth] = true;
}

static void close_(json_writer_t *w, char c)
{
	if (w->depth > 0)
		w->depth--;
	fputc(c, w->f);
}

void jsonw_start_object(json_writer_t *w) { open_(w, '{'); }
void jsonw_end_object(json_writer_t *w) { close_(w, '}'); }
void jsonw_start_array(json_writer_t *w) { open_(w, '['); }
void jsonw_end_array(json_writer_t *w) { close_(w, ']'); }

/* JSON strings are Unicode: controls (C0, DEL, C1) as \u escapes, valid UTF-8 as it is, and a
 * byte that is not UTF-8 as the text \xNN, as the text output shows it */
static void put_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");

	fputc('"', f);
	while (*s) {
		size_t n = str__printable_len(s);

		if (n == 1 && (*s == '"' || *s == '\\')) {
			fputc('\\', f);
			fputc(*s++, f);
		} else if (n) {
			fwrite(s, 1, n, f);
			s += n;
		} else if (*s < 0x20 || *s == 0x7f) {
			static const char short_form[] = { ['\n'] = 'n', ['\t'] = 't', ['\r'] = 'r' };

			if (*s < sizeof(short_form) && short_form[*s])
				fprintf(f, "\\%c", short_form[*s]);
			else
				fprintf(f, "\\u%04x", *s);
			s++;
		} else if (s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f) {
			fprintf(f, "\\u%04x", s[1]);	/* C1: U+0080 to U+009F */
			s += 2;
		} else {
			fprintf(f, "\\\\x%02x", *s++);
		}
	}
	fputc('"', f);
}

void jsonw_name(json_writer_t *w, const char *name)
{
	sep(w);
	put_string(w->f, name);
	fputc(':', w->f);
	w->after_name = true;
}

void jsonw_string(json_writer_t *w, const char *v)
{
	sep(w);
	if (v)
		put_string(w->f, v);
	else
		fputs("null", w->f);
}

void jsonw_uint(json_writer_t *w, u64 v)
{
	sep(w);
	fprintf(w->f, "%" PRIu64, v);
}

void jsonw_float(json_writer_t *w, double v)
{
	sep(w);
	if (isfinite(v))
		fprintf(w->f, "%.6g", v);
	else
		fputs("null", w->f);
}

void jsonw_double(json_writer_t *w, double v)
{
	sep(w);
	if (isfinite(v))
		fprintf(w->f, "%.15g", v);
	else
		fputs("null", w->f);
}

void jsonw_bool(json_writer_t *w, bool v)
{
	sep(w);
	fputs(v ? "true" : "false", w->f);
}

void jsonw_null(json_writer_t *w)
{
	sep(w);
	fputs("null", w->f);
}

void jsonw_string_field(json_writer_t *w, const char *n, const char *v) { jsonw_name(w, n); jsonw_string(w, v); }
void jsonw_uint_field(json_writer_t *w, const char *n, u64 v) { jsonw_name(w, n); jsonw_uint(w, v); }
void jsonw_float_field(json_writer_t *w, const char *n, double v) { jsonw_name(w, n); jsonw_float(w, v); }
void jsonw_bool_field(json_writer_t *w, const char *n, bool v) { jsonw_name(w, n); jsonw_bool(w, v); }
