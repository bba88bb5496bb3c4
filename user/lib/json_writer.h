/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A streaming JSON writer: commas and escaping handled here, so callers only say what. */
#ifndef HSBPF_JSON_WRITER_H
#define HSBPF_JSON_WRITER_H

#include <stdio.h>
#include "lib/util.h"

typedef struct json_writer json_writer_t;

json_writer_t *jsonw_new(FILE *f);
void jsonw_destroy(json_writer_t **self);	/* ends with a newline */
void jsonw_start_object(json_writer_t *self);
void jsonw_end_object(json_writer_t *self);
void jsonw_start_array(json_writer_t *self);
void jsonw_end_array(json_writer_t *self);
void jsonw_name(json_writer_t *self, const char *name);
void jsonw_string(json_writer_t *self, const char *value);
void jsonw_uint(json_writer_t *self, u64 value);
void jsonw_float(json_writer_t *self, double value);
/* 15 significant digits rather than 6: counts exact up to 10^15 */
void jsonw_double(json_writer_t *self, double value);
void jsonw_bool(json_writer_t *self, bool value);
void jsonw_null(json_writer_t *self);
/* "name": value shorthands */
void jsonw_string_field(json_writer_t *self, const char *name, const char *value);
void jsonw_uint_field(json_writer_t *self, const char *name, u64 value);
void jsonw_float_field(json_writer_t *self, const char *name, double value);
void jsonw_bool_field(json_writer_t *self, const char *name, bool value);

#endif /* HSBPF_JSON_WRITER_H */
