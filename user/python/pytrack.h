/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A recording's Python processes (docs/python.md): CPython found in the mappings of the
 * processes followed (a command's, -p's, --cgroup's, -a's, whenever they started), handed to
 * the kernel's unwinder with their version's layout; the code objects the kernel announces
 * named from the process's memory while it lives; and, at the end, the profile's Python
 * frames named (function, file, line) in its SEC_PYFRAMES. */
#ifndef HSBPF_PYTRACK_H
#define HSBPF_PYTRACK_H

#include "lib/util.h"

struct sampler;
struct profile;
struct pytrack;

struct pytrack *pytrack__new(struct sampler *s);
void pytrack__free(struct pytrack *t);
/* an executable file mapping of pid's image tag: CPython's object makes pid a Python process */
int pytrack__mmap(struct pytrack *t, u32 pid, u32 tag, const char *path, u64 start, u64 len, u64 pgoff);
/* a new process runs its parent's image, under its own tag, until it execs */
int pytrack__fork(struct pytrack *t, u32 pid, u32 tag, u32 ppid);
/* pid's image is gone (an exec, an exit): the kernel stops reading it */
void pytrack__forget(struct pytrack *t, u32 pid);
/* name the code objects the kernel announced since the last call; -ENOMEM */
int pytrack__poll(struct pytrack *t);
/* name the Python frames of the profile's stacks now, while the recording runs (top): those
 * not named yet whose code objects could be read; -ENOMEM */
int pytrack__name(struct pytrack *t, struct profile *p);
/* name the Python frames of the profile's stacks (what could not be named stays unnamed,
 * counted in stats.py_unnamed, never named after another code object); -ENOMEM */
int pytrack__finish(struct pytrack *t, struct profile *p);

#endif /* HSBPF_PYTRACK_H */
