// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The ptrace single-stepper (stepper.h). The exact stack of a thread is a shadow stack of
 * (return address, the stack slot holding it): a call pushes, and every entry whose slot lies
 * below the stack pointer is gone, which keeps returns, tail calls, longjmp, exceptions and
 * sigreturn right without recognising them. A signal handler enters with the restorer's
 * address at sp and the interrupted pc in the signal frame: both become entries. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib/disasm.h"
#include "symbols/elf_image.h"
#include "stepper.h"
#include "unwind/unwind_table.h"

struct shadow {
	u64 ra, slot;
};

struct thread {
	u32 tid;
	bool fresh;		/* a clone child before its first stop */
	bool injected;		/* a caught signal was injected: the next stop is its handler */
	bool have_insn;		/* the instruction at pc was decoded */
	bool is_call;
	u64 pc, next;		/* the decoded instruction and the one after it */
	struct shadow *st;
	size_t nr, cap;
};

struct object {
	char *path;
	struct unwind_table *t;	/* NULL: no table */
};

struct mapping {
	u64 start, end, pgoff;
	struct object *obj;
};

#define DECODE_CACHE 65536
struct decoded {
	u64 pc;
	u32 size;
	bool is_call;
};

struct run {
	pid_t pid;
	struct thread *th;
	size_t nr_th, cap_th;
	struct object *objs;
	size_t nr_objs, cap_objs;
	struct mapping *maps;
	size_t nr_maps, cap_maps;
	u64 stack_top;
	struct disasm *dis;
	struct decoded *cache;
	stepper_maps_fn on_map;
	void *ctx;
	struct stepper_result *res;
	u64 maps_reload_at;	/* instruction count of the last reload on a miss */
};

static bool read_mem(struct run *r, u64 addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(r->pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

static bool read_word(void *ctx, u64 addr, u64 *val)
{
	return read_mem(ctx, addr, val, 8);
}

static struct object *object_get(struct run *r, const char *path)
{
	struct object *o;
	int err;

	for (size_t i = 0; i < r->nr_objs; i++)
		if (!strcmp(r->objs[i].path, path))
			return &r->objs[i];
	/* objects are referenced by pointer from mappings: the array never moves once used,
	 * so it is allocated big enough up front */
	if (r->nr_objs == r->cap_objs)
		return NULL;
	o = &r->objs[r->nr_objs];
	o->path = strdup(path);
	if (!o->path)
		return NULL;
	o->t = NULL;
	err = unwind_table__build_path(path, &o->t);
	if (err) {
		o->t = NULL;
		r->res->objects_no_table++;
	}
	r->res->objects++;
	r->nr_objs++;
	return o;
}

/* the executable file mappings of the process, their tables built once per object */
static int load_maps(struct run *r)
{
	char path[64], line[4096 + 128];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", r->pid);
	f = fopen(path, "re");
	if (!f)
		return fail(-errno, "cannot read '%s': %s", path, strerror(errno));
	r->nr_maps = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff;
		char perms[8], file[4096];
		struct mapping *m;
		struct object *o;

		file[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &start, &end, perms, &pgoff, file) < 4 ||
		    perms[2] != 'x' || file[0] != '/')
			continue;
		o = object_get(r, file);
		if (!o) {
			err = fail(-ENOMEM, "too many objects mapped in %d", r->pid);
			break;
		}
		if (array__reserve((void **)&r->maps, &r->cap_maps, r->nr_maps + 1, sizeof(*r->maps))) {
			err = -ENOMEM;
			break;
		}
		m = &r->maps[r->nr_maps++];
		*m = (struct mapping){ start, end, pgoff, o };
		if (r->on_map && (err = r->on_map(r->ctx, r->pid, start, end - start, pgoff, file)))
			break;
	}
	fclose(f);
	return err;
}

static int find_table(void *ctx, u64 pc, const struct unwind_table **t, u64 *bias)
{
	struct run *r = ctx;

	for (size_t i = 0; i < r->nr_maps; i++) {
		const struct mapping *m = &r->maps[i];
		const struct unwind_segment *seg;

		if (pc < m->start || pc >= m->end)
			continue;
		if (!m->obj->t || !(seg = unwind_table__segment(m->obj->t, m->pgoff)))
			return -ENODATA;
		*t = m->obj->t;
		*bias = m->start - m->pgoff + seg->offset - seg->vaddr;
		return 0;
	}
	return -ENOENT;
}

