// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf's exact reference collector: a QEMU user-mode plugin that counts every execution of
 * every translated block, per guest thread, and every transfer between blocks. Blocks are
 * tied to the file they came from by the host address QEMU maps guest code at, so counts can
 * be keyed by object and ELF address afterwards (user/accuracy/truth.c). Output: text, see docs/truth-format.md.
 *
 * Exactness: one callback per block execution (no inline counters: those are not atomic and
 * two guest threads can run the same block at once); per-thread counters, summed at exit while
 * QEMU holds the other threads stopped. Usage: qemu-x86_64 -plugin libhsbpf-ref.so,out=FILE */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <capstone/capstone.h>
#include "qemu-plugin-api.h"
#include "timing.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = HSBPF_QEMU_PLUGIN_VERSION;

#define NO_BLOCK UINT32_MAX
#define TIMING_MAX_INSNS 512	/* QEMU's TCG_MAX_INSNS: no block is longer */

struct mapping {
	uint64_t start, end, pgoff;	/* host addresses */
	char *path;
};

/* what an execution callback reads: allocated once per block and never moved, because the
 * block table may be reallocated by a translation in another thread meanwhile */
struct block_info {
	uint32_t id;
	uint32_t ninsns;
	uint64_t vaddr, end;	/* guest addresses: first instruction, one past the last */
	struct tm_insn *ti;	/* the timing model's view of each instruction, or NULL */
	/* the calling context: how the block ends and where it may go without surprise */
	uint8_t ckind;		/* enum cct_kind */
	uint8_t rep;		/* its last instruction is a rep string instruction */
	uint64_t last;		/* guest address of the last instruction */
	uint64_t target;	/* a direct branch's target, else 0 */
	int pop_idx;		/* CK_IJUMP: the pop just before the jump, or -1 */
};

/* how a block ends, for the shadow call stack */
enum cct_kind {
	CK_PLAIN,		/* falls through (or a syscall, or a conditional branch) */
	CK_CALL,
	CK_RET,
	CK_JUMP,		/* an unconditional direct jump */
	CK_IJUMP,		/* an indirect jump */
	CK_ANY,			/* anything else that may go anywhere (iret, ...) */
};

/* a frame of a guest thread's shadow call stack */
struct frame {
	uint64_t sp;		/* where the call stored its return address (stack grows down) */
	uint32_t node;		/* the calling-context node */
	uint32_t sig;		/* 1: a signal handler's frame, 2: whose handler has returned */
};

/* a calling-context node: a frame entered from a call site, per thread */
struct cnode {
	uint32_t parent, site, entry;	/* node, block ids (site: the block ending in the call) */
	uint32_t kind;		/* 0 the thread's first frame, 1 a call, 2 a signal handler */
	uint64_t calls;
};

/* keys of three 32-bit fields: node children, and jumps within a frame */
struct kslot {
	uint32_t a, b, c, used;
	uint64_t val;
};

struct ktable {
	struct kslot *slots;
	size_t nr, cap;
};

struct block {
	struct block_info *info;
	uint64_t vaddr;		/* guest address of the first instruction */
	uint64_t key;		/* hash of the instruction bytes */
	uint32_t ninsns;
	uint32_t map;		/* index in maps, NO_BLOCK if not file-backed */
	uint64_t file_off;	/* of the first instruction */
	uint8_t *sizes;
};

struct edge_slot {
	uint64_t key;		/* (src + 1) << 32 | dst */
	uint64_t count;
};

#define CCACHE_SIZE	1024	/* per thread: (node, block) pairs whose slot is known */

struct table {
	struct edge_slot *slots;
	size_t nr, cap;
};

/* one virtual PMU: several can sample the same run, each on its own counter and generator
 * (the method table's methods from one emulation) */
struct pmu_spec {
	int event;		/* VPMU_INSNS, VPMU_BRANCHES, VPMU_CYCLES */
	int64_t period;
	int mode, lbr, skid;
	int sampling;		/* enum tm_sampling, -1: exact (the clockless PMU) */
};

/* a PMU in one thread: the clockless PMU's state, or the clocked one's (ref/timing.c) */
struct pmu_state {
	const struct pmu_spec *spec;
	struct thread_state *th;	/* its thread: the calling-context node a sample is taken in */
	const struct block_info *prev_info;
	int64_t left;		/* events before the next overflow */
	uint64_t rng;
	struct {
		uint32_t from, to;	/* block ids: the branch is from's last instruction */
	} ring[32];
	unsigned ring_n, ring_head;
	int64_t skid_left;	/* > 0: a sample waits this many more instructions (skid) */
	uint64_t cur;		/* the period counting now */
	uint64_t skid_w;	/* the period of the sample that is skidding */
	struct tm_pmu *pmu;	/* on the timing model's clock, or NULL */
	struct table samples, sweights, vedges, vranges;
};

#define PMU_MAX 8

