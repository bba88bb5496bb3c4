// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The sort keys' table: for each key how rows group (hash, compare), its columns and its JSON
 * fields; and the one function that makes a row's columns for report, top and diff. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "symbols/bblock.h"
#include "record/container_id.h"
#include "report/hist.h"
#include "symbols/inline.h"
#include "lib/json_writer.h"
#include "record/offcpu.h"

/* a row's columns being made */
struct cells {
	const enum sort_key *keys;
	int nr_keys;
	const struct cells_opts *o;
	bool live;		/* o's CELLS_LIVE */
	bool narrow;		/* other keys share the line: narrower columns */
	struct cell *c;
	int n;
};

/* add a column: its text from fmt; the column, for its other fields */
__attribute__((format(printf, 4, 5)))
static struct cell *add(struct cells *b, const char *title, int width, const char *fmt, ...)
{
	static struct cell spare;	/* past CELLS_MAX, which no key set reaches */
	struct cell *c = b->n < CELLS_MAX ? &b->c[b->n++] : &spare;
	va_list ap;

	*c = (struct cell){ .title = title, .width = width };
	va_start(ap, fmt);
	vsnprintf(c->text, sizeof(c->text), fmt, ap);
	va_end(ap);
	return c;
}

/* the row's name column: top gives it what the line leaves, report `width` */
static int name_width(const struct cells *b, int width)
{
	return b->live ? 0 : width;
}

static bool has(const struct cells *b, enum sort_key k)
{
	return sort_key__has(b->keys, b->nr_keys, k);
}

static int strcmp0(const char *a, const char *b)
{
	return a == b ? 0 : strcmp(a ? a : "", b ? b : "");
}

static int cmp_u64(u64 a, u64 b)
{
	return a < b ? -1 : a > b;
}

static bool unknown(const char *s)
{
	return s && !strcmp(s, "[unknown]");
}

static u64 hash_str(const struct hist *h, const char *s, u64 x)
{
	return h->interned ? hashidx__hash_u64((uintptr_t)s, x) : hashidx__hash_str(s, x);
}

/* ---- columns more than one key shows ---- */

/* the object of code rows, unless an object key shows it */
static void object_cell(struct cells *b, const struct hist_row *r)
{
	bool kernel = b->live && r->dso && !strcmp(r->dso, "[kernel.kallsyms]");
	struct cell *c;

	if (has(b, SORT_DSO))
		return;
	c = add(b, "Object", b->narrow || b->live ? 16 : 0, "%s",
		kernel ? "[kernel]" : path__base(r->dso));
	c->cut_left = c->aside = true;
	c->whole = r->dso;
	c->drop = 1;
}

static void command_cell(struct cells *b, const struct hist_row *r)
{
	add(b, "Command", 16, "%s", r->comm);
}

/* what a cgroup is: top's label, or the container it holds, or "-" */
static void container_text(const struct hist_row *r, char *buf, size_t size)
{
	struct container_id ci;

	if (r->many_cgroups)
		snprintf(buf, size, "[several]");
	else if (r->container)
		snprintf(buf, size, "%s", r->container);
	else if (r->cgroup && !container_id__identify(r->cgroup, &ci))
		container_id__describe(&ci, buf, size);
	else
		snprintf(buf, size, "-");
}

static void container_cell(struct cells *b, const struct hist_row *r, int width, int drop)
{
	struct cell *c = add(b, "Container", width, "%s", "");

	container_text(r, c->text, sizeof(c->text));
	c->drop = drop;
}

/* the process and container of rows whose keys do not say them (top): beside code the
 * container is dropped first; a process row's takes the rest of the line */
static void owner_cells(struct cells *b, const struct hist_row *r)
{
	bool process = false;
	struct cell *c;

	for (int i = 0; i < b->nr_keys; i++) {
		if (sort_key__ops(b->keys[i])->container)
			return;
		process |= sort_key__ops(b->keys[i])->process;
	}
	if (!process) {
		c = add(b, "Process", 14, "%s", "");
		if (r->many_comms)
			snprintf(c->text, sizeof(c->text), "[several]");
		else if (r->many_pids)
			snprintf(c->text, sizeof(c->text), "%s +", r->comm);
		else if (r->comm)
			snprintf(c->text, sizeof(c->text), "%s %u", r->comm, r->pid);
		c->drop = 2;
	}
	container_cell(b, r, process ? 0 : 19, process ? 0 : 3);
}