static bool mapped(struct run *r, u64 pc)
{
	for (size_t i = 0; i < r->nr_maps; i++)
		if (pc >= r->maps[i].start && pc < r->maps[i].end)
			return true;
	return false;
}

static u64 read_stack_top(pid_t pid)
{
	char path[64], buf[4096], *p;
	unsigned long long v = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');	/* the name may hold spaces and parentheses */
	if (!p)
		return 0;
	/* field 28 (startstack); field 3 follows ") " */
	for (int field = 3; field <= 28 && p; field++)
		p = strchr(p + 1, ' ');
	if (p)
		sscanf(p + 1, "%llu", &v);
	return v;
}

/* does tid have a handler for sig (SigCgt in its status)? */
static bool caught(pid_t tid, int sig)
{
	char path[64], line[256];
	unsigned long long mask = 0;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "SigCgt: %llx", &mask) == 1;
	fclose(f);
	return found && sig >= 1 && sig <= 64 && (mask >> (sig - 1) & 1);
}

static struct thread *thread_get(struct run *r, u32 tid, bool create)
{
	struct thread *t;

	for (size_t i = 0; i < r->nr_th; i++)
		if (r->th[i].tid == tid)
			return &r->th[i];
	if (!create || array__reserve((void **)&r->th, &r->cap_th, r->nr_th + 1, sizeof(*r->th)))
		return NULL;
	t = &r->th[r->nr_th++];
	*t = (struct thread){ .tid = tid, .fresh = true };
	r->res->threads++;
	return t;
}

static void thread_drop(struct run *r, u32 tid)
{
	struct thread *t = thread_get(r, tid, false);

	if (!t)
		return;
	free(t->st);
	*t = r->th[--r->nr_th];
}

static int push(struct thread *t, u64 ra, u64 slot)
{
	if (array__reserve((void **)&t->st, &t->cap, t->nr + 1, sizeof(*t->st)))
		return -ENOMEM;
	t->st[t->nr++] = (struct shadow){ ra, slot };
	return 0;
}

static void regs_to_dwarf(const struct user_regs_struct *u, struct unwind_walk_regs *w)
{
	const u64 g[] = { u->rax, u->rdx, u->rcx, u->rbx, u->rsi, u->rdi, u->rbp, u->rsp,
			  u->r8, u->r9, u->r10, u->r11, u->r12, u->r13, u->r14, u->r15 };

	memset(w, 0, sizeof(*w));
	w->ip = u->rip;
	for (size_t i = 0; i < ARRAY_SIZE(g) && i <= HSBPF_DWARF_LAST_GPR; i++)
		w->gpr[i] = g[i];
}

/* the instruction at pc: its size and whether it calls (cached by pc) */
static int decode(struct run *r, u64 pc, u32 *size, bool *is_call)
{
	struct decoded *d = &r->cache[(pc ^ pc >> 16) & (DECODE_CACHE - 1)];
	struct insn_info info;
	u8 code[16];
	size_t n = sizeof(code);

	if (d->pc == pc && d->size) {
		*size = d->size;
		*is_call = d->is_call;
		return 0;
	}
	/* the instruction may end just before an unmapped page */
	while (n && !read_mem(r, pc, code, n))
		n--;
	if (!n || disasm__one(r->dis, code, n, pc, &info))
		return -EINVAL;
	*d = (struct decoded){ pc, info.size, info.kind == INSN_CALL || info.kind == INSN_INDIRECT_CALL };
	*size = d->size;
	*is_call = d->is_call;
	return 0;
}

static int take_sample(struct run *r, struct thread *t, const struct user_regs_struct *u, u64 seq,
		       stepper_sample_fn fn)
{
	static u64 exact[HSBPF_MAX_FRAMES], dwarf[HSBPF_MAX_FRAMES], fp[HSBPF_MAX_FRAMES];
	const struct unwind_walk_ops ops = { .find = find_table, .read = read_word, .ctx = r };
	struct unwind_walk_opts o = { .stack_top = t->tid == (u32)r->pid ? r->stack_top : 0 };
	struct unwind_walk_regs regs;
	struct stepper_sample s = {
		.pid = r->pid, .tid = t->tid, .seq = seq, .insns = r->res->insns, .regs = &regs,
		.exact = exact, .dwarf = dwarf, .fp = fp,
	};

	regs_to_dwarf(u, &regs);
	exact[s.nr_exact++] = u->rip;
	for (size_t i = t->nr; i-- > 0 && s.nr_exact < HSBPF_MAX_FRAMES;)
		exact[s.nr_exact++] = t->st[i].ra;
	s.exact_cut = t->nr + 1 > HSBPF_MAX_FRAMES;
	/* a pc in no mapping known yet (a dlopen since): read the maps again, once per sample */
	for (u32 i = 0; i < s.nr_exact; i++) {
		if (!mapped(r, exact[i]) && r->maps_reload_at != r->res->insns) {
			int err = load_maps(r);

			r->maps_reload_at = r->res->insns;
			if (err)
				return err;
			break;
		}
	}
	unwind_walk__stack(&ops, &regs, &o, dwarf, &s.dwarf_res);
	o.fp = true;
	unwind_walk__stack(&ops, &regs, &o, fp, &s.fp_res);
	r->res->samples++;
	return fn(r->ctx, &s);
}

