/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A recording's Python processes: found from their mappings, given to the kernel, their code
 * objects named as the kernel announces them (pytrack.h). A code object is cached by (pid,
 * address, generation: HSBPF_PY_GEN, the kernel's count of the code objects that held the
 * address) with the fields that identify it. The newest generation of an address is read
 * again at the end while its process lives (older ones were read while they lived); a
 * different identity, or an announcement of a generation cached with another (the
 * generations wrapped), means two code objects were aggregated under one frame: those
 * frames are left unnamed rather than named after either. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "profile/procfs.h"
#include "profile/profile.h"
#include "python/pycodes.h"
#include "python/pydetect.h"
#include "python/pyname.h"
#include "python/pyoffsets.h"
#include "python/pytrack.h"
#include "record/sampler.h"

/* an object file looked at: CPython or not */
struct pyobj {
	char *path;
	int err;		/* pydetect__elf's */
	struct pyelf elf;
	int dwarf_err;		/* pyoffsets__from_dwarf's: 0 when dwarf is its layout; -EAGAIN
				 * until it is read (check_dwarf, once its first code object is
				 * announced: a big debug file takes ~100 ms to read, which at the
				 * exec delayed the process's Python frames by as much) */
	struct hsbpf_py_offsets dwarf;
	bool said;		/* a disagreement of its layouts noted */
};

struct pyproc {
	u32 pid, tag;
	bool known;			/* a version hsbpf has a layout for */
	u8 rt_tries;			/* 3.13: reads of _Py_DebugOffsets left to try */
	size_t obj;			/* its CPython object, in objs[] */
	struct hsbpf_py_proc kp;
};

struct pytrack {
	struct sampler *s;
	struct pyobj *objs;
	size_t nr_objs, cap_objs;
	struct pyproc *procs;
	size_t nr_procs, cap_procs;
	struct pycodes codes;
	int warned_minor;		/* the unknown version said once */
	u64 reused;			/* addresses whose frames were left unnamed: another code
					 * object was aggregated with theirs */
	u64 gens;			/* code objects announced at a reused address (gen > 0) */
	int err;
};

struct pytrack *pytrack__new(struct sampler *s)
{
	struct pytrack *t = calloc(1, sizeof(*t));

	if (t)
		t->s = s;
	return t;
}

void pytrack__free(struct pytrack *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nr_objs; i++)
		free(t->objs[i].path);
	free(t->objs);
	free(t->procs);
	pycodes__free(&t->codes);
	free(t);
}

static struct pyproc *find_proc(struct pytrack *t, u32 pid)
{
	for (size_t i = 0; i < t->nr_procs; i++)
		if (t->procs[i].pid == pid)
			return &t->procs[i];
	return NULL;
}

static struct pyobj *look_at(struct pytrack *t, u32 pid, const char *path)
{
	char where[PATH_MAX + 32];
	struct pyobj *o;

	for (size_t i = 0; i < t->nr_objs; i++)
		if (!strcmp(t->objs[i].path, path))
			return &t->objs[i];
	if (array__reserve((void **)&t->objs, &t->cap_objs, t->nr_objs + 1, sizeof(*t->objs)))
		return NULL;
	o = &t->objs[t->nr_objs];
	o->path = strdup(path);
	if (!o->path)
		return NULL;
	snprintf(where, sizeof(where), "/proc/%u/root%s", pid, path);
	o->err = pydetect__elf(where, &o->elf);
	if (o->err && o->err != -ENOENT) {
		snprintf(where, sizeof(where), "%s", path);
		o->err = pydetect__elf(where, &o->elf);
	}
	o->dwarf_err = o->err ? o->err : -EAGAIN;
	t->nr_objs++;
	return o;
}

