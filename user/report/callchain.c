// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Call stacks resolved, summed and drawn: completeness, folded stacks, report's graphs. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "record/call_graph.h"
#include "report/callchain.h"
#include "record/memory.h"
#include "symbols/inline.h"
#include "report/hist.h"
#include "lib/hashidx.h"
#include "report/pyself.h"
#include "lib/json_writer.h"
#include "record/offcpu.h"

static const char *const end_names[HSBPF_STACK_NR] = {
	[HSBPF_STACK_COMPLETE] = "complete",
	[HSBPF_STACK_NO_USER] = "no user stack",
	[HSBPF_STACK_NO_MAPPING] = "no mapping",
	[HSBPF_STACK_NO_INFO] = "no unwind info",
	[HSBPF_STACK_UNSUPPORTED] = "unsupported rule",
	[HSBPF_STACK_UNREADABLE] = "unreadable memory",
	[HSBPF_STACK_DEPTH] = "depth",
	[HSBPF_STACK_LOOP] = "loop",
	[HSBPF_STACK_FP_END] = "frame pointers",
	[HSBPF_STACK_IN_EXEC] = "in exec",
	[HSBPF_STACK_EH_INSTALL] = "exception dispatch",
};

const char *callchain__end_name(u32 end)
{
	if (end == PROFILE_STACK_LOST)
		return "stack map full";
	return end < HSBPF_STACK_NR ? end_names[end] : "unknown";
}

void callchain__ends(const struct profile *p, struct callchain_ends *e)
{
	memset(e, 0, sizeof(*e));
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		const struct profile_stack *u = profile__stack(p, ss->user);

		e->samples += ss->count;
		/* filtered: the frames of the samples kept (the stats count all of them) */
		if (p->filtered && u && u->end != PROFILE_STACK_LOST) {
			e->frames += (u64)u->nr * ss->count;
			e->fp_frames += (u64)u->nr_fp * ss->count;
		}
		if (!u)
			e->by_end[HSBPF_STACK_NO_USER] += ss->count;
		else if (u->end == PROFILE_STACK_LOST)
			e->lost += ss->count;
		else if (u->end < HSBPF_STACK_NR)
			e->by_end[u->end] += ss->count;
	}
	if (!p->filtered) {
		e->frames = p->stats.stack_frames;
		e->fp_frames = p->stats.stack_fp_frames;
	}
}

/* what the stacks' counts are: samples, off-CPU microseconds, or a memory view's bytes or
 * objects */
enum amount_kind { AMOUNT_SAMPLES, AMOUNT_TIME, AMOUNT_BYTES, AMOUNT_OBJECTS };

/* n as its kind says: "N samples" (unit after it), "N ms", "N MiB", "N objects" */
static void print_amount(FILE *out, u64 n, const char *unit, enum amount_kind kind)
{
	char buf[32];

	switch (kind) {
	case AMOUNT_TIME:
		fprintf(out, "%.3f ms", n / 1e3);
		break;
	case AMOUNT_BYTES:
		fputs(memory__bytes(n, buf, sizeof(buf)), out);
		break;
	case AMOUNT_OBJECTS:
		fprintf(out, "%" PRIu64 " objects", n);
		break;
	default:
		fprintf(out, "%" PRIu64 "%s", n, unit);
	}
}

void callchain__print_ends(const struct profile *p, const char *prefix, FILE *out)
{
	const struct call_graph *cg = call_graph__find(p->meta.call_graph);
	/* the counts kept apart from the samples cannot follow a filter: said to be the whole's */
	const char *whole = p->filtered ? " (in the whole profile)" : "";
	enum amount_kind kind = p->meta.offcpu[0] ? AMOUNT_TIME :
				     !memory__in_profile(p) ? AMOUNT_SAMPLES :
				     strstr(p->meta.memory_view, "space") ? AMOUNT_BYTES : AMOUNT_OBJECTS;
	struct callchain_ends e;
	u64 user;
	bool first = true;

	callchain__ends(p, &e);
	if (!e.samples)
		return;
	/* kernel threads and idle have no user stack to complete, nor has a process in its exec
	 * once its old memory is gone and before its new program has run */
	user = e.samples - e.by_end[HSBPF_STACK_NO_USER] - e.by_end[HSBPF_STACK_IN_EXEC];
	fprintf(out, "%sstacks (%s): ", prefix, p->meta.call_graph[0] ? p->meta.call_graph : "imported");
	print_amount(out, e.samples, " samples", kind);
	if (e.by_end[HSBPF_STACK_IN_EXEC]) {
		fputs(" (", out);
		print_amount(out, e.by_end[HSBPF_STACK_IN_EXEC], "", kind);
		fputs(" in exec, no user stack yet)", out);
	}
	if (user) {
		fputs(", ", out);
		print_amount(out, user, "", kind);
		fprintf(out, " with a user stack: complete %.1f%%", 100.0 * e.by_end[HSBPF_STACK_COMPLETE] / user);
		for (u32 i = 0; i < HSBPF_STACK_NR; i++) {
			if (i == HSBPF_STACK_COMPLETE || i == HSBPF_STACK_NO_USER || i == HSBPF_STACK_IN_EXEC ||
			    !e.by_end[i])
				continue;
			fprintf(out, "%s %s %.1f%%", first ? "; truncated:" : ",", end_names[i],
				100.0 * e.by_end[i] / user);
			first = false;
		}
		if (e.lost)
			fprintf(out, "%s stack map full %.1f%%", first ? "; truncated:" : ",",
				100.0 * e.lost / user);
	}
	/* frame pointers are news only where the mode unwinds by tables (or is not known) */
	if (e.fp_frames && (!cg || cg->unwind_tables))
		fprintf(out, "; %.1f%% of user frames by frame pointer (no table)",
			100.0 * e.fp_frames / (e.frames ? e.frames : 1));
	fputc('\n', out);
	if (p->stats.stack_late_unwound)
		fprintf(out, "%s%" PRIu64 " stacks were unwound in user space from a copy of the stack: their "
			"program's tables were not in the kernel yet (its first milliseconds)%s\n", prefix,
			p->stats.stack_late_unwound, whole);
	if (p->stats.stack_late_full || p->stats.stack_late_dropped)
		fprintf(out, "%sWARNING: %" PRIu64 " stacks the kernel could not unwind yet were not copied "
			"(the ring full: %" PRIu64 ", past what is kept: %" PRIu64 "): they end \"no mapping\"%s\n",
			prefix, p->stats.stack_late_full + p->stats.stack_late_dropped, p->stats.stack_late_full,
			p->stats.stack_late_dropped, whole);
	if (p->stats.py_cut || p->stats.py_bad)
		fprintf(out, "%s%" PRIu64 " Python stacks were cut: %" PRIu64 " at %d frames, %" PRIu64 " at "
			"unreadable memory or a loop (docs/python.md)%s\n", prefix,
			p->stats.py_cut + p->stats.py_bad, p->stats.py_cut, HSBPF_PY_MAX_FRAMES, p->stats.py_bad,
			whole);
	if (p->stats.py_unnamed)
		fprintf(out, "%s%" PRIu64 " Python frames are [unknown]: their process gone before they "
			"were read, or their code object's address reused (%" PRIu64 " addresses; "
			"docs/python.md)%s\n", prefix,
			p->stats.py_unnamed, p->stats.py_reused, whole);
	if (p->stats.py_gens)
		fprintf(out, "%s%" PRIu64 " Python code objects took the address of a freed one: named "
			"apart (docs/python.md)%s\n", prefix, p->stats.py_gens, whole);
	if (p->stats.stacks_full)
		fprintf(out, "%sWARNING: the kernel could not store %" PRIu64 " stacks (the stack map "
			"full, or its bucket busy): their samples are kept without frames (raise "
			"--map-entries if full)%s\n", prefix, p->stats.stacks_full, whole);
	if (p->stats.stack_keys_full)
		fprintf(out, "%sWARNING: %" PRIu64 " samples are in the flat profile but not in the call "
			"graphs: the stack-sample map was full (raise --map-entries)%s\n", prefix,
			p->stats.stack_keys_full, whole);
	if (p->stats.unwind_objects_full || p->stats.unwind_map_full)
		fprintf(out, "%sWARNING: the unwind tables were full: %" PRIu64 " objects and %" PRIu64
			" mappings are unwound by frame pointers%s\n", prefix, p->stats.unwind_objects_full,
			p->stats.unwind_map_full, whole);
}

