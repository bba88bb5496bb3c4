// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* perf.data to an hsbpf profile: IP samples aggregated like the BPF side does, process
 * history from the mmap/comm/fork records, build-ids from the feature section, branch stacks
 * as edges and fall-through ranges; recorded paths mapped to local files (--symfs, --binary).
 * Names perf report would find here are taken as it takes them: JIT code's from the perf map
 * files the processes left (owned by root or the user importing), kernel frames' from this
 * machine's kallsyms when the recording's kernel is the running one. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "symbols/build_id.h"
#include "hsbpf.h"
#include "record/lbr.h"
#include "import/perf_import.h"
#include "import/perf_unwind.h"
#include "record/sideband.h"
#include <sys/utsname.h>
#include <unistd.h>
#include "symbols/jitmap.h"
#include "symbols/ksyms.h"

struct slot {
	u32 pid, flags;
	u64 ip, exec_ns, map_ns, count, weight;
};

struct pid_lbr {
	u32 pid;
	u64 exec_ns;
	struct lbr_agg agg;
};

/* a sample's callchain, its frames in importer.frames, until the stacks are deduplicated */
struct raw_stack_sample {
	u32 pid, flags;
	u64 exec_ns, map_ns, weight;
	u32 kfirst, knr, ufirst, unr;
	u16 uend, unr_fp;	/* how the user stack ended (HSBPF_STACK_*), frame-pointer frames */
	u32 kernel, user;	/* stack references, once deduplicated */
};

struct importer {
	struct profile *p;
	u64 *frames;
	size_t nr_frames, cap_frames;
	struct raw_stack_sample *raw;
	size_t nr_raw, cap_raw;
	const struct perf_import_opts *o;
	struct slot *slots;
	size_t nr_slots, cap_slots;
	struct pid_lbr *lbrs;
	size_t nr_lbrs, cap_lbrs;
	struct exec_rec {
		u32 pid;
		u64 time;
	} *execs, *all_execs;	/* the latest exec seen per pid; every exec (sorted by pid and
				 * time once the history is read first) */
	size_t nr_execs, cap_execs, nr_all_execs, cap_all_execs;
	/* mapping generations: every mmap record's (pid, time), sorted once the history is read
	 * first; else the latest two seen per pid (records come nearly in time order) */
	struct exec_rec *all_maps;
	size_t nr_all_maps, cap_all_maps;
	struct map_rec {
		u32 pid;
		u64 last, prev;
	} *maps;
	size_t nr_maps, cap_maps;
	struct {
		char *path;
		u8 id[20];
		size_t len;
	} *ids;
	size_t nr_ids, cap_ids;
	struct perf_event_attr attr;	/* a copy: the reader's goes with it */
	bool have_attr;
	bool localized;		/* recorded paths made local */
	/* the history is read first and sorted: the samples are tagged by their time (perf
	 * writes each CPU's buffer in turn, so records come in time order per CPU only) */
	bool sorted;
	/* --call-graph dwarf: the user stacks unwound from perf's copies */
	struct perf_unwind *unwinder;
	u64 ips[HSBPF_MAX_FRAMES];
};

/* the start of pid's image: with the history read first, its latest exec at or before t;
 * else the latest exec seen so far; 0 if none */
