// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Block building: a linear sweep per function, leaders marked, blocks cut at leaders. */
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bblock.h"
#include "disasm.h"

static int add_func(struct bblock_table *t, u64 start, u64 end, const char *name)
{
	struct bblock_func *f;

	if (array__reserve((void **)&t->funcs, &t->cap_funcs, t->nr_funcs + 1, sizeof(*t->funcs)))
		return -ENOMEM;
	f = &t->funcs[t->nr_funcs++];
	f->start = start;
	f->end = end;
	if (name)
		snprintf(f->name, sizeof(f->name), "%s", name);
	else
		snprintf(f->name, sizeof(f->name), "func_%llx", (unsigned long long)start);
	return 0;
}

static u64 exec_end(const struct elf_image *img, u64 vaddr)
{
	for (size_t i = 0; i < img->nr_loads; i++)
		if (img->loads[i].exec && vaddr >= img->loads[i].vaddr &&
		    vaddr < img->loads[i].vaddr + img->loads[i].filesz)
			return img->loads[i].vaddr + img->loads[i].filesz;
	return 0;
}

static int funcs_from_symbols(struct bblock_table *t, const struct elf_image *img)
{
	for (size_t i = 0; i < img->nr_funcs; i++) {
		const struct elf_func *f = &img->funcs[i];
		u64 end = exec_end(img, f->addr), next = i + 1 < img->nr_funcs ? img->funcs[i + 1].addr : end;

		if (!end)
			continue;
		if (f->size)
			end = f->addr + f->size < end ? f->addr + f->size : end;
		else
			end = next < end ? next : end;
		if (end > f->addr && add_func(t, f->addr, end, f->name))
			return -ENOMEM;
	}
	return 0;
}

/* a stripped object still describes every function's range for unwinding */
static int funcs_from_eh_frame(struct bblock_table *t, const struct elf_image *img)
{
	Elf *elf = elf_memory((char *)img->data, img->size);
	Dwarf_CFI *cfi;
	int err = 0;

	if (!elf)
		return 0;
	cfi = dwarf_getcfi_elf(elf);
	for (size_t i = 0; cfi && i < img->nr_loads && !err; i++) {
		const struct elf_load *l = &img->loads[i];
		u64 a = l->vaddr, end = l->vaddr + l->filesz;

		if (!l->exec)
			continue;
		while (a < end && !err) {
			Dwarf_Frame *frame = NULL;
			Dwarf_Addr s, e;

			if (dwarf_cfi_addrframe(cfi, a, &frame) || dwarf_frame_info(frame, &s, &e, NULL) < 0 ||
			    e <= a) {
				free(frame);
				a++;
				continue;
			}
			free(frame);
			err = add_func(t, s, e, NULL);
			a = e;
		}
	}
	if (cfi)
		dwarf_cfi_end(cfi);
	elf_end(elf);
	t->from_eh_frame = true;
	return err;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static int cmp_block(const void *a, const void *b)
{
	const struct bblock *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int sweep(struct bblock_table *t, const struct elf_image *img, struct disasm *d, u32 fi)
{
	const struct bblock_func *f = &t->funcs[fi];
	size_t first = t->nr_insns, n, nl = 0, capl = 0;
	u64 *leaders = NULL, a;
	bool *is_leader = NULL;
	int err = 0;

	/* pass 1: decode, collect leaders */
	for (a = f->start; a < f->end;) {
		struct insn_info ii;
		size_t avail;
		const u8 *code = elf_image__bytes(img, a, &avail);

		if (!code)
			break;
		if (avail > f->end - a)
			avail = f->end - a;
		disasm__one(d, code, avail, a, &ii);
		if (array__reserve((void **)&t->insns, &t->cap_insns, t->nr_insns + 1, sizeof(u64)) ||
		    array__reserve((void **)&leaders, &capl, nl + 2, sizeof(u64))) {
			err = -ENOMEM;
			goto out;
		}
		t->insns[t->nr_insns++] = a;
		if (a == f->start)
			leaders[nl++] = a;
		if (insn__ends_block(ii.kind) || ii.kind == INSN_INVALID)
			leaders[nl++] = a + ii.size;
		if ((ii.kind == INSN_COND_JUMP || ii.kind == INSN_JUMP) && ii.target >= f->start &&
		    ii.target < f->end)
			leaders[nl++] = ii.target;
		a += ii.size;
	}
	n = t->nr_insns - first;
	if (!n)
		goto out;
	if (nl > 1)
		qsort(leaders, nl, sizeof(*leaders), cmp_u64);
	is_leader = calloc(n, 1);
	if (!is_leader) {
		err = -ENOMEM;
		goto out;
	}
	/* mark leaders that are instruction starts (a target inside an instruction is not) */
	for (size_t i = 0, j = 0; i < n; i++) {
		while (j < nl && leaders[j] < t->insns[first + i])
			j++;
		is_leader[i] = i == 0 || (j < nl && leaders[j] == t->insns[first + i]);
	}
	/* pass 2: cut */
	for (size_t i = 0; i < n;) {
		size_t k = i + 1;
		struct bblock *b;

		while (k < n && !is_leader[k])
			k++;
		if (array__reserve((void **)&t->blocks, &t->cap, t->nr + 1, sizeof(*t->blocks))) {
			err = -ENOMEM;
			goto out;
		}
		b = &t->blocks[t->nr++];
		b->start = t->insns[first + i];
		b->last = t->insns[first + k - 1];
		b->end = k < n ? t->insns[first + k] : a;
		b->ninsns = k - i;
		b->func = fi;
		i = k;
	}
out:
	free(leaders);
	free(is_leader);
	return err;
}

struct bblock_table *bblock_table__build(const struct elf_image *img)
{
	struct bblock_table *t = calloc(1, sizeof(*t));
	struct disasm *d = disasm__new();
	int err = 0;

	if (!t || !d) {
		err = -ENOMEM;
		goto fail;
	}
	err = funcs_from_symbols(t, img);
	if (!err && !t->nr_funcs)
		err = funcs_from_eh_frame(t, img);
	for (size_t i = 0; !err && i < t->nr_funcs; i++)
		err = sweep(t, img, d, i);
	if (err)
		goto fail;
	if (t->nr > 1)
		qsort(t->blocks, t->nr, sizeof(*t->blocks), cmp_block);
	if (t->nr_insns > 1)
		qsort(t->insns, t->nr_insns, sizeof(*t->insns), cmp_u64);
	disasm__free(d);
	return t;
fail:
	disasm__free(d);
	bblock_table__free(t);
	errno = -err;
	return NULL;
}

void bblock_table__free(struct bblock_table *t)
{
	if (!t)
		return;
	free(t->blocks);
	free(t->funcs);
	free(t->insns);
	free(t);
}

const struct bblock *bblock_table__find(const struct bblock_table *t, u64 vaddr)
{
	size_t lo = 0, hi = t->nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->blocks[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || vaddr >= t->blocks[lo - 1].end)
		return NULL;
	return &t->blocks[lo - 1];
}

long bblock_table__insn_index(const struct bblock_table *t, u64 vaddr)
{
	size_t lo = 0, hi = t->nr_insns;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->insns[mid] < vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nr_insns && t->insns[lo] == vaddr ? (long)lo : -1;
}