struct thread_state {
	uint64_t *counts;	/* per block id */
	size_t cap;
	uint32_t prev;		/* the block that ran last in this thread */
	struct edge_slot *edges;
	size_t nr_edges, cap_edges;
	struct pmu_state pmu[PMU_MAX];
	/* the clock (ref/timing.c): a block is retired when the next one starts, once its
	 * memory accesses and where it went are known */
	struct tm_core *core;	/* NULL when no sampling needs it (PDIR alone) */
	const struct block_info *tpend;
	uint64_t clock;		/* without a core: one cycle an instruction */
	unsigned nacc;
	struct tm_access acc[1024];
	uint16_t acc_idx[1024];	/* the instruction of the block that made each access */
	struct tm_retired retired[TIMING_MAX_INSNS];
	/* the shadow call stack and the calling-context tree (cct=on) */
	struct frame *frames;
	size_t depth, cap_frames;
	struct cnode *nodes;
	size_t nr_nodes, cap_nodes;
	struct ktable children;	/* (parent, site, entry) -> node */
	struct ktable jumps;	/* (node, src block, dst block) -> jumps, taken conditional ones too */
	struct table cblocks;	/* (node + 1) << 32 | block -> executions */
	/* the last cblocks slot of each (node, block) hashed here: most executions repeat the
	 * pairs of a loop; valid while cblocks' slot array is the one seen (ccache_base) */
	struct {
		uint64_t key;
		uint64_t *count;
	} ccache[CCACHE_SIZE];
	const struct edge_slot *ccache_base;
	const struct block_info *cprev;
	uint64_t call_sp, ret_sp, pop_sp;	/* from the memory callbacks, 0 if none */
	struct {
		uint64_t addr, sp;
	} rsite[256];		/* return sites of recent calls: where a longjmp lands */
	uint64_t unmatched_rets, longjmps, unwinds, signals, sigreturns;
	/* vstacks=on: each virtual PMU sample with the calling-context node it was taken in */
	uint32_t emit_node, tpend_node;
	struct ktable vcsamples;	/* (block + 1, index, node) -> samples */
	struct ktable vcweights;	/* the same key -> the periods that ended there */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct block *blocks;
static size_t nr_blocks, cap_blocks;
static uint32_t *index_slots;	/* open addressing over blocks: id + 1 */
static size_t nr_index;
static struct mapping *maps;
static size_t nr_maps, cap_maps;
static struct thread_state **threads;
static size_t nr_threads, cap_threads;
static char *out_path;
static int count_edges = 1;	/* edges=off: blocks only, for speed; rep iterations unfolded */
/* virtual PMUs: vpmu=insns|branches|cycles, period=N, mode=0..3 (bit 0 prime, bit 1 random),
 * lbr=16|32, skid=K, sampling=exact|classic|precise|precise-fix|pdir make the first; each
 * pmu=EVENT:PERIOD:MODE:LBR:SKID:SAMPLING one more, sampling the same run independently.
 * timing=NAME=V:NAME=V sets the timing model (ref/timing.h), one core shared by all; exact is
 * the clockless PMU with a skid of K instructions */
enum { VPMU_OFF, VPMU_INSNS, VPMU_BRANCHES, VPMU_CYCLES };
static const char *const sampling_names[] = { "classic", "precise", "precise-fix", "pdir" };
static struct pmu_spec specs[PMU_MAX];
static int nr_specs;
static int clocked;		/* some PMU samples on the clock: blocks are retired through it */
static int timing_core;		/* some PMU needs the core's clock */
static struct tm_params tparams;
static struct tm_decoder *decoder;
static uint64_t vpmu_seed = 42;
static int oom;			/* set if an allocation failed: the output says so */
static int cct;			/* cct=on: the shadow call stacks and the calling-context tree */
static int vstacks;		/* vstacks=on: the virtual PMU's samples carry their node */
static csh cs;			/* capstone, for how blocks end (under lock) */
static cs_insn *cs_in;

/* initial-exec: a plugin's TLS read is otherwise a call to __tls_get_addr per block (5% of
 * the run); a pointer fits the static TLS glibc keeps for libraries loaded later */
static __thread struct thread_state *self __attribute__((tls_model("initial-exec")));

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return p;
	while (ncap < need)
		ncap *= 2;
	q = realloc(p, ncap * elem);
	if (!q) {
		oom = 1;
		return NULL;
	}
	memset((char *)q + *cap * elem, 0, (ncap - *cap) * elem);
	*cap = ncap;
	return q;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x9E3779B97F4A7C15ull;
	return h ^ (h >> 29);
}

/* (re)read the host's mappings: guest code lives in file mappings QEMU made for the guest */
static void read_maps(void)
{
	char line[4096 + 256];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		char perms[8], path[4096] = "";
		struct mapping *m;
		bool known = false;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &s, &e, perms, &off, path) < 4 ||
		    path[0] != '/')
			continue;
		for (size_t i = 0; i < nr_maps && !known; i++)
			known = maps[i].start == s && maps[i].end == e && maps[i].pgoff == off &&
				!strcmp(maps[i].path, path);
		if (known)
			continue;
		maps = grow(maps, &cap_maps, nr_maps + 1, sizeof(*maps));
		if (!maps)
			break;
		m = &maps[nr_maps];
		m->path = strdup(path);
		if (!m->path)
			break;
		m->start = s;
		m->end = e;
		m->pgoff = off;
		nr_maps++;
	}
	fclose(f);
}

/* the latest mapping that holds host address h: later mappings replace earlier ones */
static uint32_t find_map(uint64_t h)
{
	for (size_t i = nr_maps; i-- > 0;)
		if (h >= maps[i].start && h < maps[i].end)
			return i;
	return NO_BLOCK;
}

static void emit_sample(void *ctx, uint64_t ref, unsigned n, uint64_t weight);

/* the sampling needs the core's clock: all but PDIR on an instruction or branch count */
static int needs_core(const struct pmu_spec *sp)
{
	return sp->sampling >= 0 && (sp->event == VPMU_CYCLES || sp->sampling != TM_SAMPLE_PDIR);
}

static struct thread_state *thread_state(void)
{
	struct thread_state *t = calloc(1, sizeof(*t));
	static const enum tm_event evs[] = { [VPMU_INSNS] = TM_EV_INSNS, [VPMU_BRANCHES] = TM_EV_BRANCHES,
					     [VPMU_CYCLES] = TM_EV_CYCLES };
	static unsigned seq;	/* threads in order of their first block: reproducible seeds */
	uint64_t seed;

	if (!t) {
		oom = 1;
		abort();
	}
	t->prev = NO_BLOCK;
	t->emit_node = t->tpend_node = NO_BLOCK;
	/* every PMU and the core take the seed one PMU alone would: the same samples */
	seed = clocked ? vpmu_seed + 7919 * __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED) : 0;
	if (timing_core && !(t->core = tm_core__new(&tparams, seed))) {
		oom = 1;
		abort();
	}
	for (int k = 0; k < nr_specs; k++) {
		struct pmu_state *ps = &t->pmu[k];

		ps->spec = &specs[k];
		ps->th = t;
		if (specs[k].sampling < 0)
			continue;
		ps->pmu = tm_pmu__new(&tparams, evs[specs[k].event], specs[k].sampling, specs[k].period,
				      specs[k].mode, seed, emit_sample, ps);
		if (!ps->pmu) {
			oom = 1;
			abort();
		}
	}
	pthread_mutex_lock(&lock);
	threads = grow(threads, &cap_threads, nr_threads + 1, sizeof(*threads));
	if (threads)
		threads[nr_threads++] = t;
	pthread_mutex_unlock(&lock);
	return t;
}

static void edge_add(struct thread_state *t, uint64_t key, uint64_t n)
{
	size_t mask, i;

	if (t->nr_edges * 2 >= t->cap_edges) {
		size_t ncap = t->cap_edges ? t->cap_edges * 2 : 1024;
		struct edge_slot *ns = calloc(ncap, sizeof(*ns));

		if (!ns) {
			oom = 1;
			return;
		}
		for (size_t j = 0; j < t->cap_edges; j++) {
			if (!t->edges[j].key)
				continue;
			i = mix(0, t->edges[j].key) & (ncap - 1);
			while (ns[i].key)
				i = (i + 1) & (ncap - 1);
			ns[i] = t->edges[j];
		}
		free(t->edges);
		t->edges = ns;
		t->cap_edges = ncap;
	}
	mask = t->cap_edges - 1;
	for (i = mix(0, key) & mask; t->edges[i].key; i = (i + 1) & mask) {
		if (t->edges[i].key == key) {
			t->edges[i].count += n;
			return;
		}
	}
	t->edges[i].key = key;
	t->edges[i].count = n;
	t->nr_edges++;
}

