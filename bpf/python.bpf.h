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

/* the code objects already announced to user space, per process, with the name and file
 * objects each had and its generation: a code object freed and its address reused shows as
 * another name or file (two modules' bodies are both named <module>, one interned string),
 * announced again under the next generation (HSBPF_PY_GEN) */
struct py_code_key {
	__u32 pid, pad;
	__u64 code;
};

struct py_code_seen {
	__u64 name, file;
	__u32 gen, pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct py_code_key);
	__type(value, struct py_code_seen);
} py_seen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, HSBPF_PY_CODES_RING);
} py_codes SEC(".maps");

#define PY_FRAME_READ	128	/* bytes of a frame read at once, at most (3.10's f_lasti is at 96) */
#define PY_MAX_INTERPS	4
#define PY_MAX_THREADS	64

struct py_walk {
	__u64 frames[HSBPF_PY_MAX_FRAMES];	/* innermost first */
	__u32 nr, next;		/* frames read; the next to place */
	__u64 frame, mark;	/* the frame to read; Brent's mark */
	__u32 steps, power;
	__u32 bad;		/* the chain met unreadable memory or a loop */
	__u32 read_len;		/* bytes of each frame read: the version's fields' end */
	__u32 group;		/* frames[] index where the current group began */
	__u32 all_entry;	/* 3.10: each frame has its own evaluation loop's call */
	__u64 pending;		/* 3.12+: an incomplete frame skipped, its group empty so far */
	__u64 code_type;	/* &PyCode_Type where the frame's code may be another object */
	/* the thread state's search: the thread, the list's position, the state found */
	__u64 fsbase, interp, ts, found;
	__u64 running, running_cf;	/* several interpreters: the state running, its cframe */
	__u32 tid;
	__u32 place_all, place_full;	/* python_place's */
	__u32 several;			/* several interpreters, and a way to tell the state running */
	__u32 attached;			/* 3.13: the thread's states found attached */
	__u64 rehash;		/* python__announce's: the stack's hash with its generations */
	__u32 regen, pad3;	/* ... some frame's generation was changed */
	__u64 eval_start, eval_end;
	struct hsbpf_py_offsets off;
	__u8 buf[PY_FRAME_READ + 8];	/* masked offsets and their 8 bytes stay inside */
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
		__u64 cf = 0, frame = 0, state = 0;

		if (!w->found)
			w->found = w->ts;
		if (!w->several)
			return 1;
		/* a thread that ran a subinterpreter has a state in each interpreter: 3.13's is
		 * the one attached (one only, else none is taken), 3.11's and 3.12's the one
		 * running Python code deepest on the C stack (its cframe is there) */
		if (w->off.tstate_state != HSBPF_PY_ABSENT) {
			if (py_read(&state, w->ts, w->off.tstate_state) &&
			    (__u32)state == HSBPF_PY_THREAD_ATTACHED) {
				if (!w->attached)
					w->running = w->ts;
				w->attached++;
			}
		} else if (py_read(&cf, w->ts, w->off.tstate_cframe) &&
			   py_read(&frame, cf, w->off.cframe_current_frame) && frame &&
			   (!w->running || cf < w->running_cf)) {
			w->running = w->ts;
			w->running_cf = cf;
		}
	}
	if (!py_read(&next, w->ts, w->off.tstate_next))
		return 1;
	w->ts = next;
	return 0;
}

/* the state running, found without a search: 3.10's holding the GIL, when it is this
 * thread's (a thread running Python code holds it); 0 when unsure */
static __always_inline __u64 py_gil_holder(const struct hsbpf_py_proc *p, struct py_walk *w, __u32 tid,
					   __u64 fsbase)
{
	__u64 ts = 0;

	if (w->off.runtime_tstate_current == HSBPF_PY_ABSENT ||
	    !py_read(&ts, p->runtime, w->off.runtime_tstate_current) || !ts ||
	    !py_is_thread(&w->off, ts, tid, fsbase))
		return 0;
	return ts;
}

/* the PyThreadState of thread tid: the cache's when it still is that thread's, else found in
 * the interpreters' lists. With several interpreters, a thread may have a state in each, and
 * the one it runs is taken where the version tells it: 3.10's holding the GIL, 3.13's
 * attached, 3.11's and 3.12's whose cframe is deepest on the C stack (each sample searches
 * them all). Where that is unsure (3.10: the thread does not hold the GIL; 3.13: no state or
 * two attached), the cache's or the first found, as with one interpreter */
