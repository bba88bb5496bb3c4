// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unwind tables from DWARF call-frame information. FDEs are enumerated from the raw section
 * (their address ranges decoded here), and each FDE's rows are read through elfutils' CFI
 * interpreter (dwarf_cfi_addrframe, which runs the CIE and FDE programs, remember/restore
 * state included), one row at a time by dwarf_frame_info's range. Rules are turned into the
 * few forms the kernel's unwinder follows; anything else becomes "no information", counted. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/disasm.h"
#include "unwind/unwind_table.h"
#include "lib/vdso.h"

/* every pc must fit the row's 32 bits relative to the table base */
#define MAX_SPAN		(1ull << 32)
#define PAGE_SIZE_U		(1ull << HSBPF_UNWIND_PAGE_SHIFT)

#define DWARF_RA		16	/* x86-64's return address column */
#define DWARF_RCX		2

/* an FDE's address range and where its rows come from */
struct fde_range {
	u64 start, end;
	bool debug_frame;
};

struct builder {
	struct unwind_table *t;
	Elf *elf;			/* the object's code, for eh_install_range */
	struct fde_range *fdes;
	size_t nr_fdes, cap_fdes;
	size_t cap_rows;
};

/* ---- FDE enumeration ---- */

static int read_uleb(const u8 **p, const u8 *end, u64 *out)
{
	u64 v = 0;
	int shift = 0;

	while (*p < end && shift < 64) {
		u8 b = *(*p)++;

		v |= (u64)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -EINVAL;
}

static int read_sleb(const u8 **p, const u8 *end, s64 *out)
{
	u64 v = 0;
	int shift = 0;

	while (*p < end && shift < 64) {
		u8 b = *(*p)++;

		v |= (u64)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= ~0ull << shift;
			*out = (s64)v;
			return 0;
		}
	}
	return -EINVAL;
}

/* one DW_EH_PE-encoded pointer at *p (whose address is addr_of_p); absolute and pc-relative
 * applications only, which is what compilers and linkers write for FDEs */
static int read_encoded(const u8 **p, const u8 *end, u8 enc, u64 addr_of_p, u64 *out)
{
	const u8 *q = *p;
	u64 v = 0;
	s64 sv;
	size_t n = 0;

	if (enc == DW_EH_PE_omit)
		return -EINVAL;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: case DW_EH_PE_udata8: case DW_EH_PE_sdata8: n = 8; break;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: n = 2; break;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: n = 4; break;
	case DW_EH_PE_uleb128:
		if (read_uleb(&q, end, &v))
			return -EINVAL;
		break;
	case DW_EH_PE_sleb128:
		if (read_sleb(&q, end, &sv))
			return -EINVAL;
		v = (u64)sv;
		break;
	default:
		return -EINVAL;
	}
	if (n) {
		if ((size_t)(end - q) < n)
			return -EINVAL;
		for (size_t i = 0; i < n; i++)
			v |= (u64)q[i] << (8 * i);
		if ((enc & 0x0f) == DW_EH_PE_sdata2)
			v = (u64)(s64)(int16_t)v;
		else if ((enc & 0x0f) == DW_EH_PE_sdata4)
			v = (u64)(s64)(int32_t)v;
		q += n;
	}
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		break;
	case DW_EH_PE_pcrel:
		v += addr_of_p;
		break;
	default:
		return -EINVAL;
	}
	*p = q;
	*out = v;
	return 0;
}

/* the FDE pointer encoding a CIE's augmentation gives ('R'), absptr without one */
static int fde_encoding(const Dwarf_CIE *cie, u8 *enc)
{
	const u8 *d = cie->augmentation_data, *end = d + cie->augmentation_data_size;
	const char *a = cie->augmentation;

	*enc = DW_EH_PE_absptr;
	if (!a || a[0] != 'z')
		return a && a[0] ? -EINVAL : 0;
	for (a++; *a; a++) {
		u64 skip;
		u8 penc;

		switch (*a) {
		case 'R':
			if (d >= end)
				return -EINVAL;
			*enc = *d++;
			break;
		case 'L':
			d++;
			break;
		case 'P':	/* personality: an encoded pointer, skipped */
			if (d >= end)
				return -EINVAL;
			penc = *d++;
			if (read_encoded(&d, end, penc & 0x7f, 0, &skip))
				return -EINVAL;
			break;
		case 'S': case 'B':
			break;
		default:
			return -EINVAL;
		}
		if (d > end)
			return -EINVAL;
	}
	return 0;
}