static int put_proc(struct pytrack *t, const struct pyproc *in)
{
	struct pyproc *p = find_proc(t, in->pid);

	if (!p) {
		if (array__reserve((void **)&t->procs, &t->cap_procs, t->nr_procs + 1, sizeof(*t->procs)))
			return -ENOMEM;
		p = &t->procs[t->nr_procs++];
	} else if (p->known && p->tag != in->tag) {
		sampler__py_proc(t->s, p->pid, p->tag, NULL);
	}
	*p = *in;
	if (!p->known)
		return 0;
	return sampler__py_proc(t->s, p->pid, p->tag, &p->kp);
}

/* the layout of o's CPython in pid (pyoffsets__choose): its row, its DWARF, a running
 * 3.13's own description; a disagreement between them said once per object */
static int choose_layout(struct pyobj *o, u32 pid, u64 runtime, struct hsbpf_py_offsets *out,
			 enum pyoffsets_source *src)
{
	static const char *const source[] = {
		[PYOFFSETS_TABLE] = "hsbpf's table",
		[PYOFFSETS_DWARF] = "its debug information",
		[PYOFFSETS_RUNTIME] = "its _Py_DebugOffsets",
	};
	struct hsbpf_py_offsets rt;
	struct pyoffsets_choice why;
	bool have_rt = false;
	int err;

	if (o->elf.major == 3 && o->elf.minor >= 13)
		have_rt = !pyoffsets__from_debug_offsets(pid, runtime, &rt);
	err = pyoffsets__choose(o->elf.major, o->elf.minor, o->dwarf_err ? NULL : &o->dwarf,
				have_rt ? &rt : NULL, out, &why);
	if (err)
		return err;
	if (!o->said && why.dwarf_differs) {
		o->said = true;
		note("python: %s: its debug information says another %s than hsbpf's CPython "
		     "%d.%d table: read with the debug information's", o->path, why.dwarf_differs,
		     o->elf.major, o->elf.minor);
	}
	if (!o->said && why.runtime_differs) {
		o->said = true;
		note("python: %s: its _Py_DebugOffsets say another %s than %s: read as "
		     "_Py_DebugOffsets say", o->path, why.runtime_differs,
		     o->dwarf_err ? "hsbpf's table" : "its debug information");
	}
	debug("python: pid %u: %d.%d's layout from %s", pid, o->elf.major, o->elf.minor,
	      source[why.source]);
	*src = why.source;
	return 0;
}

int pytrack__mmap(struct pytrack *t, u32 pid, u32 tag, const char *path, u64 start, u64 len, u64 pgoff)
{
	struct pyobj *o;
	struct pyproc p = { .pid = pid, .tag = tag };
	enum pyoffsets_source src;
	bool ok;
	u64 bias;

	if (!path || path[0] != '/' || !pydetect__candidate(path))
		return 0;
	o = look_at(t, pid, path);
	if (!o)
		return -ENOMEM;
	if (o->err)
		return 0;
	bias = pydetect__bias(&o->elf, start, pgoff, &ok);
	if (!ok)
		return 0;
	p.kp.runtime = bias + o->elf.runtime;
	p.kp.eval_start = bias + o->elf.eval;
	p.kp.eval_end = p.kp.eval_start + o->elf.eval_size;
	/* 3.13's f_executable may hold another object than a code object */
	if (o->elf.major == 3 && o->elf.minor >= 13 && o->elf.code_type)
		p.kp.code_type = bias + o->elf.code_type;
	p.obj = o - t->objs;
	p.known = !choose_layout(o, pid, p.kp.runtime, &p.kp.off, &src);
	/* a command's 3.13 is found at its exec, before its data is mapped: _Py_DebugOffsets are
	 * read again when its first code objects are announced (retry_runtime) */
	if (p.known && o->elf.minor >= 13 && src != PYOFFSETS_RUNTIME)
		p.rt_tries = 3;
	if (!p.known && t->warned_minor != o->elf.major * 100 + o->elf.minor) {
		t->warned_minor = o->elf.major * 100 + o->elf.minor;
		note("python: %s is CPython %d.%d, which hsbpf does not know: its stacks have native "
		     "frames only", path, o->elf.major, o->elf.minor);
	}
	debug("python: pid %u: %s (%d.%d) runtime %#llx eval %#llx-%#llx", pid, path, o->elf.major,
	      o->elf.minor, (unsigned long long)p.kp.runtime, (unsigned long long)p.kp.eval_start,
	      (unsigned long long)p.kp.eval_end);
	(void)len;
	return put_proc(t, &p);
}

