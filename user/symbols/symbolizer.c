// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Symbol resolution. A sample's mapping comes from its process image in the profile
 * (profile__find_mapping); objects are opened once through libdwfl, which also finds
 * separate debug files by build-id, and checked against the recorded build-id. */
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/stat.h>
#include <unistd.h>
#include "symbols/bblock.h"
#include "symbols/elf_image.h"
#include "symbols/build_id.h"
#include "symbols/demangle.h"
#include "symbols/buildid_cache.h"
#include "symbols/debuginfod.h"
#include "hsbpf.h"
#include "symbols/inline.h"
#include "lib/strset.h"
#include "symbols/symname.h"
#include "symbols/debug_plain.h"
#include "symbols/symbolizer.h"
#include "lib/vdso.h"
#include "unwind/unwind_table.h"

struct dso {
	u32 path;		/* string offset in the profile */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	GElf_Phdr *loads;	/* PT_LOAD headers, to turn file offsets into vaddrs */
	size_t nr_loads;
	bool failed;
	struct elf_image *img;	/* for blocks, opened on demand */
	struct bblock_table *blocks;
	bool blocks_failed;
	struct dso_sym *syms;	/* the module's symbols by address, built on first use */
	size_t nr_syms;
	bool syms_built;
	struct unwind_fde *fdes;	/* stripped code: functions from .eh_frame, on first need */
	size_t nr_fdes;
	bool fdes_built;
	char *file;		/* the build-id cache's copy read instead of path, or NULL */
	struct inlines *inl;	/* its inline scopes, on first need */
	u32 used_at;		/* the symbolizer's generation when last looked up */
};

/* dwfl_module_addrinfo searches the whole symbol table on each call; a table sorted once
 * answers in a binary search, which top needs for thousands of new addresses a second */
struct dso_sym {
	u64 addr;
	u64 size;
	const char *name;	/* in the module's string table, alive until dwfl_end, or interned */
	int bind;		/* STB_*: at one address perf's choice first (symname__cmp) */
	u64 section_end;	/* a sizeless symbol reaches no further than its section */
	u32 index;		/* among equals the first in the table wins, as in dwfl */
};

struct cache_entry {
	u32 path;
	u64 vaddr;
	const char *sym;
	u64 sym_off;
	const char *file;
	int line;
	bool used;
	u8 nr_inl;
	u8 nr_aliases;
	const struct inline_frame *inl;	/* in the symbolizer's inline blocks */
	const char *const *aliases;	/* in the symbolizer's alias blocks */
};

/* inline chains, kept until the symbolizer goes: rows and frames point to them */
struct inline_block {
	struct inline_block *next;
	size_t used;
	struct inline_frame f[1024];
};

/* the other names of symbols' addresses, kept as the inline chains are */
struct alias_block {
	struct alias_block *next;
	size_t used;
	const char *a[1024];
};

#define MAX_ALIASES	16

struct symbolizer {
	const struct profile *p;
	struct dso *dsos;
	size_t nr_dsos, cap_dsos;
	unsigned missing;
	bool want_blocks;
	bool skip_lines;
	bool dwfl_search;	/* look symbols up with dwfl_module_addrinfo (the reference) */
	bool raw_names;		/* --no-demangle */
	bool skip_call_files;	/* inlined calls without their call site's file */
	bool want_inline;
	struct inline_block *inl_blocks;
	struct alias_block *alias_blocks;
	struct cache_entry *cache;	/* direct-mapped: lookups repeat heavily in reports */
	size_t cache_slots;
	struct strset names;		/* symbol and file names the cache points to */
	u32 gen;			/* symbolizer__evict_unused's calls */
	/* the last command looked up: every frame of a stack asks for its process's (a live
	 * profile's new names or forks, or its string table moved, start it over) */
	struct {
		u32 pid;
		u64 exec_ns;
		size_t nr_comms, nr_forks;
		const char *strs;
		const char *comm;
	} last_comm;
};

/* true if a file is there that is not a regular file */
static bool not_regular(const char *dir, const char *sub, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s%s%s%s%s", dir ? dir : "", dir ? "/" : "", sub ? sub : "",
		     sub ? "/" : "", name) >= (int)sizeof(path))
		return false;
	return !stat(path, &st) && !S_ISREG(st.st_mode);
}

