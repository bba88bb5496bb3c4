/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Call stacks in the kernel: the user stack unwound from unwind tables (.eh_frame rules that
 * user space loads as rows, bpf/hsbpf.h) or by frame pointers, the kernel stack from
 * bpf_get_stack, each distinct stack stored once under a hash of its frames, and samples
 * counted per (process image, cgroup, user stack, kernel stack). The unwinder is one function
 * of the registers, shared by the sample handler and the uprobe that tests it instruction by
 * instruction. */
#ifndef HSBPF_STACKS_BPF_H
#define HSBPF_STACKS_BPF_H

#include "hsbpf.h"
#include "samples.bpf.h"

/* set by user space before load; with NONE the verifier drops every stack path */
const volatile __u32 call_graph = HSBPF_CALL_GRAPH_NONE;
const volatile __u32 max_frames = HSBPF_MAX_FRAMES;	/* --call-graph ...,DEPTH */
/* time each sample's stack work (two clock reads): set when the kernel's BPF run-time
 * statistics are on, which time every run the same way, so that a sample's stack cost is known
 * apart from the runs that only filter */
const volatile bool time_stacks = false;
/* dwarf: send the samples whose program's tables are not in yet to be unwound in user space
 * (a recording; not top) */
const volatile bool late_unwind = false;
/* the agent: the sample handler's stacks and their counts go to two sets of maps in turn, by
 * the generation in live[0] (as the flat histogram's), so that user space drains and empties
 * one whole set per interval while the kernel fills the other (samples.bpf.h) */
const volatile bool stack_gens = false;
/* the agent: no per-process mappings from user space, every mapping found from the task's vma
 * (mapping_from_vma) and the tables by file identity */
const volatile bool maps_by_vma = false;

/* The tables: every map is sized by user space before load (1 entry when not collecting) */
/* mapped by user space, which writes a table's rows with one copy (sampler.c: write_rows) */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct unwind_row);
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_page);
} unwind_pages SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_subpage);
} unwind_subs SEC(".maps");	/* one per page */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct unwind_obj);
} unwind_objs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 1);
	__type(key, struct unwind_map_key);
	__type(value, struct unwind_mapping);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} unwind_maps SEC(".maps");

/* Processes inside an exec past its point of no return (sched_prepare_exec) until the new
 * program's registers are set (sched_process_exec): the new mm, which replaces the old one
 * midway (exec_mmap). A sample taken in the kernel while the task runs on that mm has no user
 * stack: the saved user registers are the old program's, its memory is gone. One exec'ing
 * thread per process: de_thread makes it the only one. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} execing SEC(".maps");

/* object tables by file identity: a mapping not in the trie yet is found from the task's vma */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct unwind_inode_key);
	__type(value, struct unwind_inode);
} unwind_inodes SEC(".maps");

/* a forked child's mappings are its parent's until user space has copied them */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} unwind_parent SEC(".maps");

struct stack_short {
	__u32 nr;
	__u16 end, nr_fp;
	__u64 ip[HSBPF_SHORT_FRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, struct stack_short);
} stacks SEC(".maps");	/* preallocated: an allocation in the sample's interrupt can fail */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, struct stack_frames);
} stacks_long SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct stack_key);
	__type(value, struct sample_value);
} stack_samples SEC(".maps");

/* the odd generation's stacks and stack samples (stack_gens; 1 entry each otherwise) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, struct stack_short);
} stacks_odd SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, struct stack_frames);
} stacks_long_odd SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, struct stack_key);
	__type(value, struct sample_value);
} stack_samples_odd SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, HSBPF_STACK_STAT_NR);
	__type(key, __u32);
	__type(value, __u64);
} stack_stats SEC(".maps");

/* samples whose stacks user space unwinds from a copy (struct late_stack) */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} late_stacks SEC(".maps");

/* a mapping found for a process image, with its object's table, under the unwind_gen it was
 * found at */
#define HSBPF_MAP_CACHE	4
#define STACK_WINDOW	512	/* bytes of user stack read at once (a power of 2) */
struct map_cache_entry {
	__u64 gen;
	__u32 pid, tag;
	struct unwind_mapping map;
	struct unwind_obj obj;
};

/* bumped by user space after every change of unwind_maps (an entry added, replaced or
 * deleted): a mapping cached under an older value may be stale */
volatile __u64 unwind_gen = 0;

