// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* symbolizer: kernel symbols, a real ELF fixture mapped like a PIE, and code loaded at one
 * address told apart by mapping generations (process images: test_profile.c). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "symbols/build_id.h"
#include "helpers.h"
#include "hsbpf.h"
#include "symbols/symbolizer.h"
#include "symbols/symname.h"

Test(symbolizer, kernel_symbols_are_bounded)
{
	struct profile *p = profile__new();
	struct symbolizer *sy;
	struct profile_sample s = { .flags = HSBPF_KEY_KERNEL };
	struct sym_result r;

	profile__add_ksym(p, 0xffffffff81000000ull, "first");
	profile__add_ksym(p, 0xffffffff81000100ull, "");	/* end of first */
	profile__add_ksym(p, 0xffffffffc0000000ull, "modfn [mymod]");
	profile__finish(p);
	sy = symbolizer__new(p);
	s.ip = 0xffffffff81000010ull;
	symbolizer__resolve(sy, &s, &r);
	cr_expect_str_eq(r.sym, "first");
	cr_expect_eq(r.sym_off, 0x10);
	cr_expect_str_eq(r.dso, "[kernel.kallsyms]");
	s.ip = 0xffffffff81000200ull;
	symbolizer__resolve(sy, &s, &r);
	cr_expect_str_eq(r.sym, "[unknown]");
	s.ip = 0xffffffffc0000004ull;
	symbolizer__resolve(sy, &s, &r);
	cr_expect_str_eq(r.sym, "modfn", "the module is the object, not part of the name");
	cr_expect_str_eq(r.dso, "[mymod]");
	symbolizer__free(sy);
	profile__free(p);
}

static u64 symbol_vaddr(const char *bin, const char *sym)
{
	char cmd[1024], line[256];
	unsigned long long addr = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm '%s'", bin);
	f = popen(cmd, "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f)) {
		char name[200], type;
		unsigned long long a;

		if (sscanf(line, "%llx %c %199s", &a, &type, name) == 3 && !strcmp(name, sym))
			addr = a;
	}
	pclose(f);
	cr_assert(addr, "%s not in %s", sym, bin);
	return addr;
}

/* the address of a dynamic symbol (libc's .symtab is in its debug file) */
static u64 dynsym_vaddr(const char *bin, const char *sym)
{
	char cmd[1024], line[256];
	unsigned long long addr = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm -D '%s'", bin);
	f = popen(cmd, "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f)) {
		char name[200], type;
		unsigned long long a;

		if (sscanf(line, "%llx %c %199s", &a, &type, name) == 3 && !strcmp(strtok(name, "@"), sym))
			addr = a;
	}
	pclose(f);
	cr_assert(addr, "%s not in %s", sym, bin);
	return addr;
}

/* the address of a section */
static u64 symbol_section(const char *bin, const char *sec)
{
	char cmd[1024], line[512];
	unsigned long long addr = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "readelf -SW '%s'", bin);
	f = popen(cmd, "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f)) {
		char name[64], type[32];
		unsigned long long a;
		const char *t = strchr(line, ']');

		if (t && sscanf(t + 1, "%63s %31s %llx", name, type, &a) == 3 && !strcmp(name, sec))
			addr = a;
	}
	pclose(f);
	cr_assert(addr, "%s not in %s", sec, bin);
	return addr;
}

