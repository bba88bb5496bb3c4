// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Truths from the reference collector: from the plugin's raw block and edge counts to
 * per-instruction and per-edge counts keyed by (object, ELF address), normalized to what
 * hardware retires, and the calling-context tree; the model and its file: truth_file.c. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/disasm.h"
#include "symbols/elf_image.h"
#include "lib/hashidx.h"
#include "truth.h"
#include "profile/profile.h"
#include "hsbpf.h"
#include <linux/perf_event.h>

const char *edge__kind_name(enum edge_kind k)
{
	static const char *const names[EDGE_NR] = {
		"fallthrough", "taken", "not-taken", "jump", "indirect-jump", "call",
		"indirect-call", "return", "tail-call", "syscall", "rep", "other",
	};

	return k < EDGE_NR ? names[k] : "?";
}

/* ---- from the plugin's raw output ---- */

struct raw_map {
	u64 start, end, pgoff;
	char *path;
	u32 obj;		/* TRUTH_NO_OBJECT until resolved */
};

struct raw_block {
	u64 vaddr, file_off, count;
	int map;
	u32 ninsns;
	u8 *sizes;
	/* resolved */
	u32 obj;
	u64 *addrs;		/* ELF vaddr of each instruction */
	u32 kept;		/* instructions kept (a truncated last one is not) */
};

struct raw_edge {
	u64 src, dst, count;
};

struct raw_v {
	int kind;		/* 0 sample (a = block, b = index), 1 edge, 2 range (a, b = blocks) */
	int pmu;		/* the section (vpmu line) it came in */
	u64 a, b, count;
	u64 weight;		/* samples: the periods that ended at them (0: count x period) */
};

/* the shadow stacks' raw nodes, in one array over all threads (ids made global) */
struct raw_cnode {
	u32 thread;
	s64 parent;		/* global raw node, -1 for a thread's first frame */
	u64 site, entry;	/* blocks */
	u32 kind;		/* 0 first frame, 1 call, 2 signal */
	u64 calls;
};

struct raw_cct {
	u64 node, a, b;		/* cblock: a unused, b block; cjump: a source, b target */
	u64 count;
};

struct raw {
	struct raw_cnode *cnodes;
	size_t nr_cnodes, cap_cnodes;
	struct raw_cct *cblocks, *cjumps;
	size_t nr_cblocks, cap_cblocks, nr_cjumps, cap_cjumps;
	size_t cthread, cbase;	/* the thread being read, and its first raw node */
	size_t *tbase;		/* each thread's first raw node */
	size_t *tnodes;		/* and how many it has */
	struct raw_vc {
		u64 node, block, idx, count, weight;	/* node: global */
	} *vc;
	size_t nr_vc, cap_vc;
	bool in_cct;
	u64 cstats[5];
	struct raw_map *maps;
	size_t nr_maps, cap_maps;
	struct raw_block *blocks;
	size_t nr_blocks, cap_blocks;
	struct raw_edge *edges;
	size_t nr_edges, cap_edges;
	struct raw_v *v;
	size_t nr_v, cap_v;
	/* a section per virtual PMU sampling the run: its vpmu line, then its records */
	struct raw_pmu {
		char event[16], sampling[16];
		long long period;
		int mode, lbr;
		unsigned long long vtiming[7];	/* the timing model's totals: insns, cycles, ... */
		bool has_vtiming;
	} pmus[TRUTH_MAX_PMUS];
	int nr_pmus;
	u32 threads;
	int oom;
	bool edges_off;
	bool ended;
};

static void raw_free(struct raw *r)
{
	for (size_t i = 0; i < r->nr_maps; i++)
		free(r->maps[i].path);
	for (size_t i = 0; i < r->nr_blocks; i++) {
		free(r->blocks[i].sizes);
		free(r->blocks[i].addrs);
	}
	free(r->cnodes);
	free(r->tbase);
	free(r->tnodes);
	free(r->vc);
	free(r->cblocks);
	free(r->cjumps);
	free(r->maps);
	free(r->blocks);
	free(r->edges);
	free(r->v);
}

static int parse_sizes(const char *s, struct raw_block *b)
{
	b->sizes = malloc(b->ninsns ? b->ninsns : 1);
	if (!b->sizes)
		return -ENOMEM;
	for (u32 k = 0; k < b->ninsns; k++) {
		char *end;
		unsigned long v = strtoul(s, &end, 10);

		if (end == s || v == 0 || v > 15 || (k + 1 < b->ninsns && *end != ','))
			return -EINVAL;
		b->sizes[k] = v;
		s = end + 1;
	}
	return 0;
}

