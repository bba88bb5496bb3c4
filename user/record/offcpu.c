// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Off-CPU time in profiles: the options, the metadata, report's time view and its header
 * (user/record/offcpu.h; the kernel side is bpf/offcpu.bpf.h, the design docs/off-cpu.md). */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "record/offcpu.h"
#include "lib/util.h"
#include "record/event.h"
#include "record/sampler.h"

/* a block of a year is nonsense; the bound keeps microseconds in ns from overflowing */
#define OFFCPU_MAX_US	(365ull * 86400 * 1000000)

int offcpu__parse_us(const char *opt, const char *arg, u64 *ns)
{
	u64 us;

	if (parse_u64(arg, &us) || us > OFFCPU_MAX_US)
		return fail(-EINVAL, "invalid %s '%s' (microseconds, 0 to %llu)", opt, arg,
			    (unsigned long long)OFFCPU_MAX_US);
	*ns = us * 1000;
	return 0;
}

int offcpu__settle_opts(struct sampler_params *o, const struct event_spec *ev)
{
	if (o->offcpu == OFFCPU_NONE) {
		if (o->min_block_ns || o->max_block_ns)
			return fail(-EINVAL, "--min-block and --max-block bound off-CPU blocks: give "
				    "--off-cpu or --wall");
		if (o->wakers)
			return fail(-EINVAL, "--wakers names who woke off-CPU blocks: give --off-cpu "
				    "or --wall");
		return 0;
	}
	if (o->max_block_ns && o->min_block_ns > o->max_block_ns)
		return fail(-EINVAL, "--min-block %" PRIu64 " is above --max-block %" PRIu64
			    " (microseconds)", o->min_block_ns / 1000, o->max_block_ns / 1000);
	if (o->live && o->offcpu == OFFCPU_WALL)
		return fail(-EINVAL, "top shows off-CPU time alone (--off-cpu), not with samples");
	if (o->offcpu == OFFCPU_WALL && !ev->is_clock)
		return fail(-EINVAL, "--wall adds on-CPU samples to off-CPU time: it needs a clock "
			    "event (cpu-clock, task-clock), whose samples weigh time");
	if (ev->branch_stack || o->call_graph == HSBPF_CALL_GRAPH_LBR)
		return fail(-EINVAL, "off-CPU stacks are unwound at the switch: --call-graph dwarf or "
			    "fp, not the LBR");
	if (o->call_graph == HSBPF_CALL_GRAPH_NONE)
		o->call_graph = HSBPF_CALL_GRAPH_DWARF;
	return 0;
}

void offcpu__fill_meta(struct profile_meta *m, const struct sampler_params *o)
{
	snprintf(m->offcpu, sizeof(m->offcpu), "%s", o->offcpu == OFFCPU_ONLY ? "off" :
		 o->offcpu == OFFCPU_WALL ? "wall" : "");
	m->min_block_ns = o->offcpu ? o->min_block_ns : 0;
	m->max_block_ns = o->offcpu ? o->max_block_ns : 0;
}

bool offcpu__in_profile(const struct profile *p)
{
	return p->meta.offcpu[0] != 0;
}

bool offcpu__only(const struct profile *p)
{
	return !strcmp(p->meta.offcpu, "off");
}

void offcpu__print_event(u64 total_us, const char *prefix, FILE *out)
{
	/* no event ran and nothing was sampled: the meta's event and period are the defaults */
	fprintf(out, "%soff-CPU time, measured at every context switch (sched_switch), not sampled: "
		"%.3f ms\n", prefix, total_us / 1e3);
}

u32 offcpu__state(u32 flags)
{
	if (!(flags & HSBPF_KEY_OFFCPU))
		return 0;
	return (flags & HSBPF_KEY_STATE_MASK) >> HSBPF_KEY_STATE_SHIFT;
}

const char *offcpu__state_name(u32 state)
{
	static const char *const names[HSBPF_OFFCPU_NR] = {
		[0] = "on-CPU", [HSBPF_OFFCPU_S] = "S", [HSBPF_OFFCPU_D] = "D",
		[HSBPF_OFFCPU_R] = "R", [HSBPF_OFFCPU_OTHER] = "other",
	};

	return state < HSBPF_OFFCPU_NR ? names[state] : "other";
}