/* ---- resolving ---- */

/* what resolving a frame's address depends on: a kernel frame's and an object frame's
 * (format 1.11) address alone, another user frame's process image and mappings too */
struct frame_key {
	u64 ip, exec_ns, map_ns;
	u32 pid;
	bool kernel, return_address;
};

/* the frames add_frame made for a key: memo.f[first, first + nr) (not cc->frames', which
 * a Python group's placement reorders) */
struct frame_memo_entry {
	struct frame_key k;
	u32 first, nr;
};

struct frame_memo {
	struct hashidx idx;
	struct frame_memo_entry *e;
	size_t nr, cap;
	struct callchain_frame *f;
	size_t nr_f, cap_f;
};

static bool same_frame_key(const void *key, u32 pos, void *ctx)
{
	const struct frame_key *a = key, *b = &((const struct frame_memo *)ctx)->e[pos].k;

	return a->ip == b->ip && a->exec_ns == b->exec_ns && a->map_ns == b->map_ns &&
	       a->pid == b->pid && a->kernel == b->kernel && a->return_address == b->return_address;
}

static void frame_memo__free(struct frame_memo *m)
{
	if (!m)
		return;
	hashidx__free(&m->idx);
	free(m->e);
	free(m->f);
	free(m);
}

/* the frames of an address resolved: r's inlined functions, innermost first, then its own,
 * into memo.f; 0 or -ENOMEM */
static int resolve_frames(struct callchain *cc, struct symbolizer *sy, const struct sym_result *r,
			  u64 ip, bool kernel, bool return_address)
{
	struct frame_memo *m = cc->memo;
	u32 res = cc->nr_res;
	/* a live profile's string table moves as it grows: names copied (callchain__new_live) */
	const char *sym = cc->stable_names && r->sym ? symbolizer__intern(sy, r->sym) : r->sym;
	const char *dso = cc->stable_names && r->dso ? symbolizer__intern(sy, r->dso) : r->dso;

	if ((r->sym && !sym) || (r->dso && !dso) ||
	    array__reserve((void **)&m->f, &m->cap_f, m->nr_f + 1 + r->nr_inl, sizeof(*m->f)) ||
	    array__reserve((void **)&cc->res, &cc->cap_res, cc->nr_res + 1, sizeof(*cc->res)))
		return -ENOMEM;
	cc->res[cc->nr_res++] = *r;
	/* functions inlined at ip come first, innermost first, as frames of their own */
	for (int i = 0; i < r->nr_inl; i++) {
		char *name = NULL;
		const char *n;

		if (asprintf(&name, "%s (inlined)", r->inl[i].name) < 0)
			return -ENOMEM;
		n = symbolizer__intern(sy, name);
		free(name);
		if (!n)
			return -ENOMEM;
		m->f[m->nr_f] = (struct callchain_frame){
			.sym = n, .dso = dso, .ip = ip, .kernel = kernel, .res = res,
			.src = m->nr_f, .return_address = return_address, .row = UINT32_MAX,
			.inlined = true,
		};
		m->nr_f++;
	}
	m->f[m->nr_f] = (struct callchain_frame){
		.sym = sym, .dso = dso, .ip = ip, .kernel = kernel,
		.return_address = return_address, .vaddr = r->vaddr, .res = res, .src = m->nr_f,
		.row = UINT32_MAX,	/* in no row until callchain__attach puts it in one */
	};
	m->nr_f++;
	return 0;
}

/* the frames (functions inlined at ip, then ip's) of one address, resolved at its first
 * sight and copied after (a machine's profile has ~20 frames in a stack, a few thousand
 * distinct addresses under hundreds of thousands of frames) */
static int add_frame(struct callchain *cc, struct symbolizer *sy, const struct callchain_stack *st,
		     u64 ip, bool kernel, bool return_address)
{
	bool shared = kernel || PROFILE_IS_OBJ_FRAME(ip);
	struct frame_key k = {
		.ip = ip, .kernel = kernel, .return_address = return_address,
		.pid = shared ? 0 : st->pid, .exec_ns = shared ? 0 : st->exec_ns,
		.map_ns = shared ? 0 : st->map_ns,
	};
	struct frame_memo *m = cc->memo;
	u64 hash = hashidx__hash(&k.ip, sizeof(k.ip), hashidx__hash_u64(k.exec_ns ^ k.map_ns,
				 (u64)k.pid << 2 | (u64)k.kernel << 1 | k.return_address));
	s64 pos = hashidx__find(&m->idx, hash, &k, same_frame_key, m);
	const struct frame_memo_entry *e;

	if (pos < 0) {
		struct profile_sample s = {
			.pid = st->pid, .flags = kernel ? HSBPF_KEY_KERNEL : 0,
			.cgroup_id = st->cgroup_id, .exec_ns = st->exec_ns, .map_ns = st->map_ns,
			/* a return address may be the first byte of the next function: look
			 * up the call */
			.ip = return_address && ip ? ip - 1 : ip,
		};
		struct sym_result r;
		u32 first = m->nr_f;

		symbolizer__resolve(sy, &s, &r);
		if (array__reserve((void **)&m->e, &m->cap, m->nr + 1, sizeof(*m->e)) ||
		    resolve_frames(cc, sy, &r, ip, kernel, return_address) ||
		    hashidx__insert(&m->idx, hash, m->nr))
			return -ENOMEM;
		pos = m->nr;
		m->e[m->nr++] = (struct frame_memo_entry){ k, first, m->nr_f - first };
	}
	e = &m->e[pos];
	if (array__reserve((void **)&cc->frames, &cc->cap_frames, cc->nr_frames + e->nr,
			   sizeof(*cc->frames)))
		return -ENOMEM;
	memcpy(cc->frames + cc->nr_frames, m->f + e->first, e->nr * sizeof(*cc->frames));
	cc->nr_frames += e->nr;
	return 0;
}

