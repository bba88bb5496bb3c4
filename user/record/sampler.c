// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* BPF side of a recording: skeleton open/configure/load, per-CPU perf events, the re-arm
 * thread for randomized periods, and the map drain. Nothing else touches map fds. */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/membarrier.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "record/call_graph.h"
#include "hsbpf.h"
#include "profile.skel.h"
#include "empty.skel.h"
#include "lbr.skel.h"
#include "record/rearm.h"
#include "record/sampler.h"
#include "unwind/slot_pool.h"
#include "unwind/unwind_table.h"
#include "record/memory.h"
#include "record/offcpu.h"

_Static_assert(sizeof(struct sample_key) == 56, "sample_key layout is the seam");
_Static_assert(sizeof(struct sample_extra) == sizeof(struct profile_sample_key), "sample_extra is the profile's key");
_Static_assert(sizeof(struct sample_value) == 16, "sample_value layout is the seam");
_Static_assert(sizeof(struct rearm_token) == 32, "rearm_token layout is the seam");
_Static_assert(sizeof(struct proc_state) == 24, "proc_state layout is the seam");

/* where an object's table is in the unwind arrays */
struct obj_slots {
	u32 first_row, nr_rows, first_page, nr_pages;
};

/* an unloaded table's slots are reused after this: a sample handler runs for microseconds
 * with interrupts off, and the per-CPU caches of mappings were dropped at the unload */
#define UNWIND_GRACE_NS 1000000000ull

struct sampler {
	struct sampler_opts opts;
	const struct call_graph *cg;	/* opts.call_graph's mode, NULL for none */
	struct profile_bpf *skel;
	struct empty_bpf *empty;
	struct lbr_bpf *lbr;	/* branch stacks: this program on the events instead */
	struct bpf_program *prog;
	int *fds;			/* per CPU, indexed like opts.cpus */
	struct bpf_link **links;
	int nr_events;
	int *cpu_index;			/* CPU number -> index in fds, -1 if not sampled */
	int max_cpu;
	/* randomized periods: one re-arm thread per sampled CPU, per event index */
	struct rearmer *rearmers;
	volatile bool stop;
	u32 gen;			/* live reads: the histogram generation counting now */
	/* call stacks: the unwind arrays' free slots, and each object's (by object index) */
	struct slot_pool *rows, *pages, *objs;
	struct obj_slots *obj_slots;
	bool exec_at_rename;		/* exec tags come just before the exec's COMM record */
	/* samples the kernel sends to be unwound here (struct late_stack) */
	struct ring_buffer *late_rb;
	sampler_late_fn late_fn;
	void *late_ctx;
	/* code objects of Python processes the kernel saw first (struct hsbpf_py_code_event) */
	struct ring_buffer *py_rb;
	sampler_py_code_fn py_fn;
	void *py_ctx;
	/* outside wakers announced by the kernel (struct waker_news) */
	struct ring_buffer *waker_rb;
	sampler_waker_fn waker_fn;
	void *waker_ctx;
	struct bpf_link *offcpu_link;	/* the context switches, while recording off-CPU time */
	struct bpf_link *resume_link;	/* ... and the tasks running again (blocks under way) */
	struct bpf_link *waker_link;	/* ... and the wake-ups, with --wakers */
	struct mem_link *mem_links;	/* the allocator's uprobes, with --memory */
	int nr_mem_links;
	bool mem_session;		/* as session uprobes (else uprobes and uretprobes) */
};

/* an allocator's probe: a libbpf link, or a session uprobe's link fd */
struct mem_link {
	struct bpf_link *link;
	int fd;
};

/* The re-arm thread of one CPU: pinned to it and real-time, so that the token's wake-up and
 * the PERF_EVENT_IOC_PERIOD it makes are local to the CPU and are not queued behind whatever
 * else runs there (a thread elsewhere, or at normal priority, lands its write 100-300 us after
 * the sample on a VM, and misses some by milliseconds when a CPU is busy). */
struct rearmer {
	struct sampler *s;
	int idx;			/* event index; its CPU is s->opts.cpus[idx] */
	int ring_fd;
	struct ring_buffer *rb;
	int wake_fd;			/* phase: written at stop */
	pthread_t thread;
	bool running;
	bool realtime, pinned;
	struct rearm_ctl ctl;		/* owned by the thread until joined */
	struct rearm_token newest;	/* of the last poll: only the newest is re-armed */
	bool have_newest;
	int err;			/* the first write or poll error */
	u64 cpu_ns;			/* the thread's own CPU time, at its end */
};

/* SCHED_FIFO priority of the re-arm threads: above every normal task, below the kernel's
 * own real-time threads (watchdog, migration: 99) and threaded interrupts (50) */
#define REARM_RT_PRIORITY	10

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && verbose < 2)
		return 0;
	if (level != LIBBPF_WARN && !verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void quiet_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}

static long perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group,
			    unsigned long flags)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group, flags);
}

static int load_error(const char *what, int err)
{
	error("cannot load BPF program %s: %s%s", what, strerror(-err),
	      err == -EPERM || err == -EACCES ? " (need root or CAP_BPF and CAP_PERFMON)" : "");
	return err;
}

/* NULL with errno ENOMEM, reported */
static struct sampler *sampler_alloc(const struct sampler_opts *opts)
{
	struct sampler *s = calloc(1, sizeof(*s));
	int max = 0;

	quiet_libbpf();
	if (!s)
		goto nomem;
	s->opts = *opts;
	s->cg = call_graph__get(opts->call_graph);
	for (int i = 0; i < opts->nr_cpus; i++)
		if (opts->cpus[i] > max)
			max = opts->cpus[i];
	s->max_cpu = max;
	s->fds = calloc(opts->nr_cpus, sizeof(*s->fds));
	s->links = calloc(opts->nr_cpus, sizeof(*s->links));
	s->cpu_index = calloc(max + 1, sizeof(*s->cpu_index));
	s->rearmers = calloc(opts->nr_cpus, sizeof(*s->rearmers));
	if (!s->fds || !s->links || !s->cpu_index || !s->rearmers) {
		sampler__destroy(s);
		goto nomem;
	}
	for (int i = 0; i <= max; i++)
		s->cpu_index[i] = -1;
	for (int i = 0; i < opts->nr_cpus; i++) {
		s->fds[i] = -1;
		s->cpu_index[opts->cpus[i]] = i;
		s->rearmers[i].ring_fd = -1;
		s->rearmers[i].wake_fd = -1;
	}
	return s;
nomem:
	errno = ENOMEM;
	error("cannot set up sampler: %s", strerror(ENOMEM));
	return NULL;
}

/* kernel.bpf_stats_enabled: the kernel times every run of the handler */
static bool bpf_stats_on(void)
{
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "r");
	int on = 0;

	if (f) {
		if (fscanf(f, "%d", &on) != 1)
			on = 0;
		fclose(f);
	}
	return on > 0;
}

/* The slots of a live reader's map: the default (which map_entries replaces, by the caller),
 * or, when what an interval can sample is known (sampler_params.live_samples), `per` slots a
 * sample rounded up to a power of two, within [lo, def]. The kernel preallocates and clears a
 * hash map's slots at load: the defaults' maps were 200 MB for the agent's 19 Hz, and with
 * the test probe's map half of its start */
static u32 live_slots(const struct sampler_opts *o, u32 per, u32 lo, u32 def)
{
	u64 want, n = lo;

	if (!o || !o->live || !o->live_samples)
		return def;
	want = o->live_samples * per;
	while (n < want && n < def)
		n <<= 1;
	return n < def ? n : def;
}

/* the stack maps' sizes: one entry each unless collecting call graphs (the verifier drops the
 * code, but the maps are created whatever); cg NULL for none */
static int size_stack_maps(struct profile_bpf *skel, const struct call_graph *cg, const struct sampler_opts *o)
{
	const struct {
		struct bpf_map *map;
		u32 size;
	} sizes[] = {
		{ skel->maps.unwind_rows, o && o->unwind_rows ? o->unwind_rows : HSBPF_UNWIND_ROWS },
		{ skel->maps.unwind_pages, HSBPF_UNWIND_PAGES },
		{ skel->maps.unwind_subs, HSBPF_UNWIND_PAGES },
		{ skel->maps.unwind_objs, HSBPF_UNWIND_OBJS },
		{ skel->maps.unwind_maps, HSBPF_UNWIND_MAPS },
		{ skel->maps.unwind_parent, HSBPF_UNWIND_PARENTS },
		/* an interval's samples bring at most two stacks each (kernel, user), one sample
		 * key each, and are drained a little late: room for twice that */
		{ skel->maps.stacks, o && o->map_entries ? (o->map_entries + 3) / 4 :
		  live_slots(o, 4, 4096, HSBPF_DEFAULT_STACKS) },
		{ skel->maps.stack_samples, o && o->map_entries ? o->map_entries :
		  live_slots(o, 2, 4096, HSBPF_DEFAULT_ENTRIES) },
		{ skel->maps.stacks_long, o && o->map_entries ? (o->map_entries + 63) / 64 :
		  live_slots(o, 2, 1024, HSBPF_LONG_STACKS) },
		/* the unwinder's test probe's: 65,536 stacks of 2 KB, 139 MB preallocated */
		{ skel->maps.probe_stacks, o && o->unwind_probe ? HSBPF_PROBE_STACKS : 1 },
		{ skel->maps.unwind_inodes, HSBPF_UNWIND_OBJS },
	};
	int err = 0;

	skel->rodata->call_graph = cg ? cg->bpf_mode : HSBPF_CALL_GRAPH_NONE;
	skel->rodata->time_stacks = cg && bpf_stats_on();
	skel->rodata->python_frames = o ? o->python_frames : HSBPF_PY_INTERLEAVE;
	skel->rodata->late_unwind = cg && cg->late_unwind && o && !o->live;
	skel->rodata->stack_gens = cg && o && o->live && o->stack_intervals;
	skel->rodata->maps_by_vma = cg && o && o->mappings_by_vma;
	if (cg)
		skel->rodata->max_frames = call_graph__max_frames(cg, o ? o->max_frames : 0);
	for (size_t i = 0; i < ARRAY_SIZE(sizes) && !err; i++) {
		/* the tables for a mode that unwinds by them; the stacks themselves whenever there
		 * are stacks */
		bool needed = cg && (cg->unwind_tables || (i >= 5 && i < 8));

		err = bpf_map__set_max_entries(sizes[i].map, needed ? sizes[i].size : 1);
	}
	/* the odd generation's stack maps: as large as the even ones when the agent drains stacks
	 * by interval */
	for (size_t i = 0; i < 3 && !err; i++) {
		struct bpf_map *even[] = { skel->maps.stacks, skel->maps.stacks_long, skel->maps.stack_samples };
		struct bpf_map *odd[] = { skel->maps.stacks_odd, skel->maps.stacks_long_odd,
					  skel->maps.stack_samples_odd };

		err = bpf_map__set_max_entries(odd[i], skel->rodata->stack_gens ?
					       bpf_map__max_entries(even[i]) : 1);
	}
	/* a ring buffer is at least a page */
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.late_stacks, cg && cg->late_unwind ?
					       HSBPF_LATE_RING : (u32)sysconf(_SC_PAGESIZE));
	return err;
}

/* the kernel's BTF has the struct member */
static bool btf_has_field(const struct btf *btf, const char *type, const char *field)
{
	int id = btf ? btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT) : -1;
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_member *m = t ? btf_members(t) : NULL;

	for (int i = 0; t && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, m[i].name_off), field))
			return true;
	return false;
}

/* the kernel has the tracepoint, as tp_btf programs attach to it */
static bool btf_has_tracepoint(const struct btf *btf, const char *name)
{
	char type[128];

	snprintf(type, sizeof(type), "btf_trace_%s", name);
	return btf && btf__find_by_name_kind(btf, type, BTF_KIND_TYPEDEF) > 0;
}

/* Where a new process image begins: at the exec's rename when the kernel has the task_rename
 * tracepoint and task_struct.in_execve to tell an exec's rename from others (the COMM
 * record's moment, as perf counts), else at sched_process_exec, which fires only once the new
 * program is loaded. (fentry/fexit and kprobes would do too, but a kernel may refuse them:
 * this one is built without kprobes and refuses fexit programs.) With call graphs, the exec's
 * point of no return too (6.10's sched_prepare_exec), to know the samples that have no user
 * stack. */
