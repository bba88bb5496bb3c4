// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What the timing model needs of an instruction, from its bytes at translation (capstone, as
 * QEMU itself links it): its class, operand size, length and the registers it reads and writes.
 * The plugin cannot read registers, so this is all it knows before the instruction runs. */
#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>
#include "timing.h"

struct tm_decoder {
	csh cs;
	cs_insn *insn;
	int8_t reg_bit[X86_REG_ENDING];	/* capstone register -> model register, -1: none */
};

/* rax, eax, ax, al, ah -> 0 and so on; xmm/ymm/zmm N -> TM_REG_VEC + N */
static int reg_bit(const char *n)
{
	static const char *const legacy[8][5] = {
		{ "rax", "eax", "ax", "al", "ah" }, { "rcx", "ecx", "cx", "cl", "ch" },
		{ "rdx", "edx", "dx", "dl", "dh" }, { "rbx", "ebx", "bx", "bl", "bh" },
		{ "rsp", "esp", "sp", "spl", "" },   { "rbp", "ebp", "bp", "bpl", "" },
		{ "rsi", "esi", "si", "sil", "" },   { "rdi", "edi", "di", "dil", "" },
	};
	int v;

	if (!n)
		return -1;
	for (int r = 0; r < 8; r++)
		for (int k = 0; k < 5; k++)
			if (legacy[r][k][0] && !strcmp(n, legacy[r][k]))
				return r;
	if (n[0] == 'r' && n[1] >= '0' && n[1] <= '9') {
		v = atoi(n + 1);
		return v >= 8 && v <= 15 ? v : -1;
	}
	if (!strcmp(n, "rflags") || !strcmp(n, "eflags") || !strcmp(n, "flags"))
		return TM_REG_FLAGS;
	if ((n[0] == 'x' || n[0] == 'y' || n[0] == 'z') && !strncmp(n + 1, "mm", 2)) {
		v = atoi(n + 3);
		return v < 16 ? TM_REG_VEC + v : -1;
	}
	if (!strncmp(n, "st", 2) || !strncmp(n, "fp", 2))
		return TM_REG_X87;
	return -1;
}

struct tm_decoder *tm_decoder__new(void)
{
	struct tm_decoder *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &d->cs) != CS_ERR_OK) {
		free(d);
		return NULL;
	}
	cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_ON);
	d->insn = cs_malloc(d->cs);
	if (!d->insn) {
		tm_decoder__free(d);
		return NULL;
	}
	for (int r = 0; r < X86_REG_ENDING; r++)
		d->reg_bit[r] = reg_bit(cs_reg_name(d->cs, r));
	return d;
}

void tm_decoder__free(struct tm_decoder *d)
{
	if (!d)
		return;
	if (d->insn)
		cs_free(d->insn, 1);
	cs_close(&d->cs);
	free(d);
}

static int has_group(const cs_insn *in, uint8_t g)
{
	for (int i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == g)
			return 1;
	return 0;
}

/* the class of an instruction by its mnemonic, for the FP and divide families */
static int fp_class(const char *m)
{
	size_t n = strlen(m);

	if (m[0] == 'v')
		m++, n--;
	if (!strncmp(m, "div", 3) && n > 3)
		return TM_FDIV;
	if (!strncmp(m, "sqrt", 4))
		return TM_FSQRT;
	if (!strncmp(m, "mul", 3) || !strncmp(m, "fmadd", 5) || !strncmp(m, "fmsub", 5) ||
	    !strncmp(m, "fnmadd", 6) || !strncmp(m, "fnmsub", 6) || !strncmp(m, "pmul", 4))
		return TM_FMUL;
	if (!strncmp(m, "add", 3) || !strncmp(m, "sub", 3) || !strncmp(m, "cvt", 3) ||
	    !strncmp(m, "comis", 5) || !strncmp(m, "ucomis", 6) || !strncmp(m, "min", 3) ||
	    !strncmp(m, "max", 3) || !strncmp(m, "cmp", 3) || !strncmp(m, "round", 5))
		return n > 3 && (m[n - 2] == 's' || m[n - 2] == 'p') ? TM_FADD : -1;
	return -1;
}

