// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The virtual PMU's clock and sampling hardware: a cycle-approximate out-of-order core
 * (dataflow through registers, a small cache hierarchy, a branch predictor, in-order retirement
 * of up to `width` instructions a cycle) and the PMU that samples on its retirement stream.
 * Parameters and their sources: the table below, documented in docs/virtual-pmu.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "timing.h"

#define P(f) offsetof(struct tm_params, f)
#define AGNER "Agner Fog, Instruction tables (2016), Haswell"
#define INTEL_OPT "Intel 64 and IA-32 Architectures Optimization Reference Manual, Haswell"

/* Haswell (4th generation Core), the newest of the microarchitectures the paper measured and
 * the first whose PEBS records also carry the eventing IP */
const struct tm_param_desc tm_param_table[] = {
	{ "width", P(width), 1, 16, "instructions dispatched and retired per cycle",
	  INTEL_OPT ": 4 uops per cycle allocated and retired" },
	{ "rob", P(rob), 1, 4096, "reorder buffer entries", INTEL_OPT ": 192-entry ROB" },
	{ "alu", P(alu), 1, 1000, "latency of simple integer and vector operations, cycles",
	  AGNER ": ADD, MOV, LEA, logic 1" },
	{ "imul", P(imul), 1, 1000, "integer multiply latency", AGNER ": IMUL r64,r64 3" },
	{ "div32_min", P(div32_min), 1, 1000, "DIV/IDIV r8-r32 latency, fastest",
	  AGNER ": DIV r32 22-29" },
	{ "div32_max", P(div32_max), 1, 1000, "DIV/IDIV r8-r32 latency, slowest",
	  AGNER ": DIV r32 22-29" },
	{ "div64_min", P(div64_min), 1, 1000, "DIV/IDIV r64 latency, fastest",
	  AGNER ": DIV r64 32-96 (IDIV r64 39-103)" },
	{ "div64_max", P(div64_max), 1, 1000, "DIV/IDIV r64 latency, slowest",
	  AGNER ": DIV r64 32-96 (IDIV r64 39-103)" },
	{ "fadd", P(fadd), 1, 1000, "FP add, compare, convert latency", AGNER ": ADDSD 3" },
	{ "fmul", P(fmul), 1, 1000, "FP multiply and FMA latency", AGNER ": MULSD 5, FMA 5" },
	{ "fdiv_min", P(fdiv_min), 1, 1000, "FP divide latency, fastest", AGNER ": DIVSD 10-20" },
	{ "fdiv_max", P(fdiv_max), 1, 1000, "FP divide latency, slowest", AGNER ": DIVSD 10-20" },
	{ "fsqrt", P(fsqrt), 1, 1000, "FP square root latency", AGNER ": SQRTSD 16" },
	{ "atomic", P(atomic), 1, 1000, "locked read-modify-write latency (serializing)",
	  AGNER ": LOCK ADD, XCHG m,r about 19" },
	{ "serial", P(serial), 1, 10000, "serializing instructions (cpuid, rdtsc, fences) latency",
	  AGNER ": RDTSC 25, MFENCE 33, CPUID 100+; one figure for all" },
	{ "syscall", P(syscall), 1, 1000000, "syscall: the kernel is not modelled, a stand-in cost",
	  "model choice: a round 100 cycles for entry and exit" },
	{ "l1_lat", P(l1_lat), 1, 1000, "L1 data cache load-to-use latency",
	  INTEL_OPT ": 4 cycles (5 with a complex address)" },
	{ "l2_lat", P(l2_lat), 1, 1000, "L2 load-to-use latency", INTEL_OPT ": 11-12 cycles" },
	{ "l3_lat", P(l3_lat), 1, 10000, "L3 load-to-use latency", INTEL_OPT ": about 34-36 cycles" },
	{ "mem_lat", P(mem_lat), 1, 100000, "memory load-to-use latency",
	  "L3 latency + about 60 ns of DRAM at 3.4 GHz (Agner Fog, microarchitecture, Haswell)" },
	{ "l1_kb", P(l1_kb), 1, 1 << 20, "L1D size, KiB (64-byte lines, LRU)", INTEL_OPT ": 32 KiB" },
	{ "l1_ways", P(l1_ways), 1, 64, "L1D associativity", INTEL_OPT ": 8-way" },
	{ "l2_kb", P(l2_kb), 1, 1 << 20, "L2 size, KiB", INTEL_OPT ": 256 KiB" },
	{ "l2_ways", P(l2_ways), 1, 64, "L2 associativity", INTEL_OPT ": 8-way" },
	{ "l3_kb", P(l3_kb), 1, 1 << 22, "L3 size, KiB (per thread here: not shared)",
	  "Core i7-4770: 8 MiB" },
	{ "l3_ways", P(l3_ways), 1, 64, "L3 associativity", "Core i7-4770: 16-way" },
	{ "prefetch", P(prefetch), 0, 64, "lines after a missing line brought in with it",
	  INTEL_OPT ": the L1 next-line and L2 streamer prefetchers, as one next-line prefetch" },
	{ "bp_bits", P(bp_bits), 1, 24, "gshare predictor: log2 of its 2-bit counters and history bits",
	  "model choice: Haswell's predictor is undocumented; a textbook 4096-entry gshare" },
	{ "btb_bits", P(btb_bits), 1, 24, "indirect target table: log2 entries (last target)",
	  "model choice: a last-target table of 4096 entries" },
	{ "ras", P(ras), 1, 1024, "return stack buffer entries", "Agner Fog, microarchitecture: 16" },
	{ "mispredict", P(mispredict), 0, 1000,
	  "cycles from a mispredicted branch's execution to the next fetch",
	  "Agner Fog, microarchitecture: 15-20; LLVM's Haswell model: MispredictPenalty 16" },
	{ "taken_bubble", P(taken_bubble), 0, 100, "fetch cycles lost at a taken branch",
	  INTEL_OPT ": one taken branch per cycle" },
	{ "irq_latency", P(irq_latency), 0, 100000,
	  "cycles from a counter overflow to the interrupt being taken (classic sampling)",
	  "model choice: Intel documents the causes (APIC delivery, retirement) but not a figure" },
	{ "pebs_arm", P(pebs_arm), 0, 100000,
	  "cycles from an overflow until PEBS is armed: the next event after that is recorded",
	  "model choice: the next retirement cycle (the PEBS shadow PDIR was built to remove)" },
};
const size_t tm_nr_params = sizeof(tm_param_table) / sizeof(tm_param_table[0]);

