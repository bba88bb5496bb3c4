// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* LBR sampling: each sample's branch stack (bpf_read_branch_records) becomes taken-branch
 * edges and fall-through ranges counted in a hash map; runs of identical entries (a loop's
 * back edge, again and again) are merged so the map is updated once per distinct pair. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "hsbpf.h"
#include "samples.bpf.h"

const volatile bool filter_pids = false;
const volatile bool no_inherit = false;	/* as profile.bpf.c's */
const volatile bool precise = false;	/* the event is precise (PEBS): apply the IP+1 fix */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HSBPF_DEFAULT_ENTRIES);
	__type(key, struct lbr_key);
	__type(value, __u64);
} lbr SEC(".maps");

/* the branch stack and the walk's state live in a per-CPU map value, not on the stack: the
 * verifier does not track map values exactly, so bpf_loop's callback converges at once */
struct walk {
	struct hsbpf_branch e[HSBPF_LBR_MAX];
	struct lbr_key edge, range;
	__u64 run, rrun;
	__s64 n, first;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct walk);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HSBPF_LBR_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} lbr_stats SEC(".maps");

static __always_inline void stat_add(__u32 slot, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&lbr_stats, &slot);

	if (v)
		*v += n;
}

static __always_inline void count(struct lbr_key *k, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&lbr, k);

	stat_add(HSBPF_LBR_UPDATES, 1);
	if (v) {
		__sync_fetch_and_add(v, n);
		return;
	}
	if (bpf_map_update_elem(&lbr, k, &n, BPF_NOEXIST)) {
		v = bpf_map_lookup_elem(&lbr, k);
		if (v)
			__sync_fetch_and_add(v, n);
		else
			stat_add(HSBPF_LBR_DROPPED, n);
	}
}

/* one entry of the stack (verified once, run up to 32 times by bpf_loop) */
struct walk_ctx {
	struct walk *w;
};

static long walk_entry(__u64 i, struct walk_ctx *c)
{
	struct walk *w = c->w;
	struct hsbpf_branch *cur, *newer;

	if ((__s64)i >= w->n || i >= HSBPF_LBR_MAX)
		return 1;
	if ((__s64)i < w->first)
		return 0;
	cur = &w->e[i & (HSBPF_LBR_MAX - 1)];
	/* edges: a run of equal entries becomes one update */
	if (w->run && w->edge.a == cur->from && w->edge.b == cur->to) {
		w->run++;
	} else {
		if (w->run)
			count(&w->edge, w->run);
		w->edge.a = cur->from;
		w->edge.b = cur->to;
		w->run = 1;
	}
	if ((__s64)i <= w->first)
		return 0;
	/* ranges: from this entry's target to the newer entry's source */
	newer = &w->e[(i - 1) & (HSBPF_LBR_MAX - 1)];
	if (cur->to > newer->from || newer->from - cur->to > HSBPF_LBR_MAX_SPAN ||
	    (__s64)newer->from < 0) {
		stat_add(HSBPF_LBR_INVALID, 1);
		return 0;
	}
	if (w->rrun && w->range.a == cur->to && w->range.b == newer->from) {
		w->rrun++;
	} else {
		if (w->rrun)
			count(&w->range, w->rrun);
		w->range.a = cur->to;
		w->range.b = newer->from;
		w->rrun = 1;
	}
	return 0;
}

/* The sample's IP, counted as profile.bpf.c does. A precise sample of a taken branch reports
 * the instruction after the branch, its target (the "IP+1" problem): when the IP is the newest
 * record's target, the sample belongs to that record's source, the branch itself. */
static __always_inline void count_ip(struct bpf_perf_event_data *ctx, struct walk *w, __u32 tgid,
				     struct proc_state *proc)
{
	__u64 ip = PT_REGS_IP(&ctx->regs);

	if (precise && w->n > 0 && ip == w->e[0].to)
		ip = w->e[0].from;
	if (!samples__count(tgid, ip, proc, ctx->sample_period))
		stat_add(HSBPF_LBR_DROPPED, 1);
}

SEC("perf_event")
int hsbpf_lbr(struct bpf_perf_event_data *ctx)
{
	struct proc_state *proc;
	struct walk_ctx c;
	__u32 zero = 0, tgid;
	struct walk *w;
	long bytes;

	tgid = bpf_get_current_pid_tgid() >> 32;
	proc = bpf_map_lookup_elem(&procs, &tgid);
	if (filter_pids && (!proc || proc->state != HSBPF_PID_ACTIVE ||
			    (no_inherit && (__u32)bpf_get_current_pid_tgid() != tgid)))
		return 0;
	w = bpf_map_lookup_elem(&scratch, &zero);
	if (!w)
		return 0;
	bytes = bpf_read_branch_records(ctx, w->e, sizeof(w->e), 0);
	if (bytes <= 0)
		return 0;
	w->n = bytes / sizeof(struct hsbpf_branch);
	w->first = 0;
	w->run = w->rrun = 0;
	stat_add(HSBPF_LBR_SAMPLES, 1);
	stat_add(HSBPF_LBR_ENTRIES, w->n);
	w->edge.kind = HSBPF_LBR_EDGE;
	w->range.kind = HSBPF_LBR_RANGE;
	w->edge.pid = w->range.pid = tgid;
	w->edge.exec_ns = w->range.exec_ns = proc ? proc->exec_ns : 0;
	/* the Skylake-family duplicate of the newest entry, unless a short backward branch */
	if (w->n >= 2 && w->e[0].from == w->e[1].from && w->e[0].to == w->e[1].to &&
	    !(w->e[0].to <= w->e[0].from && w->e[0].from - w->e[0].to <= 0x1000)) {
		stat_add(HSBPF_LBR_DUP_TOP, 1);
		w->first = 1;
	}
	c.w = w;
	count_ip(ctx, w, tgid, proc);
	bpf_loop(HSBPF_LBR_MAX, walk_entry, &c, 0);
	if (w->run)
		count(&w->edge, w->run);
	if (w->rrun)
		count(&w->range, w->rrun);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