/* main's run-time address in the program (the executable's symbol, through its mapping) */
static int find_main(struct run *r, u64 *addr)
{
	char link[64], exe[4096];
	const struct elf_func *f = NULL;
	struct elf_image *img;
	ssize_t n;
	u64 off;
	int err = -ENOENT;

	snprintf(link, sizeof(link), "/proc/%d/exe", r->pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0)
		return fail(-errno, "cannot read '%s': %s", link, strerror(errno));
	exe[n] = 0;
	img = elf_image__open(exe);
	if (!img)
		return fail(-ENOENT, "cannot read '%s' to find main", exe);
	for (size_t i = 0; i < img->nr_funcs && !f; i++)
		if (!strcmp(img->funcs[i].name, "main"))
			f = &img->funcs[i];
	if (f && !elf_image__vaddr_to_off(img, f->addr, &off)) {
		for (size_t i = 0; i < r->nr_maps && err; i++) {
			const struct mapping *m = &r->maps[i];

			if (!strcmp(m->obj->path, exe) && off >= m->pgoff && off - m->pgoff < m->end - m->start) {
				*addr = m->start + off - m->pgoff;
				err = 0;
			}
		}
	}
	elf_image__close(img);
	if (err)
		return fail(err, "no symbol 'main' in '%s' (stripped?): step from the exec instead", exe);
	return 0;
}

/* run to main's first instruction under a breakpoint, and take the frames above it */
static int run_to_main(struct run *r, struct thread *t)
{
	const struct unwind_walk_ops ops = { .find = find_table, .read = read_word, .ctx = r };
	struct unwind_walk_opts wo = { .stack_top = r->stack_top };
	static u64 ips[HSBPF_MAX_FRAMES], slots[HSBPF_MAX_FRAMES];
	struct unwind_walk_result wr;
	struct unwind_walk_regs regs;
	struct user_regs_struct u;
	u64 main_addr = 0, slot;
	long word;
	int st, sig = 0, err;

	if ((err = find_main(r, &main_addr)))
		return err;
	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, r->pid, (void *)main_addr, NULL);
	if (errno || ptrace(PTRACE_POKETEXT, r->pid, (void *)main_addr, (void *)((word & ~0xffl) | 0xcc)))
		return fail(-errno, "cannot set a breakpoint at main in %d: %s", r->pid, strerror(errno));
	for (;;) {
		if (ptrace(PTRACE_CONT, r->pid, NULL, (void *)(long)sig))
			return fail(-errno, "cannot run %d: %s", r->pid, strerror(errno));
		if (waitpid(r->pid, &st, 0) != r->pid || !WIFSTOPPED(st))
			return fail(-ECHILD, "the program ended before main");
		sig = WSTOPSIG(st);
		if (sig != SIGTRAP || st >> 16)
			continue;	/* its own signals go on to it */
		if (ptrace(PTRACE_GETREGS, r->pid, NULL, &u))
			return fail(-errno, "cannot read the registers of %d: %s", r->pid, strerror(errno));
		if (u.rip == main_addr + 1)
			break;
	}
	u.rip = main_addr;
	if (ptrace(PTRACE_POKETEXT, r->pid, (void *)main_addr, (void *)word) ||
	    ptrace(PTRACE_SETREGS, r->pid, NULL, &u))
		return fail(-errno, "cannot take the breakpoint out of %d: %s", r->pid, strerror(errno));
	/* the libraries are all mapped by now */
	if ((err = load_maps(r)))
		return err;
	regs_to_dwarf(&u, &regs);
	unwind_walk__stack(&ops, &regs, &wo, ips, &wr);
	if (wr.end != HSBPF_STACK_COMPLETE)
		return fail(-EINVAL, "cannot tell the frames above main (the unwinder stopped with reason %u "
			    "after %u frames): step from the exec instead", wr.end, wr.nr);
	/* each return address's slot: the next word holding it, going up the stack; pushed
	 * outermost first */
	t->nr = 0;
	slot = u.rsp;
	for (u32 k = 1; k < wr.nr; k++) {
		u64 v = 0;

		while (read_word(r, slot, &v) && v != ips[k] && slot - u.rsp < (1u << 20))
			slot += 8;
		if (v != ips[k])
			return fail(-EINVAL, "return address %#llx above main not found on the stack",
				    (unsigned long long)ips[k]);
		slots[k] = slot;
		slot += 8;
	}
	for (u32 k = wr.nr; k-- > 1;)
		if (push(t, ips[k], slots[k]))
			return -ENOMEM;
	return 0;
}

