/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A profile as pprof reads it: the gzipped profile.proto message (proto/profile.proto), built
 * from report's resolved stacks (user/report/callchain.h), for go tool pprof, Pyroscope, Parca,
 * Grafana. Labels and units: docs/usage.md. */
#ifndef HSBPF_PPROF_H
#define HSBPF_PPROF_H

#include <stdio.h>
#include "report/callchain.h"
#include "symbols/symbolizer.h"

/* the message, gzipped, in a malloc'd buffer; 0 or -ENOMEM (said). A profile of sampled
 * allocations is a Go heap profile (its four sample types), its callchain made after
 * memory__select_all */
int pprof__encode(const struct callchain *cc, struct symbolizer *sy, u8 **buf, size_t *len);
/* the same written to out; 0, -ENOMEM (said) or the write's -errno (not said: out's owner
 * knows what out is, and main reports standard output's errors) */
int pprof__write(const struct callchain *cc, struct symbolizer *sy, FILE *out);

/* the name a frame has in the exports (pprof's functions, speedscope's frames): the symbol,
 * or "[unknown in object]" (not folded's "[unknown] (object)": pprof shows no parentheses,
 * which C++ names have around their parameters); a stack lost in the kernel's full map has one
 * frame, PPROF_LOST_FRAME */
#define PPROF_LOST_FRAME "[stack lost: map full]"
const char *pprof__frame_name(const struct callchain_frame *f, char *buf, size_t size);

#endif /* HSBPF_PPROF_H */