/* the calling-context lines of one thread: cthread, then its cnode, cblock and cjump lines */
static int raw_parse_cct(struct raw *r, const char *line)
{
	unsigned long long th, a, b, c, d, e, f, g;
	long long parent, site;
	unsigned entry, kind;

	if (sscanf(line, "cthread %llu %llu %llu %llu %llu %llu %llu %llu", &th, &a, &b, &c, &d, &e, &f,
		   &g) == 8) {
		if (th >= r->threads)
			return -EINVAL;
		if (!r->tbase) {
			r->tbase = calloc(r->threads + 1, sizeof(*r->tbase));
			r->tnodes = calloc(r->threads + 1, sizeof(*r->tnodes));
			if (!r->tbase || !r->tnodes)
				return -ENOMEM;
		}
		r->cthread = th;
		r->cbase = r->nr_cnodes;
		r->tbase[th] = r->cbase;
		r->tnodes[th] = a;
		r->in_cct = true;
		r->cstats[0] += c;
		r->cstats[1] += d;
		r->cstats[2] += e;
		r->cstats[3] += f;
		r->cstats[4] += g;
		return 0;
	}
	if (!r->in_cct)
		return -EINVAL;
	if (sscanf(line, "vcsample %llu %llu %llu %llu %llu %llu", &th, &a, &b, &c, &d, &e) == 6) {
		/* sample stacks belong to the one virtual PMU's section */
		if (r->nr_pmus != 1 || th >= r->threads || !r->tbase || c >= r->tnodes[th] ||
		    r->tbase[th] + c >= r->nr_cnodes || a >= r->nr_blocks ||
		    b >= r->blocks[a].ninsns ||
		    array__reserve((void **)&r->vc, &r->cap_vc, r->nr_vc + 1, sizeof(*r->vc)))
			return -EINVAL;
		r->vc[r->nr_vc++] = (struct raw_vc){ r->tbase[th] + c, a, b, d, e };
		return 0;
	}
	if (sscanf(line, "cnode %llu %llu %lld %lld %u %u %llu", &th, &a, &parent, &site, &entry, &kind,
		   &c) == 7) {
		if (th != r->cthread || a != r->nr_cnodes - r->cbase || parent >= (long long)a ||
		    parent < -1 || (parent < 0) != (site < 0) || site >= (long long)r->nr_blocks ||
		    entry >= r->nr_blocks || kind > 2 ||
		    array__reserve((void **)&r->cnodes, &r->cap_cnodes, r->nr_cnodes + 1, sizeof(*r->cnodes)))
			return -EINVAL;
		r->cnodes[r->nr_cnodes++] = (struct raw_cnode){ th, parent < 0 ? -1 : (s64)(r->cbase + parent),
							       site < 0 ? 0 : (u64)site, entry, kind, c };
		return 0;
	}
	if (sscanf(line, "cblock %llu %llu %llu %llu", &th, &a, &b, &c) == 4) {
		if (th != r->cthread || a >= r->nr_cnodes - r->cbase || b >= r->nr_blocks ||
		    array__reserve((void **)&r->cblocks, &r->cap_cblocks, r->nr_cblocks + 1,
				   sizeof(*r->cblocks)))
			return -EINVAL;
		r->cblocks[r->nr_cblocks++] = (struct raw_cct){ r->cbase + a, 0, b, c };
		return 0;
	}
	if (sscanf(line, "cjump %llu %llu %llu %llu %llu", &th, &a, &b, &c, &d) == 5) {
		if (th != r->cthread || a >= r->nr_cnodes - r->cbase || b >= r->nr_blocks ||
		    c >= r->nr_blocks ||
		    array__reserve((void **)&r->cjumps, &r->cap_cjumps, r->nr_cjumps + 1, sizeof(*r->cjumps)))
			return -EINVAL;
		r->cjumps[r->nr_cjumps++] = (struct raw_cct){ r->cbase + a, b, c, d };
		return 0;
	}
	return -EINVAL;
}

