// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Live recordings of code that needs more than a symbol table to be named: C++ names
 * (demangled), a stripped program (functions from .eh_frame), a helper inlined at -O2, JIT
 * code named by a perf map file (node --perf-basic-prof, and a JVM's that record asks jcmd
 * for). Shares within binomial tolerance. */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "helpers.h"
#include "profile/profile.h"
#include "report/hist.h"
#include "symbols/build_id.h"
#include "hsbpf.h"
#include "symbols/inline.h"
#include "symbols/symbolizer.h"

TestSuite(live_symbols, .fini = cleanup_tmpdir, .timeout = 60);

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

Test(live_symbols, cxx_functions_by_demangled_name)
{
	struct profile *p = record_profile("-F 999 -- %s 1", fixture("cxx/cxxnames"));
	u64 a = samples_in_symbol(p, "geo::Acc<unsigned long>::operator+="),
	    b = samples_in_symbol(p, "geo::spin<unsigned long>"), total = profile__total_samples(p);
	struct run_result r;

	cr_expect_geq(a + b, total * 90 / 100, "%llu of %llu samples in the two functions",
		      (unsigned long long)(a + b), (unsigned long long)total);
	expect_share(a, a + b, 0.70, "geo::Acc<unsigned long>::operator+=");
	run(&r, "%s report -i %s --no-demangle --limit 3", hsbpf_bin(), profile_path());
	cr_expect(strstr(r.out, "_ZN3geo3AccImEpLEm"), "--no-demangle:\n%s", r.out);
	run(&r, "%s annotate -i %s 'geo::spin<unsigned long>'", hsbpf_bin(), profile_path());
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, "# geo::spin<unsigned long> in "), "%s", r.out);
	profile__free(p);
}

/* the default view splits a stripped program by function, each with its share */
Test(live_symbols, stripped_program_split_by_function)
{
	const char *full = fixture("hot7030");
	struct profile *p = record_profile("-F 999 -- %s 1", fixture("hot7030-stripped"));
	char n70[64], n30[64];
	u64 a, b, total = profile__total_samples(p);
	struct run_result r;

	snprintf(n70, sizeof(n70), "hot7030-stripped+0x%llx", (unsigned long long)symbol_vaddr(full, "work_70"));
	snprintf(n30, sizeof(n30), "hot7030-stripped+0x%llx", (unsigned long long)symbol_vaddr(full, "work_30"));
	a = samples_in_symbol(p, n70);
	b = samples_in_symbol(p, n30);
	cr_expect_geq(a + b, total * 90 / 100, "%llu of %llu samples in the two functions",
		      (unsigned long long)(a + b), (unsigned long long)total);
	expect_share(a, a + b, 0.70, n70);
	/* annotate takes the name report shows, or an address inside the function */
	run(&r, "%s annotate -i %s %s", hsbpf_bin(), profile_path(), n30);
	cr_expect_eq(r.status, 0, "%s", r.err);
	run(&r, "%s annotate -i %s 0x%llx", hsbpf_bin(), profile_path(),
	    (unsigned long long)symbol_vaddr(full, "work_70") + 4);
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, n70), "%s", r.out);
	profile__free(p);
}

/* samples in symbols whose name holds part */
static u64 samples_named(const struct profile *p, const char *part)
{
	struct symbolizer *sy = symbolizer__new(p);
	u64 n = 0;

	for (size_t i = 0; sy && i < p->nr_samples; i++) {
		struct sym_result r;

		symbolizer__resolve(sy, &p->samples[i], &r);
		if (strstr(r.sym, part))
			n += p->samples[i].count;
	}
	symbolizer__free(sy);
	return n;
}

/* node writes /tmp/perf-PID.map: the JavaScript functions are named, with their shares (node
 * names a function by tier: JS:~ interpreted, JS:^ or JS:+ baseline, JS:* optimized) */