static u64 exec_time(struct importer *im, u32 pid, u64 t)
{
	const struct exec_rec *e = im->all_execs;
	size_t lo = 0, hi = im->nr_all_execs;

	if (!im->sorted) {
		for (size_t i = 0; i < im->nr_execs; i++)
			if (im->execs[i].pid == pid)
				return im->execs[i].time;
		return 0;
	}
	/* the first exec after (pid, t) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e[mid].pid < pid || (e[mid].pid == pid && e[mid].time <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && e[lo - 1].pid == pid ? e[lo - 1].time : 0;
}

static int cmp_exec(const void *a, const void *b)
{
	const struct exec_rec *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->time < y->time ? -1 : x->time > y->time;
}

/* A sample's mapping generation (profile_sample.map_ns): the time of its process's latest
 * mmap record at or before the sample, within its image; 0 if none */
static u64 map_time(struct importer *im, u32 pid, u64 t, u64 exec_ns)
{
	const struct exec_rec *e = im->all_maps;
	size_t lo = 0, hi = im->nr_all_maps;
	u64 m = 0;

	if (t == UINT64_MAX)
		return 0;	/* no sample times */
	if (!im->sorted) {
		for (size_t i = 0; i < im->nr_maps; i++)
			if (im->maps[i].pid == pid) {
				m = im->maps[i].last <= t ? im->maps[i].last :
				    im->maps[i].prev <= t ? im->maps[i].prev : 0;
				break;
			}
	} else {
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (e[mid].pid < pid || (e[mid].pid == pid && e[mid].time <= t))
				lo = mid + 1;
			else
				hi = mid;
		}
		m = lo && e[lo - 1].pid == pid ? e[lo - 1].time : 0;
	}
	return m >= exec_ns ? m : 0;
}

static int note_mmap(struct importer *im, u32 pid, u64 time)
{
	size_t i;

	if (array__reserve((void **)&im->all_maps, &im->cap_all_maps, im->nr_all_maps + 1,
			   sizeof(*im->all_maps)))
		return -ENOMEM;
	im->all_maps[im->nr_all_maps++] = (struct exec_rec){ pid, time };
	for (i = 0; i < im->nr_maps && im->maps[i].pid != pid; i++)
		;
	if (i == im->nr_maps) {
		if (array__reserve((void **)&im->maps, &im->cap_maps, i + 1, sizeof(*im->maps)))
			return -ENOMEM;
		im->maps[im->nr_maps++] = (struct map_rec){ .pid = pid };
	}
	im->maps[i].prev = im->maps[i].last;
	im->maps[i].last = time;
	return 0;
}

static int on_mmap(void *ctx, u32 pid, u64 start, u64 len, u64 pgoff, const char *path, u64 time)
{
	struct importer *im = ctx;

	if (note_mmap(im, pid, time))
		return -ENOMEM;
	return profile__add_mapping(im->p, pid, time, start, len, pgoff, path, NULL, 0);
}

static int on_comm(void *ctx, u32 pid, const char *comm, bool exec, u64 time)
{
	struct importer *im = ctx;
	size_t i;

	if (exec) {
		for (i = 0; i < im->nr_execs && im->execs[i].pid != pid; i++)
			;
		if (i == im->nr_execs) {
			if (array__reserve((void **)&im->execs, &im->cap_execs, i + 1, sizeof(*im->execs)))
				return -ENOMEM;
			im->nr_execs++;
		}
		im->execs[i].pid = pid;
		im->execs[i].time = time;
		if (array__reserve((void **)&im->all_execs, &im->cap_all_execs, im->nr_all_execs + 1,
				   sizeof(*im->all_execs)))
			return -ENOMEM;
		im->all_execs[im->nr_all_execs++] = im->execs[i];
	}
	return profile__add_comm(im->p, pid, time, comm, exec);
}

static int on_fork(void *ctx, u32 pid, u32 ppid, u64 time)
{
	struct importer *im = ctx;

	return profile__add_fork(im->p, pid, ppid, time);
}

static int on_build_id(void *ctx, const char *path, const u8 *id, size_t len)
{
	struct importer *im = ctx;

	/* --buildid-mmap repeats an object's build-id in each of its mmap records */
	for (size_t i = im->nr_ids; i-- > 0;)
		if (im->ids[i].len == len && !memcmp(im->ids[i].id, id, len < 20 ? len : 20) &&
		    !strcmp(im->ids[i].path, path))
			return 0;
	if (array__reserve((void **)&im->ids, &im->cap_ids, im->nr_ids + 1, sizeof(*im->ids)))
		return -ENOMEM;
	im->ids[im->nr_ids].path = strdup(path);
	memcpy(im->ids[im->nr_ids].id, id, len < 20 ? len : 20);
	im->ids[im->nr_ids].len = len;
	return im->ids[im->nr_ids++].path ? 0 : -ENOMEM;
}