static int raw_parse(int fd, const char *name, struct raw *r)
{
	char *line = NULL;
	size_t cap = 0;
	int err = 0, lineno = 0, dfd = dup(fd);
	FILE *f = dfd < 0 ? NULL : fdopen(dfd, "r");

	if (!f || fseek(f, 0, SEEK_SET)) {
		err = -errno;
		if (f)
			fclose(f);
		else if (dfd >= 0)
			close(dfd);
		return fail(err, "cannot read %s: %s", name, strerror(-err));
	}
	while (!err && getline(&line, &cap, f) > 0) {
		unsigned long long a, b, c, d, e;
		long long m;
		unsigned n;
		int pos = 0;

		lineno++;
		line[strcspn(line, "\n")] = 0;
		if (lineno == 1) {
			if (strcmp(line, "hsbpf-ref 1"))
				err = -EINVAL;
		} else if (sscanf(line, "threads %u", &n) == 1) {
			if (r->tbase)	/* the calling-context tables were sized by the first */
				err = -EINVAL;
			r->threads = n;
		} else if (sscanf(line, "oom %u", &n) == 1) {
			r->oom = n;
		} else if (sscanf(line, "edges %u", &n) == 1) {
			r->edges_off = !n;
		} else if (sscanf(line, "map %llu %llx %llx %llx %n", &a, &b, &c, &d, &pos) == 4 && pos) {
			struct raw_map *mp;

			if (a != r->nr_maps || array__reserve((void **)&r->maps, &r->cap_maps, r->nr_maps + 1,
								sizeof(*r->maps))) {
				err = a != r->nr_maps ? -EINVAL : -ENOMEM;
				break;
			}
			mp = &r->maps[r->nr_maps++];
			mp->start = b;
			mp->end = c;
			mp->pgoff = d;
			mp->obj = TRUTH_NO_OBJECT;
			mp->path = strdup(line + pos);
			if (!mp->path)
				err = -ENOMEM;
		} else if (sscanf(line, "block %llu %llx %lld %llx %u %llu %n", &a, &b, &m, &c, &n, &d, &pos) == 6 &&
			   pos) {
			struct raw_block *bl;

			if (a != r->nr_blocks || m >= (long long)r->nr_maps || m < -1 || !n ||
			    array__reserve((void **)&r->blocks, &r->cap_blocks, r->nr_blocks + 1,
					   sizeof(*r->blocks))) {
				err = -EINVAL;
				break;
			}
			bl = &r->blocks[r->nr_blocks++];
			bl->vaddr = b;
			bl->map = m;
			bl->file_off = c;
			bl->ninsns = n;
			bl->count = d;
			bl->obj = TRUTH_NO_OBJECT;
			err = parse_sizes(line + pos, bl);
		} else if (sscanf(line, "edge %llu %llu %llu", &a, &b, &e) == 3) {
			if (a >= r->nr_blocks || b >= r->nr_blocks ||
			    array__reserve((void **)&r->edges, &r->cap_edges, r->nr_edges + 1,
					   sizeof(*r->edges))) {
				err = -EINVAL;
				break;
			}
			r->edges[r->nr_edges++] = (struct raw_edge){ a, b, e };
		} else if (!strncmp(line, "vpmu ", 5)) {
			struct raw_pmu *pm = &r->pmus[r->nr_pmus];

			if (r->nr_pmus == TRUTH_MAX_PMUS ||
			    sscanf(line, "vpmu %15s %lld %d %d %15s", pm->event, &pm->period, &pm->mode,
				   &pm->lbr, pm->sampling) < 4) {
				err = -EINVAL;
				break;
			}
			r->nr_pmus++;
		} else if (!strncmp(line, "vtiming ", 8)) {
			struct raw_pmu *pm = &r->pmus[r->nr_pmus ? r->nr_pmus - 1 : 0];

			if (sscanf(line, "vtiming %llu %llu %llu %llu %llu %llu %llu", &pm->vtiming[0],
				   &pm->vtiming[1], &pm->vtiming[2], &pm->vtiming[3], &pm->vtiming[4],
				   &pm->vtiming[5], &pm->vtiming[6]) != 7) {
				err = -EINVAL;
				break;
			}
			pm->has_vtiming = true;
		} else if (!strncmp(line, "vsample ", 8) || !strncmp(line, "vedge ", 6) ||
			   !strncmp(line, "vrange ", 7)) {
			int kind = line[1] == 's' ? 0 : line[1] == 'e' ? 1 : 2;
			unsigned long long w = 0;

			if (sscanf(strchr(line, ' ') + 1, "%llu %llu %llu %llu", &a, &b, &e, &w) < 3 ||
			    a >= r->nr_blocks || (kind && b >= r->nr_blocks) ||
			    array__reserve((void **)&r->v, &r->cap_v, r->nr_v + 1, sizeof(*r->v))) {
				err = -EINVAL;
				break;
			}
			r->v[r->nr_v++] = (struct raw_v){ kind, r->nr_pmus ? r->nr_pmus - 1 : 0, a, b, e, w };
		} else if (!strncmp(line, "cthread ", 8) || !strncmp(line, "cnode ", 6) ||
			   !strncmp(line, "cblock ", 7) || !strncmp(line, "cjump ", 6) ||
			   !strncmp(line, "vcsample ", 9)) {
			err = raw_parse_cct(r, line);
		} else if (!strcmp(line, "end")) {
			r->ended = true;
		} else {
			err = -EINVAL;
		}
	}
	free(line);
	fclose(f);
	if (err == -EINVAL)
		return fail(err, "%s is corrupt at line %d", name, lineno);
	if (err)
		return fail(err, "cannot read %s: %s", name, strerror(-err));
	if (!r->ended)
		return fail(-EINVAL, "%s is truncated: the collector did not finish writing it", name);
	return 0;
}

/* per-instruction counts while building: the instructions in the order first seen, indexed
 * by (obj, vaddr) */
struct insn_table {
	struct truth_insn *insns;
	size_t nr, cap;
	struct hashidx idx;
};

static u64 insn_hash(u32 obj, u64 vaddr)
{
	return hashidx__hash_u64(vaddr, obj);
}

static bool same_insn(const void *key, u32 pos, void *ctx)
{
	const struct truth_insn *k = key, *in = &((const struct insn_table *)ctx)->insns[pos];

	return in->obj == k->obj && in->vaddr == k->vaddr;
}

static struct truth_insn *insn_slot(struct insn_table *it, u32 obj, u64 vaddr, u32 size)
{
	struct truth_insn key = { .obj = obj, .size = size, .vaddr = vaddr };
	u64 hash = insn_hash(obj, vaddr);
	s64 pos = hashidx__find(&it->idx, hash, &key, same_insn, it);

	if (pos >= 0)
		return &it->insns[pos];
	if (array__reserve((void **)&it->insns, &it->cap, it->nr + 1, sizeof(*it->insns)) ||
	    hashidx__insert(&it->idx, hash, it->nr))
		return NULL;
	it->insns[it->nr] = key;
	return &it->insns[it->nr++];
}

