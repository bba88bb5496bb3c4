// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Flame graphs: the frame tree, its narrow frames merged, the HTML page and the SVG. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "report/callchain.h"
#include "report/flamegraph.h"
#include "report/hist.h"
#include "hsbpf.h"

/* the page (user/report/flamegraph_page.html): its script reads the data put at its marker */
extern const char flame_page[];
__asm__(".section .rodata\n"
	".global flame_page\n"
	"flame_page:\n"
	".incbin \"user/report/flamegraph_page.html\"\n"
	".byte 0\n"
	".previous\n");
#define PAGE_MARKER "@@DATA@@"

static const char *const kind_names[FLAME_NR_KINDS] = {
	[FLAME_ROOT] = "root", [FLAME_USER] = "user", [FLAME_KERNEL] = "kernel", [FLAME_JIT] = "jit",
	[FLAME_INLINED] = "inlined", [FLAME_PROCESS] = "process", [FLAME_OBJECT] = "object",
	[FLAME_MERGED] = "merged", [FLAME_OFFCPU] = "offcpu", [FLAME_PYTHON] = "python",
};

const char *flame__kind_name(enum flame_kind k)
{
	return k < FLAME_NR_KINDS ? kind_names[k] : "?";
}

enum flame_kind flame__kind(const char *dso, bool kernel)
{
	const char *base;

	if (kernel)
		return FLAME_KERNEL;
	if (!dso)
		return FLAME_USER;
	if (!strcmp(dso, "[python]"))
		return FLAME_PYTHON;
	base = path__base(dso);
	if (!strncmp(dso, "[JIT]", 5) || !strncmp(dso, "//anon", 6) || !strncmp(dso, "[anon", 5) || !strncmp(dso, "memfd:", 6) ||
	    !strncmp(dso, "/memfd:", 7) || !strncmp(base, "jitted-", 7) ||
	    (!strncmp(base, "perf-", 5) && strstr(base, ".map")))
		return FLAME_JIT;
	return FLAME_USER;
}

/* ---- the tree ---- */

static bool str_eq(const void *key, u32 pos, void *ctx)
{
	const struct flame_tree *t = ctx;

	return !strcmp(t->strs[pos], key);
}

static s64 intern(struct flame_tree *t, const char *s)
{
	u64 h;
	s64 i;

	if (!s || !*s)
		return 0;
	h = hashidx__hash_str(s, 0);
	i = hashidx__find(&t->str_idx, h, s, str_eq, t);
	if (i >= 0)
		return i;
	if (array__reserve((void **)&t->strs, &t->cap_strs, t->nr_strs + 1, sizeof(*t->strs)))
		return -ENOMEM;
	t->strs[t->nr_strs] = strdup(s);
	if (!t->strs[t->nr_strs] || hashidx__insert(&t->str_idx, h, t->nr_strs)) {
		free(t->strs[t->nr_strs]);
		return -ENOMEM;
	}
	return t->nr_strs++;
}

struct node_key {
	u32 parent, name, dso;
	u8 kind;
};

static u64 node_hash(const struct node_key *k)
{
	return hashidx__hash(&k->kind, 1, hashidx__hash_u64(((u64)k->parent << 32) | k->name,
							     hashidx__hash_u64(k->dso, 0)));
}

static bool node_eq(const void *key, u32 pos, void *ctx)
{
	const struct node_key *k = key;
	const struct flame_node *n = &((const struct flame_tree *)ctx)->nodes[pos];

	return n->parent == k->parent && n->name == k->name && n->dso == k->dso && n->kind == k->kind;
}

/* the child of parent with that name, object and kind, made when new: its index or -ENOMEM */
static s64 child(struct flame_tree *t, u32 parent, u32 name, u32 dso, u8 kind)
{
	struct node_key k = { .parent = parent, .name = name, .dso = dso, .kind = kind };
	u64 h = node_hash(&k);
	s64 i = hashidx__find(&t->node_idx, h, &k, node_eq, t);
	struct flame_node *p;

	if (i >= 0)
		return i;
	if (array__reserve((void **)&t->nodes, &t->cap, t->nr + 1, sizeof(*t->nodes)) ||
	    hashidx__insert(&t->node_idx, h, t->nr))
		return -ENOMEM;
	p = &t->nodes[parent];
	t->nodes[t->nr] = (struct flame_node){
		.name = name, .dso = dso, .kind = kind, .parent = parent, .depth = p->depth + 1,
		.next = p->first_child,
	};
	p->first_child = t->nr + 1;
	if (p->depth + 1 > t->max_depth)
		t->max_depth = p->depth + 1;
	return t->nr++;
}