/* branch stacks keep absolute addresses; kernel ones are dropped */
static bool user_address(void *ctx, u32 pid, u64 addr, u64 *off)
{
	(void)ctx;
	(void)pid;
	*off = addr;
	return (s64)addr >= 0 && addr;
}

static struct pid_lbr *lbr_for(struct importer *im, u32 pid, u64 exec_ns)
{
	for (size_t i = 0; i < im->nr_lbrs; i++)
		if (im->lbrs[i].pid == pid && im->lbrs[i].exec_ns == exec_ns)
			return &im->lbrs[i];
	if (array__reserve((void **)&im->lbrs, &im->cap_lbrs, im->nr_lbrs + 1, sizeof(*im->lbrs)))
		return NULL;
	im->lbrs[im->nr_lbrs].pid = pid;
	im->lbrs[im->nr_lbrs].exec_ns = exec_ns;
	lbr__init(&im->lbrs[im->nr_lbrs].agg, user_address, NULL);
	return &im->lbrs[im->nr_lbrs++];
}

/* perf's callchain: context markers, then that context's frames, the sampled ip first; the
 * user part from uw instead when its stack was unwound here */
static int add_callchain(struct importer *im, const struct perf_sample *s, u32 flags, u64 exec_ns,
			 u64 map_ns, const struct unwind_walk_result *uw, u16 uend)
{
	struct raw_stack_sample r = { .pid = s->pid, .flags = flags, .exec_ns = exec_ns,
				      .map_ns = map_ns, .weight = s->period, .uend = uend };
	u64 ctx = 0;

	if (array__reserve((void **)&im->raw, &im->cap_raw, im->nr_raw + 1, sizeof(r)) ||
	    array__reserve((void **)&im->frames, &im->cap_frames,
			   im->nr_frames + s->nr_callchain + (uw ? uw->nr : 0), sizeof(*im->frames)))
		return -ENOMEM;
	r.kfirst = im->nr_frames;
	for (u64 i = 0; i < s->nr_callchain; i++) {
		u64 ip = s->callchain[i];

		if (ip >= (u64)-4095) {
			ctx = ip;
			if (ctx == PERF_CONTEXT_USER)
				r.ufirst = im->nr_frames;
			continue;
		}
		if (ctx == PERF_CONTEXT_KERNEL) {
			im->frames[im->nr_frames++] = ip;
			r.knr++;
		} else if (ctx == PERF_CONTEXT_USER && r.unr < HSBPF_MAX_FRAMES && !uw) {
			im->frames[im->nr_frames++] = ip;
			r.unr++;
		}
	}
	if (uw) {
		r.ufirst = im->nr_frames;
		memcpy(im->frames + im->nr_frames, im->ips, uw->nr * sizeof(*im->ips));
		im->nr_frames += uw->nr;
		r.unr = uw->nr;
		r.uend = uw->end;
		r.unr_fp = uw->nr_fp;
	}
	if (!r.unr)
		r.ufirst = im->nr_frames;
	im->raw[im->nr_raw++] = r;
	return 0;
}

/* does the sample have a user stack: a user part of its callchain, or a user ip? */
static bool has_user_stack(const struct perf_sample *s)
{
	for (u64 i = 0; i < s->nr_callchain; i++)
		if (s->callchain[i] == PERF_CONTEXT_USER)
			return true;
	return !s->nr_callchain && s->pid && (s64)s->ip > 0;
}