/* open each file-backed object once; its instructions get ELF addresses */
static int resolve_objects(struct raw *r, struct truth *t, struct elf_image ***imgs)
{
	size_t cap_imgs = 0;
	bool *used = calloc(r->nr_maps + 1, 1);

	if (!used)
		return -ENOMEM;
	for (size_t i = 0; i < r->nr_blocks; i++)
		if (r->blocks[i].map >= 0)
			used[r->blocks[i].map] = true;

	for (size_t i = 0; i < r->nr_maps; i++) {
		struct raw_map *m = &r->maps[i];
		struct elf_image *img;
		struct truth_object *o;
		u32 obj = truth__object(t, m->path);
		s64 off;

		if (!used[i])
			continue;	/* QEMU's own files, and data */
		if (obj != TRUTH_NO_OBJECT) {
			m->obj = obj;
			continue;
		}
		img = elf_image__open(m->path);
		if (!img)
			continue;	/* qemu itself, or a file gone since: not guest code */
		if (array__reserve((void **)&t->objects, &t->cap_objects, t->nr_objects + 1,
				   sizeof(*t->objects)) ||
		    array__reserve((void **)imgs, &cap_imgs, t->nr_objects + 1, sizeof(**imgs))) {
			elf_image__close(img);
			free(used);
			return -ENOMEM;
		}
		off = truth__add_str(t, m->path);
		if (off < 0) {
			elf_image__close(img);
			free(used);
			return off;
		}
		o = &t->objects[t->nr_objects];
		memset(o, 0, sizeof(*o));
		o->path = off;
		o->build_id_size = img->build_id_size;
		memcpy(o->build_id, img->build_id, img->build_id_size);
		(*imgs)[t->nr_objects] = img;
		m->obj = t->nr_objects++;
	}
	free(used);
	return 0;
}

static enum edge_kind classify(const struct insn_info *in, u64 src, u64 dst,
			       const struct elf_image *src_img, const struct elf_image *dst_img)
{
	const struct elf_func *f;

	switch (in->kind) {
	case INSN_COND_JUMP:
		return dst == src + in->size ? EDGE_NOT_TAKEN : EDGE_TAKEN;
	case INSN_JUMP:
	case INSN_INDIRECT_JUMP:
		/* a jump onto another function's first instruction is a tail call */
		f = dst_img ? elf_image__func_at(dst_img, dst) : NULL;
		if (f && f->addr == dst && (src_img != dst_img || elf_image__func_at(src_img, src) != f))
			return EDGE_TAIL_CALL;
		return in->kind == INSN_JUMP ? EDGE_JUMP : EDGE_INDIRECT_JUMP;
	case INSN_CALL:
		return EDGE_CALL;
	case INSN_INDIRECT_CALL:
		return EDGE_INDIRECT_CALL;
	case INSN_RET:
		return EDGE_RETURN;
	case INSN_SYSCALL:
		return EDGE_SYSCALL;
	case INSN_PLAIN:
		if (in->rep_string && dst == src)
			return EDGE_REP;
		return dst == src + in->size ? EDGE_FALLTHROUGH : EDGE_OTHER;
	default:
		return EDGE_OTHER;
	}
}

/* each object at its own base, so a run-time address is base + file offset */
static u64 vbase(u32 obj)
{
	return ((u64)obj + 1) << 36;
}

static u64 block_addr(const struct raw *r, u64 id, u32 idx)
{
	const struct raw_block *b = &r->blocks[id];
	u64 off = b->file_off;

	for (u32 k = 0; k < idx && k < b->ninsns; k++)
		off += b->sizes[k];
	return vbase(b->obj) + off;
}

struct stack_dedup {
	const struct profile *p;
	u32 nr;
};

static bool stack_eq(const void *key, u32 pos, void *ctx)
{
	const struct profile *p = ((struct stack_dedup *)ctx)->p;
	const u64 *ips = key;
	u32 nr = ((struct stack_dedup *)ctx)->nr;

	return p->stacks[pos].nr == nr && !memcmp(p->frames + p->stacks[pos].first, ips, nr * sizeof(*ips));
}

/* the exact call stacks of the virtual PMU's samples: the sampled instruction, then the return
 * address of each frame (the end of the block that made its call), from the sample's node to
 * the thread's first frame */
static int vpmu_stacks(const struct raw *r, struct profile *p, u32 pid, long long period)
{
	struct hashidx idx = {};
	u64 *ips = malloc(HSBPF_MAX_FRAMES * sizeof(*ips));
	int err = ips ? 0 : -ENOMEM;

	for (size_t i = 0; i < r->nr_vc && !err; i++) {
		const struct raw_vc *v = &r->vc[i];
		struct stack_dedup c = { p, 0 };
		u16 end = HSBPF_STACK_COMPLETE;
		s64 st;
		u64 h;

		if (r->blocks[v->block].obj == TRUTH_NO_OBJECT)
			continue;	/* anonymous code */
		ips[c.nr++] = block_addr(r, v->block, v->idx);
		for (s64 n = v->node; n >= 0 && r->cnodes[n].parent >= 0; n = r->cnodes[n].parent) {
			const struct raw_block *sb = &r->blocks[r->cnodes[n].site];

			if (c.nr == HSBPF_MAX_FRAMES) {
				end = HSBPF_STACK_DEPTH;
				break;
			}
			if (sb->obj != TRUTH_NO_OBJECT)
				ips[c.nr++] = block_addr(r, r->cnodes[n].site, sb->ninsns);
		}
		h = hashidx__hash(ips, c.nr * sizeof(*ips), end);
		st = hashidx__find(&idx, h, ips, stack_eq, &c);
		if (st < 0) {
			st = profile__add_stack(p, ips, c.nr, end, 0);
			if (st < 0 || hashidx__insert(&idx, h, st)) {
				err = -ENOMEM;
				break;
			}
		}
		err = profile__add_stack_sample(p, &(struct profile_stack_sample){
			.pid = pid, .user = st + 1, .count = v->count,
			.weight = v->weight ? v->weight : v->count * period });
		p->stats.stack_samples += v->count;
		p->stats.stack_frames += c.nr;
	}
	if (!err) {
		p->meta.max_frames = HSBPF_MAX_FRAMES;
		snprintf(p->meta.call_graph, sizeof(p->meta.call_graph), "exact");
	}
	hashidx__free(&idx);
	free(ips);
	return err;
}

