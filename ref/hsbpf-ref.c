// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf's exact reference collector: a QEMU user-mode plugin that counts every execution of
 * every translated block, per guest thread, and every transfer between blocks. Blocks are
 * tied to the file they came from by the host address QEMU maps guest code at, so counts can
 * be keyed by object and ELF address afterwards (user/truth.c). Output: text, see docs/truth-format.md.
 *
 * Exactness: one callback per block execution (no inline counters: those are not atomic and
 * two guest threads can run the same block at once); per-thread counters, summed at exit while
 * QEMU holds the other threads stopped. Usage: qemu-x86_64 -plugin libhsbpf-ref.so,out=FILE */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "qemu-plugin-api.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = HSBPF_QEMU_PLUGIN_VERSION;

#define NO_BLOCK UINT32_MAX

struct mapping {
	uint64_t start, end, pgoff;	/* host addresses */
	char *path;
};

struct block {
	uint64_t vaddr;		/* guest address of the first instruction */
	uint64_t key;		/* hash of the instruction bytes */
	uint32_t ninsns;
	uint32_t map;		/* index in maps, NO_BLOCK if not file-backed */
	uint64_t file_off;	/* of the first instruction */
	uint8_t *sizes;
};

struct edge_slot {
	uint64_t key;		/* (src + 1) << 32 | dst */
	uint64_t count;
};

struct thread_state {
	uint64_t *counts;	/* per block id */
	size_t cap;
	uint32_t prev;		/* the block that ran last in this thread */
	struct edge_slot *edges;
	size_t nr_edges, cap_edges;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct block *blocks;
static size_t nr_blocks, cap_blocks;
static uint32_t *index_slots;	/* open addressing over blocks: id + 1 */
static size_t nr_index;
static struct mapping *maps;
static size_t nr_maps, cap_maps;
static struct thread_state **threads;
static size_t nr_threads, cap_threads;
static char *out_path;
static int count_edges = 1;	/* edges=off: blocks only, for speed; rep iterations unfolded */
static int oom;			/* set if an allocation failed: the output says so */

static __thread struct thread_state *self;

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return p;
	while (ncap < need)
		ncap *= 2;
	q = realloc(p, ncap * elem);
	if (!q) {
		oom = 1;
		return NULL;
	}
	memset((char *)q + *cap * elem, 0, (ncap - *cap) * elem);
	*cap = ncap;
	return q;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x9E3779B97F4A7C15ull;
	return h ^ (h >> 29);
}

/* (re)read the host's mappings: guest code lives in file mappings QEMU made for the guest */
static void read_maps(void)
{
	char line[4096 + 256];
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		char perms[8], path[4096] = "";
		struct mapping *m;
		bool known = false;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &s, &e, perms, &off, path) < 4 ||
		    path[0] != '/')
			continue;
		for (size_t i = 0; i < nr_maps && !known; i++)
			known = maps[i].start == s && maps[i].end == e && maps[i].pgoff == off &&
				!strcmp(maps[i].path, path);
		if (known)
			continue;
		maps = grow(maps, &cap_maps, nr_maps + 1, sizeof(*maps));
		if (!maps)
			break;
		m = &maps[nr_maps];
		m->path = strdup(path);
		if (!m->path)
			break;
		m->start = s;
		m->end = e;
		m->pgoff = off;
		nr_maps++;
	}
	fclose(f);
}

/* the latest mapping that holds host address h: later mappings replace earlier ones */
static uint32_t find_map(uint64_t h)
{
	for (size_t i = nr_maps; i-- > 0;)
		if (h >= maps[i].start && h < maps[i].end)
			return i;
	return NO_BLOCK;
}

static struct thread_state *thread_state(void)
{
	struct thread_state *t = calloc(1, sizeof(*t));

	if (!t) {
		oom = 1;
		abort();
	}
	t->prev = NO_BLOCK;
	pthread_mutex_lock(&lock);
	threads = grow(threads, &cap_threads, nr_threads + 1, sizeof(*threads));
	if (threads)
		threads[nr_threads++] = t;
	pthread_mutex_unlock(&lock);
	return t;
}

