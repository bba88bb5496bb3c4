// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Off-CPU time in profiles: the options, the metadata, report's time view and its header
 * (user/record/offcpu.h; the kernel side is bpf/offcpu.bpf.h, the design docs/off-cpu.md). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
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

/* --switch-sample's least probability: a block then weighs 10000 times its time, which holds
 * in 64 bits of ns for blocks of up to three weeks */
#define OFFCPU_SAMPLE_MIN	0.0001

int offcpu__parse_sample(const char *arg, double *p)
{
	char *end = NULL;
	u64 n;

	if (!strncmp(arg, "1/", 2)) {
		if (parse_u64(arg + 2, &n) || !n || n > 1 / OFFCPU_SAMPLE_MIN)
			goto bad;
		*p = 1.0 / n;
		return 0;
	}
	errno = 0;
	*p = strtod(arg, &end);
	if (errno || end == arg || *end || !(*p >= OFFCPU_SAMPLE_MIN && *p <= 1))
		goto bad;
	return 0;
bad:
	return fail(-EINVAL, "invalid --switch-sample '%s' (a probability from %g to 1, or 1/N with N "
		    "up to %.0f)", arg, OFFCPU_SAMPLE_MIN, 1 / OFFCPU_SAMPLE_MIN);
}

u32 offcpu__sample_below(double p)
{
	double below = p * 4294967296.0;

	if (p <= 0 || below >= 4294967295.0)
		return 0;
	return below < 1 ? 1 : (u32)llround(below);
}

