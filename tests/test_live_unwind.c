// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The kernel's unwinder, proved at every instruction: a uprobe at each instruction of the
 * stack fixture's functions (built -O2 -fomit-frame-pointer) runs the same BPF unwinder the
 * sample handler runs, from that instruction's registers, and the stack it finds is checked
 * against the call path the fixture is known to be on there: in prologues and epilogues, in
 * a library called back through, under qsort, across a signal frame, 200 frames deep, and in a
 * thread (down to the thread's start). */
#include <criterion/criterion.h>
#include <bpf/libbpf.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "symbols/bblock.h"
#include "symbols/elf_image.h"
#include "helpers.h"
#include "profile/profile.h"
#include "record/sampler.h"
#include "symbols/symbolizer.h"
#include "record/unwind.h"

TestSuite(live_unwind, .fini = cleanup_tmpdir, .timeout = 300);

/* the fixture's own functions, and the callers each one is known to have (fixture frames
 * only, innermost first; library frames between them are checked apart); a function with
 * several callers lists each chain */
static const struct {
	const char *func;
	const char *chains[8];
} expected[] = {
	{ "leaf", { "leaf mid_a path_a round_of_paths main", "leaf path_b round_of_paths main",
		    "leaf by_value path_sort round_of_paths main",
		    "leaf lib_inner lib_call path_lib round_of_paths main",
		    "leaf on_signal path_signal round_of_paths main",
		    "leaf recurse* path_deep round_of_paths main", "leaf work_a main",
		    "leaf work_b thread_once" } },
	{ "mid_a", { "mid_a path_a round_of_paths main" } },
	{ "path_a", { "path_a round_of_paths main" } },
	{ "path_b", { "path_b round_of_paths main" } },
	{ "by_value", { "by_value path_sort round_of_paths main" } },
	{ "path_sort", { "path_sort round_of_paths main" } },
	{ "lib_call", { "lib_call path_lib round_of_paths main" } },
	{ "lib_inner", { "lib_inner lib_call path_lib round_of_paths main" } },
	{ "path_lib", { "path_lib round_of_paths main" } },
	{ "on_signal", { "on_signal path_signal round_of_paths main" } },
	{ "path_signal", { "path_signal round_of_paths main" } },
	{ "recurse", { "recurse* path_deep round_of_paths main" } },
	{ "path_deep", { "path_deep round_of_paths main" } },
	{ "round_of_paths", { "round_of_paths main" } },
	{ "work_a", { "work_a main" } },
	{ "work_b", { "work_b thread_once" } },
	{ "thread_once", { "thread_once" } },
};

static int expected_index(const char *func)
{
	for (size_t i = 0; i < ARRAY_SIZE(expected); i++)
		if (!strcmp(expected[i].func, func))
			return i;
	return -1;
}

/* "a b c" against the fixture frames of a stack; "x*" matches one or more x */
static bool chain_matches(const char *chain, char **names, int n)
{
	char buf[256], *save = NULL;
	int i = 0;

	snprintf(buf, sizeof(buf), "%s", chain);
	for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		size_t len = strlen(t);
		bool many = t[len - 1] == '*';

		if (many)
			t[len - 1] = 0;
		if (i >= n || strcmp(names[i], t))
			return false;
		i++;
		while (many && i < n && !strcmp(names[i], t))
			i++;
	}
	return i == n;
}

struct mapping {
	u64 start, end, pgoff;
	char path[PATH_MAX];
};

/* the executable file mappings of pid */
static int read_maps(pid_t pid, struct mapping *maps, int max)
{
	char path[64], line[PATH_MAX + 128];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	cr_assert(f);
	while (n < max && fgets(line, sizeof(line), f)) {
		char perm[8];
		struct mapping *m = &maps[n];

		m->path[0] = 0;
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &m->start, &m->end, perm, &m->pgoff,
			   m->path) >= 4 && perm[2] == 'x' && m->path[0] == '/')
			n++;
	}
	fclose(f);
	return n;
}