int pytrack__fork(struct pytrack *t, u32 pid, u32 tag, u32 ppid)
{
	struct pyproc *parent = find_proc(t, ppid), child;

	if (!parent)
		return 0;
	child = *parent;
	child.pid = pid;
	child.tag = tag;
	return put_proc(t, &child);
}

void pytrack__forget(struct pytrack *t, u32 pid)
{
	struct pyproc *p = find_proc(t, pid);

	if (!p)
		return;
	if (p->known)
		sampler__py_proc(t->s, p->pid, p->tag, NULL);
	*p = t->procs[--t->nr_procs];
}

/* ---- code objects ---- */

/* read the code object now (once), as the address's newest generation: the process's layout
 * is its proc's */
static int name_code(struct pytrack *t, u32 pid, u64 code, u32 gen)
{
	const struct pyproc *p = find_proc(t, pid);
	struct pycode_ent *e;

	if (pycodes__find(&t->codes, pid, code, gen) || !p || !p->known)
		return 0;
	e = pycodes__add(&t->codes, pid, code, gen);
	if (!e)
		return -ENOMEM;
	e->off = p->kp.off;
	e->err = pyname__read(pid, &e->off, code, &e->c);
	if (e->err == -ENOMEM)
		return -ENOMEM;
	return 0;
}

/* a 3.13 whose _Py_DebugOffsets were not readable at its exec: read again (its runtime is
 * initialised once it runs Python code), and its layout in the kernel replaced where they
 * say otherwise than the DWARF or the table did */
static int retry_runtime(struct pytrack *t, u32 pid)
{
	struct pyproc *p = find_proc(t, pid), q;
	enum pyoffsets_source src;

	if (!p || !p->known || !p->rt_tries)
		return 0;
	p->rt_tries--;
	q = *p;
	if (choose_layout(&t->objs[p->obj], pid, p->kp.runtime, &q.kp.off, &src) ||
	    src != PYOFFSETS_RUNTIME)
		return 0;
	p->rt_tries = q.rt_tries = 0;
	if (!pyoffsets__diff(&q.kp.off, &p->kp.off))
		return 0;
	return put_proc(t, &q);
}

/* pid's CPython object's debug information, read the first time one of its processes runs
 * Python code (until then the table's layout, or 3.13's own, is in the kernel), and the
 * layout in the kernel replaced where it says otherwise */
static int check_dwarf(struct pytrack *t, u32 pid)
{
	struct pyproc *p = find_proc(t, pid), q;
	struct pyobj *o;
	char where[PATH_MAX + 32];
	enum pyoffsets_source src;

	if (!p || !p->known || t->objs[p->obj].dwarf_err != -EAGAIN)
		return 0;
	o = &t->objs[p->obj];
	snprintf(where, sizeof(where), "/proc/%u/root%s", pid, o->path);
	o->dwarf_err = pyoffsets__from_dwarf(where, &o->dwarf);
	if (o->dwarf_err && o->dwarf_err != -ENOENT)
		o->dwarf_err = pyoffsets__from_dwarf(o->path, &o->dwarf);
	if (o->dwarf_err)
		return 0;
	q = *p;
	if (choose_layout(o, pid, p->kp.runtime, &q.kp.off, &src) || !pyoffsets__diff(&q.kp.off, &p->kp.off))
		return 0;
	/* every process of this object: a fork's child shares its parent's layout */
	for (size_t i = 0; i < t->nr_procs; i++) {
		struct pyproc *r = &t->procs[i];

		if (r->known && r->obj == p->obj) {
			struct pyproc n = *r;

			n.kp.off = q.kp.off;
			if (put_proc(t, &n))
				return -ENOMEM;
		}
	}
	return 0;
}