static int on_sample(void *ctx, const struct perf_sample *s)
{
	struct importer *im = ctx;
	/* with the history read first, the image at the sample's time; else the latest */
	u64 t = s->attr->sample_type & PERF_SAMPLE_TIME ? s->time : UINT64_MAX;
	u64 exec_ns = exec_time(im, s->pid, t), map_ns = map_time(im, s->pid, t, exec_ns);
	struct unwind_walk_result uw = {};
	bool unwound = false;
	/* the IP+1 fix: a precise sample of a taken branch reports the branch's target */
	u64 ip = s->attr->precise_ip && s->nr_branches && s->ip == s->branches[0].to ?
		 s->branches[0].from : s->ip;
	u32 flags = (s->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL ||
		    (s64)s->ip < 0 ? HSBPF_KEY_KERNEL : 0;
	struct slot *sl = NULL;

	if (!im->have_attr) {
		im->attr = *s->attr;
		im->have_attr = true;
	}
	/* the last slot is usually the one: samples repeat their IPs */
	for (size_t i = im->nr_slots; i-- > 0 && i + 64 > im->nr_slots;)
		if (im->slots[i].pid == s->pid && im->slots[i].ip == ip && im->slots[i].exec_ns == exec_ns &&
		    im->slots[i].map_ns == map_ns) {
			sl = &im->slots[i];
			break;
		}
	if (!sl) {
		if (array__reserve((void **)&im->slots, &im->cap_slots, im->nr_slots + 1, sizeof(*im->slots)))
			return -ENOMEM;
		sl = &im->slots[im->nr_slots++];
		*sl = (struct slot){ .pid = s->pid, .flags = flags, .ip = ip, .exec_ns = exec_ns,
				     .map_ns = map_ns };
	}
	sl->count++;
	sl->weight += s->period;
	/* a stack copy: a sample in the kernel has one too, though perf's dwarf mode leaves the
	 * user part out of its callchain (exclude_callchain_user); the registers say whether the
	 * task had a user side (abi 0 and no user frame: a kernel thread; abi 0 with one is
	 * counted as a copy without registers) */
	if (im->sorted && (s->attr->sample_type & PERF_SAMPLE_STACK_USER) &&
	    (has_user_stack(s) || (s->pid && (s->regs_abi || s->copy_err)))) {
		int r;

		if (!im->unwinder && !(im->unwinder = perf_unwind__new(im->p)))
			return -ENOMEM;
		r = perf_unwind__sample(im->unwinder, s, im->ips, &uw);

		if (r < 0)
			return r;
		unwound = r == PERF_UNWIND_OK;
	}
	/* a copy that could not be unwound leaves perf's one frame, as unreadable */
	if ((s->nr_callchain || unwound) &&
	    add_callchain(im, s, flags, exec_ns, map_ns, unwound ? &uw : NULL,
			  s->attr->sample_type & PERF_SAMPLE_STACK_USER ? HSBPF_STACK_UNREADABLE :
									  HSBPF_STACK_FP_END))
		return -ENOMEM;
	if (s->nr_branches) {
		struct pid_lbr *l = lbr_for(im, s->pid, exec_ns);

		if (!l)
			return -ENOMEM;
		return lbr__add(&l->agg, s);
	}
	return 0;
}

static bool exists(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISREG(st.st_mode);
}

/* where a recorded object is on this machine, and its recorded build-id */
static const char *local_path(struct importer *im, const char *recorded, char *buf, size_t size,
			      const u8 **id, size_t *id_len)
{
	const char *base = path__base(recorded);
	const struct perf_import_opts *o = im->o;

	*id = NULL;
	*id_len = 0;
	for (size_t i = 0; i < im->nr_ids; i++)
		if (!strcmp(im->ids[i].path, recorded)) {
			*id = im->ids[i].id;
			*id_len = im->ids[i].len;
		}
	if (o->binary) {
		const char *bb = path__base(o->binary);
		bool match;

		match = *id_len ? *id_len == o->binary_id_len && !memcmp(*id, o->binary_id, *id_len) :
				  !strcmp(bb, base);
		if (match)
			return o->binary;
	}
	if (o->symfs) {
		snprintf(buf, size, "%s/%s", o->symfs, recorded);
		if (exists(buf))
			return buf;
		snprintf(buf, size, "%s/%s", o->symfs, base);
		if (exists(buf))
			return buf;
	}
	return recorded;
}

static int event_name(const struct perf_event_attr *a, struct profile_meta *m)
{
	static const char *hw[] = { "cycles", "instructions", "cache-references", "cache-misses",
				    "branches", "branch-misses" };

	m->event_type = a->type;
	m->event_config = a->config;
	m->precise = a->precise_ip;
	if (a->type == PERF_TYPE_HARDWARE && a->config < ARRAY_SIZE(hw))
		snprintf(m->event, sizeof(m->event), "%s", hw[a->config]);
	else if (a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_CPU_CLOCK)
		snprintf(m->event, sizeof(m->event), "cpu-clock");
	else if (a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_TASK_CLOCK)
		snprintf(m->event, sizeof(m->event), "task-clock");
	else
		snprintf(m->event, sizeof(m->event), "r%llx", (unsigned long long)a->config);
	if (a->sample_type & PERF_SAMPLE_BRANCH_STACK) {
		size_t len = strlen(m->event);

		snprintf(m->event + len, sizeof(m->event) - len, " -b");
	}
	snprintf(m->unit, sizeof(m->unit), "%s", a->type == PERF_TYPE_SOFTWARE ? "ns" : "events");
	if (a->freq)
		m->freq = a->sample_freq;
	else
		m->period = a->sample_period;
	snprintf(m->period_mode, sizeof(m->period_mode), "fixed");
	return 0;
}

/* ---- the callchains, each distinct one stored once ---- */

static const struct importer *sort_im;

struct stack_ref {
	u32 first, nr;
	u32 sample;
	u16 end, nr_fp;
	bool kernel;
};

static int cmp_ref(const void *a, const void *b)
{
	const struct stack_ref *x = a, *y = b;
	const u64 *f = sort_im->frames;

	if (x->kernel != y->kernel)
		return x->kernel ? -1 : 1;
	if (x->nr != y->nr)
		return x->nr < y->nr ? -1 : 1;
	if (x->end != y->end || x->nr_fp != y->nr_fp)
		return x->end != y->end ? (x->end < y->end ? -1 : 1) : (x->nr_fp < y->nr_fp ? -1 : 1);
	for (u32 i = 0; i < x->nr; i++)
		if (f[x->first + i] != f[y->first + i])
			return f[x->first + i] < f[y->first + i] ? -1 : 1;
	return 0;
}

static int cmp_raw(const void *a, const void *b)
{
	const struct raw_stack_sample *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->exec_ns != y->exec_ns)
		return x->exec_ns < y->exec_ns ? -1 : 1;
	if (x->map_ns != y->map_ns)
		return x->map_ns < y->map_ns ? -1 : 1;
	if (x->flags != y->flags)
		return x->flags < y->flags ? -1 : 1;
	if (x->user != y->user)
		return x->user < y->user ? -1 : 1;
	return x->kernel < y->kernel ? -1 : x->kernel > y->kernel;
}