static int choose_exec_hooks(struct sampler *s)
{
	struct profile_bpf *skel = s->skel;
	struct btf *btf = btf__load_vmlinux_btf();	/* parsed once: it takes a while */
	bool at_rename = btf_has_tracepoint(btf, "task_rename") && btf_has_field(btf, "task_struct", "in_execve");
	bool prepare = s->cg && btf_has_tracepoint(btf, "sched_prepare_exec");

	btf__free(btf);

	s->exec_at_rename = skel->rodata->exec_at_rename = at_rename;
	bpf_program__set_autoload(skel->progs.hsbpf_exec_rename, at_rename);
	bpf_program__set_autoload(skel->progs.hsbpf_prepare_exec, prepare);
	/* with the rename hook and no call graphs, the exec tracepoint has nothing to do */
	bpf_program__set_autoload(skel->progs.hsbpf_exec, !at_rename || s->cg);
	debug("exec: images begin at %s%s", at_rename ? "the exec's rename" : "sched_process_exec",
	      prepare ? "; the point of no return is traced" : "");
	return bpf_map__set_max_entries(skel->maps.execing, prepare ? HSBPF_EXECING : 1);
}

/* ---- off-CPU time (bpf/offcpu.bpf.h) ---- */

/* what off-CPU recording needs of the kernel, said by name when it is missing */
static int offcpu_check_kernel(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool tp = btf_has_tracepoint(btf, "sched_switch");

	btf__free(btf);
	if (!btf)
		return fail(-EOPNOTSUPP, "off-CPU time needs the kernel's BTF (/sys/kernel/btf/vmlinux, "
			    "CONFIG_DEBUG_INFO_BTF), which this kernel does not have");
	if (!tp)
		return fail(-EOPNOTSUPP, "off-CPU time needs the sched_switch tracepoint (tp_btf), which "
			    "this kernel does not have");
	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) != 1)
		return fail(-EOPNOTSUPP, "off-CPU time needs BPF task storage (BPF_MAP_TYPE_TASK_STORAGE, "
			    "Linux 5.11 with BTF), which this kernel does not have");
	return 0;
}

/* --wakers: the tracepoint the waker runs */
static int offcpu_check_wakers(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool tp = btf_has_tracepoint(btf, "sched_waking");

	btf__free(btf);
	if (!tp)
		return fail(-EOPNOTSUPP, "--wakers needs the sched_waking tracepoint (tp_btf), which "
			    "this kernel does not have");
	return 0;
}

/* bench/offcpu.sh only: HSBPF_BENCH_OFFCPU_STACKS=kernel takes no user stack at a switch-out
 * (the unwinder's share of the switch's cost), =none no stack at all */
static void offcpu_bench_stacks(struct profile_bpf *skel)
{
	const char *e = getenv("HSBPF_BENCH_OFFCPU_STACKS");

	if (!e)
		return;
	skel->rodata->offcpu_user_stacks = false;
	skel->rodata->offcpu_kernel_stacks = strcmp(e, "none") != 0;
	warning("HSBPF_BENCH_OFFCPU_STACKS=%s: the switches' %s stacks are not taken (a benchmark's "
		"measure)", e, skel->rodata->offcpu_kernel_stacks ? "user" : "user and kernel");
}

/* the off-CPU programs load only when asked, and attach when sampling starts: their map of
 * task storage is not even created otherwise */
static int offcpu_configure(struct profile_bpf *skel, const struct sampler_opts *o)
{
	bool on = o->offcpu != OFFCPU_NONE, wakers = on && o->wakers;
	int err = on ? offcpu_check_kernel() : 0;

	if (!err && wakers)
		err = offcpu_check_wakers();
	if (err)
		return err;
	bpf_program__set_autoload(skel->progs.hsbpf_offcpu_switch, on);
	bpf_program__set_autoload(skel->progs.hsbpf_offcpu_flush, on);
	bpf_program__set_autoload(skel->progs.hsbpf_offcpu_start, on);
	bpf_program__set_autoload(skel->progs.hsbpf_offcpu_split, on && o->live);
	bpf_program__set_autoattach(skel->progs.hsbpf_offcpu_split, false);
	bpf_program__set_autoload(skel->progs.hsbpf_offcpu_sys_exit, on);
	bpf_program__set_autoload(skel->progs.hsbpf_offcpu_waking, wakers);
	bpf_program__set_autoattach(skel->progs.hsbpf_offcpu_switch, false);
	bpf_program__set_autoattach(skel->progs.hsbpf_offcpu_waking, false);
	bpf_program__set_autoattach(skel->progs.hsbpf_offcpu_flush, false);
	bpf_program__set_autoattach(skel->progs.hsbpf_offcpu_start, false);
	bpf_program__set_autoattach(skel->progs.hsbpf_offcpu_sys_exit, false);
	err = bpf_map__set_autocreate(skel->maps.offcpu_tasks, on);
	if (!err)
		err = bpf_map__set_autocreate(skel->maps.offcpu_cgroup, on);
	if (!err && wakers)
		err = bpf_map__set_max_entries(skel->maps.waker_samples,
					       o->map_entries ? o->map_entries : HSBPF_DEFAULT_ENTRIES);
	/* outside wakers: their mappings read while they run (a -p or command target) */
	if (!err && wakers && o->filter_pids)
		err = bpf_map__set_max_entries(skel->maps.waker_procs, HSBPF_WAKER_PROCS);
	if (!err && wakers && o->filter_pids)
		err = bpf_map__set_max_entries(skel->maps.waker_news, HSBPF_WAKER_NEWS_BYTES);
	if (err)
		return fail(err, "cannot configure the off-CPU program: %s", strerror(-err));
	skel->rodata->min_block_ns = o->min_block_ns;
	skel->rodata->max_block_ns = o->max_block_ns ? o->max_block_ns : UINT64_MAX;
	skel->rodata->offcpu_by_cgroup = on && o->cgroup_fd >= 0;
	skel->rodata->offcpu_cgroup_id = o->cgroup_id;
	/* -C: fewer CPUs than are online; all of them need no test */
	skel->rodata->offcpu_by_cpu = on && o->nr_cpus < sysconf(_SC_NPROCESSORS_ONLN);
	for (int i = 0; i < o->nr_cpus; i++)
		if (o->cpus[i] >= 0 && o->cpus[i] < HSBPF_MAX_CPUS)
			skel->rodata->offcpu_cpus[o->cpus[i] / 64] |= 1ull << (o->cpus[i] % 64);
	skel->rodata->offcpu_wakers = wakers;
	offcpu_bench_stacks(skel);
	skel->rodata->offcpu_sample_below = offcpu__sample_below(o->switch_sample);
	if (skel->rodata->offcpu_sample_below)
		skel->rodata->offcpu_sample_scale = ((1ull << 48) + skel->rodata->offcpu_sample_below / 2) /
						    skel->rodata->offcpu_sample_below;
	return 0;
}

/* after load: --cgroup's directory is the target of the switch program too, or of the
 * allocator's probes */
static int set_cgroup_target(struct sampler *s)
{
	bool memory = s->opts.alloc_period != 0;
	u32 zero = 0;
	int err;

	if ((s->opts.offcpu == OFFCPU_NONE && !memory) || s->opts.cgroup_fd < 0)
		return 0;
	err = bpf_map__update_elem(memory ? s->skel->maps.mem_cgroup : s->skel->maps.offcpu_cgroup,
				   &zero, sizeof(zero), &s->opts.cgroup_fd, sizeof(s->opts.cgroup_fd), BPF_ANY);
	if (err)
		return fail(err, "cannot give the cgroup to the %s: %s", memory ? "allocator's probes" :
			    "off-CPU program", strerror(-err));
	return 0;
}

/* run an iterator program once, through to its end; what: "cannot WHAT" said on failure */
static int run_iter(struct bpf_program *prog, const struct bpf_iter_attach_opts *opts, const char *what)
{
	struct bpf_link *link = bpf_program__attach_iter(prog, opts);
	char buf[64];
	int fd, err = 0;
	ssize_t n;

	if (!link)
		return fail(-errno, "cannot %s: %s", what, strerror(errno));
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = fail(-errno, "cannot %s: %s", what, strerror(errno));
		goto cleanup;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	if (n < 0)
		err = fail(-errno, "cannot %s: %s", what, strerror(errno));
	close(fd);
cleanup:
	bpf_link__destroy(link);
	return err;
}

/* the start iterator over the target's tasks: with a pid filter, each process of it in turn
 * (the kernel's task iterator visits that process's threads only), so that the time between
 * the switch program's attach and a task's visit (a block that ends in it is not counted) is
 * microseconds, not the whole machine's walk; without one, every task */
static int offcpu_iter_targets(struct sampler *s)
{
	const char *what = "find the tasks blocked at the start";
	int fd = bpf_map__fd(s->skel->maps.procs), err = 0;
	u32 key, next, *prev = NULL;

	if (!s->opts.filter_pids)
		return run_iter(s->skel->progs.hsbpf_offcpu_start, NULL, what);
	while (!err && !bpf_map_get_next_key(fd, prev, &next)) {
		union bpf_iter_link_info linfo = { .task.pid = next };
		LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &linfo, .link_info_len = sizeof(linfo));

		/* a process followed but gone (a child that exited) has no tasks to visit */
		if (!kill((pid_t)next, 0) || errno != ESRCH)
			err = run_iter(s->skel->progs.hsbpf_offcpu_start, &opts, what);
		key = next;
		prev = &key;
	}
	return err;
}

/* the tasks of the target blocked as the recording starts: their blocks count from the start,
 * when they run again (their user stacks unwound when they are current: at the syscall's exit).
 * Attached before the switch program, so that the blocks its switch-ins find under way during
 * the start (offcpu_starting) have their syscall's exit followed */
static void offcpu_resume_attach(struct sampler *s)
{
	s->resume_link = bpf_program__attach(s->skel->progs.hsbpf_offcpu_sys_exit);
	if (!s->resume_link)
		warning("the blocks under way at the start are not counted: cannot attach to the "
			"sys_exit tracepoint (%s)", strerror(errno));
}

/* tests only: HSBPF_TEST_OFFCPU_START_GAP_MS=N waits N ms between the switch program's attach
 * and the start's walk, so that the blocks under way which end in between are many */
static void offcpu_test_gap(void)
{
	const char *gap = getenv("HSBPF_TEST_OFFCPU_START_GAP_MS");
	u64 ms;

	if (gap && !parse_u64(gap, &ms) && ms <= 10000)
		usleep(ms * 1000);
}

static int offcpu_attach(struct sampler *s)
{
	int err = 0;

	if (s->opts.offcpu == OFFCPU_NONE)
		return 0;
	offcpu_resume_attach(s);
	/* from here to the walk's end a target task switched in with no record was off the CPU
	 * since before the attach: its block is counted from the start (not with --cgroup, whose
	 * tasks the walk cannot tell either) */
	s->skel->bss->offcpu_starting = s->resume_link && s->opts.cgroup_fd < 0;
	s->offcpu_link = bpf_program__attach(s->skel->progs.hsbpf_offcpu_switch);
	if (!s->offcpu_link) {
		err = fail(-errno, "cannot attach to the sched_switch tracepoint: %s", strerror(errno));
		goto cleanup;
	}
	/* the start is the program's first run; now, if no switch came yet (the bss is shared
	 * with the program: the same compare-and-swap) */
	__sync_val_compare_and_swap(&s->skel->bss->offcpu_start_ns, 0, now_ns(CLOCK_MONOTONIC));
	if (s->opts.wakers) {
		s->waker_link = bpf_program__attach(s->skel->progs.hsbpf_offcpu_waking);
		if (!s->waker_link) {
			err = fail(-errno, "cannot attach to the sched_waking tracepoint: %s", strerror(errno));
			goto cleanup;
		}
	}
	offcpu_test_gap();
	if (s->resume_link && offcpu_iter_targets(s)) {
		bpf_link__destroy(s->resume_link);
		s->resume_link = NULL;
	}
cleanup:
	s->skel->bss->offcpu_starting = 0;
	if (err && !s->offcpu_link) {
		bpf_link__destroy(s->resume_link);
		s->resume_link = NULL;
	}
	return err;
}