/* frames [0, a) and [a, a + b) swapped, each keeping its order */
static void rotate_frames(struct callchain_frame *f, size_t a, size_t b)
{
	for (size_t k = 0; k < b; k++) {
		struct callchain_frame t = f[a + k];

		memmove(&f[k + 1], &f[k], (a) * sizeof(*f));
		f[k] = t;
	}
}

static int cmp_func(const struct callchain_frame *a, const struct callchain_frame *b)
{
	int c = (int)a->kernel - (int)b->kernel;

	if (!c)
		c = strcmp(a->sym ? a->sym : "", b->sym ? b->sym : "");
	if (!c)
		c = strcmp(a->dso ? a->dso : "", b->dso ? b->dso : "");
	return c;
}

static const struct callchain_frame *sort_frames;

static int cmp_frame_idx(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;
	int c = cmp_func(&sort_frames[x], &sort_frames[y]);

	return c ? c : x < y ? -1 : x > y;
}

/* frames with the same name pointers (the symbolizer interns them) are one function at once */
static bool same_names(const void *key, u32 pos, void *ctx)
{
	const struct callchain_frame *f = key, *g = &((const struct callchain_frame *)ctx)[pos];

	return f->kernel == g->kernel && f->sym == g->sym && f->dso == g->dso;
}

/* the same id for frames of the same function, ids in the order of their names: the frames'
 * distinct name pointers are sorted, not every frame (a machine's profile has millions) */
static int number_funcs(struct callchain *cc)
{
	u32 *rep = malloc((cc->nr_frames + 1) * sizeof(*rep)), *idx = NULL;
	struct hashidx reps = {};
	size_t nr = 0;
	int err = -ENOMEM;

	if (!rep)
		goto out;
	/* rep[i]: the first frame with frame i's names; idx: those first frames */
	idx = malloc((cc->nr_frames + 1) * sizeof(*idx));
	if (!idx)
		goto out;
	for (size_t i = 0; i < cc->nr_frames; i++) {
		const struct callchain_frame *f = &cc->frames[i];
		u64 h = hashidx__hash_u64((uintptr_t)f->sym ^ (u64)f->kernel << 63,
					  hashidx__hash_u64((uintptr_t)f->dso, 0));
		s64 pos = hashidx__find(&reps, h, f, same_names, cc->frames);

		if (pos < 0) {
			if (hashidx__insert(&reps, h, i))
				goto out;
			idx[nr++] = i;
			pos = i;
		}
		rep[i] = pos;
	}
	sort_frames = cc->frames;
	qsort(idx, nr, sizeof(*idx), cmp_frame_idx);
	sort_frames = NULL;
	for (size_t i = 0; i < nr; i++) {
		if (i && cmp_func(&cc->frames[idx[i - 1]], &cc->frames[idx[i]]))
			cc->nr_funcs++;
		cc->frames[idx[i]].func = cc->nr_funcs;
	}
	if (nr)
		cc->nr_funcs++;
	for (size_t i = 0; i < cc->nr_frames; i++)
		cc->frames[i].func = cc->frames[rep[i]].func;
	err = 0;
out:
	free(rep);
	free(idx);
	hashidx__free(&reps);
	return err;
}

/* the waker of stack sample i, resolved into the frames after its stack's */
static int add_waker_frames(struct callchain *cc, struct symbolizer *sy, struct callchain_stack *st,
			    const struct profile_waker *w, bool user_returns)
{
	const struct profile *p = cc->p;
	const struct profile_stack *k = profile__stack(p, w->kernel), *u = profile__stack(p, w->user);
	struct callchain_stack ws = {
		.pid = w->pid, .exec_ns = w->exec_ns, .map_ns = w->map_ns, .cgroup_id = st->cgroup_id,
	};

	st->woken = true;
	st->waker_pid = w->pid;
	st->waker_exec_ns = w->exec_ns;
	st->waker_first = cc->nr_frames;
	for (u32 j = 0; k && j < k->nr; j++)
		if (add_frame(cc, sy, &ws, profile__frames(p, k)[j], true, j > 0))
			return -ENOMEM;
	for (u32 j = 0; u && j < u->nr; j++)
		if (add_frame(cc, sy, &ws, profile__frames(p, u)[j], false, j > 0 && user_returns))
			return -ENOMEM;
	st->waker_nr = cc->nr_frames - st->waker_first;
	return 0;
}

/* a stack whose frames name the same functions in any process: a kernel stack, or a user
 * stack of objects' frames (format 1.11) */
static bool shared_stack(const struct profile *p, const struct profile_stack *st, bool kernel)
{
	for (u32 j = 0; !kernel && j < st->nr; j++)
		if (!PROFILE_IS_OBJ_FRAME(profile__frames(p, st)[j]))
			return false;
	return true;
}

/* the frames a shared stack was resolved to once (cc->frames[first, first + nr)), copied */
struct resolved {
	u32 first, nr;
	bool done;
};

static int reuse(struct callchain *cc, const struct resolved *r)
{
	if (array__reserve((void **)&cc->frames, &cc->cap_frames, cc->nr_frames + r->nr + 1,
			   sizeof(*cc->frames)))
		return -ENOMEM;
	memcpy(cc->frames + cc->nr_frames, cc->frames + r->first, r->nr * sizeof(*cc->frames));
	cc->nr_frames += r->nr;
	return 0;
}

/* the memo's frames are not needed past callchain__new: their number is */
static void callchain__done_adding(struct callchain *cc)
{
	cc->nr_src = cc->memo->nr_f;
	frame_memo__free(cc->memo);
	cc->memo = NULL;
}

/* room for the stacks' frames at once (a machine's minute has close to a million: grown
 * by doubling, they were copied again and again); inlined functions add to it */
static int reserve_frames(struct callchain *cc)
{
	const struct profile *p = cc->p;
	size_t n = 0;

	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		const struct profile_stack *k = profile__stack(p, ss->kernel);
		const struct profile_stack *u = profile__stack(p, ss->user);

		n += (k ? k->nr : 0) + (u ? u->nr : 0);
	}
	/* and an eighth for the functions inlined at them and the wakers' frames (1% in a
	 * machine's minute); every one written before it is read: not zeroed as
	 * array__reserve's are */
	n += n / 8 + 16;
	cc->frames = malloc(n * sizeof(*cc->frames));
	if (!cc->frames)
		return -ENOMEM;
	cc->cap_frames = n;
	return 0;
}

