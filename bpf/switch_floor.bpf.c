// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The off-CPU benchmark's floor: a sched_switch program (tp_btf, as the off-CPU one) that does
 * nothing, so that its cost is what any tool attached there pays at least: the tracepoint and
 * BPF dispatch on every context switch (bench/switch_floor.c, make bench-offcpu). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("tp_btf/sched_switch")
int BPF_PROG(hsbpf_switch_floor, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
