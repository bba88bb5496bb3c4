// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Sampled allocations in profiles: the options, the target's glibc, the BPF side's tables,
 * the metadata and counters, report's views and header (user/record/memory.h; the kernel side is
 * bpf/memory.bpf.h, the design docs/memory.md). */

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "record/memory.h"
#include "lib/util.h"

static const char *const view_names[MEMORY_VIEW_NR] = {
	[MEMORY_ALLOC_SPACE] = "alloc_space", [MEMORY_ALLOC_OBJECTS] = "alloc_objects",
	[MEMORY_INUSE_SPACE] = "inuse_space", [MEMORY_INUSE_OBJECTS] = "inuse_objects",
};

int memory__parse_period(const char *arg, u64 *bytes)
{
	char num[32];
	size_t len = strlen(arg);
	unsigned shift = 0;
	u64 v;

	if (len && len < sizeof(num)) {
		memcpy(num, arg, len + 1);
		switch (num[len - 1]) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		}
		if (shift)
			num[len - 1] = 0;
		if (!parse_u64(num, &v) && v && v <= MEMORY_MAX_PERIOD >> shift) {
			*bytes = v << shift;
			return 0;
		}
	}
	return fail(-EINVAL, "invalid --alloc-period '%s' (bytes, with K, M or G: 1 to 1G)", arg);
}

/* the allocators that replace glibc's malloc, by their library's name: recording them would
 * show nothing, or only what still reaches glibc, as if it were all */
static const char *const foreign_allocators[] = {
	"libjemalloc", "jemalloc", "libtcmalloc", "tcmalloc", "libmimalloc", "mimalloc", "libhoard",
	"libscudo", "libsnmalloc",
};

/* the allocator's name when path (a library's) is one of them, else NULL */
static const char *foreign_allocator(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(foreign_allocators) / sizeof(foreign_allocators[0]); i++) {
		size_t n = strlen(foreign_allocators[i]);

		if (!strncmp(base, foreign_allocators[i], n) && (base[n] == '.' || base[n] == '_' ||
								  base[n] == '-'))
			return foreign_allocators[i][0] == 'l' ? foreign_allocators[i] + 3 : foreign_allocators[i];
	}
	return NULL;
}

#define ALLOCATOR_REFUSED	"--memory follows glibc's malloc only (ptmalloc, in a dynamically " \
				"linked program), not jemalloc, tcmalloc, mimalloc or musl's"

/* a program's interpreter (PT_INTERP) into interp, "" for none (a static program); *foreign:
 * the allocator it links against (DT_NEEDED) when it is not glibc's, else NULL */
static int elf_interp(const char *path, char *interp, size_t size, const char **foreign)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = -ENOEXEC;
	size_t n = 0;
	Elf *e = NULL;

	interp[0] = 0;
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &n))
		goto cleanup;
	err = 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		char *raw;
		size_t len;

		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_INTERP)
			continue;
		raw = elf_rawfile(e, &len);
		if (raw && ph.p_offset < len && ph.p_filesz < size && ph.p_offset + ph.p_filesz <= len)
			snprintf(interp, size, "%.*s", (int)ph.p_filesz, raw + ph.p_offset);
	}
	*foreign = NULL;
	for (Elf_Scn *scn = NULL; !*foreign && (scn = elf_nextscn(e, scn)); ) {
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Shdr sh;
		GElf_Dyn dyn;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !d || !sh.sh_entsize)
			continue;
		for (size_t i = 0; !*foreign && i < sh.sh_size / sh.sh_entsize && gelf_getdyn(d, i, &dyn); i++) {
			const char *name = dyn.d_tag == DT_NEEDED ? elf_strptr(e, sh.sh_link, dyn.d_un.d_val) : NULL;

			if (name)
				*foreign = foreign_allocator(name);
		}
	}
cleanup:
	elf_end(e);
	close(fd);
	return err;
}