static struct edge_slot *table_find(struct table *t, uint64_t key);

static void table_add(struct table *t, uint64_t key, uint64_t n)
{
	size_t mask, i;

	if (t->nr * 2 >= t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 1024;
		struct edge_slot *ns = calloc(ncap, sizeof(*ns));

		if (!ns) {
			oom = 1;
			return;
		}
		for (size_t j = 0; j < t->cap; j++) {
			if (!t->slots[j].key)
				continue;
			i = mix(0, t->slots[j].key) & (ncap - 1);
			while (ns[i].key)
				i = (i + 1) & (ncap - 1);
			ns[i] = t->slots[j];
		}
		free(t->slots);
		t->slots = ns;
		t->cap = ncap;
	}
	mask = t->cap - 1;
	for (i = mix(0, key) & mask; t->slots[i].key; i = (i + 1) & mask) {
		if (t->slots[i].key == key) {
			t->slots[i].count += n;
			return;
		}
	}
	t->slots[i].key = key;
	t->slots[i].count = n;
	t->nr++;
}

/* the slot of key, added with a count of 0 if new; NULL when memory is short */
static struct edge_slot *table_slot(struct table *t, uint64_t key)
{
	struct edge_slot *e;

	table_add(t, key, 0);
	e = table_find(t, key);
	return e;
}

static struct edge_slot *table_find(struct table *t, uint64_t key)
{
	size_t mask = t->cap - 1;

	if (!t->cap)
		return NULL;
	for (size_t i = mix(0, key) & mask; t->slots[i].key; i = (i + 1) & mask)
		if (t->slots[i].key == key)
			return &t->slots[i];
	return NULL;
}

/* ---- the shadow call stack ---- */

static uint64_t khash(uint32_t a, uint32_t b, uint32_t c)
{
	return mix(mix(mix(0, a), b), c);
}

/* the slot of (a, b, c), added with val 0 if new; NULL if out of memory */
static struct kslot *ktable_get(struct ktable *t, uint32_t a, uint32_t b, uint32_t c)
{
	size_t mask, i;

	if (t->nr * 2 >= t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 256;
		struct kslot *ns = calloc(ncap, sizeof(*ns));

		if (!ns) {
			oom = 1;
			return NULL;
		}
		for (size_t j = 0; j < t->cap; j++) {
			const struct kslot *o = &t->slots[j];

			if (!o->used)
				continue;
			i = khash(o->a, o->b, o->c) & (ncap - 1);
			while (ns[i].used)
				i = (i + 1) & (ncap - 1);
			ns[i] = *o;
		}
		free(t->slots);
		t->slots = ns;
		t->cap = ncap;
	}
	mask = t->cap - 1;
	for (i = khash(a, b, c) & mask; t->slots[i].used; i = (i + 1) & mask)
		if (t->slots[i].a == a && t->slots[i].b == b && t->slots[i].c == c)
			return &t->slots[i];
	t->slots[i] = (struct kslot){ a, b, c, 1, 0 };
	t->nr++;
	return &t->slots[i];
}

/* the node entered at block entry from site (NO_BLOCK for a thread's first frame) under
 * parent; NO_BLOCK if out of memory */
static uint32_t cct_node(struct thread_state *t, uint32_t parent, uint32_t site, uint32_t entry,
			 uint32_t kind)
{
	struct kslot *k = ktable_get(&t->children, parent, site, entry | (kind == 2 ? 0x80000000u : 0));

	if (!k)
		return NO_BLOCK;
	if (!k->val) {
		struct cnode *n = grow(t->nodes, &t->cap_nodes, t->nr_nodes + 1, sizeof(*n));

		if (!n)
			return NO_BLOCK;
		t->nodes = n;
		n[t->nr_nodes] = (struct cnode){ parent, site, entry, kind, 0 };
		k->val = ++t->nr_nodes;
	}
	t->nodes[k->val - 1].calls++;
	return k->val - 1;
}

static void cct_push(struct thread_state *t, uint64_t sp, uint32_t node, uint32_t sig)
{
	struct frame *f;

	if (node == NO_BLOCK)
		return;
	f = grow(t->frames, &t->cap_frames, t->depth + 1, sizeof(*f));
	if (!f)
		return;
	t->frames = f;
	f[t->depth++] = (struct frame){ sp, node, sig };
}

/* pop every frame whose return address lies at or below sp: they are dead. The thread's
 * first frame stays. */
static unsigned cct_unwind(struct thread_state *t, uint64_t sp)
{
	unsigned n = 0;

	while (t->depth > 1 && t->frames[t->depth - 1].sp <= sp) {
		t->depth--;
		n++;
	}
	return n;
}

/* follow block b (after t->cprev) on the shadow stack; false if b is one more iteration of a
 * rep string instruction (the hardware retires it once) */
static void cct_surprise(struct thread_state *t, const struct block_info *p, const struct block_info *b);

