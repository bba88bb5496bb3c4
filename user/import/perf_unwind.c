// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* perf's --call-graph dwarf copies unwound as the kernel would have unwound the live stack:
 * the registers in DWARF order, memory from the copy only (the stack from the sampled sp up,
 * as much as perf copied), and each object's table built once, from the recorded file or
 * its copy in the build-id cache. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "symbols/build_id.h"
#include "symbols/buildid_cache.h"
#include "import/perf_unwind.h"

#define PERF_REG_IP	8
#define PERF_REG_SP	7
#define PERF_REGS_ABI_64 2	/* PERF_SAMPLE_REGS_ABI_64 */

/* perf's x86 register numbers (AX BX CX DX SI DI BP SP IP FLAGS CS SS DS ES FS GS, R8-R15
 * from 16) to DWARF's (rax rdx rcx rbx rsi rdi rbp rsp r8-r15); -1: not a DWARF gpr */
static const signed char perf_to_dwarf[24] = {
	0, 3, 2, 1, 4, 5, 6, 7, -1, -1, -1, -1, -1, -1, -1, -1, 8, 9, 10, 11, 12, 13, 14, 15,
};

struct object {
	char *key;		/* the build-id in hex, or else the path */
	struct unwind_table *t;	/* NULL: none (no unwind information, or unreadable) */
};

struct perf_unwind {
	const struct profile *p;
	struct object *objs;
	size_t nr_objs, cap_objs;
	int *obj_of;		/* per mapping: index in objs + 1, 0 not looked at yet */
	struct perf_unwind_stats st;
	/* the sample being unwound */
	u32 pid;
	u64 time, sp;
	const u8 *stack;
	u64 stack_size;
	bool nomem;		/* an object's table could not be built for want of memory */
};

struct perf_unwind *perf_unwind__new(const struct profile *p)
{
	struct perf_unwind *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->p = p;
	u->obj_of = calloc(p->nr_mappings + 1, sizeof(*u->obj_of));
	if (!u->obj_of) {
		perf_unwind__free(u);
		return NULL;
	}
	return u;
}

void perf_unwind__free(struct perf_unwind *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nr_objs; i++) {
		unwind_table__free(u->objs[i].t);
		free(u->objs[i].key);
	}
	free(u->objs);
	free(u->obj_of);
	free(u);
}

const struct perf_unwind_stats *perf_unwind__stats(const struct perf_unwind *u)
{
	return &u->st;
}

/* the file to build m's table from: its path if that is the build that was mapped, else the
 * build-id cache's copy; NULL when neither */
static const char *object_file(const struct profile_mapping *m, const char *path, char *buf,
			       size_t size)
{
	u8 id[BUILD_ID_MAX];
	size_t len;

	if (!m->build_id_size)
		return path;
	if (!build_id__read(path, id, sizeof(id), &len) && len >= m->build_id_size &&
	    !memcmp(id, m->build_id, m->build_id_size))
		return path;
	if (!buildid_cache__find(buildid_cache__default_dir(), m->build_id, m->build_id_size,
				 BUILDID_CACHE_ELF, buf, size))
		return buf;
	return NULL;
}

static struct object *build_object(struct perf_unwind *u, const struct profile_mapping *m)
{
	const char *path = profile__str(u->p, m->path), *file;
	char key[PATH_MAX], cached[PATH_MAX];
	struct object *o;
	u64 t0;
	int err;