void tm_params__default(struct tm_params *p)
{
	*p = (struct tm_params){
		.width = 4, .rob = 192, .alu = 1, .imul = 3, .div32_min = 22, .div32_max = 29,
		.div64_min = 32, .div64_max = 96, .fadd = 3, .fmul = 5, .fdiv_min = 10, .fdiv_max = 20,
		.fsqrt = 16, .atomic = 19, .serial = 30, .syscall = 100, .l1_lat = 4, .l2_lat = 12,
		.l3_lat = 36, .mem_lat = 240, .l1_kb = 32, .l1_ways = 8, .l2_kb = 256, .l2_ways = 8,
		.l3_kb = 8192, .l3_ways = 16, .prefetch = 1, .bp_bits = 12, .btb_bits = 12, .ras = 16,
		.mispredict = 16, .taken_bubble = 1, .irq_latency = 32, .pebs_arm = 1,
	};
}

int *tm_params__field(struct tm_params *p, const struct tm_param_desc *d)
{
	return (int *)((char *)p + d->off);
}

/* all or nothing: p changes only when every assignment is valid */
int tm_params__set(struct tm_params *out, const char *assignments, char *err, size_t err_size)
{
	char *copy = strdup(assignments), *tok, *save = NULL;
	struct tm_params np = *out, *p = &np;
	int ret = 0;

	if (!copy) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	for (tok = strtok_r(copy, ",:", &save); tok && !ret; tok = strtok_r(NULL, ",:", &save)) {
		char *eq = strchr(tok, '='), *end;
		const struct tm_param_desc *d = NULL;
		long v;

		if (!eq) {
			snprintf(err, err_size, "'%s' is not NAME=VALUE", tok);
			ret = -1;
			break;
		}
		*eq = 0;
		for (size_t i = 0; i < tm_nr_params && !d; i++)
			if (!strcmp(tm_param_table[i].name, tok))
				d = &tm_param_table[i];
		v = strtol(eq + 1, &end, 10);
		if (!d) {
			snprintf(err, err_size, "unknown timing parameter '%s'", tok);
			ret = -1;
		} else if (end == eq + 1 || *end || v < d->min || v > d->max) {
			snprintf(err, err_size, "invalid %s '%s' (%d to %d)", tok, eq + 1, d->min, d->max);
			ret = -1;
		} else {
			*tm_params__field(p, d) = v;
		}
	}
	free(copy);
	if (!ret && (p->div32_min > p->div32_max || p->div64_min > p->div64_max ||
		     p->fdiv_min > p->fdiv_max)) {
		snprintf(err, err_size, "a latency's _min is above its _max");
		ret = -1;
	}
	if (!ret)
		*out = np;
	return ret;
}