static u64 draw(u64 *state, const struct stepper_opts *o)
{
	u64 x;

	if (!o->random || o->period < 2)
		return o->period;
	/* xorshift64*: reproducible from the seed */
	x = *state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return 1 + (x * 0x2545f4914f6cdd1dull) % (2 * o->period - 1);
}

static void free_run(struct run *r)
{
	for (size_t i = 0; i < r->nr_th; i++)
		free(r->th[i].st);
	free(r->th);
	for (size_t i = 0; i < r->nr_objs; i++) {
		free(r->objs[i].path);
		unwind_table__free(r->objs[i].t);
	}
	free(r->objs);
	free(r->maps);
	free(r->cache);
	disasm__free(r->dis);
}

int stepper__run(char *const argv[], const struct stepper_opts *o, stepper_sample_fn on_sample,
		 stepper_maps_fn on_map, void *ctx, struct stepper_result *res)
{
	struct run r = { .on_map = on_map, .ctx = ctx, .res = res, .maps_reload_at = ~0ull };
	u64 rng = o->seed ? o->seed : 0x9e3779b97f4a7c15ull, next_sample, seq = 0;
	int st, err = 0;
	pid_t pid, w;

	memset(res, 0, sizeof(*res));
	if (!o->period)
		return fail(-EINVAL, "the sampling period must be at least 1 instruction");
	if ((err = disasm__load()))
		return err;
	r.dis = disasm__new();
	r.cache = calloc(DECODE_CACHE, sizeof(*r.cache));
	r.cap_objs = 512;
	r.objs = calloc(r.cap_objs, sizeof(*r.objs));
	if (!r.dis || !r.cache || !r.objs) {
		err = -ENOMEM;
		goto cleanup;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		err = fail(-errno, "cannot fork: %s", strerror(errno));
		goto cleanup;
	}
	if (!pid) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL)) {
			fprintf(stderr, "hsbpf: cannot trace '%s': %s\n", argv[0], strerror(errno));
			_exit(126);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "hsbpf: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	r.pid = pid;
	/* the first stop is the exec's; an exit here means the exec failed */
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) {
		err = fail(-ECHILD, "'%s' did not start under ptrace", argv[0]);
		goto cleanup;
	}
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)PTRACE_O_EXITKILL)) {
		err = fail(-errno, "cannot set ptrace options on %d: %s", pid, strerror(errno));
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		goto cleanup;
	}
	r.stack_top = read_stack_top(pid);
	err = load_maps(&r);
	if (!err && !thread_get(&r, pid, true))
		err = -ENOMEM;
	if (err) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		goto cleanup;
	}
	r.th[0].fresh = false;
	if (o->from_main)
		err = run_to_main(&r, &r.th[0]);
	if (!err && ptrace(PTRACE_SETOPTIONS, pid, NULL,
			   (void *)(long)(PTRACE_O_EXITKILL | PTRACE_O_TRACECLONE | PTRACE_O_TRACEEXEC)))
		err = fail(-errno, "cannot set ptrace options on %d: %s", pid, strerror(errno));
	if (err) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		goto cleanup;
	}
	next_sample = draw(&rng, o);
	w = pid;
	st = SIGTRAP << 8 | 0x7f;	/* the exec's stop: the first instruction is decoded */
	for (bool first = true;; first = false) {
		struct user_regs_struct u;
		struct thread *t;
		int sig = 0, event;

		if (!first) {
			w = waitpid(-1, &st, __WALL);
			if (w < 0) {
				if (errno == EINTR)
					continue;
				break;	/* ECHILD: every thread is gone */
			}
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (w == pid)
				res->status = st;
			thread_drop(&r, w);
			continue;
		}
		if (!WIFSTOPPED(st))
			continue;
		t = thread_get(&r, w, true);
		if (!t) {
			err = -ENOMEM;
			break;
		}
		event = st >> 16;
		sig = WSTOPSIG(st);
		if (event == PTRACE_EVENT_CLONE) {
			unsigned long tid = 0;

			if (!ptrace(PTRACE_GETEVENTMSG, w, NULL, &tid) && !thread_get(&r, tid, true)) {
				err = -ENOMEM;
				break;
			}
			t = thread_get(&r, w, false);	/* the array may have moved */
			sig = 0;
		} else if (event == PTRACE_EVENT_EXEC) {
			/* a new image: the other threads are gone, so is every frame */
			for (size_t i = 0; i < r.nr_th; i++)
				free(r.th[i].st);
			r.nr_th = 0;
			t = thread_get(&r, w, true);
			if (!t) {
				err = -ENOMEM;
				break;
			}
			t->fresh = false;
			res->threads--;		/* the same thread, in its new image */
			memset(r.cache, 0, DECODE_CACHE * sizeof(*r.cache));
			r.stack_top = read_stack_top(pid);
			if ((err = load_maps(&r)))
				break;
			sig = 0;
		} else if (t->fresh && sig == SIGSTOP) {
			t->fresh = false;	/* a new thread's first stop: it has run nothing yet */
			sig = 0;
		} else if (sig == SIGTRAP && !event) {
			bool entered = false, own;
			siginfo_t si;

			/* a step's own trap says TRAP_TRACE (TRAP_BRKPT after a syscall); the
			 * program's SIGTRAP says who sent it (raise, kill: SI_USER, SI_TKILL) or
			 * SI_KERNEL (its int3), and the step it came with is done as well: it is
			 * counted, then the signal goes on to the program (the first stop is the
			 * exec's or main's breakpoint, the stepper's) */
			own = !first && !ptrace(PTRACE_GETSIGINFO, w, NULL, &si) &&
			      (si.si_code <= 0 || si.si_code == SI_KERNEL);
			sig = 0;
			if (ptrace(PTRACE_GETREGS, w, NULL, &u)) {
				if (errno == ESRCH)
					continue;	/* killed meanwhile */
				err = fail(-errno, "cannot read the registers of %d: %s", w, strerror(errno));
				break;
			}
			if (t->injected) {
				/* a handler's first instruction: nothing ran; the restorer's address
				 * at sp, the interrupted pc and sp in the frame's ucontext */
				u64 restorer = 0, ipc = 0, isp = 0;

				t->injected = false;
				entered = read_word(&r, u.rsp, &restorer) && read_word(&r, u.rsp + 176, &ipc) &&
					  read_word(&r, u.rsp + 168, &isp) && u.rip != t->next;
				/* the interrupted pc belongs above the signal frame, and goes with
				 * sigreturn, which puts sp back to isp */
				if (entered && (push(t, ipc, isp - 1) || push(t, restorer, u.rsp))) {
					err = -ENOMEM;
					break;
				}
				res->signals += entered;
			}
			if (!entered && t->have_insn) {
				res->insns++;
				if (t->is_call && push(t, t->next, u.rsp)) {
					err = -ENOMEM;
					break;
				}
			}
			if (entered)
				t->have_insn = false;
			while (t->nr && t->st[t->nr - 1].slot < u.rsp)
				t->nr--;
			if (res->insns >= next_sample && t->have_insn) {
				next_sample += draw(&rng, o);
				if ((err = take_sample(&r, t, &u, seq++, on_sample)))
					break;
			}
			t->have_insn = false;
			{
				u32 size;
				bool is_call;

				if (!decode(&r, u.rip, &size, &is_call)) {
					t->have_insn = true;
					t->pc = u.rip;
					t->next = u.rip + size;
					t->is_call = is_call;
				}
			}
			if (o->max_insns && res->insns >= o->max_insns && !res->killed) {
				res->killed = true;
				kill(pid, SIGKILL);
				continue;
			}
			if (own) {
				sig = SIGTRAP;
				t->injected = caught(w, sig);
			}
		} else if (sig != SIGTRAP) {
			/* a signal to deliver: with a handler, the next stop is at its entry */
			t->injected = caught(w, sig);
		} else {
			sig = 0;	/* other ptrace events */
		}
		if (t && ptrace(PTRACE_SINGLESTEP, w, NULL, (void *)(long)sig) && errno != ESRCH) {
			err = fail(-errno, "cannot step %d: %s", w, strerror(errno));
			break;
		}
	}
	if (err) {
		kill(pid, SIGKILL);
		while (waitpid(-1, &st, __WALL) > 0)
			;
	}