/* no switch is followed after this; the tasks still off the CPU are counted up to now */
static void offcpu_stop(struct sampler *s)
{
	if (!s->offcpu_link)
		return;
	bpf_link__destroy(s->waker_link);
	s->waker_link = NULL;
	bpf_link__destroy(s->offcpu_link);
	bpf_link__destroy(s->resume_link);
	s->offcpu_link = NULL;
	s->resume_link = NULL;
	s->skel->bss->offcpu_end_ns = now_ns(CLOCK_MONOTONIC);
}

/* a per-CPU array of nr counters, summed over the CPUs into out; what names them */
static int read_percpu(const struct bpf_map *map, u32 nr, u64 *out, const char *what)
{
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	u64 *vals;

	if (ncpu <= 0)
		return fail(ncpu, "cannot count CPUs: %s", strerror(-ncpu));
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return fail(-ENOMEM, "cannot read the %s counters: %s", what, strerror(ENOMEM));
	for (u32 k = 0; k < nr && !err; k++) {
		err = bpf_map__lookup_elem(map, &k, sizeof(k), vals, ncpu * sizeof(*vals), 0);
		if (err)
			error("cannot read the %s counters: %s", what, strerror(-err));
		for (int c = 0; c < ncpu && !err; c++)
			out[k] += vals[c];
	}
	free(vals);
	return err;
}

/* the tasks still off the CPU at the end: the iterator adds their time up to it */
static int offcpu_flush(struct sampler *s)
{
	return run_iter(s->skel->progs.hsbpf_offcpu_flush, NULL, "count the tasks still off the CPU");
}

u64 sampler__offcpu_start(const struct sampler *s)
{
	return s->offcpu_link ? s->skel->bss->offcpu_start_ns : 0;
}

int sampler__read_offcpu_counters(struct sampler *s, u64 out[HSBPF_OFFCPU_STAT_NR])
{
	memset(out, 0, HSBPF_OFFCPU_STAT_NR * sizeof(*out));
	if (s->opts.offcpu == OFFCPU_NONE)
		return 0;
	return read_percpu(s->skel->maps.offcpu_stats, HSBPF_OFFCPU_STAT_NR, out, "off-CPU");
}

static int offcpu_collect(struct sampler *s, struct profile *p)
{
	u64 c[HSBPF_OFFCPU_STAT_NR];
	int err;

	if (s->opts.offcpu == OFFCPU_NONE)
		return 0;
	offcpu_stop(s);
	err = offcpu_flush(s);
	if (!err)
		err = sampler__read_offcpu_counters(s, c);
	if (err)
		return err;
	p->stats.offcpu_switches = c[HSBPF_OFFCPU_SWITCHES];
	p->stats.offcpu_blocks = c[HSBPF_OFFCPU_BLOCKS];
	p->stats.offcpu_short = c[HSBPF_OFFCPU_SHORT];
	p->stats.offcpu_long = c[HSBPF_OFFCPU_LONG];
	p->stats.offcpu_no_storage = c[HSBPF_OFFCPU_NO_STORAGE];
	p->stats.offcpu_full = c[HSBPF_OFFCPU_FULL];
	p->stats.offcpu_full_ns = c[HSBPF_OFFCPU_FULL_NS];
	p->stats.offcpu_open = c[HSBPF_OFFCPU_OPEN];
	p->stats.offcpu_underway = c[HSBPF_OFFCPU_UNDERWAY];
	p->stats.offcpu_underway_ns = c[HSBPF_OFFCPU_UNDERWAY_NS];
	p->stats.offcpu_asleep = c[HSBPF_OFFCPU_ASLEEP];
	p->stats.offcpu_wakeups = c[HSBPF_OFFCPU_WAKEUPS];
	p->stats.offcpu_waker_lost = c[HSBPF_OFFCPU_WAKER_LOST];
	p->stats.offcpu_unwoken = c[HSBPF_OFFCPU_UNWOKEN];
	p->stats.offcpu_unsampled = c[HSBPF_OFFCPU_UNSAMPLED];
	p->stats.offcpu_underway_early = c[HSBPF_OFFCPU_UNDERWAY_EARLY];
	p->stats.offcpu_wakers_unannounced = c[HSBPF_OFFCPU_WAKER_UNANNOUNCED];
	return 0;
}

/* ---- sampled allocations (bpf/memory.bpf.h) ---- */

/* the session uprobes' programs loaded or not; loaded, they are of the session attach type
 * (the kernel allows bpf_session_is_return in those alone) */
static void memory_sessions(struct profile_bpf *skel, bool load)
{
	struct bpf_program *session[] = {
		skel->progs.hsbpf_mem_malloc_session, skel->progs.hsbpf_mem_calloc_session,
		skel->progs.hsbpf_mem_realloc_session, skel->progs.hsbpf_mem_aligned_alloc_session,
		skel->progs.hsbpf_mem_posix_memalign_session,
	};

	for (size_t i = 0; i < sizeof(session) / sizeof(session[0]); i++) {
		bpf_program__set_autoload(session[i], load);
		bpf_program__set_autoattach(session[i], false);
		bpf_program__set_expected_attach_type(session[i], MEMORY_TRACE_UPROBE_SESSION);
	}
}

static int memory_configure(struct sampler *s, const struct sampler_opts *o)
{
	struct profile_bpf *skel = s->skel;
	struct bpf_program *classic[] = {
		skel->progs.hsbpf_mem_malloc, skel->progs.hsbpf_mem_calloc, skel->progs.hsbpf_mem_realloc,
		skel->progs.hsbpf_mem_aligned_alloc, skel->progs.hsbpf_mem_posix_memalign,
		skel->progs.hsbpf_mem_return,
	}, *both[] = { skel->progs.hsbpf_mem_free, skel->progs.hsbpf_mem_flush };
	bool on = o->alloc_period != 0;
	int err = 0;

	s->mem_session = on && memory__have_sessions();
	for (size_t i = 0; i < sizeof(classic) / sizeof(classic[0]); i++) {
		bpf_program__set_autoload(classic[i], on && !s->mem_session);
		bpf_program__set_autoattach(classic[i], false);
	}
	memory_sessions(skel, s->mem_session);
	for (size_t i = 0; i < sizeof(both) / sizeof(both[0]); i++) {
		bpf_program__set_autoload(both[i], on);
		bpf_program__set_autoattach(both[i], false);
	}
	if (on)
		debug("memory: %s", s->mem_session ? "session uprobes: no return probe on unsampled calls"
		      : "uprobes and a uretprobe on every call");
	err = bpf_map__set_autocreate(skel->maps.mem_tasks, on);
	if (!err)
		err = bpf_map__set_autocreate(skel->maps.mem_cgroup, on && o->cgroup_fd >= 0);
	if (!err && !on)
		err = bpf_map__set_max_entries(skel->maps.mem_live, 1);
	if (err)
		return fail(err, "cannot configure the memory programs: %s", strerror(-err));
	if (on && libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) != 1)
		return fail(-EOPNOTSUPP, "--memory needs BPF task storage (BPF_MAP_TYPE_TASK_STORAGE, "
			    "Linux 5.11 with BTF), which this kernel does not have");
	skel->rodata->alloc_period = on ? o->alloc_period : MEMORY_DEFAULT_PERIOD;
	skel->rodata->mem_by_cgroup = on && o->cgroup_fd >= 0;
	memory__fill_tables((u32 *)skel->rodata->mem_log2_q16, (u32 *)skel->rodata->mem_g_q16);
	return 0;
}

/* one more allocator probe: a libbpf link or a link fd */
static int memory_keep(struct sampler *s, struct bpf_link *link, int fd)
{
	struct mem_link *more;

	if (s->nr_mem_links % MEMORY_PROBES == 0) {
		more = realloc(s->mem_links, (s->nr_mem_links + MEMORY_PROBES) * sizeof(*more));
		if (!more) {
			bpf_link__destroy(link);
			if (fd >= 0)
				close(fd);
			return fail(-ENOMEM, "out of memory");
		}
		s->mem_links = more;
	}
	s->mem_links[s->nr_mem_links++] = (struct mem_link){ link, fd };
	return 0;
}

int sampler__attach_memory(struct sampler *s, const char *libc, int pid)
{
	struct profile_bpf *skel = s->skel;
	const struct { const char *fn; struct bpf_program *prog, *session; bool ret, needed; } probes[] = {
		{ "malloc", skel->progs.hsbpf_mem_malloc, skel->progs.hsbpf_mem_malloc_session, true, true },
		{ "calloc", skel->progs.hsbpf_mem_calloc, skel->progs.hsbpf_mem_calloc_session, true, true },
		{ "realloc", skel->progs.hsbpf_mem_realloc, skel->progs.hsbpf_mem_realloc_session, true, true },
		{ "free", skel->progs.hsbpf_mem_free, NULL, false, true },
		{ "aligned_alloc", skel->progs.hsbpf_mem_aligned_alloc,
		  skel->progs.hsbpf_mem_aligned_alloc_session, true, false },
		{ "memalign", skel->progs.hsbpf_mem_aligned_alloc,
		  skel->progs.hsbpf_mem_aligned_alloc_session, true, false },
		{ "posix_memalign", skel->progs.hsbpf_mem_posix_memalign,
		  skel->progs.hsbpf_mem_posix_memalign_session, true, false },
	};
	int err = 0;

	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]) && !err; i++) {
		if (s->mem_session && probes[i].session) {
			int fd = memory__attach_session(bpf_program__fd(probes[i].session), libc, probes[i].fn, pid);

			if (fd >= 0)
				err = memory_keep(s, NULL, fd);
			else if (probes[i].needed)
				return fail(fd, "cannot attach a session uprobe to %s in '%s': %s", probes[i].fn,
					    libc, strerror(-fd));
			continue;
		}
		for (int ret = 0; ret <= probes[i].ret && !err; ret++) {
			LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = probes[i].fn, .retprobe = ret);
			struct bpf_program *prog = ret ? skel->progs.hsbpf_mem_return : probes[i].prog;
			struct bpf_link *link;

			/* a return probe goes at the entry, the others may go a little after it */
			link = bpf_program__attach_uprobe_opts(prog, pid, libc, ret ? 0 :
							       memory__probe_offset(libc, probes[i].fn), &uo);
			if (!link) {
				err = -errno;
				if (!probes[i].needed) {
					err = 0;
					break;
				}
				return fail(err, "cannot attach to %s in '%s': %s", probes[i].fn, libc,
					    strerror(-err));
			}
			err = memory_keep(s, link, -1);
		}
	}
	return err;
}

/* the allocator's probes off: nothing changes the live allocations after this */
static void memory_stop(struct sampler *s)
{
	for (int i = 0; i < s->nr_mem_links; i++) {
		bpf_link__destroy(s->mem_links[i].link);
		if (s->mem_links[i].fd >= 0)
			close(s->mem_links[i].fd);
	}
	free(s->mem_links);
	s->mem_links = NULL;
	s->nr_mem_links = 0;
}

/* the live allocations at the end into the sample maps, as in use */
static int memory_flush(struct sampler *s)
{
	union bpf_iter_link_info info = { .map.map_fd = bpf_map__fd(s->skel->maps.mem_live) };
	LIBBPF_OPTS(bpf_iter_attach_opts, io, .link_info = &info, .link_info_len = sizeof(info));

	return run_iter(s->skel->progs.hsbpf_mem_flush, &io, "count the live allocations");
}

void sampler__memory_intervals(struct sampler *s)
{
	if (!s->skel->bss->mem_snap)
		s->skel->bss->mem_snap = 1;
}

int sampler__memory_snapshot(struct sampler *s, u32 *snap)
{
	int err;

	if (!s->opts.alloc_period)
		return fail(-EINVAL, "no sampled allocations to take a snapshot of");
	/* an allocation returning during the walk counts in this interval and may or may not
	 * be in its live set: a snapshot is the moment its walk passes each address */
	s->skel->bss->mem_flush_snapshot = 1;
	err = memory_flush(s);
	s->skel->bss->mem_flush_snapshot = 0;
	*snap = s->skel->bss->mem_snap;
	if (!err && *snap && *snap < UINT16_MAX)
		__atomic_fetch_add(&s->skel->bss->mem_snap, 1, __ATOMIC_SEQ_CST);
	return err;
}

static int memory_collect(struct sampler *s, struct profile *p)
{
	u64 c[HSBPF_MEM_STAT_NR] = {};
	int err;

	if (!s->opts.alloc_period)
		return 0;
	memory_stop(s);
	err = memory_flush(s);
	if (!err)
		err = read_percpu(s->skel->maps.mem_stats, HSBPF_MEM_STAT_NR, c, "memory");
	if (!err)
		memory__fill_stats(&p->stats, c);
	return err;
}

