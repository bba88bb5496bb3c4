// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unwind tables against an independent reader of the same call-frame information (binutils'
 * readelf --debug-dump=frames-interp), at every row of every FDE of libc, ld.so and the stack
 * fixtures; the page index against a plain search; and the rows hsbpf treats specially. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "helpers.h"
#include "unwind/unwind_table.h"

TestSuite(unwind_table, .fini = cleanup_tmpdir, .timeout = 120);

/* the last row at or below vaddr, searched plainly */
static const struct unwind_row *plain_find(const struct unwind_table *t, u64 vaddr)
{
	const struct unwind_row *r = NULL;

	for (size_t i = 0; i < t->nr_rows && t->base + t->rows[i].pc <= vaddr; i++)
		r = &t->rows[i];
	return vaddr < t->end ? r : NULL;
}

/* readelf's name of a general register ("rbx+56"): its DWARF number, -1 for others */
static int dwarf_reg(const char *v)
{
	static const char *const names[] = { "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
					     "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15" };
	size_t len = strcspn(v, "+-");

	for (int i = 0; i < 16; i++)
		if (strlen(names[i]) == len && !strncmp(v, names[i], len))
			return i;
	return -1;
}

struct interp_stats {
	size_t rows, checked, exp, skipped;
};

/* readelf's interpretation of one row: "LOC CFA [reg columns...]"; cols names the columns */
static void check_interp_row(const struct unwind_table *t, char **cols, int ncols, char *line,
			     struct interp_stats *st)
{
	char *tok[32], *save = NULL;
	int n = 0;
	u64 loc;
	const struct unwind_row *r;

	for (char *s = strtok_r(line, " \t\n", &save); s && n < 32; s = strtok_r(NULL, " \t\n", &save))
		tok[n++] = s;
	if (n < 2 || n != ncols)
		return;
	loc = strtoull(tok[0], NULL, 16);
	r = unwind_table__find(t, loc);
	st->rows++;
	cr_assert(r, "no row in force at %#llx", (unsigned long long)loc);
	cr_assert_eq(r, plain_find(t, loc), "the page index finds another row at %#llx", (unsigned long long)loc);
	for (int c = 1; c < n; c++) {
		const char *col = cols[c], *v = tok[c];

		if (!strcmp(col, "CFA")) {
			if (!strcmp(v, "exp")) {
				/* an expression: the signal trampoline, a realigned frame, the PLT, or
				 * what hsbpf does not follow */
				st->exp++;
				cr_expect(r->cfa == HSBPF_CFA_PLT || (r->flags & HSBPF_ROW_DEREF) ||
					  r->cfa == HSBPF_CFA_NONE, "%#llx: expression CFA as %u", (unsigned long long)loc, r->cfa);
				return;
			}
			if (r->cfa == HSBPF_CFA_END) {
				st->checked++;
				return;	/* the ra column says undefined; checked there */
			}
			{
				int reg = dwarf_reg(v);
				const char *off = v + strcspn(v, "+-");

				if (reg < 0) {
					cr_expect_eq(r->cfa, HSBPF_CFA_NONE, "%#llx: CFA %s followed",
						     (unsigned long long)loc, v);
					st->skipped++;
					return;
				}
				cr_expect_eq(r->cfa, HSBPF_CFA_REG, "%#llx: CFA %s as %u", (unsigned long long)loc, v, r->cfa);
				cr_expect_eq(r->cfa_reg, reg, "%#llx: %s", (unsigned long long)loc, v);
				cr_expect_eq(r->cfa_off, strtol(off, NULL, 10), "%#llx: %s, offset %d",
					     (unsigned long long)loc, v, r->cfa_off);
			}
		} else if (!strcmp(col, "ra")) {
			if (!strcmp(v, "u")) {
				cr_expect_eq(r->cfa, HSBPF_CFA_END, "%#llx: undefined ra", (unsigned long long)loc);
			} else if (v[0] == 'c') {
				cr_expect_eq(unwind_row__ra(r), HSBPF_SAVED_CFA, "%#llx", (unsigned long long)loc);
				cr_expect_eq(r->ra_off, strtol(v + 1, NULL, 10), "%#llx: ra %s", (unsigned long long)loc, v);
			}
		} else if (!strcmp(col, "rbp") && r->cfa == HSBPF_CFA_REG) {
			if (v[0] == 'c') {
				cr_expect_eq(unwind_row__rbp(r), HSBPF_SAVED_CFA, "%#llx: rbp %s", (unsigned long long)loc, v);
				cr_expect_eq(r->rbp_off, strtol(v + 1, NULL, 10), "%#llx: rbp %s", (unsigned long long)loc, v);
			} else if (!strcmp(v, "u")) {
				/* readelf says 'u' for a register no rule names, which the ABI keeps */
				cr_expect(unwind_row__rbp(r) == HSBPF_SAVED_SAME || unwind_row__rbp(r) == HSBPF_SAVED_UNDEF);
			}
		}
	}
	st->checked++;
}

