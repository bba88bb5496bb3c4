// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Samples the kernel sent to be unwound here (see late_stacks.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbols/build_id.h"
#include "record/late_stacks.h"
#include "profile/procfs.h"
#include "unwind/unwind_walk.h"

/* an object's table, built once for every sample that needs it */
struct late_obj {
	u32 path;			/* profile string */
	u8 build_id[BUILD_ID_MAX];
	u8 build_id_size;
	struct unwind_table *t;		/* NULL: none could be built */
};

struct late_stacks {
	struct late_stack *v;
	size_t nr, cap;
	struct late_obj *objs;
	size_t nr_objs, cap_objs;
	size_t max;		/* LATE_STACKS_MAX, fewer in tests */
};

struct late_stacks *late_stacks__new(void)
{
	struct late_stacks *ls = calloc(1, sizeof(struct late_stacks));
	const char *max = getenv("HSBPF_TEST_LATE_STACKS_MAX");
	u64 v;

	if (!ls)
		return NULL;
	/* tests only: copies kept, fewer than LATE_STACKS_MAX (docs/testing.md) */
	ls->max = max && !parse_u64(max, &v) && v < LATE_STACKS_MAX ? v : LATE_STACKS_MAX;
	return ls;
}

void late_stacks__free(struct late_stacks *ls)
{
	if (!ls)
		return;
	for (size_t i = 0; i < ls->nr_objs; i++)
		unwind_table__free(ls->objs[i].t);
	free(ls->objs);
	free(ls->v);
	free(ls);
}

/* a stack sample of key's, weighing weight, with these user frames and kernel_nr kernel ones */
static int add_keyed(struct profile *p, const struct stack_key *key, u64 weight, const u64 *ips, u32 nr,
		     u16 end, u16 nr_fp, const u64 *kernel, u32 kernel_nr)
{
	struct profile_stack_sample ss = {
		.pid = key->pid, .flags = key->flags, .cgroup_id = key->cgroup_id,
		.exec_ns = key->exec_ns, .map_ns = key->map_ns, .count = 1, .weight = weight,
	};
	struct profile_sample_key sk = { .tid = key->x.tid, .cpu = key->x.cpu, .snap = key->x.snap, .time = key->x.time,
					   .waker = key->x.waker };
	s64 idx = profile__add_stack(p, ips, nr, end, nr_fp);

	if (idx < 0)
		return -ENOMEM;
	ss.user = idx + 1;
	if (kernel_nr) {
		idx = profile__add_stack(p, kernel, kernel_nr < HSBPF_LATE_KERNEL_FRAMES ?
					 kernel_nr : HSBPF_LATE_KERNEL_FRAMES, 0, 0);
		if (idx < 0)
			return -ENOMEM;
		ss.kernel = idx + 1;
	}
	return profile__add_stack_sample_keyed(p, &ss, &sk);
}

static int add_sample(struct profile *p, const struct late_stack *l, const u64 *ips, u32 nr, u16 end,
		      u16 nr_fp)
{
	return add_keyed(p, &l->key, l->weight, ips, nr, end, nr_fp, (const u64 *)l->kernel, l->kernel_nr);
}

int late_stacks__add(struct late_stacks *ls, struct profile *p, const struct late_stack *l)
{
	if (ls->nr >= ls->max) {
		p->stats.stack_late_dropped++;
		/* an off-CPU block's time is yet to come: it brings the pc */
		if (l->token)
			return 0;
		return add_sample(p, l, (const u64 *)&l->ip, 1, HSBPF_STACK_NO_MAPPING, 0);
	}
	if (array__reserve((void **)&ls->v, &ls->cap, ls->nr + 1, sizeof(*ls->v)))
		return -ENOMEM;
	ls->v[ls->nr++] = *l;
	return 0;
}

int late_stacks__add_block(struct late_stacks *ls, struct profile *p, const struct late_block *b)
{
	/* its copy came just before it, as a rule: the search begins at the newest */
	for (size_t i = ls->nr; i-- > 0;) {
		if (ls->v[i].token == b->token) {
			ls->v[i].weight += b->ns;
			return 0;
		}
	}
	return add_keyed(p, &b->key, b->ns, (const u64 *)&b->ip, 1, HSBPF_STACK_NO_MAPPING, 0, NULL, 0);
}