struct sampler *sampler__open(const struct sampler_opts *opts)
{
	struct sampler *s;
	int err = 0;

	s = sampler_alloc(opts);
	if (!s)
		return NULL;
	s->skel = profile_bpf__open();
	if (!s->skel) {
		err = -errno;
		load_error("profile", err);
		goto fail;
	}
	s->skel->rodata->filter_pids = opts->filter_pids;
	s->skel->rodata->no_inherit = opts->no_inherit;
	s->skel->rodata->random_periods = period__is_random(opts->mode);
	s->skel->rodata->key_tid = opts->key_tid;
	s->skel->rodata->key_cpu = opts->key_cpu;
	s->skel->rodata->time_bucket_ns = opts->time_bucket_ns;
	s->skel->rodata->time_origin_ns = opts->time_origin_ns;
	err = size_stack_maps(s->skel, s->cg, opts);
	if (err) {
		load_error("profile (stack map sizes)", err);
		goto fail;
	}
	err = offcpu_configure(s->skel, opts);
	if (!err)
		err = memory_configure(s, opts);
	if (err)
		goto fail;
	/* the unwinder's test probe is attached by tests alone */
	bpf_program__set_autoload(s->skel->progs.hsbpf_unwind_probe, opts->unwind_probe);
	if (opts->map_entries || opts->live_samples)
		err = bpf_map__set_max_entries(s->skel->maps.samples, opts->map_entries ? opts->map_entries :
					       live_slots(opts, 2, 4096, HSBPF_DEFAULT_ENTRIES));
	/* the second histogram map counts only when live reads turn the generation */
	if (!err)
		err = bpf_map__set_max_entries(s->skel->maps.samples_odd, !opts->live ? 1 :
					       bpf_map__max_entries(s->skel->maps.samples));
	if (err) {
		load_error("profile (map size)", err);
		goto fail;
	}
	if (!opts->filter_pids && !(s->cg && s->cg->unwind_tables)) {
		/* nothing to follow: keep the tracepoints out of every fork and exec */
		bpf_program__set_autoload(s->skel->progs.hsbpf_fork, false);
	}
	err = choose_exec_hooks(s);
	if (err) {
		load_error("profile (exec map size)", err);
		goto fail;
	}
	err = profile_bpf__load(s->skel);
	if (err) {
		load_error("profile", err);
		goto fail;
	}
	err = set_cgroup_target(s);
	if (err)
		goto fail;
	/* exec and exit keep process images apart; they run whatever the target */
	err = profile_bpf__attach(s->skel);
	if (err) {
		error("cannot attach exec/exit tracepoints: %s", strerror(-err));
		goto fail;
	}
	s->prog = s->skel->progs.hsbpf_sample;
	if (opts->ev.branch_stack) {
		s->lbr = lbr_bpf__open();
		if (!s->lbr) {
			err = -errno;
			load_error("lbr", err);
			goto fail;
		}
		s->lbr->rodata->filter_pids = opts->filter_pids;
		s->lbr->rodata->no_inherit = opts->no_inherit;
		s->lbr->rodata->precise = opts->ev.precise > 0;
		s->lbr->rodata->key_tid = opts->key_tid;
		s->lbr->rodata->key_cpu = opts->key_cpu;
		s->lbr->rodata->time_bucket_ns = opts->time_bucket_ns;
		s->lbr->rodata->time_origin_ns = opts->time_origin_ns;
		/* one process table and one IP histogram for both programs */
		err = bpf_map__reuse_fd(s->lbr->maps.procs, bpf_map__fd(s->skel->maps.procs));
		if (!err)
			err = bpf_map__reuse_fd(s->lbr->maps.samples, bpf_map__fd(s->skel->maps.samples));
		if (!err)
			err = bpf_map__reuse_fd(s->lbr->maps.samples_odd, bpf_map__fd(s->skel->maps.samples_odd));
		if (!err)
			err = bpf_map__reuse_fd(s->lbr->maps.live, bpf_map__fd(s->skel->maps.live));
		if (!err && opts->map_entries)
			err = bpf_map__set_max_entries(s->lbr->maps.lbr, opts->map_entries);
		if (!err)
			err = lbr_bpf__load(s->lbr);
		if (err) {
			load_error("lbr", err);
			goto fail;
		}
		s->prog = s->lbr->progs.hsbpf_lbr;
	}
	return s;
fail:
	sampler__destroy(s);
	errno = -err;
	return NULL;
}

struct sampler *sampler__open_empty(const struct sampler_opts *opts)
{
	struct sampler *s;
	int err;

	s = sampler_alloc(opts);
	if (!s)
		return NULL;
	s->empty = empty_bpf__open_and_load();
	if (!s->empty) {
		err = -errno;
		load_error("empty", err);
		sampler__destroy(s);
		errno = -err;
		return NULL;
	}
	s->prog = s->empty->progs.hsbpf_empty;
	return s;
}

/* every token is accounted; the newest of a poll is the one to re-arm from (older ones are
 * for intervals that have already ended) */
static int rearm_take(void *ctx, void *data, size_t size)
{
	struct rearmer *r = ctx;
	const struct rearm_token *t = data;

	if (size < sizeof(*t))
		return 0;
	rearm_ctl__account(&r->ctl, t);
	r->newest = *t;
	r->have_newest = true;
	return 0;
}

/* a new period for the event at fd, from now. PERF_EVENT_IOC_PERIOD leaves a software event
 * other than the clocks to sample at its next event (its period left is zeroed, and only the
 * event's start counts a period again: perf_swevent_add): such an event is stopped around the
 * write, else every re-arm took a sample one event later */
static int set_period(const struct sampler *s, int fd, u64 period)
{
	bool restart = s->opts.ev.type == PERF_TYPE_SOFTWARE && !s->opts.ev.is_clock;
	int err = 0;

	if (restart && ioctl(fd, PERF_EVENT_IOC_DISABLE, 0))
		return -errno;
	if (ioctl(fd, PERF_EVENT_IOC_PERIOD, &period))
		err = -errno;
	if (restart && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) && !err)
		err = -errno;
	return err;
}

static void rearm_write(struct rearmer *r)
{
	u64 before = now_ns(CLOCK_MONOTONIC), next, after;
	int err = 0;

	next = rearm_ctl__plan(&r->ctl, &r->newest, before);
	err = set_period(r->s, r->s->fds[r->idx], next);
	after = now_ns(CLOCK_MONOTONIC);
	rearm_ctl__written(&r->ctl, before, after, err);
	if (err && !r->err)
		r->err = err;
	r->have_newest = false;
}

static void *rearm_thread(void *arg)
{
	struct rearmer *r = arg;

	while (!r->s->stop) {
		int n = ring_buffer__poll(r->rb, 100);

		if (n < 0 && n != -EINTR) {
			if (!r->err)
				r->err = n;
			break;
		}
		if (r->have_newest)
			rearm_write(r);
	}
	r->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

/* phase: restart the CPU's event at random moments, PERIOD_PHASE_GAP_NS apart on average,
 * with the same period; the restart starts the next interval at the write, so the sampling
 * grid takes the phase of a moment the program cannot be in step with. No token, no ring: a
 * timer wake-up and one ioctl per restart. The wait is on wake_fd, which stop writes. */
static void *phase_thread(void *arg)
{
	struct rearmer *r = arg;
	u64 base = r->ctl.base, mean = PERIOD_PHASE_GAP_NS;
	const char *e = getenv("HSBPF_PHASE_GAP_NS");	/* bench/periods.sh's sweep */
	struct pollfd pfd = { .fd = r->wake_fd, .events = POLLIN };

	u64 start;

	if (e && strtoull(e, NULL, 10) > 0)
		mean = strtoull(e, NULL, 10);
	/* the restarts' cost, not the thread's start (stack, first faults): about 1 ms here */
	start = now_ns(CLOCK_THREAD_CPUTIME_ID);
	for (bool first = true; !r->s->stop; first = false) {
		/* the first grid's phase is the moment the event was enabled, a fixed delay before
		 * a command starts: redraw it soon */
		u64 gap = period__phase_gap(first ? mean / 32 : mean, &r->ctl.rng);
		struct timespec ts = { .tv_sec = gap / 1000000000, .tv_nsec = gap % 1000000000 };

		if (ppoll(&pfd, 1, &ts, NULL) != 0 || r->s->stop)
			break;		/* stopped (or a poll error: the grid keeps its phase) */
		int err = set_period(r->s, r->s->fds[r->idx], base);

		if (err) {
			r->ctl.st.rearm_failed++;
			if (!r->err)
				r->err = err;
		} else {
			r->ctl.st.rearms++;
		}
	}
	r->cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - start;
	return NULL;
}

/* the ring of the CPU at event index idx, in the handler's per-CPU slot */
static int rearm_ring(struct sampler *s, struct rearmer *r)
{
	u32 cpu = s->opts.cpus[r->idx];
	int err;

	r->ring_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "hsbpf_rearm", 0, 0, HSBPF_REARM_RING_BYTES, NULL);
	if (r->ring_fd < 0)
		return fail(-errno, "cannot create the re-arm ring of CPU %u: %s", cpu, strerror(errno));
	err = bpf_map__update_elem(s->skel->maps.rearm, &cpu, sizeof(cpu), &r->ring_fd,
				   sizeof(r->ring_fd), 0);
	if (err)
		return fail(err, "cannot install the re-arm ring of CPU %u: %s", cpu, strerror(-err));
	r->rb = ring_buffer__new(r->ring_fd, rearm_take, r, NULL);
	if (!r->rb)
		return fail(-errno, "cannot open the re-arm ring of CPU %u: %s", cpu, strerror(errno));
	return 0;
}

/* start the thread pinned and real-time; where the system refuses either (no CAP_SYS_NICE,
 * a CPU outside this process's cpuset), without it, said under -v and in the stop summary */
static int rearm_start(struct sampler *s, struct rearmer *r, void *(*fn)(void *))
{
	struct sched_param sp = { .sched_priority = REARM_RT_PRIORITY };
	int cpu = s->opts.cpus[r->idx], err = EPERM;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	for (int attempt = 0; attempt < 4 && err; attempt++) {
		bool rt = !(attempt & 1), pin = attempt < 2;
		pthread_attr_t attr;

		pthread_attr_init(&attr);
		if (pin)
			pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		if (rt) {
			pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
			pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
			pthread_attr_setschedparam(&attr, &sp);
		}
		err = pthread_create(&r->thread, &attr, fn, r);
		pthread_attr_destroy(&attr);
		if (!err) {
			r->realtime = rt;
			r->pinned = pin;
		}
	}
	if (err)
		return fail(-err, "cannot start the re-arm thread of CPU %d: %s", cpu, strerror(err));
	r->running = true;
	if (!r->realtime || !r->pinned)
		debug("re-arm thread of CPU %d runs %s%s", cpu, r->realtime ? "" : "at normal priority",
		      r->pinned ? "" : (r->realtime ? "unpinned" : " and unpinned"));
	return 0;
}

static int rearm_setup(struct sampler *s)
{
	const struct sampler_opts *o = &s->opts;
	u64 seed = o->seed ? o->seed : now_ns(CLOCK_MONOTONIC);

	for (int i = 0; i < o->nr_cpus; i++) {
		struct rearmer *r = &s->rearmers[i];
		int err;

		r->s = s;
		r->idx = i;
		/* each CPU its own stream: reproducible with --seed whatever the threads' order */
		rearm_ctl__init(&r->ctl, o->mode, o->period, o->ev.is_clock,
				seed ^ (0x9E3779B97F4A7C15ull * (u64)(o->cpus[i] + 1)), verbose > 0);
		if (o->mode == PERIOD_PHASE) {
			r->wake_fd = eventfd(0, EFD_CLOEXEC);
			err = r->wake_fd < 0 ? fail(-errno, "cannot start the phase thread of CPU %d: %s",
						    o->cpus[i], strerror(errno)) :
			      rearm_start(s, r, phase_thread);
		} else {
			err = rearm_ring(s, r);
			if (!err)
				err = rearm_start(s, r, rearm_thread);
		}
		if (err)
			return err;
	}
	return 0;
}