/* ---- caches: set-associative, LRU, 64-byte lines ---- */

struct tm_cache {
	uint64_t *tag;		/* line number + 1; 0 is empty */
	uint64_t *stamp;
	uint64_t clock;
	uint32_t sets, ways, set_mask;	/* set_mask: sets - 1 when a power of two, else 0 */
};

static int cache_init(struct tm_cache *c, int kb, int ways)
{
	size_t lines = (size_t)kb * 1024 / 64;

	if (lines < (size_t)ways)
		lines = ways;
	c->ways = ways;
	c->sets = lines / ways;
	c->set_mask = (c->sets & (c->sets - 1)) ? 0 : c->sets - 1;
	c->tag = calloc((size_t)c->sets * ways, sizeof(*c->tag));
	c->stamp = calloc((size_t)c->sets * ways, sizeof(*c->stamp));
	return c->tag && c->stamp ? 0 : -1;
}

static void cache_free(struct tm_cache *c)
{
	free(c->tag);
	free(c->stamp);
}

/* 1 on a hit; on a miss the line replaces the least recently used of its set */
static int cache_access(struct tm_cache *c, uint64_t line)
{
	size_t base = (size_t)(c->set_mask ? line & c->set_mask : line % c->sets) * c->ways;
	size_t victim = base;

	c->clock++;
	for (size_t w = base; w < base + c->ways; w++) {
		if (c->tag[w] == line + 1) {
			c->stamp[w] = c->clock;
			return 1;
		}
		if (c->stamp[w] < c->stamp[victim])
			victim = w;
	}
	c->tag[victim] = line + 1;
	c->stamp[victim] = c->clock;
	return 0;
}

/* ---- the core ---- */

#define TM_NREGS 34

struct tm_core {
	struct tm_params p;
	struct tm_cache l1, l2, l3;
	uint64_t ready[TM_NREGS];	/* cycle each register's value is ready */
	uint64_t fe_cycle;		/* the front end's current dispatch cycle */
	int fe_count;			/* instructions dispatched in it */
	uint64_t *rob;			/* retirement cycles of the last p.rob instructions */
	size_t rob_pos;
	uint64_t last_retire;
	int retire_count;		/* retired in last_retire's cycle */
	uint64_t div_free;		/* the divider is not pipelined */
	uint8_t *bp;			/* 2-bit counters */
	uint64_t ghist, bp_mask;
	uint64_t *btb, btb_mask;
	uint64_t *ras;
	unsigned ras_top, ras_n;
	uint64_t rng;
	struct tm_stats st;
};

struct tm_core *tm_core__new(const struct tm_params *p, uint64_t seed)
{
	struct tm_core *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->p = *p;
	c->rng = seed | 1;
	c->bp_mask = (1ull << p->bp_bits) - 1;
	c->btb_mask = (1ull << p->btb_bits) - 1;
	c->rob = calloc(p->rob, sizeof(*c->rob));
	c->bp = malloc(c->bp_mask + 1);
	c->btb = calloc(c->btb_mask + 1, sizeof(*c->btb));
	c->ras = calloc(p->ras, sizeof(*c->ras));
	if (!c->rob || !c->bp || !c->btb || !c->ras || cache_init(&c->l1, p->l1_kb, p->l1_ways) ||
	    cache_init(&c->l2, p->l2_kb, p->l2_ways) || cache_init(&c->l3, p->l3_kb, p->l3_ways)) {
		tm_core__free(c);
		return NULL;
	}
	memset(c->bp, 1, c->bp_mask + 1);	/* weakly not taken */
	return c;
}

void tm_core__free(struct tm_core *c)
{
	if (!c)
		return;
	cache_free(&c->l1);
	cache_free(&c->l2);
	cache_free(&c->l3);
	free(c->rob);
	free(c->bp);
	free(c->btb);
	free(c->ras);
	free(c);
}

void tm_core__stats(const struct tm_core *c, struct tm_stats *s)
{
	*s = c->st;
	s->cycles = c->last_retire;
}