struct flame_tree *flame__new(bool diff)
{
	struct flame_tree *t = calloc(1, sizeof(*t));

	if (!t)
		goto nomem;
	t->diff = diff;
	if (array__reserve((void **)&t->strs, &t->cap_strs, 2, sizeof(*t->strs)) ||
	    array__reserve((void **)&t->nodes, &t->cap, 1, sizeof(*t->nodes)))
		goto nomem;
	t->strs[0] = strdup("");
	if (!t->strs[0])
		goto nomem;
	t->nr_strs = 1;
	t->nodes[0] = (struct flame_node){ .parent = UINT32_MAX, .kind = FLAME_ROOT };
	t->nr = 1;
	if (intern(t, "all") != 1)
		goto nomem;
	t->nodes[0].name = 1;
	return t;
nomem:
	flame__free(t);
	errno = ENOMEM;
	return NULL;
}

void flame__free(struct flame_tree *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nr_strs; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->nodes);
	hashidx__free(&t->str_idx);
	hashidx__free(&t->node_idx);
	free(t);
}

int flame__add_stack(struct flame_tree *t, const struct flame_frame *f, u32 nr, u64 count, int side)
{
	u32 at = 0;

	t->nodes[0].count[side] += count;
	for (u32 i = 0; i < nr; i++) {
		s64 name = intern(t, f[i].name ? f[i].name : "[unknown]");
		s64 dso = name < 0 ? name : intern(t, f[i].dso);
		s64 c = dso < 0 ? dso : child(t, at, name, dso, f[i].kind);

		if (c < 0)
			return -ENOMEM;
		t->nodes[c].count[side] += count;
		at = c;
	}
	return 0;
}

/* a frame's name as the graph shows it: unresolved code by its object */
static const char *frame_name(const char *sym, const char *dso, char *buf, size_t size)
{
	if (sym && strcmp(sym, "[unknown]"))
		return sym;
	snprintf(buf, size, "[unknown] (%s)", dso ? path__base(dso) : "?");
	return buf;
}

static int add_stacks(struct flame_tree *t, const struct profile *p, struct symbolizer *sy, int side)
{
	struct callchain *cc = callchain__new(p, sy);
	struct flame_frame *f = NULL;
	char (*names)[160] = NULL;
	size_t cap = 0;
	int err = 0;

	if (!cc)
		return -ENOMEM;
	for (size_t i = 0; i < cc->nr_stacks && !err; i++) {
		const struct callchain_stack *st = &cc->stacks[i];
		const struct profile_stack_sample *ss = &p->stack_samples[st->sample];
		const char *comm = symbolizer__comm(sy, ss->pid, ss->exec_ns);
		bool off = ss->flags & HSBPF_KEY_OFFCPU;
		u32 n = 0;

		/* the process, the frames from the outermost, and [no stack] for a lost one */
		if (st->nr + 2 > cap) {
			void *more = NULL;

			/* names has as many entries as f */
			if (array__reserve((void **)&f, &cap, st->nr + 2, sizeof(*f)) ||
			    !(more = realloc(names, cap * sizeof(*names)))) {
				err = -ENOMEM;
				break;
			}
			names = more;
		}
		f[n++] = (struct flame_frame){ .name = comm && *comm ? comm : "[unknown]",
					      .kind = FLAME_PROCESS };
		for (u32 j = st->nr; j-- > 0;) {
			const struct callchain_frame *cf = &cc->frames[st->first + j];

			f[n] = (struct flame_frame){
				.name = frame_name(cf->sym, cf->dso, names[n], sizeof(names[n])),
				.dso = cf->dso,
				.kind = off ? FLAME_OFFCPU : cf->inlined ? FLAME_INLINED :
					      flame__kind(cf->dso, cf->kernel),
			};
			n++;
		}
		if (!st->nr) {
			f[n++] = (struct flame_frame){ .name = "[no stack]", .kind = FLAME_MERGED };
			t->lost_stacks[side] += st->count;
		}
		err = flame__add_stack(t, f, n, st->count, side);
	}
	free(names);
	free(f);
	callchain__free(cc);
	return err;
}