/* argv0 as execvp finds it */
static int find_program(const char *argv0, char *path, size_t size)
{
	const char *dirs = getenv("PATH");

	if (strchr(argv0, '/')) {
		snprintf(path, size, "%s", argv0);
		return access(path, X_OK) ? -errno : 0;
	}
	for (const char *d = dirs ? dirs : "/usr/bin:/bin"; *d; ) {
		size_t len = strcspn(d, ":");

		snprintf(path, size, "%.*s/%s", (int)len, len ? d : ".", argv0);
		if (!access(path, X_OK))
			return 0;
		d += len + (d[len] == ':');
	}
	return -ENOENT;
}

/* glibc's loader run as a program ("ld-linux-x86-64.so.2 [OPTIONS] PROGRAM ..."): the program
 * (argv's index, 0 for none) and its --library-path (NULL for none) and --preload */
static int loader_program(char *const *argv, const char **library_path, const char **preload)
{
	/* its options that take a value */
	static const char *const with_value[] = {
		"--library-path", "--inhibit-rpath", "--audit", "--preload", "--argv0",
		"--glibc-hwcaps-prepend", "--glibc-hwcaps-mask",
	};
	int i = 1;

	*library_path = *preload = NULL;
	while (argv[i] && !strncmp(argv[i], "--", 2)) {
		bool value = false;

		for (size_t k = 0; k < ARRAY_SIZE(with_value); k++)
			value |= !strcmp(argv[i], with_value[k]);
		if (!value) {	/* --inhibit-cache; --list, --verify...: no program run */
			i++;
			continue;
		}
		if (!argv[i + 1])
			return 0;
		if (!strcmp(argv[i], "--library-path"))
			*library_path = argv[i + 1];
		else if (!strcmp(argv[i], "--preload"))
			*preload = argv[i + 1];
		i += 2;
	}
	return argv[i] ? i : 0;
}

/* the libc.so.6 in one of path's directories (colon-separated), into libc: 0, or -ENOENT */
static int libc_in_path(const char *path, char *libc, size_t size)
{
	for (const char *d = path; *d; ) {
		size_t len = strcspn(d, ":");

		snprintf(libc, size, "%.*s/libc.so.6", (int)len, len ? d : ".");
		if (!access(libc, R_OK))
			return 0;
		d += len + (d[len] == ':');
	}
	return -ENOENT;
}

/* a preloaded allocator in list (LD_PRELOAD's or the loader's --preload: spaces or colons
 * between libraries), refused by name: -ENOENT, else 0 */
static int check_preload(const char *argv0, const char *list, const char *what)
{
	char preload[PATH_MAX];
	const char *foreign;

	snprintf(preload, sizeof(preload), "%s", list ? list : "");
	for (char *save, *lib = strtok_r(preload, " :", &save); lib; lib = strtok_r(NULL, " :", &save)) {
		foreign = foreign_allocator(lib);
		if (foreign)
			return fail(-ENOENT, "'%s' would allocate with %s (%s%s): " ALLOCATOR_REFUSED,
				    argv0, foreign, what, list);
	}
	return 0;
}