static __always_inline __u64 py_thread_state(const struct hsbpf_py_proc *p, struct py_walk *w, __u32 tid,
					     __u64 fsbase)
{
	__u64 *cached = bpf_map_lookup_elem(&py_threads, &tid), next = 0, ts;

	w->interp = 0;
	w->several = 0;
	if ((w->off.tstate_cframe != HSBPF_PY_ABSENT || w->off.tstate_state != HSBPF_PY_ABSENT ||
	     w->off.runtime_tstate_current != HSBPF_PY_ABSENT) &&
	    py_read(&w->interp, p->runtime, w->off.runtime_interp_head) && w->interp)
		w->several = py_read(&next, w->interp, w->off.interp_next) && next;
	/* 3.11 has the GIL's holder too, but its cframe tells the state for threads without it */
	if (w->several && w->off.tstate_cframe == HSBPF_PY_ABSENT &&
	    w->off.tstate_state == HSBPF_PY_ABSENT) {
		ts = py_gil_holder(p, w, tid, fsbase);
		if (ts)
			return ts;
		w->several = 0;
	}
	if (!w->several && cached && py_is_thread(&w->off, *cached, tid, fsbase))
		return *cached;
	w->tid = tid;
	w->fsbase = fsbase;
	w->found = 0;
	w->running = 0;
	w->running_cf = 0;
	w->attached = 0;
	w->interp = 0;
	w->ts = 0;
	if (!py_read(&w->interp, p->runtime, w->off.runtime_interp_head) || !w->interp ||
	    !py_read(&w->ts, w->interp, w->off.interp_threads_head))
		return 0;
	bpf_loop(PY_MAX_INTERPS * PY_MAX_THREADS, py_thread_step, NULL, 0);
	if (w->running && w->attached <= 1)
		return w->running;
	if (w->several && cached && py_is_thread(&w->off, *cached, tid, fsbase))
		return *cached;
	if (w->found)
		bpf_map_update_elem(&py_threads, &tid, &w->found, BPF_ANY);
	return w->found;
}

/* a field of the frame just read (read_len covers every field the version has) */
static __always_inline __u64 py_field(struct py_walk *w, __u16 off)
{
	if (off > PY_FRAME_READ - 8)
		return 0;
	return *(__u64 *)&w->buf[off & (PY_FRAME_READ - 1)];
}

static __always_inline __u8 py_byte(struct py_walk *w, __u16 off)
{
	if (off >= PY_FRAME_READ)
		return 0;
	return w->buf[off & (PY_FRAME_READ - 1)];
}

/* the bytes of a frame to read: up to the end of the last field the version has */
static __always_inline __u32 py_read_len(const struct hsbpf_py_offsets *o)
{
	__u32 end = 8;

	if (o->frame_previous != HSBPF_PY_ABSENT && o->frame_previous + 8 > end)
		end = o->frame_previous + 8;
	if (o->frame_code != HSBPF_PY_ABSENT && o->frame_code + 8 > end)
		end = o->frame_code + 8;
	if (o->frame_instr != HSBPF_PY_ABSENT && o->frame_instr + 8 > end)
		end = o->frame_instr + 8;
	if (o->frame_is_entry != HSBPF_PY_ABSENT && o->frame_is_entry + 1 > end)
		end = o->frame_is_entry + 1;
	if (o->frame_owner != HSBPF_PY_ABSENT && o->frame_owner + 1 > end)
		end = o->frame_owner + 1;
	return end > PY_FRAME_READ ? PY_FRAME_READ : end;
}

static __always_inline void py_push(struct py_walk *w, __u64 v)
{
	__u32 n = w->nr;

	if (n >= HSBPF_PY_MAX_FRAMES)
		return;
	w->frames[n & (HSBPF_PY_MAX_FRAMES - 1)] = v;
	w->nr = n + 1;
}

/* the C-stack shim an evaluation loop's call begins with (3.12+): the last frame read is its
 * group's entry. A group whose only frame was skipped as incomplete keeps that frame, so
 * that its evaluation loop's native frame does not take the next group's frames */