static bool cct_block(struct thread_state *t, const struct block_info *b)
{
	const struct block_info *p = t->cprev;
	struct frame *top;

	t->cprev = b;
	if (!t->depth) {
		cct_push(t, UINT64_MAX, cct_node(t, NO_BLOCK, NO_BLOCK, b->id, 0), 0);
		return true;
	}
	if (!p)
		return true;
	switch (p->ckind) {
	case CK_CALL: {
		uint64_t sp = t->call_sp;
		unsigned h = (p->end >> 0) & 255;

		t->call_sp = 0;
		if (sp)
			cct_unwind(t, sp);	/* frames a longjmp or an exception left */
		t->rsite[h].addr = p->end;
		t->rsite[h].sp = sp;
		cct_push(t, sp, cct_node(t, t->frames[t->depth - 1].node, p->id, b->id, 1), 0);
		break;
	}
	case CK_RET: {
		uint64_t sp = t->ret_sp;

		t->ret_sp = 0;
		if (!sp || !cct_unwind(t, sp)) {
			top = &t->frames[t->depth - 1];
			if (top->sig)
				top->sig = 2;	/* the handler returned, into the restorer */
			else
				t->unmatched_rets++;
		}
		break;
	}
	case CK_IJUMP: {
		unsigned h = b->vaddr & 255;
		uint64_t sp = t->pop_sp;

		t->pop_sp = 0;
		if (sp) {	/* an unwinder's landing: the stack pointer it restored */
			if (cct_unwind(t, sp))
				t->unwinds++;
		} else if (t->rsite[h].addr == b->vaddr && t->rsite[h].sp &&
			   t->rsite[h].sp >= t->frames[t->depth - 1].sp) {
			/* a longjmp lands where a call returns: the frames below it are gone */
			if (cct_unwind(t, t->rsite[h].sp))
				t->longjmps++;
		}
	}
		/* fallthrough */
	case CK_JUMP: {
		struct kslot *k;

		if (p->ckind == CK_JUMP && b->vaddr != p->target) {
			cct_surprise(t, p, b);
			break;
		}
		k = ktable_get(&t->jumps, t->frames[t->depth - 1].node, p->id, b->id);
		if (k)
			k->val++;
		break;
	}
	case CK_PLAIN:
		if (p->rep && b->vaddr == p->last)
			return false;
		if (b->vaddr == p->end || b->vaddr == p->last)
			break;
		if (p->target && b->vaddr == p->target) {
			/* a taken conditional jump: it may enter another function (a .cold part,
			 * a conditional tail call), whose calls hsbpf counts from these; not a
			 * block's jump to its own start (a tight loop, the costliest case), which
			 * stays in the function hsbpf gives the block's start */
			struct kslot *k;

			if (b == p)
				break;
			k = ktable_get(&t->jumps, t->frames[t->depth - 1].node, p->id, b->id);
			if (k)
				k->val++;
			break;
		}
		cct_surprise(t, p, b);
		break;
	default:
		break;
	}
	return true;
}

/* control went where block p cannot go: a signal's delivery, or the return from one */
static void cct_surprise(struct thread_state *t, const struct block_info *p, const struct block_info *b)
{
	struct frame *top = &t->frames[t->depth - 1];

	if (top->sig == 2) {
		t->depth--;
		t->sigreturns++;
		return;
	}
	t->signals++;
	cct_push(t, top->sp - 1, cct_node(t, top->node, p->id, b->id, 2), 1);
}

static void on_cct_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	struct thread_state *t = self;

	(void)vcpu;
	if (!t)
		return;
	switch ((uintptr_t)udata) {
	case CK_CALL:
		if (qemu_plugin_mem_is_store(info))
			t->call_sp = vaddr;
		break;
	case CK_RET:
		t->ret_sp = vaddr;
		break;
	default:	/* a pop just before an indirect jump: frames at or below it are dead */
		if (!qemu_plugin_mem_is_store(info))
			t->pop_sp = vaddr;
		break;
	}
}

static bool has_group(const cs_insn *in, uint8_t g)
{
	for (uint8_t i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == g)
			return true;
	return false;
}

/* how block b ends (under lock); the last instruction is at guest address last */
static void cct_classify(struct block_info *b, const uint8_t *code, size_t size, uint64_t last)
{
	const uint8_t *c = code;
	uint64_t a = last;
	const cs_x86 *x;

	b->last = last;
	b->ckind = CK_PLAIN;
	b->rep = 0;
	b->target = 0;
	if (!cs_disasm_iter(cs, &c, &size, &a, cs_in))
		return;
	x = &cs_in->detail->x86;
	/* a rep-prefixed string instruction (F3 is also a mandatory prefix: endbr64, popcnt) */
	switch (cs_in->id) {
	case X86_INS_MOVSB: case X86_INS_MOVSW: case X86_INS_MOVSD: case X86_INS_MOVSQ:
	case X86_INS_STOSB: case X86_INS_STOSW: case X86_INS_STOSD: case X86_INS_STOSQ:
	case X86_INS_LODSB: case X86_INS_LODSW: case X86_INS_LODSD: case X86_INS_LODSQ:
	case X86_INS_CMPSB: case X86_INS_CMPSW: case X86_INS_CMPSD: case X86_INS_CMPSQ:
	case X86_INS_SCASB: case X86_INS_SCASW: case X86_INS_SCASD: case X86_INS_SCASQ:
	case X86_INS_INSB: case X86_INS_INSW: case X86_INS_INSD:
	case X86_INS_OUTSB: case X86_INS_OUTSW: case X86_INS_OUTSD:
		/* movsd and cmpsd are also SSE instructions, with F2 as their mandatory prefix */
		b->rep = (x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE) &&
			 ((x->opcode[0] >= 0xa4 && x->opcode[0] <= 0xaf) ||
			  (x->opcode[0] >= 0x6c && x->opcode[0] <= 0x6f));
		break;
	default:
		break;
	}
	if (has_group(cs_in, X86_GRP_CALL))
		b->ckind = CK_CALL;
	else if (has_group(cs_in, X86_GRP_RET))
		b->ckind = CK_RET;
	else if (has_group(cs_in, X86_GRP_IRET))
		b->ckind = CK_ANY;
	else if (has_group(cs_in, X86_GRP_JUMP)) {
		bool direct = x->op_count == 1 && x->operands[0].type == X86_OP_IMM;

		if (direct)
			b->target = x->operands[0].imm;
		if (cs_in->id == X86_INS_JMP || cs_in->id == X86_INS_LJMP)
			b->ckind = direct ? CK_JUMP : CK_IJUMP;
	}
}

static int is_prime(uint64_t n)
{
	if (n < 2)
		return 0;
	for (uint64_t d = 2; d * d <= n; d++)
		if (n % d == 0)
			return 0;
	return 1;
}

static void emit_sample(void *ctx, uint64_t ref, unsigned n, uint64_t weight)
{
	struct pmu_state *t = ctx;
	struct thread_state *th = t->th;

	table_add(&t->samples, ref, n);
	table_add(&t->sweights, ref, weight);
	/* vstacks=on takes one PMU (checked at install): its samples carry the thread's node */
	if (vstacks && t == &th->pmu[0] && th->emit_node != NO_BLOCK) {
		struct kslot *k = ktable_get(&th->vcsamples, ref >> 32, ref & 0xffffffffu, th->emit_node);
		struct kslot *kw = ktable_get(&th->vcweights, ref >> 32, ref & 0xffffffffu, th->emit_node);

		if (k && kw) {
			k->val += n;
			kw->val += weight;
		}
	}
}