/* the walk's state lives in a per-CPU map value: bpf_loop's callback is then verified once */
struct stack_walk {
	__u64 pc, sp, bp;
	__u64 stack_top;	/* the main thread's first stack pointer, where argc is */
	__u64 hash;
	__u32 pid, tag;
	__u32 signal;		/* the last frame was a signal frame: pc is the interrupted one */
	__u32 have_map;
	__u32 in_syscall;	/* frame 0's pc follows a syscall instruction, like a return address */
	__u32 py;		/* the thread has Python frames to place (py_scratch) */
	__u32 slot;		/* this walk's slot in unwind_scratch (UNWIND_SLOT_*) */
	__u64 leaf[HSBPF_DWARF_LAST_GPR + 1];	/* the sampled frame's registers, DWARF order */
	__u64 gen;			/* unwind_gen when the sample began */
	struct unwind_mapping map;	/* the last mapping found: most frames are in it */
	struct unwind_obj obj;		/* its object's table (map.obj's), or all 0 */
	struct unwind_mapping vma_map;	/* one found from the task's vma */
	/* the mappings found by the last samples on this CPU, valid while unwind_gen is theirs:
	 * a sample a millisecond after the last one finds its few mappings here instead of
	 * walking the trie's nodes, cold in the cache by then */
	struct map_cache_entry mc[HSBPF_MAP_CACHE];
	__u32 mc_next;
	struct stack_frames user;
	struct stack_frames kernel;
	struct perf_branch_entry lbr[HSBPF_LBR_MAX];	/* --call-graph lbr */
	/* the user stack read in windows: one read of up to STACK_WINDOW bytes (never across a
	 * page) answers the next frames' return addresses and saved registers, which lie above
	 * it, instead of one bpf_probe_read_user each (each a fault-checked copy from user
	 * memory, a cold TLB entry at low rates) */
	__u64 win_base;
	__u32 win_len, pad_win;
	__u8 win[STACK_WINDOW];
};

/* slot 0 is for the programs a sample cannot interrupt (the sampler itself, the switch
 * tracepoint with interrupts off, the uprobes, which keep perf's BPF off the CPU); the
 * off-CPU resume program (fexit, interrupts on) walks in a slot of its own */
#define UNWIND_SLOT_MAIN	0
#define UNWIND_SLOT_RESUME	1

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct stack_walk);
} unwind_scratch SEC(".maps");

static __always_inline void stack_stat_add(__u32 slot, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stack_stats, &slot);

	if (v)
		*v += n;
}

/* 64-bit mixing of one frame into a stack's hash (rotate, xor, multiply by the golden ratio) */
static __always_inline __u64 stack_mix(__u64 h, __u64 v)
{
	h = (h << 27 | h >> 37) ^ v;
	return h * 0x9E3779B97F4A7C15ull;
}

#include "python.bpf.h"

/* one more frame of the user stack, mixed into its hash; false when the stack is full */
static __always_inline bool stack_push(struct stack_walk *st, __u64 v)
{
	__u32 n = st->user.nr;

	if (n >= max_frames || n >= HSBPF_MAX_FRAMES) {
		st->user.end = HSBPF_STACK_DEPTH;
		return false;
	}
	st->user.ip[n & (HSBPF_MAX_FRAMES - 1)] = v;
	st->user.nr = n + 1;
	st->hash = stack_mix(st->hash, v);
	return true;
}

/* one Python frame of python_place's group */
static long python_place_one(__u64 i, void *ctx)
{
	__u32 zero = 0;
	struct stack_walk *st = bpf_map_lookup_elem(&unwind_scratch, &zero);
	struct py_walk *w = bpf_map_lookup_elem(&py_scratch, &zero);
	__u64 v;

	if (!st || !w || w->next >= w->nr)
		return 1;
	v = w->frames[w->next & (HSBPF_PY_MAX_FRAMES - 1)];
	w->next++;
	if (!stack_push(st, v)) {
		w->place_full = 1;
		return 1;
	}
	return !w->place_all && HSBPF_PY_IS_ENTRY(v);
}

/* the next group of Python frames (up to its entry frame, or all that are left); false when
 * the stack is full */
static __always_inline bool python_place(struct py_walk *w, bool all)
{
	w->place_all = all;
	w->place_full = 0;
	bpf_loop(HSBPF_PY_MAX_FRAMES, python_place_one, NULL, 0);
	return !w->place_full;
}

static __always_inline bool read_user(__u64 *dst, __u64 addr)
{
	return !bpf_probe_read_user(dst, sizeof(*dst), (const void *)addr);
}

/* 8 bytes of the user stack at addr, from the window when it holds them; else a new window
 * from a little below addr (a frame's saved rbp is read after its return address, below it)
 * to the end of addr's page, at most STACK_WINDOW bytes: a window is one page's, so it can
 * only fail where the 8 bytes would */
