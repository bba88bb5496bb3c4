// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Kernel symbols: load kallsyms text symbols, keep those that cover sampled kernel IPs. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hsbpf.h"
#include "ksyms.h"

struct ksym {
	u64 addr;
	char *name;
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int ksyms__save_for_samples(struct profile *p, const char *path)
{
	struct ksym *syms = NULL;
	char *hit = NULL;
	size_t nr = 0, cap = 0;
	char line[512];
	bool any = false;
	int err = 0;
	FILE *f;

	for (size_t i = 0; i < p->nr_samples && !any; i++)
		any = p->samples[i].flags & HSBPF_KEY_KERNEL;
	if (!any)
		return 0;
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
		error("cannot load kernel symbols: %s", strerror(-err));
		goto cleanup;
	}
	if (!nr)
		warning("'%s' shows no addresses (kptr_restrict?): kernel samples will be [unknown]", path);
	if (nr > 1)
		qsort(syms, nr, sizeof(*syms), cmp_ksym);
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
	for (size_t i = 0; i < nr; i++)
		free(syms[i].name);
	free(syms);
	free(hit);
	return err;
}