static int add_stacks(struct importer *im, struct profile *p)
{
	struct stack_ref *refs = malloc((2 * im->nr_raw + 1) * sizeof(*refs));
	size_t n = 0;
	s64 idx = -1;
	int err = 0;

	if (!refs)
		return -ENOMEM;
	for (size_t i = 0; i < im->nr_raw; i++) {
		const struct raw_stack_sample *r = &im->raw[i];

		if (r->knr)
			refs[n++] = (struct stack_ref){ r->kfirst, r->knr, i, 0, 0, true };
		if (r->unr)
			refs[n++] = (struct stack_ref){ r->ufirst, r->unr, i, r->uend, r->unr_fp, false };
	}
	sort_im = im;
	qsort(refs, n, sizeof(*refs), cmp_ref);
	for (size_t i = 0; i < n; i++) {
		/* a user stack from perf -g ends where its frame pointers did; one unwound here
		 * says how it ended */
		if (!i || cmp_ref(&refs[i - 1], &refs[i]))
			idx = profile__add_stack(p, im->frames + refs[i].first, refs[i].nr,
						 refs[i].end, refs[i].nr_fp);
		if (idx < 0) {
			err = -ENOMEM;
			goto out;
		}
		if (refs[i].kernel)
			im->raw[refs[i].sample].kernel = idx + 1;
		else
			im->raw[refs[i].sample].user = idx + 1;
	}
	qsort(im->raw, im->nr_raw, sizeof(*im->raw), cmp_raw);
	for (size_t i = 0; i < im->nr_raw && !err; i++) {
		const struct raw_stack_sample *r = &im->raw[i];
		struct profile_stack_sample ss = { .pid = r->pid, .flags = r->flags, .exec_ns = r->exec_ns,
						   .map_ns = r->map_ns, .user = r->user, .kernel = r->kernel };

		for (; i < im->nr_raw && !cmp_raw(r, &im->raw[i]); i++) {
			ss.count++;
			ss.weight += im->raw[i].weight;
		}
		i--;
		err = profile__add_stack_sample(p, &ss);
	}
out:
	sort_im = NULL;
	free(refs);
	return err;
}