static struct callchain *new_chain(const struct profile *p, struct symbolizer *sy, bool stable)
{
	const struct call_graph *cg = call_graph__find(p->meta.call_graph);
	bool user_returns = !cg || cg->return_addresses;	/* imported: perf's are */
	struct callchain *cc = calloc(1, sizeof(*cc));
	/* each shared stack resolved once, as a kernel's ([0]) or a user's ([1]) */
	struct resolved *res = calloc(2 * (p->nr_stacks + 1), sizeof(*res));

	if (!cc || !res)
		goto nomem;
	cc->p = p;
	cc->stable_names = stable;
	cc->memo = calloc(1, sizeof(*cc->memo));
	if (!cc->memo)
		goto nomem;
	cc->stacks = calloc(p->nr_stack_samples + 1, sizeof(*cc->stacks));
	if (!cc->stacks || reserve_frames(cc))
		goto nomem;
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		const struct profile_stack *k = profile__stack(p, ss->kernel), *u = profile__stack(p, ss->user);
		struct callchain_stack *st = &cc->stacks[cc->nr_stacks++];
		struct resolved *rk = k ? &res[2 * (ss->kernel - 1)] : NULL;
		struct resolved *ru = u && shared_stack(p, u, false) ? &res[2 * (ss->user - 1) + 1] : NULL;
		size_t ufirst;

		*st = (struct callchain_stack){
			.sample = i, .first = cc->nr_frames, .count = ss->count, .weight = ss->weight,
			.pid = ss->pid, .exec_ns = ss->exec_ns, .map_ns = ss->map_ns,
			.cgroup_id = ss->cgroup_id, .flags = ss->flags,
		};
		if (rk && rk->done) {
			if (reuse(cc, rk))
				goto nomem;
			k = NULL;
		}
		for (u32 j = 0; k && j < k->nr; j++)
			if (add_frame(cc, sy, st, profile__frames(p, k)[j], true, j > 0))
				goto nomem;
		if (k)
			*rk = (struct resolved){ st->first, cc->nr_frames - st->first, true };
		ufirst = cc->nr_frames;
		if (ru && ru->done) {
			if (reuse(cc, ru))
				goto nomem;
			u = NULL;
		}
		/* a sample in the kernel: the user stack's first frame is where it entered; a
		 * Python frame (docs/python.md) is an instruction's offset, never a return address */
		for (u32 j = 0, py = 0; u && j < u->nr; j++) {
			u64 ip = profile__frames(p, u)[j];
			size_t at = cc->nr_frames;

			if (add_frame(cc, sy, st, ip, false, j > 0 && user_returns && !HSBPF_PY_IS_FRAME(ip)))
				goto nomem;
			if (HSBPF_PY_IS_FRAME(ip)) {
				py = py ? py : at + 1;
				continue;
			}
			/* the evaluation loop's frame after its Python frames: the functions inlined
			 * at its pc were called by the Python code, so they go before it */
			if (py && cc->nr_frames - at > 1 &&
			    !strcmp(cc->frames[cc->nr_frames - 1].sym, PYSELF_EVAL_LOOP))
				rotate_frames(cc->frames + py - 1, at - (py - 1), cc->nr_frames - 1 - at);
			py = 0;
		}
		if (u && ru)
			*ru = (struct resolved){ ufirst, cc->nr_frames - ufirst, true };
		st->nr = cc->nr_frames - st->first;
		/* the loop's own time is its innermost Python frame's (after the functions inlined
		 * at the loop's pc, which go before it) */
		for (u32 j = 0; pyself__leaf(p, ss) && j < st->nr; j++) {
			if (HSBPF_PY_IS_FRAME(cc->frames[st->first + j].ip)) {
				st->self = j;
				break;
			}
		}
		if (profile__stack_sample_waker(p, i) &&
		    add_waker_frames(cc, sy, st, profile__stack_sample_waker(p, i), user_returns))
			goto nomem;
		cc->total += ss->count;
	}
	if (number_funcs(cc))
		goto nomem;
	free(res);
	callchain__done_adding(cc);
	return cc;
nomem:
	free(res);
	callchain__free(cc);
	errno = ENOMEM;
	return NULL;
}

struct callchain *callchain__new(const struct profile *p, struct symbolizer *sy)
{
	return new_chain(p, sy, false);
}

struct callchain *callchain__new_live(const struct profile *p, struct symbolizer *sy)
{
	return new_chain(p, sy, true);
}

struct callchain *callchain__new_flat(const struct profile *p, struct symbolizer *sy)
{
	struct callchain *cc = calloc(1, sizeof(*cc));

	if (!cc)
		goto nomem;
	cc->p = p;
	cc->memo = calloc(1, sizeof(*cc->memo));
	if (!cc->memo)
		goto nomem;
	cc->stacks = calloc(p->nr_samples + 1, sizeof(*cc->stacks));
	if (!cc->stacks)
		goto nomem;
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct profile_sample *ps = &p->samples[i];
		struct callchain_stack *st = &cc->stacks[cc->nr_stacks++];

		*st = (struct callchain_stack){
			.sample = i, .first = cc->nr_frames, .nr = 1, .count = ps->count,
			.weight = ps->weight, .pid = ps->pid, .exec_ns = ps->exec_ns,
			.map_ns = ps->map_ns, .cgroup_id = ps->cgroup_id, .flags = ps->flags,
		};
		if (add_frame(cc, sy, st, ps->ip, ps->flags & HSBPF_KEY_KERNEL, false))
			goto nomem;
		cc->total += ps->count;
	}
	if (number_funcs(cc))
		goto nomem;
	callchain__done_adding(cc);
	return cc;
nomem:
	callchain__free(cc);
	errno = ENOMEM;
	return NULL;
}

void callchain__free(struct callchain *cc)
{
	if (!cc)
		return;
	frame_memo__free(cc->memo);
	free(cc->res);
	free(cc->frames);
	free(cc->stacks);
	free(cc->row_first);
	free(cc->row_stacks);
	free(cc->row_leaf);
	free(cc->row_root);
	free(cc->frame_funcs);
	free(cc->func_frames);
	free(cc);
}

/* ---- folded stacks ---- */

static const char *comm_of(const struct callchain_stack *st,
			   struct symbolizer *sy)
{
	const char *c = symbolizer__comm(sy, st->pid, st->exec_ns);

	return c && *c ? c : "[unknown]";
}

/* a frame's name in folded stacks, escaped as every other format escapes names (control
 * characters, a newline too, as \xNN: str__escape) and with the frame separator ';' as \x3b,
 * so that a stack is one line of frames whatever the names; kernel frames marked; whole,
 * however long (C++ template names run to thousands of characters) */
static void put_folded(const char *s, FILE *out)
{
	for (const unsigned char *c = (const unsigned char *)s; *c;) {
		size_t n = str__printable_len(c);

		if (*c == ';')
			fputs("\\x3b", out);
		else if (n)
			fwrite(c, 1, n, out);
		else
			fprintf(out, "\\x%02x", *c);
		c += n ? n : 1;
	}
}

