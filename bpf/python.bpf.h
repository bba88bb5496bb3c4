/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Python's own frames (docs/python.md): for a CPython process user space put in py_procs, the
 * sampled thread's PyThreadState is found (the interpreters' thread lists, matched on the
 * kernel's tid, or on the thread's fs base where the version has no native id) and its chain
 * of interpreter frames read into a per-CPU list, innermost first, each frame tagged
 * (HSBPF_PY_FRAME: code object, instruction offset), the entry frame of each evaluation
 * loop's call marked. The native unwinder then places each group where its native
 * _PyEval_EvalFrameDefault frame is (before it, or instead of it), so that the kernel
 * aggregates the whole stack as one. Bounded: HSBPF_PY_MAX_FRAMES frames, loops found by
 * Brent's method, unreadable memory and cut chains counted. Included by stacks.bpf.h. */
#ifndef HSBPF_PYTHON_BPF_H
#define HSBPF_PYTHON_BPF_H

#include "hsbpf.h"

/* --python-frames (enum hsbpf_py_mode), set before load */
const volatile __u32 python_frames = HSBPF_PY_INTERLEAVE;

struct py_proc_key {
	__u32 pid, tag;		/* the process image, as unwind_maps keys it */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HSBPF_PY_PROCS);
	__type(key, struct py_proc_key);
	__type(value, struct hsbpf_py_proc);
} py_procs SEC(".maps");

/* a thread's PyThreadState, checked against its id before use */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u64);
} py_threads SEC(".maps");

/* the code objects already announced to user space, per process, with the name object each
 * had: a code object freed and its address reused shows as another name, announced again */
struct py_code_key {
	__u32 pid, pad;
	__u64 code;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct py_code_key);
	__type(value, __u64);
} py_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, HSBPF_PY_CODES_RING);
} py_codes SEC(".maps");

#define PY_FRAME_READ	72	/* bytes of a frame read at once: 3.11's header (its specials) */
#define PY_MAX_INTERPS	4
#define PY_MAX_THREADS	64

struct py_walk {
	__u64 frames[HSBPF_PY_MAX_FRAMES];	/* innermost first */
	__u32 nr, next;		/* frames read; the next to place */
	__u64 frame, mark;	/* the frame to read; Brent's mark */
	__u32 steps, power;
	__u32 bad, pad;		/* the chain met unreadable memory or a loop */
	/* the thread state's search: the thread, the list's position, the state found */
	__u64 fsbase, interp, ts, found;
	__u32 tid;
	__u32 place_all, place_full, pad2;	/* python_place's */
	__u64 eval_start, eval_end;
	struct hsbpf_py_offsets off;
	__u8 buf[PY_FRAME_READ];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_walk);
} py_scratch SEC(".maps");

static __always_inline bool py_read(__u64 *dst, __u64 base, __u16 off)
{
	if (off == HSBPF_PY_ABSENT || !base)
		return false;
	return !bpf_probe_read_user(dst, sizeof(*dst), (const void *)(base + off));
}

/* the thread's identity as this version keeps it: the kernel's tid (3.11+), else its
 * pthread_self(), which is its fs base on x86-64 */
static __always_inline bool py_is_thread(const struct hsbpf_py_offsets *o, __u64 tstate, __u32 tid,
					 __u64 fsbase)
{
	__u64 v;

	if (o->tstate_native_thread_id != HSBPF_PY_ABSENT)
		return py_read(&v, tstate, o->tstate_native_thread_id) && (__u32)v == tid;
	return py_read(&v, tstate, o->tstate_thread_id) && v == fsbase;
}

/* one thread state of the interpreters' lists: the thread's ends the search (w->ts) */
static long py_thread_step(__u64 i, void *ctx)
{
	__u32 zero = 0;
	struct py_walk *w = bpf_map_lookup_elem(&py_scratch, &zero);
	__u64 next = 0;

	if (!w)
		return 1;
	if (!w->ts) {	/* the next interpreter's list, if any */
		if (!w->interp || !py_read(&w->interp, w->interp, w->off.interp_next) || !w->interp ||
		    !py_read(&w->ts, w->interp, w->off.interp_threads_head))
			return 1;
		return 0;
	}
	if (py_is_thread(&w->off, w->ts, w->tid, w->fsbase)) {
		w->found = w->ts;
		return 1;
	}
	if (!py_read(&next, w->ts, w->off.tstate_next))
		return 1;
	w->ts = next;
	return 0;
}