/* the fixture is a PIE: map its text like the loader would and resolve through it */
Test(symbolizer, real_elf_with_lines_and_build_id_check)
{
	const char *bin = fixture("hot7030");
	u64 v70 = symbol_vaddr(bin, "work_70"), base = 0x555555554000ull;
	struct profile *p = profile__new();
	struct profile_sample s = { .pid = 5, .count = 1 };
	struct symbolizer *sy;
	struct sym_result r;
	u8 id[20];
	size_t len;

	cr_assert_eq(build_id__read(bin, id, sizeof(id), &len), 0);
	/* one mapping of the whole file from offset 0: vaddr == file offset for this layout */
	profile__add_mapping(p, 5, 0, base, 0x4000, 0, bin, id, len);
	profile__add_comm(p, 5, 0, "hot7030", false);
	/* pid 6: same file, but the recording saw another build-id */
	id[0] ^= 0xff;
	profile__add_mapping(p, 6, 0, base, 0x4000, 0, bin, id, len);
	profile__finish(p);
	sy = symbolizer__new(p);
	s.ip = base + v70 + 4;
	symbolizer__resolve(sy, &s, &r);
	cr_expect_str_eq(r.sym, "work_70");
	cr_expect_eq(r.sym_off, 4);
	cr_expect_eq(r.vaddr, v70 + 4);
	cr_assert(r.file, "no source line from DWARF");
	cr_expect(strstr(r.file, "hot7030.c"), "%s", r.file);
	cr_expect_gt(r.line, 0);
	cr_expect_str_eq(r.comm, "hot7030");
	symbolizer__free(sy);

	/* a fresh symbolizer sees pid 6's mismatch first */
	sy = symbolizer__new(p);
	s.pid = 6;
	symbolizer__resolve(sy, &s, &r);
	cr_expect_str_eq(r.sym, "[unknown]");
	cr_expect_eq(symbolizer__missing(sy), 1);
	symbolizer__free(sy);
	profile__free(p);
}

static bool in_aliases(const struct sym_result *r, const char *name)
{
	for (int i = 0; i < r->nr_aliases; i++)
		if (!strcmp(r->aliases[i], name))
			return true;
	return false;
}

/* the sorted symbol table answers as dwfl_module_addrinfo does, at addresses spread over the
 * code of a large library, of hsbpf itself and of a fixture: the same symbol, under the name
 * dwfl chose or, where several share its address, another of them (perf's choice) */
Test(symbolizer, sorted_symbols_agree_with_dwfl)
{
	const char *objs[] = { "/lib/x86_64-linux-gnu/libc.so.6", hsbpf_bin(), fixture("hot7030") };
	const u64 base = 0x7f0000000000ull;

	elf_version(EV_CURRENT);
	for (size_t o = 0; o < sizeof(objs) / sizeof(objs[0]); o++) {
		struct profile *p = profile__new();
		struct symbolizer *fast, *ref;
		size_t nph, checked = 0, named = 0;
		int fd = open(objs[o], O_RDONLY);
		Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
		struct stat st;
		const char *base_name = strrchr(objs[o], '/') ? strrchr(objs[o], '/') + 1 : objs[o];

		cr_assert(elf && !fstat(fd, &st) && !elf_getphdrnum(elf, &nph), "%s", objs[o]);
		profile__add_mapping(p, 7, 0, base, st.st_size, 0, objs[o], NULL, 0);
		profile__add_comm(p, 7, 0, "x", false);
		profile__finish(p);
		fast = symbolizer__new(p);
		ref = symbolizer__new(p);
		symbolizer__skip_lines(fast);
		symbolizer__skip_lines(ref);
		symbolizer__no_demangle(fast);	/* dwfl gives the names as they are */
		symbolizer__use_dwfl_search(ref);
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
				continue;
			for (u64 off = 0; off < ph.p_filesz; off += 61) {
				struct profile_sample s = { .pid = 7, .ip = base + ph.p_offset + off, .count = 1 };
				struct sym_result a, b;

				symbolizer__resolve(fast, &s, &a);
				symbolizer__resolve(ref, &s, &b);
				/* code no symbol covers is named by its FDE (stripped_code_...) */
				if (!strncmp(a.sym, base_name, strlen(base_name)) &&
				    !strncmp(a.sym + strlen(base_name), "+0x", 3))
					continue;
				/* PLT entries have no symbol: their names are made (plt_entries_...) */
				if (strstr(a.sym, "@plt"))
					continue;
				cr_assert(!strcmp(a.sym, b.sym) || in_aliases(&a, b.sym),
					  "%s at %#llx: %s+%#llx, dwfl %s+%#llx (not an alias)", objs[o],
					  (unsigned long long)b.vaddr, a.sym, (unsigned long long)a.sym_off, b.sym,
					  (unsigned long long)b.sym_off);
				cr_assert_eq(a.sym_off, b.sym_off, "%s at %#llx (%s)", objs[o],
					     (unsigned long long)b.vaddr, b.sym);
				checked++;
				named += strcmp(a.sym, "[unknown]") != 0;
			}
		}
		cr_expect_gt(named, checked / 2, "%s: %zu of %zu addresses named", objs[o], named, checked);
		symbolizer__free(fast);
		symbolizer__free(ref);
		elf_end(elf);
		close(fd);
		profile__free(p);
	}
}

