// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Block building: a linear sweep per function, leaders marked, blocks cut at leaders. */
#include <gelf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/bblock.h"
#include "lib/disasm.h"

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
		u64 sec = elf_image__section_end(img, f->addr);

		if (!end)
			continue;
		if (sec && sec < end)
			end = sec;	/* a sizeless symbol stops at its section's end */
		if (f->size)
			end = f->addr + f->size < end ? f->addr + f->size : end;
		else
			end = next < end ? next : end;
		if (end > f->addr && add_func(t, f->addr, end, f->name))
			return -ENOMEM;
	}
	return 0;
}

static int cmp_func(const void *a, const void *b)
{
	const struct bblock_func *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* does [s, e) overlap a function found so far (sorted, the first nr_sym of them)? */
static bool covered(const struct bblock_table *t, size_t nr_sym, u64 s, u64 e)
{
	size_t lo = 0, hi = nr_sym;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->funcs[mid].start < e)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && t->funcs[lo - 1].end > s;
}

/* the binary search table of .eh_frame_hdr lists every function with an FDE, sorted by
 * start address; the common encodings (4-byte values, absolute or relative to the table) are
 * read, anything else is left alone */
static int hdr_value(const u8 *p, u8 enc, u64 base_pc, u64 base_data, u64 *out)
{
	s64 v;

	switch (enc & 0x0f) {
	case 0x03:	/* udata4 */
		v = *(const u32 *)p;
		break;
	case 0x0b:	/* sdata4 */
		v = *(const int32_t *)p;
		break;
	default:
		return -EOPNOTSUPP;
	}
	switch (enc & 0x70) {
	case 0x00:
		*out = v;
		return 0;
	case 0x10:	/* pcrel */
		*out = base_pc + v;
		return 0;
	case 0x30:	/* datarel */
		*out = base_data + v;
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

static int fde_starts(const struct elf_image *img, u64 **starts, size_t *nr)
{
	Elf *elf = elf_memory((char *)img->data, img->size);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	int err = -ENOENT;

	*nr = 0;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".eh_frame_hdr") || sh.sh_type == SHT_NOBITS)
			continue;
		const u8 *h = img->data + sh.sh_offset;
		u64 count, ptr, vaddr = sh.sh_addr;
		size_t size = sh.sh_size;

		if (sh.sh_offset + size > img->size || size < 12 || h[0] != 1 ||
		    hdr_value(h + 4, h[1], vaddr + 4, vaddr, &ptr) ||
		    hdr_value(h + 8, h[2], vaddr + 8, vaddr, &count) || (h[3] & 0x0f) != 0x0b ||
		    12 + count * 8 > size) {
			err = -EOPNOTSUPP;
			break;
		}
		*starts = calloc(count ? count : 1, sizeof(u64));
		if (!*starts) {
			err = -ENOMEM;
			break;
		}
		for (u64 i = 0; i < count; i++) {
			const u8 *e = h + 12 + i * 8;

			if (hdr_value(e, h[3], vaddr + (e - h), vaddr, &(*starts)[*nr]) == 0)
				(*nr)++;
		}
		err = 0;
		break;
	}
out:
	if (elf)
		elf_end(elf);
	return err;
}

/* every function with unwind information is listed, symbols or not: this finds what a
 * stripped object (or one with only dynamic symbols) does not name */
static int funcs_from_eh_frame(struct bblock_table *t, const struct elf_image *img)
{
	size_t nr_sym = t->nr_funcs, nr = 0;
	u64 *starts = NULL;
	int err;

	if (nr_sym > 1)
		qsort(t->funcs, nr_sym, sizeof(*t->funcs), cmp_func);
	if (fde_starts(img, &starts, &nr)) {
		free(starts);
		return 0;
	}
	err = 0;
	for (size_t i = 0; i < nr && !err; i++) {
		u64 s = starts[i], end = exec_end(img, s), sec = elf_image__section_end(img, s);

		if (!end)
			continue;
		if (sec && sec < end)
			end = sec;
		if (i + 1 < nr && starts[i + 1] > s && starts[i + 1] < end)
			end = starts[i + 1];
		if (end > s && !covered(t, nr_sym, s, end))
			err = add_func(t, s, end, NULL);
	}
	free(starts);
	t->from_eh_frame = nr_sym == 0 && t->nr_funcs > 0;
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
	struct disasm *d = disasm__new();
	int err = d ? 0 : -errno;
	struct bblock_table *t = calloc(1, sizeof(*t));

	if (!err && !t)
		err = -ENOMEM;
	if (err)
		goto fail;
	err = funcs_from_symbols(t, img);
	if (!err)
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
	size_t lo = array__count_le(t->blocks, t->nr, sizeof(*t->blocks),
				    offsetof(struct bblock, start), vaddr);

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