static int add_fde(struct builder *b, u64 start, u64 end, bool debug_frame)
{
	if (array__reserve((void **)&b->fdes, &b->cap_fdes, b->nr_fdes + 1, sizeof(*b->fdes)))
		return -ENOMEM;
	b->fdes[b->nr_fdes++] = (struct fde_range){ start, end, debug_frame };
	return 0;
}

/* every FDE of one CFI section: its [initial_location, + address_range) */
static int list_fdes(struct builder *b, Elf *elf, Elf_Data *data, u64 sh_addr, bool eh_frame)
{
	const u8 *base = data->d_buf;
	Dwarf_Off off = 0, next;
	int err = 0;

	for (; off < data->d_size; off = next) {
		Dwarf_CFI_Entry entry, cie;
		const u8 *p, *end;
		u64 start, range;
		u8 enc;
		int ret = dwarf_next_cfi((const unsigned char *)elf_getident(elf, NULL), data, eh_frame,
					 off, &next, &entry);

		if (ret > 0)
			break;		/* the end */
		if (ret < 0) {
			if (next <= off)
				break;	/* cannot skip it */
			b->t->st.fdes_bad++;
			continue;
		}
		if (dwarf_cfi_cie_p(&entry))
			continue;
		if (dwarf_next_cfi((const unsigned char *)elf_getident(elf, NULL), data, eh_frame,
				   entry.fde.CIE_pointer, &(Dwarf_Off){ 0 }, &cie) ||
		    !dwarf_cfi_cie_p(&cie) || (eh_frame ? fde_encoding(&cie.cie, &enc) : (enc = DW_EH_PE_absptr, 0))) {
			b->t->st.fdes_bad++;
			continue;
		}
		p = entry.fde.start;
		end = entry.fde.end;
		if (read_encoded(&p, end, enc, sh_addr + (p - base), &start) ||
		    read_encoded(&p, end, enc & 0x0f, 0, &range)) {
			b->t->st.fdes_bad++;
			continue;
		}
		if (!range || start + range < start)
			continue;	/* an empty or wrapping FDE (linker leftovers of discarded code) */
		if (!start && eh_frame)
			continue;	/* the same: relocated to 0 */
		err = add_fde(b, start, start + range, !eh_frame);
		if (err)
			break;
	}
	return err;
}

static Elf_Scn *section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	size_t shstr;
	Elf_Scn *scn = NULL;

	if (!elf || elf_getshdrstrndx(elf, &shstr))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh) || sh->sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(elf, shstr, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* ---- rows ---- */

static bool breg(const Dwarf_Op *op, u8 *reg, s64 *off)
{
	if (op->atom == DW_OP_bregx) {
		*reg = op->number;
		*off = (s64)op->number2;
		return op->number < 256;
	}
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = op->atom - DW_OP_breg0;
		*off = (s64)op->number;
		return true;
	}
	return false;
}

/* the CFA rule: reg + off, *(reg + off), or ld's PLT expression */
static bool cfa_rule(Dwarf_Frame *fr, struct unwind_row *row)
{
	static const u8 plt[] = { DW_OP_breg7, DW_OP_breg16, DW_OP_lit15, DW_OP_and, 0, DW_OP_ge,
				  DW_OP_lit3, DW_OP_shl, DW_OP_plus };
	Dwarf_Op *ops;
	size_t n;
	s64 off;
	u8 reg;

	if (dwarf_frame_cfa(fr, &ops, &n) || !n)
		return false;
	if (n == 9) {
		for (size_t i = 0; i < n; i++)
			if (i != 4 && ops[i].atom != plt[i])
				return false;
		if (ops[0].number != 8 || ops[1].number != 0 || ops[4].atom < DW_OP_lit0 ||
		    ops[4].atom > DW_OP_lit31)
			return false;
		row->cfa = HSBPF_CFA_PLT;
		row->cfa_off = ops[4].atom - DW_OP_lit0;
		return true;
	}
	if (!breg(&ops[0], &reg, &off) || off < INT32_MIN || off > INT32_MAX)
		return false;
	if (n == 2 && ops[1].atom != DW_OP_deref)
		return false;
	if (n > 2)
		return false;
	row->cfa = HSBPF_CFA_REG;
	row->cfa_reg = reg;
	row->cfa_off = off;
	if (n == 2)
		row->flags |= HSBPF_ROW_DEREF;
	return true;
}

