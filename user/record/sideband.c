// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Sideband records: per-CPU dummy perf events with mmap2, comm and task records, read from
 * their ring buffers; and the build-ids of the objects mapped, read here from the files.
 * The kernel is not asked for build-ids (perf_event_attr.build_id): one event asking for them
 * makes every MMAP2 record of every listener carry one, and perf 6.1's perf record, run beside
 * us, aborts on such records (docs/symbols.md). A build-id is read instead as the record is
 * drained, from the mapping itself (/proc/PID/map_files) while the process lives, else from
 * the path if it still holds the same inode; one read per distinct inode. */
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "symbols/build_id.h"
#include "record/sideband.h"
#include "lib/hashidx.h"

#define ALL_PAGES_MAX	1024	/* a CPU's ring with -a: 4 MiB */
#define ALL_PAGES_TOTAL	16384	/* every CPU's: 64 MiB */

#define KSYM_NAME_MAX 512

#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1 << 14)
#endif

struct ring {
	int fd;
	void *base;
	size_t data_size;
};

/* an object's identity in an MMAP2 record, and the build-id read for it */
struct known_object {
	u32 maj, min;
	u64 ino, ino_generation;
	u8 id[BUILD_ID_MAX];
	u8 id_size;	/* 0: it has none */
};

struct sideband {
	struct profile *p;
	struct known_object *known;
	size_t nr_known, cap_known;
	struct hashidx known_idx;
	struct sideband_id_stats ids;
	struct ring *rings;
	int nr_rings;
	int epfd;
	u64 lost;
	u8 *scratch;	/* a record that wraps around the ring end is copied here */
	sideband_exit_fn on_exit;
	void *exit_ctx;
};

/* an MMAP2 record after its header */
struct mmap2_body {
	u32 pid, tid;
	u64 addr, len, pgoff;
	union {
		struct {
			u32 maj, min;
			u64 ino, ino_generation;
		};
		struct {
			u8 build_id_size;
			u8 r1;
			u16 r2;
			u8 build_id[20];
		};
	};
	u32 prot, flags;
};

/* sample_id_all trailer for sample_type = TID | TIME */
struct sample_id {
	u32 pid, tid;
	u64 time;
};

static long perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group,
			    unsigned long flags)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group, flags);
}

static void ring_close(struct ring *r)
{
	if (r->base)
		munmap(r->base, r->data_size + sysconf(_SC_PAGESIZE));
	if (r->fd >= 0)
		close(r->fd);
}

unsigned sideband__pages_for_all(int nr_cpus)
{
	unsigned pages = ALL_PAGES_MAX;

	while (pages > SIDEBAND_PAGES && nr_cpus > 0 && (u64)pages * nr_cpus > ALL_PAGES_TOTAL)
		pages /= 2;
	return pages;
}