/* ---- sym ---- */

static u64 sym_hash(const struct hist *h, const struct hist_row *r, u64 x)
{
	x = hash_str(h, r->dso, hash_str(h, r->sym, x));
	return h->unknown_per_process && unknown(r->sym) ? hashidx__hash_u64(r->pid, x) : x;
}

static int sym_cmp(const struct hist *h, const struct hist_row *a, const struct hist_row *b)
{
	int c = strcmp0(a->sym, b->sym);

	if (!c)
		c = strcmp0(a->dso, b->dso);
	if (!c && h->unknown_per_process && unknown(a->sym))
		c = cmp_u64(a->pid, b->pid);
	return c;
}

static void sym_cells(struct cells *b, const struct hist_row *r)
{
	add(b, "Symbol", name_width(b, b->narrow ? 26 : 44), "%s%s",
	    r->kernel && !b->live ? "[k] " : "", r->sym);
	object_cell(b, r);
}

/* ---- ip ---- */

static u64 ip_hash(const struct hist *h, const struct hist_row *r, u64 x)
{
	x = hashidx__hash_u64(r->vaddr, hash_str(h, r->dso, x));
	return h->unknown_per_process && unknown(r->dso) ? hashidx__hash_u64(r->pid, x) : x;
}

static int ip_cmp(const struct hist *h, const struct hist_row *a, const struct hist_row *b)
{
	int c = strcmp0(a->dso, b->dso);

	if (!c)
		c = cmp_u64(a->vaddr, b->vaddr);
	if (!c && h->unknown_per_process && unknown(a->dso))
		c = cmp_u64(a->pid, b->pid);
	return c;
}

static void ip_cells(struct cells *b, const struct hist_row *r)
{
	add(b, "Address", 18, "%#" PRIx64, r->vaddr);
	if (b->live)
		add(b, "Symbol", 0, r->sym_off ? "%s+%#" PRIx64 : "%s", r->sym, r->sym_off);
	else
		add(b, "Symbol+offset", b->narrow ? 26 : 34, "%s+%#" PRIx64, r->sym, r->sym_off);
	object_cell(b, r);
}

static void ip_json(const struct hist *h, const struct hist_row *r, struct json_writer *w)
{
	char ip[32];

	(void)h;
	snprintf(ip, sizeof(ip), "%#" PRIx64, r->vaddr);
	jsonw_string_field(w, "ip", ip);
	jsonw_uint_field(w, "symbol_offset", r->sym_off);
}

/* ---- dso ---- */

static u64 dso_hash(const struct hist *h, const struct hist_row *r, u64 x)
{
	return hash_str(h, r->dso, x);
}

static int dso_cmp(const struct hist *h, const struct hist_row *a, const struct hist_row *b)
{
	(void)h;
	return strcmp0(a->dso, b->dso);
}

static void dso_cells(struct cells *b, const struct hist_row *r)
{
	add(b, "Object", 0, "%s", r->dso)->cut_left = true;
}

/* ---- line ---- */

/* the function an inlined line's innermost function was inlined into */
static const char *inlined_into(const struct hist_row *r)
{
	return r->nr_inl > 1 ? r->inl[1].name : r->sym;
}

static u64 line_hash(const struct hist *h, const struct hist_row *r, u64 x)
{
	x = hashidx__hash_u64(r->line, hash_str(h, r->file, x));
	x = hash_str(h, r->dso, hash_str(h, r->sym, x));
	if (r->nr_inl)
		x = hash_str(h, inlined_into(r), hashidx__hash_u64(r->inl[0].call_line, x));
	return x;
}

static int line_cmp(const struct hist *h, const struct hist_row *a, const struct hist_row *b)
{
	int c = strcmp0(a->file, b->file);

	(void)h;
	if (!c)
		c = a->line - b->line;
	/* no line info, or a line inlined into several functions: keep them apart */
	if (!c)
		c = strcmp0(a->sym, b->sym);
	if (!c)
		c = strcmp0(a->dso, b->dso);
	/* and an inlined line by where it was inlined, into what: what its row says */
	if (!c)
		c = (a->nr_inl > 0) - (b->nr_inl > 0);
	if (!c && a->nr_inl) {
		c = a->inl[0].call_line - b->inl[0].call_line;
		if (!c)
			c = strcmp0(a->inl[0].call_file, b->inl[0].call_file);
		if (!c)
			c = strcmp0(inlined_into(a), inlined_into(b));
	}
	return c;
}