/* where the caller's value of a register was saved: at cfa + off, or at the CFA rule's base
 * register + off; same value or undefined; false for any other rule */
static bool saved_rule(Dwarf_Frame *fr, int regno, const struct unwind_row *row, u8 *how, s16 *off)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	s64 o;
	u8 reg;

	if (dwarf_frame_register(fr, regno, mem, &ops, &n))
		return false;
	if (!n) {
		*how = ops ? HSBPF_SAVED_UNDEF : HSBPF_SAVED_SAME;
		*off = 0;
		return true;
	}
	/* an expression rule comes with the CFA pushed first, as DWARF evaluates it; a
	 * register-relative expression then ignores it (signal frames: breg7 168) */
	if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa && breg(&ops[1], &reg, &o)) {
		if (row->cfa != HSBPF_CFA_REG || reg != row->cfa_reg)
			return false;
		*how = HSBPF_SAVED_BASE;
	} else if (ops[0].atom == DW_OP_call_frame_cfa) {
		o = 0;
		if (n == 2 && ops[1].atom == DW_OP_plus_uconst)
			o = (s64)ops[1].number;
		else if (n != 1)
			return false;
		*how = HSBPF_SAVED_CFA;
	} else if (n == 1 && breg(&ops[0], &reg, &o) && row->cfa == HSBPF_CFA_REG && reg == row->cfa_reg) {
		*how = HSBPF_SAVED_BASE;
	} else {
		return false;
	}
	if (o < INT16_MIN || o > INT16_MAX)
		return false;
	*off = o;
	return true;
}

/* a frame's rules as one row; false (and a row of no information) when they are not of the
 * forms the kernel's unwinder follows */
static bool convert(Dwarf_Frame *fr, struct unwind_row *row, struct unwind_table_stats *st)
{
	Dwarf_Addr start, end;
	bool signal = false;
	u8 ra, rbp;
	s16 ra_off, rbp_off;

	dwarf_frame_info(fr, &start, &end, &signal);
	if (saved_rule(fr, DWARF_RA, row, &ra, &ra_off) && ra == HSBPF_SAVED_UNDEF) {
		row->cfa = HSBPF_CFA_END;	/* the outermost frame (_start, clone's child) */
		return true;
	}
	if (!cfa_rule(fr, row) || !saved_rule(fr, DWARF_RA, row, &ra, &ra_off) ||
	    (ra != HSBPF_SAVED_CFA && ra != HSBPF_SAVED_BASE))
		goto unsupported;
	/* rsp and rbp are known in every frame, the other registers in the sampled one only
	 * (hand-written assembly such as OpenSSL's keeps its frame base in rax or r11) */
	if (row->cfa == HSBPF_CFA_REG && row->cfa_reg > HSBPF_DWARF_LAST_GPR)
		goto unsupported;
	if (row->cfa == HSBPF_CFA_REG && row->cfa_reg != HSBPF_DWARF_RSP && row->cfa_reg != HSBPF_DWARF_RBP)
		st->rows_leaf_only++;
	if (!saved_rule(fr, HSBPF_DWARF_RBP, row, &rbp, &rbp_off)) {
		st->rbp_unsupported++;
		rbp = HSBPF_SAVED_UNDEF;
		rbp_off = 0;
	}
	if (signal)
		row->flags |= HSBPF_ROW_SIGNAL;
	row->saved = ra | rbp << 4;
	row->ra_off = ra_off;
	row->rbp_off = rbp_off;
	return true;
unsupported:
	st->rows_unsupported++;
	memset(&row->cfa, 0, sizeof(*row) - sizeof(row->pc));
	return false;
}

static int add_row(struct builder *b, u64 pc, const struct unwind_row *r)
{
	struct unwind_table *t = b->t;
	struct unwind_row row = *r;

	row.pc = pc - t->base;
	/* rows with the same rules merge into the first */
	if (t->nr_rows && !memcmp(&t->rows[t->nr_rows - 1].cfa, &row.cfa, sizeof(row) - sizeof(row.pc)))
		return 0;
	if (t->nr_rows && t->rows[t->nr_rows - 1].pc == row.pc) {
		t->rows[t->nr_rows - 1] = row;	/* an empty range: the later rules win */
		return 0;
	}
	if (array__reserve((void **)&t->rows, &b->cap_rows, t->nr_rows + 1, sizeof(*t->rows)))
		return -ENOMEM;
	t->rows[t->nr_rows++] = row;
	return 0;
}