/* the next period, as the PMU would be programmed: fixed, prime, randomized or both */
static int64_t next_period(struct pmu_state *t)
{
	uint64_t p = t->spec->period;

	if (t->spec->mode & 2) {	/* random: + uniform [0, p/8) */
		t->rng ^= t->rng << 13;
		t->rng ^= t->rng >> 7;
		t->rng ^= t->rng << 17;
		if (p / 8)
			p += t->rng % (p / 8);
	}
	if (t->spec->mode & 1)	/* prime */
		while (!is_prime(p))
			p++;
	return p;
}

/* the LBR at an overflow: edges, and ranges between consecutive entries (newest first) */
static void lbr_snapshot(struct pmu_state *t)
{
	unsigned lbr = t->spec->lbr, n = t->ring_n < lbr ? t->ring_n : lbr;

	for (unsigned k = 0; k < n; k++) {
		unsigned i = (t->ring_head + 32 - 1 - k) & 31;

		table_add(&t->vedges, ((uint64_t)t->ring[i].from + 1) << 32 | t->ring[i].to, 1);
		if (k) {
			unsigned newer = (t->ring_head + 32 - k) & 31;

			/* from this entry's target to the newer entry's source */
			table_add(&t->vranges, ((uint64_t)t->ring[i].to + 1) << 32 | t->ring[newer].from, 1);
		}
	}
}

/* the clockless PMU t of thread th at the start of block b */
static void vpmu_block(struct thread_state *th, struct pmu_state *t, const struct block_info *b)
{
	int64_t vpmu_skid = t->spec->skid;

	if (!t->left) {
		t->rng = vpmu_seed + (uintptr_t)th;
		t->left = t->cur = next_period(t);
	}
	if (t->spec->event == VPMU_INSNS) {
		int64_t left = t->left - b->ninsns;

		/* a sample still skidding from an earlier block lands here, or later */
		if (t->skid_left > 0) {
			if (t->skid_left <= b->ninsns) {
				emit_sample(t, ((uint64_t)b->id + 1) << 32 | (t->skid_left - 1), 1, t->skid_w);
				t->skid_left = 0;
			} else {
				t->skid_left -= b->ninsns;
			}
		}
		/* each overflow inside this block samples the instruction that made it, or the one
		 * skid instructions later (in this block or a later one) */
		while (left <= 0) {
			int64_t idx = b->ninsns + left - 1 + vpmu_skid;

			if (idx < b->ninsns) {
				emit_sample(t, ((uint64_t)b->id + 1) << 32 | (uint32_t)idx, 1, t->cur);
			} else if (!t->skid_left) {
				t->skid_left = idx - b->ninsns + 1;
				t->skid_w = t->cur;
			}
			t->cur = next_period(t);
			left += t->cur;
		}
		t->left = left;
		return;
	}
	/* taken branches: entering a block that does not follow the last one in memory */
	if (t->prev_info && t->prev_info->end != b->vaddr) {
		unsigned i = t->ring_head;

		t->ring[i].from = t->prev_info->id;
		t->ring[i].to = b->id;
		t->ring_head = (i + 1) & 31;
		if (t->ring_n < 32)
			t->ring_n++;
		if (--t->left <= 0) {
			/* a precise sample of the branch: its target is the next instruction */
			emit_sample(t, ((uint64_t)b->id + 1) << 32 | 0, 1, t->cur);
			if (t->spec->lbr)
				lbr_snapshot(t);
			t->left = t->cur = next_period(t);
		}
	}
	t->prev_info = b;
}

/* retire block b, now that the next block (at next) has started: each instruction through the
 * core with its memory accesses, then through every PMU on the clock */
static void timing_retire(struct thread_state *t, const struct block_info *b, uint64_t next)
{
	uint64_t pc = b->vaddr;
	unsigned a = 0, n = b->ninsns < TIMING_MAX_INSNS ? b->ninsns : TIMING_MAX_INSNS;
	struct tm_retired *r = t->retired;

	for (uint32_t k = 0; k < n; k++) {
		const struct tm_insn *in = &b->ti[k];
		int last = k + 1 == n;
		uint64_t npc = last ? next : pc + in->len;
		unsigned a0 = a;

		r[k].ref = ((uint64_t)b->id + 1) << 32 | k;
		r[k].pc = pc;
		r[k].taken = last && next != b->end;
		while (a < t->nacc && t->acc_idx[a] == k)
			a++;
		r[k].cycle = t->core ? tm_core__retire(t->core, in, pc, t->acc + a0, a - a0, r[k].taken, npc) :
			     ++t->clock;
		pc += in->len;
	}
	/* most blocks pass between two overflows: a PMU takes them whole */
	for (int p = 0; p < nr_specs && n; p++) {
		struct tm_pmu *m = t->pmu[p].pmu;

		if (m && tm_pmu__retire_run(m, &r[0], &r[n - 1], n))
			for (uint32_t k = 0; k < n; k++)
				tm_pmu__retire(m, &r[k]);
	}
	t->nacc = 0;
}

static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	struct thread_state *t = self;

	(void)vcpu;
	if (!t || t->nacc >= sizeof(t->acc) / sizeof(t->acc[0]))
		return;	/* more accesses in one block than that: the rest are not timed */
	t->acc[t->nacc].addr = vaddr;
	t->acc[t->nacc].store = qemu_plugin_mem_is_store(info);
	t->acc_idx[t->nacc++] = (uintptr_t)udata;
}

/* one execution of a block in a calling context: through the thread's cache of slots */
static inline void cblock_add(struct thread_state *t, uint64_t key)
{
	unsigned h = (unsigned)(key ^ key >> 29) & (CCACHE_SIZE - 1);
	struct edge_slot *e;

	if (t->ccache_base != t->cblocks.slots) {	/* grown: the slots moved */
		memset(t->ccache, 0, sizeof(t->ccache));
		t->ccache_base = t->cblocks.slots;
	}
	if (t->ccache[h].key == key) {
		(*t->ccache[h].count)++;
		return;
	}
	e = table_slot(&t->cblocks, key);
	if (!e)
		return;
	e->count++;
	if (t->ccache_base != t->cblocks.slots) {
		memset(t->ccache, 0, sizeof(t->ccache));
		t->ccache_base = t->cblocks.slots;
	}
	t->ccache[h].key = key;
	t->ccache[h].count = &e->count;
}

