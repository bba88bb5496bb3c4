// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Kernel symbols: load kallsyms text symbols, keep those that cover sampled kernel IPs. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hsbpf.h"
#include "symbols/ksyms.h"

struct ksym {
	u64 addr;
	char *name;
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void free_syms(struct ksym *syms, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		free(syms[i].name);
	free(syms);
}

/* the text symbols of a kallsyms file, sorted by address; 0 with none when it cannot be read */
static int load(const char *path, struct ksym **out, size_t *nr_out)
{
	struct ksym *syms = NULL;
	size_t nr = 0, cap = 0;
	char line[512];
	int err = 0;
	FILE *f;

	*out = NULL;
	*nr_out = 0;
	f = fopen(path, "re");
	if (!f) {
		warning("cannot open '%s': %s: kernel samples will be [unknown]", path, strerror(errno));
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, name[256], mod[128] = "";
		int n = sscanf(line, "%llx %c %255s %127s", &addr, &type, name, mod);

		if (n < 3 || !addr || (type != 't' && type != 'T' && type != 'W' && type != 'w'))
			continue;
		if (array__reserve((void **)&syms, &cap, nr + 1, sizeof(*syms))) {
			err = -ENOMEM;
			break;
		}
		if (n == 4 && mod[0] == '[') {
			char *full;

			if (asprintf(&full, "%s %s", name, mod) < 0) {
				err = -ENOMEM;
				break;
			}
			syms[nr].name = full;
		} else {
			syms[nr].name = strdup(name);
		}
		if (!syms[nr].name) {
			err = -ENOMEM;
			break;
		}
		syms[nr++].addr = addr;
	}
	fclose(f);
	if (err) {
		free_syms(syms, nr);
		return fail(err, "cannot load kernel symbols: %s", strerror(-err));
	}
	if (!nr)
		warning("'%s' shows no addresses (kptr_restrict?): kernel samples will be [unknown]", path);
	if (nr > 1)
		qsort(syms, nr, sizeof(*syms), cmp_ksym);
	*out = syms;
	*nr_out = nr;
	return 0;
}

int ksyms__save_all(struct profile *p, const char *path)
{
	struct ksym *syms;
	size_t nr;
	int err = load(path, &syms, &nr);

	for (size_t i = 0; i < nr && !err; i++)
		err = profile__add_ksym(p, syms[i].addr, syms[i].name);
	if (err)
		error("cannot save kernel symbols: %s", strerror(-err));
	free_syms(syms, nr);
	return err;
}

/* the symbols a kernel stack's frames fall in (return addresses: the call is one byte before) */
static void mark_stack(const struct profile *p, u32 ref, const struct ksym *syms, size_t nr, char *hit)
{
	const struct profile_stack *st = profile__stack(p, ref);

	for (u32 j = 0; st && j < st->nr; j++) {
		u64 ip = profile__frames(p, st)[j];
		size_t lo = array__count_le(syms, nr, sizeof(*syms), offsetof(struct ksym, addr),
					    j && ip ? ip - 1 : ip);

		if (lo)
			hit[lo - 1] = 1;
	}
}

int ksyms__save_for_samples(struct profile *p, const char *path)
{
	struct ksym *syms = NULL;
	char *hit = NULL;
	size_t nr = 0;
	bool any = false;
	int err;

	for (size_t i = 0; i < p->nr_samples && !any; i++)
		any = p->samples[i].flags & HSBPF_KEY_KERNEL;
	for (size_t i = 0; i < p->nr_stack_samples && !any; i++)
		any = p->stack_samples[i].kernel;
	if (!any)
		return 0;
	err = load(path, &syms, &nr);
	if (err)
		return err;
	hit = calloc(nr + 1, 1);
	if (!hit) {
		err = -ENOMEM;
		error("cannot save kernel symbols: %s", strerror(-err));
		goto cleanup;
	}
	for (size_t i = 0; i < p->nr_samples && nr; i++) {
		const struct profile_sample *s = &p->samples[i];
		size_t lo;

		if (!(s->flags & HSBPF_KEY_KERNEL))
			continue;
		lo = array__count_le(syms, nr, sizeof(*syms), offsetof(struct ksym, addr), s->ip);
		if (lo)
			hit[lo - 1] = 1;
	}
	/* and every kernel stack's frames, the wakers' too */
	for (size_t i = 0; i < p->nr_stack_samples && nr; i++) {
		const struct profile_waker *w = profile__stack_sample_waker(p, i);

		mark_stack(p, p->stack_samples[i].kernel, syms, nr, hit);
		if (w)
			mark_stack(p, w->kernel, syms, nr, hit);
	}
	for (size_t i = 0; i < nr && !err; i++) {
		if (hit[i])
			err = profile__add_ksym(p, syms[i].addr, syms[i].name);
		/* the next symbol bounds a hit one: without it a later report would stretch
		 * the symbol over whatever follows */
		else if (i > 0 && hit[i - 1])
			err = profile__add_ksym(p, syms[i].addr, "");
	}
	if (err)
		error("cannot save kernel symbols: %s", strerror(-err));
cleanup:
	free_syms(syms, nr);
	free(hit);
	return err;
}
