// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The kernel's user-stack unwinder (bpf/stacks.bpf.h: unwind_step and fp_step) in user space.
 * Every rule, bound and end reason is the kernel's, so that a stack unwound here is the stack
 * the kernel would have unwound from the same registers and memory. */
#include "unwind/unwind_walk.h"

struct walk {
	const struct unwind_walk_ops *ops;
	const struct unwind_walk_regs *leaf;
	u64 pc, sp, bp;
	bool signal;
	/* the mapping of the last lookup: frames in it need no second one */
	bool have_map;
	int map_err;
	const struct unwind_table *t;
	u64 bias, map_lo, map_hi;
};

/* one step by frame pointer: [bp] is the caller's bp, [bp + 8] the return address */
static bool fp_step(struct walk *w, struct unwind_walk_result *res, u16 end_if_not)
{
	u64 bp = w->bp, ra, next;

	if (bp < w->sp || bp & 7 || !w->ops->read(w->ops->ctx, bp, &next) ||
	    !w->ops->read(w->ops->ctx, bp + 8, &ra) || !ra) {
		res->end = end_if_not;
		return false;
	}
	res->nr_fp++;
	w->sp = bp + 16;
	w->bp = next;
	w->pc = ra;
	w->signal = false;
	return true;
}

/* the table at look: the kernel keeps the last mapping while frames stay in it; here the
 * table's own code range stands for the mapping */
static int find(struct walk *w, u64 look)
{
	if (w->have_map && look >= w->map_lo && look < w->map_hi)
		return w->map_err;
	w->have_map = false;
	w->map_err = w->ops->find(w->ops->ctx, look, &w->t, &w->bias);
	if (w->map_err)
		return w->map_err;
	w->have_map = true;
	w->map_lo = w->t->base + w->bias;
	w->map_hi = w->t->end + w->bias;
	return 0;
}

/* one frame past the recorded one: the caller's pc, sp and bp; false ends the walk */
static bool step(struct walk *w, u32 n, bool in_syscall, struct unwind_walk_result *res)
{
	const struct unwind_row *r;
	u64 look, base, cfa, ra, rbp;
	u8 ra_how, rbp_how;
	int err;

	/* a return address is the instruction after the call, which may begin another function
	 * (a call that does not return): look up the call itself */
	look = (n && !w->signal) || (!n && in_syscall) ? w->pc - 1 : w->pc;
	err = find(w, look);
	if (err == -ENOENT)
		return fp_step(w, res, HSBPF_STACK_NO_MAPPING);
	if (err)
		return fp_step(w, res, HSBPF_STACK_NO_INFO);
	r = unwind_table__find(w->t, look - w->bias);
	if (!r || r->cfa == HSBPF_CFA_NONE)
		return fp_step(w, res, HSBPF_STACK_NO_INFO);
	if (r->cfa == HSBPF_CFA_END) {
		res->end = HSBPF_STACK_COMPLETE;
		return false;
	}
	if (r->cfa == HSBPF_CFA_PLT) {
		base = w->sp;
		cfa = base + 8 + (((look - w->bias) & 15) >= (u32)r->cfa_off ? 8 : 0);
	} else if (r->cfa == HSBPF_CFA_REG && (r->cfa_reg == HSBPF_DWARF_RSP || r->cfa_reg == HSBPF_DWARF_RBP ||
					      (n == 0 && r->cfa_reg <= HSBPF_DWARF_LAST_GPR))) {
		if (r->cfa_reg == HSBPF_DWARF_RSP)
			base = w->sp;
		else if (r->cfa_reg == HSBPF_DWARF_RBP)
			base = w->bp;
		else
			base = w->leaf->gpr[r->cfa_reg];
		cfa = base + (s64)r->cfa_off;
		if ((r->flags & HSBPF_ROW_DEREF) && !w->ops->read(w->ops->ctx, cfa, &cfa)) {
			res->end = HSBPF_STACK_UNREADABLE;
			return false;
		}
	} else {
		res->end = r->cfa == HSBPF_CFA_STALE ? HSBPF_STACK_EH_INSTALL : HSBPF_STACK_UNSUPPORTED;
		return false;
	}
	ra_how = unwind_row__ra(r);
	rbp_how = unwind_row__rbp(r);
	if (!w->ops->read(w->ops->ctx, (ra_how == HSBPF_SAVED_BASE ? base : cfa) + (s64)r->ra_off, &ra)) {
		res->end = HSBPF_STACK_UNREADABLE;
		return false;
	}
	if (rbp_how == HSBPF_SAVED_CFA || rbp_how == HSBPF_SAVED_BASE) {
		if (w->ops->read(w->ops->ctx, (rbp_how == HSBPF_SAVED_BASE ? base : cfa) + (s64)r->rbp_off, &rbp))
			w->bp = rbp;
	} else if (rbp_how == HSBPF_SAVED_UNDEF) {
		w->bp = 0;
	}
	/* callers live higher on the stack, except across a signal (an alternate stack) */
	if (cfa <= w->sp && !(r->flags & HSBPF_ROW_SIGNAL) && !w->signal) {
		res->end = HSBPF_STACK_LOOP;
		return false;
	}
	/* a zero return address ends some stacks */
	if (!ra) {
		res->end = HSBPF_STACK_COMPLETE;
		return false;
	}
	w->signal = r->flags & HSBPF_ROW_SIGNAL;
	w->sp = cfa;
	w->pc = ra;
	return true;
}

void unwind_walk__stack(const struct unwind_walk_ops *ops, const struct unwind_walk_regs *regs,
			const struct unwind_walk_opts *o, u64 *ips, struct unwind_walk_result *res)
{
	u32 max = o->max_frames && o->max_frames < HSBPF_MAX_FRAMES ? o->max_frames : HSBPF_MAX_FRAMES;
	struct walk w = {
		.ops = ops, .leaf = regs,
		.pc = regs->ip, .sp = regs->gpr[HSBPF_DWARF_RSP], .bp = regs->gpr[HSBPF_DWARF_RBP],
	};

	res->nr = 0;
	res->nr_fp = 0;
	res->end = HSBPF_STACK_DEPTH;
	for (;;) {
		u32 n = res->nr;

		if (n >= max) {
			res->end = HSBPF_STACK_DEPTH;
			return;
		}
		ips[res->nr++] = w.pc;
		/* a frame whose stack pointer is at the process's argc is its first: the
		 * interpreter's _start, which has no unwind information to say so */
		if (o->stack_top && w.sp >= o->stack_top) {
			res->end = HSBPF_STACK_COMPLETE;
			return;
		}
		if (o->fp ? !fp_step(&w, res, HSBPF_STACK_FP_END) : !step(&w, n, o->in_syscall, res))
			return;
	}
}