/* recorded paths to local files, with the recorded build-ids for the symbolizer's check */
static int localize(struct importer *im)
{
	struct profile *p = im->p;

	if (im->localized)
		return 0;
	im->localized = true;
	for (size_t i = 0; i < p->nr_mappings; i++) {
		struct profile_mapping *m = &p->mappings[i];
		char buf[PATH_MAX];
		const u8 *id;
		size_t id_len;
		const char *local = local_path(im, profile__str(p, m->path), buf, sizeof(buf), &id, &id_len);
		s64 off = profile__intern(p, local);

		if (off < 0)
			return off;
		m->path = off;
		if (id_len) {
			memcpy(m->build_id, id, id_len);
			m->build_id_size = id_len;
		}
	}
	return 0;
}

/* the whole process history is known; the samples come next */
static int on_samples_begin(void *ctx)
{
	struct importer *im = ctx;
	int err = localize(im);

	if (err)
		return err;
	if (im->nr_all_execs)
		qsort(im->all_execs, im->nr_all_execs, sizeof(*im->all_execs), cmp_exec);
	if (im->nr_all_maps)
		qsort(im->all_maps, im->nr_all_maps, sizeof(*im->all_maps), cmp_exec);
	profile__finish(im->p);
	im->sorted = true;
	return 0;
}

/* what unwinding perf's stack copies gave, and what it could not do: never silently */
static void unwind_summary(struct importer *im, struct profile *p)
{
	const struct perf_unwind_stats *u = perf_unwind__stats(im->unwinder);
	u64 failed = 0;

	for (int i = 0; i < PERF_UNWIND_NR; i++)
		failed += u->failed[i];
	p->stats.stack_frames = u->frames;
	p->stats.stack_fp_frames = u->fp_frames;
	p->stats.unwind_objects = u->objects;
	p->stats.unwind_objects_no_cfi = u->objects_no_cfi;
	p->stats.unwind_objects_failed = u->objects_failed;
	p->stats.unwind_rows = u->rows;
	p->stats.unwind_build_ns = u->build_ns;
	debug("import: %llu user stacks unwound from perf's copies (%u objects with a table, %u "
	      "without, %u unreadable)", (unsigned long long)u->unwound, u->objects,
	      u->objects_no_cfi, u->objects_failed);
	if (failed)
		warning("%llu of %llu user stacks could not be unwound and keep perf's sampled frame "
			"(as unreadable): %llu without user registers, %llu with registers not x86-64's "
			"or without ip and sp, %llu with a damaged register or stack copy",
			(unsigned long long)failed, (unsigned long long)(failed + u->unwound),
			(unsigned long long)u->failed[PERF_UNWIND_NO_REGS],
			(unsigned long long)u->failed[PERF_UNWIND_BAD_REGS],
			(unsigned long long)u->failed[PERF_UNWIND_DAMAGED]);
	if (u->empty_copy)
		warning("%llu user stacks had an empty stack copy: their sampled frame only (as "
			"unreadable)", (unsigned long long)u->empty_copy);
}

/* ---- names perf report finds on this machine ---- */