/* the places elfutils' standard search opens, for file_name's separate debug file */
static bool debug_search_blocks(const char *file_name, const char *debuglink)
{
	const char *base = path__base(file_name);
	char dir[PATH_MAX], debug_name[NAME_MAX + 8];
	const char *names[4] = { debuglink, debuglink ? path__base(debuglink) : NULL, base, debug_name };

	snprintf(debug_name, sizeof(debug_name), "%s.debug", base);
	snprintf(dir, sizeof(dir), "%.*s", (int)(base == file_name ? 0 : base - 1 - file_name),
		 file_name);
	for (int i = 0; i < 4; i++) {
		if (!names[i])
			continue;
		if (not_regular(base == file_name ? NULL : dir, NULL, names[i]) ||
		    not_regular(dir, ".debug", names[i]) || not_regular(dir, ".dwz", names[i]) ||
		    not_regular("/usr/lib/debug", ".dwz", names[i]))
			return true;
		/* /usr/lib/debug/DIR, then DIR without its first component, and so on */
		for (const char *sub = dir; sub && *sub; sub = strchr(sub + 1, '/'))
			if (not_regular("/usr/lib/debug", sub + (*sub == '/'), names[i]))
				return true;
	}
	return false;
}

/* elfutils opens the separate debug file candidates it looks for (NAME.debug, the debuglink
 * name: next to the object, in its .debug folder, under /usr/lib/debug) without O_NONBLOCK:
 * a FIFO beside an object that a profile names would block the report. Those are looked at
 * first, for the object's path and its real path; a FIFO swapped in between is not covered. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, GElf_Addr base,
			  const char *file_name, const char *debuglink, GElf_Word crc, char **out)
{
	const unsigned char *id;
	char real[PATH_MAX];
	GElf_Addr vaddr;
	int fd, len;

	if (file_name && (debug_search_blocks(file_name, debuglink) ||
			  (realpath(file_name, real) && debug_search_blocks(real, debuglink)))) {
		warning("'%s': a debug file candidate beside it is not a regular file: not searched",
			file_name);
		errno = 0;
		return -1;
	}
	/* its plain copy, made by an earlier report (before libdwfl opens the original: it keeps
	 * the first file it opens) */
	len = dwfl_module_build_id(mod, &id, &vaddr);
	if (len > 0 && (fd = debug_plain__open(id, len, out)) >= 0)
		return fd;
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink, crc, out);
	/* compressed sections: a plain copy for the next reports */
	if (fd >= 0 && len > 0)
		debug_plain__make(fd, id, len);
	/* not on this machine: fetched before (the build-id cache) or from debuginfod */
	if (fd < 0 && (len = dwfl_module_build_id(mod, &id, &vaddr)) > 0) {
		int fetched = debuginfod__find_debuginfo(modname, id, len, out);

		if (fetched >= 0)
			return fetched;
	}
	return fd;
}

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct symbolizer *symbolizer__new(const struct profile *p)
{
	struct symbolizer *sy = calloc(1, sizeof(*sy));

	if (!sy)
		return NULL;
	sy->p = p;
	/* about two slots for each address a report can look up (a live profile, empty at the
	 * start, grows: the most), from 1 K to 16 K: each slot touched is a page of the cache
	 * faulted in, 256 of them for a small report's 1,000 addresses in 16 K slots */
	sy->cache_slots = 1 << 10;
	while (sy->cache_slots < (1 << 14) &&
	       (!p->nr_samples || sy->cache_slots < 2 * (p->nr_samples + p->nr_frames)))
		sy->cache_slots <<= 1;
	sy->cache = calloc(sy->cache_slots, sizeof(*sy->cache));
	if (!sy->cache) {
		free(sy);
		return NULL;
	}
	return sy;
}

static void dso_free(struct dso *d)
{
	inlines__free(d->inl);
	if (d->dwfl)
		dwfl_end(d->dwfl);
	free(d->loads);
	free(d->syms);
	free(d->fdes);
	bblock_table__free(d->blocks);
	elf_image__close(d->img);
	free(d->file);
}

void symbolizer__free(struct symbolizer *sy)
{
	if (!sy)
		return;
	for (size_t i = 0; i < sy->nr_dsos; i++)
		dso_free(&sy->dsos[i]);
	while (sy->inl_blocks) {
		struct inline_block *b = sy->inl_blocks;

		sy->inl_blocks = b->next;
		free(b);
	}
	while (sy->alias_blocks) {
		struct alias_block *b = sy->alias_blocks;

		sy->alias_blocks = b->next;
		free(b);
	}
	strset__free(&sy->names);
	free(sy->dsos);
	free(sy->cache);
	free(sy);
}

unsigned symbolizer__missing(const struct symbolizer *sy)
{
	return sy->missing;
}

void symbolizer__want_blocks(struct symbolizer *sy)
{
	sy->want_blocks = true;
}

void symbolizer__skip_lines(struct symbolizer *sy)
{
	sy->skip_lines = true;
}

void symbolizer__skip_call_files(struct symbolizer *sy)
{
	sy->skip_call_files = true;
}

void symbolizer__use_dwfl_search(struct symbolizer *sy)
{
	sy->dwfl_search = true;
}

const char *symbolizer__intern(struct symbolizer *sy, const char *s)
{
	return strset__intern(&sy->names, s);
}

void symbolizer__want_inline(struct symbolizer *sy)
{
	sy->want_inline = true;
}