Test(live_symbols, node_jit_functions_from_the_perf_map)
{
	/* (node logs its isolate to a file of the working folder: into the test's folder) */
	struct profile *p = record_profile("-F 999 -- node --perf-basic-prof --no-logfile-per-isolate "
					   "--logfile=%s/v8.log %s 1.5", tmpdir(), fixture("jit/hot.js"));
	u64 hot = samples_named(p, "hotLoop"), cold = samples_named(p, "coldLoop");
	struct run_result r;

	cr_expect_gt(p->nr_jitsyms, 100, "%zu JIT symbols", p->nr_jitsyms);
	cr_expect_gt(p->stats.jit_maps, 0);
	cr_expect_gt(hot + cold, 300, "%llu samples in the two functions", (unsigned long long)(hot + cold));
	expect_share(hot, hot + cold, 0.70, "hotLoop");
	run(&r, "%s report -i %s --limit 5", hsbpf_bin(), profile_path());
	cr_expect(strstr(r.out, "JS:*hotLoop "), "%s", r.out);
	cr_expect(strstr(r.out, "[JIT] perf-"), "%s", r.out);
	cr_expect_null(strstr(r.err, "//anon"), "%s", r.err);
	/* annotate by name: the samples by address in each range the function had */
	{
		struct symbolizer *sy = symbolizer__new(p);
		char sym[512] = "";

		for (size_t i = 0; i < p->nr_samples && !sym[0]; i++) {
			struct sym_result s;

			symbolizer__resolve(sy, &p->samples[i], &s);
			if (strstr(s.sym, "hotLoop") && !strchr(s.sym, '\''))
				snprintf(sym, sizeof(sym), "%s", s.sym);
		}
		symbolizer__free(sy);
		cr_assert(sym[0]);
		run(&r, "%s annotate -i %s '%s'", hsbpf_bin(), profile_path(), sym);
		cr_expect_eq(r.status, 0, "%s", r.err);
		cr_expect(strstr(r.out, "in [JIT] perf-"), "%s", r.out);
	}
	/* node leaves its map file behind */
	for (size_t i = 0; i < p->nr_jitsyms; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/tmp/perf-%u.map", p->jitsyms[i].pid);
		unlink(path);
	}
	profile__free(p);
}

/* a running JVM without a perf map (no flag): record -p asks it for one with jcmd at the end,
 * and its JIT code is named: most of its samples are in the fixture's compiled methods */
Test(live_symbols, jvm_jit_frames_named_through_jcmd, .timeout = 180)
{
	char map[64];
	struct stat sb;
	struct profile *p;
	struct run_result r;
	u64 named, all;
	pid_t pid;

	pid = spawn_jvm();
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", pid);
	cr_assert_neq(stat(map, &sb), 0, "%s exists before the recording", map);
	p = record_profile("-F 999 -d 2 -p %d", pid);
	named = samples_named(p, " Hot."), all = samples_in_pid(p, pid);
	cr_expect_eq(stat(map, &sb), 0, "record did not have the JVM write %s: %s", map, record_profile_err());
	cr_expect_gt(p->nr_jitsyms, 100, "%zu JIT symbols", p->nr_jitsyms);
	/* its main thread runs compiled code all along (about 95% of the JVM's samples), the
	 * JVM's other threads little: over half of 50 samples or more holds beyond noise, and a
	 * loaded machine may leave the JVM a small share of a core */
	cr_expect_geq(all, 50, "%llu samples of the JVM", (unsigned long long)all);
	cr_expect_gt(named, all / 2, "%llu of the JVM's %llu samples in Hot's methods",
		     (unsigned long long)named, (unsigned long long)all);
	run(&r, "%s report -i %s --limit 5", hsbpf_bin(), profile_path());
	cr_expect(strstr(r.out, " Hot.") && strstr(r.out, "[JIT] perf-"), "%s", r.out);
	reap(pid);
	unlink(map);
	profile__free(p);
}

/* the sum of the folded stacks whose leaf (last frame) is leaf */
static u64 folded_leaf(const char *out, const char *leaf)
{
	u64 n = 0;

	for (const char *l = out; l && *l;) {
		const char *nl = strchr(l, '\n'), *sp = nl ? nl : l + strlen(l);
		size_t len = strlen(leaf);

		while (sp > l && sp[-1] != ' ')
			sp--;
		if (sp - l > (long)len + 1 && !strncmp(sp - 1 - len, leaf, len) &&
		    (sp - 1 - len == l || sp[-2 - len] == ';'))
			n += strtoull(sp, NULL, 10);
		l = nl ? nl + 1 : NULL;
	}
	return n;
}

/* an always_inline helper holding work_70's loop, inlined into another inlined into work_70:
 * both named, innermost first, with their call sites by line, in stacks and in json, with
 * work_70's share (dwarf_getscopes alone gave the innermost only) */
