/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Privileges: whether this process may load and attach hsbpf's BPF programs, asked once
 * before anything opens, so that a user without them gets one clear message. */
#ifndef HSBPF_CAPS_H
#define HSBPF_CAPS_H

#include <stdbool.h>
#include "lib/util.h"

/* effective capability bits (bit n: capability n) into *set; 0 or -errno */
int caps__effective(u64 *set);
/* whether a capability set may load tracing BPF programs and open perf events: CAP_SYS_ADMIN
 * (root, and kernels before 5.8), or CAP_BPF and CAP_PERFMON */
bool caps__can_trace(u64 set);
/* 0 when this process can trace; otherwise -EPERM after "CMD: need root or CAP_BPF and
 * CAP_PERFMON to load BPF programs" (cmd: "hsbpf record") */
int caps__check(const char *cmd);

#endif /* HSBPF_CAPS_H */