/* the virtual PMU's samples and branch records as a profile: one process, one mapping per
 * object, the event and the period the plugin counted with */
static int vpmu_profile(const struct raw *r, int pmu, struct elf_image **imgs, const struct truth *t,
			struct profile *p)
{
	const struct raw_pmu *pm = &r->pmus[pmu];
	const u32 pid = 1;
	int err = 0;

	for (u32 o = 0; o < t->nr_objects && !err; o++)
		err = profile__add_mapping(p, pid, 0, vbase(o), imgs[o]->size, 0, truth__str(t, t->objects[o].path),
					   t->objects[o].build_id, t->objects[o].build_id_size);
	if (!err)
		err = profile__add_comm(p, pid, 0, "vpmu", false);
	for (size_t i = 0; i < r->nr_v && !err; i++) {
		const struct raw_v *v = &r->v[i];
		const struct raw_block *a = &r->blocks[v->a];

		if (v->pmu != pmu)
			continue;
		if (a->obj == TRUTH_NO_OBJECT || (v->kind && r->blocks[v->b].obj == TRUTH_NO_OBJECT))
			continue;	/* anonymous code */
		if (v->kind == 0) {
			/* weighed by the periods that ended at it: randomized periods are longer than
			 * the base period by 1/16 on average */
			struct profile_sample s = { .pid = pid, .ip = block_addr(r, v->a, v->b),
						    .count = v->count,
						    .weight = v->weight ? v->weight : v->count * pm->period };

			err = profile__add_sample(p, &s);
		} else {
			const struct raw_block *b = &r->blocks[v->b];
			/* edge: from a's last instruction to b; range: from a's first to b's last */
			struct profile_lbr l = { .pid = pid, .kind = v->kind == 1 ? 1 : 2, .count = v->count };

			if (v->kind == 1) {
				l.a = block_addr(r, v->a, a->kept ? a->kept - 1 : 0);
				l.b = block_addr(r, v->b, 0);
			} else {
				l.a = block_addr(r, v->a, 0);
				l.b = block_addr(r, v->b, b->kept ? b->kept - 1 : 0);
			}
			err = profile__add_lbr(p, &l);
		}
	}
	if (!err && r->nr_vc && pmu == 0)	/* exact stacks come with a single PMU */
		err = vpmu_stacks(r, p, pid, pm->period);
	snprintf(p->meta.event, sizeof(p->meta.event), "%s (virtual PMU)",
		 !strcmp(pm->event, "insns") ? "instructions" :
		 !strcmp(pm->event, "cycles") ? "cycles" : "taken-branches");
	p->meta.event_type = strcmp(pm->event, "branches") ? PERF_TYPE_HARDWARE : PERF_TYPE_RAW;
	p->meta.event_config = !strcmp(pm->event, "insns") ? PERF_COUNT_HW_INSTRUCTIONS :
			       !strcmp(pm->event, "cycles") ? PERF_COUNT_HW_CPU_CYCLES : 0x20c4;
	p->meta.period = pm->period;
	snprintf(p->meta.period_mode, sizeof(p->meta.period_mode), "%s",
		 (const char *[]){ "fixed", "prime", "random", "prime-random" }[pm->mode & 3]);
	snprintf(p->meta.unit, sizeof(p->meta.unit), "events");
	if (pm->has_vtiming)
		snprintf(p->meta.target, sizeof(p->meta.target), "virtual PMU, %s sampling, LBR depth %d; "
			 "timing model: %llu insns, %llu cycles (IPC %.2f), L1/L2/L3 misses %llu/%llu/%llu, "
			 "%llu branches mispredicted (%llu conditional ones ran)", pm->sampling, pm->lbr,
			 pm->vtiming[0], pm->vtiming[1], pm->vtiming[1] ? (double)pm->vtiming[0] / pm->vtiming[1] : 0,
			 pm->vtiming[2], pm->vtiming[3], pm->vtiming[4], pm->vtiming[6], pm->vtiming[5]);
	else
		snprintf(p->meta.target, sizeof(p->meta.target), "virtual PMU, %s sampling, LBR depth %d",
			 pm->sampling[0] ? pm->sampling : "exact", pm->lbr);
	profile__finish(p);
	return err;
}