/* a symbolizer over one object mapped whole at base, as pid 8 */
static struct symbolizer *map_object(struct profile **pp, const char *bin, u64 base)
{
	struct profile *p = profile__new();
	struct stat st;

	cr_assert_eq(stat(bin, &st), 0, "%s", bin);
	profile__add_mapping(p, 8, 0, base, st.st_size, 0, bin, NULL, 0);
	profile__add_comm(p, 8, 0, "x", false);
	profile__finish(p);
	*pp = p;
	return symbolizer__new(p);
}

static const char *name_at(struct symbolizer *sy, u64 ip, u64 *off)
{
	struct profile_sample s = { .pid = 8, .ip = ip, .count = 1 };
	static struct sym_result r;

	symbolizer__resolve(sy, &s, &r);
	if (off)
		*off = r.sym_off;
	return r.sym;
}

/* C++ names from the fixture's symbol table, demangled unless asked not to */
Test(symbolizer, cxx_names_are_demangled)
{
	const char *bin = fixture("cxx/cxxnames");
	u64 acc = symbol_vaddr(bin, "_ZN3geo3AccImEpLEm"), spin = symbol_vaddr(bin, "_ZN3geo4spinImEET_S1_m");
	const u64 base = 0x555555554000ull;
	struct profile *p;
	struct symbolizer *sy = map_object(&p, bin, base);
	u64 off;

	cr_expect_str_eq(name_at(sy, base + acc + 3, &off), "geo::Acc<unsigned long>::operator+=");
	cr_expect_eq(off, 3);
	cr_expect_str_eq(name_at(sy, base + spin, NULL), "geo::spin<unsigned long>");
	cr_expect_str_eq(name_at(sy, base + symbol_vaddr(bin, "main"), NULL), "main");
	symbolizer__free(sy);
	sy = symbolizer__new(p);
	symbolizer__no_demangle(sy);
	cr_expect_str_eq(name_at(sy, base + acc + 3, NULL), "_ZN3geo3AccImEpLEm");
	symbolizer__free(sy);
	profile__free(p);
}

/* stripped of every symbol: each function is still found, by its FDE, and named
 * OBJECT+0xSTART with the start its symbol had before the strip */
Test(symbolizer, stripped_code_is_split_by_fde)
{
	const char *full = fixture("hot7030"), *bin = fixture("hot7030-stripped");
	const char *fns[] = { "work_70", "work_30", "main" };
	const u64 base = 0x555555554000ull;
	struct profile *p;
	struct symbolizer *sy = map_object(&p, bin, base);

	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		u64 start = symbol_vaddr(full, fns[i]), off;
		char want[64];

		snprintf(want, sizeof(want), "hot7030-stripped+0x%llx", (unsigned long long)start);
		cr_expect_str_eq(name_at(sy, base + start + 5, &off), want, "%s", fns[i]);
		cr_expect_eq(off, 5);
		cr_expect_str_eq(name_at(sy, base + start, &off), want, "%s", fns[i]);
		cr_expect_eq(off, 0);
	}
	/* outside every FDE (the ELF header): still unknown */
	cr_expect_str_eq(name_at(sy, base + 0x10, NULL), "[unknown]");
	symbolizer__free(sy);
	profile__free(p);
}