int offcpu__settle_opts(struct sampler_params *o, const struct event_spec *ev)
{
	if (o->offcpu == OFFCPU_NONE) {
		if (o->switch_sample)
			return fail(-EINVAL, "--switch-sample follows off-CPU blocks: give --off-cpu or "
				    "--wall");
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
	/* the probability the switch program draws with, which the scale undoes */
	m->offcpu_sample = o->offcpu && offcpu__sample_below(o->switch_sample) ?
			   offcpu__sample_below(o->switch_sample) / 4294967296.0 : 0;
}

bool offcpu__in_profile(const struct profile *p)
{
	return p->meta.offcpu[0] != 0;
}

bool offcpu__only(const struct profile *p)
{
	return !strcmp(p->meta.offcpu, "off");
}

bool offcpu__sampled(const struct profile *p)
{
	return p->meta.offcpu_sample > 0 && p->meta.offcpu_sample < 1;
}

void offcpu__interval(const struct profile *p, u64 blocks, double est, double z, double *lo, double *hi)
{
	double q = 1 - p->meta.offcpu_sample, c, half;

	*lo = *hi = est;
	if (!offcpu__sampled(p) || !blocks)
		return;
	/* the n blocks followed are a binomial draw of the N there were, mean N P, variance
	 * N P (1 - P); each stands for 1 / P blocks like it (their lengths alike in a row). The
	 * score (Wilson) interval of the mean m: (n - m)^2 = z^2 (1 - P) m, solved for m; the
	 * time scales with it. Not n's normal interval: a low draw would be too sure of itself */
	c = z * z * q;
	half = z * sqrt(q * (blocks + c / 4));
	*lo = est * (blocks + c / 2 - half) / blocks;
	*hi = est * (blocks + c / 2 + half) / blocks;
}

double offcpu__ci95(const struct profile *p, u64 blocks)
{
	double lo, hi;

	offcpu__interval(p, blocks, 1, OFFCPU_Z95, &lo, &hi);
	return (hi - lo) / 2;
}

void offcpu__print_event(const struct profile *p, u64 total_us, const char *prefix, FILE *out)
{
	u64 blocks = p->stats.offcpu_blocks;
	double lo, hi;

	/* no event ran and nothing was sampled: the meta's event and period are the defaults */
	if (!offcpu__sampled(p)) {
		fprintf(out, "%soff-CPU time, measured at every context switch (sched_switch), not "
			"sampled: %.3f ms\n", prefix, total_us / 1e3);
		return;
	}
	offcpu__interval(p, blocks, total_us / 1e3, OFFCPU_Z95, &lo, &hi);
	fprintf(out, "%soff-CPU time, estimated from the blocks followed at random (--switch-sample "
		"%.4g: each weighs %.4g times its time): %.3f ms, 95%% interval %.3f to %.3f ms (%" PRIu64
		" blocks)\n", prefix, p->meta.offcpu_sample, 1 / p->meta.offcpu_sample, total_us / 1e3,
		lo, hi, blocks);
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

int offcpu__count_time(struct profile *p)
{
	if (offcpu__sampled(p) && !p->offcpu_blocks && p->nr_samples) {
		p->offcpu_blocks = calloc(p->nr_samples, sizeof(*p->offcpu_blocks));
		if (!p->offcpu_blocks)
			return fail(-ENOMEM, "cannot weigh off-CPU time: %s", strerror(ENOMEM));
		for (size_t i = 0; i < p->nr_samples; i++)
			if (p->samples[i].flags & HSBPF_KEY_OFFCPU)
				p->offcpu_blocks[i] = p->samples[i].count;
	}
	for (size_t i = 0; i < p->nr_samples; i++)
		p->samples[i].count = to_us(p->samples[i].weight);
	for (size_t i = 0; i < p->nr_stack_samples; i++)
		p->stack_samples[i].count = to_us(p->stack_samples[i].weight);
	return 0;
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
	if (offcpu__sampled(p))
		fprintf(out, "%sblocks followed at random: %" PRIu64 " of %" PRIu64 " (the Time column and "
			"CI95 are estimates: each block weighs %.4g times its time)\n", prefix,
			st->offcpu_switches + st->offcpu_underway, st->offcpu_switches +
			st->offcpu_underway + st->offcpu_unsampled, 1 / p->meta.offcpu_sample);
	if (st->offcpu_underway)
		fprintf(out, "%s%" PRIu64 " blocks were under way at the start: counted from it (%.3f ms)\n",
			prefix, st->offcpu_underway, st->offcpu_underway_ns / 1e6);
	if (st->offcpu_underway_early)
		fprintf(out, "%s%" PRIu64 " of them ended before the start's walk met their thread: found "
			"when it ran again\n", prefix, st->offcpu_underway_early);
	if (st->offcpu_asleep)
		fprintf(out, "%s%" PRIu64 " threads were blocked from the start to the end: not counted "
			"(never run, their user stacks were never at hand)\n", prefix, st->offcpu_asleep);
	if (st->offcpu_open)
		fprintf(out, "%s%" PRIu64 " blocks were still open at the end: counted up to it\n", prefix,
			st->offcpu_open);
	if (st->offcpu_no_storage)
		fprintf(out, "%sWARNING: %" PRIu64 " switches were missed: no task storage for the task "
			"(or none found when it ran again: that block lost)\n", prefix, st->offcpu_no_storage);
	if (profile__has_key(p, "waker"))
		fprintf(out, "%swakers: %" PRIu64 " wake-ups of blocked threads seen; %" PRIu64 " blocks "
			"(not preempted) with no wake-up seen%s\n", prefix, st->offcpu_wakeups,
			st->offcpu_unwoken, st->offcpu_unwoken ? " (woken before the recording, or by "
			"what the tracepoint does not see)" : "");
	if (st->offcpu_wakers_read || st->offcpu_wakers_gone || st->offcpu_wakers_unannounced)
		fprintf(out, "%swakers outside the target: %" PRIu64 " read while they ran (mappings and "
			"name); %" PRIu64 " gone before (exited or exec'd within a moment of their first "
			"wake-up: user frames [unknown], name kept)%s\n", prefix, st->offcpu_wakers_read,
			st->offcpu_wakers_gone,
			st->offcpu_wakers_unannounced ? "; some not announced (the kernel's ring full): "
			"read at the end" : "");
	if (st->offcpu_waker_lost)
		fprintf(out, "%sWARNING: %" PRIu64 " blocks lost their waker's stacks: the waker-sample "
			"map was full (raise --map-entries), or their own stack was unwound in user "
			"space (a program's first milliseconds); they count without it\n", prefix,
			st->offcpu_waker_lost);
	if (st->offcpu_full)
		fprintf(out, "%sWARNING: %" PRIu64 " blocks (%.3f ms) were lost: the sample map was full "
			"(raise --map-entries)\n", prefix, st->offcpu_full, st->offcpu_full_ns / 1e6);
}