/* instructions: block counts spread over their instructions, into it */
static int count_insns(struct raw *r, struct elf_image **imgs, struct disasm *d, struct truth *t,
		       struct insn_table *it)
{
	for (size_t i = 0; i < r->nr_blocks; i++) {
		struct raw_block *b = &r->blocks[i];
		struct elf_image *img;
		u64 off = b->file_off;

		t->meta.total_insns += b->count * b->ninsns;
		b->kept = b->ninsns;
		if (b->map < 0 || r->maps[b->map].obj == TRUTH_NO_OBJECT) {
			t->meta.anon_insns += b->count * b->ninsns;
			continue;
		}
		b->obj = r->maps[b->map].obj;
		img = imgs[b->obj];
		b->addrs = calloc(b->ninsns, sizeof(*b->addrs));
		if (!b->addrs)
			return -ENOMEM;
		for (u32 k = 0; k < b->ninsns; off += b->sizes[k++]) {
			struct truth_insn *in;

			if (elf_image__off_to_vaddr(img, off, &b->addrs[k]))
				return fail(-EINVAL, "'%s': no segment holds file offset %#" PRIx64,
					    img->path, off);
			/* QEMU 7.2 lists a truncated copy of a page-crossing instruction as the
			 * last of a block that does not execute it; the next block does */
			if (k == b->ninsns - 1 && k > 0) {
				struct insn_info ii;
				size_t avail;
				const u8 *code = elf_image__bytes(img, b->addrs[k], &avail);

				if (code && !disasm__one(d, code, avail, b->addrs[k], &ii) &&
				    ii.size != b->sizes[k] && (b->addrs[k] & 4095) + ii.size > 4096) {
					b->kept = k;
					t->meta.page_cross_dropped += b->count;
					t->meta.total_insns -= b->count;
					break;
				}
			}
			in = insn_slot(it, b->obj, b->addrs[k], b->sizes[k]);
			if (!in)
				return -ENOMEM;
			in->count += b->count;
		}
	}
	return 0;
}

/* edges: from the last instruction that ran in one block to the first of the next; a rep
 * string instruction's iterations come off its count in it */
static int add_edges(const struct raw *r, struct elf_image **imgs, struct disasm *d,
		     struct truth *t, struct insn_table *it)
{
	for (size_t i = 0; i < r->nr_edges; i++) {
		const struct raw_block *s = &r->blocks[r->edges[i].src], *dd = &r->blocks[r->edges[i].dst];
		struct truth_edge e = { .count = r->edges[i].count };
		struct insn_info ii;
		const u8 *code;
		size_t avail;

		if (!s->addrs || !dd->addrs || !s->kept)
			continue;	/* anonymous code at either end */
		e.src_obj = s->obj;
		e.dst_obj = dd->obj;
		e.src = s->addrs[s->kept - 1];
		e.dst = dd->addrs[0];
		e.flags = s->obj != dd->obj ? EDGE_CROSS_OBJECT : 0;
		code = elf_image__bytes(imgs[s->obj], e.src, &avail);
		if (s->kept < s->ninsns)
			e.kind = EDGE_FALLTHROUGH;
		else if (!code || disasm__one(d, code, avail, e.src, &ii))
			e.kind = EDGE_OTHER;
		else
			e.kind = classify(&ii, e.src, e.dst, imgs[s->obj], imgs[dd->obj]);
		if (e.kind == EDGE_REP) {
			/* hardware retires a rep string instruction once, however many iterations */
			struct truth_insn *in = insn_slot(it, e.src_obj, e.src, ii.size);

			if (!in)
				return -ENOMEM;
			in->count -= e.count;
			t->meta.rep_iterations += e.count;
			t->meta.total_insns -= e.count;
		}
		if (array__reserve((void **)&t->edges, &t->cap_edges, t->nr_edges + 1, sizeof(e)))
			return -ENOMEM;
		t->edges[t->nr_edges++] = e;
	}
	return 0;
}

/* ---- the calling-context tree ---- */

void truth__cct_inclusive(const struct truth *t, u64 *incl)
{
	for (size_t i = 0; i < t->nr_cnodes; i++)
		incl[i] = t->cnodes[i].self;
	/* parents come before their children */
	for (size_t i = t->nr_cnodes; i-- > 0;)
		if (t->cnodes[i].parent != TRUTH_NO_NODE)
			incl[t->cnodes[i].parent] += incl[i];
}

struct cct_build {
	struct truth *t;
	const struct raw *r;
	struct elf_image **imgs;
	struct hashidx nidx, bidx;
	/* per raw node */
	u32 *fparent;		/* the node of its call site's function, TRUTH_NO_NODE for a root */
	u64 *entry_func;	/* its own function: the symbol of its entry block, or that block */
	u32 *entry_obj;
	u32 *entry_node;
};

struct fkey {
	u32 thread, parent, obj, pad;	/* hashed whole: no padding left undefined */
	u64 func;
};

static u64 fkey_hash(const struct fkey *k)
{
	return hashidx__hash(k, sizeof(*k), 0x5cc7);
}

static bool fkey_eq(const void *key, u32 pos, void *ctx)
{
	const struct fkey *k = key;
	const struct truth_cnode *n = &((struct cct_build *)ctx)->t->cnodes[pos];

	return n->thread == k->thread && n->parent == k->parent && n->obj == k->obj && n->func == k->func;
}

/* the function block id runs in: its symbol's address, or 0 if it has none */
static u64 block_func(const struct cct_build *c, u64 id, u32 *obj)
{
	const struct raw_block *b = &c->r->blocks[id];
	const struct elf_func *f;

	*obj = b->obj;
	if (b->obj == TRUTH_NO_OBJECT || !b->addrs)
		return 0;
	f = elf_image__func_at(c->imgs[b->obj], b->addrs[0]);
	/* a sizeless symbol (_init) does not reach into the next section (.plt) */
	if (f && !f->size && elf_image__section_end(c->imgs[b->obj], f->addr) !=
			     elf_image__section_end(c->imgs[b->obj], b->addrs[0]))
		return 0;
	return f ? f->addr : 0;
}