Test(live_symbols, inlined_helper_with_its_call_site)
{
	struct profile *p = record_profile("-F 999 -g -- %s 1", fixture("inline/inlined"));
	struct symbolizer *sy = symbolizer__new(p);
	u64 inl = 0, w30 = 0, folded_inl, folded_30;
	struct run_result r;

	symbolizer__want_inline(sy);
	for (size_t i = 0; i < p->nr_samples; i++) {
		struct sym_result s;

		symbolizer__resolve(sy, &p->samples[i], &s);
		if (s.nr_inl && !strcmp(s.inl[0].name, "spin_inline") && !strcmp(s.sym, "work_70")) {
			inl += p->samples[i].count;
			cr_expect(s.inl[0].call_file && strstr(s.inl[0].call_file, "inlined.c"));
			cr_expect_gt(s.inl[0].call_line, 0);
			cr_expect(s.nr_inl == 2 && !strcmp(s.inl[1].name, "spin_twice"),
				  "%d inlined, the outer one %s", s.nr_inl, s.nr_inl > 1 ? s.inl[1].name : "missing");
			cr_expect_lt(s.inl[0].call_line, s.inl[1].call_line, "spin_inline is called in spin_twice, above work_70");
		} else if (!strcmp(s.sym, "work_30")) {
			w30 += p->samples[i].count;
			cr_expect_eq(s.nr_inl, 0, "work_30 has no inlined function");
		}
	}
	symbolizer__free(sy);
	expect_share(inl, inl + w30, 0.70, "spin_inline (inlined)");
	run(&r, "%s report -i %s --format folded", hsbpf_bin(), profile_path());
	cr_assert_eq(r.status, 0, "%s", r.err);
	folded_inl = folded_leaf(r.out, "work_70;spin_twice (inlined);spin_inline (inlined)");
	folded_30 = folded_leaf(r.out, "work_30");
	expect_share(folded_inl, folded_inl + folded_30, 0.70, "folded spin_inline (inlined)");
	run(&r, "%s report -i %s --sort line --no-call-graph --limit 3", hsbpf_bin(), profile_path());
	cr_expect(strstr(r.out, "(inlined at :"), "%s", r.out);
	cr_expect(strstr(r.out, "spin_inline (in spin_twice)"), "%s", r.out);
	/* perf's names: srcline is line, srcfile the file without the line (one row for it) */
	run(&r, "%s report -i %s --sort srcline --no-call-graph --limit 3", hsbpf_bin(), profile_path());
	cr_expect(strstr(r.out, "spin_inline (in spin_twice)"), "%s", r.out);
	run(&r, "%s report -i %s --sort srcfile --no-call-graph --format csv", hsbpf_bin(), profile_path());
	cr_expect_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.out, ",Source file\n"), "%s", r.out);
	{
		const char *file = strstr(r.out, "inlined.c\n");

		cr_expect(file && !strstr(file + 1, "inlined.c\n"), "one row for the file: %s", r.out);
	}
	/* through a file: with stacks the json can pass run()'s 64 KB of output */
	run(&r, "%s report -i %s --sort line --format json > %s/inl.json && grep -c '\"inlined\":\\[{\"symbol\":\"spin_inline\"' "
	    "%s/inl.json", hsbpf_bin(), profile_path(), tmpdir(), tmpdir());
	cr_expect(r.status == 0 && atoi(r.out) > 0, "no inlined spin_inline in the json: %s %s", r.out, r.err);
	run(&r, "%s report -i %s --format folded --no-inline", hsbpf_bin(), profile_path());
	cr_expect_null(strstr(r.out, "(inlined)"), "%s", r.out);
	/* the Children view has a row for each inlined function: work_70's share, no self (as
	 * perf's "msort_with_tmp (inlined)") */
	run(&r, "%s report -i %s --children -g --limit 20", hsbpf_bin(), profile_path());
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "spin_twice (inlined)" : "spin_inline (inlined)";
		double children = -1, self = -1;

		/* its row, not a line of a call-graph tree */
		for (const char *l = r.out; l && *l && self < 0;) {
			const char *nl = strchr(l, '\n'), *at = strstr(l, name);
			double c, s;

			if (at && (!nl || at < nl) && sscanf(l, " %lf%% %lf%%", &c, &s) == 2) {
				children = c;
				self = s;
			}
			l = nl ? nl + 1 : NULL;
		}
		cr_expect(children > 50 && children < 90, "%s: children %.2f%%: %s", name, children, r.out);
		cr_expect_eq(self, 0, "%s: self %.2f%%", name, self);
	}
	/* the flame graph draws the inlined function as a frame of its own, in the inlined kind's
	 * colour (hue 170-190, 55% saturation; user code is 10-55, 85%) */
	run(&r, "%s flamegraph -i %s -o %s/fg.svg && cat %s/fg.svg", hsbpf_bin(), profile_path(), tmpdir(), tmpdir());
	{
		const char *at = strstr(r.out, "<title>spin_inline (inlined)");
		const char *fill = at ? strstr(at, "fill=\"hsl(") : NULL;
		int hue = -1, sat = -1;

		cr_assert(fill, "no inlined frame in the flame graph (%d): %.300s", r.status, r.err);
		cr_assert_eq(sscanf(fill, "fill=\"hsl(%d,%d%%", &hue, &sat), 2);
		cr_expect(hue >= 170 && hue < 190 && sat == 55, "inlined frame coloured hsl(%d,%d%%)", hue, sat);
	}
	profile__free(p);
}