struct sideband *sideband__open(const int *cpus, int nr_cpus, struct profile *p, unsigned pages)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.disabled = 1,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.sample_id_all = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,	/* the BPF side's bpf_ktime_get_ns() */
		.ksymbol = 1,		/* BPF programs and other kernel code made while running */
		.watermark = 1,
	};
	long page = sysconf(_SC_PAGESIZE);
	struct sideband *sb;
	int err = 0;

	sb = calloc(1, sizeof(*sb));
	if (!sb)
		return NULL;
	sb->p = p;
	sb->epfd = epoll_create1(EPOLL_CLOEXEC);
	sb->rings = calloc(nr_cpus, sizeof(*sb->rings));
	sb->scratch = malloc(65536);
	if (sb->epfd < 0 || !sb->rings || !sb->scratch) {
		err = -ENOMEM;
		error("cannot set up sideband: %s", strerror(ENOMEM));
		goto fail;
	}
	/* a side-band record is no sample: wakeup_events does not count it, bytes do. A wake-up
	 * per record: the unwinder wants a mapping at once, and a build-id is read while the
	 * process that mapped the object still lives (a 30 ms program run from a file deleted at
	 * its exit: 40 of 40 identified, against 15 with a wake-up per quarter ring; a storm of
	 * 85,000 mmaps a second costs hsbpf 0.3-0.6 s of CPU in 7 s instead of 0.2: docs/symbols.md) */
	if (!pages)
		pages = SIDEBAND_PAGES;
	attr.wakeup_watermark = 1;
	for (int i = 0; i < nr_cpus; i++) {
		struct ring *r = &sb->rings[i];
		struct epoll_event ev = { .events = EPOLLIN };
		int fd;

		r->fd = -1;
		fd = perf_event_open(&attr, -1, cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && errno == EINVAL && attr.ksymbol) {
			/* before 5.1: kernel code made while running is named from kallsyms only */
			attr.ksymbol = 0;
			fd = perf_event_open(&attr, -1, cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
		}
		if (fd < 0) {
			err = -errno;
			error("cannot open sideband event on CPU %d: %s%s", cpus[i], strerror(errno),
			      errno == EACCES || errno == EPERM ? " (need root or CAP_PERFMON)" : "");
			goto fail;
		}
		r->fd = fd;
		sb->nr_rings++;
		r->data_size = (size_t)pages * page;
		r->base = mmap(NULL, r->data_size + page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (r->base == MAP_FAILED) {
			r->base = NULL;
			err = -errno;
			error("cannot map sideband ring on CPU %d: %s", cpus[i], strerror(errno));
			goto fail;
		}
		ev.data.u32 = i;
		if (epoll_ctl(sb->epfd, EPOLL_CTL_ADD, fd, &ev)) {
			err = -errno;
			error("cannot poll sideband ring: %s", strerror(errno));
			goto fail;
		}
	}
	return sb;
fail:
	sideband__close(sb);
	errno = -err;
	return NULL;
}

int sideband__enable(struct sideband *sb)
{
	for (int i = 0; i < sb->nr_rings; i++)
		if (ioctl(sb->rings[i].fd, PERF_EVENT_IOC_ENABLE, 0)) {
			int err = -errno;

			return fail(err, "cannot enable sideband event: %s", strerror(-err));
		}
	return 0;
}

static int trailer(const u8 *rec, size_t size, size_t body, struct sample_id *id)
{
	if (size < body + sizeof(*id))
		return -EINVAL;
	memcpy(id, rec + size - sizeof(*id), sizeof(*id));
	return 0;
}

/* a string field inside a record must end with a NUL before the trailer */
static const char *record_string(const u8 *rec, size_t off, size_t end)
{
	if (off >= end || !memchr(rec + off, 0, end - off))
		return NULL;
	return (const char *)rec + off;
}

/* a record of a fixed part, a NUL-terminated string and the sample_id trailer */
static int fixed_and_string(const u8 *rec, size_t size, void *fixed, size_t fixed_size,
			    const char **str, struct sample_id *id)
{
	const size_t body = sizeof(struct perf_event_header) + fixed_size;

	if (trailer(rec, size, body, id))
		return -EINVAL;
	memcpy(fixed, rec + sizeof(struct perf_event_header), fixed_size);
	*str = record_string(rec, body, size - sizeof(*id));
	return *str ? 0 : -EINVAL;
}

/* ids_asked: whether the event asked for build-ids. One that did not gets MMAP2 records with
 * an inode, whatever their header says: the kernel sets PERF_RECORD_MISC_MMAP_BUILD_ID in a
 * header all listeners share once one of them asked (seen on 6.18: another process's event
 * with build_id made ours say so), which is what makes perf 6.1 abort */
static int decode(struct profile *p, const void *data, size_t size, u64 *lost, bool ids_asked)
{
	const u8 *rec = data;
	struct perf_event_header h;
	struct sample_id id;

	if (size < sizeof(h))
		return -EINVAL;
	memcpy(&h, rec, sizeof(h));
	if (h.size != size)
		return -EINVAL;
	switch (h.type) {
	case PERF_RECORD_MMAP2: {
		struct mmap2_body m;
		const char *path;
		bool has_id = ids_asked && h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID;

		if (fixed_and_string(rec, size, &m, sizeof(m), &path, &id))
			return -EINVAL;
		if (!(m.prot & 4 /* PROT_EXEC */))
			return 0;
		return profile__add_mapping(p, m.pid, id.time, m.addr, m.len, m.pgoff, path,
					    has_id ? m.build_id : NULL,
					    has_id ? m.build_id_size : 0);
	}
	case PERF_RECORD_MMAP: {
		struct {
			u32 pid, tid;
			u64 addr, len, pgoff;
		} m;
		const char *path;

		if (fixed_and_string(rec, size, &m, sizeof(m), &path, &id))
			return -EINVAL;
		return profile__add_mapping(p, m.pid, id.time, m.addr, m.len, m.pgoff, path, NULL, 0);
	}
	case PERF_RECORD_COMM: {
		struct {
			u32 pid, tid;
		} c;
		const char *comm;
		bool exec = h.misc & PERF_RECORD_MISC_COMM_EXEC;

		if (fixed_and_string(rec, size, &c, sizeof(c), &comm, &id))
			return -EINVAL;
		if (c.pid != c.tid && !exec)	/* a thread's own name */
			return profile__add_thread_comm(p, c.pid, c.tid, id.time, comm);
		return profile__add_comm(p, c.pid, id.time, comm, exec);
	}
	case PERF_RECORD_FORK: {
		struct {
			u32 pid, ppid, tid, ptid;
			u64 time;
		} f;

		if (size < sizeof(h) + sizeof(f))
			return -EINVAL;
		memcpy(&f, rec + sizeof(h), sizeof(f));
		if (f.pid != f.tid || f.pid == f.ppid)	/* a thread, not a process */
			return 0;
		return profile__add_fork(p, f.pid, f.ppid, f.time);
	}
	case PERF_RECORD_KSYMBOL: {
		struct {
			u64 addr;
			u32 len;
			u16 type, flags;
		} k;
		const char *name;
		char full[KSYM_NAME_MAX + 8];
		int err;

		if (fixed_and_string(rec, size, &k, sizeof(k), &name, &id))
			return -EINVAL;
		/* an unloaded program's name stays: its samples were taken while it was there */
		if (k.flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER || !*name)
			return 0;
		/* as kallsyms shows them, so that reports name the object [bpf] */
		snprintf(full, sizeof(full), k.type == PERF_RECORD_KSYMBOL_TYPE_BPF ? "%s [bpf]" : "%s",
			 name);
		err = profile__add_ksym(p, k.addr, full);
		/* bounded: an address past its end is not this symbol's */
		return err ? err : profile__add_ksym(p, k.addr + k.len, "");
	}
	case PERF_RECORD_LOST: {
		struct {
			u64 id, lost;
		} l;

		if (size < sizeof(h) + sizeof(l))
			return -EINVAL;
		memcpy(&l, rec + sizeof(h), sizeof(l));
		if (lost)
			*lost += l.lost;
		return 0;
	}
	default:
		return 0;	/* EXIT, THROTTLE, ...: not needed for symbols */
	}
}

int sideband__record(struct profile *p, const void *data, size_t size, u64 *lost)
{
	return decode(p, data, size, lost, true);
}

/* ---- build-ids, read as the mappings are drained ---- */

static bool known_eq(const void *key, u32 pos, void *ctx)
{
	const struct known_object *a = key, *b = &((const struct sideband *)ctx)->known[pos];

	return a->ino == b->ino && a->ino_generation == b->ino_generation && a->maj == b->maj &&
	       a->min == b->min;
}

static u64 known_hash(const struct known_object *o)
{
	return hashidx__hash_u64((u64)o->maj << 32 | o->min,
				 hashidx__hash_u64(o->ino, hashidx__hash_u64(o->ino_generation, 0)));
}

/* fd if it is open on the inode ino, else closed and -ESTALE. Only the inode is compared: a
 * btrfs subvolume's stat tells another device than the record's superblock */
static int same_inode(int fd, u64 ino)
{
	struct stat st;

	if (fd >= 0 && !fstat(fd, &st) && st.st_ino == ino)
		return fd;
	if (fd >= 0)
		close(fd);
	return -ESTALE;
}

/* the file a new mapping maps: the mapping itself while its process has it (even deleted or
 * in another mount namespace), else the path while it holds the same inode; -ESTALE when
 * neither does, *replaced when the path holds another file */
static int open_mapped(const struct mmap2_body *r, const char *path, bool *replaced)
{
	char mf[64];
	int fd;

	snprintf(mf, sizeof(mf), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, r->pid, r->addr,
		 r->addr + r->len);
	/* the range may have been unmapped and another file mapped there since */
	fd = same_inode(open(mf, O_RDONLY | O_CLOEXEC), r->ino);
	if (fd >= 0)
		return fd;
	fd = file__open_regular(path);
	*replaced = fd >= 0;
	fd = same_inode(fd, r->ino);
	if (fd >= 0)
		*replaced = false;
	return fd;
}

/* the build-id of the object a drained MMAP2 record maps, into the mapping it added */
static int identify(struct sideband *sb, const struct mmap2_body *r, const char *path,
		    struct profile_mapping *m)
{
	struct known_object key = {
		.maj = r->maj, .min = r->min, .ino = r->ino, .ino_generation = r->ino_generation,
	};
	u64 hash = known_hash(&key), t0;
	bool replaced = false;
	s64 pos;
	size_t len;
	int fd, err;

	/* anonymous code (//anon, [vdso]...) has no file */
	if (path[0] != '/' || path[1] == '/' || !r->ino)
		return 0;
	pos = hashidx__find(&sb->known_idx, hash, &key, known_eq, sb);
	if (pos < 0) {
		t0 = now_ns(CLOCK_MONOTONIC);
		fd = open_mapped(r, path, &replaced);
		if (fd < 0) {
			sb->ids.missed++;
			sb->ids.read_ns += now_ns(CLOCK_MONOTONIC) - t0;
			debug("cannot read the build-id of '%s' (pid %u): %s", path, r->pid,
			      replaced ? "the path holds another file now" : "deleted, its process gone");
			/* what is at the path is not what was mapped: as /proc/PID/maps would say */
			if (replaced) {
				char *buf = malloc(strlen(path) + sizeof(" (deleted)"));
				s64 off = -ENOMEM;

				if (buf) {
					sprintf(buf, "%s (deleted)", path);
					off = profile__intern(sb->p, buf);
					free(buf);
				}
				if (off < 0)
					return off;
				m->path = off;
			}
			return 0;
		}
		err = build_id__read_fd(fd, key.id, sizeof(key.id), &len);
		close(fd);
		key.id_size = err ? 0 : len;
		sb->ids.read++;
		sb->ids.read_ns += now_ns(CLOCK_MONOTONIC) - t0;
		if (array__reserve((void **)&sb->known, &sb->cap_known, sb->nr_known + 1,
				   sizeof(*sb->known)) ||
		    hashidx__insert(&sb->known_idx, hash, sb->nr_known))
			return -ENOMEM;
		pos = sb->nr_known;
		sb->known[sb->nr_known++] = key;
	}
	if (sb->known[pos].id_size) {
		memcpy(m->build_id, sb->known[pos].id, sb->known[pos].id_size);
		m->build_id_size = sb->known[pos].id_size;
	}
	return 0;
}

/* a drained record, into the profile; an MMAP2 record's object identified */
static int take_record(struct sideband *sb, const u8 *rec, size_t size)
{
	size_t nr = sb->p->nr_mappings;
	struct perf_event_header h;
	struct mmap2_body m;
	struct sample_id id;
	const char *path;
	int err = decode(sb->p, rec, size, &sb->lost, false);

	memcpy(&h, rec, sizeof(h));
	if (err || h.type != PERF_RECORD_MMAP2 || sb->p->nr_mappings != nr + 1 ||
	    fixed_and_string(rec, size, &m, sizeof(m), &path, &id))
		return err;
	return identify(sb, &m, path, &sb->p->mappings[nr]);
}

static int ring_drain(struct sideband *sb, struct ring *r)
{
	struct perf_event_mmap_page *meta = r->base;
	u8 *data = (u8 *)r->base + sysconf(_SC_PAGESIZE);
	u64 head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	u64 tail = meta->data_tail;
	int err = 0;

	while (tail < head) {
		size_t off = tail % r->data_size;
		struct perf_event_header h;
		const u8 *rec;

		if (off + sizeof(h) <= r->data_size) {
			memcpy(&h, data + off, sizeof(h));
		} else {
			size_t first = r->data_size - off;

			memcpy(&h, data + off, first);
			memcpy((u8 *)&h + first, data, sizeof(h) - first);
		}
		if (h.size < sizeof(h) || h.size > head - tail) {
			err = error("sideband ring is inconsistent: record of %u bytes", h.size);
			tail = head;
			break;
		}
		if (off + h.size <= r->data_size) {
			rec = data + off;
		} else {
			size_t first = r->data_size - off;

			memcpy(sb->scratch, data + off, first);
			memcpy(sb->scratch + first, data, h.size - first);
			rec = sb->scratch;
		}
		if (take_record(sb, rec, h.size) == -ENOMEM) {
			err = error("cannot store sideband record: %s", strerror(ENOMEM));
			tail = head;
			break;
		}
		if (h.type == PERF_RECORD_EXIT && sb->on_exit &&
		    h.size >= sizeof(h) + 4 * sizeof(u32) + sizeof(u64)) {
			struct {
				u32 pid, ppid, tid, ptid;
				u64 time;
			} x;

			memcpy(&x, rec + sizeof(h), sizeof(x));
			if (x.pid == x.tid)	/* the process, not one of its threads */
				sb->on_exit(sb->exit_ctx, x.pid, x.time);
		}
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return err;
}

void sideband__on_exit(struct sideband *sb, sideband_exit_fn fn, void *ctx)
{
	sb->on_exit = fn;
	sb->exit_ctx = ctx;
}

int sideband__drain(struct sideband *sb)
{
	int err = 0;

	for (int i = 0; i < sb->nr_rings; i++)
		if (ring_drain(sb, &sb->rings[i]))
			err = -EIO;
	return err;
}

int sideband__fd(const struct sideband *sb)
{
	return sb->epfd;
}

int sideband__watch(struct sideband *sb, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };

	return epoll_ctl(sb->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

u64 sideband__lost(const struct sideband *sb)
{
	return sb->lost;
}

void sideband__id_stats(const struct sideband *sb, struct sideband_id_stats *st)
{
	*st = sb->ids;
}

void sideband__close(struct sideband *sb)
{
	if (!sb)
		return;
	for (int i = 0; sb->rings && i < sb->nr_rings; i++)
		ring_close(&sb->rings[i]);
	if (sb->epfd >= 0)
		close(sb->epfd);
	free(sb->rings);
	free(sb->scratch);
	free(sb->known);
	hashidx__free(&sb->known_idx);
	free(sb);
}

void sideband__fill_build_ids(struct profile *p)
{
	/* one ELF read per distinct path: interned strings make the offset the key */
	struct cached {
		u32 path;
		int err;
		u8 id[BUILD_ID_MAX];
		size_t len;
	} *cache = NULL;
	size_t nr = 0, cap = 0;

	for (size_t i = 0; i < p->nr_mappings; i++) {
		struct profile_mapping *m = &p->mappings[i];
		const char *path = profile__str(p, m->path);
		struct cached *c = NULL;

		if (m->build_id_size || path[0] != '/')
			continue;
		for (size_t j = 0; j < nr; j++)
			if (cache[j].path == m->path)
				c = &cache[j];
		if (!c) {
			if (array__reserve((void **)&cache, &cap, nr + 1, sizeof(*cache)))
				break;
			c = &cache[nr++];
			c->path = m->path;
			c->err = build_id__read(path, c->id, sizeof(c->id), &c->len);
		}
		if (!c->err) {
			memcpy(m->build_id, c->id, c->len);
			m->build_id_size = c->len;
		}
	}
	free(cache);
}