/* ---- libgcc's exception dispatch ---- */

/* the code bytes at vaddr in an executable section: a pointer and how many follow, or NULL */
static const u8 *code_at(Elf *elf, u64 vaddr, size_t *len)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while (elf && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR) ||
		    vaddr < sh.sh_addr || vaddr >= sh.sh_addr + sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || vaddr - sh.sh_addr >= d->d_size)
			return NULL;
		*len = d->d_size - (vaddr - sh.sh_addr);
		return (const u8 *)d->d_buf + (vaddr - sh.sh_addr);
	}
	return NULL;
}

/* a function that only returns (libgcc's _Unwind_DebugHook): endbr64, then ret */
static bool only_returns(Elf *elf, u64 vaddr)
{
	static const u8 endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t len;
	const u8 *c = code_at(elf, vaddr, &len);

	if (c && len >= sizeof(endbr64) && !memcmp(c, endbr64, sizeof(endbr64))) {
		c += sizeof(endbr64);
		len -= sizeof(endbr64);
	}
	return c && len && *c == 0xc3;
}

/*
 * A function that ends in __builtin_eh_return's epilogue (libgcc's _Unwind_RaiseException,
 * _Unwind_Resume, _Unwind_Resume_or_Rethrow, _Unwind_ForcedUnwind) first calls
 * uw_install_context_1, which copies the landing frame's registers, the return address
 * included, into the save slots its own rows describe. From that call to the epilogue's
 * `jmp *%rcx` the rows name the catching frame's callers, not this frame's (__cxa_throw, the
 * thrower and what is between are skipped), and a walk through it would end complete but
 * wrong. The range gets HSBPF_CFA_STALE, which both unwinders end as HSBPF_STACK_EH_INSTALL.
 *
 * epilogue is the first row whose CFA is rcx-based; it must start with `mov %rcx,%rsp`. The
 * call is the last direct call before it to a function that does more than return (after it
 * libgcc calls the empty _Unwind_DebugHook).
 */
static int mark_eh_install(struct builder *b, size_t first, u64 start, u64 epilogue, u64 end)
{
	static const u8 mov_rcx_rsp[] = { 0x48, 0x89, 0xcc };
	struct unwind_table *t = b->t;
	struct unwind_row stale = { .cfa = HSBPF_CFA_STALE }, after = { 0 };
	struct insn_info in;
	struct disasm *d;
	u64 call = 0, stop = 0;
	size_t len, keep;
	const u8 *ep = code_at(b->elf, epilogue, &len), *code;
	int err;

	if (!ep || len < sizeof(mov_rcx_rsp) || memcmp(ep, mov_rcx_rsp, sizeof(mov_rcx_rsp)) ||
	    !(code = code_at(b->elf, start, &len)))
		return 0;
	if (disasm__load() || !(d = disasm__new())) {
		t->st.eh_install_unmarked++;
		return 0;
	}
	for (u64 pc = start; pc < end && pc - start < len; pc += in.size) {
		if (disasm__one(d, code + (pc - start), len - (pc - start), pc, &in))
			break;
		if (pc < epilogue && in.kind == INSN_CALL && !only_returns(b->elf, in.target))
			call = pc;
		if (pc >= epilogue && in.kind == INSN_INDIRECT_JUMP) {
			stop = pc + in.size;
			break;
		}
	}
	disasm__free(d);
	if (!call || !stop) {
		t->st.eh_install_unmarked++;
		return 0;
	}
	/* the rows from call to stop become one; the row in force at stop goes on after it */
	for (size_t i = first; i < t->nr_rows && t->rows[i].pc + t->base <= stop; i++)
		after = t->rows[i];
	keep = first;
	while (keep < t->nr_rows && t->rows[keep].pc + t->base < call)
		keep++;
	/* rows past stop, kept aside while the range is rewritten */
	{
		size_t tail = keep, nr_tail;
		struct unwind_row *saved;

		while (tail < t->nr_rows && t->rows[tail].pc + t->base <= stop)
			tail++;
		nr_tail = t->nr_rows - tail;
		saved = nr_tail ? malloc(nr_tail * sizeof(*saved)) : NULL;
		if (nr_tail && !saved)
			return -ENOMEM;
		if (nr_tail)
			memcpy(saved, t->rows + tail, nr_tail * sizeof(*saved));
		t->nr_rows = keep;
		err = add_row(b, call, &stale);
		if (!err && stop < end)
			err = add_row(b, stop, &after);
		for (size_t i = 0; i < nr_tail && !err; i++)
			err = add_row(b, saved[i].pc + t->base, &saved[i]);
		free(saved);
	}
	if (!err)
		t->st.eh_install_marked++;
	return err;
}

