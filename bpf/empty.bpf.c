// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The benchmark's floor: a perf_event handler that does nothing, so that its cost is the
 * interrupt and BPF dispatch alone. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("perf_event")
int hsbpf_empty(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