/* every row readelf interprets for an object's .eh_frame (or .debug_frame when it has no
 * .eh_frame), checked against the table */
static void check_against_readelf(const char *path, const char *section, size_t min_rows)
{
	struct unwind_table *t;
	struct interp_stats st = { 0 };
	char cmd[1024], line[4096], *cols[32];
	int ncols = 0;
	bool in_fde = false;
	FILE *f;

	cr_assert_eq(unwind_table__build_path(path, &t), 0, "%s", path);
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=%s %s 2>/dev/null", section, path);
	f = popen(cmd, "r");
	cr_assert(f);
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "   LOC ")) {
			char *save = NULL;

			for (int i = 0; i < ncols; i++)
				free(cols[i]);
			ncols = 0;
			for (char *s = strtok_r(line, " \t\n", &save); s && ncols < 32; s = strtok_r(NULL, " \t\n", &save))
				cols[ncols++] = strdup(s);
		} else if (in_fde && ncols && line[0] >= '0' && line[0] <= 'f' && strlen(line) > 16 &&
			   line[16] == ' ') {
			check_interp_row(t, cols, ncols, line, &st);
		} else if (strstr(line, " FDE ") || strstr(line, " CIE")) {
			/* a CIE's rows are its initial state, at no address */
			in_fde = strstr(line, " FDE ");
			for (int i = 0; i < ncols; i++)
				free(cols[i]);
			ncols = 0;
		}
	}
	for (int i = 0; i < ncols; i++)
		free(cols[i]);
	pclose(f);
	cr_expect_geq(st.rows, min_rows, "%s: readelf gave %zu rows", path, st.rows);
	cr_expect_geq(st.checked, st.rows * 95 / 100, "%s: %zu of %zu rows checked (%zu expressions, %zu "
		      "other registers)", path, st.checked, st.rows, st.exp, st.skipped);
	unwind_table__free(t);
}

Test(unwind_table, libc_agrees_with_readelf)
{
	check_against_readelf("/lib/x86_64-linux-gnu/libc.so.6", "frames-interp", 20000);
}

Test(unwind_table, ld_so_agrees_with_readelf)
{
	check_against_readelf("/lib64/ld-linux-x86-64.so.2", "frames-interp", 1000);
}

/* the page index finds what a plain search finds, at every byte of a real object's code */
Test(unwind_table, page_index_equals_plain_search)
{
	struct unwind_table *t;

	cr_assert_eq(unwind_table__build_path("/lib64/ld-linux-x86-64.so.2", &t), 0);
	cr_assert_gt(t->nr_rows, 1000);
	for (u64 a = t->base; a < t->end; a++)
		cr_assert_eq(unwind_table__find(t, a), plain_find(t, a), "at %#llx", (unsigned long long)a);
	cr_expect_null(unwind_table__find(t, t->base - 1));
	cr_expect_null(unwind_table__find(t, t->end));
	unwind_table__free(t);
}

static const struct unwind_row *row_at_symbol(const struct unwind_table *t, const char *path,
					      const char *sym, u64 delta)
{
	struct run_result r;
	u64 addr;

	run(&r, "nm -D --defined-only %s | awk '$3 ~ /^%s(@|$)/ { print $1 }' | head -1", path, sym);
	if (!r.out[0])
		run(&r, "nm --defined-only %s | awk '$3 ~ /^%s(@|$)/ { print $1 }' | head -1", path, sym);
	cr_assert(r.out[0], "no symbol %s in %s", sym, path);
	addr = strtoull(r.out, NULL, 16) + delta;
	return unwind_table__find(t, addr);
}

/* glibc's signal trampoline: the caller's registers are in the ucontext at the stack pointer;
 * the thread start of clone: the outermost frame */
Test(unwind_table, special_rows_of_libc)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	struct unwind_table *t;
	const struct unwind_row *r = NULL;
	size_t signals = 0, ends = 0;

	cr_assert_eq(unwind_table__build_path(libc, &t), 0);
	for (size_t i = 0; i < t->nr_rows; i++) {
		if (t->rows[i].flags & HSBPF_ROW_SIGNAL) {
			signals++;
			r = &t->rows[i];
		}
		ends += t->rows[i].cfa == HSBPF_CFA_END;
	}
	cr_assert_eq(signals, 1, "%zu signal frames", signals);
	/* struct rt_sigframe: uc_mcontext at 40; rsp, rip, rbp at 40 + 120, + 128, + 80 */
	cr_expect_eq(r->cfa, HSBPF_CFA_REG);
	cr_expect_eq(r->cfa_reg, HSBPF_DWARF_RSP);
	cr_expect(r->flags & HSBPF_ROW_DEREF);
	cr_expect_eq(r->cfa_off, 160);
	cr_expect_eq(unwind_row__ra(r), HSBPF_SAVED_BASE);
	cr_expect_eq(r->ra_off, 168);
	cr_expect_eq(unwind_row__rbp(r), HSBPF_SAVED_BASE);
	cr_expect_eq(r->rbp_off, 120);
	cr_expect_geq(ends, 1, "clone's child start is the outermost frame");
	r = row_at_symbol(t, libc, "qsort", 0);
	cr_assert(r);
	cr_expect_eq(r->cfa, HSBPF_CFA_REG);
	cr_expect_eq(r->cfa_off, 8, "at a function's entry the CFA is rsp + 8");
	unwind_table__free(t);
}