static __always_inline void py_close_group(struct py_walk *w)
{
	__u32 last;

	if (w->nr == w->group && w->pending)
		py_push(w, w->pending);
	w->pending = 0;
	last = w->nr - 1;
	if (w->nr > w->group && last < HSBPF_PY_MAX_FRAMES)
		w->frames[last] |= HSBPF_PY_ENTRY;
	w->group = w->nr;
}

/* whether code (a frame's code field) holds a code object: 3.13's f_executable may hold
 * another (None in a shim); a version whose field is always a code object is not checked */
static __always_inline bool py_is_code(const struct py_walk *w, __u64 code)
{
	__u64 type = 0;

	if (!w->code_type)
		return true;
	return !bpf_probe_read_user(&type, sizeof(type), (const void *)(code + 8)) &&
	       type == w->code_type;
}

/* the instruction's offset in code units: 3.10's f_lasti (an int, -1 before the first),
 * else the instruction pointer's distance from co_code_adaptive; *before: the pointer is
 * before the first instruction (3.12's prev_instr in a frame just pushed) */
static __always_inline __u64 py_instr(struct py_walk *w, __u64 code, bool *before)
{
	__u64 instr = py_field(w, w->off.frame_instr), start;

	*before = false;
	if (w->off.code_adaptive == HSBPF_PY_ABSENT)
		return (__s32)instr < 0 ? 0 : (__u32)instr;
	start = code + w->off.code_adaptive;
	if (instr < start) {
		*before = true;
		return 0;
	}
	return (instr - start) / 2;
}