static __always_inline bool read_stack(struct stack_walk *st, __u64 *dst, __u64 addr)
{
	__u64 off = addr - st->win_base, base, len;

	if (addr >= st->win_base && off < STACK_WINDOW - 7 && off + 8 <= st->win_len) {
		*dst = *(__u64 *)&st->win[off & (STACK_WINDOW - 1)];
		return true;
	}
	base = (addr & 4095) < 64 ? addr & ~4095ull : addr - 64;
	len = 4096 - (base & 4095);
	if (len > STACK_WINDOW)
		len = STACK_WINDOW;
	if (addr + 8 > base + len)	/* the last 7 bytes of a page: straddles the next */
		return read_user(dst, addr);
	/* (len < 8 and off past the window cannot happen: they give the verifier its bounds) */
	if (len < 8 || bpf_probe_read_user(st->win, len, (const void *)base)) {
		st->win_len = 0;
		return false;
	}
	st->win_base = base;
	st->win_len = len;
	off = addr - base;
	if (off >= STACK_WINDOW - 7)
		return false;
	*dst = *(__u64 *)&st->win[off];
	return true;
}

/* what bpf_find_vma's callback saw (its context must be on the stack) */
struct vma_hit {
	__u64 start, end, pgoff;
	struct unwind_inode_key file;
	__u32 found, pad;
};

/* bpf_find_vma's callback: the file behind the vma of pc, if any; the vDSO's is (0, 0), the
 * key its table has in unwind_inodes */
static long vma_file(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_hit *h = data;
	struct file *file = BPF_CORE_READ(vma, vm_file);

	h->start = BPF_CORE_READ(vma, vm_start);
	h->end = BPF_CORE_READ(vma, vm_end);
	if (!file) {
		if (h->start != (__u64)BPF_CORE_READ(task, mm, context.vdso))
			return 0;
		h->pgoff = 0;
		h->file.ino = 0;
		h->file.dev = 0;
		h->found = 1;
		return 0;
	}
	h->pgoff = BPF_CORE_READ(vma, vm_pgoff) << 12;
	h->file.ino = BPF_CORE_READ(file, f_inode, i_ino);
	h->file.dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
	h->found = 1;
	return 0;
}

/* the mapping of pc from the task's own vma and the table of its file, when user space has not
 * put it in the trie yet: a program's first milliseconds run before the sideband's records of
 * its mappings are read, and its tables were built before its exec */
static __always_inline struct unwind_mapping *mapping_from_vma(struct stack_walk *st, __u64 pc)
{
	struct vma_hit h = {};
	struct unwind_inode *ino;

	if (bpf_find_vma(bpf_get_current_task_btf(), pc, vma_file, &h, 0) || !h.found)
		return NULL;
	ino = bpf_map_lookup_elem(&unwind_inodes, &h.file);
	if (!ino)
		return NULL;
	for (__u32 i = 0; i < HSBPF_INODE_SEGS && i < ino->nr_segs; i++) {
		__u64 off = ino->seg[i].offset;

		if (h.pgoff < (off & ~0xfffull) || h.pgoff >= off + ino->seg[i].filesz)
			continue;
		st->vma_map.start = h.start;
		st->vma_map.end = h.end;
		st->vma_map.obj = ino->obj;
		st->vma_map.bias = h.start - h.pgoff + off - ino->seg[i].vaddr;
		return &st->vma_map;
	}
	return NULL;
}

/* the mapping of pc in the process image (the pid's, else its parent's while user space has
 * not copied them, else the task's vma's) */
static __always_inline struct unwind_mapping *find_mapping(struct stack_walk *st, __u64 pc)
{
	struct unwind_map_key k = {
		.prefixlen = 128,
		.pid_be = __builtin_bswap32(st->pid),
		.tag_be = __builtin_bswap32(st->tag),
		.addr_hi_be = __builtin_bswap32(pc >> 32),
		.addr_lo_be = __builtin_bswap32((__u32)pc),
	};
	struct unwind_mapping *m;
	struct proc_state *proc;
	__u32 *parent;

	if (maps_by_vma)
		return mapping_from_vma(st, pc);
	m = bpf_map_lookup_elem(&unwind_maps, &k);
	if (m)
		return m;
	parent = bpf_map_lookup_elem(&unwind_parent, &st->pid);
	if (parent) {
		/* a child that has not exec'd runs its parent's image, under the parent's tag */
		proc = bpf_map_lookup_elem(&procs, parent);
		k.pid_be = __builtin_bswap32(*parent);
		k.tag_be = __builtin_bswap32(proc ? (__u32)proc->exec_ns : 0);
		m = bpf_map_lookup_elem(&unwind_maps, &k);
		if (m)
			return m;
	}
	return mapping_from_vma(st, pc);
}

/* the mapping of pc into st->map and its object's table into st->obj: the samples' cache
 * first, else the trie (or the task's vma), cached; false if there is none */