static void put_frame_name(const struct callchain_frame *f, FILE *out)
{
	if (f->sym && strcmp(f->sym, "[unknown]")) {
		put_folded(f->sym, out);
	} else {
		fputs("[unknown] (", out);
		put_folded(f->dso ? path__base(f->dso) : "?", out);
		fputc(')', out);
	}
	if (f->kernel)
		fputs("_[k]", out);
}

const char *callchain__waker_comm(const struct callchain_stack *st, struct symbolizer *sy)
{
	const char *c = st->waker_pid ? symbolizer__comm(sy, st->waker_pid, st->waker_exec_ns) : NULL;

	if (!st->waker_pid)
		return "[irq]";
	return c && *c ? c : "[unknown]";
}

char *callchain__waker_folded(const struct callchain *cc, const struct callchain_stack *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	for (u32 j = 0; j < st->waker_nr; j++) {
		if (j)
			fputc(';', m);
		put_frame_name(&cc->frames[st->waker_first + j], m);
	}
	if (fclose(m)) {
		free(buf);
		errno = ENOMEM;
		return NULL;
	}
	return buf;
}

struct folded_line {
	char *text;
	u64 count;
};

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->text, ((const struct folded_line *)b)->text);
}

int callchain__print_folded(const struct callchain *cc, FILE *out)
{
	struct folded_line *lines = calloc(cc->nr_stacks + 1, sizeof(*lines));
	struct symbolizer *sy = symbolizer__new(cc->p);
	size_t n = 0;
	int err = -ENOMEM;

	if (!lines || !sy)
		goto cleanup;
	for (size_t i = 0; i < cc->nr_stacks; i++) {
		const struct callchain_stack *st = &cc->stacks[i];
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);

		if (!m)
			goto cleanup;
		put_frame_name(&(struct callchain_frame){ .sym = comm_of(st, sy) }, m);
		for (u32 j = st->nr; j-- > 0;) {
			fputc(';', m);
			put_frame_name(&cc->frames[st->first + j], m);
		}
		/* offwaketime's: the waker's stack above a "--", its wake-up first */
		if (st->woken) {
			fputs(";--", m);
			for (u32 j = 0; j < st->waker_nr; j++) {
				fputc(';', m);
				put_frame_name(&cc->frames[st->waker_first + j], m);
			}
			fputc(';', m);
			put_frame_name(&(struct callchain_frame){ .sym = callchain__waker_comm(st, sy) }, m);
		}
		if (fclose(m))
			goto cleanup;
		lines[n++] = (struct folded_line){ .text = buf, .count = st->count };
	}
	qsort(lines, n, sizeof(*lines), cmp_line);
	for (size_t i = 0; i < n; i++) {
		u64 count = lines[i].count;

		while (i + 1 < n && !strcmp(lines[i].text, lines[i + 1].text))
			count += lines[++i].count;
		fprintf(out, "%s %" PRIu64 "\n", lines[i].text, count);
	}
	err = 0;
cleanup:
	for (size_t i = 0; lines && i < n; i++)
		free(lines[i].text);
	free(lines);
	symbolizer__free(sy);
	if (err)
		error("cannot fold stacks: %s", strerror(-err));
	return err;
}

/* ---- report's graphs ---- */

int callchain__attach(struct callchain *cc, struct hist *h, struct symbolizer *sy, bool children)
{
	const struct profile *p = cc->p;
	/* where every frame of an address falls in the same row, its row once (row + 1) */
	u32 *row_of = hist__keyed_by_frame(h) ? calloc(cc->nr_src + 1, sizeof(*row_of)) : NULL;
	u32 *seen = NULL;
	size_t cap = 0;
	int err = 0;

	for (size_t i = 0; i < cc->nr_stacks && !err; i++) {
		const struct callchain_stack *st = &cc->stacks[i];
		const struct profile_stack_sample *ss = &p->stack_samples[st->sample];
		struct profile_sample ps = {
			.pid = ss->pid, .cgroup_id = ss->cgroup_id, .exec_ns = ss->exec_ns,
			.map_ns = ss->map_ns,
		};
		struct hist_sample ctx;
		size_t nr_seen = 0;

		/* the sample's fields, the same for each of its frames */
		hist__sample_context(&ctx, p, &ps, profile__stack_sample_key(p, st->sample), sy);
		ctx.state = offcpu__state(ss->flags);	/* every frame's: the block's */
		for (u32 j = 0; j < st->nr && !err; j++) {
			struct callchain_frame *f = &cc->frames[st->first + j];
			struct hist_sample s;
			bool dup = false;
			s64 row;

			/* only the row of the frame the sample's own time is in, without children: no
			 * row is made for a caller */
			if (!children && j < st->self)
				continue;
			if (!children && j > st->self)
				break;
			hist__sample_frame(&s, &ctx, &cc->res[f->res]);
			/* in the Children view an inlined function is a row of its own, with children
			 * and no self, as perf shows "msort_with_tmp (inlined)" */
			if (children && f->inlined) {
				s.r.sym = f->sym;
				s.r.sym_off = 0;
				s.r.inl = NULL;
				s.r.nr_inl = 0;
			}
			if (row_of && row_of[f->src]) {
				row = hist__add_to_row(h, row_of[f->src] - 1, &s);
			} else {
				row = hist__add_row(h, &s);
				if (row_of && row >= 0)
					row_of[f->src] = row + 1;
			}
			if (row == -ENOENT)
				continue;	/* filtered out: in no row */
			if (row < 0) {
				err = row;
				break;
			}
			f->row = h->rows[row].id;
			if (!children)
				break;
			/* a function's samples once per stack, however deep its recursion */
			for (size_t k = 0; k < nr_seen && !dup; k++)
				dup = seen[k] == (u32)row;
			if (dup)
				continue;
			if (array__reserve((void **)&seen, &cap, nr_seen + 1, sizeof(*seen))) {
				err = -ENOMEM;
				break;
			}
			seen[nr_seen++] = row;
			h->rows[row].children += st->count;
		}
	}
	free(seen);
	free(row_of);
	if (err)
		error("cannot build call graphs: %s", strerror(-err));
	return err;
}

struct node {
	u32 func;
	u32 first_child, next;	/* node + 1; 0 for none */
	u32 parent;
	u64 count;
};

struct tree {
	struct node *nodes;
	size_t nr, cap;
};

static s64 tree_child(struct tree *t, u32 parent, u32 func)
{
	u32 *link = &t->nodes[parent].first_child;

	for (u32 c = *link; c; c = t->nodes[c - 1].next) {
		if (t->nodes[c - 1].func == func)
			return c - 1;
		link = &t->nodes[c - 1].next;
	}
	if (array__reserve((void **)&t->nodes, &t->cap, t->nr + 1, sizeof(*t->nodes)))
		return -ENOMEM;
	t->nodes[t->nr] = (struct node){ .func = func, .parent = parent };
	/* the array may have moved: find the link again */
	link = &t->nodes[parent].first_child;
	while (*link)
		link = &t->nodes[*link - 1].next;
	*link = t->nr + 1;
	return t->nr++;
}