/* without stacks: object, then function */
static int add_flat(struct flame_tree *t, const struct profile *p, struct symbolizer *sy, int side)
{
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct profile_sample *s = &p->samples[i];
		struct sym_result r;
		char obj[160], name[160];
		int err;

		symbolizer__resolve(sy, s, &r);
		snprintf(obj, sizeof(obj), "%s", r.dso ? path__base(r.dso) : "[unknown]");
		struct flame_frame f[2] = {
			{ .name = obj, .dso = r.dso, .kind = FLAME_OBJECT },
			{ .name = frame_name(r.sym, r.dso, name, sizeof(name)), .dso = r.dso,
			  .kind = s->flags & HSBPF_KEY_OFFCPU ? FLAME_OFFCPU : flame__kind(r.dso, r.kernel) },
		};
		err = flame__add_stack(t, f, 2, s->count, side);
		if (err)
			return err;
	}
	return 0;
}

int flame__add_profile(struct flame_tree *t, const struct profile *p, struct symbolizer *sy, int side)
{
	int err;

	symbolizer__skip_lines(sy);
	symbolizer__skip_call_files(sy);
	err = p->nr_stack_samples ? add_stacks(t, p, sy, side) : add_flat(t, p, sy, side);
	if (err)
		error("cannot build the flame graph: %s", strerror(-err));
	return err;
}

/* ---- differences ---- */

int flame__diff(struct flame_tree *t, const struct diff_basis *basis)
{
	struct diff_stat *st = malloc(t->nr * sizeof(*st));
	u64 na = t->nodes[0].count[0], nb = t->nodes[0].count[1];
	int err;

	if (!st)
		return -ENOMEM;
	t->basis = *basis;
	/* the same comparison as hsbpf diff's table, frame by frame */
	for (size_t i = 0; i < t->nr; i++)
		profile_diff__compare(basis, t->nodes[i].count[0], na, t->nodes[i].count[1], nb, &st[i]);
	err = profile_diff__correct(st, t->nr);
	for (size_t i = 0; !err && i < t->nr; i++) {
		struct flame_node *n = &t->nodes[i];

		n->delta = st[i].delta;
		n->lo = st[i].lo;
		n->hi = st[i].hi;
		n->q = st[i].q;
		n->change = st[i].significant ? (st[i].delta > 0 ? 1 : -1) : 0;
	}
	free(st);
	return err;
}

/* ---- merging narrow frames ---- */

struct merge_ctx {
	const struct flame_tree *old;
	struct flame_tree *t;
	u64 min;		/* samples of the drawn side a frame needs */
	int side;
	u32 *kids;		/* scratch: children indices, one run per level */
	size_t nr_kids, cap_kids;
};

static const struct flame_tree *sort_tree;

static int cmp_kid(const void *x, const void *y)
{
	const struct flame_node *a = &sort_tree->nodes[*(const u32 *)x];
	const struct flame_node *b = &sort_tree->nodes[*(const u32 *)y];
	int c = strcmp(sort_tree->strs[a->name], sort_tree->strs[b->name]);

	if (!c)
		c = strcmp(sort_tree->strs[a->dso], sort_tree->strs[b->dso]);
	return c ? c : (int)a->kind - (int)b->kind;
}

static u64 subtree_size(const struct flame_tree *t, u32 n)
{
	u64 nr = 1;

	for (u32 c = t->nodes[n].first_child; c; c = t->nodes[c - 1].next)
		nr += subtree_size(t, c - 1);
	return nr;
}