static __always_inline bool lookup_mapping(struct stack_walk *st, __u64 pc)
{
	struct map_cache_entry *e;
	struct unwind_mapping *m;
	struct unwind_obj *o;
	__u32 slot;

	for (__u32 i = 0; i < HSBPF_MAP_CACHE; i++) {
		e = &st->mc[i];
		if (e->gen == st->gen && e->pid == st->pid && e->tag == st->tag &&
		    pc >= e->map.start && pc < e->map.end) {
			st->map = e->map;
			st->obj = e->obj;
			return true;
		}
	}
	m = find_mapping(st, pc);
	if (!m)
		return false;
	st->map = *m;
	o = st->map.obj == HSBPF_UNWIND_NO_OBJ ? NULL : bpf_map_lookup_elem(&unwind_objs, &st->map.obj);
	if (o) {
		st->obj = *o;
	} else {
		st->obj.base = 0;
		st->obj.end = 0;	/* no address in it: no row */
		st->obj.first_page = 0;
		st->obj.nr_pages = 0;
	}
	slot = st->mc_next++ % HSBPF_MAP_CACHE;
	e = &st->mc[slot];
	e->gen = st->gen;
	e->pid = st->pid;
	e->tag = st->tag;
	e->map = st->map;
	e->obj = st->obj;
	return true;
}

/* the row in force at an object's ELF address: the page, its 256-byte chunk, then a binary
 * search of the chunk's rows */
static __always_inline struct unwind_row *find_row(const struct unwind_obj *o, __u64 vaddr)
{
	struct unwind_subpage *sp;
	struct unwind_page *pg;
	struct unwind_row *r;
	__u32 idx, lo, hi, want, k;

	if (vaddr < o->base || vaddr >= o->end)
		return NULL;
	idx = o->first_page + (__u32)((vaddr - o->base) >> HSBPF_UNWIND_PAGE_SHIFT);
	pg = bpf_map_lookup_elem(&unwind_pages, &idx);
	if (!pg || !pg->nr)
		return NULL;
	sp = bpf_map_lookup_elem(&unwind_subs, &idx);
	if (!sp)
		return NULL;
	want = vaddr - o->base;
	k = (want >> HSBPF_UNWIND_SUB_SHIFT) & (HSBPF_UNWIND_SUBS - 1);
	/* from the row in force at the chunk's start to the one in force at the next chunk's */
	lo = pg->first + sp->first[k];
	hi = k + 1 < HSBPF_UNWIND_SUBS ? pg->first + sp->first[(k + 1) & (HSBPF_UNWIND_SUBS - 1)] + 1 :
					 pg->first + pg->nr;
	/* a chunk holds at most 257 rows: 9 halvings find the one; 13, as many as a page's
	 * 4,097 would take, bound the loop */
	for (int i = 0; i < 13 && hi - lo > 1; i++) {
		__u32 mid = lo + (hi - lo) / 2;

		r = bpf_map_lookup_elem(&unwind_rows, &mid);
		if (!r)
			return NULL;
		if (r->pc <= want)
			lo = mid;
		else
			hi = mid;
	}
	r = bpf_map_lookup_elem(&unwind_rows, &lo);
	return r && r->pc <= want ? r : NULL;
}

/* one step by frame pointer: [bp] is the caller's bp, [bp + 8] the return address */
static __always_inline int fp_step(struct stack_walk *st, __u16 end_if_not)
{
	__u64 bp = st->bp, ra, next;

	if (bp < st->sp || bp & 7 || !read_stack(st, &next, bp) || !read_stack(st, &ra, bp + 8) || !ra) {
		st->user.end = end_if_not;
		return 1;
	}
	st->user.nr_fp++;
	st->sp = bp + 16;
	st->bp = next;
	st->pc = ra;
	st->signal = 0;
	return 0;
}