/* The samples of dlswap's libwork1..4 (the flat ones, or with stacks the stacks' sampled user
 * frames): the four libraries take turns at one address, so only the mapping in force when a
 * sample was taken names it right. n[0]: their sum. */
static void dlswap_counts(const struct profile *p, bool stacks, u64 n[5])
{
	struct symbolizer *sy = symbolizer__new(p);
	size_t nr = stacks ? p->nr_stack_samples : p->nr_samples;

	cr_assert(sy);
	memset(n, 0, 5 * sizeof(*n));
	for (size_t i = 0; i < nr; i++) {
		struct profile_sample s = stacks ? (struct profile_sample){ 0 } : p->samples[i];
		struct sym_result r;
		int lib;

		if (stacks) {
			const struct profile_stack_sample *ss = &p->stack_samples[i];
			const struct profile_stack *u = profile__stack(p, ss->user);

			if (!u || !u->nr || (ss->flags & HSBPF_KEY_KERNEL))
				continue;
			s = (struct profile_sample){ .pid = ss->pid, .exec_ns = ss->exec_ns,
						     .map_ns = ss->map_ns, .ip = profile__frames(p, u)[0],
						     .count = ss->count };
		}
		symbolizer__resolve(sy, &s, &r);
		if (sscanf(r.sym, "libwork%d", &lib) == 1 && lib >= 1 && lib <= 4) {
			char want[16];

			snprintf(want, sizeof(want), "lib%d.so", lib);
			cr_expect(strstr(r.dso, want), "libwork%d in %s", lib, r.dso);
			n[lib] += s.count;
			n[0] += s.count;
		}
	}
	symbolizer__free(sy);
}

/* the four libraries were mapped, all at one address (else the test proves nothing) */
static void expect_one_address(const struct profile *p)
{
	u64 start[5] = { 0 };

	for (size_t i = 0; i < p->nr_mappings; i++) {
		const char *path = profile__str(p, p->mappings[i].path), *base = strrchr(path, '/');
		int lib;

		if (base && sscanf(base, "/lib%d.so", &lib) == 1 && lib >= 1 && lib <= 4 &&
		    strstr(path, "dlswap/")) {
			cr_expect(!start[0] || p->mappings[i].start == start[0],
				  "%s at 0x%llx, another at 0x%llx", path,
				  (unsigned long long)p->mappings[i].start, (unsigned long long)start[0]);
			start[0] = p->mappings[i].start;
			start[lib] = 1;
		}
	}
	for (int lib = 1; lib <= 4; lib++)
		cr_expect(start[lib], "lib%d.so never mapped", lib);
}

/* each library a quarter, within the report's own 95% interval (hist__ci95) */
static void expect_quarters(const struct profile *p, bool stacks, const char *how)
{
	u64 n[5];

	dlswap_counts(p, stacks, n);
	expect_one_address(p);
	cr_expect_gt(n[0], 150, "%s: %llu samples in libwork1..4", how, (unsigned long long)n[0]);
	for (int lib = 1; lib <= 4; lib++) {
		double share = n[0] ? (double)n[lib] / n[0] : 0, ci = hist__ci95(n[lib], n[0]);

		cr_expect(fabs(share - 0.25) <= ci, "%s: libwork%d %.1f%% of %llu, 25%% +- %.1f%%",
			  how, lib, 100 * share, (unsigned long long)n[0], 100 * ci);
	}
}

/* dlopen, dlclose, dlopen at one address: every sample named by the library loaded when it
 * was taken (the last one loaded took 81-98% of them before mapping generations) */