static void line_cells(struct cells *b, const struct hist_row *r)
{
	if (r->file && r->nr_inl) {
		/* the innermost inlined function's line, and where it was inlined */
		const char *cf = r->inl[0].call_file ? path__base(r->inl[0].call_file) : "?";

		add(b, "Source", 40, "%s:%d (inlined at %s:%d)", path__base(r->file), r->line,
		    strcmp(cf, path__base(r->file)) ? cf : "", r->inl[0].call_line);
	} else if (r->file) {
		add(b, "Source", 40, "%s:%d", path__base(r->file), r->line);
	} else {
		/* the symbol's rows of other objects are other rows */
		add(b, "Source", 40, "[unknown]")->whole = r->dso;
	}
	if (r->nr_inl)	/* the line is the innermost inlined function's */
		add(b, "Symbol", 0, "%s (in %s)", r->inl[0].name, inlined_into(r));
	else
		add(b, "Symbol", 0, "%s", r->sym);
}

static void line_json(const struct hist *h, const struct hist_row *r, struct json_writer *w)
{
	(void)h;
	jsonw_string_field(w, "file", r->file);
	jsonw_uint_field(w, "line", r->line);
}

/* ---- srcfile: perf's, the source file of the line without its number ---- */

static u64 srcfile_hash(const struct hist *h, const struct hist_row *r, u64 x)
{
	return hash_str(h, r->file, x);
}

static int srcfile_cmp(const struct hist *h, const struct hist_row *a, const struct hist_row *b)
{
	(void)h;
	return strcmp0(a->file, b->file);
}

static void srcfile_cells(struct cells *b, const struct hist_row *r)
{
	add(b, "Source file", 40, "%s", r->file ? r->file : "[unknown]")->cut_left = true;
}

static void srcfile_json(const struct hist *h, const struct hist_row *r, struct json_writer *w)
{
	(void)h;
	jsonw_string_field(w, "file", r->file);
}

/* ---- pid, comm, tid, cpu ---- */

static u64 pid_hash(const struct hist *h, const struct hist_row *r, u64 x)
{
	(void)h;
	return hashidx__hash_u64(r->pid, x);
}

static int pid_cmp(const struct hist *h, const struct hist_row *a, const struct hist_row *b)
{
	(void)h;
	return cmp_u64(a->pid, b->pid);
}

static void pid_cells(struct cells *b, const struct hist_row *r)
{
	struct cell *c;

	if (r->nspid)
		c = add(b, "Pid (in ns)", 14, "%u (%u)", r->pid, r->nspid);
	else
		c = add(b, "Pid (in ns)", 14, "%u", r->pid);
	c->right = true;
	if (!has(b, SORT_COMM))
		command_cell(b, r);
}

static void pid_json(const struct hist *h, const struct hist_row *r, struct json_writer *w)
{
	(void)h;
	jsonw_uint_field(w, "pid", r->pid);
	if (r->nspid)
		jsonw_uint_field(w, "ns_pid", r->nspid);
	jsonw_string_field(w, "comm", r->comm);
}

static const char *comm_name(const struct hist_row *r)
{
	return r->comm;
}

static u64 comm_hash(const struct hist *h, const struct hist_row *r, u64 x)
{
	return hash_str(h, r->comm, x);
}

static int comm_cmp(const struct hist *h, const struct hist_row *a, const struct hist_row *b)
{
	(void)h;
	return strcmp0(a->comm, b->comm);
}

static void comm_json(const struct hist *h, const struct hist_row *r, struct json_writer *w)
{
	(void)h;
	jsonw_string_field(w, "comm", r->comm);
}

static u64 tid_hash(const struct hist *h, const struct hist_row *r, u64 x)
{
	return hash_str(h, r->comm, hashidx__hash_u64(r->tid, hashidx__hash_u64(r->pid, x)));
}