	if (m->build_id_size)
		build_id__hex(m->build_id, m->build_id_size, key, sizeof(key));
	else
		snprintf(key, sizeof(key), "%s", path);
	for (size_t i = 0; i < u->nr_objs; i++)
		if (!strcmp(u->objs[i].key, key))
			return &u->objs[i];
	if (array__reserve((void **)&u->objs, &u->cap_objs, u->nr_objs + 1, sizeof(*u->objs)))
		return NULL;
	o = &u->objs[u->nr_objs];
	o->t = NULL;
	o->key = strdup(key);
	if (!o->key)
		return NULL;
	u->nr_objs++;
	/* [vdso], anonymous and JIT code: no file, frame pointers there as in the kernel */
	if (path[0] != '/') {
		u->st.objects_no_cfi++;
		return o;
	}
	file = object_file(m, path, cached, sizeof(cached));
	if (!file) {
		u->st.objects_failed++;
		warning("cannot unwind through '%s': the file is not the build that was recorded "
			"and the build-id cache has no copy (frame pointers there)", path);
		return o;
	}
	t0 = now_ns(CLOCK_MONOTONIC);
	err = unwind_table__build_path(file, &o->t);
	u->st.build_ns += now_ns(CLOCK_MONOTONIC) - t0;
	if (err == -ENODATA) {
		u->st.objects_no_cfi++;
		o->t = NULL;
	} else if (err) {
		u->st.objects_failed++;
		o->t = NULL;
		warning("cannot unwind through '%s': %s (frame pointers there)", file, strerror(-err));
	} else {
		u->st.objects++;
		u->st.rows += o->t->nr_rows;
	}
	return o;
}

static int find(void *ctx, u64 pc, const struct unwind_table **t, u64 *bias)
{
	struct perf_unwind *u = ctx;
	const struct profile_mapping *m = profile__mapping_at(u->p, u->pid, u->time, pc);
	const struct unwind_segment *seg;
	size_t i;

	if (!m)
		return -ENOENT;
	i = m - u->p->mappings;
	if (!u->obj_of[i]) {
		struct object *o = build_object(u, m);

		if (!o) {
			u->nomem = true;
			return -ENOMEM;
		}
		u->obj_of[i] = o - u->objs + 1;
	}
	*t = u->objs[u->obj_of[i] - 1].t;
	seg = *t ? unwind_table__segment(*t, m->pgoff) : NULL;
	if (!seg)
		return -ENODATA;
	*bias = m->start - m->pgoff + seg->offset - seg->vaddr;
	return 0;
}

/* the copy holds [sp, sp + size): nothing else of the process can be read */
static bool read_copy(void *ctx, u64 addr, u64 *val)
{
	struct perf_unwind *u = ctx;

	if (addr < u->sp || u->stack_size < 8 || addr - u->sp > u->stack_size - 8)
		return false;
	memcpy(val, u->stack + (addr - u->sp), 8);
	return true;
}

int perf_unwind__sample(struct perf_unwind *u, const struct perf_sample *s, u64 *ips,
			struct unwind_walk_result *res)
{
	const struct unwind_walk_ops ops = { .find = find, .read = read_copy, .ctx = u };
	const struct unwind_walk_opts o = {};
	struct unwind_walk_regs regs = {};
	u64 mask = s->attr->sample_regs_user;
	int why = PERF_UNWIND_OK;
	bool ip = false, sp = false;

	if (s->copy_err)
		why = PERF_UNWIND_DAMAGED;
	else if (!s->regs_abi)
		why = PERF_UNWIND_NO_REGS;
	else if (s->regs_abi != PERF_REGS_ABI_64)
		why = PERF_UNWIND_BAD_REGS;
	for (u64 i = 0, k = 0; !why && i < 64 && k < s->nr_regs; i++) {
		if (!(mask >> i & 1))
			continue;
		if (i == PERF_REG_IP) {
			regs.ip = s->regs[k];
			ip = true;
		} else if (i < ARRAY_SIZE(perf_to_dwarf) && perf_to_dwarf[i] >= 0) {
			regs.gpr[perf_to_dwarf[i]] = s->regs[k];
			sp |= i == PERF_REG_SP;
		}
		k++;
	}
	if (!why && (!ip || !sp))
		why = PERF_UNWIND_BAD_REGS;
	if (why) {
		u->st.failed[why]++;
		return why;
	}
	u->pid = s->pid;
	u->time = s->attr->sample_type & PERF_SAMPLE_TIME ? s->time : UINT64_MAX;
	u->sp = regs.gpr[HSBPF_DWARF_RSP];
	u->stack = s->stack;
	u->stack_size = s->stack_size;
	unwind_walk__stack(&ops, &regs, &o, ips, res);
	if (u->nomem)
		return -ENOMEM;
	u->st.unwound++;
	u->st.empty_copy += !s->stack_size;
	u->st.frames += res->nr;
	u->st.fp_frames += res->nr_fp;
	return PERF_UNWIND_OK;
}
