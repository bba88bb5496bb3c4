/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Self for Python code (docs/python.md "Self"): a sample whose native leaf is CPython's
 * evaluation loop, with Python frames in its stack, is the innermost Python function's own
 * time, not the loop's, as py-spy and perf's -X perf trampolines show it. The kernel's flat
 * histogram has the sampled pc only; the stacks say which Python frame ran. A native
 * function Python called (a C function, the interpreter's helpers) keeps its own Self. */
#ifndef HSBPF_PYSELF_H
#define HSBPF_PYSELF_H

#include "profile/profile.h"
#include "symbols/symbolizer.h"

/* the symbol of CPython's evaluation loop, whose frames the Python frames go with */
#define PYSELF_EVAL_LOOP "_PyEval_EvalFrameDefault"

/* a flat sample with its finer keys */
struct pyself_sample {
	struct profile_sample s;
	struct profile_sample_key k;
};

/* whether stack sample ss's own time is its innermost Python frame's: no kernel frames and
 * a Python frame first in its user stack (the native leaf was the evaluation loop, whose
 * frame the Python frames go before or replace) */
bool pyself__leaf(const struct profile *p, const struct profile_stack_sample *ss);

/* p's flat samples with the evaluation loop's own samples moved to the innermost Python
 * frame of the stacks they were taken with (same process image, cgroup, thread, CPU and
 * time bucket): *out (malloc'd, *nr samples, none with a zero count), or *out NULL when no
 * stack has such a frame (the flat samples stand as they are). At most what the flat
 * samples hold is moved: a stack sample the flat histogram lacks moves nothing. 0 or
 * -ENOMEM */
int pyself__samples(const struct profile *p, struct symbolizer *sy, struct pyself_sample **out,
		    size_t *nr);

#endif /* HSBPF_PYSELF_H */