/* the node of function (obj, func) under parent; created with kind if new */
static s64 cct_fnode(struct cct_build *c, u32 thread, u32 parent, u32 obj, u64 func, u32 kind)
{
	struct truth *t = c->t;
	struct fkey k = { thread, parent, obj, 0, func };
	u64 h = fkey_hash(&k);
	s64 pos = hashidx__find(&c->nidx, h, &k, fkey_eq, c);

	if (pos >= 0)
		return pos;
	if (array__reserve((void **)&t->cnodes, &t->cap_cnodes, t->nr_cnodes + 1, sizeof(*t->cnodes)) ||
	    hashidx__insert(&c->nidx, h, t->nr_cnodes))
		return -ENOMEM;
	t->cnodes[t->nr_cnodes] = (struct truth_cnode){ .thread = thread, .parent = parent, .obj = obj,
							.kind = kind, .func = func };
	return t->nr_cnodes++;
}

struct bkey {
	u32 node, obj;
	u64 vaddr;
};

static bool bkey_eq(const void *key, u32 pos, void *ctx)
{
	const struct bkey *k = key;
	const struct truth_cblock *b = &((struct cct_build *)ctx)->t->cblocks[pos];

	return b->node == k->node && b->obj == k->obj && b->vaddr == k->vaddr;
}

static int cct_add_block(struct cct_build *c, u32 node, u64 id, u64 count)
{
	const struct raw_block *rb = &c->r->blocks[id];
	struct truth *t = c->t;
	struct bkey k = { node, rb->obj, rb->addrs ? rb->addrs[0] : rb->vaddr };
	u64 h = hashidx__hash(&k, sizeof(k), 0xb10c), n = count * (rb->addrs ? rb->kept : rb->ninsns);
	s64 pos = hashidx__find(&c->bidx, h, &k, bkey_eq, c);

	if (pos < 0) {
		if (array__reserve((void **)&t->cblocks, &t->cap_cblocks, t->nr_cblocks + 1,
				   sizeof(*t->cblocks)) || hashidx__insert(&c->bidx, h, t->nr_cblocks))
			return -ENOMEM;
		pos = t->nr_cblocks++;
		t->cblocks[pos] = (struct truth_cblock){ node, k.obj, k.vaddr, 0 };
	}
	t->cblocks[pos].insns += n;
	t->cnodes[node].self += n;
	return 0;
}

/* the node in raw frame rn for function (obj, func): the frame's own function (also for code
 * without a symbol, func 0), or one it jumped to (a tail call), which takes the frame's place
 * under the same caller */
static s64 cct_frame_fnode(struct cct_build *c, u64 rn, u32 obj, u64 func)
{
	if (!func || (obj == c->entry_obj[rn] && func == c->entry_func[rn]))
		return c->entry_node[rn];
	return cct_fnode(c, c->r->cnodes[rn].thread, c->fparent[rn], obj, func, CCT_TAIL);
}

static int cct_build(const struct raw *r, struct elf_image **imgs, struct truth *t)
{
	struct cct_build c = { .t = t, .r = r, .imgs = imgs };
	size_t n = r->nr_cnodes ? r->nr_cnodes : 1;
	int err = -ENOMEM;

	c.fparent = calloc(n, sizeof(*c.fparent));
	c.entry_func = calloc(n, sizeof(*c.entry_func));
	c.entry_obj = calloc(n, sizeof(*c.entry_obj));
	c.entry_node = calloc(n, sizeof(*c.entry_node));
	if (!c.fparent || !c.entry_func || !c.entry_obj || !c.entry_node)
		goto cleanup;
	for (size_t i = 0; i < r->nr_cnodes; i++) {
		const struct raw_cnode *rn = &r->cnodes[i];
		const struct raw_block *eb = &r->blocks[rn->entry];
		static const u32 kinds[] = { CCT_ROOT, CCT_CALL, CCT_SIGNAL };
		s64 fp = TRUTH_NO_NODE, en;

		c.entry_func[i] = block_func(&c, rn->entry, &c.entry_obj[i]);
		if (!c.entry_func[i])
			c.entry_func[i] = eb->addrs ? eb->addrs[0] : eb->vaddr;
		if (rn->parent >= 0) {
			u32 sobj;
			u64 sf = block_func(&c, rn->site, &sobj);

			fp = cct_frame_fnode(&c, rn->parent, sobj, sf);
			if (fp < 0)
				goto cleanup;
		}
		c.fparent[i] = fp;
		en = cct_fnode(&c, rn->thread, fp, c.entry_obj[i], c.entry_func[i], kinds[rn->kind]);
		if (en < 0)
			goto cleanup;
		c.entry_node[i] = en;
		if (t->cnodes[en].kind == CCT_TAIL)
			t->cnodes[en].kind = kinds[rn->kind];
		t->cnodes[en].calls += rn->calls;
	}
	for (size_t i = 0; i < r->nr_cblocks; i++) {
		const struct raw_cct *cb = &r->cblocks[i];
		u32 obj;
		u64 f = block_func(&c, cb->b, &obj);
		s64 node = cct_frame_fnode(&c, cb->node, obj, f);

		if (node < 0 || cct_add_block(&c, node, cb->b, cb->count))
			goto cleanup;
	}
	/* a jump onto a function's first instruction from another function enters it */
	for (size_t i = 0; i < r->nr_cjumps; i++) {
		const struct raw_cct *cj = &r->cjumps[i];
		const struct raw_block *db = &r->blocks[cj->b];
		u32 dobj, sobj;
		u64 df = block_func(&c, cj->b, &dobj), sf = block_func(&c, cj->a, &sobj);
		s64 node;

		if (!df || !db->addrs || db->addrs[0] != df || (sf == df && sobj == dobj))
			continue;
		node = cct_frame_fnode(&c, cj->node, dobj, df);
		if (node < 0)
			goto cleanup;
		t->cnodes[node].calls += cj->count;
	}
	if (t->nr_cblocks > 1)
		qsort(t->cblocks, t->nr_cblocks, sizeof(*t->cblocks), truth_cblock__cmp);
	t->meta.cct = 1;
	err = 0;
cleanup:
	free(c.fparent);
	free(c.entry_func);
	free(c.entry_obj);
	free(c.entry_node);
	hashidx__free(&c.nidx);
	hashidx__free(&c.bidx);
	return err;
}