/* dlopen, dlclose, dlopen at one address in one image: a sample's mapping generation (the
 * time of its image's last executable mmap before it) picks the mapping in force when it was
 * taken; without one (0: no such mmap, or an older profile), the image's latest */
Test(symbolizer, mapping_generations_tell_apart_code_loaded_at_one_address)
{
	struct profile *p = profile__new();
	struct symbolizer *sy;
	static const struct {
		u64 exec_ns, map_ns;
		const char *want;
	} cases[] = {
		{ 0, 150, "lib1.so" }, { 0, 250, "lib2.so" }, { 0, 300, "lib3.so" },
		{ 0, 350, "lib3.so" }, { 0, 0, "lib3.so" },	/* the image's latest */
		{ 0, 50, "(none)" },		/* before the first load */
		{ 400, 0, "lib4.so" }, { 400, 480, "(none)" },	/* after an exec: its mappings alone */
		{ 400, 520, "lib4.so" },
	};

	cr_assert(p);
	profile__add_mapping(p, 20, 100, 0x7000, 0x1000, 0, "lib1.so", NULL, 0);
	profile__add_mapping(p, 20, 200, 0x7000, 0x1000, 0, "lib2.so", NULL, 0);
	profile__add_mapping(p, 20, 300, 0x7000, 0x1000, 0, "lib3.so", NULL, 0);
	profile__add_comm(p, 20, 400, "next", true);
	profile__add_mapping(p, 20, 500, 0x7000, 0x1000, 0, "lib4.so", NULL, 0);
	profile__finish(p);
	sy = symbolizer__new(p);
	cr_assert(sy);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct profile_mapping *m = profile__find_mapping(p, 20, cases[i].exec_ns,
									cases[i].map_ns, 0x7010);
		struct profile_sample s = { .pid = 20, .ip = 0x7010, .exec_ns = cases[i].exec_ns,
					    .map_ns = cases[i].map_ns, .count = 1 };
		struct sym_result r;

		cr_expect_str_eq(m ? profile__str(p, m->path) : "(none)", cases[i].want, "case %zu", i);
		symbolizer__resolve(sy, &s, &r);
		if (m)
			cr_expect_str_eq(r.dso, cases[i].want, "case %zu resolved", i);
	}
	cr_expect_str_eq(symbolizer__comm(sy, 20, 400), "next");	/* the profile's */
	symbolizer__free(sy);
	profile__free(p);
}

/* the entries of a PLT are named as objdump names them (func@plt), from .rela.plt: a
 * fixture's, and libc's where objdump has a name (its IRELATIVE entries, *ABS*+0x..@plt
 * there, are named after their resolver's IFUNC symbol, as perf does) */
Test(symbolizer, plt_entries_are_named_func_at_plt)
{
	const char *objs[] = { fixture("hot7030"), fixture("threads"), "/lib/x86_64-linux-gnu/libc.so.6" };
	const u64 base = 0x7f0000000000ull;

	for (size_t o = 0; o < sizeof(objs) / sizeof(objs[0]); o++) {
		struct profile *p;
		struct symbolizer *sy = map_object(&p, objs[o], base);
		char cmd[1024], line[512];
		size_t named = 0;
		FILE *f;

		snprintf(cmd, sizeof(cmd), "objdump -d -j .plt -j .plt.sec '%s'", objs[o]);
		f = popen(cmd, "r");
		cr_assert(f);
		while (fgets(line, sizeof(line), f)) {
			unsigned long long a;
			char name[256];
			u64 off;
			const char *got;

			if (sscanf(line, "%llx <%255[^>]>:", &a, name) != 2 || !strstr(name, "@plt") ||
			    strchr(name, '-') || strchr(name, '+'))
				continue;
			/* the first byte and one inside: the same entry (the loader maps the
			 * object's offsets at their addresses, as in these objects) */
			got = name_at(sy, base + a, &off);
			cr_expect_str_eq(got, name, "%s at %#llx: %s", objs[o], a, got);
			got = name_at(sy, base + a + 6, &off);
			cr_expect_str_eq(got, name, "%s at %#llx: %s", objs[o], a + 6, got);
			cr_expect_eq(off, 6);
			named++;
		}
		pclose(f);
		cr_expect_gt(named, 0, "%s: no PLT entry checked", objs[o]);
		if (o == 2) {
			/* an IRELATIVE entry: its resolver's name (objdump has none) */
			const char *plt0 = name_at(sy, base + symbol_section(objs[o], ".plt") + 16, NULL);

			cr_expect(strstr(plt0, "@plt") && !strstr(plt0, "*ABS*"), "libc's first PLT entry: %s", plt0);
		}
		symbolizer__free(sy);
		profile__free(p);
	}
}