/* -v: each interval with what it was drawn and written as, so that a miss can be traced */
static void rearm_print_log(struct sampler *s)
{
	u64 t0 = UINT64_MAX;

	for (int i = 0; i < s->opts.nr_cpus; i++)
		if (s->rearmers[i].ctl.nr_log && s->rearmers[i].ctl.log[0].time_ns < t0)
			t0 = s->rearmers[i].ctl.log[0].time_ns;
	if (t0 == UINT64_MAX)
		return;
	debug("randomized periods: every interval's cpu, end (s since the first), measured and drawn "
	      "length, their difference, the period written for it and how long after the sample "
	      "(ns; '-': no re-arm aimed at it), whether the target ran, and 'outside' the window");
	for (int i = 0; i < s->opts.nr_cpus; i++) {
		const struct rearm_ctl *c = &s->rearmers[i].ctl;

		for (size_t k = 0; k < c->nr_log; k++) {
			const struct rearm_record *l = &c->log[k];
			const char *off = l->counted && !rearm__in_window(c->base, l->interval) ? " outside" : "";
			char drawn[96] = "drawn=- err=- written=- after=-";

			if (l->designed)
				snprintf(drawn, sizeof(drawn), "drawn=%" PRIu64 " err=%+" PRId64 " written=%" PRIu64
					 " after=%" PRIu64, l->designed, (s64)(l->interval - l->designed),
					 l->written, l->elapsed);
			debug("interval cpu=%u t=%.6f measured=%" PRIu64 " %s target=%u%s", l->cpu,
			      (l->time_ns - t0) / 1e9, l->interval, drawn, l->counted, off);
		}
		if (c->nr_log == REARM_LOG_MAX)
			debug("the interval log of CPU %d stops at its first %d intervals", s->opts.cpus[i],
			      REARM_LOG_MAX);
	}
}

int sampler__attach(struct sampler *s)
{
	const struct sampler_opts *o = &s->opts;
	struct perf_event_attr attr;
	unsigned long flags = PERF_FLAG_FD_CLOEXEC;
	u64 period = o->freq ? 0 : period__initial(o->mode, o->period);
	int err = offcpu_attach(s);

	/* off-CPU time alone samples nothing on the CPUs, nor do allocations (whose probes the
	 * session attaches to its target: sampler__attach_memory) */
	if (err || o->offcpu == OFFCPU_ONLY || o->alloc_period)
		return err;
	event__attr(&o->ev, period, o->freq, &attr);
	if (o->cgroup_fd >= 0)
		flags |= PERF_FLAG_PID_CGROUP;
	for (int i = 0; i < o->nr_cpus; i++) {
		int fd = perf_event_open(&attr, o->cgroup_fd >= 0 ? o->cgroup_fd : -1, o->cpus[i], -1, flags);

		if (fd < 0) {
			err = -errno;
			if (err == -EINVAL && o->freq)
				error("cannot open event '%s' at %llu Hz: invalid frequency (see "
				      "/proc/sys/kernel/perf_event_max_sample_rate)", o->ev.name,
				      (unsigned long long)o->freq);
			else
				event__explain_open_error(&o->ev, err);
			return err;
		}
		s->fds[i] = fd;
		s->nr_events++;
	}
	if (s->skel && (period__is_random(o->mode) || o->mode == PERIOD_PHASE)) {
		err = rearm_setup(s);
		if (err)
			return err;
	}
	/* libbpf enables each event once its program is attached */
	for (int i = 0; i < s->nr_events; i++) {
		s->links[i] = bpf_program__attach_perf_event(s->prog, s->fds[i]);
		if (!s->links[i]) {
			err = -errno;
			s->links[i] = NULL;
			return fail(err, "cannot attach BPF program to event '%s' on CPU %d: %s",
				     o->ev.name, o->cpus[i], strerror(-err));
		}
	}
	return 0;
}

/* A running target (-p) starts a mapping generation now, after its /proc/PID/maps were
 * read: until its next executable mmap, its samples are named by the mappings it had then,
 * not by the last one the recording saw at their addresses. A command armed before its exec
 * starts none: the exec begins its image. */
int sampler__add_pid(struct sampler *s, u32 pid, bool armed)
{
	struct proc_state st = {
		.state = armed ? HSBPF_PID_ARMED : HSBPF_PID_ACTIVE,
		.map_ns = armed ? 0 : now_ns(CLOCK_MONOTONIC),
	};
	int err = bpf_map__update_elem(s->skel->maps.procs, &pid, sizeof(pid), &st, sizeof(st),
				       BPF_ANY);

	if (err)
		return fail(err, "cannot add pid %u to the filter: %s", pid, strerror(-err));
	return 0;
}

static void rearm_join(struct sampler *s)
{
	s->stop = true;
	for (int i = 0; s->rearmers && i < s->opts.nr_cpus; i++) {
		struct rearmer *r = &s->rearmers[i];

		if (!r->running)
			continue;
		if (r->wake_fd >= 0 && eventfd_write(r->wake_fd, 1))
			warning("cannot stop the phase thread of CPU %d: %s", s->opts.cpus[i],
				strerror(errno));
		pthread_join(r->thread, NULL);
		r->running = false;
		/* tokens still queued were for intervals that have ended: count them too */
		if (r->rb)
			ring_buffer__consume(r->rb);
	}
}

void sampler__stop(struct sampler *s)
{
	bool random = false;

	for (int i = 0; i < s->nr_events; i++)
		ioctl(s->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	for (int i = 0; i < s->opts.nr_cpus; i++)
		random |= s->rearmers[i].running;
	offcpu_stop(s);
	memory_stop(s);
	rearm_join(s);
	/* a re-arm in flight may have restarted a software event (set_period) */
	for (int i = 0; i < s->nr_events; i++)
		ioctl(s->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	if (random)
		rearm_print_log(s);
}

int sampler__read_counters(struct sampler *s, struct profile_stats *st)
{
	int ncpu = libbpf_num_possible_cpus();
	u64 *vals, sum[HSBPF_STAT_NR] = {};
	int err = 0;

	if (ncpu <= 0)
		return fail(ncpu, "cannot count CPUs: %s", strerror(-ncpu));
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (u32 k = 0; k < HSBPF_STAT_NR; k++) {
		err = bpf_map__lookup_elem(s->skel->maps.stats, &k, sizeof(k), vals,
					   ncpu * sizeof(*vals), 0);
		if (err) {
			error("cannot read counters: %s", strerror(-err));
			break;
		}
		for (int c = 0; c < ncpu; c++)
			sum[k] += vals[c];
	}
	free(vals);
	st->samples = sum[HSBPF_STAT_SAMPLES];
	st->filtered = sum[HSBPF_STAT_FILTERED];
	st->dropped_full = sum[HSBPF_STAT_DROPPED_FULL] + sum[HSBPF_STAT_DROPPED_RACE];
	st->rearm_lost = sum[HSBPF_STAT_REARM_LOST];
	st->exec_full = sum[HSBPF_STAT_EXEC_FULL];
	st->pids_full = sum[HSBPF_STAT_PIDS_FULL];
	return err;
}

static int collect_stats(struct sampler *s, struct profile *p)
{
	struct profile_stats st = {};
	int err = sampler__read_counters(s, &st);

	p->stats.samples += st.samples;
	p->stats.filtered += st.filtered;
	p->stats.dropped_full += st.dropped_full;
	p->stats.rearm_lost += st.rearm_lost;
	p->stats.exec_full += st.exec_full;
	p->stats.pids_full += st.pids_full;
	for (int i = 0; i < s->opts.nr_cpus; i++) {
		const struct rearmer *r = &s->rearmers[i];

		if (!r->ctl.base)	/* no thread: a fixed or prime period */
			continue;
		rearm_ctl__merge(&r->ctl, &p->stats);
		p->stats.rearm_cpu_ns += r->cpu_ns;
		if (r->err)
			warning("re-arming the randomized period of CPU %d failed: %s", s->opts.cpus[i],
				strerror(-r->err));
	}
	return err;
}

static int collect_lbr(struct sampler *s, struct profile *p)
{
	struct lbr_key k, next, *prev = NULL;
	int fd = bpf_map__fd(s->lbr->maps.lbr), ncpu = libbpf_num_possible_cpus(), err = 0;
	u32 slot = HSBPF_LBR_DROPPED;
	u64 *vals;

	if (ncpu <= 0)
		return ncpu;
	vals = calloc(ncpu, sizeof(u64));
	if (!vals)
		return -ENOMEM;
	while (!err && !bpf_map_get_next_key(fd, prev, &next)) {
		struct profile_lbr l = { .pid = next.pid, .kind = next.kind, .a = next.a, .b = next.b,
					 .exec_ns = next.exec_ns };

		if (!bpf_map_lookup_elem(fd, &next, &l.count))
			err = profile__add_lbr(p, &l);
		k = next;
		prev = &k;
	}
	/* edges and ranges the full map could not take are dropped samples' worth of data */
	if (!err && !bpf_map__lookup_elem(s->lbr->maps.lbr_stats, &slot, sizeof(slot), vals,
					  ncpu * sizeof(u64), 0))
		for (int c = 0; c < ncpu; c++)
			p->stats.dropped_full += vals[c];
	free(vals);
	return err;
}

/* every slot of one histogram map, in batches; with take, each batch leaves the map */
static int walk_samples(int fd, bool take, sampler_sample_fn fn, void *ctx)
{
	const u32 batch = 4096;
	struct sample_key *keys = calloc(batch, sizeof(*keys));
	struct sample_value *vals = calloc(batch, sizeof(*vals));
	struct sample_key in, out;
	bool first = true;
	int err = 0;

	if (!keys || !vals) {
		err = -ENOMEM;
		error("cannot read samples: %s", strerror(ENOMEM));
		goto cleanup;
	}
	for (;;) {
		u32 n = batch;

		if (take)
			err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in, &out, keys, vals, &n, NULL);
		else
			err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &n, NULL);
		if (err && errno != ENOENT) {
			err = -errno;
			error("cannot read the sample map: %s", strerror(-err));
			goto cleanup;
		}
		for (u32 i = 0; i < n; i++) {
			struct profile_sample ps = {
				.pid = keys[i].pid, .flags = keys[i].flags, .ip = keys[i].ip,
				.cgroup_id = keys[i].cgroup_id, .exec_ns = keys[i].exec_ns,
				.map_ns = keys[i].map_ns, .count = vals[i].count, .weight = vals[i].weight,
			};
			struct profile_sample_key k = {
				.tid = keys[i].x.tid, .cpu = keys[i].x.cpu, .snap = keys[i].x.snap, .time = keys[i].x.time,
				.waker = keys[i].x.waker,
			};
			int ret = fn(ctx, &ps, &k);

			if (ret) {
				err = ret;
				goto cleanup;
			}
		}
		if (err) {	/* ENOENT: that was the last batch */
			err = 0;
			break;
		}
		in = out;
		first = false;
	}
cleanup:
	free(keys);
	free(vals);
	return err;
}

static int sampler__read_samples(struct sampler *s, sampler_sample_fn fn, void *ctx)
{
	int err = walk_samples(bpf_map__fd(s->skel->maps.samples), false, fn, ctx);

	if (!err)
		err = walk_samples(bpf_map__fd(s->skel->maps.samples_odd), false, fn, ctx);
	return err;
}

int sampler__take_interval(struct sampler *s, sampler_sample_fn fn, void *ctx)
{
	u32 zero = 0, next = s->gen + 1;
	int err, fd = bpf_map__fd(s->gen & 1 ? s->skel->maps.samples_odd : s->skel->maps.samples);

	if (!s->opts.live)
		return fail(-EINVAL, "the sampler was not opened for live reads");
	/* the blocks still open count up to now, in the interval ending */
	if (s->offcpu_link) {
		err = run_iter(s->skel->progs.hsbpf_offcpu_split, NULL, "count the open off-CPU blocks");
		if (err)
			return err;
	}
	err = bpf_map__update_elem(s->skel->maps.live, &zero, sizeof(zero), &next, sizeof(next), 0);
	if (err)
		return fail(err, "cannot turn the sample map: %s", strerror(-err));
	s->gen = next;
	/* handlers run with interrupts off, inside RCU read-side sections: once a grace period
	 * has passed, none still holds a value of the map that was counting */
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		usleep(10000);	/* nohz_full machines refuse it: handlers take well under 10 ms */
	return walk_samples(fd, true, fn, ctx);
}

u32 sampler__capacity(const struct sampler *s)
{
	return bpf_map__max_entries(s->skel->maps.samples);
}