/* copy old node `from` under new node `to`'s children, in preorder */
static int copy_children(struct merge_ctx *m, u32 from, u32 to)
{
	const struct flame_tree *old = m->old;
	size_t first = m->nr_kids, nr = 0;
	struct flame_node merged = { .kind = FLAME_MERGED };
	s64 last = -1;
	int err = 0;

	for (u32 c = old->nodes[from].first_child; c; c = old->nodes[c - 1].next) {
		if (array__reserve((void **)&m->kids, &m->cap_kids, m->nr_kids + 1, sizeof(*m->kids)))
			return -ENOMEM;
		m->kids[m->nr_kids++] = c - 1;
		nr++;
	}
	sort_tree = old;
	qsort(m->kids + first, nr, sizeof(*m->kids), cmp_kid);
	for (size_t i = 0; i < nr && !err; i++) {
		u32 k = m->kids[first + i];
		const struct flame_node *o = &old->nodes[k];
		struct flame_node *n;

		if (o->count[m->side] < m->min) {
			merged.merged++;
			merged.count[0] += o->count[0];
			merged.count[1] += o->count[1];
			m->t->merged_frames += subtree_size(old, k);
			m->t->merged_samples[0] += o->count[0];
			m->t->merged_samples[1] += o->count[1];
			continue;
		}
		if (array__reserve((void **)&m->t->nodes, &m->t->cap, m->t->nr + 1, sizeof(*m->t->nodes))) {
			err = -ENOMEM;
			break;
		}
		n = &m->t->nodes[m->t->nr];
		*n = *o;
		n->parent = to;
		n->first_child = n->next = 0;
		if (last >= 0)
			m->t->nodes[last].next = m->t->nr + 1;
		else
			m->t->nodes[to].first_child = m->t->nr + 1;
		last = m->t->nr++;
		err = copy_children(m, k, last);
	}
	m->nr_kids = first;
	if (err || !merged.merged)
		return err;
	if (array__reserve((void **)&m->t->nodes, &m->t->cap, m->t->nr + 1, sizeof(*m->t->nodes)))
		return -ENOMEM;
	{
		char name[48];
		s64 s;

		snprintf(name, sizeof(name), "[%u merged]", merged.merged);
		s = intern(m->t, name);
		if (s < 0)
			return -ENOMEM;
		merged.name = s;
	}
	merged.parent = to;
	merged.depth = m->t->nodes[to].depth + 1;
	merged.q = 1;
	if (last >= 0)
		m->t->nodes[last].next = m->t->nr + 1;
	else
		m->t->nodes[to].first_child = m->t->nr + 1;
	m->t->nodes[m->t->nr++] = merged;
	return 0;
}

int flame__merge_narrow(struct flame_tree *t, double min_share)
{
	struct flame_tree old = *t;
	struct merge_ctx m = { .old = &old, .t = t, .side = t->diff ? 1 : 0 };
	int err;

	m.min = (u64)ceil(min_share * t->nodes[0].count[m.side]);
	/* the new tree: the same strings (and more), fresh nodes in preorder, no lookup index */
	t->nodes = malloc(sizeof(*t->nodes) * (old.nr + 1));
	if (!t->nodes) {
		t->nodes = old.nodes;
		return -ENOMEM;
	}
	t->cap = old.nr + 1;
	t->nodes[0] = old.nodes[0];
	t->nodes[0].first_child = 0;
	t->nr = 1;
	memset(&t->node_idx, 0, sizeof(t->node_idx));
	err = copy_children(&m, 0, 0);
	free(m.kids);
	free(old.nodes);
	hashidx__free(&old.node_idx);
	t->max_depth = 0;
	for (size_t i = 0; i < t->nr; i++)
		if (t->nodes[i].depth > t->max_depth)
			t->max_depth = t->nodes[i].depth;
	return err;
}

/* ---- writing ---- */

/* a JSON string that is also safe inside <script>: no "</script>" can close it */
static void json_str(const char *s, FILE *out)
{
	fputc('"', out);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(out, "\\%c", *c);
		else if (*c < 0x20 || *c == '<' || *c == '>' || *c == '&' || *c == 0x7f)
			fprintf(out, "\\u%04x", *c);
		else
			fputc(*c, out);
	}
	fputc('"', out);
}

