/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A profile in speedscope's file format (https://www.speedscope.app/file-format-schema.json):
 * one "sampled" profile per process, stacks root first, weights in the profile's unit; with
 * time buckets (record --timeline) an "evented" one per thread too, its stacks laid out in
 * time bucket by bucket (a flame chart). */
#ifndef HSBPF_SPEEDSCOPE_H
#define HSBPF_SPEEDSCOPE_H

#include <stdio.h>
#include "report/callchain.h"
#include "symbols/symbolizer.h"

/* 0, or -ENOMEM (said) */
int speedscope__write(const struct callchain *cc, struct symbolizer *sy, const char *name, FILE *out);

#endif /* HSBPF_SPEEDSCOPE_H */
