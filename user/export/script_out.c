// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A profile's stacks in perf script's text: blocks of a header line and frames. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report/sample_filter.h"
#include "export/script_out.h"

#define NS_PER_SEC ((u64)1000000000)

u64 script_out__step(const struct profile *p)
{
	u64 count = 0, weight = 0, step;

	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		count += p->stack_samples[i].count;
		weight += p->stack_samples[i].weight;
	}
	if (!count) {
		count = profile__total_samples(p);
		weight = profile__total_weight(p);
	}
	if (!strcmp(p->meta.unit, "ns") && weight && count)
		step = (weight + count / 2) / count;
	else
		step = count ? p->meta.duration_ns / count : 0;
	/* whole microseconds: the time field has no finer digits */
	step = (step + 500) / 1000 * 1000;
	return step < 1000 ? 1000 : step;
}

struct block {
	u32 pid, tid, time;
	u32 stack;		/* in cc->stacks */
};

static int cmp_block(const void *a, const void *b)
{
	const struct block *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* "name [module]", as the kernel symbols keep a module's, printed as perf does: the name,
 * and the module as the object */
static void split_module(const char *sym, int *name_len, const char **dso, char *mod,
			 size_t mod_size)
{
	const char *br = strrchr(sym, '[');
	size_t n = strlen(sym);

	if (!br || br == sym || br[-1] != ' ' || sym[n - 1] != ']')
		return;
	*name_len = br - 1 - sym;
	snprintf(mod, mod_size, "%s", br);
	*dso = mod;
}

static void print_frame(const struct callchain *cc, struct symbolizer *sy,
			const struct callchain_stack *st, const struct callchain_frame *f, FILE *out)
{
	/* return addresses are looked up at the call (ip - 1); user ones are printed there, as
	 * perf does with --call-graph dwarf, kernel ones as they are, as perf does */
	u64 ret = f->return_address && f->ip ? 1 : 0, back = f->kernel ? ret : 0;
	struct profile_sample s = {
		.pid = st->pid, .flags = f->kernel ? HSBPF_KEY_KERNEL : 0, .cgroup_id = st->cgroup_id,
		.exec_ns = st->exec_ns, .ip = f->ip - ret,
	};
	const char *sym = f->sym ? f->sym : "[unknown]", *dso = f->dso ? f->dso : "[unknown]";
	char mod[256];
	int name_len = strlen(sym);	/* the name is whole, however long */
	struct sym_result r;
	u64 addr = f->ip;

	(void)cc;
	symbolizer__resolve(sy, &s, &r);
	/* user code at its address in the object (ELF terms), as perf prints it */
	if (!f->kernel && strcmp(dso, "[unknown]") && r.vaddr)
		addr = r.vaddr + back;
	if (f->inlined) {
		size_t n = strlen(sym);
		const char *sfx = " (inlined)";

		if (n > strlen(sfx) && !strcmp(sym + n - strlen(sfx), sfx))
			n -= strlen(sfx);
		fprintf(out, "\t%16" PRIx64 " %.*s (inlined)\n", addr, (int)n, sym);
		return;
	}
	if (f->kernel)
		split_module(sym, &name_len, &dso, mod, sizeof(mod));
	if (!strcmp(sym, "[unknown]") || !r.sym || !strcmp(r.sym, "[unknown]"))
		fprintf(out, "\t%16" PRIx64 " %.*s (%s)\n", addr, name_len, sym, dso);
	else
		fprintf(out, "\t%16" PRIx64 " %.*s+0x%" PRIx64 " (%s)\n", addr, name_len, sym,
			r.sym_off + back, dso);
}

/* the frame lines of a stack, resolved once however many blocks repeat them; NULL when out
 * of memory. A sample whose frames were lost has none: a header alone, it still counts. */
static char *frame_lines(const struct callchain *cc, struct symbolizer *sy,
			 const struct callchain_stack *st)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return NULL;
	for (u32 j = 0; j < st->nr; j++)
		print_frame(cc, sy, st, &cc->frames[st->first + j], m);
	if (fclose(m)) {
		free(text);
		return NULL;
	}
	return text;
}

static void print_block(const struct profile *p, const char *frames, const char *comm,
			const struct block *b, bool has_tid, u64 t, u64 period, FILE *out)
{
	if (has_tid)
		fprintf(out, "%s %5u/%-5u ", comm, b->pid, b->tid);
	else
		fprintf(out, "%s %5u ", comm, b->pid);
	fprintf(out, "%5" PRIu64 ".%06" PRIu64 ": %10" PRIu64 " %s: \n%s\n", t / NS_PER_SEC,
		t % NS_PER_SEC / 1000, period, p->meta.event[0] ? p->meta.event : "cpu-clock", frames);
}

int script_out__print(const struct callchain *cc, struct symbolizer *sy,
		      const struct script_opts *o, FILE *out)
{
	const struct profile *p = cc->p;
	bool flat = !p->nr_stack_samples, has_tid = profile__has_key(p, "tid");
	struct block *blocks = calloc(cc->nr_stacks + 1, sizeof(*blocks));
	u64 step = script_out__step(p), k = 0;
	char comm_buf[32];

	if (!blocks)
		return -ENOMEM;
	for (size_t i = 0; i < cc->nr_stacks; i++) {
		const struct callchain_stack *st = &cc->stacks[i];
		const struct profile_sample_key *key = flat ? profile__sample_key(p, st->sample) :
			profile__stack_sample_key(p, st->sample);

		blocks[i] = (struct block){
			.pid = st->pid, .tid = key->tid ? key->tid : st->pid, .time = key->time,
			.stack = i,
		};
	}
	qsort(blocks, cc->nr_stacks, sizeof(*blocks), cmp_block);
	for (size_t i = 0; i < cc->nr_stacks; i++) {
		const struct block *b = &blocks[i];
		const struct callchain_stack *st = &cc->stacks[b->stack];
		const char *comm = symbolizer__comm(sy, st->pid, st->exec_ns);
		u64 base = p->meta.start_mono_ns, period;
		char *frames = frame_lines(cc, sy, st);

		if (!frames) {
			free(blocks);
			return -ENOMEM;
		}

		/* each thread's time starts again at the recording's start */
		if (i && (b->pid != b[-1].pid || b->tid != b[-1].tid))
			k = 0;
		if (!comm) {
			snprintf(comm_buf, sizeof(comm_buf), ":%u", st->pid);
			comm = comm_buf;
		}
		comm = sample_filter__thread_comm(p, b->pid, b->tid, comm);
		if (o->aggregate) {
			period = st->weight ? st->weight : st->count * p->meta.period;
			print_block(p, frames, comm, b, has_tid, base + k * step, period, out);
			k += st->count;
		} else {
			period = st->count ? (st->weight + st->count / 2) / st->count : 0;
			if (!period)
				period = p->meta.period;
			for (u64 n = 0; n < st->count; n++, k++)
				print_block(p, frames, comm, b, has_tid, base + k * step, period, out);
		}
		free(frames);
	}
	free(blocks);
	return ferror(out) ? -EIO : 0;
}