void offcpu__totals(const struct profile *p, struct offcpu_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct profile_sample *s = &p->samples[i];
		u32 state = offcpu__state(s->flags);

		if (!(s->flags & HSBPF_KEY_OFFCPU)) {
			t->on_ns += s->weight;
			continue;
		}
		t->off_ns += s->weight;
		t->blocks += s->count;
		t->by_state[state < HSBPF_OFFCPU_NR ? state : HSBPF_OFFCPU_OTHER] += s->weight;
	}
}

static u64 to_us(u64 ns)
{
	return ns / 1000 + (ns % 1000 >= 500);
}

void offcpu__count_time(struct profile *p)
{
	for (size_t i = 0; i < p->nr_samples; i++)
		p->samples[i].count = to_us(p->samples[i].weight);
	for (size_t i = 0; i < p->nr_stack_samples; i++)
		p->stack_samples[i].count = to_us(p->stack_samples[i].weight);
}

void offcpu__print_header(const struct profile *p, const char *prefix, FILE *out)
{
	const struct profile_stats *st = &p->stats;
	struct offcpu_totals t;
	const char *sep = "";

	offcpu__totals(p, &t);
	/* the recording's count of blocks: report's time view has turned counts into time */
	fprintf(out, "%soff-CPU %.3f ms in %" PRIu64 " blocks", prefix, t.off_ns / 1e6, st->offcpu_blocks);
	if (!strcmp(p->meta.offcpu, "wall"))
		fprintf(out, ", on-CPU %.3f ms (wall: %.3f ms)", t.on_ns / 1e6, (t.on_ns + t.off_ns) / 1e6);
	fprintf(out, "; by state: ");
	for (u32 s = HSBPF_OFFCPU_S; s < HSBPF_OFFCPU_NR; s++) {
		if (!t.by_state[s])
			continue;
		fprintf(out, "%s%s %.3f ms (%.1f%%)", sep, offcpu__state_name(s), t.by_state[s] / 1e6,
			t.off_ns ? 100.0 * t.by_state[s] / t.off_ns : 0.0);
		sep = ", ";
	}
	fprintf(out, "%s\n", *sep ? "" : "none");
	if (p->meta.min_block_ns || p->meta.max_block_ns || st->offcpu_short || st->offcpu_long) {
		fprintf(out, "%sblocks kept: %" PRIu64 " us and longer", prefix, p->meta.min_block_ns / 1000);
		if (p->meta.max_block_ns)
			fprintf(out, ", up to %" PRIu64 " us", p->meta.max_block_ns / 1000);
		fprintf(out, "; left out: %" PRIu64 " shorter, %" PRIu64 " longer\n", st->offcpu_short,
			st->offcpu_long);
	}
	if (st->offcpu_underway)
		fprintf(out, "%s%" PRIu64 " blocks were under way at the start: counted from it (%.3f ms)\n",
			prefix, st->offcpu_underway, st->offcpu_underway_ns / 1e6);
	if (st->offcpu_asleep)
		fprintf(out, "%s%" PRIu64 " threads were blocked from the start to the end: not counted "
			"(never run, their user stacks were never at hand)\n", prefix, st->offcpu_asleep);
	if (st->offcpu_open)
		fprintf(out, "%s%" PRIu64 " blocks were still open at the end: counted up to it\n", prefix,
			st->offcpu_open);
	if (st->offcpu_no_storage)
		fprintf(out, "%sWARNING: %" PRIu64 " switches were missed: no task storage for the task\n",
			prefix, st->offcpu_no_storage);
	if (profile__has_key(p, "waker"))
		fprintf(out, "%swakers: %" PRIu64 " wake-ups of blocked threads seen; %" PRIu64 " blocks "
			"(not preempted) with no wake-up seen%s\n", prefix, st->offcpu_wakeups,
			st->offcpu_unwoken, st->offcpu_unwoken ? " (woken before the recording, or by "
			"what the tracepoint does not see)" : "");
	if (st->offcpu_waker_lost)
		fprintf(out, "%sWARNING: %" PRIu64 " blocks lost their waker's stacks: the waker-sample "
			"map was full (raise --map-entries), or their own stack was unwound in user "
			"space (a program's first milliseconds); they count without it\n", prefix,
			st->offcpu_waker_lost);
	if (st->offcpu_full)
		fprintf(out, "%sWARNING: %" PRIu64 " blocks (%.3f ms) were lost: the sample map was full "
			"(raise --map-entries)\n", prefix, st->offcpu_full, st->offcpu_full_ns / 1e6);
}