/* one interpreter frame: read, checked, recorded; 1 ends the chain */
static long py_step(__u64 i, void *ctx)
{
	__u32 zero = 0, len;
	struct py_walk *w = bpf_map_lookup_elem(&py_scratch, &zero);
	__u64 frame, code, off, v;
	__u8 entry, owner;
	int first = 0;
	bool before;

	if (!w || !w->frame)
		return 1;
	frame = w->frame;
	if (w->nr >= HSBPF_PY_MAX_FRAMES)
		return 1;
	len = w->read_len;
	if (len > PY_FRAME_READ)
		len = PY_FRAME_READ;
	if (len < 8)
		len = 8;
	/* a chain that comes back to a frame it passed: Brent's mark moves at powers of two */
	if (frame == w->mark || frame & 7 || frame >> 47 ||
	    bpf_probe_read_user(w->buf, len, (const void *)frame)) {
		w->bad = 1;
		return 1;
	}
	if (++w->steps == w->power) {
		w->mark = frame;
		w->power <<= 1;
	}
	w->frame = py_field(w, w->off.frame_previous);
	code = py_field(w, w->off.frame_code);
	entry = w->all_entry ||
		(w->off.frame_is_entry != HSBPF_PY_ABSENT && py_byte(w, w->off.frame_is_entry));
	owner = w->off.frame_owner != HSBPF_PY_ABSENT ? py_byte(w, w->off.frame_owner) : 0;
	if (w->off.owned_by_cstack != HSBPF_PY_ABSENT && owner == w->off.owned_by_cstack) {
		py_close_group(w);	/* the shim an evaluation loop's call begins with */
		return 0;
	}
	if (!code || code & 7 || code >> 47) {
		w->bad = 1;
		return 1;
	}
	if (!py_is_code(w, code))
		return 0;	/* no Python code runs in it */
	off = py_instr(w, code, &before);
	if (off > HSBPF_PY_OFF_MASK)
		off = HSBPF_PY_OFF_MASK;
	v = HSBPF_PY_FRAME(code, off | (entry ? HSBPF_PY_ENTRY : 0));
	/* 3.11+: a frame not yet past its prologue (owned by a thread, not a generator) is not
	 * Python code yet: tracebacks skip it, and so does this walk but for an entry frame,
	 * whose native evaluation loop is already on the stack (3.12+: a group left empty
	 * keeps it, py_close_group) */
	if (w->off.code_firsttraceable != HSBPF_PY_ABSENT && owner != 1 && !entry &&
	    (before || off < 256)) {
		if (bpf_probe_read_user(&first, sizeof(first), (const void *)(code + w->off.code_firsttraceable)))
			first = 0;
		if (before || off < (__u64)first) {
			if (w->nr == w->group)
				w->pending = v;
			return 0;
		}
	}
	py_push(w, v);
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
	w->group = 0;
	w->pending = 0;
	w->read_len = py_read_len(&w->off);
	w->code_type = p->code_type;
	/* 3.10 marks no entry frame: every frame is run by a call of its own */
	w->all_entry = w->off.frame_is_entry == HSBPF_PY_ABSENT &&
		       w->off.owned_by_cstack == HSBPF_PY_ABSENT;
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

/* a code object's name and file objects: one read where they are at most 16 bytes apart (a
 * field apart in every version), else two */
static __always_inline void py_code_ident(const struct py_walk *w, __u64 code, struct py_code_seen *id)
{
	__u16 name = w->off.code_qualname != HSBPF_PY_ABSENT ? w->off.code_qualname : w->off.code_name;
	__u16 file = w->off.code_filename, lo = name < file ? name : file;
	__u64 buf[4] = {};

	if (name != HSBPF_PY_ABSENT && file != HSBPF_PY_ABSENT && (name > file ? name - file : file - name) <= 16 &&
	    !bpf_probe_read_user(buf, 24, (const void *)(code + lo))) {
		id->name = buf[((name - lo) >> 3) & 3];
		id->file = buf[((file - lo) >> 3) & 3];
		return;
	}
	py_read(&id->name, code, name);
	py_read(&id->file, code, file);
}

/* a new stack's frame: its code object announced if it is new to the process, or another
 * one than the process's last announced at its address (another name or file object: the
 * next generation); the frame given its code object's generation, and mixed into the stack's hash
 * again (stack_push's) */
static long py_announce_one(__u64 i, void *ctx)
{
	__u32 zero = 0;
	struct stack_walk *st = bpf_map_lookup_elem(&unwind_scratch, &zero);
	struct py_walk *w = bpf_map_lookup_elem(&py_scratch, &zero);
	struct py_code_key k = { .pid = (__u32)(bpf_get_current_pid_tgid() >> 32) };
	struct py_code_seen now = {}, *seen;
	struct hsbpf_py_code_event *e;
	__u64 v, nv;

	if (!st || !w || i >= st->user.nr)
		return 1;
	v = st->user.ip[i & (HSBPF_MAX_FRAMES - 1)];
	if (!HSBPF_PY_IS_FRAME(v))
		goto mix;
	k.code = HSBPF_PY_CODE(v);
	py_code_ident(w, k.code, &now);
	seen = bpf_map_lookup_elem(&py_seen, &k);
	if (seen && seen->name == now.name && seen->file == now.file) {
		now.gen = seen->gen;
		goto regen;
	}
	if (seen)
		now.gen = seen->gen + 1 < HSBPF_PY_GENS ? seen->gen + 1 : 0;
	e = bpf_ringbuf_reserve(&py_codes, sizeof(*e), 0);
	if (!e) {
		/* announced by the next new stack that has it, under the same generation (py_seen
		 * still holds the one before) */
		stack_stat_add(HSBPF_STACK_STAT_PY_CODES_LOST, 1);
		goto regen;
	}
	e->pid = k.pid;
	e->gen = now.gen;
	e->code = k.code;
	bpf_ringbuf_submit(e, 0);
	bpf_map_update_elem(&py_seen, &k, &now, BPF_ANY);
regen:
	nv = HSBPF_PY_WITH_GEN(v, now.gen & 7);
	if (nv != v) {
		st->user.ip[i & (HSBPF_MAX_FRAMES - 1)] = nv;
		w->regen = 1;
		v = nv;
	}
mix:
	w->rehash = stack_mix(w->rehash, v);
	return 0;
}

/* the code objects of a user stack about to be stored for the first time (st->user),
 * announced, and its frames given their generations: true when some frame's changed, the
 * stack's new hash (as unwind_user computes it) in *hash */
static __always_inline bool python__announce(struct stack_walk *st, __u64 *hash)
{
	__u32 zero = 0;
	struct py_walk *w;

	if (!st->py)
		return false;
	w = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!w)
		return false;
	w->rehash = 0x243F6A8885A308D3ull;
	w->regen = 0;
	bpf_loop(HSBPF_MAX_FRAMES, py_announce_one, NULL, 0);
	if (!w->regen)
		return false;
	*hash = stack_mix(w->rehash, (__u64)st->user.end << 32 | st->user.nr) | 1;
	return true;
}

#endif /* HSBPF_PYTHON_BPF_H */