void symbolizer__no_demangle(struct symbolizer *sy)
{
	sy->raw_names = true;
}

const char *symbolizer__comm(struct symbolizer *sy, u32 pid, u64 exec_ns)
{
	const struct profile *p = sy->p;

	if (!sy->last_comm.comm || sy->last_comm.pid != pid || sy->last_comm.exec_ns != exec_ns ||
	    sy->last_comm.nr_comms != p->nr_comms || sy->last_comm.nr_forks != p->nr_forks ||
	    sy->last_comm.strs != p->strs.buf) {
		sy->last_comm.pid = pid;
		sy->last_comm.strs = p->strs.buf;
		sy->last_comm.exec_ns = exec_ns;
		sy->last_comm.nr_comms = p->nr_comms;
		sy->last_comm.nr_forks = p->nr_forks;
		sy->last_comm.comm = profile__comm(p, pid, exec_ns);
	}
	return sy->last_comm.comm;
}

static const struct bblock_table *dso_blocks(struct symbolizer *sy, struct dso *d)
{
	if (d->blocks || d->blocks_failed)
		return d->blocks;
	d->img = elf_image__open(d->file ? d->file : profile__str(sy->p, d->path));
	d->blocks = d->img ? bblock_table__build(d->img) : NULL;
	d->blocks_failed = !d->blocks;
	if (d->blocks_failed)
		warning("cannot build the basic blocks of '%s': %s", profile__str(sy->p, d->path),
			file__strerror(errno));
	return d->blocks;
}

/* ---- objects ---- */

/* file (the object's path, or its copy in the build-id cache) as the object the mapping
 * names: 0, or -errno with what went wrong in why */
static int open_dso_file(struct dso *d, const struct profile_mapping *m, const char *name,
			 const char *file, char *why, size_t why_size)
{
	const unsigned char *id;
	GElf_Addr bias, vaddr;
	size_t nph;
	Elf *elf;
	int len, fd;

	/* a path from a profile: never a FIFO or a device */
	fd = file__open_regular(file);
	if (fd < 0) {
		snprintf(why, why_size, "cannot open '%s': %s", file, file__strerror(fd));
		return fd;
	}
	d->dwfl = dwfl_begin(&offline_callbacks);
	if (!d->dwfl) {
		close(fd);
		return -ENOMEM;
	}
	dwfl_report_begin(d->dwfl);
	d->mod = dwfl_report_elf(d->dwfl, name, file, fd, 0, true);	/* owns fd if it succeeds */
	dwfl_report_end(d->dwfl, NULL, NULL);
	if (!d->mod) {
		close(fd);
		snprintf(why, why_size, "cannot open '%s': %s", file, dwfl_errmsg(-1));
		return -ENOENT;
	}
	len = dwfl_module_build_id(d->mod, &id, &vaddr);
	if (m->build_id_size && len > 0 &&
	    ((size_t)len < m->build_id_size || memcmp(id, m->build_id, m->build_id_size))) {
		char want[2 * BUILD_ID_MAX + 1], have[2 * BUILD_ID_MAX + 1];

		build_id__hex(m->build_id, m->build_id_size, want, sizeof(want));
		build_id__hex(id, len, have, sizeof(have));
		snprintf(why, why_size, "'%s' has build-id %s, the recording saw %s: the file "
			 "changed since", file, have, want);
		return -ESTALE;
	}
	elf = dwfl_module_getelf(d->mod, &bias);
	if (!elf || elf_getphdrnum(elf, &nph)) {
		snprintf(why, why_size, "'%s' has no program headers", file);
		return -EINVAL;
	}
	d->loads = calloc(nph ? nph : 1, sizeof(*d->loads));
	if (!d->loads)
		return -ENOMEM;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD)
			d->loads[d->nr_loads++] = ph;
	}
	return 0;
}

static void close_dso_file(struct dso *d)
{
	inlines__free(d->inl);
	d->inl = NULL;
	if (d->dwfl)
		dwfl_end(d->dwfl);
	free(d->loads);
	d->dwfl = NULL;
	d->mod = NULL;
	d->loads = NULL;
	d->nr_loads = 0;
}

/* the object at its path, or else its copy in the build-id cache (deleted or changed since
 * the recording) */