/* one frame: record pc, then find the caller's pc, sp and bp; 1 ends the walk */
static long unwind_step(__u64 i, void *ctx)
{
	__u32 zero = 0, n;
	struct stack_walk *st = bpf_map_lookup_elem(&unwind_scratch, ctx);	/* its slot */
	struct py_walk *w;
	struct unwind_row *r;
	__u64 look, base, cfa, ra, rbp;
	__u8 ra_how, rbp_how;

	if (!st)
		return 1;
	n = st->user.nr;
	/* an evaluation loop's frame: the Python frames it runs go before it, or instead */
	w = st->py ? bpf_map_lookup_elem(&py_scratch, &zero) : NULL;
	if (python__is_eval(w, n && !st->signal ? st->pc - 1 : st->pc)) {
		if (!python_place(w, false))
			return 1;
		if (python_frames != HSBPF_PY_REPLACE && !stack_push(st, st->pc))
			return 1;
	} else if (!stack_push(st, st->pc)) {
		return 1;
	}
	/* a frame whose stack pointer is at the process's argc is its first: the interpreter's
	 * _start, which has no unwind information to say so */
	if (st->stack_top && st->sp >= st->stack_top) {
		st->user.end = HSBPF_STACK_COMPLETE;
		return 1;
	}
	if (call_graph == HSBPF_CALL_GRAPH_FP)
		return fp_step(st, HSBPF_STACK_FP_END);

	/* a return address is the instruction after the call, which may begin another function
	 * (a call that does not return): look up the call itself */
	look = (n && !st->signal) || (!n && st->in_syscall) ? st->pc - 1 : st->pc;
	if (!st->have_map || look < st->map.start || look >= st->map.end) {
		if (!lookup_mapping(st, look)) {
			st->have_map = 0;
			return fp_step(st, HSBPF_STACK_NO_MAPPING);
		}
		st->have_map = 1;
	}
	if (st->map.obj == HSBPF_UNWIND_NO_OBJ)
		return fp_step(st, HSBPF_STACK_NO_INFO);
	r = find_row(&st->obj, look - st->map.bias);
	if (!r || r->cfa == HSBPF_CFA_NONE)
		return fp_step(st, HSBPF_STACK_NO_INFO);
	if (r->cfa == HSBPF_CFA_END) {
		st->user.end = HSBPF_STACK_COMPLETE;
		return 1;
	}
	if (r->cfa == HSBPF_CFA_PLT) {
		base = st->sp;
		cfa = base + 8 + (((look - st->map.bias) & 15) >= (__u32)r->cfa_off ? 8 : 0);
	} else if (r->cfa == HSBPF_CFA_REG && (r->cfa_reg == HSBPF_DWARF_RSP || r->cfa_reg == HSBPF_DWARF_RBP ||
					      (n == 0 && r->cfa_reg <= HSBPF_DWARF_LAST_GPR))) {
		if (r->cfa_reg == HSBPF_DWARF_RSP)
			base = st->sp;
		else if (r->cfa_reg == HSBPF_DWARF_RBP)
			base = st->bp;
		else
			base = st->leaf[r->cfa_reg & HSBPF_DWARF_LAST_GPR];
		cfa = base + (__s64)r->cfa_off;
		if ((r->flags & HSBPF_ROW_DEREF) && !read_stack(st, &cfa, cfa)) {
			st->user.end = HSBPF_STACK_UNREADABLE;
			return 1;
		}
	} else {
		st->user.end = r->cfa == HSBPF_CFA_STALE ? HSBPF_STACK_EH_INSTALL : HSBPF_STACK_UNSUPPORTED;
		return 1;
	}
	ra_how = r->saved & 0xf;
	rbp_how = r->saved >> 4;
	if (!read_stack(st, &ra, (ra_how == HSBPF_SAVED_BASE ? base : cfa) + (__s64)r->ra_off)) {
		st->user.end = HSBPF_STACK_UNREADABLE;
		return 1;
	}
	if (rbp_how == HSBPF_SAVED_CFA || rbp_how == HSBPF_SAVED_BASE) {
		if (read_stack(st, &rbp, (rbp_how == HSBPF_SAVED_BASE ? base : cfa) + (__s64)r->rbp_off))
			st->bp = rbp;
	} else if (rbp_how == HSBPF_SAVED_UNDEF) {
		st->bp = 0;
	}
	/* callers live higher on the stack, except across a signal (an alternate stack) */
	if (cfa <= st->sp && !(r->flags & HSBPF_ROW_SIGNAL) && !st->signal) {
		st->user.end = HSBPF_STACK_LOOP;
		return 1;
	}
	/* a zero return address ends some stacks */
	if (!ra) {
		st->user.end = HSBPF_STACK_COMPLETE;
		return 1;
	}
	st->signal = !!(r->flags & HSBPF_ROW_SIGNAL);
	st->sp = cfa;
	st->pc = ra;
	return 0;
}

/* the sampled frame's registers in DWARF order, from a pt_regs that may be read directly (the
 * program's context) or only through probe reads (the task's saved user registers) */
#define LEAF_REGS(st, regs, READ) do {							\
	(st)->leaf[0] = READ(regs, ax);	(st)->leaf[1] = READ(regs, dx);			\
	(st)->leaf[2] = READ(regs, cx);	(st)->leaf[3] = READ(regs, bx);			\
	(st)->leaf[4] = READ(regs, si);	(st)->leaf[5] = READ(regs, di);			\
	(st)->leaf[6] = READ(regs, bp);	(st)->leaf[7] = READ(regs, sp);			\
	(st)->leaf[8] = READ(regs, r8);	(st)->leaf[9] = READ(regs, r9);			\
	(st)->leaf[10] = READ(regs, r10);	(st)->leaf[11] = READ(regs, r11);		\
	(st)->leaf[12] = READ(regs, r12);	(st)->leaf[13] = READ(regs, r13);		\
	(st)->leaf[14] = READ(regs, r14);	(st)->leaf[15] = READ(regs, r15);		\
} while (0)
#define DIRECT(regs, f)	((regs)->f)