Test(live_symbols, libraries_loaded_in_turn_at_one_address)
{
	struct profile *p = record_profile("-- %s 40 5", fixture("dlswap/dlswap"));

	expect_quarters(p, false, "record");
	profile__free(p);
	p = record_profile("-g -- %s 40 5", fixture("dlswap/dlswap"));
	expect_quarters(p, false, "record -g, flat");
	expect_quarters(p, true, "record -g, stacks");
	profile__free(p);
}

/* the same attached to a running process: its libraries' generations start at the attach */
Test(live_symbols, libraries_loaded_in_turn_at_one_address_attached)
{
	char cmd[600];
	struct profile *p;
	pid_t pid;

	snprintf(cmd, sizeof(cmd), "exec %s 100000 5", fixture("dlswap/dlswap"));
	pid = spawn(cmd);
	wait_descendant(pid, "dlswap", 1);
	/* a library's mmap record lost leaves its samples to the one before at that address */
	p = record_profile_whole("-p %d -d 2", pid);
	reap(pid);
	expect_quarters(p, false, "record -p");
	profile__free(p);
}

/* perf's recording imported: each sample's generation from its time and the mmap records */
Test(live_symbols, libraries_loaded_in_turn_at_one_address_imported)
{
	char path[600];
	struct run_result r;
	struct profile *p;

	/* --buildid-mmap: perf 6.1 aborts reading MMAP2 records another tool's build-id events
	 * flagged (an hsbpf before it read build-ids itself, another perf --buildid-mmap), unless
	 * it asks for build-ids itself */
	run(&r, "cd %s && perf record -q --buildid-mmap -o perf.data -- %s 40 5 >/dev/null && "
	    "%s import perf.data -o p.data", tmpdir(), fixture("dlswap/dlswap"), hsbpf_bin());
	cr_assert_eq(r.status, 0, "%s", r.err);
	snprintf(path, sizeof(path), "%s/p.data", tmpdir());
	cr_assert_eq(profile__read(path, &p), 0);
	expect_quarters(p, false, "perf record, imported");
	profile__free(p);
}

static int perf_record_and_report(struct run_result *r)
{
	return run(r, "cd %s && perf record -g -o perf.data -- %s 0.3 && perf report -i perf.data "
		   "--stdio 2>&1", tmpdir(), fixture("hot7030"));
}

/* hsbpf asks the kernel for no build-ids: a plain perf record beside it (perf 6.1 aborted on
 * the MMAP2 records the kernel then flagged for every listener) records, and perf reads it */
Test(live_symbols, perf_record_beside_a_recording)
{
	char log[600], cmd[2000];
	struct run_result r, alone;
	pid_t pid;

	snprintf(log, sizeof(log), "%s/record.log", tmpdir());
	snprintf(cmd, sizeof(cmd), "exec %s record -v -a -d 30 --no-buildid-cache -o %s/a.data 2>%s",
		 hsbpf_bin(), tmpdir(), log);
	pid = spawn(cmd);
	cr_assert(wait_file_contains(log, "recording", 15000), "hsbpf record did not start");
	perf_record_and_report(&r);
	reap(pid);
	if (r.status) {
		/* the kernel flags every listener's records while any event on the machine asks
		 * for build-ids: perf failing without hsbpf too is another tool's doing */
		perf_record_and_report(&alone);
		if (alone.status)
			cr_skip_test("perf record -g fails without hsbpf too: another tool on this "
				     "machine asks the kernel for build-ids (perf record --buildid-mmap, "
				     "an older hsbpf)");
	}
	cr_assert_eq(r.status, 0, "perf record -g beside hsbpf record failed: %s", r.err);
	cr_expect(strstr(r.out, "hot"), "perf report shows no hot7030 function:\n%s", r.out);
}

/* a program run from a file deleted as it exits, five times: each run's object is named by
 * its build-id, read while it lived (the kernel gave it in the mmap record before) */
Test(live_symbols, short_lived_program_from_a_deleted_file_identified)
{
	u8 want[BUILD_ID_MAX];
	size_t want_len, n = 0;
	struct profile *p;

	cr_assert_eq(build_id__read(fixture("hot7030"), want, sizeof(want), &want_len), 0);
	p = record_profile("--no-buildid-cache -- sh -c 'for i in 1 2 3 4 5; do cp %s %s/h$i && "
			   "%s/h$i 0.03; rm %s/h$i; done'", fixture("hot7030"), tmpdir(), tmpdir(),
			   tmpdir());
	for (size_t i = 0; i < p->nr_mappings; i++) {
		const struct profile_mapping *m = &p->mappings[i];
		const char *path = profile__str(p, m->path);

		if (strncmp(path, tmpdir(), strlen(tmpdir())) || !strstr(path, "/h"))
			continue;
		n++;
		cr_expect(m->build_id_size == want_len && !memcmp(m->build_id, want, want_len),
			  "'%s' not identified", path);
	}
	cr_expect_geq(n, 5, "%zu mappings of the deleted programs", n);
	profile__free(p);
}