static int open_dso(struct symbolizer *sy, struct dso *d, const struct profile_mapping *m)
{
	const char *path = profile__str(sy->p, d->path);
	char why[PATH_MAX + 160], cached[PATH_MAX];
	struct utsname u;
	int err;

	/* the vDSO is the kernel's: ours, when the recording ran on this kernel */
	if (!strcmp(path, "[vdso]")) {
		if (uname(&u) || strcmp(u.release, sy->p->meta.kernel) || vdso__path(cached, sizeof(cached)) ||
		    open_dso_file(d, m, path, cached, why, sizeof(why))) {
			close_dso_file(d);
			return -ENOENT;
		}
		d->file = strdup(cached);
		return d->file ? 0 : -ENOMEM;
	}
	err = open_dso_file(d, m, path, path, why, sizeof(why));
	if (!err)
		return 0;
	close_dso_file(d);
	if (m->build_id_size &&
	    !buildid_cache__find(buildid_cache__default_dir(), m->build_id, m->build_id_size,
				 BUILDID_CACHE_ELF, cached, sizeof(cached))) {
		char why2[PATH_MAX + 160];

		if (!open_dso_file(d, m, path, cached, why2, sizeof(why2))) {
			d->file = strdup(cached);
			debug("'%s': read from the build-id cache ('%s')", path, cached);
			return d->file ? 0 : -ENOMEM;
		}
		close_dso_file(d);
	}
	if (m->build_id_size && debuginfod__enabled()) {
		char why2[PATH_MAX + 160], *fetched = NULL;
		int fd = debuginfod__find_executable(path, m->build_id, m->build_id_size, &fetched);

		if (fd >= 0) {
			close(fd);
			if (!open_dso_file(d, m, path, fetched, why2, sizeof(why2))) {
				d->file = fetched;
				return 0;
			}
			close_dso_file(d);
		}
		free(fetched);
	}
	warning("%s: its samples show as [unknown]%s", why,
		m->build_id_size ? " (and the build-id cache has no copy)" : "");
	return err;
}

static struct dso *get_dso(struct symbolizer *sy, const struct profile_mapping *m)
{
	struct dso *d;

	for (size_t i = 0; i < sy->nr_dsos; i++)
		if (sy->dsos[i].path == m->path) {
			sy->dsos[i].used_at = sy->gen;
			return sy->dsos[i].failed ? NULL : &sy->dsos[i];
		}
	if (array__reserve((void **)&sy->dsos, &sy->cap_dsos, sy->nr_dsos + 1, sizeof(*sy->dsos)))
		return NULL;
	d = &sy->dsos[sy->nr_dsos++];
	memset(d, 0, sizeof(*d));
	d->path = m->path;
	d->used_at = sy->gen;
	if (open_dso(sy, d, m)) {
		d->failed = true;
		sy->missing++;
		return NULL;
	}
	return d;
}

size_t symbolizer__evict_unused(struct symbolizer *sy, u32 calls)
{
	size_t evicted = 0;

	for (size_t i = sy->nr_dsos; i-- > 0;) {
		struct dso *d = &sy->dsos[i];

		if (sy->gen - d->used_at < (calls ? calls : 1))
			continue;
		/* the cached lookups point into its symbol table */
		for (size_t c = 0; c < sy->cache_slots; c++)
			if (sy->cache[c].used && sy->cache[c].path == d->path)
				sy->cache[c].used = false;
		dso_free(d);
		*d = sy->dsos[--sy->nr_dsos];
		evicted++;
	}
	sy->gen++;
	return evicted;
}

static struct dso *dso_by_path(struct symbolizer *sy, const char *path)
{
	struct profile_mapping m = {};
	s64 off = -1;

	for (size_t i = 0; i < sy->p->nr_mappings && off < 0; i++)
		if (!strcmp(profile__str(sy->p, sy->p->mappings[i].path), path))
			off = i;
	if (off < 0)
		return NULL;
	m = sy->p->mappings[off];
	return get_dso(sy, &m);
}

const struct bblock_table *symbolizer__blocks(struct symbolizer *sy, const char *path)
{
	struct dso *d = dso_by_path(sy, path);

	return d ? dso_blocks(sy, d) : NULL;
}

const char *symbolizer__file(struct symbolizer *sy, const char *path)
{
	struct dso *d = dso_by_path(sy, path);

	return d && d->file ? d->file : path;
}

int symbolizer__line(struct symbolizer *sy, const char *path, u64 vaddr, const char **file, int *line)
{
	struct dso *d = dso_by_path(sy, path);
	Dwfl_Line *l = d ? dwfl_module_getsrc(d->mod, vaddr) : NULL;

	*file = l ? dwfl_lineinfo(l, NULL, line, NULL, NULL, NULL) : NULL;
	return *file ? 0 : -ENOENT;
}

/* the module's inline index, made on first need (NULL without memory: no inline frames) */
static struct inlines *dso_inlines(struct symbolizer *sy, struct dso *d)
{
	if (!d->inl)
		d->inl = inlines__new(d->mod, &sy->names,
				      (sy->raw_names ? INLINES_RAW_NAMES : 0) |
				      (sy->skip_call_files ? INLINES_NO_FILES : 0));
	return d->inl;
}