static int tid_cmp(const struct hist *h, const struct hist_row *a, const struct hist_row *b)
{
	int c = cmp_u64(a->pid, b->pid);

	(void)h;
	if (!c)
		c = cmp_u64(a->tid, b->tid);
	if (!c)	/* an unrecorded thread (0) of two commands */
		c = strcmp0(a->comm, b->comm);
	return c;
}

static void tid_cells(struct cells *b, const struct hist_row *r)
{
	/* perf's TID:name */
	if (r->tid)
		add(b, "Thread", 24, "%u:%s", r->tid, r->comm);
	else
		add(b, "Thread", 24, "-:%s", r->comm);
}

static void tid_json(const struct hist *h, const struct hist_row *r, struct json_writer *w)
{
	(void)h;
	jsonw_uint_field(w, "pid", r->pid);
	jsonw_uint_field(w, "tid", r->tid);
	jsonw_string_field(w, "comm", r->comm);
}

static u64 cpu_hash(const struct hist *h, const struct hist_row *r, u64 x)
{
	(void)h;
	return hashidx__hash_u64(r->cpu, x);
}

static int cpu_cmp(const struct hist *h, const struct hist_row *a, const struct hist_row *b)
{
	(void)h;
	return cmp_u64(a->cpu, b->cpu);
}

static void cpu_cells(struct cells *b, const struct hist_row *r)
{
	add(b, "CPU", 4, "%03u", r->cpu);
}

static void cpu_json(const struct hist *h, const struct hist_row *r, struct json_writer *w)
{
	(void)h;
	jsonw_uint_field(w, "cpu", r->cpu);
}

/* ---- cgroup ---- */

static const char *cgroup_name(const struct hist_row *r)
{
	return r->container;
}

static u64 cgroup_hash(const struct hist *h, const struct hist_row *r, u64 x)
{
	(void)h;
	return hashidx__hash_u64(r->cgroup_id, x);
}

static int cgroup_cmp(const struct hist *h, const struct hist_row *a, const struct hist_row *b)
{
	(void)h;
	return cmp_u64(a->cgroup_id, b->cgroup_id);
}

static void cgroup_cells(struct cells *b, const struct hist_row *r)
{
	struct cell *c;

	container_cell(b, r, name_width(b, b->narrow ? 24 : 34), 0);
	if (r->cgroup)
		c = add(b, "Cgroup", b->live ? 32 : 0, "%s", r->cgroup);
	else
		c = add(b, "Cgroup", b->live ? 32 : 0, "id %" PRIu64, r->cgroup_id);
	c->drop = 1;
}

static void cgroup_json(const struct hist *h, const struct hist_row *r, struct json_writer *w)
{
	struct container_id ci;

	(void)h;
	jsonw_uint_field(w, "cgroup_id", r->cgroup_id);
	jsonw_string_field(w, "cgroup", r->cgroup);
	if (r->cgroup && !container_id__identify(r->cgroup, &ci)) {
		jsonw_string_field(w, "runtime", ci.runtime);
		jsonw_string_field(w, "container", ci.id[0] ? ci.id : NULL);
		jsonw_string_field(w, "pod", ci.pod[0] ? ci.pod : NULL);
		jsonw_string_field(w, "unit", ci.unit[0] ? ci.unit : NULL);
	}
}

/* ---- bb ---- */

/* the literature's two IP-sample estimates of a block: the instructions its samples stand for
 * ("raw"), and that spread over the block's instructions (executions, "averaged") */
static double bb_insns(double insns_per_sample, const struct hist_row *r)
{
	return r->count * (insns_per_sample ? insns_per_sample : 1.0);
}

static double bb_execs(double insns_per_sample, const struct hist_row *r)
{
	double insns = bb_insns(insns_per_sample, r);

	return r->bb && r->bb->ninsns ? insns / r->bb->ninsns : insns;
}

static u64 bb_hash(const struct hist *h, const struct hist_row *r, u64 x)
{
	x = hash_str(h, r->dso, x);
	return r->bb ? hashidx__hash_u64(r->bb->start, x) : hash_str(h, r->sym, x);
}