/* walk the user stack from these registers into st->user; its hash into st->hash */
static __always_inline void unwind_user(struct stack_walk *st, __u64 pc, __u64 sp, __u64 bp, bool in_syscall)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct py_walk *w;
	__u32 slot = st->slot;

	st->in_syscall = in_syscall;
	st->pc = pc;
	st->sp = sp;
	st->bp = bp;
	st->stack_top = BPF_CORE_READ(task, mm, start_stack);
	st->signal = 0;
	st->have_map = 0;
	st->win_len = 0;
	st->gen = unwind_gen;
	st->user.nr = 0;
	st->user.nr_fp = 0;
	st->user.end = HSBPF_STACK_DEPTH;
	st->hash = 0x243F6A8885A308D3ull;
	/* Python frames in the main slot's walks only: python.bpf.h's scratch is that slot's */
	w = slot == UNWIND_SLOT_MAIN ? python__walk(st->pid, st->tag) : NULL;
	st->py = w && w->nr;
	bpf_loop(HSBPF_MAX_FRAMES, unwind_step, &slot, 0);
	/* the groups no native evaluation loop's frame was found for (a cut native stack): after
	 * the native frames, in their order */
	if (w && st->py && w->next < w->nr && st->user.end != HSBPF_STACK_DEPTH)
		python_place(w, true);
	st->hash = stack_mix(st->hash, (__u64)st->user.end << 32 | st->user.nr);
	stack_stat_add(HSBPF_STACK_STAT_FRAMES, st->user.nr);
	stack_stat_add(HSBPF_STACK_STAT_FP_FRAMES, st->user.nr_fp);
}

/* the user stack from the LBR in call-stack mode: each entry is a call not yet returned from,
 * the newest first, so the stack is the sampled pc and then every call's source. 32 entries
 * at most: a full LBR may have lost older callers */
static __always_inline void unwind_lbr(struct bpf_perf_event_data *ctx, struct stack_walk *st, __u64 pc)
{
	long got = bpf_read_branch_records(ctx, st->lbr, sizeof(st->lbr), 0);
	__u32 n = got > 0 ? got / sizeof(st->lbr[0]) : 0;

	st->user.ip[0] = pc;
	st->user.nr = 1;
	st->user.nr_fp = 0;
	st->hash = stack_mix(0x243F6A8885A308D3ull, pc);
	for (__u32 i = 0; i < HSBPF_LBR_MAX && i < n; i++) {
		st->user.ip[i + 1] = st->lbr[i].from;
		st->hash = stack_mix(st->hash, st->lbr[i].from);
	}
	st->user.nr = 1 + (n < HSBPF_LBR_MAX ? n : HSBPF_LBR_MAX);
	st->user.end = got < 0 ? HSBPF_STACK_UNREADABLE : n >= HSBPF_LBR_MAX ? HSBPF_STACK_DEPTH :
									    HSBPF_STACK_COMPLETE;
	st->hash = stack_mix(st->hash, (__u64)st->user.end << 32 | st->user.nr);
	stack_stat_add(HSBPF_STACK_STAT_FRAMES, st->user.nr);
}

/* the image tag of the current process: what the exec tracepoint recorded, 0 if none */
static __always_inline __u32 image_tag(struct proc_state *proc)
{
	return proc ? (__u32)proc->exec_ns : 0;
}

/* the task runs on the mm its exec made, before the new program's first instruction */
static __always_inline bool in_exec(struct task_struct *task, __u32 tgid)
{
	__u64 *mm = bpf_map_lookup_elem(&execing, &tgid);

	return mm && *mm == (__u64)BPF_CORE_READ(task, mm);
}

/* store a stack under its hash if it is new, in the map of its size (the short map's value is
 * the head of struct stack_frames); false when the map is full */
static __always_inline bool stacks__store(__u64 hash, struct stack_frames *f)
{
	if (f->nr <= HSBPF_SHORT_FRAMES) {
		if (bpf_map_lookup_elem(&stacks, &hash))
			return true;
		return !bpf_map_update_elem(&stacks, &hash, f, BPF_NOEXIST) ||
		       bpf_map_lookup_elem(&stacks, &hash);
	}
	if (bpf_map_lookup_elem(&stacks_long, &hash))
		return true;
	return !bpf_map_update_elem(&stacks_long, &hash, f, BPF_NOEXIST) ||
	       bpf_map_lookup_elem(&stacks_long, &hash);
}

/* stacks__store into the odd generation's maps when odd (each call site names its map) */
static __always_inline bool stacks__store_gen(__u64 hash, struct stack_frames *f, bool odd)
{
	if (!odd)
		return stacks__store(hash, f);
	if (f->nr <= HSBPF_SHORT_FRAMES) {
		if (bpf_map_lookup_elem(&stacks_odd, &hash))
			return true;
		return !bpf_map_update_elem(&stacks_odd, &hash, f, BPF_NOEXIST) ||
		       bpf_map_lookup_elem(&stacks_odd, &hash);
	}
	if (bpf_map_lookup_elem(&stacks_long_odd, &hash))
		return true;
	return !bpf_map_update_elem(&stacks_long_odd, &hash, f, BPF_NOEXIST) ||
	       bpf_map_lookup_elem(&stacks_long_odd, &hash);
}