static void on_block(unsigned int vcpu, void *udata)
{
	struct thread_state *t = self;
	const struct block_info *info = udata;
	uint32_t id = info->id;

	(void)vcpu;
	if (!t)
		t = self = thread_state();
	if (id >= t->cap) {
		uint64_t *c = grow(t->counts, &t->cap, (size_t)id + 1, sizeof(*c));

		if (!c)
			return;
		t->counts = c;
	}
	t->counts[id]++;
	if (cct && cct_block(t, info) && t->depth)
		cblock_add(t, ((uint64_t)t->frames[t->depth - 1].node + 1) << 32 | id);
	if (clocked && info->ti) {
		if (t->tpend) {
			t->emit_node = t->tpend_node;	/* the context the retiring block ran in */
			timing_retire(t, t->tpend, info->vaddr);
		}
		t->tpend = info;
		t->tpend_node = t->depth ? t->frames[t->depth - 1].node : NO_BLOCK;
	}
	t->emit_node = t->depth ? t->frames[t->depth - 1].node : NO_BLOCK;
	for (int k = 0; k < nr_specs; k++)
		if (specs[k].sampling < 0)
			vpmu_block(t, &t->pmu[k], info);
	if (!count_edges)
		return;
	if (t->prev != NO_BLOCK)
		edge_add(t, ((uint64_t)t->prev + 1) << 32 | id, 1);
	t->prev = id;
}

/* one id per distinct block: retranslations (cache flushes) reuse it */
static uint32_t block_id(struct qemu_plugin_tb *tb, size_t n)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb), key = mix(vaddr, n);
	struct qemu_plugin_insn *first = qemu_plugin_tb_get_insn(tb, 0);
	struct block *b;
	size_t mask, i;
	uint64_t h;

	for (size_t k = 0; k < n; k++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, k);
		const uint8_t *d = qemu_plugin_insn_data(insn);
		size_t sz = qemu_plugin_insn_size(insn);

		key = mix(key, sz);
		for (size_t j = 0; j < sz; j++)
			key = mix(key, d[j]);
	}
	if (nr_blocks * 2 >= nr_index) {
		size_t ncap = nr_index ? nr_index * 2 : 4096;
		uint32_t *ns = calloc(ncap, sizeof(*ns));

		if (!ns) {
			oom = 1;
			return NO_BLOCK;
		}
		for (size_t j = 0; j < nr_blocks; j++) {
			i = blocks[j].key & (ncap - 1);
			while (ns[i])
				i = (i + 1) & (ncap - 1);
			ns[i] = j + 1;
		}
		free(index_slots);
		index_slots = ns;
		nr_index = ncap;
	}
	mask = nr_index - 1;
	for (i = key & mask; index_slots[i]; i = (i + 1) & mask) {
		b = &blocks[index_slots[i] - 1];
		if (b->key == key && b->vaddr == vaddr && b->ninsns == n)
			return index_slots[i] - 1;
	}
	blocks = grow(blocks, &cap_blocks, nr_blocks + 1, sizeof(*blocks));
	if (!blocks)
		return NO_BLOCK;
	b = &blocks[nr_blocks];
	b->vaddr = vaddr;
	b->key = key;
	b->ninsns = n;
	b->sizes = malloc(n);
	if (!b->sizes) {
		oom = 1;
		return NO_BLOCK;
	}
	for (size_t k = 0; k < n; k++)
		b->sizes[k] = qemu_plugin_insn_size(qemu_plugin_tb_get_insn(tb, k));
	h = (uint64_t)(uintptr_t)qemu_plugin_insn_haddr(first);
	b->map = find_map(h);
	if (b->map == NO_BLOCK) {
		read_maps();
		b->map = find_map(h);
	}
	b->file_off = b->map == NO_BLOCK ? 0 : h - maps[b->map].start + maps[b->map].pgoff;
	b->info = malloc(sizeof(*b->info));
	if (!b->info) {
		oom = 1;
		return NO_BLOCK;
	}
	b->info->id = nr_blocks;
	b->info->ninsns = n;
	b->info->vaddr = vaddr;
	b->info->end = qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, n - 1)) + b->sizes[n - 1];
	b->info->ti = NULL;
	b->info->pop_idx = -1;
	if (cct) {
		struct qemu_plugin_insn *last = qemu_plugin_tb_get_insn(tb, n - 1);

		cct_classify(b->info, qemu_plugin_insn_data(last), b->sizes[n - 1],
			     qemu_plugin_insn_vaddr(last));
		if (b->info->ckind == CK_IJUMP && n > 1) {
			struct qemu_plugin_insn *pi = qemu_plugin_tb_get_insn(tb, n - 2);
			const uint8_t *c = qemu_plugin_insn_data(pi);
			size_t sz = b->sizes[n - 2];
			uint64_t a = qemu_plugin_insn_vaddr(pi);

			if (cs_disasm_iter(cs, &c, &sz, &a, cs_in) && cs_in->id == X86_INS_POP)
				b->info->pop_idx = n - 2;
		}
	}
	if (clocked) {
		b->info->ti = calloc(n, sizeof(*b->info->ti));
		if (!b->info->ti) {
			oom = 1;
			return NO_BLOCK;
		}
		for (size_t k = 0; k < n; k++) {
			struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, k);

			/* undecodable: timed as a simple operation of its length */
			if (tm_decoder__decode(decoder, qemu_plugin_insn_data(insn), b->sizes[k],
					       qemu_plugin_insn_vaddr(insn), &b->info->ti[k]))
				b->info->ti[k].len = b->sizes[k];
		}
	}
	index_slots[i] = nr_blocks + 1;
	return nr_blocks++;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	struct block_info *bi;
	uint32_t bid;

	(void)id;
	if (!n)
		return;
	/* blocks[] moves when another vCPU's translation grows it: its info read under the lock
	 * (the info itself stays where it is) */
	pthread_mutex_lock(&lock);
	bid = block_id(tb, n);
	bi = bid == NO_BLOCK ? NULL : blocks[bid].info;
	pthread_mutex_unlock(&lock);
	if (!bi)
		return;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, QEMU_PLUGIN_CB_NO_REGS, bi);
	/* the stack pointer where calls and returns move it, and where an unwinder's pop does */
	if (cct) {

		if (bi->ckind == CK_CALL || bi->ckind == CK_RET)
			qemu_plugin_register_vcpu_mem_cb(qemu_plugin_tb_get_insn(tb, n - 1), on_cct_mem,
							 QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW,
							 (void *)(uintptr_t)bi->ckind);
		else if (bi->pop_idx >= 0)	/* QEMU 7.2 calls no MEM_R callback: RW, loads kept */
			qemu_plugin_register_vcpu_mem_cb(qemu_plugin_tb_get_insn(tb, bi->pop_idx), on_cct_mem,
							 QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW,
							 (void *)(uintptr_t)CK_IJUMP);
	}
	/* the cache model needs every data address; only then are accesses watched */
	if (timing_core)
		for (size_t k = 0; k < n; k++)
			qemu_plugin_register_vcpu_mem_cb(qemu_plugin_tb_get_insn(tb, k), on_mem,
							 QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW,
							 (void *)(uintptr_t)k);
}