/* JIT code: the perf map file each sampled process left, read as perf report reads it */
static int jit_names(struct importer *im, struct profile *p)
{
	const char *dir = im->o->jit_dir ? im->o->jit_dir : JITMAP_DIR;
	struct jitmaps *j = jitmaps__new(dir);
	u32 last = 0;
	int err = 0;

	if (!j)
		return -ENOMEM;
	/* the slots come in sample order: a pid is mostly tried once */
	for (size_t i = 0; i < im->nr_slots + im->nr_raw && !err; i++) {
		u32 pid = i < im->nr_slots ? im->slots[i].pid : im->raw[i - im->nr_slots].pid;
		size_t before = p->nr_jitsyms;
		int r;

		if (!pid || pid == (u32)-1 || pid == last)
			continue;
		last = pid;
		err = jitmaps__follow_gone(j, pid, geteuid());
		r = err ? 0 : jitmaps__read(j, p, pid, 0);
		if (r == -ENOMEM)
			err = r;
		else if (r == -EPERM)
			warning("'%s/perf-%u.map' is not read (a link, no regular file, or owned by "
				"neither root nor you): the JIT frames of %u stay unnamed", dir, pid, pid);
		else if (p->nr_jitsyms > before)
			note("import: %zu JIT names from '%s/perf-%u.map'", p->nr_jitsyms - before,
			     dir, pid);
	}
	jitmaps__free(j);
	return err;
}

bool perf_import__same_kernel(const struct perf_import_kernel *rec,
			      const struct perf_import_kernel *run, char *why, size_t size)
{
	char a[48], b[48];

	if (rec->id_len && run->id_len) {
		build_id__hex(rec->id, rec->id_len, a, sizeof(a));
		build_id__hex(run->id, run->id_len, b, sizeof(b));
		if (rec->id_len != run->id_len || memcmp(rec->id, run->id, rec->id_len)) {
			snprintf(why, size, "the recording's kernel (build-id %s) is not the running "
				 "one (build-id %s)", a, b);
			return false;
		}
		snprintf(why, size, "the recording's kernel build-id (%s) is the running kernel's", a);
	} else if (rec->release[0] && run->release[0]) {
		if (strcmp(rec->release, run->release)) {
			snprintf(why, size, "the recording's kernel (%s) is not the running one (%s)",
				 rec->release, run->release);
			return false;
		}
		snprintf(why, size, "the recording's kernel release (%s) is the running kernel's "
			 "(no build-id to compare)", rec->release);
	} else {
		snprintf(why, size, "the recording says nothing of its kernel (no build-id, no "
			 "os release)");
		return false;
	}
	if (rec->text && run->text && rec->text != run->text) {
		snprintf(why, size, "the kernel's text was at %#llx when recorded and is at %#llx "
			 "now (another boot)", (unsigned long long)rec->text,
			 (unsigned long long)run->text);
		return false;
	}
	return true;
}

/* where the running kernel's text starts (kallsyms' _text), 0 if not shown */
static u64 kallsyms_text(const char *path)
{
	unsigned long long addr;
	char line[512], type, name[256];
	u64 text = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return 0;
	while (!text && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 && !strcmp(name, "_text"))
			text = addr;
	fclose(f);
	return text;
}

/* kernel frames: named from this machine's kallsyms when the recording's kernel is this one */
static int kernel_names(struct importer *im, struct profile *p, const struct perf_data_stats *st)
{
	const char *kallsyms = im->o->kallsyms ? im->o->kallsyms : "/proc/kallsyms";
	struct perf_import_kernel rec = { .text = st->kernel_map ? st->kernel_start : 0 }, run = {};
	struct utsname u;
	bool any = false;
	char why[256];
	int err;

	for (size_t i = 0; i < im->nr_slots && !any; i++)
		any = im->slots[i].flags & HSBPF_KEY_KERNEL;
	for (size_t i = 0; i < im->nr_raw && !any; i++)
		any = im->raw[i].knr;
	if (!any)
		return 0;
	for (size_t i = 0; i < im->nr_ids; i++)
		if (!strncmp(im->ids[i].path, "[kernel.kallsyms]", 17)) {
			rec.id_len = im->ids[i].len < 20 ? im->ids[i].len : 20;
			memcpy(rec.id, im->ids[i].id, rec.id_len);
		}
	snprintf(rec.release, sizeof(rec.release), "%s", st->os_release);
	if (build_id__kernel(im->o->kernel_notes ? im->o->kernel_notes : "/sys/kernel/notes",
			     run.id, sizeof(run.id), &run.id_len))
		run.id_len = 0;
	if (!uname(&u))
		snprintf(run.release, sizeof(run.release), "%s", u.release);
	run.text = kallsyms_text(kallsyms);
	if (!perf_import__same_kernel(&rec, &run, why, sizeof(why))) {
		warning("kernel frames stay unnamed: %s", why);
		return 0;
	}
	err = ksyms__save_for_samples(p, kallsyms);
	if (!err)
		note("import: kernel frames named from '%s' (%zu symbols): %s", kallsyms, p->nr_ksyms,
		     why);
	return err;
}