/* count the sample under key in map; false when the map is full */
static __always_inline bool stacks__count(void *map, struct stack_key *key, __u64 weight)
{
	struct sample_value one = { 1, weight }, *val;

	val = bpf_map_lookup_elem(map, key);
	if (!val) {
		if (!bpf_map_update_elem(map, key, &one, BPF_NOEXIST))
			return true;
		val = bpf_map_lookup_elem(map, key);
		if (!val)
			return false;
	}
	__sync_fetch_and_add(&val->count, 1);
	__sync_fetch_and_add(&val->weight, weight);
	return true;
}

/* whether the stack under hash is stored in the generation's maps (of st->user's size) */
static __always_inline bool stacks__have_user(struct stack_walk *st, __u64 hash, bool odd)
{
	if (st->user.nr <= HSBPF_SHORT_FRAMES)
		return odd ? !!bpf_map_lookup_elem(&stacks_odd, &hash) : !!bpf_map_lookup_elem(&stacks, &hash);
	return odd ? !!bpf_map_lookup_elem(&stacks_long_odd, &hash) : !!bpf_map_lookup_elem(&stacks_long, &hash);
}

/* the user stack st->user under *hash, in the generation's maps. A stack not stored yet with
 * Python frames first announces their code objects (python__announce), which may give a
 * frame the generation of its code object at its address: the stack then goes under its new
 * hash, *hash, which the caller's key must use. (A stack with a reused address misses the
 * lookup under its unwound hash at every sample and comes here, bounded by its frames.) */
static __always_inline bool stacks__store_user(struct stack_walk *st, __u64 *hash, bool odd)
{
	if (stacks__have_user(st, *hash, odd))
		return true;
	if (python__announce(st, hash) && stacks__have_user(st, *hash, odd))
		return true;
	return stacks__store_gen(*hash, &st->user, odd);
}

/* send the sample to user space with its registers and a copy of its stack, to be unwound there
 * once the tables of its program exist: true when sent (then it is counted there). An off-CPU
 * block's copy has a token and weight 0: its time follows in a late_block */
static __always_inline bool late_stack(struct stack_walk *st, const struct stack_key *key, __u64 weight,
				       __u64 pc, __u64 token)
{
	struct late_stack *l = bpf_ringbuf_reserve(&late_stacks, sizeof(*l), 0);
	__u64 sp = st->leaf[HSBPF_DWARF_RSP], size;

	if (!l) {
		stack_stat_add(HSBPF_STACK_STAT_LATE_FULL, 1);
		return false;
	}
	l->key = *key;
	l->weight = weight;
	l->ip = pc;
	__builtin_memcpy(l->regs, st->leaf, sizeof(l->regs));
	l->stack_top = st->stack_top;
	l->in_syscall = st->in_syscall;
	l->token = token;
	l->kernel_nr = 0;
	/* key->kernel is set only when bpf_get_stack filled st->kernel for this sample: its frames
	 * are otherwise an earlier sample's */
	if ((key->flags & HSBPF_KEY_KERNEL) && key->kernel) {
		__u32 nr = st->kernel.nr < HSBPF_LATE_KERNEL_FRAMES ? st->kernel.nr : HSBPF_LATE_KERNEL_FRAMES;

		if (!bpf_probe_read_kernel(l->kernel, sizeof(l->kernel), st->kernel.ip))
			l->kernel_nr = nr;
	}
	/* as much of the stack as can be read: the main thread's up to its first frame (the
	 * vma ends a little above it), else the whole copy, else up to a page boundary */
	size = HSBPF_LATE_STACK_BYTES;
	if (st->stack_top > sp && st->stack_top + 16 - sp < size)
		size = st->stack_top + 16 - sp;
	for (int i = 0; i < 3; i++) {
		if (size > HSBPF_LATE_STACK_BYTES)
			size = HSBPF_LATE_STACK_BYTES;
		if (!bpf_probe_read_user(l->data, size, (void *)sp))
			break;
		/* the stack's vma ends at a page boundary: up to the second, then the first */
		size = ((sp | 4095) + 1 - sp) + (i ? 0 : 4096);
		if (i == 2)
			size = 0;
	}
	l->size = size;
	bpf_ringbuf_submit(l, 0);
	stack_stat_add(HSBPF_STACK_STAT_LATE, 1);
	return true;
}

/* the sample's stacks, counted with its weight; the flat histogram is counted apart */
static __always_inline void stacks__sample_one(struct bpf_perf_event_data *ctx, __u32 tgid,
					   struct proc_state *proc, __u64 weight)
{
	struct stack_key key = {};
	struct task_struct *task = bpf_get_current_task_btf();
	struct stack_walk *st;
	__u32 zero = 0, *gen;
	__u64 pc, sp, bp;
	bool in_syscall = false, odd = false, ok;
	long got;