/* the tree has Python functions: the legend shows their colour */
static bool has_python(const struct flame_tree *t)
{
	for (size_t i = 0; i < t->nr; i++)
		if (t->nodes[i].kind == FLAME_PYTHON)
			return true;
	return false;
}

static void write_data(const struct flame_tree *t, const struct flame_opts *o, FILE *out)
{
	int side = t->diff ? 1 : 0;

	fputs("{\"title\":", out);
	json_str(o->title ? o->title : "", out);
	fputs(",\"subtitle\":", out);
	json_str(o->subtitle ? o->subtitle : "", out);
	fprintf(out, ",\"diff\":%d,\"inverted\":%d,\"time\":%d,\"python\":%d,\"method\":", t->diff,
		o->inverted, t->time, has_python(t));
	json_str(profile_diff__method(&t->basis), out);
	fputs(",\"question\":", out);
	json_str(profile_diff__question(&t->basis), out);
	fprintf(out, ",\"rates\":%d,\"exposure\":[%.9g,%.9g]", t->diff && t->basis.compare == DIFF_RATES,
		t->basis.exposure[0], t->basis.exposure[1]);
	fprintf(out, ",\"fdr\":%g,\"total\":[%" PRIu64 ",%" PRIu64 "],\"lost\":[%" PRIu64 ",%" PRIu64 "]",
		DIFF_FDR, t->nodes[0].count[0], t->nodes[0].count[1], t->lost_stacks[0], t->lost_stacks[1]);
	fprintf(out, ",\"merged\":{\"frames\":%" PRIu64 ",\"samples\":[%" PRIu64 ",%" PRIu64 "],"
		"\"minpx\":%g,\"width\":%d}", t->merged_frames, t->merged_samples[0],
		t->merged_samples[1], FLAME_MIN_PX, FLAME_WIDTH_PX);
	fputs(",\"kinds\":[", out);
	for (int k = 0; k < FLAME_NR_KINDS; k++)
		fprintf(out, "%s\"%s\"", k ? "," : "", kind_names[k]);
	fputs("],\n\"s\":[", out);
	for (size_t i = 0; i < t->nr_strs; i++) {
		if (i)
			fputc(',', out);
		json_str(t->strs[i], out);
	}
#define ARRAY(key, fmt, expr)							\
	do {									\
		fputs("],\n\"" key "\":[", out);				\
		for (size_t i = 0; i < t->nr; i++) {				\
			const struct flame_node *n = &t->nodes[i];		\
			fprintf(out, i ? "," fmt : fmt, expr);			\
		}								\
	} while (0)
	ARRAY("n", "%u", n->name);
	ARRAY("o", "%u", n->dso);
	ARRAY("k", "%u", (unsigned)n->kind);
	ARRAY("d", "%u", n->depth);
	ARRAY("c", "%" PRIu64, n->count[side]);
	if (t->diff) {
		ARRAY("b", "%" PRIu64, n->count[0]);
		ARRAY("g", "%d", n->change);
		ARRAY("q", "%.3g", n->q);
		/* shares in percentage points, rates in samples per second (unit of work) */
		ARRAY("lo", "%.4g", (t->basis.compare == DIFF_RATES ? 1 : 100) * n->lo);
		ARRAY("hi", "%.4g", (t->basis.compare == DIFF_RATES ? 1 : 100) * n->hi);
	}
#undef ARRAY
	fputs("]}", out);
}

int flame__write_html(const struct flame_tree *t, const struct flame_opts *o, FILE *out)
{
	const char *mark = strstr(flame_page, PAGE_MARKER);

	if (!mark)
		return -EINVAL;		/* the build embedded a page without its marker */
	fwrite(flame_page, 1, mark - flame_page, out);
	write_data(t, o, out);
	fputs(mark + strlen(PAGE_MARKER), out);
	return fflush(out) || ferror(out) ? -EIO : 0;
}

/* the SVG: the same frames drawn once, each with its numbers in a tooltip */