/* compact: the instructions of it, sorted, become the truth's; equal edges merge */
static void compact(struct truth *t, struct insn_table *it)
{
	size_t o = 0;

	t->insns = it->insns;
	t->nr_insns = it->nr;
	t->cap_insns = it->cap;
	it->insns = NULL;
	if (t->nr_insns > 1)
		qsort(t->insns, t->nr_insns, sizeof(*t->insns), truth_insn__cmp);
	if (t->nr_edges > 1)
		qsort(t->edges, t->nr_edges, sizeof(*t->edges), truth_edge__cmp);
	for (size_t j = 0; j < t->nr_edges; j++) {
		if (o && !truth_edge__cmp(&t->edges[o - 1], &t->edges[j]))
			t->edges[o - 1].count += t->edges[j].count;
		else
			t->edges[o++] = t->edges[j];
	}
	t->nr_edges = o;
}

int truth__from_raw_pmus(int raw_fd, const char *name, struct truth **out, struct profile **vps,
			 size_t nvp)
{
	struct elf_image **imgs = NULL;
	struct insn_table it = {};
	struct raw r = {};
	struct disasm *d = NULL;
	struct truth *t = NULL;
	size_t nr_objs = 0;
	int err;

	*out = NULL;
	err = raw_parse(raw_fd, name, &r);
	if (err)
		goto cleanup;
	if (r.oom) {
		err = fail(-ENOMEM, "the reference collector ran out of memory: counts are incomplete");
		goto cleanup;
	}
	d = disasm__new();
	if (!d) {
		err = -errno;
		goto cleanup;
	}
	t = truth__new();
	if (!t) {
		err = -ENOMEM;
		goto cleanup;
	}
	t->meta.threads = r.threads;
	t->meta.edges_off = r.edges_off;
	t->meta.cct_unmatched_rets = r.cstats[0];
	t->meta.cct_longjmps = r.cstats[1];
	t->meta.cct_unwinds = r.cstats[2];
	t->meta.cct_signals = r.cstats[3];
	t->meta.cct_sigreturns = r.cstats[4];
	err = resolve_objects(&r, t, &imgs);
	nr_objs = t->nr_objects;
	if (err)
		goto cleanup;

	err = count_insns(&r, imgs, d, t, &it);
	if (!err)
		err = add_edges(&r, imgs, d, t, &it);
	if (!err && r.in_cct)
		err = cct_build(&r, imgs, t);
	/* the plugin writes a line per virtual PMU, samples or not */
	if (!err && nvp && (size_t)r.nr_pmus != nvp)
		err = fail(-EINVAL, "%s has %d virtual PMUs' samples, not the %zu asked for", name,
			   r.nr_pmus, nvp);
	for (size_t k = 0; k < nvp && !err; k++) {
		bool any = false;

		for (size_t i = 0; i < r.nr_v && !any; i++)
			any = r.v[i].pmu == (int)k;
		if (!any)
			warning("virtual PMU %zu (%s, period %lld) took no samples", k, r.pmus[k].event,
				r.pmus[k].period);
		err = vpmu_profile(&r, k, imgs, t, vps[k]);
	}
	if (err)
		goto cleanup;
	compact(t, &it);
	*out = t;
	t = NULL;
cleanup:
	for (size_t i = 0; i < nr_objs; i++)
		elf_image__close(imgs[i]);
	free(imgs);
	free(it.insns);
	hashidx__free(&it.idx);
	disasm__free(d);
	raw_free(&r);
	truth__free(t);
	return err;
}

void truth__drop_object(struct truth *t, u32 obj)
{
	size_t o = 0;

	if (obj >= t->nr_objects)
		return;
	for (size_t i = 0; i < t->nr_insns; i++) {
		if (t->insns[i].obj == obj)
			t->meta.total_insns -= t->insns[i].count;
		else
			t->insns[o++] = t->insns[i];
	}
	t->nr_insns = o;
	o = 0;
	for (size_t i = 0; i < t->nr_edges; i++)
		if (t->edges[i].src_obj != obj && t->edges[i].dst_obj != obj)
			t->edges[o++] = t->edges[i];
	t->nr_edges = o;
	o = 0;
	for (size_t i = 0; i < t->nr_cblocks; i++) {
		if (t->cblocks[i].obj == obj)
			t->cnodes[t->cblocks[i].node].self -= t->cblocks[i].insns;
		else
			t->cblocks[o++] = t->cblocks[i];
	}
	t->nr_cblocks = o;
	/* the object stays listed (indices must not move) but owns nothing */
}