static void edge_add(struct thread_state *t, uint64_t key, uint64_t n)
{
	size_t mask, i;

	if (t->nr_edges * 2 >= t->cap_edges) {
		size_t ncap = t->cap_edges ? t->cap_edges * 2 : 1024;
		struct edge_slot *ns = calloc(ncap, sizeof(*ns));

		if (!ns) {
			oom = 1;
			return;
		}
		for (size_t j = 0; j < t->cap_edges; j++) {
			if (!t->edges[j].key)
				continue;
			i = mix(0, t->edges[j].key) & (ncap - 1);
			while (ns[i].key)
				i = (i + 1) & (ncap - 1);
			ns[i] = t->edges[j];
		}
		free(t->edges);
		t->edges = ns;
		t->cap_edges = ncap;
	}
	mask = t->cap_edges - 1;
	for (i = mix(0, key) & mask; t->edges[i].key; i = (i + 1) & mask) {
		if (t->edges[i].key == key) {
			t->edges[i].count += n;
			return;
		}
	}
	t->edges[i].key = key;
	t->edges[i].count = n;
	t->nr_edges++;
}

static void on_block(unsigned int vcpu, void *udata)
{
	struct thread_state *t = self;
	uint32_t id = (uint32_t)(uintptr_t)udata;

	(void)vcpu;
	if (!t)
		t = self = thread_state();
	if (id >= t->cap) {
		uint64_t *c = grow(t->counts, &t->cap, (size_t)id + 1, sizeof(*c));

		if (!c)
			return;
		t->counts = c;
	}
	t->counts[id]++;
	if (!count_edges)
		return;
	if (t->prev != NO_BLOCK)
		edge_add(t, ((uint64_t)t->prev + 1) << 32 | id, 1);
	t->prev = id;
}

/* one id per distinct block: retranslations (cache flushes) reuse it */
static uint32_t block_id(struct qemu_plugin_tb *tb, size_t n)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb), key = mix(vaddr, n);
	struct qemu_plugin_insn *first = qemu_plugin_tb_get_insn(tb, 0);
	struct block *b;
	size_t mask, i;
	uint64_t h;

	for (size_t k = 0; k < n; k++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, k);
		const uint8_t *d = qemu_plugin_insn_data(insn);
		size_t sz = qemu_plugin_insn_size(insn);

		key = mix(key, sz);
		for (size_t j = 0; j < sz; j++)
			key = mix(key, d[j]);
	}
	if (nr_blocks * 2 >= nr_index) {
		size_t ncap = nr_index ? nr_index * 2 : 4096;
		uint32_t *ns = calloc(ncap, sizeof(*ns));

		if (!ns) {
			oom = 1;
			return NO_BLOCK;
		}
		for (size_t j = 0; j < nr_blocks; j++) {
			i = blocks[j].key & (ncap - 1);
			while (ns[i])
				i = (i + 1) & (ncap - 1);
			ns[i] = j + 1;
		}
		free(index_slots);
		index_slots = ns;
		nr_index = ncap;
	}
	mask = nr_index - 1;
	for (i = key & mask; index_slots[i]; i = (i + 1) & mask) {
		b = &blocks[index_slots[i] - 1];
		if (b->key == key && b->vaddr == vaddr && b->ninsns == n)
			return index_slots[i] - 1;
	}
	blocks = grow(blocks, &cap_blocks, nr_blocks + 1, sizeof(*blocks));
	if (!blocks)
		return NO_BLOCK;
	b = &blocks[nr_blocks];
	b->vaddr = vaddr;
	b->key = key;
	b->ninsns = n;
	b->sizes = malloc(n);
	if (!b->sizes) {
		oom = 1;
		return NO_BLOCK;
	}
	for (size_t k = 0; k < n; k++)
		b->sizes[k] = qemu_plugin_insn_size(qemu_plugin_tb_get_insn(tb, k));
	h = (uint64_t)(uintptr_t)qemu_plugin_insn_haddr(first);
	b->map = find_map(h);
	if (b->map == NO_BLOCK) {
		read_maps();
		b->map = find_map(h);
	}
	b->file_off = b->map == NO_BLOCK ? 0 : h - maps[b->map].start + maps[b->map].pgoff;
	index_slots[i] = nr_blocks + 1;
	return nr_blocks++;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	uint32_t bid;

	(void)id;
	if (!n)
		return;
	pthread_mutex_lock(&lock);
	bid = block_id(tb, n);
	pthread_mutex_unlock(&lock);
	if (bid != NO_BLOCK)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, QEMU_PLUGIN_CB_NO_REGS,
						     (void *)(uintptr_t)bid);
}