static const struct callchain_frame **func_frames;	/* a frame of each function, for names */

static int cmp_node_count(const void *a, const void *b, void *ctx)
{
	const struct node *n = ctx;
	u64 x = n[*(const u32 *)a].count, y = n[*(const u32 *)b].count;

	return x > y ? -1 : x < y;
}

static void print_name(const struct callchain_frame *f, FILE *out)
{
	if (f->sym && strcmp(f->sym, "[unknown]")) {
		str__fputs_escaped(f->sym, out);
		return;
	}
	fputs("[unknown] (", out);
	str__fputs_escaped(f->dso ? path__base(f->dso) : "?", out);
	fputc(')', out);
}

/* the children of node n over the limit (a share of total), most samples first (malloc'd;
 * NULL when none) */
static u32 *shown_children(const struct tree *t, u32 n, u64 total, double limit, u32 *nr)
{
	u32 *kids = NULL, cap = 0;

	*nr = 0;
	for (u32 c = t->nodes[n].first_child; c; c = t->nodes[c - 1].next) {
		if (100.0 * t->nodes[c - 1].count / total < limit)
			continue;
		if (*nr == cap) {
			u32 *k = realloc(kids, (cap = cap ? 2 * cap : 8) * sizeof(*kids));

			if (!k)
				break;	/* out of memory: fewer branches, said by the caller's total */
			kids = k;
		}
		kids[(*nr)++] = c - 1;
	}
	if (*nr > 1)
		qsort_r(kids, *nr, sizeof(*kids), cmp_node_count, t->nodes);
	return kids;
}

/* recursion only where the tree branches: a chain (one caller with all the samples, as a
 * 200-deep recursion is) goes on in a loop, so the stack stays small. Shares are of total,
 * or of the parent's samples when relative (fractal) */
static void print_node(const struct tree *t, u32 n, const char *prefix, u64 total, bool relative,
		       double limit, FILE *out)
{
	char sub[1024];
	u32 nr, *kids;

	for (;;) {
		kids = shown_children(t, n, relative ? t->nodes[n].count : total, limit, &nr);
		if (nr != 1 || t->nodes[kids[0]].count != t->nodes[n].count)
			break;
		fputs(prefix, out);
		print_name(func_frames[t->nodes[kids[0]].func], out);
		fputc('\n', out);
		n = kids[0];
		free(kids);
	}
	for (u32 i = 0; i < nr; i++) {
		const struct node *k = &t->nodes[kids[i]];
		bool last = i == nr - 1;
		char pct[32];
		int len = snprintf(pct, sizeof(pct), "--%.2f%%--", 100.0 * k->count /
				   (relative ? t->nodes[n].count : total));

		fprintf(out, "%s%s%s", prefix, last ? " " : "|", pct);
		print_name(func_frames[k->func], out);
		fputc('\n', out);
		if (strlen(prefix) + len + 2 < sizeof(sub)) {
			snprintf(sub, sizeof(sub), "%s%s%*s", prefix, last ? " " : "|", len, "");
			print_node(t, kids[i], sub, total, relative, limit, out);
		}
		if (!last)
			fprintf(out, "%s|\n", prefix);
	}
	free(kids);
}

/* the samples of the stacks that end at node n: its own less its children's */
static u64 node_ends(const struct tree *t, u32 n)
{
	u64 c = t->nodes[n].count;

	for (u32 k = t->nodes[n].first_child; k; k = t->nodes[k - 1].next)
		c -= t->nodes[k - 1].count;
	return c;
}

static int cmp_node_ends(const void *a, const void *b, void *ctx)
{
	const struct tree *t = ctx;
	u64 x = node_ends(t, *(const u32 *)a), y = node_ends(t, *(const u32 *)b);

	return x > y ? -1 : x < y;
}

/* one chain: self and the path from the root to node n, in the tree's order (self last
 * when self_last); folded on one line ("a;b;c") or flat, one frame a line */
static void print_chain(const struct tree *t, u32 n, const struct callchain_frame *self,
			bool self_last, bool folded, const char *prefix, FILE *out)
{
	u32 depth = 0, *path;

	for (u32 k = n; k; k = t->nodes[k].parent)
		depth++;
	path = malloc((depth + 1) * sizeof(*path));
	if (!path)
		return;
	for (u32 k = n, i = depth; k; k = t->nodes[k].parent)
		path[--i] = k;
	for (u32 i = 0; i <= depth; i++) {
		bool at_self = self_last ? i == depth : i == 0;
		u32 k = self_last ? i : i - 1;

		if (!folded)
			fputs(prefix, out);
		else if (i)
			fputc(';', out);
		print_name(at_self ? self : func_frames[t->nodes[path[k]].func], out);
		if (!folded)
			fputc('\n', out);
	}
	fputc('\n', out);
	free(path);
}

/* perf's flat and folded call graphs: every distinct chain over the limit, most samples first */
static void print_chains(const struct tree *t, const struct callchain_frame *self, bool self_last,
			 u64 total, const struct callchain_print_opts *o, FILE *out)
{
	bool folded = o->style == CALLCHAIN_FOLDED;
	char prefix[64];
	u32 *ends, nr = 0;

	ends = malloc(t->nr * sizeof(*ends));
	if (!ends)
		return;
	for (u32 n = 0; n < t->nr; n++)
		if (node_ends(t, n) && 100.0 * node_ends(t, n) / total >= o->percent_limit)
			ends[nr++] = n;
	qsort_r(ends, nr, sizeof(*ends), cmp_node_ends, (void *)t);
	snprintf(prefix, sizeof(prefix), "%*s", o->indent + 4, "");
	for (u32 i = 0; i < nr; i++) {
		double pct = 100.0 * node_ends(t, ends[i]) / total;

		if (folded)
			fprintf(out, "%*s%.2f%% ", o->indent, "", pct);
		else
			fprintf(out, "%*s%.2f%%\n", o->indent, "", pct);
		print_chain(t, ends[i], self, self_last, folded, prefix, out);
	}
	if (nr && folded)
		fputc('\n', out);
	free(ends);
}

/* row id -> the stacks with a frame in that row, each once and in the stacks' order (printing
 * a row's tree visited every stack: rows x stacks, most of a machine's report); -ENOMEM */