int symbolizer__inlines(struct symbolizer *sy, const char *path, u64 vaddr, struct sym_inline *out,
			int max)
{
	struct dso *d = dso_by_path(sy, path);
	struct inline_frame f[INLINE_MAX_DEPTH];
	int n = d && !d->failed && d->mod ?
		inlines__frames(dso_inlines(sy, d), vaddr, f, INLINE_MAX_DEPTH) : 0;

	if (n > max)
		n = max;
	for (int i = 0; i < n; i++)
		out[i] = (struct sym_inline){ .name = f[i].name, .call_line = f[i].call_line };
	return n;
}

/* runtime IP -> ELF vaddr through the PT_LOAD that maps the file offset */
static bool to_vaddr(const struct dso *d, const struct profile_mapping *m, u64 ip, u64 *vaddr)
{
	u64 off = ip - m->start + m->pgoff;

	for (size_t i = 0; i < d->nr_loads; i++) {
		const GElf_Phdr *ph = &d->loads[i];

		if (off >= ph->p_offset && off - ph->p_offset < ph->p_memsz) {
			*vaddr = off - ph->p_offset + ph->p_vaddr;
			return true;
		}
	}
	return false;
}

static const char *keep(struct symbolizer *sy, const char *s)
{
	return s ? strset__intern(&sy->names, s) : NULL;
}