/* glibc's clone ends its FDE before the syscall: the parent's return from it (where a thread
 * creating another is preempted or blocked) keeps the entry rule, the child's start is still
 * the outermost frame */
Test(unwind_table, clone_parent_after_the_syscall_has_the_entry_rule)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	struct unwind_table *t;
	const struct unwind_row *r;
	struct run_result res;
	u64 sys, child;

	run(&res, "objdump -d %s --start-address=0x$(nm -D --defined-only %s | awk '$3 ~ /^clone@/ "
	    "{ print $1 }') | awk '/syscall/ { sub(\":\", \"\", $1); print $1; n++ } n == 2 { exit }'",
	    libc, libc);
	cr_assert_eq(sscanf(res.out, "%llx %llx", (unsigned long long *)&sys,
			    (unsigned long long *)&child), 2, "clone's syscalls: %s", res.out);
	cr_assert_eq(unwind_table__build_path(libc, &t), 0);
	cr_expect_geq(t->st.syscall_tails, 2, "clone and clone3: %u tails", t->st.syscall_tails);
	for (u64 pc = sys; pc < sys + 8; pc++) {
		r = unwind_table__find(t, pc);
		cr_assert(r, "%#llx", (unsigned long long)pc);
		cr_expect(r->cfa == HSBPF_CFA_REG && r->cfa_reg == HSBPF_DWARF_RSP && r->cfa_off == 8 &&
			  unwind_row__ra(r) == HSBPF_SAVED_CFA && r->ra_off == -8,
			  "%#llx (clone's syscall at %#llx): cfa %u reg %u off %d", (unsigned long long)pc,
			  (unsigned long long)sys, r->cfa, r->cfa_reg, r->cfa_off);
	}
	/* the child's exit syscall, in its own FDE: the outermost frame */
	r = unwind_table__find(t, child);
	cr_assert(r);
	cr_expect_eq(r->cfa, HSBPF_CFA_END, "the child's frame at %#llx", (unsigned long long)child);
	unwind_table__free(t);
}

Test(unwind_table, bad_input)
{
	struct unwind_table *t = (void *)1;
	char path[600];
	struct run_result r;

	cr_expect_eq(unwind_table__build_path("/nonexistent", &t), -ENOENT);
	cr_expect_null(t);
	cr_expect_eq(unwind_table__build_path("/etc/passwd", &t), -ENOEXEC);
	cr_expect_eq(unwind_table__build_path("/tmp", &t), -EINVAL);
	snprintf(path, sizeof(path), "%s/fifo", tmpdir());
	run(&r, "mkfifo %s", path);
	cr_expect_eq(unwind_table__build_path(path, &t), -EINVAL, "a FIFO must not block");
	/* an object without call-frame information */
	snprintf(path, sizeof(path), "%s/nocfi", tmpdir());
	run(&r, "objcopy --remove-section=.eh_frame --remove-section=.eh_frame_hdr --remove-section=.debug_frame "
	    "/bin/true %s", path);
	cr_assert_eq(r.status, 0, "%s", r.err);
	cr_expect_eq(unwind_table__build_path(path, &t), -ENODATA);
	/* the .eh_frame's bytes overwritten with junk: no crash, fewer good FDEs */
	snprintf(path, sizeof(path), "%s/junk", tmpdir());
	run(&r, "cp /bin/true %s && off=$(readelf -SW %s | awk '$2 == \".eh_frame\" { print $5 }') && "
	    "printf '\\377\\377\\377\\377\\001\\002\\003' | dd of=%s bs=1 seek=$((0x$off + 40)) conv=notrunc 2>/dev/null",
	    path, path, path);
	cr_assert_eq(r.status, 0, "%s", r.err);
	if (!unwind_table__build_path(path, &t))
		unwind_table__free(t);
}

/* the fuzzer's corpus (tests/fuzz/unwind-corpus, make fuzz), built again on every run: under
 * ASan in make check, any memory error in the builder on these inputs fails the suite */