/* where several symbols share an address, the name perf shows (libc's debug file has
 * pthread_mutex_lock@@GLIBC_2.2.5, __pthread_mutex_lock@GLIBC_2.2.5, ___pthread_mutex_lock
 * and __GI___pthread_mutex_lock there; without it .dynsym has the first two unversioned),
 * and every name matches the filters */
Test(symbolizer, aliases_show_perfs_choice_and_all_match)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	const u64 base = 0x7f0000000000ull;
	struct profile *p;
	struct symbolizer *sy = map_object(&p, libc, base);
	struct profile_sample s = { .pid = 8, .count = 1 };
	struct sym_result r;

	s.ip = base + dynsym_vaddr(libc, "pthread_mutex_lock") + 2;
	symbolizer__resolve(sy, &s, &r);
	cr_expect(symname__eq(r.sym, "pthread_mutex_lock"), "%s", r.sym);
	cr_expect_eq(r.sym_off, 2);
	cr_expect_geq(r.nr_aliases, 1);
	cr_expect(sym_result__named(&r, "pthread_mutex_lock"));
	cr_expect(sym_result__named(&r, "__pthread_mutex_lock"));
	cr_expect(sym_result__named(&r, "x,__pthread_mutex_lock"));
	cr_expect(!sym_result__named(&r, "__pthread_mutex"));
	cr_expect(!sym_result__named(&r, "pthread_mutex_unlock"));
	cr_expect(sym_result__name_has(&r, "_PTHREAD_MUTEX_L"));
	cr_expect(!sym_result__name_has(&r, "unlock"));
	symbolizer__free(sy);
	profile__free(p);
}

/* an object no lookup used since the last eviction is closed; used again, it is read again
 * and names the same */
Test(symbolizer, objects_unused_for_an_interval_are_evicted_and_read_again)
{
	const char *bin = fixture("cxx/cxxnames");
	u64 spin = symbol_vaddr(bin, "_ZN3geo4spinImEET_S1_m");
	const u64 base = 0x555555554000ull;
	struct profile *p;
	struct symbolizer *sy = map_object(&p, bin, base);

	cr_expect_str_eq(name_at(sy, base + spin, NULL), "geo::spin<unsigned long>");
	cr_expect_eq(symbolizer__evict_unused(sy, 1), 0, "looked up in this interval: kept");
	cr_expect_eq(symbolizer__evict_unused(sy, 1), 1, "not looked up since: closed");
	cr_expect_eq(symbolizer__evict_unused(sy, 1), 0);
	cr_expect_str_eq(name_at(sy, base + spin, NULL), "geo::spin<unsigned long>");
	/* kept while it was used within the last three calls */
	cr_expect_eq(symbolizer__evict_unused(sy, 3), 0);
	cr_expect_eq(symbolizer__evict_unused(sy, 3), 0);
	cr_expect_eq(symbolizer__evict_unused(sy, 3), 0);
	cr_expect_eq(symbolizer__evict_unused(sy, 3), 1);
	symbolizer__free(sy);
	profile__free(p);
}