/* the PyThreadState of thread tid: the cache's when it still is that thread's, else found in
 * the interpreters' lists */
static __always_inline __u64 py_thread_state(const struct hsbpf_py_proc *p, struct py_walk *w, __u32 tid,
					     __u64 fsbase)
{
	__u64 *cached = bpf_map_lookup_elem(&py_threads, &tid);

	if (cached && py_is_thread(&w->off, *cached, tid, fsbase))
		return *cached;
	w->tid = tid;
	w->fsbase = fsbase;
	w->found = 0;
	w->interp = 0;
	w->ts = 0;
	if (!py_read(&w->interp, p->runtime, w->off.runtime_interp_head) || !w->interp ||
	    !py_read(&w->ts, w->interp, w->off.interp_threads_head))
		return 0;
	bpf_loop(PY_MAX_INTERPS * PY_MAX_THREADS, py_thread_step, NULL, 0);
	if (w->found)
		bpf_map_update_elem(&py_threads, &tid, &w->found, BPF_ANY);
	return w->found;
}

static __always_inline __u64 py_field(struct py_walk *w, __u16 off)
{
	if (off > PY_FRAME_READ - 8)
		return 0;
	return *(__u64 *)&w->buf[off & 63];
}

static __always_inline __u8 py_byte(struct py_walk *w, __u16 off)
{
	if (off >= PY_FRAME_READ)
		return 0;
	return w->buf[off & 127];
}

/* mark the last frame read as its group's entry (3.12+: the C-stack shim follows it) */
static __always_inline void py_close_group(struct py_walk *w)
{
	__u32 last = w->nr - 1;

	if (w->nr && last < HSBPF_PY_MAX_FRAMES)
		w->frames[last] |= HSBPF_PY_ENTRY;
}

/* one interpreter frame: read, checked, recorded; 1 ends the chain */
static long py_step(__u64 i, void *ctx)
{
	__u32 zero = 0, n;
	struct py_walk *w = bpf_map_lookup_elem(&py_scratch, &zero);
	__u64 frame, code, instr, start, off = 0;
	__u8 entry, owner;
	int first = 0;

	if (!w || !w->frame)
		return 1;
	frame = w->frame;
	n = w->nr;
	if (n >= HSBPF_PY_MAX_FRAMES)
		return 1;
	/* a chain that comes back to a frame it passed: Brent's mark moves at powers of two */
	if (frame == w->mark || frame & 7 || frame >> 47 ||
	    bpf_probe_read_user(w->buf, PY_FRAME_READ, (const void *)frame)) {
		w->bad = 1;
		return 1;
	}
	if (++w->steps == w->power) {
		w->mark = frame;
		w->power <<= 1;
	}
	w->frame = py_field(w, w->off.frame_previous);
	code = py_field(w, w->off.frame_code);
	entry = w->off.frame_is_entry != HSBPF_PY_ABSENT ? py_byte(w, w->off.frame_is_entry) : 0;
	owner = w->off.frame_owner != HSBPF_PY_ABSENT ? py_byte(w, w->off.frame_owner) : 0;
	if (w->off.owned_by_cstack != HSBPF_PY_ABSENT && owner == w->off.owned_by_cstack) {
		py_close_group(w);	/* the shim an evaluation loop's call begins with */
		return 0;
	}
	if (!code || code & 7 || code >> 47) {
		w->bad = 1;
		return 1;
	}
	instr = py_field(w, w->off.frame_instr);
	start = code + (w->off.code_adaptive != HSBPF_PY_ABSENT ? w->off.code_adaptive : 0);
	if (instr >= start)
		off = (instr - start) / 2;
	/* 3.11: a frame not yet past its prologue (owned by a thread, not a generator) is not
	 * Python code yet: tracebacks skip it, and so does this walk but for an entry frame,
	 * whose native evaluation loop is already on the stack */
	if (w->off.code_firsttraceable != HSBPF_PY_ABSENT && owner != 1 && !entry &&
	    (instr < start || off < 256)) {
		if (bpf_probe_read_user(&first, sizeof(first), (const void *)(code + w->off.code_firsttraceable)))
			first = 0;
		if (instr < start || off < (__u64)first)
			return 0;
	}
	if (off > HSBPF_PY_OFF_MASK)
		off = HSBPF_PY_OFF_MASK;
	w->frames[n & (HSBPF_PY_MAX_FRAMES - 1)] = HSBPF_PY_FRAME(code, off | (entry ? HSBPF_PY_ENTRY : 0));
	w->nr = n + 1;
	return 0;
}