Test(unwind_table, fuzz_corpus_replays_cleanly)
{
	struct run_result r;
	char list[600], path[1200];
	int n = 0, built = 0;
	FILE *f;

	snprintf(list, sizeof(list), "%s/corpus.txt", tmpdir());
	cr_assert_eq(run(&r, "ls -d %s/* > %s", env_path("OUTPUT", ".output", "../tests/fuzz/unwind-corpus"),
			 list), 0, "%s", r.err);
	f = fopen(list, "r");
	cr_assert(f);
	elf_version(EV_CURRENT);
	while (fgets(path, sizeof(path), f)) {
		struct unwind_table *t;
		char *buf;
		size_t size;
		FILE *in;
		Elf *elf;

		path[strcspn(path, "\n")] = 0;
		in = fopen(path, "rb");
		if (!in)
			continue;
		fseek(in, 0, SEEK_END);
		size = ftell(in);
		rewind(in);
		buf = malloc(size + 1);
		cr_assert(buf);
		if (fread(buf, 1, size, in) == size && (elf = elf_memory(buf, size))) {
			if (!unwind_table__build(elf, NULL, &t)) {
				for (size_t i = 1; i < t->nr_rows; i++)
					cr_assert_gt(t->rows[i].pc, t->rows[i - 1].pc, "%s: rows out of order", path);
				built++;
				unwind_table__free(t);
			}
			elf_end(elf);
		}
		free(buf);
		fclose(in);
		n++;
	}
	fclose(f);
	cr_expect_gt(n, 50, "corpus of %d files", n);
	cr_expect_gt(built, 5, "only %d of %d inputs gave a table", built, n);
}

/* the first address in [lo, hi) whose row is stale, or 0 */
static u64 first_stale(const struct unwind_table *t, u64 lo, u64 hi)
{
	for (u64 a = lo; a < hi; a++) {
		const struct unwind_row *r = unwind_table__find(t, a);

		if (r && r->cfa == HSBPF_CFA_STALE)
			return a;
	}
	return 0;
}

/* libgcc's four functions that install a handler's context: from their call of
 * uw_install_context_1 to the epilogue's `jmp *%rcx` the rows are stale; before and after,
 * what the call-frame information says. Checked against objdump: the stale range starts at a
 * call to the one function all four call there, and ends after the jmp. */
Test(unwind_table, libgcc_context_install_is_stale)
{
	static const char *const fns[] = { "_Unwind_RaiseException", "_Unwind_Resume",
					   "_Unwind_Resume_or_Rethrow", "_Unwind_ForcedUnwind" };
	const char *lib = "/lib/x86_64-linux-gnu/libgcc_s.so.1";
	char target[4][32];
	struct unwind_table *t;

	cr_assert_eq(unwind_table__build_path(lib, &t), 0);
	cr_expect_eq(t->st.eh_install_marked, 4);
	cr_expect_eq(t->st.eh_install_unmarked, 0);
	for (int i = 0; i < 4; i++) {
		struct run_result r;
		u64 start, end, stale, jmp;
		const struct unwind_row *before, *after;

		run(&r, "nm -D --defined-only -S %s | awk '$4 ~ /^%s(@|$)/ { print $1, $2 }' | head -1",
		    lib, fns[i]);
		cr_assert(sscanf(r.out, "%lx %lx", &start, &end) == 2, "no %s in %s", fns[i], lib);
		end += start;
		stale = first_stale(t, start, end);
		cr_assert(stale, "%s has no stale row", fns[i]);
		run(&r, "objdump -d --start-address=%#lx --stop-address=%#lx %s | awk '$0 ~ /jmp +\\*%%rcx/ "
		    "{ sub(\":\", \"\", $1); print $1; exit }'", start, end, lib);
		jmp = strtoull(r.out, NULL, 16);
		cr_assert(jmp > stale, "%s: no jmp *%%rcx after %#lx", fns[i], stale);
		for (u64 a = stale; a < jmp + 2; a++)
			cr_expect_eq(unwind_table__find(t, a)->cfa, HSBPF_CFA_STALE, "%s at %#lx", fns[i], a);
		before = unwind_table__find(t, stale - 1);
		after = unwind_table__find(t, jmp + 2);
		cr_expect_neq(before->cfa, HSBPF_CFA_STALE);
		cr_expect(!after || jmp + 2 >= end || after->cfa != HSBPF_CFA_STALE);
		/* what is called where the range starts */
		run(&r, "objdump -d --start-address=%#lx --stop-address=%#lx %s | awk '/call/ { print $(NF-1); exit }'",
		    stale, stale + 16, lib);
		cr_assert(r.out[0], "%s: the stale range starts at %#lx, not at a call", fns[i], stale);
		snprintf(target[i], sizeof(target[i]), "%.31s", r.out);
		cr_expect_str_eq(target[i], target[0], "%s calls another function there", fns[i]);
	}
	unwind_table__free(t);
}