static int take_code(void *ctx, const struct hsbpf_py_code_event *ev)
{
	struct pytrack *t = ctx;
	struct pycode_ent *e = pycodes__find(&t->codes, ev->pid, ev->code, ev->gen % HSBPF_PY_GENS);
	u64 ident[4];

	/* announced again under a generation known (the kernel's wrapped, or forgot the
	 * address): another code object there. Frames of both were aggregated under the one
	 * frame value: neither name is given to them */
	if (e) {
		if (!e->err && !pyname__ident(e->pid, &e->off, e->code, ident) &&
		    memcmp(ident, e->c.ident, sizeof(ident))) {
			e->err = -ESTALE;
			t->reused++;
		}
		return 0;
	}
	check_dwarf(t, ev->pid);	/* the unwinder's layout stays if it fails */
	retry_runtime(t, ev->pid);
	if (name_code(t, ev->pid, ev->code, ev->gen % HSBPF_PY_GENS))
		t->err = -ENOMEM;
	else if (ev->gen && pycodes__find(&t->codes, ev->pid, ev->code, ev->gen % HSBPF_PY_GENS))
		t->gens++;
	return 0;
}

int pytrack__poll(struct pytrack *t)
{
	int err = sampler__consume_py_codes(t->s, take_code, t);

	if (err && err != -ENOMEM)
		err = 0;	/* the ring's failure: the end names what it can */
	return t->err ? t->err : err;
}

/* a stack's Python frames named, once per (pid, frame) */
struct named {
	u32 pid;
	u64 frame;
};

/* by pid, code object, generation, offset: an address's generations together, the highest
 * last */
static int cmp_named(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	u64 xc = HSBPF_PY_CODE(x->frame), yc = HSBPF_PY_CODE(y->frame);
	u32 xg = HSBPF_PY_GEN(x->frame), yg = HSBPF_PY_GEN(y->frame);

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (xc != yc)
		return xc < yc ? -1 : 1;
	if (xg != yg)
		return xg < yg ? -1 : 1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

/* the frames to name: every Python frame of every stack sample, unique */
static int gather(const struct profile *p, struct named **out, size_t *nr)
{
	struct named *v = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack *st = profile__stack(p, p->stack_samples[i].user);
		const u64 *f = st ? profile__frames(p, st) : NULL;

		for (u32 j = 0; st && j < st->nr; j++) {
			if (!HSBPF_PY_IS_FRAME(f[j]))
				continue;
			if (array__reserve((void **)&v, &cap, n + 1, sizeof(*v))) {
				free(v);
				return -ENOMEM;
			}
			v[n++] = (struct named){ p->stack_samples[i].pid, HSBPF_PY_KEY(f[j]) };
		}
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_named);
	*out = v;
	*nr = n;
	return 0;
}

/* a code object still the one first read, where its process still lives to say */
static bool same_code(struct pycode_ent *e)
{
	u64 ident[4];

	if (pyname__ident(e->pid, &e->off, e->code, ident))
		return true;	/* gone with its process: as read while it lived */
	if (memcmp(ident, e->c.ident, sizeof(ident))) {
		e->err = -ESTALE;
		return false;
	}
	return true;
}

/* the code object of v[i]'s frame, cached: a frame the kernel could not announce is read now
 * if its generation is the address's newest (none other known, and the highest of v's frames
 * there; v is sorted by cmp_named), else left unnamed (*older) */
static int frame_code(struct pytrack *t, const struct named *v, size_t n, size_t i,
		      struct pycode_ent **out, bool *older)
{
	u64 code = HSBPF_PY_CODE(v[i].frame);
	u32 gen = HSBPF_PY_GEN(v[i].frame);
	u32 highest = gen;
	int err;