static int command_libc(char *const *argv, char *libc, size_t size)
{
	char path[PATH_MAX], interp[PATH_MAX];
	const char *argv0 = argv[0], *foreign = NULL, *library_path = NULL, *preload;
	Dl_info info;
	void *h, *fn;
	int err = find_program(argv0, path, sizeof(path)), prog;

	/* LD_PRELOAD: the command inherits ours */
	if (check_preload(argv0, getenv("LD_PRELOAD"), "LD_PRELOAD="))
		return -ENOENT;
	if (!err)
		err = elf_interp(path, interp, sizeof(interp), &foreign);
	/* glibc's loader run as the command: the program it loads decides, with the libc of
	 * its --library-path when it has one there */
	if (!err && !interp[0] && !strncmp(path__base(path), "ld-linux", 8)) {
		prog = loader_program(argv, &library_path, &preload);
		if (!prog)
			return fail(-ENOENT, "'%s' is glibc's loader, with no program to run: "
				    "--memory follows a program's malloc", argv0);
		if (check_preload(argv[prog], preload, "--preload "))
			return -ENOENT;
		argv0 = argv[prog];
		err = find_program(argv0, path, sizeof(path));
		if (!err)
			err = elf_interp(path, interp, sizeof(interp), &foreign);
		/* the loader takes a program without its own (a static one is refused below) */
		if (!err && !interp[0])
			snprintf(interp, sizeof(interp), "ld-linux");
	}
	if (err == -ENOEXEC)	/* a script: its interpreter is a program of the system's */
		interp[0] = '?';
	else if (err)
		return fail(err, "cannot read '%s': %s", argv0, strerror(-err));
	if (!interp[0])
		return fail(-ENOENT, "'%s' is statically linked: --memory follows glibc's shared "
			    "malloc, which it does not call", argv0);
	if (interp[0] != '?' && !strstr(interp, "ld-linux"))
		return fail(-ENOENT, "'%s' is not linked with glibc (its loader is '%s', musl's?): "
			    ALLOCATOR_REFUSED, argv0, interp);
	if (foreign)
		return fail(-ENOENT, "'%s' is linked with %s: " ALLOCATOR_REFUSED, argv0, foreign);
	if (library_path && !libc_in_path(library_path, libc, size))
		return 0;
	/* libc's own malloc, looked up in libc: ours may be another's (an ASan build's); ours
	 * is the command's, found by the same LD_LIBRARY_PATH */
	h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	fn = h ? dlsym(h, "malloc") : NULL;
	if (h)
		dlclose(h);
	if (!fn || !dladdr(fn, &info) || !info.dli_fname || !strstr(info.dli_fname, "libc.so"))
		return fail(-ENOENT, "cannot find glibc's libc.so: --memory follows its malloc");
	snprintf(libc, size, "%s", info.dli_fname);
	return 0;
}

static int process_libc(int pid, char *libc, size_t size)
{
	char path[64], line[PATH_MAX + 128];
	const char *foreign = NULL;
	FILE *f;
	int err = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return fail(-errno, "cannot open '%s': %s", path, strerror(errno));
	while (!foreign && fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/'), *base;

		if (!file)
			continue;
		file[strcspn(file, "\n")] = 0;
		base = strrchr(file, '/') + 1;
		foreign = foreign_allocator(base);
		if (err && !strcmp(base, "libc.so.6")) {
			snprintf(libc, size, "/proc/%d/root%s", pid, file);
			err = 0;
		}
	}
	fclose(f);
	if (foreign)
		return fail(-ENOENT, "process %d allocates with %s (it maps %s): " ALLOCATOR_REFUSED,
			    pid, foreign, strrchr(line, '/') + 1);
	if (err)
		return fail(err, "process %d has no glibc mapped (static, or musl): --memory follows "
			    "glibc's malloc only", pid);
	return 0;
}

static int func_offset(const char *libc, const char *fn, u64 *off);

/* the machine hsbpf's BPF programs read the arguments of (its calling convention) */
#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#else
#define HOST_MACHINE EM_NONE
#endif

int memory__check_libc(const char *libc)
{
	int fd = open(libc, O_RDONLY | O_CLOEXEC);
	GElf_Ehdr eh;
	bool host = false;
	Elf *e;
	u64 off;

	if (fd < 0)
		return fail(-errno, "cannot open '%s': %s", libc, strerror(errno));
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	host = e && gelf_getclass(e) == ELFCLASS64 && gelf_getehdr(e, &eh) && eh.e_machine == HOST_MACHINE;
	elf_end(e);
	close(fd);
	/* a 32-bit program's libc: its arguments are not where the probes read them */
	if (!host)
		return fail(-ENOENT, "'%s' is not a 64-bit libc of this machine: --memory follows "
			    "this machine's calling convention only", libc);
	/* stripped of its symbol table, a libc keeps its dynamic symbols, which the probes
	 * need; without section headers (or built without malloc) it has none to find */
	if (func_offset(libc, "malloc", &off) || func_offset(libc, "free", &off))
		return fail(-ENOENT, "'%s' has no dynamic symbol malloc or free that hsbpf can "
			    "read (its section headers stripped?): --memory places its probes by "
			    "them", libc);
	return 0;
}