	st = bpf_map_lookup_elem(&unwind_scratch, &zero);
	if (!st)
		return;
	/* one generation for the sample's stacks and its count: they are drained together */
	if (stack_gens) {
		gen = bpf_map_lookup_elem(&live, &zero);
		odd = gen && (*gen & 1);
	}
	stack_stat_add(HSBPF_STACK_STAT_SAMPLES, 1);
	key.pid = tgid;
	key.cgroup_id = bpf_get_current_cgroup_id();
	key.exec_ns = proc ? proc->exec_ns : 0;
	key.map_ns = proc ? proc->map_ns : 0;
	samples__extra(&key.x);
	pc = ctx->regs.ip;
	if ((__s64)pc < 0) {
		key.flags |= HSBPF_KEY_KERNEL;
		got = bpf_get_stack(ctx, st->kernel.ip, sizeof(st->kernel.ip), 0);
		if (got > 0) {
			__u32 nr = got / sizeof(__u64);

			st->kernel.nr = nr;
			st->kernel.end = 0;
			st->kernel.nr_fp = 0;
			key.kernel = 0x13198A2E03707344ull;
			for (__u32 i = 0; i < HSBPF_MAX_FRAMES && i < nr; i++)
				key.kernel = stack_mix(key.kernel, st->kernel.ip[i]);
			key.kernel |= 1;	/* never 0, which means none */
			if (!stacks__store_gen(key.kernel, &st->kernel, odd)) {
				stack_stat_add(HSBPF_STACK_STAT_STACKS_FULL, 1);
				key.kernel = HSBPF_STACK_LOST_HASH;
			}
		} else {
			stack_stat_add(HSBPF_STACK_STAT_KERNEL_ERR, 1);
		}
		/* the user registers the kernel saved on entry, if the task has a user side */
		if (!BPF_CORE_READ(task, mm))
			goto count;
		if (in_exec(task, tgid)) {
			st->user.nr = 0;
			st->user.nr_fp = 0;
			st->user.end = HSBPF_STACK_IN_EXEC;
			st->hash = stack_mix(0x243F6A8885A308D3ull, (__u64)HSBPF_STACK_IN_EXEC << 32);
			goto store_user;
		}
		{
			struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);

			__u16 insn = 0;

			pc = BPF_CORE_READ(regs, ip);
			sp = BPF_CORE_READ(regs, sp);
			bp = BPF_CORE_READ(regs, bp);
			LEAF_REGS(st, regs, BPF_CORE_READ);
			/* in a syscall the saved pc is the instruction after it (the end of
			 * __restore_rt's rule, say): it is looked up as a return address is. A
			 * fault's error code is in orig_ax too: the instruction says which */
			in_syscall = (long)BPF_CORE_READ(regs, orig_ax) >= 0 &&
				     !bpf_probe_read_user(&insn, sizeof(insn), (void *)(pc - 2)) && insn == 0x050f;
		}
	} else {
		sp = ctx->regs.sp;
		bp = ctx->regs.bp;
		LEAF_REGS(st, &ctx->regs, DIRECT);
	}
	st->pid = tgid;
	st->tag = image_tag(proc);
	if (call_graph == HSBPF_CALL_GRAPH_LBR) {
		unwind_lbr(ctx, st, pc);
	} else {
		unwind_user(st, pc, sp, bp, in_syscall);
		/* a program too new for its tables: unwound in user space, from a copy */
		if (late_unwind && call_graph == HSBPF_CALL_GRAPH_DWARF && st->user.end == HSBPF_STACK_NO_MAPPING &&
		    late_stack(st, &key, weight, pc, 0))
			return;
	}
store_user:
	key.user = st->hash | 1;
	if (!stacks__store_user(st, &key.user, odd)) {
		stack_stat_add(HSBPF_STACK_STAT_STACKS_FULL, 1);
		key.user = HSBPF_STACK_LOST_HASH;
	}
count:
	ok = odd ? stacks__count(&stack_samples_odd, &key, weight) :
		   stacks__count(&stack_samples, &key, weight);
	if (!ok)
		stack_stat_add(HSBPF_STACK_STAT_KEYS_FULL, 1);
}

static __always_inline void stacks__sample(struct bpf_perf_event_data *ctx, __u32 tgid,
					   struct proc_state *proc, __u64 weight)
{
	__u64 t0 = time_stacks ? bpf_ktime_get_ns() : 0;

	stacks__sample_one(ctx, tgid, proc, weight);
	if (time_stacks)
		stack_stat_add(HSBPF_STACK_STAT_NS, bpf_ktime_get_ns() - t0);
}

#endif /* HSBPF_STACKS_BPF_H */