static int add_to_profile(void *ctx, const struct profile_sample *ps,
			  const struct profile_sample_key *k)
{
	if (profile__add_sample_keyed(ctx, ps, k))
		return fail(-ENOMEM, "cannot store samples: %s", strerror(ENOMEM));
	return 0;
}

static int collect_stacks(struct sampler *s, struct profile *p);

int sampler__collect(struct sampler *s, struct profile *p)
{
	/* the blocks still open at the end go into the maps first */
	int err = offcpu_collect(s, p);

	/* and the allocations still live */
	if (!err)
		err = memory_collect(s, p);

	if (!err)
		err = sampler__read_samples(s, add_to_profile, p);
	if (!err)
		err = collect_stats(s, p);
	if (!err && s->lbr)
		err = collect_lbr(s, p);
	if (!err && s->cg)
		err = collect_stacks(s, p);
	sampler__prog_stats(s, &p->stats.bpf_run_ns, &p->stats.bpf_run_cnt);
	return err;
}

void sampler__destroy(struct sampler *s)
{
	if (!s)
		return;
	ring_buffer__free(s->late_rb);
	ring_buffer__free(s->py_rb);
	ring_buffer__free(s->waker_rb);
	bpf_link__destroy(s->waker_link);
	bpf_link__destroy(s->offcpu_link);
	bpf_link__destroy(s->resume_link);
	memory_stop(s);
	rearm_join(s);
	for (int i = 0; s->links && i < s->opts.nr_cpus; i++)
		bpf_link__destroy(s->links[i]);
	for (int i = 0; s->fds && i < s->nr_events; i++)
		close(s->fds[i]);
	for (int i = 0; s->rearmers && i < s->opts.nr_cpus; i++) {
		ring_buffer__free(s->rearmers[i].rb);
		if (s->rearmers[i].ring_fd >= 0)
			close(s->rearmers[i].ring_fd);
		if (s->rearmers[i].wake_fd >= 0)
			close(s->rearmers[i].wake_fd);
		rearm_ctl__free(&s->rearmers[i].ctl);
	}
	free(s->rearmers);
	slot_pool__free(s->rows);
	slot_pool__free(s->pages);
	slot_pool__free(s->objs);
	free(s->obj_slots);
	profile_bpf__destroy(s->skel);
	empty_bpf__destroy(s->empty);
	lbr_bpf__destroy(s->lbr);
	free(s->fds);
	free(s->links);
	free(s->cpu_index);
	free(s);
}

int sampler__prog_stats(struct sampler *s, u64 *run_ns, u64 *run_cnt)
{
	struct bpf_prog_info info = {};
	u32 len = sizeof(info);
	int err = bpf_obj_get_info_by_fd(bpf_program__fd(s->prog), &info, &len);

	if (err)
		return err;
	if (!info.run_cnt)
		return -ENODATA;
	*run_ns = info.run_time_ns;
	*run_cnt = info.run_cnt;
	return 0;
}

int sampler__enable_run_stats(void)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	return fd < 0 ? -errno : fd;
}

/* the verifier needs the maps' types, not their room: a preallocated table of a million
 * entries per configuration made selftest take 20 s of kernel time */
static int shrink_maps(struct bpf_object *obj)
{
	struct bpf_map *m;
	int err = 0;

	bpf_object__for_each_map(m, obj) {
		enum bpf_map_type t = bpf_map__type(m);

		if (bpf_map__is_internal(m) || bpf_map__max_entries(m) <= 64)
			continue;
		if (t == BPF_MAP_TYPE_RINGBUF)
			err = bpf_map__set_max_entries(m, (u32)sysconf(_SC_PAGESIZE));
		else if (t == BPF_MAP_TYPE_HASH || t == BPF_MAP_TYPE_LRU_HASH || t == BPF_MAP_TYPE_ARRAY ||
			 t == BPF_MAP_TYPE_PERCPU_HASH || t == BPF_MAP_TYPE_LPM_TRIE)
			err = bpf_map__set_max_entries(m, 1);
		if (err)
			return err;
	}
	return 0;
}

int sampler__verify_all(void)
{
	int failed = 0;

	quiet_libbpf();
	for (int filter = 0; filter <= 1; filter++) {
		for (int random = 0; random <= 1; random++) {
			/* no call graphs, then each mode */
			for (size_t i = 0; i == 0 || call_graph__at(i - 1); i++) {
				const struct call_graph *cg = i ? call_graph__at(i - 1) : NULL;
				struct profile_bpf *skel = profile_bpf__open();
				int err;

				if (!skel) {
					failed++;
					continue;
				}
				skel->rodata->filter_pids = filter;
				skel->rodata->random_periods = random;
				/* the session programs where the kernel has sessions */
				memory_sessions(skel, memory__have_sessions());
				err = size_stack_maps(skel, cg, NULL);
				/* a recording's dwarf sends late stacks; top's does not */
				skel->rodata->late_unwind = cg && cg->late_unwind && random;
				if (!err)
					err = shrink_maps(skel->obj);
				if (!err)
					err = profile_bpf__load(skel);
				if (err) {
					error("verifier rejected profile.bpf.c (filter_pids=%d random=%d "
					      "call_graph=%s): %s", filter, random, cg ? cg->name : "none",
					      strerror(-err));
					failed++;
				}
				profile_bpf__destroy(skel);
			}
		}
	}
	{
		struct empty_bpf *e = empty_bpf__open_and_load();

		if (!e) {
			error("verifier rejected empty.bpf.c: %s", strerror(errno));
			failed++;
		}
		empty_bpf__destroy(e);
	}
	for (int variant = 0; variant < 4; variant++) {
		struct lbr_bpf *l = lbr_bpf__open();
		int filter = variant & 1, err;

		if (!l) {
			failed++;
			continue;
		}
		l->rodata->filter_pids = filter;
		l->rodata->precise = variant >> 1;
		err = shrink_maps(l->obj);
		if (!err)
			err = lbr_bpf__load(l);
		if (err) {
			error("verifier rejected lbr.bpf.c (filter_pids=%d): %s", filter, strerror(-err));
			failed++;
		}
		lbr_bpf__destroy(l);
	}
	return failed ? -EINVAL : 0;
}

/* ---- call stacks ---- */

/* write n values of size bytes at consecutive keys from first, in batches */
static int update_array(int fd, u32 first, const void *vals, size_t size, u32 n)
{
	const u32 batch = 4096;
	u32 *keys = calloc(batch, sizeof(*keys));
	int err = 0;

	if (!keys)
		return -ENOMEM;
	for (u32 done = 0; done < n && !err; done += batch) {
		u32 cnt = n - done < batch ? n - done : batch;

		for (u32 i = 0; i < cnt; i++)
			keys[i] = first + done + i;
		if (bpf_map_update_batch(fd, keys, (const char *)vals + (size_t)done * size, &cnt, NULL))
			err = -errno;
	}
	free(keys);
	return err;
}

/* a table's rows written through a mapping of the (mmap'able) row array: one copy, where
 * update_array takes one map update per row (a compiler's half million rows: most of a
 * second under load, which held the agent's loop). The slots are free (no object points at
 * them), and the object entry, written after by a syscall, is what makes them visible */
static int write_rows(struct sampler *s, u32 first, const struct unwind_row *rows, u32 n)
{
	int fd = bpf_map__fd(s->skel->maps.unwind_rows);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t start = (size_t)first * sizeof(*rows), len = (size_t)n * sizeof(*rows);
	size_t off = start & ~(page - 1);
	void *m;

	_Static_assert(sizeof(struct unwind_row) % 8 == 0, "the array's element size is 8-aligned");
	if (!n)
		return 0;
	m = mmap(NULL, start - off + len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	if (m == MAP_FAILED)
		return update_array(fd, first, rows, sizeof(*rows), n);
	memcpy((char *)m + (start - off), rows, len);
	munmap(m, start - off + len);
	return 0;
}

/* the unwind arrays' allocators, made with the first table (the maps are sized by then) */
static int unwind_pools(struct sampler *s)
{
	u32 nr_objs = bpf_map__max_entries(s->skel->maps.unwind_objs);

	if (s->objs)
		return 0;
	s->rows = slot_pool__new(bpf_map__max_entries(s->skel->maps.unwind_rows));
	s->pages = slot_pool__new(bpf_map__max_entries(s->skel->maps.unwind_pages));
	s->objs = slot_pool__new(nr_objs);
	s->obj_slots = calloc(nr_objs, sizeof(*s->obj_slots));
	if (s->rows && s->pages && s->objs && s->obj_slots)
		return 0;
	slot_pool__free(s->rows);
	slot_pool__free(s->pages);
	slot_pool__free(s->objs);
	free(s->obj_slots);
	s->rows = s->pages = s->objs = NULL;
	s->obj_slots = NULL;
	return -ENOMEM;
}

/* a table's slots back to their pools (reusable after UNWIND_GRACE_NS) */
static void release_slots(struct sampler *s, const struct obj_slots *o, u32 obj, u64 now)
{
	slot_pool__release(s->rows, o->first_row, o->nr_rows, now, UNWIND_GRACE_NS);
	slot_pool__release(s->pages, o->first_page, o->nr_pages, now, UNWIND_GRACE_NS);
	slot_pool__release(s->objs, obj, 1, now, UNWIND_GRACE_NS);
}

int sampler__unwind_add_object(struct sampler *s, const struct unwind_table *t, u32 *obj)
{
	u64 now = now_ns(CLOCK_MONOTONIC);
	struct unwind_page *pages = NULL;
	struct obj_slots sl = { .nr_rows = t->nr_rows, .nr_pages = t->nr_pages };
	struct unwind_obj o;
	u32 idx;
	int err;

	if (!t->subs)
		return -EINVAL;	/* the kernel searches by chunk */
	if (!s->cg || !s->cg->unwind_tables)
		return -EINVAL;
	err = unwind_pools(s);
	if (err)
		return err;
	err = slot_pool__alloc(s->objs, 1, now, &idx);
	if (err)
		return err;
	err = slot_pool__alloc(s->rows, sl.nr_rows, now, &sl.first_row);
	if (err) {
		slot_pool__release(s->objs, idx, 1, now, 0);
		return err;
	}
	err = slot_pool__alloc(s->pages, sl.nr_pages, now, &sl.first_page);
	if (err) {
		slot_pool__release(s->rows, sl.first_row, sl.nr_rows, now, 0);
		slot_pool__release(s->objs, idx, 1, now, 0);
		return err;
	}
	pages = malloc((t->nr_pages ? t->nr_pages : 1) * sizeof(*pages));
	if (!pages) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < t->nr_pages; i++) {
		pages[i] = t->pages[i];
		pages[i].first += sl.first_row;
	}
	o = (struct unwind_obj){ .base = t->base, .end = t->end, .first_page = sl.first_page,
				 .nr_pages = t->nr_pages };
	err = write_rows(s, sl.first_row, t->rows, t->nr_rows);
	if (!err)
		err = update_array(bpf_map__fd(s->skel->maps.unwind_subs), sl.first_page, t->subs,
				   sizeof(*t->subs), t->nr_pages);
	if (!err)
		err = update_array(bpf_map__fd(s->skel->maps.unwind_pages), sl.first_page, pages,
				   sizeof(*pages), t->nr_pages);
	/* the object last: the kernel finds no page before its rows are in */
	if (!err)
		err = update_array(bpf_map__fd(s->skel->maps.unwind_objs), idx, &o, sizeof(o), 1);
out:
	free(pages);
	if (err) {
		release_slots(s, &sl, idx, now);
		return err;
	}
	s->obj_slots[idx] = sl;
	*obj = idx;
	return 0;
}

int sampler__unwind_remove_object(struct sampler *s, u32 obj)
{
	struct unwind_obj none = {};
	int err;

	if (!s->objs || obj >= bpf_map__max_entries(s->skel->maps.unwind_objs))
		return -EINVAL;
	/* an empty object first (no address has a row in it), then the handlers' cached
	 * mappings dropped; its slots wait out the grace before another table takes them */
	err = update_array(bpf_map__fd(s->skel->maps.unwind_objs), obj, &none, sizeof(none), 1);
	__atomic_fetch_add(&s->skel->bss->unwind_gen, 1, __ATOMIC_SEQ_CST);
	release_slots(s, &s->obj_slots[obj], obj, now_ns(CLOCK_MONOTONIC));
	memset(&s->obj_slots[obj], 0, sizeof(s->obj_slots[obj]));
	return err;
}