/* QEMU has stopped every other guest thread when this runs */
static void on_guest_exit(qemu_plugin_id_t id, void *p)
{
	struct thread_state total = { .prev = NO_BLOCK };
	FILE *f;

	(void)id;
	(void)p;
	pthread_mutex_lock(&lock);
	for (size_t t = 0; t < nr_threads; t++) {
		struct thread_state *ts = threads[t];

		if (total.cap < ts->cap) {
			total.counts = grow(total.counts, &total.cap, ts->cap, sizeof(*total.counts));
			if (!total.counts)
				break;
		}
		for (size_t b = 0; b < ts->cap; b++)
			total.counts[b] += ts->counts[b];
		for (size_t e = 0; e < ts->cap_edges; e++)
			if (ts->edges[e].key)
				edge_add(&total, ts->edges[e].key, ts->edges[e].count);
	}
	f = fopen(out_path, "we");
	if (!f) {
		fprintf(stderr, "hsbpf-ref: cannot write '%s': %s\n", out_path, strerror(errno));
		pthread_mutex_unlock(&lock);
		return;
	}
	fprintf(f, "hsbpf-ref 1\nthreads %zu\noom %d\nedges %d\n", nr_threads, oom, count_edges);
	for (size_t i = 0; i < nr_maps; i++)
		fprintf(f, "map %zu %" PRIx64 " %" PRIx64 " %" PRIx64 " %s\n", i, maps[i].start,
			maps[i].end, maps[i].pgoff, maps[i].path);
	for (size_t b = 0; b < nr_blocks; b++) {
		const struct block *bl = &blocks[b];

		fprintf(f, "block %zu %" PRIx64 " %" PRId64 " %" PRIx64 " %u %" PRIu64 " ", b, bl->vaddr,
			bl->map == NO_BLOCK ? (int64_t)-1 : (int64_t)bl->map, bl->file_off, bl->ninsns,
			b < total.cap ? total.counts[b] : 0);
		for (uint32_t k = 0; k < bl->ninsns; k++)
			fprintf(f, "%s%u", k ? "," : "", bl->sizes[k]);
		fputc('\n', f);
	}
	for (size_t e = 0; e < total.cap_edges; e++)
		if (total.edges[e].key)
			fprintf(f, "edge %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
				(total.edges[e].key >> 32) - 1, total.edges[e].key & 0xffffffffu,
				total.edges[e].count);
	if (cct)
		for (size_t th = 0; th < nr_threads; th++) {
			const struct thread_state *ts = threads[th];

			fprintf(f, "cthread %zu %zu %zu %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
				th, ts->nr_nodes, ts->depth, ts->unmatched_rets, ts->longjmps, ts->unwinds,
				ts->signals, ts->sigreturns);
			for (size_t k = 0; k < ts->nr_nodes; k++) {
				const struct cnode *n = &ts->nodes[k];

				fprintf(f, "cnode %zu %zu %" PRId64 " %" PRId64 " %u %u %" PRIu64 "\n", th, k,
					n->parent == NO_BLOCK ? (int64_t)-1 : (int64_t)n->parent,
					n->site == NO_BLOCK ? (int64_t)-1 : (int64_t)n->site, n->entry, n->kind,
					n->calls);
			}
			for (size_t j = 0; j < ts->cblocks.cap; j++) {
				uint64_t key = ts->cblocks.slots[j].key;

				if (key)
					fprintf(f, "cblock %zu %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", th,
						(key >> 32) - 1, key & 0xffffffffu, ts->cblocks.slots[j].count);
			}
			for (size_t j = 0; j < ts->jumps.cap; j++) {
				const struct kslot *k = &ts->jumps.slots[j];

				if (k->used)
					fprintf(f, "cjump %zu %u %u %u %" PRIu64 "\n", th, k->a, k->b, k->c, k->val);
			}
		}
	if (nr_specs) {
		static const char *const kinds[] = { "vsample", "vedge", "vrange" };
		static const char *const events[] = { "", "insns", "branches", "cycles" };
		struct tm_stats total_st = { 0 };

		for (size_t th = 0; th < nr_threads; th++) {
			struct thread_state *ts = threads[th];

			/* the block each thread was running is retired as if it fell through */
			if (ts->tpend) {
				ts->emit_node = ts->tpend_node;
				timing_retire(ts, ts->tpend, ts->tpend->end);
				ts->tpend = NULL;
			}
			if (ts->core) {
				struct tm_stats st;

				tm_core__stats(ts->core, &st);
				total_st.insns += st.insns;
				total_st.cycles += st.cycles;
				total_st.l1_miss += st.l1_miss;
				total_st.l2_miss += st.l2_miss;
				total_st.l3_miss += st.l3_miss;
				total_st.cond += st.cond;
				total_st.mispredicts += st.mispredicts;
			}
		}
		/* a section per PMU: its line, its samples and records, the clock's totals if it
		 * used the clock */
		for (int p = 0; p < nr_specs; p++) {
			const struct pmu_spec *sp = &specs[p];

			fprintf(f, "vpmu %s %" PRId64 " %d %d %s\n", events[sp->event], sp->period, sp->mode,
				sp->lbr, sp->sampling < 0 ? "exact" : sampling_names[sp->sampling]);
			for (size_t th = 0; th < nr_threads; th++) {
				struct pmu_state *ps = &threads[th]->pmu[p];
				const struct table *tabs[3] = { &ps->samples, &ps->vedges, &ps->vranges };

				for (int k = 0; k < 3; k++)
					for (size_t j = 0; j < tabs[k]->cap; j++) {
						uint64_t key = tabs[k]->slots[j].key;
						struct edge_slot *w = NULL;

						if (!key)
							continue;
						if (!k)	/* the weight: the periods that ended at these samples */
							w = table_find(&ps->sweights, key);
						fprintf(f, "%s %" PRIu64 " %" PRIu64 " %" PRIu64, kinds[k],
							(key >> 32) - 1, key & 0xffffffffu, tabs[k]->slots[j].count);
						if (w)
							fprintf(f, " %" PRIu64, w->count);
						fputc('\n', f);
					}
			}
			/* vstacks=on: the samples of PMU 0 (the only one) with their calling context */
			for (size_t th = 0; vstacks && !p && th < nr_threads; th++) {
				struct thread_state *ts = threads[th];

				for (size_t j = 0; j < ts->vcsamples.cap; j++) {
					const struct kslot *k = &ts->vcsamples.slots[j];
					struct kslot *kw;

					if (!k->used)
						continue;
					kw = ktable_get(&ts->vcweights, k->a, k->b, k->c);
					fprintf(f, "vcsample %zu %u %u %u %" PRIu64 " %" PRIu64 "\n", th, k->a - 1, k->b, k->c,
						k->val, kw ? kw->val : 0);
				}
			}
			if (needs_core(sp))
				fprintf(f, "vtiming %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
					" %" PRIu64 " %" PRIu64 "\n", total_st.insns, total_st.cycles,
					total_st.l1_miss, total_st.l2_miss, total_st.l3_miss, total_st.cond,
					total_st.mispredicts);
		}
	}
	fprintf(f, "end\n");
	if (fclose(f))
		fprintf(stderr, "hsbpf-ref: cannot write '%s': %s\n", out_path, strerror(errno));
	pthread_mutex_unlock(&lock);
}