static uint64_t draw(struct tm_core *c, int lo, int hi)
{
	c->rng ^= c->rng << 13;
	c->rng ^= c->rng >> 7;
	c->rng ^= c->rng << 17;
	return lo + c->rng % (uint64_t)(hi - lo + 1);
}

/* load-to-use latency of one access; every level on the way fills (inclusive hierarchy) */
static int mem_latency(struct tm_core *c, uint64_t addr)
{
	uint64_t line = addr >> 6;
	int lat;

	if (cache_access(&c->l1, line))
		return c->p.l1_lat;
	c->st.l1_miss++;
	if (cache_access(&c->l2, line)) {
		lat = c->p.l2_lat;
	} else {
		c->st.l2_miss++;
		if (cache_access(&c->l3, line)) {
			lat = c->p.l3_lat;
		} else {
			c->st.l3_miss++;
			lat = c->p.mem_lat;
		}
	}
	for (int k = 1; k <= c->p.prefetch; k++) {
		cache_access(&c->l3, line + k);
		cache_access(&c->l2, line + k);
		cache_access(&c->l1, line + k);
	}
	return lat;
}

/* 1 if the branch was mispredicted; the predictors learn the outcome */
static int mispredicted(struct tm_core *c, const struct tm_insn *in, uint64_t pc, int taken,
			uint64_t next_pc)
{
	int miss = 0;

	switch (in->cls) {
	case TM_JCC: {
		uint8_t *ctr = &c->bp[(pc ^ c->ghist) & c->bp_mask];

		miss = (*ctr >= 2) != !!taken;
		if (taken && *ctr < 3)
			(*ctr)++;
		else if (!taken && *ctr > 0)
			(*ctr)--;
		c->ghist = ((c->ghist << 1) | !!taken) & c->bp_mask;
		c->st.cond++;
		break;
	}
	case TM_JMP_IND:
	case TM_CALL_IND: {
		uint64_t *slot = &c->btb[(pc ^ (pc >> 12)) & c->btb_mask];

		miss = *slot != next_pc;
		*slot = next_pc;
		break;
	}
	case TM_RET:
		if (!c->ras_n) {
			miss = 1;
		} else {
			c->ras_top = (c->ras_top + c->p.ras - 1) % c->p.ras;
			c->ras_n--;
			miss = c->ras[c->ras_top] != next_pc;
		}
		break;
	default:
		break;
	}
	if (in->cls == TM_CALL || in->cls == TM_CALL_IND) {
		c->ras[c->ras_top] = pc + in->len;
		c->ras_top = (c->ras_top + 1) % c->p.ras;
		if (c->ras_n < (unsigned)c->p.ras)
			c->ras_n++;
	}
	c->st.mispredicts += miss;
	return miss;
}