int sampler__unwind_forget_inode(struct sampler *s, const struct unwind_inode_key *k)
{
	if (bpf_map_delete_elem(bpf_map__fd(s->skel->maps.unwind_inodes), k) && errno != ENOENT)
		return -errno;
	return 0;
}

u32 sampler__unwind_objs_map_id(const struct sampler *s)
{
	struct bpf_map_info info = {};
	u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(bpf_map__fd(s->skel->maps.unwind_objs), &info, &len))
		return 0;
	return info.id;
}

void sampler__unwind_usage(const struct sampler *s, u32 *objs, u32 *rows, u32 *pages)
{
	*objs = s->objs ? slot_pool__used(s->objs) : 0;
	*rows = s->rows ? slot_pool__used(s->rows) : 0;
	*pages = s->pages ? slot_pool__used(s->pages) : 0;
}

/* after a change of the trie: the handler's cached mappings (per CPU, across samples) are
 * taken only under the generation they were found at. After the change, so that a mapping
 * found between the two is dropped too */
static void unwind_maps_changed(struct sampler *s)
{
	__atomic_fetch_add(&s->skel->bss->unwind_gen, 1, __ATOMIC_SEQ_CST);
}

int sampler__unwind_map(struct sampler *s, const struct unwind_map_key *k, const struct unwind_mapping *m)
{
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.unwind_maps), k, m, BPF_ANY))
		return -errno;
	unwind_maps_changed(s);
	return 0;
}

int sampler__unwind_inode(struct sampler *s, const struct unwind_inode_key *k, const struct unwind_inode *v)
{
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.unwind_inodes), k, v, BPF_ANY))
		return -errno;
	return 0;
}

int sampler__unwind_unmap(struct sampler *s, const struct unwind_map_key *k)
{
	if (bpf_map_delete_elem(bpf_map__fd(s->skel->maps.unwind_maps), k)) {
		if (errno != ENOENT)
			return -errno;
		return 0;
	}
	unwind_maps_changed(s);
	return 0;
}

void sampler__unwind_forget_parent(struct sampler *s, u32 pid)
{
	bpf_map_delete_elem(bpf_map__fd(s->skel->maps.unwind_parent), &pid);
}

bool sampler__exec_tags_before_comm(const struct sampler *s)
{
	return s->exec_at_rename;
}

u64 sampler__image_exec_ns(struct sampler *s, u32 pid)
{
	struct proc_state st;

	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.procs), &pid, &st))
		return 0;
	return st.exec_ns;
}

bool sampler__maps_by_vma(const struct sampler *s)
{
	return s->skel->rodata->maps_by_vma;
}

int sampler__stack(struct sampler *s, u64 hash, struct stack_frames *out)
{
	/* the short map's values are the head of struct stack_frames */
	if (!bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.stacks), &hash, out))
		return 0;
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.stacks_long), &hash, out))
		return -errno;
	return 0;
}

int sampler__read_stack_samples(struct sampler *s, sampler_stack_fn fn, void *ctx)
{
	const u32 batch = 4096;
	int fd = bpf_map__fd(s->skel->maps.stack_samples), err = 0;
	struct stack_key *keys = calloc(batch, sizeof(*keys)), in, out;
	struct sample_value *vals = calloc(batch, sizeof(*vals));
	bool first = true;

	if (!keys || !vals) {
		err = fail(-ENOMEM, "cannot read stacks: %s", strerror(ENOMEM));
		goto cleanup;
	}
	for (;;) {
		u32 n = batch;

		err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &n, NULL);
		if (err && errno != ENOENT) {
			err = -errno;
			error("cannot read the stack sample map: %s", strerror(-err));
			goto cleanup;
		}
		for (u32 i = 0; i < n; i++) {
			int ret = fn(ctx, &keys[i], &vals[i]);

			if (ret) {
				err = ret;
				goto cleanup;
			}
		}
		if (err) {
			err = 0;
			break;
		}
		in = out;
		first = false;
	}
cleanup:
	free(keys);
	free(vals);
	return err;
}

/* the generation that counted before the last sampler__take_interval: its maps are idle */
static bool idle_odd(const struct sampler *s)
{
	return (s->gen - 1) & 1;
}

int sampler__take_stacks(struct sampler *s, sampler_stack_fn fn, void *ctx)
{
	const u32 batch = 1024;
	struct bpf_map *map = idle_odd(s) ? s->skel->maps.stack_samples_odd : s->skel->maps.stack_samples;
	struct stack_key *keys = calloc(batch, sizeof(*keys)), in, out;
	struct sample_value *vals = calloc(batch, sizeof(*vals));
	int fd = bpf_map__fd(map), err = 0;
	bool first = true;

	if (!s->skel->rodata->stack_gens) {
		err = fail(-EINVAL, "the sampler does not drain stacks by interval");
		goto cleanup;
	}
	if (!keys || !vals) {
		err = fail(-ENOMEM, "cannot read stacks: %s", strerror(ENOMEM));
		goto cleanup;
	}
	for (;;) {
		u32 n = batch;

		err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in, &out, keys, vals, &n, NULL);
		if (err && errno != ENOENT) {
			err = -errno;
			error("cannot read the stack sample map: %s", strerror(-err));
			goto cleanup;
		}
		for (u32 i = 0; i < n; i++) {
			int ret = fn(ctx, &keys[i], &vals[i]);

			if (ret) {
				err = ret;
				goto cleanup;
			}
		}
		if (err) {
			err = 0;
			break;
		}
		in = out;
		first = false;
	}
cleanup:
	free(keys);
	free(vals);
	return err;
}

int sampler__interval_stack(struct sampler *s, u64 hash, struct stack_frames *out)
{
	bool odd = idle_odd(s);

	if (!bpf_map_lookup_elem(bpf_map__fd(odd ? s->skel->maps.stacks_odd : s->skel->maps.stacks), &hash, out))
		return 0;
	if (bpf_map_lookup_elem(bpf_map__fd(odd ? s->skel->maps.stacks_long_odd : s->skel->maps.stacks_long),
				&hash, out))
		return -errno;
	return 0;
}

/* every key of a hash map of u64 keys, then one batch delete; n: the entries it had */
static int empty_map(struct bpf_map *map, u64 *n)
{
	int fd = bpf_map__fd(map), err = 0;
	u32 max = bpf_map__max_entries(map), nr = 0;
	u64 *keys = malloc((max + 1) * sizeof(*keys));

	*n = 0;
	if (!keys)
		return -ENOMEM;
	/* the map is idle: nothing adds keys while they are walked */
	while (nr < max && !bpf_map_get_next_key(fd, nr ? &keys[nr - 1] : NULL, &keys[nr]))
		nr++;
	*n = nr;
	if (nr && bpf_map_delete_batch(fd, keys, &nr, NULL))
		err = -errno;
	free(keys);
	return err;
}

int sampler__end_stacks(struct sampler *s)
{
	bool odd = idle_odd(s);
	u64 n;
	int err;

	err = empty_map(odd ? s->skel->maps.stacks_odd : s->skel->maps.stacks, &n);
	if (!err)
		err = empty_map(odd ? s->skel->maps.stacks_long_odd : s->skel->maps.stacks_long, &n);
	if (err)
		return fail(err, "cannot empty the interval's stack map: %s", strerror(-err));
	return 0;
}

/* entries of a map, counted by walking its keys (any key size up to a stack_key) */
static u64 map_entries(struct bpf_map *map)
{
	struct stack_key a, b;
	int fd = bpf_map__fd(map);
	u64 n = 0;

	if (bpf_map__key_size(map) > sizeof(a))
		return 0;
	for (void *prev = NULL, *next = &a; !bpf_map_get_next_key(fd, prev, next); n++) {
		prev = next;
		next = next == (void *)&a ? (void *)&b : (void *)&a;
	}
	return n;
}

u64 sampler__stack_occupancy(struct sampler *s)
{
	struct bpf_map *maps[] = {
		s->skel->maps.stacks, s->skel->maps.stacks_long, s->skel->maps.stack_samples,
		s->skel->maps.stacks_odd, s->skel->maps.stacks_long_odd, s->skel->maps.stack_samples_odd,
	};
	u64 n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(maps); i++)
		n += map_entries(maps[i]);
	return n;
}

/* the stack samples, read whole before their stacks are looked up */
struct stack_read {
	struct stack_key *keys;
	struct sample_value *vals;
	struct waker_id *wakers;	/* --wakers: keys[first_woken + i]'s waker is wakers[i] */
	size_t first_woken;
	size_t nr, cap, cap_vals, cap_wakers;
	u64 *hashes;		/* the distinct stacks, sorted: a stack's index is its place here */
	size_t nr_hashes;
	u32 base;		/* after the profile's stacks before them (late ones kept at once) */
};

static int keep_stack_sample(void *ctx, const struct stack_key *k, const struct sample_value *v)
{
	struct stack_read *r = ctx;

	if (array__reserve((void **)&r->keys, &r->cap, r->nr + 1, sizeof(*k)) ||
	    array__reserve((void **)&r->vals, &r->cap_vals, r->nr + 1, sizeof(*v)))
		return -ENOMEM;
	r->keys[r->nr] = *k;
	r->vals[r->nr++] = *v;
	return 0;
}

static int keep_live_stack(void *ctx, const struct mem_addr *a, const struct mem_live *v)
{
	struct sample_value val = { v->objects, v->weight };
	struct stack_key k = v->key;

	(void)a;
	k.flags = HSBPF_KEY_MEMORY | HSBPF_MEM_INUSE << HSBPF_KEY_STATE_SHIFT;
	return keep_stack_sample(ctx, &k, &val);
}

/* --wakers: the blocks under their wakers' stacks, after the others */
static int read_waker_samples(struct sampler *s, struct stack_read *r)
{
	const u32 batch = 1024;
	int fd = bpf_map__fd(s->skel->maps.waker_samples), err = 0;
	struct waker_key *keys = calloc(batch, sizeof(*keys)), in, out;
	struct sample_value *vals = calloc(batch, sizeof(*vals));
	bool first = true;

	if (!keys || !vals) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (;;) {
		u32 n = batch;

		err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &n, NULL);
		if (err && errno != ENOENT) {
			err = -errno;
			error("cannot read the waker sample map: %s", strerror(-err));
			goto cleanup;
		}
		for (u32 i = 0; i < n; i++) {
			if (keep_stack_sample(r, &keys[i].key, &vals[i]) ||
			    array__reserve((void **)&r->wakers, &r->cap_wakers, r->nr - r->first_woken,
					   sizeof(*r->wakers))) {
				err = -ENOMEM;
				goto cleanup;
			}
			r->wakers[r->nr - 1 - r->first_woken] = keys[i].w;
		}
		if (err) {
			err = 0;
			break;
		}
		in = out;
		first = false;
	}
cleanup:
	free(keys);
	free(vals);
	return err;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static u32 stack_ref(const struct stack_read *r, u64 hash)
{
	const u64 *at;

	if (!hash)
		return 0;
	at = bsearch(&hash, r->hashes, r->nr_hashes, sizeof(hash), cmp_u64);
	return at ? r->base + (u32)(at - r->hashes) + 1 : 0;
}

/* the stack samples, each distinct stack once; a stack the kernel's map could not take is
 * kept as a lost one, with its samples */