/* QEMU has stopped every other guest thread when this runs */
static void on_guest_exit(qemu_plugin_id_t id, void *p)
{
	struct thread_state total = { .prev = NO_BLOCK };
	FILE *f;

	(void)id;
	(void)p;
	pthread_mutex_lock(&lock);
	for (size_t t = 0; t < nr_threads; t++) {
		struct thread_state *ts = threads[t];

		if (total.cap < ts->cap) {
			total.counts = grow(total.counts, &total.cap, ts->cap, sizeof(*total.counts));
			if (!total.counts)
				break;
		}
		for (size_t b = 0; b < ts->cap; b++)
			total.counts[b] += ts->counts[b];
		for (size_t e = 0; e < ts->cap_edges; e++)
			if (ts->edges[e].key)
				edge_add(&total, ts->edges[e].key, ts->edges[e].count);
	}
	f = fopen(out_path, "we");
	if (!f) {
		fprintf(stderr, "hsbpf-ref: cannot write '%s': %s\n", out_path, strerror(errno));
		pthread_mutex_unlock(&lock);
		return;
	}
	fprintf(f, "hsbpf-ref 1\nthreads %zu\noom %d\nedges %d\n", nr_threads, oom, count_edges);
	for (size_t i = 0; i < nr_maps; i++)
		fprintf(f, "map %zu %" PRIx64 " %" PRIx64 " %" PRIx64 " %s\n", i, maps[i].start,
			maps[i].end, maps[i].pgoff, maps[i].path);
	for (size_t b = 0; b < nr_blocks; b++) {
		const struct block *bl = &blocks[b];

		fprintf(f, "block %zu %" PRIx64 " %" PRId64 " %" PRIx64 " %u %" PRIu64 " ", b, bl->vaddr,
			bl->map == NO_BLOCK ? (int64_t)-1 : (int64_t)bl->map, bl->file_off, bl->ninsns,
			b < total.cap ? total.counts[b] : 0);
		for (uint32_t k = 0; k < bl->ninsns; k++)
			fprintf(f, "%s%u", k ? "," : "", bl->sizes[k]);
		fputc('\n', f);
	}
	for (size_t e = 0; e < total.cap_edges; e++)
		if (total.edges[e].key)
			fprintf(f, "edge %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
				(total.edges[e].key >> 32) - 1, total.edges[e].key & 0xffffffffu,
				total.edges[e].count);
	fprintf(f, "end\n");
	if (fclose(f))
		fprintf(stderr, "hsbpf-ref: cannot write '%s': %s\n", out_path, strerror(errno));
	pthread_mutex_unlock(&lock);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			out_path = strdup(argv[i] + 4);
		else if (!strcmp(argv[i], "edges=off"))
			count_edges = 0;
	if (!out_path) {
		fprintf(stderr, "hsbpf-ref: usage: -plugin libhsbpf-ref.so,out=FILE\n");
		return -1;
	}
	if (info->system_emulation) {
		fprintf(stderr, "hsbpf-ref: only user-mode emulation (qemu-x86_64) is supported\n");
		return -1;
	}
	read_maps();
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_guest_exit, NULL);
	return 0;
}