/* the table of what a mapping maps, built on first use */
static struct unwind_table *obj_table(struct late_stacks *ls, const struct profile *p,
				      const struct profile_mapping *m)
{
	const char *path = profile__str(p, m->path);
	char where[PATH_MAX + 32];
	u8 bid[BUILD_ID_MAX];
	struct late_obj *o;
	size_t n = 0;

	for (size_t i = 0; i < ls->nr_objs; i++) {
		o = &ls->objs[i];
		if (o->path == m->path && o->build_id_size == m->build_id_size &&
		    !memcmp(o->build_id, m->build_id, m->build_id_size))
			return o->t;
	}
	if (array__reserve((void **)&ls->objs, &ls->cap_objs, ls->nr_objs + 1, sizeof(*ls->objs)))
		return NULL;
	o = &ls->objs[ls->nr_objs++];
	memset(o, 0, sizeof(*o));
	o->path = m->path;
	o->build_id_size = m->build_id_size;
	memcpy(o->build_id, m->build_id, m->build_id_size);
	if (path && !strcmp(path, "[vdso]")) {
		if (unwind_table__build_vdso(&o->t))
			o->t = NULL;
		return o->t;
	}
	if (!path || path[0] != '/')
		return NULL;
	/* through the process's root while it lives (a container's files), else as named */
	snprintf(where, sizeof(where), "/proc/%u/root%s", m->pid, path);
	if (!procfs__alive(m->pid) || access(where, R_OK))
		snprintf(where, sizeof(where), "%s", path);
	/* another build of the file would unwind wrongly */
	if (m->build_id_size && (build_id__read(where, bid, sizeof(bid), &n) || n != m->build_id_size ||
				 memcmp(bid, m->build_id, n)))
		return NULL;
	if (unwind_table__build_path(where, &o->t))
		o->t = NULL;
	return o->t;
}

struct walk_ctx {
	struct late_stacks *ls;
	const struct profile *p;
	const struct late_stack *l;
};

/* the mapping of pc in the sample's process image: the first made at or after the image's exec
 * (an image older than the recording: any) */
static int find(void *ctx, u64 pc, const struct unwind_table **t, u64 *bias)
{
	struct walk_ctx *w = ctx;
	const struct profile *p = w->p;
	const struct profile_mapping *best = NULL;
	const struct unwind_segment *seg;

	for (size_t i = 0; i < p->nr_mappings; i++) {
		const struct profile_mapping *m = &p->mappings[i];

		if (m->pid != w->l->key.pid || pc < m->start || pc - m->start >= m->len ||
		    (w->l->key.exec_ns && m->time_ns < w->l->key.exec_ns))
			continue;
		if (!best || m->time_ns < best->time_ns)
			best = m;
	}
	if (!best)
		return -ENOENT;
	*t = obj_table(w->ls, p, best);
	seg = *t ? unwind_table__segment(*t, best->pgoff) : NULL;
	if (!seg)
		return -ENODATA;
	*bias = best->start - best->pgoff + seg->offset - seg->vaddr;
	return 0;
}

/* the stack copy is the only memory there is */
static bool read_copy(void *ctx, u64 addr, u64 *val)
{
	const struct late_stack *l = ((struct walk_ctx *)ctx)->l;
	u64 sp = l->regs[HSBPF_DWARF_RSP];
	u32 size = l->size < HSBPF_LATE_STACK_BYTES ? l->size : HSBPF_LATE_STACK_BYTES;

	if (addr < sp || addr - sp > size || size - (addr - sp) < sizeof(*val))
		return false;
	memcpy(val, l->data + (addr - sp), sizeof(*val));
	return true;
}

int late_stacks__resolve(struct late_stacks *ls, struct profile *p)
{
	u64 *ips = malloc(HSBPF_MAX_FRAMES * sizeof(*ips));
	int err = 0;

	if (!ips)
		return -ENOMEM;
	for (size_t i = 0; i < ls->nr && !err; i++) {
		const struct late_stack *l = &ls->v[i];
		struct walk_ctx w = { ls, p, l };
		const struct unwind_walk_ops ops = { .find = find, .read = read_copy, .ctx = &w };
		struct unwind_walk_regs regs = { .ip = l->ip };
		struct unwind_walk_opts o = { .stack_top = l->stack_top, .in_syscall = l->in_syscall,
					      .max_frames = p->meta.max_frames };
		struct unwind_walk_result res;

		if (l->token && !l->weight)	/* a block left out by the bounds, or lost */
			continue;
		memcpy(regs.gpr, l->regs, sizeof(regs.gpr));
		unwind_walk__stack(&ops, &regs, &o, ips, &res);
		err = add_sample(p, l, ips, res.nr, res.end, res.nr_fp);
		if (!err)
			p->stats.stack_late_unwound++;
	}
	ls->nr = 0;
	free(ips);
	return err;
}