cleanup:
	free_run(&r);
	return err;
}

/* writing the samples as profiles */
struct writer {
	struct profile *p[3];
	const struct stepper_opts *o;
};

static int add_stack(struct profile *p, const struct stepper_sample *s, const u64 *ips, u32 nr, u16 end,
		     u16 nr_fp, u64 period)
{
	const struct profile_sample_key k = { .tid = s->tid, .time = (u32)s->seq };
	struct profile_sample flat = { .pid = s->pid, .ip = ips[0], .count = 1, .weight = period };
	struct profile_stack_sample ss = { .pid = s->pid, .count = 1, .weight = period };
	s64 idx = profile__add_stack(p, ips, nr, end, nr_fp);

	if (idx < 0)
		return (int)idx;
	ss.user = idx + 1;
	if (profile__add_stack_sample_keyed(p, &ss, &k) || profile__add_sample_keyed(p, &flat, &k))
		return -ENOMEM;
	p->stats.samples++;
	p->stats.stack_samples++;
	p->stats.stack_frames += nr;
	p->stats.stack_fp_frames += nr_fp;
	return 0;
}

static int write_sample(void *ctx, const struct stepper_sample *s)
{
	struct writer *wr = ctx;
	u64 period = wr->o->period;
	int err;

	err = add_stack(wr->p[0], s, s->exact, s->nr_exact,
			s->exact_cut ? HSBPF_STACK_DEPTH : HSBPF_STACK_COMPLETE, 0, period);
	if (!err)
		err = add_stack(wr->p[1], s, s->dwarf, s->dwarf_res.nr, s->dwarf_res.end, s->dwarf_res.nr_fp, period);
	if (!err)
		err = add_stack(wr->p[2], s, s->fp, s->fp_res.nr, s->fp_res.end, s->fp_res.nr_fp, period);
	return err;
}