static int bb_cmp(const struct hist *h, const struct hist_row *a, const struct hist_row *b)
{
	int c = strcmp0(a->dso, b->dso);

	(void)h;
	if (!c && (!a->bb || !b->bb))	/* no block: one row per symbol */
		c = a->bb ? 1 : b->bb ? -1 : strcmp0(a->sym, b->sym);
	else if (!c)
		c = cmp_u64(a->bb->start, b->bb->start);
	return c;
}

static void bb_cells(struct cells *b, const struct hist_row *r)
{
	const struct cells_opts *o = b->o;
	struct cell *c;

	if (r->bb)
		add(b, "Block", 21, "%#" PRIx64 "-%#" PRIx64, r->bb->start, r->bb->last);
	else
		add(b, "Block", 21, "[no block]");
	c = add(b, "Insns", 5, "%u", r->bb ? r->bb->ninsns : 0);
	c->right = true;
	c->drop = 4;
	if (b->live && !r->bb)
		c->text[0] = 0;
	if (!b->live) {
		add(b, o->insns_per_sample ? "Est.execs" : "Samp/insn", 10, "%.4g",
		    bb_execs(o->insns_per_sample, r));
		if (o->has_lbr)
			add(b, "LBR execs", 10, "%.4g", r->lbr_execs);
	}
	add(b, "Symbol", name_width(b, 20), "%s", r->sym);
	object_cell(b, r);
}

static void bb_json(const struct hist *h, const struct hist_row *r, struct json_writer *w)
{
	char a[32], e[32];

	snprintf(a, sizeof(a), "%#" PRIx64, r->bb ? r->bb->start : 0);
	snprintf(e, sizeof(e), "%#" PRIx64, r->bb ? r->bb->last : 0);
	jsonw_string_field(w, "block_start", r->bb ? a : NULL);
	jsonw_string_field(w, "block_end", r->bb ? e : NULL);
	jsonw_uint_field(w, "block_insns", r->bb ? r->bb->ninsns : 0);
	jsonw_float_field(w, "est_insns_raw", bb_insns(h->insns_per_sample, r));
	jsonw_float_field(w, "est_execs_avg", bb_execs(h->insns_per_sample, r));
	if (h->has_lbr)
		jsonw_float_field(w, "lbr_execs", r->lbr_execs);
}

/* ---- state: off-CPU time's, by the state the blocks were in ---- */

static const char *state_name(const struct hist_row *r)
{
	return offcpu__state_name(r->state);
}

static u64 state_hash(const struct hist *h, const struct hist_row *r, u64 x)
{
	(void)h;
	return hashidx__hash_u64(r->state, x);
}

static int state_cmp(const struct hist *h, const struct hist_row *a, const struct hist_row *b)
{
	(void)h;
	return cmp_u64(a->state, b->state);
}

static void state_cells(struct cells *b, const struct hist_row *r)
{
	add(b, "State", 6, "%s", state_name(r));
}

static void state_json(const struct hist *h, const struct hist_row *r, struct json_writer *w)
{
	(void)h;
	jsonw_string_field(w, "state", state_name(r));
}

/* ---- waker: the thread that woke an off-CPU block (record --wakers) ---- */

static u64 waker_hash(const struct hist *h, const struct hist_row *r, u64 x)
{
	(void)h;
	return hashidx__hash_u64(r->waker, x);
}

static int waker_cmp(const struct hist *h, const struct hist_row *a, const struct hist_row *b)
{
	(void)h;
	return cmp_u64(a->waker, b->waker);
}

/* a block not woken (preempted, or its wake-up unseen), or woken by an interrupt on an idle
 * CPU, has none */
static void waker_cells(struct cells *b, const struct hist_row *r)
{
	if (r->waker)
		add(b, "Waker", 24, "%u:%s", r->waker, r->waker_comm ? r->waker_comm : "?");
	else
		add(b, "Waker", 24, "-");
}

static void waker_json(const struct hist *h, const struct hist_row *r, struct json_writer *w)
{
	(void)h;
	jsonw_uint_field(w, "waker_tid", r->waker);
	jsonw_string_field(w, "waker_comm", r->waker ? r->waker_comm : NULL);
}

/* ---- the table ---- */