uint64_t tm_core__retire(struct tm_core *c, const struct tm_insn *in, uint64_t pc,
			 const struct tm_access *acc, unsigned nacc, int taken, uint64_t next_pc)
{
	const struct tm_params *p = &c->p;
	uint64_t dispatch = c->fe_cycle, start, complete, retire;
	int lat, load = -1;
	int serial = in->cls == TM_SERIAL || in->cls == TM_SYSCALL || in->cls == TM_ATOMIC;

	/* the front end: width a cycle, and a free reorder-buffer entry */
	if (c->rob[c->rob_pos] > dispatch)
		dispatch = c->rob[c->rob_pos];
	if (dispatch > c->fe_cycle) {
		c->fe_cycle = dispatch;
		c->fe_count = 0;
	}
	if (++c->fe_count >= p->width) {
		c->fe_cycle++;
		c->fe_count = 0;
	}
	/* dataflow: issue when the sources are ready */
	start = dispatch;
	for (uint64_t m = in->src; m; m &= m - 1) {
		int r = __builtin_ctzll(m);

		if (r < TM_NREGS && c->ready[r] > start)
			start = c->ready[r];
	}
	if (serial && c->last_retire > start)
		start = c->last_retire;	/* waits for everything older to retire */
	switch (in->cls) {
	case TM_IMUL:
		lat = p->imul;
		break;
	case TM_DIV:
		lat = in->size == 8 ? draw(c, p->div64_min, p->div64_max) : draw(c, p->div32_min, p->div32_max);
		break;
	case TM_FADD:
		lat = p->fadd;
		break;
	case TM_FMUL:
		lat = p->fmul;
		break;
	case TM_FDIV:
		lat = draw(c, p->fdiv_min, p->fdiv_max);
		break;
	case TM_FSQRT:
		lat = p->fsqrt;
		break;
	case TM_ATOMIC:
		lat = p->atomic;
		break;
	case TM_SERIAL:
		lat = p->serial;
		break;
	case TM_SYSCALL:
		lat = p->syscall;
		break;
	default:
		lat = p->alu;
		break;
	}
	if (in->cls == TM_DIV || in->cls == TM_FDIV || in->cls == TM_FSQRT) {
		if (c->div_free > start)
			start = c->div_free;
		c->div_free = start + lat;
	}
	/* memory: loads add their level's latency; stores go through the store buffer */
	for (unsigned k = 0; k < nacc; k++) {
		if (acc[k].store) {
			c->st.l1_miss += !cache_access(&c->l1, acc[k].addr >> 6);
			cache_access(&c->l2, acc[k].addr >> 6);
			cache_access(&c->l3, acc[k].addr >> 6);
		} else {
			int l = mem_latency(c, acc[k].addr);

			if (l > load)
				load = l;
		}
	}
	if (load >= 0)
		lat = (in->cls == TM_ALU ? 0 : lat) + load;
	complete = start + lat;
	for (uint64_t m = in->dst; m; m &= m - 1) {
		int r = __builtin_ctzll(m);

		if (r < TM_NREGS)
			c->ready[r] = complete;
	}
	/* in order, up to width a cycle */
	retire = complete > c->last_retire ? complete : c->last_retire;
	if (retire == c->last_retire && c->retire_count >= p->width) {
		retire++;
	}
	if (retire != c->last_retire)
		c->retire_count = 0;
	c->retire_count++;
	c->last_retire = retire;
	c->rob[c->rob_pos] = retire;
	if (++c->rob_pos == (size_t)p->rob)
		c->rob_pos = 0;
	c->st.insns++;
	/* control: a mispredicted branch refetches after it executes; a taken one ends the
	 * fetch group; a serializing instruction holds the front end until it is done */
	if (in->cls >= TM_JCC && in->cls <= TM_RET && mispredicted(c, in, pc, taken, next_pc)) {
		if (c->fe_cycle < complete + p->mispredict)
			c->fe_cycle = complete + p->mispredict;
		c->fe_count = 0;
	} else if (taken && p->taken_bubble) {
		if (c->fe_cycle < dispatch + p->taken_bubble)
			c->fe_cycle = dispatch + p->taken_bubble;
		c->fe_count = 0;
	}
	if (serial && c->fe_cycle < complete) {
		c->fe_cycle = complete;
		c->fe_count = 0;
	}
	return retire;
}

/* ---- the PMU ---- */

struct tm_pmu {
	struct tm_params p;
	enum tm_event ev;
	enum tm_sampling s;
	uint64_t period, rng;
	int mode;
	int64_t left;		/* events before the next overflow */
	uint64_t cur;		/* the period counting now */
	uint64_t last_cycle;
	/* a classic interrupt on its way, or being taken in the retirement group of `group` */
	unsigned irq_n, irq_taking;
	uint64_t irq_w, irq_at, irq_group;
	/* a PEBS record: armed at arm_at, then caught at an event (the IP is the next insn) */
	unsigned pebs_n, pebs_armed, pebs_caught;
	uint64_t pebs_w, pebs_at;
	struct tm_retired caught;
	/* the newest taken branch (the LBR's newest entry), for the IP fix */
	uint64_t lbr_from_ref, lbr_to_pc;
	int lbr_pending;	/* the previous instruction was a taken branch: its target is next */
	uint64_t prev_ref;
	tm_emit_fn emit;
	void *ctx;
};

static int is_prime(uint64_t n)
{
	if (n < 2)
		return 0;
	for (uint64_t d = 2; d * d <= n; d++)
		if (n % d == 0)
			return 0;
	return 1;
}

static uint64_t next_period(struct tm_pmu *m)
{
	uint64_t p = m->period;

	if (m->mode & 2) {
		m->rng ^= m->rng << 13;
		m->rng ^= m->rng >> 7;
		m->rng ^= m->rng << 17;
		if (p / 8)
			p += m->rng % (p / 8);
	}
	if (m->mode & 1)
		while (!is_prime(p))
			p++;
	return p;
}