static int collect_stacks(struct sampler *s, struct profile *p)
{
	u64 cnt[HSBPF_STACK_STAT_NR];
	struct stack_read r = {};
	struct stack_frames *f = malloc(sizeof(*f));
	size_t n = 0;
	int err;

	if (!f)
		return fail(-ENOMEM, "cannot read stacks: %s", strerror(ENOMEM));
	err = sampler__read_stack_samples(s, keep_stack_sample, &r);
	/* top --memory: the allocations live now, under their stacks, as in use */
	if (!err && s->opts.live && s->opts.alloc_period)
		err = sampler__walk_live_allocs(s, keep_live_stack, &r);
	r.first_woken = r.nr;
	if (!err && s->opts.wakers)
		err = read_waker_samples(s, &r);
	if (err == -ENOMEM)
		error("cannot read stacks: %s", strerror(ENOMEM));
	if (err)
		goto cleanup;
	r.hashes = malloc((4 * r.nr + 1) * sizeof(*r.hashes));
	if (!r.hashes) {
		err = fail(-ENOMEM, "cannot read stacks: %s", strerror(ENOMEM));
		goto cleanup;
	}
	for (size_t i = 0; i < r.nr; i++) {
		if (r.keys[i].user)
			r.hashes[n++] = r.keys[i].user;
		if (r.keys[i].kernel)
			r.hashes[n++] = r.keys[i].kernel;
		if (i >= r.first_woken && r.wakers[i - r.first_woken].user)
			r.hashes[n++] = r.wakers[i - r.first_woken].user;
		if (i >= r.first_woken && r.wakers[i - r.first_woken].kernel)
			r.hashes[n++] = r.wakers[i - r.first_woken].kernel;
	}
	qsort(r.hashes, n, sizeof(*r.hashes), cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (!r.nr_hashes || r.hashes[r.nr_hashes - 1] != r.hashes[i])
			r.hashes[r.nr_hashes++] = r.hashes[i];
	/* a recording's late stacks past what is kept went into p while it ran */
	r.base = p->nr_stacks;
	for (size_t i = 0; i < r.nr_hashes; i++) {
		s64 idx;

		if (sampler__stack(s, r.hashes[i], f))
			idx = profile__add_stack(p, NULL, 0, PROFILE_STACK_LOST, 0);
		else
			idx = profile__add_stack(p, (const u64 *)f->ip, f->nr < HSBPF_MAX_FRAMES ? f->nr : HSBPF_MAX_FRAMES,
						 f->end, f->nr_fp);
		if (idx < 0) {
			err = fail(-ENOMEM, "cannot read stacks: %s", strerror(ENOMEM));
			goto cleanup;
		}
	}
	for (size_t i = 0; i < r.nr; i++) {
		const struct stack_key *k = &r.keys[i];
		struct profile_stack_sample ss = {
			.pid = k->pid, .flags = k->flags, .cgroup_id = k->cgroup_id, .exec_ns = k->exec_ns,
			.map_ns = k->map_ns, .user = stack_ref(&r, k->user), .kernel = stack_ref(&r, k->kernel),
			.count = r.vals[i].count, .weight = r.vals[i].weight,
		};
		struct profile_sample_key sk = { .tid = k->x.tid, .cpu = k->x.cpu, .snap = k->x.snap, .time = k->x.time,
					   .waker = k->x.waker };
		const struct waker_id *w = i >= r.first_woken ? &r.wakers[i - r.first_woken] : NULL;
		struct profile_waker pw = {
			.pid = w ? w->pid : 0, .exec_ns = w ? w->exec_ns : 0, .map_ns = w ? w->map_ns : 0,
			.user = w ? stack_ref(&r, w->user) : 0, .kernel = w ? stack_ref(&r, w->kernel) : 0,
		};

		if (profile__add_stack_sample_waker(p, &ss, &sk, w ? &pw : NULL)) {
			err = fail(-ENOMEM, "cannot read stacks: %s", strerror(ENOMEM));
			goto cleanup;
		}
	}
	if (!sampler__read_stack_counters(s, cnt)) {
		p->stats.stack_samples = cnt[HSBPF_STACK_STAT_SAMPLES];
		p->stats.stack_frames = cnt[HSBPF_STACK_STAT_FRAMES];
		p->stats.stack_fp_frames = cnt[HSBPF_STACK_STAT_FP_FRAMES];
		p->stats.stacks_full = cnt[HSBPF_STACK_STAT_STACKS_FULL];
		p->stats.stack_keys_full = cnt[HSBPF_STACK_STAT_KEYS_FULL];
		p->stats.kernel_stack_err = cnt[HSBPF_STACK_STAT_KERNEL_ERR];
		p->stats.stack_ns = cnt[HSBPF_STACK_STAT_NS];
		p->stats.stack_late = cnt[HSBPF_STACK_STAT_LATE];
		p->stats.stack_late_full = cnt[HSBPF_STACK_STAT_LATE_FULL];
		p->stats.py_samples = cnt[HSBPF_STACK_STAT_PY_SAMPLES];
		p->stats.py_frames = cnt[HSBPF_STACK_STAT_PY_FRAMES];
		p->stats.py_cut = cnt[HSBPF_STACK_STAT_PY_CUT];
		p->stats.py_bad = cnt[HSBPF_STACK_STAT_PY_BAD];
		p->stats.py_no_thread = cnt[HSBPF_STACK_STAT_PY_NO_THREAD];
		p->stats.py_codes_lost = cnt[HSBPF_STACK_STAT_PY_CODES_LOST];
	}
cleanup:
	free(r.keys);
	free(r.vals);
	free(r.wakers);
	free(r.hashes);
	free(f);
	return err;
}

int sampler__collect_stacks(struct sampler *s, struct profile *p)
{
	if (!s->cg)
		return -ENOENT;
	p->nr_stacks = p->nr_frames = p->nr_stack_samples = p->nr_stack_sample_keys =
		p->nr_stack_sample_wakers = 0;
	return collect_stacks(s, p);
}

int sampler__read_stack_counters(struct sampler *s, u64 out[HSBPF_STACK_STAT_NR])
{
	int ncpu = libbpf_num_possible_cpus();
	u64 *vals;

	if (ncpu <= 0)
		return ncpu;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (u32 k = 0; k < HSBPF_STACK_STAT_NR; k++) {
		out[k] = 0;
		if (bpf_map__lookup_elem(s->skel->maps.stack_stats, &k, sizeof(k), vals, ncpu * sizeof(*vals), 0))
			continue;
		for (int c = 0; c < ncpu; c++)
			out[k] += vals[c];
	}
	free(vals);
	return 0;
}

static int late_take(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;

	if (size >= sizeof(struct late_stack))
		return s->late_fn(s->late_ctx, data, NULL);
	if (size >= sizeof(struct late_block))
		return s->late_fn(s->late_ctx, NULL, data);
	return 0;
}

int sampler__consume_late(struct sampler *s, sampler_late_fn fn, void *ctx)
{
	int n;

	if (!s->cg || !s->cg->late_unwind || !s->skel)
		return 0;
	if (!s->late_rb) {
		s->late_rb = ring_buffer__new(bpf_map__fd(s->skel->maps.late_stacks), late_take, s, NULL);
		if (!s->late_rb)
			return -errno;
	}
	s->late_fn = fn;
	s->late_ctx = ctx;
	n = ring_buffer__consume(s->late_rb);
	return n < 0 ? n : 0;
}

int sampler__py_proc(struct sampler *s, u32 pid, u32 tag, const struct hsbpf_py_proc *v)
{
	struct { u32 pid, tag; } k = { pid, tag };

	if (!s->skel)
		return -ENOENT;
	if (!v)
		return bpf_map__delete_elem(s->skel->maps.py_procs, &k, sizeof(k), 0);
	return bpf_map__update_elem(s->skel->maps.py_procs, &k, sizeof(k), v, sizeof(*v), BPF_ANY);
}

static int cmp_pid(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

int sampler__py_pids(struct sampler *s, u32 **pids, size_t *nr)
{
	struct { u32 pid, tag; } k, next;
	int fd = bpf_map__fd(s->skel->maps.py_procs);
	size_t n = 0, cap = 0, o = 0;
	u32 *v = NULL;
	bool first = true;

	while (!bpf_map_get_next_key(fd, first ? NULL : &k, &next)) {
		if (array__reserve((void **)&v, &cap, n + 1, sizeof(*v))) {
			free(v);
			return -ENOMEM;
		}
		v[n++] = next.pid;
		k = next;
		first = false;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_pid);
	for (size_t i = 0; i < n; i++)
		if (!o || v[o - 1] != v[i])
			v[o++] = v[i];
	*pids = v;
	*nr = o;
	return 0;
}

static int py_take(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;

	return size >= sizeof(struct hsbpf_py_code_event) ? s->py_fn(s->py_ctx, data) : 0;
}

int sampler__consume_py_codes(struct sampler *s, sampler_py_code_fn fn, void *ctx)
{
	int n;

	if (!s->cg || !s->skel)
		return 0;
	if (!s->py_rb) {
		s->py_rb = ring_buffer__new(bpf_map__fd(s->skel->maps.py_codes), py_take, s, NULL);
		if (!s->py_rb)
			return -errno;
	}
	s->py_fn = fn;
	s->py_ctx = ctx;
	n = ring_buffer__consume(s->py_rb);
	return n < 0 ? n : 0;
}

static int waker_take(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;
	const struct waker_news *n = data;

	return size >= sizeof(*n) ? s->waker_fn(s->waker_ctx, n) : 0;
}

static bool waker_news_on(const struct sampler *s)
{
	return s->skel && s->opts.offcpu != OFFCPU_NONE && s->opts.wakers && s->opts.filter_pids;
}

/* the ring made on first use: after the load */
static int waker_ring(struct sampler *s)
{
	if (!s->waker_rb) {
		s->waker_rb = ring_buffer__new(bpf_map__fd(s->skel->maps.waker_news), waker_take, s, NULL);
		if (!s->waker_rb)
			return -errno;
	}
	return 0;
}

int sampler__consume_waker_news(struct sampler *s, sampler_waker_fn fn, void *ctx)
{
	int n;

	if (!waker_news_on(s))
		return 0;
	n = waker_ring(s);
	if (n)
		return n;
	s->waker_fn = fn;
	s->waker_ctx = ctx;
	n = ring_buffer__consume(s->waker_rb);
	return n < 0 ? n : 0;
}

int sampler__waker_news_fd(struct sampler *s)
{
	return waker_news_on(s) && !waker_ring(s) ? ring_buffer__epoll_fd(s->waker_rb) : -1;
}

int sampler__waker_tag(struct sampler *s, u32 pid, u64 *tag)
{
	if (!waker_news_on(s))
		return -ENOENT;
	return bpf_map__lookup_elem(s->skel->maps.waker_procs, &pid, sizeof(pid), tag, sizeof(*tag), 0) ?
	       -ENOENT : 0;
}

int sampler__attach_unwind_probe(struct sampler *s, const char *path, u64 file_off, struct bpf_link **link)
{
	*link = bpf_program__attach_uprobe(s->skel->progs.hsbpf_unwind_probe, false, -1, path, file_off);
	return *link ? 0 : -errno;
}

int sampler__probe_stack(struct sampler *s, u64 ip, struct stack_frames *out)
{
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.probe_stacks), &ip, out))
		return -errno;
	return 0;
}

/* ---- top --memory: the live allocations and the counters while recording ---- */

int sampler__walk_live_allocs(struct sampler *s, sampler_alloc_fn fn, void *ctx)
{
	const u32 batch = 4096;
	int fd = bpf_map__fd(s->skel->maps.mem_live), err = 0;
	struct mem_addr *keys = calloc(batch, sizeof(*keys)), *gone = NULL, in, out;
	struct mem_live *vals = calloc(batch, sizeof(*vals));
	size_t nr_gone = 0, cap_gone = 0;
	bool first = true;

	if (!keys || !vals) {
		err = fail(-ENOMEM, "cannot read the live allocations: %s", strerror(ENOMEM));
		goto cleanup;
	}
	for (;;) {
		u32 n = batch;
		int end = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &n, NULL);

		if (end && errno != ENOENT) {
			err = fail(-errno, "cannot read the live allocations: %s", strerror(errno));
			goto cleanup;
		}
		for (u32 i = 0; i < n; i++) {
			int ret = fn(ctx, &keys[i], &vals[i]);

			if (ret < 0) {
				err = ret;
				goto cleanup;
			}
			if (!ret)
				continue;
			if (array__reserve((void **)&gone, &cap_gone, nr_gone + 1, sizeof(*gone))) {
				err = fail(-ENOMEM, "cannot read the live allocations: %s", strerror(ENOMEM));
				goto cleanup;
			}
			gone[nr_gone++] = keys[i];
		}
		if (end)
			break;
		in = out;
		first = false;
	}
	/* forgotten after the walk, which a deletion under it could make skip a bucket */
	for (size_t i = 0; i < nr_gone; i++)
		bpf_map_delete_elem(fd, &gone[i]);
cleanup:
	free(keys);
	free(vals);
	free(gone);
	return err;
}

int sampler__read_memory_counters(struct sampler *s, u64 c[HSBPF_MEM_STAT_NR])
{
	memset(c, 0, HSBPF_MEM_STAT_NR * sizeof(*c));
	return read_percpu(s->skel->maps.mem_stats, HSBPF_MEM_STAT_NR, c, "memory");
}