int memory__find_libc(char *const *argv, int pid, char *libc, size_t size)
{
	int err = argv ? command_libc(argv, libc, size) : process_libc(pid, libc, size);

	return err ? err : memory__check_libc(libc);
}

/* the file offset of fn's first instruction in libc (its dynamic symbol); 0 or -errno */
static int func_offset(const char *libc, const char *fn, u64 *off)
{
	int fd = open(libc, O_RDONLY | O_CLOEXEC), err = -ENOENT;
	Elf_Scn *scn = NULL;
	Elf *e;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && err && (scn = elf_nextscn(e, scn))) {
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !d)
			continue;
		for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize && err; i++) {
			GElf_Sym sym;
			const char *name;
			Elf_Scn *text;
			GElf_Shdr th;

			if (!gelf_getsym(d, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (!name || strcmp(name, fn))
				continue;
			text = elf_getscn(e, sym.st_shndx);
			if (!text || !gelf_getshdr(text, &th) || sym.st_value < th.sh_addr)
				break;
			*off = th.sh_offset + sym.st_value - th.sh_addr;
			err = 0;
		}
	}
	elf_end(e);
	close(fd);
	return err;
}

/* the bytes of fn's first instruction in libc (its file's copy, n at most); 0 or -errno */
static int read_entry(const char *libc, const char *fn, u8 *buf, size_t n)
{
	u64 off;
	int fd, err = func_offset(libc, fn, &off);

	if (err)
		return err;
	fd = open(libc, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = pread(fd, buf, n, off) == (ssize_t)n ? 0 : -EIO;
	close(fd);
	return err;
}

size_t memory__probe_offset(const char *libc, const char *fn)
{
	/* test %rdi,%rdi then a jcc: the jump, which leaves the argument as it was */
	static const u8 test_rdi[] = { 0x48, 0x85, 0xff };
	u8 b[5];

	if (read_entry(libc, fn, b, sizeof(b)))
		return 0;
	if (!memcmp(b, test_rdi, sizeof(test_rdi)) && ((b[3] >= 0x70 && b[3] <= 0x7f) ||
						       (b[3] == 0x0f && b[4] >= 0x80 && b[4] <= 0x8f)))
		return sizeof(test_rdi);
	return 0;
}

bool memory__have_sessions(void)
{
	const char *env = getenv("HSBPF_MEMORY_PROBES");
	struct btf *btf;
	bool have;

	if (env && !strcmp(env, "classic"))
		return false;
	btf = btf__load_vmlinux_btf();
	have = btf && btf__find_by_name_kind(btf, "bpf_session_is_return", BTF_KIND_FUNC) > 0;
	btf__free(btf);
	return have;
}

/* BPF_LINK_CREATE of a uprobe_multi link (Linux 6.6), which the linux/bpf.h and libbpf (1.1)
 * this builds with do not have: the kernel's union bpf_attr, link_create part */
struct uprobe_multi_attr {
	u32 prog_fd;
	u32 target_fd;
	u32 attach_type;
	u32 flags;
	u64 path;
	u64 offsets;
	u64 ref_ctr_offsets;
	u64 cookies;
	u32 cnt;
	u32 multi_flags;
	u32 pid;
};

int memory__attach_session(int prog_fd, const char *libc, const char *fn, int pid)
{
	struct uprobe_multi_attr a = {};
	u64 off;
	int fd, err = func_offset(libc, fn, &off);

	if (err)
		return err;
	a.prog_fd = prog_fd;
	a.attach_type = MEMORY_TRACE_UPROBE_SESSION;
	a.path = (uintptr_t)libc;
	a.offsets = (uintptr_t)&off;
	a.cnt = 1;
	a.pid = pid > 0 ? pid : 0;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

void memory__fill_tables(u32 log2_q16[HSBPF_MEM_LOG_N], u32 g_q16[HSBPF_MEM_G_N])
{
	for (int i = 0; i < HSBPF_MEM_LOG_N; i++)
		log2_q16[i] = lround(log2(1.0 + (double)i / (1 << HSBPF_MEM_LOG_BITS)) * 65536);
	g_q16[0] = 65536;
	for (int i = 1; i < HSBPF_MEM_G_N; i++) {
		double x = (double)i / (1 << HSBPF_MEM_G_STEP);

		g_q16[i] = lround(x / -expm1(-x) * 65536);
	}
}

void memory__fill_stats(struct profile_stats *st, const u64 c[HSBPF_MEM_STAT_NR])
{
	st->mem_calls = c[HSBPF_MEM_CALLS];
	st->mem_bytes = c[HSBPF_MEM_BYTES];
	st->mem_sampled = c[HSBPF_MEM_SAMPLED];
	st->mem_freed = c[HSBPF_MEM_FREED];
	st->mem_failed = c[HSBPF_MEM_FAILED];
	st->mem_live_full = c[HSBPF_MEM_LIVE_FULL];
	st->mem_full = c[HSBPF_MEM_FULL];
	st->mem_no_storage = c[HSBPF_MEM_NO_STORAGE];
	st->mem_inuse_end = c[HSBPF_MEM_INUSE_END];
	st->mem_inuse_exited = c[HSBPF_MEM_INUSE_EXITED];
}

bool memory__in_profile(const struct profile *p)
{
	return p->meta.alloc_period != 0;
}

int memory__parse_view(const char *name, enum memory_view *view)
{
	for (int i = 0; i < MEMORY_VIEW_NR; i++) {
		if (!strcmp(name, view_names[i])) {
			*view = i;
			return 0;
		}
	}
	return fail(-EINVAL, "unknown sample type '%s' (alloc_space, alloc_objects, inuse_space, "
		    "inuse_objects)", name);
}

const char *memory__view_name(enum memory_view view)
{
	return view < MEMORY_VIEW_NR ? view_names[view] : "?";
}

/* what a sample counts in a view: bytes, or objects rounded; 0 when not of its kind */
static u64 view_count(u32 flags, u64 objects, u64 bytes, enum memory_view view)
{
	u32 kind = (flags & HSBPF_KEY_STATE_MASK) >> HSBPF_KEY_STATE_SHIFT;
	u32 want = view <= MEMORY_ALLOC_OBJECTS ? HSBPF_MEM_ALLOC : HSBPF_MEM_INUSE;

	if (!(flags & HSBPF_KEY_MEMORY) || kind != want)
		return 0;
	if (view == MEMORY_ALLOC_OBJECTS || view == MEMORY_INUSE_OBJECTS)
		return (objects + (1 << (HSBPF_MEM_OBJ_SHIFT - 1))) >> HSBPF_MEM_OBJ_SHIFT;
	return bytes;
}

double memory__variance(u64 objects, u64 bytes, u64 period, bool of_objects)
{
	double o = (double)objects / (1 << HSBPF_MEM_OBJ_SHIFT), s, p;

	if (!objects || !bytes || !period)
		return 0;
	/* a slot is one stack's allocations, mostly of one size: their mean */
	s = bytes / o;
	p = -expm1(-s / period);
	if (!(p > 0) || p >= 1)
		return 0;
	return of_objects ? o * (1 - p) / p : bytes * s * (1 - p) / p;
}

/* report's view; with variance, each sample's weight the variance of its count */
static void select_view(struct profile *p, enum memory_view view, bool variance)
{
	bool objects = view == MEMORY_ALLOC_OBJECTS || view == MEMORY_INUSE_OBJECTS;
	u64 period = p->meta.alloc_period;
	size_t n = 0;

	for (size_t i = 0; i < p->nr_samples; i++) {
		struct profile_sample *s = &p->samples[i];
		u64 count = view_count(s->flags, s->count, s->weight, view);

		if (variance)
			s->weight = llround(memory__variance(s->count, s->weight, period, objects));
		s->count = count;
		if (s->count)
			p->samples[n++] = *s;
	}
	p->nr_samples = n;
	n = 0;
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		struct profile_stack_sample *s = &p->stack_samples[i];
		u64 count = view_count(s->flags, s->count, s->weight, view);

		if (variance)
			s->weight = llround(memory__variance(s->count, s->weight, period, objects));
		s->count = count;
		if (s->count)
			p->stack_samples[n++] = *s;
	}
	p->nr_stack_samples = n;
	snprintf(p->meta.memory_view, sizeof(p->meta.memory_view), "%s", view_names[view]);
}

void memory__select(struct profile *p, enum memory_view view)
{
	select_view(p, view, false);
}

void memory__select_variance(struct profile *p, enum memory_view view)
{
	select_view(p, view, true);
}

/* the view a sample's objects count in */
static enum memory_view objects_view(u32 flags)
{
	return memory__is_inuse(flags) ? MEMORY_INUSE_OBJECTS : MEMORY_ALLOC_OBJECTS;
}

void memory__select_all(struct profile *p, enum memory_view first)
{
	struct profile_sample *s = p->samples;
	struct profile_stack_sample *ss = p->stack_samples;
	size_t n = 0;

	/* the objects views' counts, the weights left as they are: bytes */
	for (size_t i = 0; i < p->nr_samples; i++) {
		s[i].count = view_count(s[i].flags, s[i].count, s[i].weight, objects_view(s[i].flags));
		if (s[i].count)	/* an allocation is at least one object */
			s[n++] = s[i];
	}
	p->nr_samples = n;
	n = 0;
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		ss[i].count = view_count(ss[i].flags, ss[i].count, ss[i].weight, objects_view(ss[i].flags));
		if (ss[i].count)
			ss[n++] = ss[i];
	}
	p->nr_stack_samples = n;
	snprintf(p->meta.memory_view, sizeof(p->meta.memory_view), "all");
	snprintf(p->meta.memory_first, sizeof(p->meta.memory_first), "%s", memory__view_name(first));
}