struct tm_pmu *tm_pmu__new(const struct tm_params *p, enum tm_event ev, enum tm_sampling s,
			   uint64_t period, int mode, uint64_t seed, tm_emit_fn emit, void *ctx)
{
	struct tm_pmu *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->p = *p;
	m->ev = ev;
	m->s = s;
	m->period = period ? period : 1;
	m->mode = mode;
	m->rng = seed | 1;
	m->emit = emit;
	m->ctx = ctx;
	m->cur = next_period(m);
	m->left = m->cur;
	return m;
}

void tm_pmu__free(struct tm_pmu *m)
{
	free(m);
}

/* the counter overflowed at cycle `at`; r is the instruction that retired then (or first after) */
static void overflow(struct tm_pmu *m, const struct tm_retired *r, uint64_t at)
{
	uint64_t w = m->cur;

	switch (m->s) {
	case TM_SAMPLE_PDIR:
		m->emit(m->ctx, r->ref, 1, w);
		break;
	case TM_SAMPLE_CLASSIC:
		if (!m->irq_n)
			m->irq_at = at + m->p.irq_latency;
		m->irq_n++;
		m->irq_w += w;
		break;
	case TM_SAMPLE_PRECISE:
	case TM_SAMPLE_PRECISE_FIX:
		if (!m->pebs_n) {
			m->pebs_at = at + m->p.pebs_arm;
			m->pebs_armed = 1;
		}
		m->pebs_n++;
		m->pebs_w += w;
		break;
	}
	m->cur = next_period(m);
}

int tm_pmu__retire_run(struct tm_pmu *m, const struct tm_retired *first, const struct tm_retired *last,
		       unsigned n)
{
	uint64_t events;

	if (m->irq_n || m->pebs_n || m->pebs_caught || m->pebs_armed)
		return -1;
	events = m->ev == TM_EV_INSNS ? n : m->ev == TM_EV_BRANCHES ? !!last->taken :
		 last->cycle - m->last_cycle;
	if ((int64_t)events >= m->left)
		return -1;	/* it overflows in the run: one at a time */
	/* what one at a time would leave: the newest taken branch, the counts */
	if (m->lbr_pending) {
		m->lbr_from_ref = m->prev_ref;
		m->lbr_to_pc = first->pc;
	}
	m->lbr_pending = last->taken;
	m->prev_ref = last->ref;
	m->left -= events;
	if (m->ev == TM_EV_CYCLES)
		m->last_cycle = last->cycle;
	return 0;
}

void tm_pmu__retire(struct tm_pmu *m, const struct tm_retired *r)
{
	int counts = m->ev == TM_EV_INSNS || (m->ev == TM_EV_BRANCHES && r->taken);

	/* the previous instruction was a taken branch: the LBR now holds it, with r as target */
	if (m->lbr_pending) {
		m->lbr_from_ref = m->prev_ref;
		m->lbr_to_pc = r->pc;
	}
	m->lbr_pending = r->taken;
	m->prev_ref = r->ref;
	/* a classic interrupt taken in an earlier retirement group: r is the next to retire */
	if (m->irq_taking && r->cycle > m->irq_group) {
		m->emit(m->ctx, r->ref, m->irq_n, m->irq_w);
		m->irq_n = m->irq_taking = 0;
		m->irq_w = 0;
	}
	/* a PEBS record caught at the previous event reports r, the instruction after it */
	if (m->pebs_caught) {
		uint64_t ref = r->ref;

		if (m->s == TM_SAMPLE_PRECISE_FIX && r->pc == m->lbr_to_pc)
			ref = m->lbr_from_ref;
		m->emit(m->ctx, ref, m->pebs_n, m->pebs_w);
		m->pebs_n = m->pebs_caught = 0;
		m->pebs_w = 0;
	}
	if (m->pebs_armed && r->cycle >= m->pebs_at && (m->ev == TM_EV_CYCLES || counts)) {
		m->pebs_armed = 0;
		m->pebs_caught = 1;
		m->caught = *r;
	}
	/* count */
	if (m->ev == TM_EV_CYCLES) {
		uint64_t delta = r->cycle - m->last_cycle;

		m->last_cycle = r->cycle;
		while ((int64_t)delta >= m->left) {
			delta -= m->left;
			overflow(m, r, r->cycle - delta);
			m->left = m->cur;
		}
		m->left -= delta;
	} else if (counts && --m->left <= 0) {
		overflow(m, r, r->cycle);
		m->left = m->cur;
	}
	/* a classic interrupt that has arrived is taken in the group r retires in */
	if (m->irq_n && !m->irq_taking && r->cycle >= m->irq_at) {
		m->irq_taking = 1;
		m->irq_group = r->cycle;
	}
}