static int cmp_dso_sym(const void *a, const void *b)
{
	const struct dso_sym *x = a, *y = b;
	int c;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	c = symname__cmp(x->name, x->size, x->bind, y->name, y->size, y->bind);
	if (c)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* stable LSD radix sort by address (the table is built in index order), then each run of
 * one address (a handful of aliases at most) put in cmp_dso_sym's order. Ten thousand
 * symbols (libc's) in a few passes over the table, where qsort took 3.5 M instructions of
 * indirect comparisons and a temporary buffer */
static void sort_syms(struct dso_sym *v, size_t n)
{
	struct dso_sym *tmp = malloc(n * sizeof(*tmp)), *from = v, *to = tmp;
	u64 all_or = 0, all_and = ~0ull;

	if (!tmp) {
		qsort(v, n, sizeof(*v), cmp_dso_sym);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		all_or |= v[i].addr;
		all_and &= v[i].addr;
	}
	for (int pass = 0; pass < 8; pass++) {
		size_t count[257] = { 0 };
		int shift = pass * 8;

		/* a byte of addr the same in every symbol orders nothing */
		if (!(((all_or ^ all_and) >> shift) & 0xff))
			continue;
#define DIGIT(s) ((size_t)(((s)->addr >> shift) & 0xff))
		for (size_t i = 0; i < n; i++)
			count[DIGIT(&from[i]) + 1]++;
		for (int b = 1; b < 257; b++)
			count[b] += count[b - 1];
		for (size_t i = 0; i < n; i++)
			to[count[DIGIT(&from[i])]++] = from[i];
#undef DIGIT
		from = to;
		to = to == tmp ? v : tmp;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
	free(tmp);
	/* insertion sort within each address */
	for (size_t i = 1; i < n; i++) {
		struct dso_sym x = v[i];
		size_t j = i;

		while (j > 0 && v[j - 1].addr == x.addr && cmp_dso_sym(&v[j - 1], &x) > 0) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

static const struct dso_sym *find_sym(struct dso *d, u64 vaddr);

/* the name of a PLT entry no relocation symbol names (IRELATIVE): after its resolver's
 * symbol, else "*ABS*+0xADDEND@plt" as objdump names it */
static const char *irelative_plt_name(struct symbolizer *sy, struct dso *d, u64 addend)
{
	const struct dso_sym *r = find_sym(d, addend);
	char buf[64], *name = NULL;
	const char *k;

	if (!r || r->addr != addend) {
		snprintf(buf, sizeof(buf), "*ABS*+0x%" PRIx64 "@plt", addend);
		return keep(sy, buf);
	}
	if (asprintf(&name, "%s@plt", r->name) < 0)
		return NULL;
	k = keep(sy, name);
	free(name);
	return k;
}

/* x86-64 PLT entries as perf names them ("func@plt"): ELF addresses moved by bias */
static void add_plt_syms(struct symbolizer *sy, struct dso *d, const struct symname_plt *plt,
			 size_t nr, u64 bias)
{
	size_t nr_syms = d->nr_syms;

	for (size_t i = 0; i < nr; i++) {
		const char *name = *plt[i].name ? keep(sy, plt[i].name) :
				   irelative_plt_name(sy, d, plt[i].addend + bias);
		u64 addr = plt[i].addr + bias;

		if (!name)
			continue;
		d->syms[nr_syms++] = (struct dso_sym){
			.addr = addr, .size = plt[i].size, .name = name, .bind = STB_LOCAL,
			.section_end = addr + plt[i].size, .index = UINT32_MAX,
		};
	}
	d->nr_syms = nr_syms;
}

static void build_syms(struct symbolizer *sy, struct dso *d)
{
	int n = dwfl_module_getsymtab(d->mod);
	Elf *last_elf = NULL, *main_elf;
	GElf_Word last_shndx = 0;
	GElf_Addr last_bias = 0, main_bias;
	u64 last_end = UINT64_MAX;
	bool last_alloc = true;
	struct symname_plt *plt = NULL;
	size_t nr_plt = 0;

	d->syms_built = true;
	main_elf = dwfl_module_getelf(d->mod, &main_bias);
	if (main_elf && symname__plt(main_elf, &plt, &nr_plt))
		nr_plt = 0;
	/* at most n entries and the PLT's: one allocation, not grown (and zeroed) as it fills */
	d->syms = n > 1 || nr_plt ? malloc(((size_t)(n > 0 ? n : 0) + nr_plt) * sizeof(*d->syms)) : NULL;
	if (!d->syms) {
		symname__free_plt(plt, nr_plt);
		return;	/* dwfl_module_addrinfo answers instead */
	}
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr, bias = 0;
		GElf_Word shndx;
		GElf_Shdr sh;
		Elf *elf = NULL;
		Elf_Scn *scn;
		const char *name = dwfl_module_getsym_info(d->mod, i, &sym, &addr, &shndx, &elf, &bias);
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
		u64 end = UINT64_MAX;

		if (!name || !*name || shndx == SHN_UNDEF || shndx == SHN_ABS || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS)
			continue;
		/* symbols come a section at a time: its header read once for each run */
		if (elf != last_elf || shndx != last_shndx || bias != last_bias) {
			scn = elf ? elf_getscn(elf, shndx) : NULL;
			last_alloc = true;
			last_end = UINT64_MAX;
			if (scn && gelf_getshdr(scn, &sh)) {
				last_alloc = sh.sh_flags & SHF_ALLOC;
				last_end = sh.sh_addr + sh.sh_size + bias;
			}
			last_elf = elf;
			last_shndx = shndx;
			last_bias = bias;
		}
		if (!last_alloc)
			continue;
		end = last_end;
		d->syms[d->nr_syms++] = (struct dso_sym){
			.addr = addr, .size = sym.st_size, .name = name,
			.bind = bind,
			.section_end = end,
			.index = i,
		};
	}
	if (d->nr_syms > 1)
		sort_syms(d->syms, d->nr_syms);
	if (nr_plt) {
		add_plt_syms(sy, d, plt, nr_plt, main_bias);
		sort_syms(d->syms, d->nr_syms);
	}
	symname__free_plt(plt, nr_plt);
}

/* the symbol holding vaddr: the closest start whose size covers it, or else a sizeless
 * one that is the closest symbol before it, as dwfl_module_addrinfo chooses */
static const struct dso_sym *find_sym(struct dso *d, u64 vaddr)
{
	size_t i = array__count_le(d->syms, d->nr_syms, sizeof(*d->syms),
				   offsetof(struct dso_sym, addr), vaddr);
	const struct dso_sym *sizeless = NULL;
	bool closest = true;

	/* a few symbols back: a sized symbol may enclose smaller ones (rare) */
	for (size_t steps = 0; i > 0 && steps < 64; i--, steps++) {
		const struct dso_sym *s = &d->syms[i - 1];
		size_t first = i - 1;

		/* the best of this address comes first: go to it */
		while (first > 0 && d->syms[first - 1].addr == s->addr)
			first--;
		for (size_t j = first; j < i; j++) {
			s = &d->syms[j];
			if (s->size && vaddr - s->addr < s->size)
				return s;
			/* a sizeless symbol reaches up to the next symbol at most */
			if (!s->size && closest && !sizeless && vaddr < s->section_end)
				sizeless = s;
		}
		closest = false;
		i = first + 1;
	}
	return sizeless;
}

/* the FDE holding vaddr, or NULL */
static const struct unwind_fde *find_fde(struct dso *d, u64 vaddr)
{
	size_t lo = 0, hi = d->nr_fdes;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->fdes[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && vaddr < d->fdes[lo - 1].end ? &d->fdes[lo - 1] : NULL;
}

/* code no sized symbol covers: every FDE of .eh_frame starts a function, named
 * "object+0xSTART" (perf shows such code as [unknown] in one row per object); a sizeless
 * symbol before vaddr (sym_addr) keeps it only when no FDE starts after it */
static void fde_function(struct symbolizer *sy, struct dso *d, u64 vaddr, u64 sym_addr,
			 struct cache_entry *c)
{
	const struct unwind_fde *f;
	char name[NAME_MAX + 24];
	GElf_Addr bias;
	Elf *elf;

	if (!d->fdes_built) {
		d->fdes_built = true;
		elf = dwfl_module_getelf(d->mod, &bias);
		if (elf)
			unwind_table__fdes(elf, &d->fdes, &d->nr_fdes);
	}
	f = find_fde(d, vaddr);
	if (!f || (c->sym && f->start <= sym_addr))
		return;
	snprintf(name, sizeof(name), "%s+0x%" PRIx64, path__base(profile__str(sy->p, d->path)),
		 f->start);
	c->sym = keep(sy, name);
	c->sym_off = vaddr - f->start;
}

static void resolve_inline(struct symbolizer *sy, struct dso *d, u64 vaddr, struct cache_entry *c)
{
	struct inline_frame f[INLINE_MAX_DEPTH];
	int n = inlines__frames(dso_inlines(sy, d), vaddr, f, INLINE_MAX_DEPTH);
	struct inline_block *b = sy->inl_blocks;

	if (n <= 0)
		return;
	if (!b || b->used + n > sizeof(b->f) / sizeof(b->f[0])) {
		b = calloc(1, sizeof(*b));
		if (!b)
			return;	/* without its inline chain */
		b->next = sy->inl_blocks;
		sy->inl_blocks = b;
	}
	memcpy(&b->f[b->used], f, n * sizeof(*f));
	c->inl = &b->f[b->used];
	c->nr_inl = n;
	b->used += n;
}

/* a name as shown: demangled unless asked not to */
static const char *shown_name(struct symbolizer *sy, const char *name)
{
	char *dm;
	const char *k;

	if (sy->raw_names || !demangle__is_mangled(name))
		return name;
	dm = demangle__name(name);
	k = dm ? keep(sy, dm) : NULL;
	free(dm);
	return k ? k : name;
}

/* the other names of ds's address, for the filters (the shown one is perf's choice) */
static void resolve_aliases(struct symbolizer *sy, struct dso *d, const struct dso_sym *ds,
			    struct cache_entry *c)
{
	size_t first = ds - d->syms, n = 0;
	struct alias_block *b = sy->alias_blocks;
	const char *a[MAX_ALIASES];

	while (first > 0 && d->syms[first - 1].addr == ds->addr)
		first--;
	for (size_t i = first; i < d->nr_syms && d->syms[i].addr == ds->addr && n < MAX_ALIASES; i++)
		if (&d->syms[i] != ds && strcmp(d->syms[i].name, ds->name))
			a[n++] = shown_name(sy, d->syms[i].name);
	if (!n)
		return;
	if (!b || b->used + n > sizeof(b->a) / sizeof(b->a[0])) {
		b = calloc(1, sizeof(*b));
		if (!b)
			return;	/* without its aliases */
		b->next = sy->alias_blocks;
		sy->alias_blocks = b;
	}
	memcpy(&b->a[b->used], a, n * sizeof(*a));
	c->aliases = &b->a[b->used];
	c->nr_aliases = n;
	b->used += n;
}

static void resolve_user(struct symbolizer *sy, struct dso *d, u64 vaddr, struct sym_result *r)
{
	size_t slot = ((vaddr * 0x9E3779B97F4A7C15ull) ^ d->path) & (sy->cache_slots - 1);
	struct cache_entry *c = &sy->cache[slot];
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name;
	Dwfl_Line *line;

	if (c->used && c->path == d->path && c->vaddr == vaddr)
		goto out;
	c->used = true;
	c->path = d->path;
	c->vaddr = vaddr;
	c->sym = NULL;
	c->sym_off = 0;
	c->file = NULL;
	c->line = 0;
	c->inl = NULL;
	c->nr_inl = 0;
	c->aliases = NULL;
	c->nr_aliases = 0;
	if (sy->want_inline)
		resolve_inline(sy, d, vaddr, c);
	if (!d->syms_built && !sy->dwfl_search)
		build_syms(sy, d);
	if (d->nr_syms && !sy->dwfl_search) {
		const struct dso_sym *ds = find_sym(d, vaddr);

		if (ds) {
			c->sym = ds->name;
			c->sym_off = vaddr - ds->addr;
			resolve_aliases(sy, d, ds, c);
		}
		if (!ds || !ds->size)
			fde_function(sy, d, vaddr, ds ? ds->addr : 0, c);
	} else if (!sy->dwfl_search && !d->nr_syms) {
		fde_function(sy, d, vaddr, 0, c);
	} else {
		name = dwfl_module_addrinfo(d->mod, vaddr, &off, &sym, NULL, NULL, NULL);
		if (name) {
			c->sym = keep(sy, name);
			c->sym_off = off;
		}
	}
	if (c->sym)
		c->sym = shown_name(sy, c->sym);
	line = sy->skip_lines ? NULL : dwfl_module_getsrc(d->mod, vaddr);
	if (line) {
		int lineno = 0;
		const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

		if (file) {
			c->file = keep(sy, file);
			c->line = lineno;
		}
	}
out:
	if (c->sym) {
		r->sym = c->sym;
		r->sym_off = c->sym_off;
	}
	r->inl = c->inl;
	r->nr_inl = c->nr_inl;
	r->aliases = c->aliases;
	r->nr_aliases = c->nr_aliases;
	r->file = c->file;
	r->line = c->line;
}

static void resolve_kernel(struct symbolizer *sy, u64 ip, struct sym_result *r)
{
	const struct profile *p = sy->p;
	size_t lo;
	const char *name, *mod;

	r->dso = "[kernel.kallsyms]";
	lo = array__count_le(p->ksyms, p->nr_ksyms, sizeof(*p->ksyms),
			     offsetof(struct profile_ksym, addr), ip);
	if (!lo)
		return;
	name = profile__str(p, p->ksyms[lo - 1].name);
	if (!*name)
		return;
	r->sym = name;
	r->sym_off = ip - p->ksyms[lo - 1].addr;
	/* "sym [module]": the module is the object, as perf shows it */
	mod = strchr(name, ' ');
	if (mod) {
		const char *sym = strset__intern_n(&sy->names, name, mod - name);

		r->sym = sym ? sym : name;
		r->dso = mod + 1;
	}
}

/* JIT code: the process's perf map file, as copied into the profile; the object is named
 * as perf names it, after the map file */
static void resolve_jit(struct symbolizer *sy, const struct profile_sample *s, struct sym_result *r)
{
	const struct profile_jitsym *j = profile__find_jitsym(sy->p, s->pid, s->ip);
	char dso[32];

	if (!j)
		return;
	r->sym = profile__str(sy->p, j->name);
	r->sym_off = s->ip - j->start;
	snprintf(dso, sizeof(dso), "[JIT] perf-%u.map", s->pid);
	r->dso = keep(sy, dso);
	if (!r->dso)
		r->dso = "[JIT]";
	if (!sy->raw_names && demangle__is_mangled(r->sym)) {
		char *dm = demangle__name(r->sym);
		const char *k = dm ? keep(sy, dm) : NULL;

		if (k)
			r->sym = k;
		free(dm);
	}
}

/* a Python frame (bpf/python.bpf.h): the name the recording read for it, object [python] */
static void resolve_python(struct symbolizer *sy, const struct profile_sample *s, struct sym_result *r)
{
	const struct profile_pyframe *y = profile__find_pyframe(sy->p, s->pid, s->ip);

	r->dso = "[python]";
	r->vaddr = HSBPF_PY_OFF(s->ip);
	if (!y)
		return;
	r->sym = profile__str(sy->p, y->name);
	r->sym_off = HSBPF_PY_OFF(s->ip) * 2;	/* bytes into the code, as dis shows them */
	if (!sy->skip_lines) {
		r->file = profile__str(sy->p, y->file);
		r->line = y->line;
	}
}

bool sym_result__named(const struct sym_result *r, const char *list)
{
	if (r->sym && symname__in_list(list, r->sym))
		return true;
	for (int i = 0; i < r->nr_aliases; i++)
		if (symname__in_list(list, r->aliases[i]))
			return true;
	return false;
}

bool sym_result__name_has(const struct sym_result *r, const char *text)
{
	if (r->sym && strcasestr(r->sym, text))
		return true;
	for (int i = 0; i < r->nr_aliases; i++)
		if (strcasestr(r->aliases[i], text))
			return true;
	return false;
}

void symbolizer__resolve(struct symbolizer *sy, const struct profile_sample *s, struct sym_result *r)
{
	const struct profile_mapping *m;
	struct dso *d;

	memset(r, 0, sizeof(*r));
	r->sym = "[unknown]";
	r->dso = "[unknown]";
	r->vaddr = s->ip;
	r->comm = symbolizer__comm(sy, s->pid, s->exec_ns);
	if (s->flags & HSBPF_KEY_KERNEL) {
		r->kernel = true;
		resolve_kernel(sy, s->ip, r);
		return;
	}
	if (HSBPF_PY_IS_FRAME(s->ip)) {
		resolve_python(sy, s, r);
		return;
	}
	m = profile__find_mapping(sy->p, s->pid, s->exec_ns, s->map_ns, s->ip);
	if (m)
		r->dso = profile__str(sy->p, m->path);
	if (!m || (r->dso[0] != '/' && strcmp(r->dso, "[vdso]")) || !strncmp(r->dso, "//anon", 6) ||
	    !strncmp(r->dso, "/memfd:", 7)) {
		/* anonymous code, memfd code (or none known): JIT code a perf map file names */
		resolve_jit(sy, s, r);
		return;	/* [vdso], the rest: nothing to open */
	}
	d = get_dso(sy, m);
	if (!d || !to_vaddr(d, m, s->ip, &r->vaddr))
		return;
	resolve_user(sy, d, r->vaddr, r);
	if (sy->want_blocks) {
		const struct bblock_table *bt = dso_blocks(sy, d);

		r->bb = bt ? bblock_table__find(bt, r->vaddr) : NULL;
	}
}
