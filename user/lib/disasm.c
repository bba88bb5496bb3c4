// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* capstone, in detail mode, classified the way block building and edge kinds need it.
 * Loaded with dlopen the first time it is needed: libcapstone has 77,000 relative relocations,
 * which the dynamic loader would apply (and fault in) at every start of hsbpf, though only
 * annotate and the block builder decode; that was a fifth of a small report's time. */
#include <capstone/capstone.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/disasm.h"

/* the library of the headers this is built with: another major's structures differ */
#define STR_(x) #x
#define STR(x) STR_(x)
#define CAPSTONE_SONAME "libcapstone.so." STR(CS_API_MAJOR)

static struct {
	cs_err (*open)(cs_arch, cs_mode, csh *);
	cs_err (*option)(csh, cs_opt_type, size_t);
	cs_insn *(*malloc)(csh);
	void (*free)(cs_insn *, size_t);
	cs_err (*close)(csh *);
	bool (*disasm_iter)(csh, const uint8_t **, size_t *, uint64_t *, cs_insn *);
	bool (*insn_group)(csh, const cs_insn *, unsigned int);
	int err;
} cs;

static void load_capstone(void)
{
	void *h = dlopen(CAPSTONE_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		error("cannot load capstone, the disassembler: %s (Debian: apt-get install libcapstone" STR(CS_API_MAJOR) ")",
		      dlerror());
		cs.err = -ENOENT;
		return;
	}
#define SYM(f)								\
	do {								\
		*(void **)&cs.f = dlsym(h, "cs_" #f);			\
		if (!cs.f) {						\
			error("cannot load capstone: %s", dlerror());	\
			cs.err = -ENOENT;				\
			dlclose(h);					\
			return;						\
		}							\
	} while (0)
	SYM(open);
	SYM(option);
	SYM(malloc);
	SYM(free);
	SYM(close);
	SYM(disasm_iter);
	SYM(insn_group);
#undef SYM
}

struct disasm {
	csh h;
	cs_insn *insn;
};

int disasm__load(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, load_capstone);
	return cs.err;
}

struct disasm *disasm__new(void)
{
	struct disasm *d;
	int err = disasm__load();

	if (err) {
		errno = -err;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	if (cs.open(CS_ARCH_X86, CS_MODE_64, &d->h) != CS_ERR_OK) {
		free(d);
		errno = EINVAL;
		return NULL;
	}
	cs.option(d->h, CS_OPT_DETAIL, CS_OPT_ON);
	d->insn = cs.malloc(d->h);
	if (!d->insn) {
		cs.close(&d->h);
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	return d;
}

void disasm__free(struct disasm *d)
{
	if (!d)
		return;
	cs.free(d->insn, 1);
	cs.close(&d->h);
	free(d);
}

static bool is_string_op(unsigned id)
{
	switch (id) {
	case X86_INS_MOVSB: case X86_INS_MOVSW: case X86_INS_MOVSD: case X86_INS_MOVSQ:
	case X86_INS_STOSB: case X86_INS_STOSW: case X86_INS_STOSD: case X86_INS_STOSQ:
	case X86_INS_LODSB: case X86_INS_LODSW: case X86_INS_LODSD: case X86_INS_LODSQ:
	case X86_INS_CMPSB: case X86_INS_CMPSW: case X86_INS_CMPSD: case X86_INS_CMPSQ:
	case X86_INS_SCASB: case X86_INS_SCASW: case X86_INS_SCASD: case X86_INS_SCASQ:
	case X86_INS_INSB: case X86_INS_INSW: case X86_INS_INSD:
	case X86_INS_OUTSB: case X86_INS_OUTSW: case X86_INS_OUTSD:
		return true;
	default:
		return false;
	}
}

/* CET's shadow-stack instructions, which capstone 4 does not decode (libgcc's unwinder has
 * them): incssp and rdssp, F3 [REX.W] 0F AE /5 and F3 [REX.W] 0F 1E /1 with a register
 * operand; their length, or 0 */
static u32 shadow_stack_insn(const u8 *c, size_t size, const char **name)
{
	size_t i = 1;

	if (size < 4 || c[0] != 0xf3)
		return 0;
	if ((c[1] & 0xf0) == 0x40)	/* REX */
		i++;
	if (i + 2 >= size || c[i] != 0x0f || (c[i + 2] & 0xc0) != 0xc0)
		return 0;
	if (c[i + 1] == 0xae && ((c[i + 2] >> 3) & 7) == 5)
		*name = "incssp";
	else if (c[i + 1] == 0x1e && ((c[i + 2] >> 3) & 7) == 1)
		*name = "rdssp";
	else
		return 0;
	return i + 3;
}

int disasm__one(struct disasm *d, const u8 *code, size_t size, u64 vaddr, struct insn_info *info)
{
	const u8 *p = code;
	uint64_t addr = vaddr;
	cs_insn *in = d->insn;
	const cs_x86 *x;
	bool direct;

	memset(info, 0, sizeof(*info));
	if (!cs.disasm_iter(d->h, &p, &size, &addr, in)) {
		const char *name;

		info->size = shadow_stack_insn(code, size, &name);
		if (info->size) {
			info->kind = INSN_PLAIN;
			snprintf(info->text, sizeof(info->text), "%s%s", name,
				 (code[1] & 0x48) == 0x48 ? "q" : "d");
			return 0;
		}
		info->kind = INSN_INVALID;
		info->size = 1;
		snprintf(info->text, sizeof(info->text), "(bad)");
		return -EINVAL;
	}
	x = &in->detail->x86;
	info->size = in->size;
	snprintf(info->text, sizeof(info->text), "%s%s%s", in->mnemonic, in->op_str[0] ? " " : "",
		 in->op_str);
	direct = x->op_count == 1 && x->operands[0].type == X86_OP_IMM;
	if (direct)
		info->target = x->operands[0].imm;
	info->rep_string = (x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE) &&
			   is_string_op(in->id);
	if (cs.insn_group(d->h, in, CS_GRP_RET) || cs.insn_group(d->h, in, CS_GRP_IRET))
		info->kind = INSN_RET;
	else if (cs.insn_group(d->h, in, CS_GRP_CALL))
		info->kind = direct ? INSN_CALL : INSN_INDIRECT_CALL;
	else if (cs.insn_group(d->h, in, CS_GRP_JUMP))
		info->kind = in->id != X86_INS_JMP ? INSN_COND_JUMP : direct ? INSN_JUMP : INSN_INDIRECT_JUMP;
	else if (cs.insn_group(d->h, in, CS_GRP_INT) || in->id == X86_INS_SYSCALL ||
		 in->id == X86_INS_SYSENTER)
		info->kind = INSN_SYSCALL;
	else if (in->id == X86_INS_HLT || in->id == X86_INS_UD2)
		info->kind = INSN_HALT;
	else
		info->kind = INSN_PLAIN;
	return 0;
}

/* calls and syscalls end blocks too: the callee may not come back (exit, longjmp, a throw),
 * and Pin's BBLs and QEMU's translation blocks end there as well */
bool insn__ends_block(enum insn_kind k)
{
	return k != INSN_PLAIN;
}