	*older = false;
	*out = pycodes__find(&t->codes, v[i].pid, code, gen);
	if (*out)
		return 0;
	for (size_t j = i + 1; j < n && v[j].pid == v[i].pid && HSBPF_PY_CODE(v[j].frame) == code; j++)
		highest = HSBPF_PY_GEN(v[j].frame);
	if (!pycodes__readable(&t->codes, v[i].pid, code, gen, highest)) {
		*older = true;
		return 0;
	}
	err = name_code(t, v[i].pid, code, gen);
	*out = err ? NULL : pycodes__find(&t->codes, v[i].pid, code, gen);
	return err;
}

static int cmp_pyframe_named(const void *key, const void *b)
{
	const struct named *k = key;
	const struct profile_pyframe *y = b;

	if (k->pid != y->pid)
		return k->pid < y->pid ? -1 : 1;
	return k->frame < y->frame ? -1 : k->frame > y->frame;
}

/* name v's frames (sorted) in p: those p has not named already (its names are sorted, the
 * ones this call adds go after them); at the end (final), each code object checked again
 * against its process's memory and what stays unnamed counted */
static int name_frames(struct pytrack *t, struct profile *p, const struct named *v, size_t n,
		       bool final)
{
	size_t before = p->nr_pyframes;
	int err = 0;

	size_t prev = SIZE_MAX;		/* the last frame's entry, by index: adds move them */
	struct named last_older = { 0, 0 };

	for (size_t i = 0; !err && i < n; i++) {
		struct pycode_ent *e;
		bool older;
		int line = 0;

		if (i && !cmp_named(&v[i], &v[i - 1]))
			continue;
		if (before && bsearch(&v[i], p->pyframes, before, sizeof(*p->pyframes), cmp_pyframe_named))
			continue;	/* named while the recording ran (top) */
		err = frame_code(t, v, n, i, &e, &older);
		if (err)
			break;
		/* an older generation never announced: memory holds a newer code object now */
		if (final && older && (last_older.pid != v[i].pid ||
				       HSBPF_PY_CODE(last_older.frame) != HSBPF_PY_CODE(v[i].frame))) {
			last_older = v[i];
			t->reused++;
		}
		/* the newest generation checked once against the memory, older ones were read
		 * while they lived */
		if (final && e && (size_t)(e - t->codes.v) != prev && !e->err && e->newest && !same_code(e))
			t->reused++;
		prev = e ? (size_t)(e - t->codes.v) : SIZE_MAX;
		if (!e || e->err) {
			p->stats.py_unnamed += final;
			continue;
		}
		if (pylinetable__line(e->off.major, e->off.minor, e->c.table, e->c.table_len, e->c.firstlineno,
				      HSBPF_PY_OFF(v[i].frame), &line))
			line = 0;
		err = profile__add_pyframe(p, v[i].pid, v[i].frame, e->c.name, e->c.file, line);
	}
	return err;
}

/* the announcements read, then the frames of p's stacks named (final: pytrack__finish's);
 * the names sorted again when some came after others */
static int name_all(struct pytrack *t, struct profile *p, bool final)
{
	struct named *v = NULL;
	size_t n = 0, before = p->nr_pyframes;
	int err;

	err = pytrack__poll(t);
	if (!err)
		err = gather(p, &v, &n);
	if (!err)
		err = name_frames(t, p, v, n, final);
	free(v);
	if (before && p->nr_pyframes != before)
		profile__sort_pyframes(p);
	return err;
}

int pytrack__name(struct pytrack *t, struct profile *p)
{
	return name_all(t, p, false);
}

int pytrack__finish(struct pytrack *t, struct profile *p)
{
	int err = name_all(t, p, true);

	p->stats.py_reused = t->reused;
	p->stats.py_gens = t->gens;
	if (err)
		return fail(err, "cannot name Python frames: %s", strerror(-err));
	return 0;
}