static unsigned name_hash(const char *s)
{
	unsigned h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

static void kind_color(const struct flame_tree *t, const struct flame_node *n, char *buf, size_t size)
{
	unsigned v = name_hash(t->strs[n->name]) % 1000;
	static const struct { int hue, span, sat, light; } pal[FLAME_NR_KINDS] = {
		[FLAME_ROOT] = { 0, 0, 0, 85 }, [FLAME_USER] = { 10, 45, 85, 62 },
		[FLAME_KERNEL] = { 195, 30, 60, 66 }, [FLAME_JIT] = { 95, 40, 55, 58 },
		[FLAME_INLINED] = { 170, 20, 55, 62 }, [FLAME_PROCESS] = { 265, 20, 35, 75 },
		[FLAME_OBJECT] = { 40, 10, 30, 78 }, [FLAME_MERGED] = { 0, 0, 0, 72 },
		[FLAME_OFFCPU] = { 228, 30, 70, 74 }, [FLAME_PYTHON] = { 48, 12, 85, 58 },
	};
	int k = n->kind < FLAME_NR_KINDS ? n->kind : FLAME_USER;

	snprintf(buf, size, "hsl(%d,%d%%,%d%%)", pal[k].hue + (int)(v * pal[k].span / 1000),
		 pal[k].sat, pal[k].light);
}

static void diff_color(const struct flame_node *n, double max_delta, char *buf, size_t size)
{
	double f;

	if (!n->change) {
		snprintf(buf, size, "#dddddd");
		return;
	}
	f = max_delta > 0 ? fmin(1, fabs(n->delta) / max_delta) : 1;
	snprintf(buf, size, "hsl(%d,%d%%,%d%%)", n->change > 0 ? 0 : 220, 60 + (int)(35 * f),
		 85 - (int)(35 * f));
}

/* the length of the valid UTF-8 sequence at s, 0 when it is not one */
static int utf8_len(const unsigned char *s)
{
	int n = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 && s[0] >= 0xc2 ? 2 :
		(s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 && s[0] <= 0xf4 ? 4 : 0;

	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* text for XML: markup escaped, control bytes dropped, and a byte that starts no valid UTF-8
 * sequence (names are untrusted bytes) written as U+FFFD, so the document stays well formed */
static void xml_str(const char *s, FILE *out)
{
	for (; *s; s++) {
		if ((unsigned char)*s >= 0x80) {
			int n = utf8_len((const unsigned char *)s);

			if (!n) {
				fputs("\xef\xbf\xbd", out);
				continue;
			}
			fwrite(s, 1, n, out);
			s += n - 1;
			continue;
		}
		if (*s == '<')
			fputs("&lt;", out);
		else if (*s == '>')
			fputs("&gt;", out);
		else if (*s == '&')
			fputs("&amp;", out);
		else if (*s == '"')
			fputs("&quot;", out);
		else if ((unsigned char)*s >= 0x20)
			fputc(*s, out);
	}
}

int flame__write_svg(const struct flame_tree *t, const struct flame_opts *o, FILE *out)
{
	const int row = 16, top = 40, width = FLAME_WIDTH_PX;
	int side = t->diff ? 1 : 0, height = top + (t->max_depth + 1) * row + 30;
	u64 total = t->nodes[0].count[side];
	double *x = calloc(t->nr + 1, sizeof(*x)), *cursor = calloc(t->nr + 1, sizeof(*cursor));
	double max_delta = 0;

	if (!x || !cursor) {
		free(x);
		free(cursor);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->nr; i++)
		if (t->nodes[i].change)
			max_delta = fmax(max_delta, fabs(t->nodes[i].delta));
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\" font-family=\"Verdana, sans-serif\" font-size=\"11\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#fdfdf8\"/>\n<text x=\"%d\" y=\"18\" "
		"text-anchor=\"middle\" font-size=\"15\">", width, height, width, height, width / 2);
	xml_str(o->title ? o->title : "", out);
	fprintf(out, "</text>\n<text x=\"%d\" y=\"33\" text-anchor=\"middle\" fill=\"#555\">", width / 2);
	xml_str(o->subtitle ? o->subtitle : "", out);
	fputs("</text>\n", out);
	for (size_t i = 0; i < t->nr; i++) {
		const struct flame_node *n = &t->nodes[i];
		double w = total ? (double)n->count[side] / total * width : 0;
		int y = o->inverted ? top + n->depth * row : top + (t->max_depth - n->depth) * row;
		char color[48], label[128];

		if (i) {
			x[i] = cursor[n->parent];
			cursor[n->parent] += w;
		}
		cursor[i] = x[i];
		if (w < FLAME_MIN_PX)
			continue;
		if (t->diff)
			diff_color(n, max_delta, color, sizeof(color));
		else
			kind_color(t, n, color, sizeof(color));
		fputs("<g><title>", out);
		xml_str(t->strs[n->name], out);
		if (n->dso && strcmp(t->strs[n->dso], t->strs[n->name])) {
			fputs(" (", out);
			xml_str(t->strs[n->dso], out);
			fputc(')', out);
		}
		if (t->diff && t->basis.compare == DIFF_RATES)
			fprintf(out, "\nbase %" PRIu64 " samples, %.2f per %s; new %" PRIu64 " samples, "
				"%.2f\nchange %+.2f (95%% CI %+.2f to %+.2f), adjusted p %.3g%s",
				n->count[0], n->count[0] / t->basis.exposure[0],
				t->basis.work ? "unit of work" : "s", n->count[1],
				n->count[1] / t->basis.exposure[1], n->delta, n->lo, n->hi, n->q,
				n->change ? ", significant" : "");
		else if (t->diff)
			fprintf(out, "\nbase %" PRIu64 " samples, %.2f%%; new %" PRIu64 " samples, %.2f%%\n"
				"change %+.2f%% (95%% CI %+.2f%% to %+.2f%%), adjusted p %.3g%s",
				n->count[0], 100.0 * n->count[0] / fmax(1, t->nodes[0].count[0]),
				n->count[1], 100.0 * n->count[1] / fmax(1, t->nodes[0].count[1]),
				100 * n->delta, 100 * n->lo, 100 * n->hi, n->q,
				n->change ? ", significant" : "");
		else
			fprintf(out, "\n%" PRIu64 " samples, %.2f%% (95%% CI \u00b1%.2f%%)", n->count[0],
				100.0 * n->count[0] / total, 100 * hist__ci95(n->count[0], total));
		fprintf(out, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
			"rx=\"1\"/>", x[i], y, w, row - 1, color);
		if (w > 30) {
			int chars = (int)(w / 7);
			const char *s = t->strs[n->name];

			int keep = chars > 2 && (int)strlen(s) > chars ? chars - 2 : (int)sizeof(label) - 4;

			/* cut between characters, not inside one */
			while (keep > 0 && keep < (int)strlen(s) && ((unsigned char)s[keep] & 0xc0) == 0x80)
				keep--;
			snprintf(label, sizeof(label), "%.*s%s", keep, s,
				 chars > 2 && (int)strlen(s) > chars ? ".." : "");
			fprintf(out, "<text x=\"%.2f\" y=\"%d\">", x[i] + 3, y + row - 4);
			xml_str(label, out);
			fputs("</text>", out);
		}
		fputs("</g>\n", out);
	}
	fprintf(out, "<text x=\"10\" y=\"%d\" fill=\"#555\">", height - 10);
	if (t->diff) {
		fputs(t->basis.compare == DIFF_RATES ? "red: rate grew" : "red: share grew", out);
		fputs(", blue: shrank, grey: no significant change; compared: ", out);
		xml_str(profile_diff__question(&t->basis), out);
		fputs(" (", out);
		xml_str(profile_diff__method(&t->basis), out);
		fputs("); widths are NEW's", out);
	} else {
		fputs("colour by kind: user (warm), kernel (blue), JIT (green), inlined (cyan)", out);
		if (has_python(t))
			fputs(", Python (gold)", out);
		if (t->time)
			fputs(", off-CPU (indigo); widths are microseconds of time", out);
	}
	if (t->merged_frames)
		fprintf(out, "; %" PRIu64 " frames narrower than %g px merged", t->merged_frames,
			FLAME_MIN_PX);
	fputs("</text>\n</svg>\n", out);
	free(x);
	free(cursor);
	return fflush(out) || ferror(out) ? -EIO : 0;
}
