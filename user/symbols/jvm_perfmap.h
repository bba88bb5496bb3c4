/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A HotSpot JVM's JIT code named without a flag in the program: at the end of a recording, a
 * JVM that has no perf map file is asked for one (`jcmd PID Compiler.perfmap`, JDK 17+),
 * within a bounded time; a failure is said in one line and never ends the recording. */
#ifndef HSBPF_JVM_PERFMAP_H
#define HSBPF_JVM_PERFMAP_H

#include "lib/util.h"

#define JVM_JCMD		"jcmd"		/* looked up in PATH */
#define JVM_PERFMAP_TIMEOUT_MS	10000		/* jcmd is a JVM too: ~0.5 s when idle */

/* process pid maps libjvm.so's code (a live HotSpot JVM; not a profiler reading the file) */
bool jvm_perfmap__is_jvm(u32 pid);
/* ask the JVM pid for its perf map with jcmd (the program, JVM_JCMD), waiting up to
 * timeout_ms for it: 0 when the map exists (it had one, or now has), -ENOENT if pid is no
 * live JVM (nothing asked), or -errno once jcmd failed, timed out or wrote no map (warned) */
int jvm_perfmap__ask(u32 pid, const char *jcmd, unsigned timeout_ms);

#endif /* HSBPF_JVM_PERFMAP_H */