/* one FDE's rows, from start to end (the next FDE's start at most) */
static int fde_rows(struct builder *b, Dwarf_CFI *cfi, u64 start, u64 end)
{
	u64 pc = start, epilogue = 0;
	size_t first = b->t->nr_rows;
	bool ok = true;
	int err = 0;

	while (pc < end && !err) {
		struct unwind_row row = { 0 };
		Dwarf_Frame *fr;
		Dwarf_Addr lo, hi;
		bool signal;

		if (dwarf_cfi_addrframe(cfi, pc, &fr)) {
			ok = pc > start;	/* its program ended early: the rest has no rows */
			break;
		}
		dwarf_frame_info(fr, &lo, &hi, &signal);
		convert(fr, &row, &b->t->st);
		free(fr);
		if (!epilogue && row.cfa == HSBPF_CFA_REG && row.cfa_reg == DWARF_RCX)
			epilogue = pc;
		err = add_row(b, pc, &row);
		if (hi <= pc)
			break;
		pc = hi;
	}
	if (!ok)
		b->t->st.fdes_bad++;
	else
		b->t->st.fdes++;
	if (epilogue && !err)
		err = mark_eh_install(b, first, start, epilogue, pc);
	if (pc < end && !err) {
		struct unwind_row none = { 0 };

		err = add_row(b, pc, &none);
	}
	return err;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* .eh_frame first: it is what the program itself unwinds with */
	return (int)x->debug_frame - (int)y->debug_frame;
}

/*
 * glibc's clone and clone3 end their FDE just before the `syscall` ("in the child the unwind
 * info will be wrong") and start the child's own FDE after the parent's `ret`: the parent,
 * preempted or blocked in the syscall, is at a pc no FDE covers, with its return address at
 * the stack pointer as at the function's entry (nothing is pushed before the syscall). A gap
 * that starts with `syscall` right where an FDE ends in the entry rule (CFA rsp + 8, return
 * address at CFA - 8) keeps that rule up to the next FDE, at most SYSCALL_TAIL_MAX bytes: the
 * parent's stacks go on to pthread_create and its callers instead of ending at clone3. Only
 * that rule: a function that moved its stack pointer before ending its FDE is left as it is.
 * How many bytes of the gap it covers; 0 when the gap is not such a tail.
 */
#define SYSCALL_TAIL_MAX	64

static u64 syscall_tail(struct builder *b, u64 at, u64 next)
{
	static const u8 syscall_insn[] = { 0x0f, 0x05 };
	const struct unwind_row *last;
	const u8 *code;
	size_t len;

	if (!b->t->nr_rows)
		return 0;
	last = &b->t->rows[b->t->nr_rows - 1];
	if (last->cfa != HSBPF_CFA_REG || last->cfa_reg != HSBPF_DWARF_RSP || last->cfa_off != 8 ||
	    last->flags || unwind_row__ra(last) != HSBPF_SAVED_CFA || last->ra_off != -8)
		return 0;
	code = code_at(b->elf, at, &len);
	if (!code || len < sizeof(syscall_insn) || memcmp(code, syscall_insn, sizeof(syscall_insn)))
		return 0;
	b->t->st.syscall_tails++;
	return next - at < SYSCALL_TAIL_MAX ? next - at : SYSCALL_TAIL_MAX;
}

/* the rows of every FDE in address order; a range two FDEs cover is the first's, and the gaps
 * between FDEs get rows of no information (but glibc's clone tails: syscall_tail) */