static int sampling_of(const char *name)
{
	for (int k = 0; k < 4; k++)
		if (!strcmp(name, sampling_names[k]))
			return k;
	return strcmp(name, "exact") ? -2 : -1;
}

static int event_of(const char *name)
{
	return !strcmp(name, "insns") ? VPMU_INSNS : !strcmp(name, "branches") ? VPMU_BRANCHES :
	       !strcmp(name, "cycles") ? VPMU_CYCLES : VPMU_OFF;
}

/* a PMU's settings checked, and its default sampling; 0 or -1 (said) */
static int spec_check(struct pmu_spec *sp, const char *sampling)
{
	if (sp->period < 1 || sp->lbr < 0 || sp->lbr > 32 || sp->skid < 0) {
		fprintf(stderr, "hsbpf-ref: the virtual PMU needs period=N >= 1 and lbr=0..32\n");
		return -1;
	}
	sp->sampling = sampling_of(sampling);
	if (sp->sampling == -2) {
		fprintf(stderr, "hsbpf-ref: unknown sampling '%s'\n", sampling);
		return -1;
	}
	if (sp->event == VPMU_CYCLES && sp->sampling < 0)
		sp->sampling = TM_SAMPLE_PDIR;	/* the instruction retiring at the overflow */
	return 0;
}

/* pmu=EVENT:PERIOD:MODE:LBR:SKID:SAMPLING; 0 or -1 (said) */
static int spec_parse(const char *arg, struct pmu_spec *sp)
{
	char ev[16], smp[16];
	long long period;

	if (sscanf(arg, "%15[^:]:%lld:%d:%d:%d:%15s", ev, &period, &sp->mode, &sp->lbr, &sp->skid,
		   smp) != 6 || !(sp->event = event_of(ev))) {
		fprintf(stderr, "hsbpf-ref: pmu=%s is not EVENT:PERIOD:MODE:LBR:SKID:SAMPLING\n", arg);
		return -1;
	}
	sp->period = period;
	return spec_check(sp, smp);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *sampling = "exact", *timing = NULL;
	struct pmu_spec first = { 0 }, more[PMU_MAX];
	int nr_more = 0;
	char err[256];

	tm_params__default(&tparams);
	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out_path = strdup(argv[i] + 4);
		else if (!strcmp(argv[i], "edges=off"))
			count_edges = 0;
		else if (!strcmp(argv[i], "cct=on"))
			cct = 1;
		else if (!strcmp(argv[i], "vstacks=on"))
			vstacks = cct = 1;
		else if (!strncmp(argv[i], "vpmu=", 5))
			first.event = event_of(argv[i] + 5);
		else if (!strncmp(argv[i], "sampling=", 9))
			sampling = argv[i] + 9;
		else if (!strncmp(argv[i], "timing=", 7))
			timing = argv[i] + 7;
		else if (!strncmp(argv[i], "period=", 7))
			first.period = strtoll(argv[i] + 7, NULL, 10);
		else if (!strncmp(argv[i], "mode=", 5))
			first.mode = atoi(argv[i] + 5);	/* bit 0 prime, bit 1 random */
		else if (!strncmp(argv[i], "lbr=", 4))
			first.lbr = atoi(argv[i] + 4);
		else if (!strncmp(argv[i], "skid=", 5))
			first.skid = atoi(argv[i] + 5);
		else if (!strncmp(argv[i], "seed=", 5))
			vpmu_seed = strtoull(argv[i] + 5, NULL, 10);
		else if (!strncmp(argv[i], "pmu=", 4)) {
			if (nr_more + 1 >= PMU_MAX) {
				fprintf(stderr, "hsbpf-ref: at most %d virtual PMUs\n", PMU_MAX);
				return -1;
			}
			if (spec_parse(argv[i] + 4, &more[nr_more++]))
				return -1;
		}
	if (!out_path) {
		fprintf(stderr, "hsbpf-ref: usage: -plugin libhsbpf-ref.so,out=FILE\n");
		return -1;
	}
	if (sampling_of(sampling) == -2) {
		fprintf(stderr, "hsbpf-ref: unknown sampling '%s'\n", sampling);
		return -1;
	}
	if (first.event) {
		if (spec_check(&first, sampling))
			return -1;
		specs[nr_specs++] = first;
	}
	for (int k = 0; k < nr_more; k++)
		specs[nr_specs++] = more[k];
	if (vstacks && nr_specs > 1) {
		fprintf(stderr, "hsbpf-ref: vstacks=on takes one virtual PMU, not %d (the calling context "
			"is recorded for one PMU's samples)\n", nr_specs);
		return -1;
	}
	if (timing && tm_params__set(&tparams, timing, err, sizeof(err))) {
		fprintf(stderr, "hsbpf-ref: %s\n", err);
		return -1;
	}
	for (int k = 0; k < nr_specs; k++) {
		clocked |= specs[k].sampling >= 0;
		timing_core |= needs_core(&specs[k]);
	}
	if (clocked && !(decoder = tm_decoder__new())) {
		fprintf(stderr, "hsbpf-ref: cannot open the disassembler\n");
		return -1;
	}
	if (info->system_emulation) {
		fprintf(stderr, "hsbpf-ref: only user-mode emulation (qemu-x86_64) is supported\n");
		return -1;
	}
	if (cct) {
		if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
			fprintf(stderr, "hsbpf-ref: cannot open the disassembler\n");
			return -1;
		}
		cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
		cs_in = cs_malloc(cs);
		if (!cs_in) {
			fprintf(stderr, "hsbpf-ref: out of memory\n");
			return -1;
		}
	}
	read_maps();
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_guest_exit, NULL);
	return 0;
}