static int index_rows(struct callchain *cc)
{
	u32 nr = 0, *fill = NULL, *last = NULL;
	size_t total = 0;

	for (size_t i = 0; i < cc->nr_frames; i++)
		if (cc->frames[i].row != UINT32_MAX && cc->frames[i].row >= nr)
			nr = cc->frames[i].row + 1;
	cc->row_first = calloc(nr + 2, sizeof(*cc->row_first));
	cc->frame_funcs = malloc((cc->nr_frames + 1) * sizeof(*cc->frame_funcs));
	fill = calloc(nr + 1, sizeof(*fill));
	last = calloc(nr + 1, sizeof(*last));	/* the last stack (+ 1) counted in a row */
	if (!cc->row_first || !cc->frame_funcs || !fill || !last)
		goto nomem;
	for (size_t i = 0; i < cc->nr_frames; i++)
		cc->frame_funcs[i] = cc->frames[i].func;
	/* twice over the stacks: count, then fill; a stack's frames in one row counted once */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < cc->nr_stacks; i++) {
			const struct callchain_stack *st = &cc->stacks[i];
			const struct callchain_frame *f = &cc->frames[st->first];

			for (u32 j = 0; j < st->nr; j++) {
				u32 r = f[j].row;

				if (r == UINT32_MAX)
					continue;
				if (last[r] == i + 1) {	/* the row again, nearer the root */
					if (pass)
						cc->row_root[cc->row_first[r] + fill[r] - 1] = j;
					continue;
				}
				last[r] = i + 1;
				if (!pass) {
					cc->row_first[r + 1]++;
				} else {
					size_t x = cc->row_first[r] + fill[r]++;

					cc->row_stacks[x] = i;
					cc->row_leaf[x] = cc->row_root[x] = j;
				}
			}
		}
		if (pass)
			break;
		memset(last, 0, (nr + 1) * sizeof(*last));
		for (u32 r = 0; r < nr; r++)
			cc->row_first[r + 1] += cc->row_first[r];
		total = cc->row_first[nr];
		cc->row_stacks = malloc((total + 1) * sizeof(*cc->row_stacks));
		cc->row_leaf = malloc((total + 1) * sizeof(*cc->row_leaf));
		cc->row_root = malloc((total + 1) * sizeof(*cc->row_root));
		if (!cc->row_stacks || !cc->row_leaf || !cc->row_root)
			goto nomem;
	}
	cc->nr_row_ids = nr;
	free(fill);
	free(last);
	return 0;
nomem:
	free(fill);
	free(last);
	free(cc->row_first);
	free(cc->row_stacks);
	free(cc->row_leaf);
	free(cc->row_root);
	free(cc->frame_funcs);
	cc->row_first = cc->row_stacks = cc->row_leaf = cc->row_root = cc->frame_funcs = NULL;
	return -ENOMEM;
}

/* the separator between a woken block's frames and its waker's (report --wakers) */
static const struct callchain_frame waker_separator = { .sym = "[woken by]", .dso = "" };

/* report --wakers: the chain at node at goes on with the separator and the waker's frames,
 * the wake-up first; its last node, or -ENOMEM */
static s64 add_waker_chain(struct tree *t, const struct callchain *cc,
			   const struct callchain_stack *st, s64 at)
{
	at = tree_child(t, at, cc->nr_funcs);
	for (u32 j = 0; at >= 0 && j < st->waker_nr; j++) {
		t->nodes[at].count += st->count;
		at = tree_child(t, at, cc->frames[st->waker_first + j].func);
	}
	if (at >= 0)
		t->nodes[at].count += st->count;
	return at;
}

void callchain__print_tree(struct callchain *cc, const struct hist *h, size_t row,
			   const struct callchain_print_opts *o, FILE *out)
{
	struct tree t = {};
	const struct callchain_frame *self = NULL;
	u32 id = h->rows[row].id;
	char prefix[128];

	if (!cc->total || array__reserve((void **)&t.nodes, &t.cap, 1, sizeof(*t.nodes)))
		return;
	if (!cc->row_first && index_rows(cc))
		goto cleanup;
	/* once, not per row: a busy machine's profile has a million frames and its report
	 * thousands of rows */
	if (!cc->func_frames) {
		cc->func_frames = calloc(cc->nr_funcs + 2, sizeof(*cc->func_frames));
		if (!cc->func_frames)
			goto cleanup;
		for (size_t i = 0; i < cc->nr_frames; i++)
			cc->func_frames[cc->frames[i].func] = &cc->frames[i];
		cc->func_frames[cc->nr_funcs] = &waker_separator;
	}
	func_frames = cc->func_frames;
	t.nodes[t.nr++] = (struct node){ .func = UINT32_MAX };
	for (u32 x = id < cc->nr_row_ids ? cc->row_first[id] : 0;
	     id < cc->nr_row_ids && x < cc->row_first[id + 1]; x++) {
		const struct callchain_stack *st = &cc->stacks[cc->row_stacks[x]];
		const struct callchain_frame *f = &cc->frames[st->first];
		const u32 *fn = &cc->frame_funcs[st->first];	/* the walk's: 4 bytes a frame */
		int pos = -1, from, to, step;
		s64 at = 0;

		if (!st->nr)
			continue;
		if (!o->children) {
			if (f[st->self].row != h->rows[row].id)
				continue;
			pos = st->self;
		} else {
			/* the row's frame nearest the leaf for callers, nearest the root for callees
			 * (index_rows found both: looking for them here was a third of a busy
			 * machine's report) */
			pos = o->order == CALLCHAIN_CALLER ? cc->row_root[x] : cc->row_leaf[x];
		}
		self = &f[pos];
		if (o->order == CALLCHAIN_CALLEE) {
			from = pos + 1, to = st->nr, step = 1;
		} else if (o->children) {
			from = pos - 1, to = -1, step = -1;
		} else {
			from = st->nr - 1, to = pos, step = -1;	/* the root down to the row's caller */
		}
		t.nodes[0].count += st->count;
		for (int j = from; j != to; j += step) {
			at = tree_child(&t, at, fn[j]);
			if (at < 0)
				goto cleanup;
			t.nodes[at].count += st->count;
		}
		if (o->wakers && st->woken && add_waker_chain(&t, cc, st, at) < 0)
			goto cleanup;
	}
	if (!self)
		goto cleanup;
	if (o->style == CALLCHAIN_FLAT || o->style == CALLCHAIN_FOLDED) {
		/* the sampled function last when the chains run from the outermost caller */
		print_chains(&t, self, !o->children && o->order == CALLCHAIN_CALLER, cc->total, o, out);
		goto cleanup;
	}
	snprintf(prefix, sizeof(prefix), "%*s", o->indent, "");
	fprintf(out, "%s|\n%s---", prefix, prefix);
	print_name(self, out);
	fputc('\n', out);
	snprintf(prefix, sizeof(prefix), "%*s", o->indent + 3, "");
	print_node(&t, 0, prefix, cc->total, o->style == CALLCHAIN_FRACTAL, o->percent_limit, out);
	fputc('\n', out);
cleanup:
	func_frames = NULL;
	free(t.nodes);
}