static int all_rows(struct builder *b, Dwarf_CFI *eh, Dwarf_CFI *dbg)
{
	struct unwind_table *t = b->t;
	u64 covered = t->base;
	int err = 0;

	qsort(b->fdes, b->nr_fdes, sizeof(*b->fdes), cmp_fde);
	for (size_t i = 0; i < b->nr_fdes && !err; i++) {
		struct fde_range *f = &b->fdes[i];
		u64 start = f->start > covered ? f->start : covered, end = f->end;

		if (start >= end)
			continue;
		if (i + 1 < b->nr_fdes && b->fdes[i + 1].start < end && b->fdes[i + 1].start > start)
			end = b->fdes[i + 1].start;
		if (start > covered || !t->nr_rows) {
			struct unwind_row none = { 0 };
			u64 none_at = covered + (start > covered ? syscall_tail(b, covered, start) : 0);

			err = none_at < start || !t->nr_rows ? add_row(b, none_at, &none) : 0;
			if (err)
				break;
		}
		err = fde_rows(b, f->debug_frame ? dbg : eh, start, end);
		if (f->debug_frame)
			t->st.fdes_debug_frame++;
		covered = end > covered ? end : covered;
	}
	return err;
}

static int page_index(struct unwind_table *t)
{
	size_t r = 0;

	t->nr_pages = (t->end - t->base + PAGE_SIZE_U - 1) / PAGE_SIZE_U;
	t->pages = calloc(t->nr_pages ? t->nr_pages : 1, sizeof(*t->pages));
	t->subs = calloc(t->nr_pages ? t->nr_pages : 1, sizeof(*t->subs));
	if (!t->pages || !t->subs)
		return -ENOMEM;
	for (size_t p = 0; p < t->nr_pages; p++) {
		u64 lo = p * PAGE_SIZE_U, hi = lo + PAGE_SIZE_U;
		size_t e, s;

		while (r + 1 < t->nr_rows && t->rows[r + 1].pc <= lo)
			r++;
		for (e = r + 1; e < t->nr_rows && t->rows[e].pc < hi; e++)
			;
		t->pages[p] = (struct unwind_page){ .first = r, .nr = e - r };
		/* each chunk's row in force at its start, within the page's */
		s = r;
		for (u32 k = 0; k < HSBPF_UNWIND_SUBS; k++) {
			u64 at = lo + ((u64)k << HSBPF_UNWIND_SUB_SHIFT);

			while (s + 1 < e && t->rows[s + 1].pc <= at)
				s++;
			t->subs[p].first[k] = s - r;
		}
	}
	return 0;
}

static void exec_segments(Elf *elf, struct unwind_table *t)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return;
	for (size_t i = 0; i < n && t->nr_segs < UNWIND_MAX_SEGMENTS; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			t->segs[t->nr_segs++] = (struct unwind_segment){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	}
}

const struct unwind_segment *unwind_table__segment(const struct unwind_table *t, u64 pgoff)
{
	for (int i = 0; i < t->nr_segs; i++) {
		const struct unwind_segment *sg = &t->segs[i];

		/* a mapping starts at the page holding the segment's first byte */
		if (pgoff >= (sg->offset & ~(PAGE_SIZE_U - 1)) && pgoff < sg->offset + sg->filesz)
			return sg;
	}
	return NULL;
}