bool memory__is_inuse(u32 flags)
{
	return (flags & HSBPF_KEY_STATE_MASK) >> HSBPF_KEY_STATE_SHIFT == HSBPF_MEM_INUSE;
}

const char *memory__bytes(double bytes, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;

	while (bytes >= 1024 && u < 4) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
	return buf;
}

void memory__print_header(const struct profile *p, const char *prefix, FILE *out)
{
	const struct profile_stats *st = &p->stats;
	char a[32], b[32];

	fprintf(out, "%ssampled allocations: %" PRIu64 " of %" PRIu64 " calls (%s asked), one per %s on "
		"average; view %s\n", prefix, st->mem_sampled, st->mem_calls,
		memory__bytes(st->mem_bytes, a, sizeof(a)), memory__bytes(p->meta.alloc_period, b, sizeof(b)),
		p->meta.memory_view[0] ? p->meta.memory_view : "all");
	fprintf(out, "%slive at the end: %" PRIu64 " sampled allocations (%" PRIu64 " of exited "
		"processes); freed: %" PRIu64 "\n", prefix, st->mem_inuse_end, st->mem_inuse_exited,
		st->mem_freed);
	if (st->mem_live_full)
		fprintf(out, "%sWARNING: %" PRIu64 " sampled allocations were not remembered (the address "
			"map was full): never counted in use\n", prefix, st->mem_live_full);
	if (st->mem_full)
		fprintf(out, "%sWARNING: %" PRIu64 " sampled allocations were lost: the sample map was full "
			"(raise --map-entries)\n", prefix, st->mem_full);
	if (st->mem_no_storage)
		fprintf(out, "%sWARNING: %" PRIu64 " calls were missed: no task storage for the thread\n",
			prefix, st->mem_no_storage);
}