/* read the sampled thread's Python frames into py_scratch (none when the process is not a
 * Python one the unwinder knows, or --python-frames=off) */
static __always_inline struct py_walk *python__walk(__u32 pid, __u32 tag)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct py_proc_key k = { pid, tag };
	struct hsbpf_py_proc *p;
	struct py_walk *w;
	__u32 zero = 0, tid = (__u32)bpf_get_current_pid_tgid();
	__u64 ts, cf = 0;

	w = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!w)
		return NULL;
	w->nr = 0;
	w->next = 0;
	if (python_frames == HSBPF_PY_OFF_MODE)
		return NULL;
	p = bpf_map_lookup_elem(&py_procs, &k);
	if (!p)
		return NULL;
	w->off = p->off;
	w->eval_start = p->eval_start;
	w->eval_end = p->eval_end;
	ts = py_thread_state(p, w, tid, BPF_CORE_READ(task, thread.fsbase));
	if (!ts) {
		stack_stat_add(HSBPF_STACK_STAT_PY_NO_THREAD, 1);
		return NULL;
	}
	w->frame = 0;
	if (w->off.tstate_current_frame != HSBPF_PY_ABSENT) {
		py_read(&w->frame, ts, w->off.tstate_current_frame);
	} else if (py_read(&cf, ts, w->off.tstate_cframe)) {
		py_read(&w->frame, cf, w->off.cframe_current_frame);
	}
	if (!w->frame)
		return NULL;	/* a thread outside Python code */
	w->mark = 0;
	w->steps = 0;
	w->power = 1;
	w->bad = 0;
	bpf_loop(HSBPF_PY_MAX_FRAMES, py_step, NULL, 0);
	if (w->bad)
		stack_stat_add(HSBPF_STACK_STAT_PY_BAD, 1);
	else if (w->frame)
		stack_stat_add(HSBPF_STACK_STAT_PY_CUT, 1);
	if (w->nr) {
		stack_stat_add(HSBPF_STACK_STAT_PY_SAMPLES, 1);
		stack_stat_add(HSBPF_STACK_STAT_PY_FRAMES, w->nr);
	}
	return w;
}

/* whether pc (a frame's, looked up as the unwinder looks it up) is in the evaluation loop */
static __always_inline bool python__is_eval(const struct py_walk *w, __u64 look)
{
	return w && w->next < w->nr && look >= w->eval_start && look < w->eval_end;
}

/* a new stack's frame: its code object announced if it is new to the process */
static long py_announce_one(__u64 i, void *ctx)
{
	__u32 zero = 0;
	struct stack_walk *st = bpf_map_lookup_elem(&unwind_scratch, &zero);
	struct py_walk *w = bpf_map_lookup_elem(&py_scratch, &zero);
	struct py_code_key k = { .pid = (__u32)(bpf_get_current_pid_tgid() >> 32) };
	struct hsbpf_py_code_event *e;
	__u64 v, name = 0, *seen;
	__u16 off;

	if (!st || !w || i >= st->user.nr)
		return 1;
	v = st->user.ip[i & (HSBPF_MAX_FRAMES - 1)];
	if (!HSBPF_PY_IS_FRAME(v))
		return 0;
	k.code = HSBPF_PY_CODE(v);
	off = w->off.code_qualname != HSBPF_PY_ABSENT ? w->off.code_qualname : w->off.code_name;
	py_read(&name, k.code, off);
	seen = bpf_map_lookup_elem(&py_seen, &k);
	if (seen && *seen == name)
		return 0;
	e = bpf_ringbuf_reserve(&py_codes, sizeof(*e), 0);
	if (!e) {
		stack_stat_add(HSBPF_STACK_STAT_PY_CODES_LOST, 1);
		return 0;	/* announced by the next new stack that has it */
	}
	e->pid = k.pid;
	e->pad = 0;
	e->code = k.code;
	bpf_ringbuf_submit(e, 0);
	bpf_map_update_elem(&py_seen, &k, &name, BPF_ANY);
	return 0;
}

/* the code objects of a user stack just stored for the first time (st->user) */
static __always_inline void python__announce(struct stack_walk *st)
{
	if (st->py)
		bpf_loop(HSBPF_MAX_FRAMES, py_announce_one, NULL, 0);
}

#endif /* HSBPF_PYTHON_BPF_H */