int perf_import__run(const char *path, const struct perf_import_opts *o, struct profile *p)
{
	struct perf_data_callbacks cb = { .mmap = on_mmap, .comm = on_comm, .fork = on_fork,
					  .sample = on_sample, .build_id = on_build_id,
					  .history_first = true, .samples_begin = on_samples_begin };
	struct importer im = { .p = p, .o = o };
	struct perf_data_stats st;
	int err;

	cb.ctx = &im;
	err = perf_data__read(path, &cb, &st);
	if (err)
		goto out;
	err = localize(&im);
	if (err)
		goto out;
	for (size_t i = 0; i < im.nr_slots; i++) {
		struct profile_sample s = { .pid = im.slots[i].pid, .flags = im.slots[i].flags,
					    .ip = im.slots[i].ip, .exec_ns = im.slots[i].exec_ns,
					    .map_ns = im.slots[i].map_ns,
					    .count = im.slots[i].count, .weight = im.slots[i].weight };

		err = profile__add_sample(p, &s);
		if (err)
			goto out;
	}
	for (size_t i = 0; i < im.nr_lbrs; i++) {
		const struct pid_lbr *l = &im.lbrs[i];
		const struct lbr_table *tabs[2] = { &l->agg.edges, &l->agg.ranges };

		for (int k = 0; k < 2; k++)
			for (size_t j = 0; j < tabs[k]->nr; j++) {
				const struct lbr_pair *pr = &tabs[k]->pairs[j];
				struct profile_lbr e = { .pid = l->pid, .kind = k ? HSBPF_LBR_RANGE : HSBPF_LBR_EDGE,
							 .a = pr->a, .b = pr->b, .exec_ns = l->exec_ns,
							 .count = pr->count };

				err = profile__add_lbr(p, &e);
				if (err)
					goto out;
			}
	}
	if (im.nr_raw) {
		err = add_stacks(&im, p);
		if (err)
			goto out;
		snprintf(p->meta.call_graph, sizeof(p->meta.call_graph), im.unwinder ? "dwarf" : "fp");
		p->stats.stack_samples = im.nr_raw;
	}
	if (im.unwinder)
		unwind_summary(&im, p);
	err = jit_names(&im, p);
	if (!err)
		err = kernel_names(&im, p, &st);
	if (err)
		goto out;
	snprintf(p->meta.kernel, sizeof(p->meta.kernel), "%.*s", (int)sizeof(p->meta.kernel) - 1,
		 st.os_release);
	if (im.have_attr)
		event_name(&im.attr, &p->meta);
	snprintf(p->meta.target, sizeof(p->meta.target), "imported: %s", path);
	snprintf(p->meta.version, sizeof(p->meta.version), "perf.data");
	p->stats.samples = st.samples;
	p->stats.sideband_lost = st.lost;
	sideband__fill_build_ids(p);
	profile__finish(p);
out:
	if (err == -ENOMEM)
		error("cannot import '%s': %s", path, strerror(ENOMEM));
	for (size_t i = 0; i < im.nr_lbrs; i++)
		lbr__free(&im.lbrs[i].agg);
	for (size_t i = 0; i < im.nr_ids; i++)
		free(im.ids[i].path);
	free(im.ids);
	free(im.lbrs);
	free(im.slots);
	free(im.execs);
	free(im.all_execs);
	free(im.all_maps);
	free(im.maps);
	free(im.raw);
	free(im.frames);
	perf_unwind__free(im.unwinder);
	return err;
}