/* pid sleeps (in its read of stdin) */
static bool sleeping(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

static bool maps_have(const struct mapping *maps, int n, const char *suffix)
{
	for (int i = 0; i < n; i++)
		if (strstr(maps[i].path, suffix))
			return true;
	return false;
}

/* the PLT sections of an object ([lo, hi) pairs), from readelf */
static int plt_ranges(const char *path, u64 *lo, u64 *hi, int max)
{
	struct run_result r;
	int n = 0;

	run(&r, "readelf -SW %s | awk '$2 ~ /^\\.plt/ { print $4, $6 }'", path);
	for (char *line = strtok(r.out, "\n"); line && n < max; line = strtok(NULL, "\n")) {
		u64 addr, size;

		if (sscanf(line, "%lx %lx", &addr, &size) == 2 && size) {
			lo[n] = addr;
			hi[n++] = addr + size;
		}
	}
	return n;
}

/* uprobes at every instruction of the fixture functions of one object */
static int probe_object(struct sampler *s, const char *path, struct bpf_link **links, int *nr, int max,
			int *failed)
{
	struct elf_image *img = elf_image__open(path);
	struct bblock_table *t;
	int probes = 0;

	cr_assert(img, "cannot read %s", path);
	t = bblock_table__build(img);
	cr_assert(t);
	u64 plo[8], phi[8];
	int nplt = plt_ranges(path, plo, phi, 8);

	for (size_t f = 0; f < t->nr_funcs; f++) {
		const struct bblock_func *fn = &t->funcs[f];
		bool plt = false;

		for (int k = 0; k < nplt; k++)
			plt |= fn->start >= plo[k] && fn->start < phi[k];
		if (expected_index(fn->name) < 0 && !plt)
			continue;
		for (size_t i = 0; i < t->nr_insns; i++) {
			u64 v = t->insns[i], off;

			if (v < fn->start || v >= fn->end)
				continue;
			cr_assert(!elf_image__vaddr_to_off(img, v, &off), "no file offset for %#lx", v);
			cr_assert_lt(*nr, max);
			if (sampler__attach_unwind_probe(s, path, off, &links[*nr]))
				(*failed)++;
			else
				(*nr)++, probes++;
		}
	}
	bblock_table__free(t);
	elf_image__close(img);
	return probes;
}

Test(live_unwind, every_instruction_of_the_fixtures)
{
	const char *prog = fixture("stacks/callpaths"), *lib = fixture("stacks/libstacks.so");
	struct sampler_opts so = { .call_graph = HSBPF_CALL_GRAPH_DWARF, .unwind_probe = true };
	static struct bpf_link *links[8192];
	static struct mapping maps[64];
	int nr_links = 0, failed = 0, nr_maps = 0, go[2], st;
	struct profile *p = profile__new();
	struct symbolizer *sy;
	struct unwinder *u;
	struct sampler *s;
	pid_t pid;
	size_t checked = 0, complete = 0, in_lib = 0, signal = 0, deep = 0, thread = 0, qsorted = 0;
	size_t plt_probes = 0;

	cr_assert(p);
	s = sampler__open(&so);
	cr_assert(s, "cannot load the BPF programs");
	u = unwinder__new(s);
	cr_assert(u);
	/* the fixture waits for a byte on stdin, its libraries mapped, until the unwinder has
	 * its mappings */
	cr_assert_eq(pipe(go), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		dup2(go[0], STDIN_FILENO);
		close(go[0]);
		close(go[1]);
		execl(prog, prog, "once", (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	/* asleep in its read of stdin, ld.so has mapped everything */
	for (int i = 0; i < 15000 && !sleeping(pid); i++)
		usleep(1000);
	cr_assert(sleeping(pid), "the fixture does not wait for its start");
	nr_maps = read_maps(pid, maps, 64);
	cr_assert(maps_have(maps, nr_maps, "libstacks.so") && maps_have(maps, nr_maps, "libc.so"),
		  "the libraries are not mapped");
	for (int i = 0; i < nr_maps; i++) {
		cr_assert_eq(unwinder__mmap(u, pid, maps[i].start, maps[i].end - maps[i].start, maps[i].pgoff,
					    true, maps[i].path, NULL, 0, 0), 0);
		profile__add_mapping(p, pid, 0, maps[i].start, maps[i].end - maps[i].start, maps[i].pgoff,
				     maps[i].path, NULL, 0);
	}
	/* probes once it waits (its startup went through the PLT before its mappings were in) */
	cr_assert_eq(probe_object(s, prog, links, &nr_links, 8192, &failed) > 100, true);
	cr_assert_eq(probe_object(s, lib, links, &nr_links, 8192, &failed) > 5, true);
	cr_expect_eq(failed, 0, "%d instructions could not be probed", failed);
	cr_assert_eq(write(go[1], "x", 1), 1);
	close(go[1]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the fixture failed: %d", st);

	profile__finish(p);
	sy = symbolizer__new(p);
	cr_assert(sy);
	/* every probed instruction that ran: its stack against its function's known paths */
	for (int m = 0; m < nr_maps; m++) {
		for (u64 ip = maps[m].start; ip < maps[m].end; ip++) {
			struct stack_frames f;
			struct profile_sample ps = { .pid = pid, .ip = ip };
			char *names[HSBPF_MAX_FRAMES], where[300];
			struct sym_result r;
			int n = 0, e;
			bool ok = false, saw_signal = false, saw_qsort = false, saw_lib = false;
			const char *outer = "none";

			if (sampler__probe_stack(s, ip, &f))
				continue;
			symbolizer__resolve(sy, &ps, &r);
			e = expected_index(r.sym);
			snprintf(where, sizeof(where), "%s+%#llx", r.sym, (unsigned long long)r.sym_off);
			cr_assert_eq(f.ip[0], ip, "%s: frame 0 is not the probed instruction", where);
			checked++;
			for (u32 i = 0; i < f.nr; i++) {
				struct profile_sample fs = { .pid = pid, .ip = f.ip[i] };
				struct sym_result fr;

				symbolizer__resolve(sy, &fs, &fr);
				if (expected_index(fr.sym) >= 0 || !strcmp(fr.sym, "main"))
					names[n++] = strdup(fr.sym);
				saw_signal |= !strcmp(fr.sym, "__restore_rt");
				saw_qsort |= strstr(fr.sym, "qsort") || strstr(fr.sym, "msort");
				saw_lib |= strstr(fr.dso, "libstacks.so") != NULL;
				outer = fr.sym;
			}
			/* complete means down to the program's or the thread's start, nothing less */
			cr_expect(f.nr && (!strcmp(outer, "_start") || strstr(outer, "clone")),
				  "%s: the outermost frame is %s", where, f.nr ? outer : "none");
			if (e < 0) {
				/* a PLT stub: the stack goes on through the function that called it */
				plt_probes++;
				snprintf(where, sizeof(where), "PLT %#llx", (unsigned long long)(ip - maps[m].start));
				e = n ? expected_index(names[0]) : -1;
				/* called by main, or by start-up or exit code (__do_global_dtors_aux):
				 * completeness is what is checked there */
				if (e < 0 && (!n || !strcmp(names[0], "main")))
					ok = true;
			}
			for (int c = 0; e >= 0 && c < 8 && expected[e].chains[c] && !ok; c++)
				ok = chain_matches(expected[e].chains[c], names, n);
			{
				char got[2048] = "";

				for (int i = 0; i < n; i++)
					snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s ", names[i]);
				cr_expect(ok, "%s: fixture frames '%s' (%u frames, end %u)", where, got, f.nr, f.end);
			}
			if (f.end != HSBPF_STACK_COMPLETE) {
				char all[4096] = "";

				for (u32 i = 0; i < f.nr && i < 12; i++) {
					struct profile_sample fs = { .pid = pid, .ip = f.ip[i] };
					struct sym_result fr;

					symbolizer__resolve(sy, &fs, &fr);
					snprintf(all + strlen(all), sizeof(all) - strlen(all), "%#llx %s (%s); ",
						 (unsigned long long)f.ip[i], fr.sym, path__base(fr.dso));
				}
				cr_expect_eq(f.end, HSBPF_STACK_COMPLETE, "%s: the stack ended with %u after %u "
					     "frames: %s", where, f.end, f.nr, all);
			}
			complete += f.end == HSBPF_STACK_COMPLETE;
			if (n && !strcmp(names[0], "on_signal"))
				signal += saw_signal;
			if (n && !strcmp(names[0], "by_value"))
				qsorted += saw_qsort;
			in_lib += saw_lib;
			deep += f.nr > 200;
			thread += n && !strcmp(names[n - 1], "thread_once");
			for (int i = 0; i < n; i++)
				free(names[i]);
		}
	}
	cr_expect_gt(checked, 150, "only %zu instructions were checked", checked);
	cr_expect_eq(complete, checked, "%zu of %zu stacks complete", complete, checked);
	cr_expect_gt(signal, 0, "no stack crossed the signal frame");
	cr_expect_gt(qsorted, 0, "no stack went through qsort");
	cr_expect_gt(in_lib, 0, "no stack went through the library");
	cr_expect_gt(deep, 0, "no stack 200 frames deep");
	cr_expect_gt(thread, 0, "no stack in the thread");
	cr_expect_gt(plt_probes, 10, "only %zu instructions of PLT stubs ran under a probe", plt_probes);
	for (int i = 0; i < nr_links; i++)
		bpf_link__destroy(links[i]);
	symbolizer__free(sy);
	profile__free(p);
	unwinder__free(u);
	sampler__destroy(s);
}