int tm_decoder__decode(struct tm_decoder *d, const uint8_t *code, size_t size, uint64_t pc,
		       struct tm_insn *out)
{
	const uint8_t *p = code;
	uint64_t addr = pc;
	cs_regs rr, rw;
	uint8_t nr = 0, nw = 0;
	cs_insn *in = d->insn;
	const cs_x86 *x;
	int fc;

	memset(out, 0, sizeof(*out));
	out->cls = TM_ALU;
	out->len = size;
	if (!cs_disasm_iter(d->cs, &p, &size, &addr, in))
		return -1;
	x = &in->detail->x86;
	out->len = in->size;
	if (!cs_regs_access(d->cs, in, rr, &nr, rw, &nw)) {
		for (int i = 0; i < nr; i++)
			if (d->reg_bit[rr[i]] >= 0)
				out->src |= 1ull << d->reg_bit[rr[i]];
		for (int i = 0; i < nw; i++)
			if (d->reg_bit[rw[i]] >= 0)
				out->dst |= 1ull << d->reg_bit[rw[i]];
	}
	if (x->eflags)
		out->dst |= 1ull << TM_REG_FLAGS;
	/* zeroing idioms depend on nothing */
	if ((in->id == X86_INS_XOR || in->id == X86_INS_SUB || in->id == X86_INS_PXOR ||
	     in->id == X86_INS_XORPS || in->id == X86_INS_XORPD || in->id == X86_INS_VPXOR ||
	     in->id == X86_INS_VXORPS) && x->op_count >= 2 && x->operands[0].type == X86_OP_REG &&
	    x->operands[1].type == X86_OP_REG && x->operands[0].reg == x->operands[x->op_count - 1].reg)
		out->src = 0;
	out->size = x->op_count ? x->operands[0].size : 8;
	switch (in->id) {
	case X86_INS_DIV:
	case X86_INS_IDIV:
		out->cls = TM_DIV;
		return 0;
	case X86_INS_MUL:
	case X86_INS_IMUL:
	case X86_INS_MULX:
		out->cls = TM_IMUL;
		return 0;
	case X86_INS_JMP:
		out->cls = x->operands[0].type == X86_OP_IMM ? TM_JMP : TM_JMP_IND;
		return 0;
	case X86_INS_CALL:
		out->cls = x->operands[0].type == X86_OP_IMM ? TM_CALL : TM_CALL_IND;
		return 0;
	case X86_INS_RET:
		out->cls = TM_RET;
		return 0;
	case X86_INS_SYSCALL:
	case X86_INS_INT:
	case X86_INS_INT3:
		out->cls = TM_SYSCALL;
		return 0;
	case X86_INS_CPUID:
	case X86_INS_RDTSC:
	case X86_INS_RDTSCP:
	case X86_INS_MFENCE:
	case X86_INS_LFENCE:
	case X86_INS_SFENCE:
	case X86_INS_PAUSE:
	case X86_INS_XGETBV:
		out->cls = TM_SERIAL;
		return 0;
	case X86_INS_XCHG:
		if (x->operands[0].type == X86_OP_MEM || x->operands[1].type == X86_OP_MEM)
			out->cls = TM_ATOMIC;
		return 0;
	default:
		break;
	}
	if (x->prefix[0] == X86_PREFIX_LOCK) {
		out->cls = TM_ATOMIC;
		return 0;
	}
	if (has_group(in, CS_GRP_JUMP)) {
		out->cls = TM_JCC;	/* jcc, jrcxz, loop */
		return 0;
	}
	fc = fp_class(in->mnemonic);
	if (fc >= 0) {
		size_t n = strlen(in->mnemonic);

		out->cls = fc;	/* ...ss and ...ps are single precision */
		out->size = n >= 2 && in->mnemonic[n - 1] == 's' &&
			    (in->mnemonic[n - 2] == 's' || in->mnemonic[n - 2] == 'p') ? 4 : 8;
	}
	else if (!strncmp(in->mnemonic, "f", 1) && strcmp(in->mnemonic, "fxch"))
		out->cls = strstr(in->mnemonic, "div") ? TM_FDIV : strstr(in->mnemonic, "mul") ? TM_FMUL :
			   strstr(in->mnemonic, "sqrt") ? TM_FSQRT : TM_FADD;	/* x87 */
	return 0;
}