static int write_map(void *ctx, u32 pid, u64 start, u64 len, u64 pgoff, const char *path)
{
	struct writer *wr = ctx;

	for (int i = 0; i < 3; i++) {
		struct profile *p = wr->p[i];
		bool known = false;

		for (size_t m = 0; m < p->nr_mappings && !known; m++)
			known = p->mappings[m].pid == pid && p->mappings[m].start == start &&
				p->mappings[m].len == len && !strcmp(profile__str(p, p->mappings[m].path), path);
		if (!known && profile__add_mapping(p, pid, 0, start, len, pgoff, path, NULL, 0))
			return -ENOMEM;
	}
	return 0;
}

int stepper__profiles(char *const argv[], const struct stepper_opts *o, struct profile *exact,
		      struct profile *dwarf, struct profile *fp, struct stepper_result *res)
{
	struct writer wr = { { exact, dwarf, fp }, o };
	static const char *const modes[] = { "exact", "dwarf", "fp" };
	size_t off = 0;
	int err;

	for (int i = 0; i < 3; i++) {
		struct profile_meta *m = &wr.p[i]->meta;

		snprintf(m->event, sizeof(m->event), "instructions:single-step");
		snprintf(m->unit, sizeof(m->unit), "events");
		snprintf(m->period_mode, sizeof(m->period_mode), "%s", o->random ? "random" : "fixed");
		snprintf(m->call_graph, sizeof(m->call_graph), "%s", modes[i]);
		snprintf(m->sample_keys, sizeof(m->sample_keys), "tid,time");
		m->period = o->period;
		m->max_frames = HSBPF_MAX_FRAMES;
		/* the stepper's clock: a bucket per sample, numbered in order */
		m->time_bucket_ns = 1;
		m->nr_cpus = 1;
	}
	for (int i = 0; argv[i] && off < sizeof(exact->meta.target); i++)
		off += snprintf(exact->meta.target + off, sizeof(exact->meta.target) - off, "%s%s",
				i ? " " : "command: ", argv[i]);
	memcpy(dwarf->meta.target, exact->meta.target, sizeof(exact->meta.target));
	memcpy(fp->meta.target, exact->meta.target, sizeof(exact->meta.target));
	err = stepper__run(argv, o, write_sample, write_map, &wr, res);
	for (int i = 0; i < 3; i++)
		profile__finish(wr.p[i]);
	return err;
}