/* perf record --buildid-mmap of node, imported: the perf map node left names the JIT frames
 * (as perf report names them), and the import says from which map; the same kernel's kallsyms
 * names the kernel frames, by the build-id of the kernel's mmap record */
Test(live_symbols, import_names_jit_frames_from_the_perf_map_node_left)
{
	struct run_result r;
	char path[600];
	struct profile *p = NULL;
	u64 hot, cold;
	const char *m;
	unsigned pid;

	run(&r, "cd %s && perf record -q --buildid-mmap --no-bpf-event -F 999 -g -o node.perf -- node "
	    "--perf-basic-prof --no-logfile-per-isolate --logfile=v8.log %s 1.5 >/dev/null && "
	    "%s import node.perf -o node.data", tmpdir(), fixture("jit/hot.js"), hsbpf_bin());
	cr_assert_eq(r.status, 0, "%s", r.err);
	m = strstr(r.err, "JIT names from '/tmp/perf-");
	cr_assert(m, "%s", r.err);
	cr_assert_eq(sscanf(m, "JIT names from '/tmp/perf-%u.map'", &pid), 1);
	/* --buildid-mmap: the kernel's build-id is in its mmap record */
	cr_expect(strstr(r.err, "kernel frames named from '/proc/kallsyms'"), "%s", r.err);
	cr_expect(strstr(r.err, "kernel build-id ("), "%s", r.err);
	snprintf(path, sizeof(path), "%s/node.data", tmpdir());
	cr_assert_eq(profile__read(path, &p), 0);
	cr_expect_gt(p->nr_jitsyms, 100, "%zu JIT symbols", p->nr_jitsyms);
	hot = samples_named(p, "hotLoop");
	cold = samples_named(p, "coldLoop");
	cr_expect_gt(hot + cold, 300, "%llu samples in the two functions", (unsigned long long)(hot + cold));
	expect_share(hot, hot + cold, 0.70, "hotLoop");
	run(&r, "%s report -i %s --limit 5 --no-children", hsbpf_bin(), path);
	cr_expect(strstr(r.out, "JS:*hotLoop "), "%s", r.out);
	cr_expect(strstr(r.out, "[JIT] perf-"), "%s", r.out);
	profile__free(p);
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	unlink(path);
}

/* perf record -g of a syscall-bound program, imported on the machine (and boot) that recorded
 * it: its kernel frames are named from kallsyms, as perf report names them */
Test(live_symbols, import_names_kernel_frames_of_the_running_kernel)
{
	struct run_result r;
	u64 kernel = 0, unknown = 0;

	run(&r, "cd %s && perf record -q -B --no-bpf-event -g -o dd.perf -- dd if=/dev/zero "
	    "of=/dev/null bs=64 count=300000 2>/dev/null && %s import dd.perf -o dd.data",
	    tmpdir(), hsbpf_bin());
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect(strstr(r.err, "kernel frames named from '/proc/kallsyms'"), "%s", r.err);
	cr_expect(strstr(r.err, "is the running kernel's"), "%s", r.err);
	run(&r, "cd %s && %s report -i dd.data --format folded", tmpdir(), hsbpf_bin());
	cr_assert_eq(r.status, 0, "%s", r.err);
	for (const char *l = r.out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *nl = strchr(l, '\n'), *sp = memrchr(l, ' ', nl ? (size_t)(nl - l) : strlen(l));
		u64 n = sp ? strtoull(sp + 1, NULL, 10) : 0;
		const char *leaf = sp ? sp : l;

		while (leaf > l && leaf[-1] != ';')
			leaf--;
		if (!strstr(l, "_[k]") || (nl && strstr(l, "_[k]") > nl))
			continue;
		kernel += n;
		if (!strncmp(leaf, "[unknown]", 9))
			unknown += n;
	}
	cr_assert_gt(kernel, 20, "%s", r.out);
	cr_expect_lt(unknown, kernel / 20, "%llu of %llu kernel samples unnamed",
		     (unsigned long long)unknown, (unsigned long long)kernel);
}