static int cmp_fde_start(const void *a, const void *b)
{
	const struct unwind_fde *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int unwind_table__fdes(Elf *elf, struct unwind_fde **out, size_t *nr)
{
	struct unwind_table t = { 0 };
	struct builder b = { .t = &t };
	GElf_Shdr sh;
	Elf_Scn *scn = section(elf, ".eh_frame", &sh);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	int err;

	*out = NULL;
	*nr = 0;
	if (!d)
		return -ENODATA;
	err = list_fdes(&b, elf, d, sh.sh_addr, true);
	if (!err && !b.nr_fdes)
		err = -ENODATA;
	if (err) {
		free(b.fdes);
		return err;
	}
	*out = calloc(b.nr_fdes, sizeof(**out));
	if (!*out) {
		free(b.fdes);
		return -ENOMEM;
	}
	for (size_t i = 0; i < b.nr_fdes; i++)
		(*out)[i] = (struct unwind_fde){ b.fdes[i].start, b.fdes[i].end };
	free(b.fdes);
	*nr = b.nr_fdes;
	qsort(*out, *nr, sizeof(**out), cmp_fde_start);
	return 0;
}

int unwind_table__build(Elf *elf, Elf *debug, struct unwind_table **out)
{
	struct builder b = { .elf = elf };
	Dwarf_CFI *eh = NULL, *dbg = NULL;
	Dwarf *dw = NULL;
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf *dbg_elf = NULL;
	u64 lo = UINT64_MAX, hi = 0;
	int err = 0;

	*out = NULL;
	b.t = calloc(1, sizeof(*b.t));
	if (!b.t)
		return -ENOMEM;
	exec_segments(elf, b.t);
	if ((scn = section(elf, ".eh_frame", &sh))) {
		Elf_Data *d = elf_getdata(scn, NULL);

		eh = dwarf_getcfi_elf(elf);
		if (d && eh)
			err = list_fdes(&b, elf, d, sh.sh_addr, true);
	}
	/* .debug_frame: the object's own, or its separate debug file's */
	dbg_elf = section(elf, ".debug_frame", &sh) ? elf : section(debug, ".debug_frame", &sh) ? debug : NULL;
	if (!err && dbg_elf && (scn = section(dbg_elf, ".debug_frame", &sh))) {
		Elf_Data *d = elf_getdata(scn, NULL);

		dw = dwarf_begin_elf(dbg_elf, DWARF_C_READ, NULL);
		dbg = dw ? dwarf_getcfi(dw) : NULL;
		if (d && dbg)
			err = list_fdes(&b, dbg_elf, d, sh.sh_addr, false);
	}
	if (err)
		goto fail;
	for (size_t i = 0; i < b.nr_fdes; i++) {
		lo = b.fdes[i].start < lo ? b.fdes[i].start : lo;
		hi = b.fdes[i].end > hi ? b.fdes[i].end : hi;
	}
	if (!b.nr_fdes) {
		err = -ENODATA;
		goto fail;
	}
	b.t->base = lo & ~(PAGE_SIZE_U - 1);
	b.t->end = hi;
	if (b.t->end - b.t->base > MAX_SPAN) {
		err = -EFBIG;	/* code beyond 4 GB: a corrupt FDE, in practice */
		goto fail;
	}
	err = all_rows(&b, eh, dbg);
	if (!err)
		err = page_index(b.t);
	if (err)
		goto fail;
	*out = b.t;
	b.t = NULL;
fail:
	free(b.fdes);
	if (eh)
		dwarf_cfi_end(eh);
	if (dw)
		dwarf_end(dw);
	unwind_table__free(b.t);
	return err;
}

int unwind_table__build_path(const char *path, struct unwind_table **out)
{
	struct stat st;
	Elf *elf = NULL;
	int fd, err;

	*out = NULL;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto cleanup;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto cleanup;
	}
	err = unwind_table__build(elf, NULL, out);
cleanup:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

int unwind_table__build_vdso(struct unwind_table **out)
{
	const u8 *image;
	Elf *elf = NULL;
	char *copy;
	size_t size;
	int err;

	*out = NULL;
	err = vdso__image(&image, &size);
	if (err)
		return err;
	/* libelf reads a copy: the image itself is read-only */
	copy = malloc(size);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, image, size);
	elf_version(EV_CURRENT);
	elf = elf_memory(copy, size);
	err = elf && elf_kind(elf) == ELF_K_ELF ? unwind_table__build(elf, NULL, out) : -ENOEXEC;
	if (elf)
		elf_end(elf);
	free(copy);
	return err;
}

void unwind_table__free(struct unwind_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->pages);
	free(t->subs);
	free(t);
}

const struct unwind_row *unwind_table__find(const struct unwind_table *t, u64 vaddr)
{
	const struct unwind_page *pg;
	u32 want, lo, hi;

	if (vaddr < t->base || vaddr >= t->end)
		return NULL;
	pg = &t->pages[(vaddr - t->base) >> HSBPF_UNWIND_PAGE_SHIFT];
	if (!pg->nr)
		return NULL;
	want = vaddr - t->base;
	lo = pg->first;
	hi = pg->first + pg->nr;
	if (t->subs) {
		/* the rows of want's 256-byte chunk: from the one in force at its start to the one
		 * in force at the next chunk's */
		const struct unwind_subpage *sp = &t->subs[(vaddr - t->base) >> HSBPF_UNWIND_PAGE_SHIFT];
		u32 k = (want >> HSBPF_UNWIND_SUB_SHIFT) & (HSBPF_UNWIND_SUBS - 1);

		if (k + 1 < HSBPF_UNWIND_SUBS)
			hi = pg->first + sp->first[k + 1] + 1;
		lo = pg->first + sp->first[k];
	}
	/* the last row at or below want, as the kernel searches */
	while (hi - lo > 1) {
		u32 mid = lo + (hi - lo) / 2;

		if (t->rows[mid].pc <= want)
			lo = mid;
		else
			hi = mid;
	}
	return t->rows[lo].pc <= want ? &t->rows[lo] : NULL;
}