void callchain__print_json(const struct callchain *cc, struct symbolizer *sy, json_writer_t *w)
{
	struct callchain_ends e;
	char addr[32];

	callchain__ends(cc->p, &e);
	jsonw_name(w, "stack_ends");
	jsonw_start_object(w);
	jsonw_string_field(w, "call_graph", cc->p->meta.call_graph);
	jsonw_uint_field(w, "samples", e.samples);
	for (u32 i = 0; i < HSBPF_STACK_NR; i++) {
		char key[32];

		snprintf(key, sizeof(key), "%s", end_names[i]);
		for (char *c = key; *c; c++)
			if (*c == ' ')
				*c = '_';
		jsonw_uint_field(w, key, e.by_end[i]);
	}
	jsonw_uint_field(w, "stack_map_full", e.lost);
	jsonw_uint_field(w, "frames", e.frames);
	jsonw_uint_field(w, "frames_by_frame_pointer", e.fp_frames);
	jsonw_end_object(w);
	jsonw_name(w, "stacks");
	jsonw_start_array(w);
	for (size_t i = 0; i < cc->nr_stacks; i++) {
		const struct callchain_stack *st = &cc->stacks[i];
		const struct profile_stack_sample *ss = &cc->p->stack_samples[st->sample];
		const struct profile_stack *u = profile__stack(cc->p, ss->user);

		jsonw_start_object(w);
		jsonw_uint_field(w, "samples", ss->count);
		jsonw_uint_field(w, "weight", ss->weight);
		jsonw_uint_field(w, "pid", ss->pid);
		jsonw_string_field(w, "comm", comm_of(st, sy));
		jsonw_uint_field(w, "cgroup_id", ss->cgroup_id);
		jsonw_string_field(w, "end", u ? callchain__end_name(u->end) : "no user stack");
		jsonw_name(w, "frames");
		jsonw_start_array(w);
		for (u32 j = 0; j < st->nr; j++) {
			const struct callchain_frame *f = &cc->frames[st->first + j];

			jsonw_start_object(w);
			jsonw_string_field(w, "symbol", f->sym);
			jsonw_string_field(w, "object", f->dso);
			snprintf(addr, sizeof(addr), "%#" PRIx64, f->ip);
			jsonw_string_field(w, "address", addr);
			jsonw_bool_field(w, "kernel", f->kernel);
			jsonw_end_object(w);
		}
		jsonw_end_array(w);
		jsonw_end_object(w);
	}
	jsonw_end_array(w);
}

/* add count to the link of frame f, once per stack (seen marks the functions counted) */
static int link_add(struct callchain_link **arr, size_t *nr, const struct callchain_frame *f,
		    u64 count)
{
	for (size_t i = 0; i < *nr; i++)
		if ((*arr)[i].kernel == f->kernel && !strcmp((*arr)[i].sym, f->sym ? f->sym : "") &&
		    !strcmp((*arr)[i].dso, f->dso ? f->dso : "")) {
			(*arr)[i].count += count;
			return 0;
		}
	*arr = realloc(*arr, (*nr + 1) * sizeof(**arr));
	if (!*arr)
		return -ENOMEM;
	(*arr)[(*nr)++] = (struct callchain_link){ f->sym ? f->sym : "", f->dso ? f->dso : "",
						   f->kernel, count };
	return 0;
}

static int cmp_link(const void *a, const void *b)
{
	u64 x = ((const struct callchain_link *)a)->count, y = ((const struct callchain_link *)b)->count;

	return x > y ? -1 : x < y;
}

int callchain__links(const struct callchain *cc, const char *sym, const char *dso,
		     struct callchain_links *out)
{
	/* the stack (index + 1) that last counted a function as a caller, as a callee */
	u32 *as_caller = calloc(cc->nr_funcs + 1, sizeof(u32)), *as_callee = calloc(cc->nr_funcs + 1, sizeof(u32));
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!as_caller || !as_callee) {
		free(as_caller);
		free(as_callee);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cc->nr_stacks && !err; i++) {
		const struct callchain_stack *st = &cc->stacks[i];
		const struct callchain_frame *f = &cc->frames[st->first];
		bool in = false;

		for (u32 j = 0; j < st->nr && !err; j++) {
			if (!f[j].sym || strcmp(f[j].sym, sym) || (dso && (!f[j].dso || strcmp(f[j].dso, dso))))
				continue;
			in = true;
			/* the caller is the next frame out, the callee the next frame in */
			if (j + 1 < st->nr && as_caller[f[j + 1].func] != i + 1) {
				as_caller[f[j + 1].func] = i + 1;
				err = link_add(&out->callers, &out->nr_callers, &f[j + 1], st->count);
			}
			if (!err && j > 0 && as_callee[f[j - 1].func] != i + 1) {
				as_callee[f[j - 1].func] = i + 1;
				err = link_add(&out->callees, &out->nr_callees, &f[j - 1], st->count);
			}
		}
		if (in)
			out->total += st->count;
	}
	free(as_caller);
	free(as_callee);
	if (err) {
		callchain__links_free(out);
		return err;
	}
	if (out->nr_callers > 1)	/* qsort of no array is undefined */
		qsort(out->callers, out->nr_callers, sizeof(*out->callers), cmp_link);
	if (out->nr_callees > 1)
		qsort(out->callees, out->nr_callees, sizeof(*out->callees), cmp_link);
	return 0;
}

void callchain__links_free(struct callchain_links *l)
{
	free(l->callers);
	free(l->callees);
	memset(l, 0, sizeof(*l));
}

int callchain__parse_param(const char *arg, struct callchain_param *cp)
{
	static const char *const styles[] = { "graph", "fractal", "flat", "folded" };
	char buf[128], *save = NULL;
	int numbers = 0;

	*cp = (struct callchain_param){ .graph = -1, .style = -1, .order = -1, .threshold = -1 };
	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return fail(-EINVAL, "invalid --call-graph '%s'", arg);
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		char *end;
		double d;
		size_t i;

		for (i = 0; i < ARRAY_SIZE(styles) && strcmp(w, styles[i]); i++)
			;
		if (i < ARRAY_SIZE(styles)) {
			cp->style = i;
			cp->graph = 1;
		} else if (!strcmp(w, "none")) {
			cp->graph = 0;
		} else if (!strcmp(w, "caller") || !strcmp(w, "callee")) {
			cp->order = !strcmp(w, "caller") ? CALLCHAIN_CALLER : CALLCHAIN_CALLEE;
		} else if (!strcmp(w, "function") || !strcmp(w, "percent")) {
			/* hsbpf's only sort key and value: perf's defaults */
		} else if (!strcmp(w, "address") || !strcmp(w, "period") || !strcmp(w, "count") ||
			   !strcmp(w, "branch")) {
			return fail(-EINVAL, "--call-graph '%s': hsbpf's call graphs are by function, "
				    "in percent ('%s' is not supported)", arg, w);
		} else if ((d = strtod(w, &end), end != w && !*end) && d >= 0 && d <= 100) {
			/* the threshold, then perf's print_limit (not kept here) */
			if (!numbers++)
				cp->threshold = d;
		} else {
			return fail(-EINVAL, "invalid --call-graph '%s' (known: none, graph, fractal, "
				    "flat, folded; caller, callee; a threshold in percent; function, "
				    "percent)", arg);
		}
	}
	return 0;
}