static const struct sort_key_ops key_ops[SORT_NR] = {
	[SORT_SYM] = { .name = "sym", .title = "functions", .aliases = { "functions", "function" },
		       .hash = sym_hash, .cmp = sym_cmp, .cells = sym_cells, .code = true },
	[SORT_IP] = { .name = "ip", .title = "IPs", .aliases = { "ips" }, .hash = ip_hash,
		      .cmp = ip_cmp, .cells = ip_cells, .json = ip_json, .code = true,
		      .own_inlined = true },
	[SORT_DSO] = { .name = "dso", .title = "objects", .hash = dso_hash, .cmp = dso_cmp,
		       .cells = dso_cells },
	[SORT_LINE] = { .name = "line", .title = "lines", .aliases = { "srcline" },
			.hash = line_hash, .cmp = line_cmp,
			.cells = line_cells, .json = line_json, .own_inlined = true, .lines = true },
	[SORT_PID] = { .name = "pid", .title = "processes", .aliases = { "processes", "process" },
		       .hash = pid_hash, .cmp = pid_cmp, .cells = pid_cells, .json = pid_json,
		       .row_name = comm_name, .process = true },
	[SORT_COMM] = { .name = "comm", .title = "commands", .hash = comm_hash, .cmp = comm_cmp,
			.cells = command_cell, .json = comm_json, .row_name = comm_name,
			.process = true },
	[SORT_CGROUP] = { .name = "cgroup", .title = "containers",
			  .aliases = { "containers", "container" }, .hash = cgroup_hash,
			  .cmp = cgroup_cmp, .cells = cgroup_cells, .json = cgroup_json,
			  .row_name = cgroup_name, .container = true },
	[SORT_BB] = { .name = "bb", .title = "blocks", .aliases = { "blocks", "block" },
		      .hash = bb_hash, .cmp = bb_cmp, .cells = bb_cells, .json = bb_json,
		      .code = true },
	[SORT_TID] = { .name = "tid", .title = "threads", .aliases = { "threads", "thread" },
		       .hash = tid_hash, .cmp = tid_cmp, .cells = tid_cells, .json = tid_json,
		       .row_name = comm_name, .process = true },
	[SORT_CPU] = { .name = "cpu", .title = "CPUs", .aliases = { "cpus" }, .hash = cpu_hash,
		       .cmp = cpu_cmp, .cells = cpu_cells, .json = cpu_json },
	[SORT_SRCFILE] = { .name = "srcfile", .title = "source files", .hash = srcfile_hash,
			   .cmp = srcfile_cmp, .cells = srcfile_cells, .json = srcfile_json,
			   .lines = true },
	[SORT_STATE] = { .name = "state", .title = "states", .aliases = { "states" },
			 .hash = state_hash, .cmp = state_cmp, .cells = state_cells, .json = state_json,
			 .row_name = state_name },
	[SORT_WAKER] = { .name = "waker", .title = "wakers", .aliases = { "wakers" },
			 .hash = waker_hash, .cmp = waker_cmp, .cells = waker_cells, .json = waker_json },
};

const struct sort_key_ops *sort_key__ops(enum sort_key k)
{
	return k < SORT_NR ? &key_ops[k] : NULL;
}

const char *sort_key__names(void)
{
	static char names[256];

	if (!names[0])
		for (int k = 0; k < SORT_NR; k++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 k ? ", " : "", key_ops[k].name);
	return names;
}

bool sort_key__has(const enum sort_key *keys, int nr_keys, enum sort_key k)
{
	for (int i = 0; i < nr_keys; i++)
		if (keys[i] == k)
			return true;
	return false;
}

const char *sort_key__row_name(enum sort_key k, const struct hist_row *r)
{
	const struct sort_key_ops *ops = sort_key__ops(k);

	return ops && ops->row_name ? ops->row_name(r) : r->sym;
}

int sort_key__cells(const enum sort_key *keys, int nr_keys, const struct cells_opts *o,
		    const struct hist_row *r, struct cell *c)
{
	struct cells b = {
		.keys = keys, .nr_keys = nr_keys, .o = o, .live = o->style & CELLS_LIVE,
		.narrow = nr_keys > 1, .c = c,
	};

	for (int i = 0; i < nr_keys; i++)
		if (keys[i] < SORT_NR)
			key_ops[keys[i]].cells(&b, r);
	if (o->style & CELLS_OWNER)
		owner_cells(&b, r);
	return b.n;
}
