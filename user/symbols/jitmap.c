// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Perf map files: parsed line by line (a bad line is counted and skipped, never fatal). DIR is
 * world-writable: a map is opened without following links and without blocking, and taken
 * only when the open file is a regular one owned by root or by its process's user (taken while
 * the process lives: perf's rule), so that nobody names another user's samples. Only followed
 * processes' maps are opened, from where the last read ended (a replaced file read whole), in
 * chunks and up to a bound, so that junk in DIR costs nothing. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "symbols/jitmap.h"
#include "profile/procfs.h"

#define CHUNK	(1u << 20)	/* read at a time; a longer line is skipped as malformed */

/* a followed process */
struct seen {
	u32 pid;
	s64 uid;	/* its effective uid when first followed; -1: not known (it was gone) */
	u64 dev, ino;	/* of the file read */
	u64 off;	/* what was parsed of it: whole lines */
	u64 malformed;	/* its lines skipped */
	u32 lines;
	bool partial;	/* an unterminated last line, counted as malformed until completed */
	bool skipping;	/* inside a line longer than a chunk */
	bool counted;	/* in jit_maps */
	bool ignored;	/* counted in jit_ignored and said */
	bool capped;	/* counted in jit_capped */
	bool exited;
	bool gone;	/* followed after the fact (an import's): its map is looked for in DIR */
	bool nspid_read;	/* nspid is known: a process keeps its PID namespace */
	u32 nspid;	/* its pid in its own PID namespace (0: ours), where its map is named */
	u64 uid_round;	/* the follow_new round its uid was taken in */
};

struct jitmaps {
	char dir[PATH_MAX];
	struct seen *seen;	/* sorted by pid */
	size_t nr_seen, cap_seen;
	bool all;		/* every process heard of, not only the targets' trees */
	size_t seen_comms, seen_forks;	/* of the profile, looked at for new processes */
	u64 round;		/* follow_new's calls: a uid taken in this one is current */
	u64 per_map, total, per_scan, total_read;
	u64 scan_end;		/* in a scan: the total_read it stops at; else UINT64_MAX */
	char *buf;		/* CHUNK bytes */
	struct jitmaps_stats st;
};

/* a hex number ("0x" optional) ended by a blank; false if none */
static bool hex_field(const char **s, const char *end, u64 *v)
{
	const char *p = *s;
	u64 x = 0;
	int digits = 0;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; p < end && isxdigit((unsigned char)*p); p++, digits++) {
		if (x >> 60)
			return false;	/* more than 64 bits */
		x = x << 4 | (u64)(isdigit((unsigned char)*p) ? *p - '0' : (tolower(*p) - 'a' + 10));
	}
	if (!digits || p >= end || (*p != ' ' && *p != '\t'))
		return false;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	*s = p;
	*v = x;
	return true;
}

int jitmap__parse(struct profile *p, u32 pid, u64 time_ns, const char *buf, size_t len,
		  struct jitmap_stats *st)
{
	const char *end = buf + len;
	u32 line = st->lines;
	char name[4096];

	for (const char *s = buf; s < end; line++) {
		const char *nl = memchr(s, '\n', end - s), *e = nl ? nl : end, *q = s;
		u64 start, size;
		size_t n;
		int err;

		while (e > q && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (e == q) {		/* an empty line */
			s = nl ? nl + 1 : end;
			continue;
		}
		if (!hex_field(&q, e, &start) || !hex_field(&q, e, &size) || q >= e || !size ||
		    size > UINT32_MAX || start + size < start || memchr(q, '\0', e - q)) {
			st->malformed++;
			s = nl ? nl + 1 : end;
			continue;
		}
		n = e - q < (long)sizeof(name) ? (size_t)(e - q) : sizeof(name) - 1;
		memcpy(name, q, n);
		name[n] = '\0';
		err = profile__add_jitsym(p, pid, start, size, name, line, time_ns);
		if (err)
			return err;
		st->syms++;
		s = nl ? nl + 1 : end;
	}
	st->lines = line;
	return 0;
}

struct jitmaps *jitmaps__new(const char *dir)
{
	struct jitmaps *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	snprintf(j->dir, sizeof(j->dir), "%s", dir ? dir : JITMAP_DIR);
	j->all = true;
	j->per_map = JITMAP_MAX_SIZE;
	j->total = JITMAP_MAX_TOTAL;
	j->per_scan = JITMAP_SCAN_BYTES;
	j->scan_end = UINT64_MAX;
	return j;
}

void jitmaps__free(struct jitmaps *j)
{
	if (!j)
		return;
	free(j->seen);
	free(j->buf);
	free(j);
}

void jitmaps__set_limits(struct jitmaps *j, u64 per_map, u64 total, u64 per_scan)
{
	j->per_map = per_map;
	j->total = total;
	j->per_scan = per_scan;
}

const struct jitmaps_stats *jitmaps__stats(const struct jitmaps *j)
{
	return &j->st;
}

/* the index of pid in seen, or where it would go */
static size_t seen_at(const struct jitmaps *j, u32 pid)
{
	size_t lo = 0, hi = j->nr_seen;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (j->seen[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct seen *find(struct jitmaps *j, u32 pid)
{
	size_t i = seen_at(j, pid);

	return i < j->nr_seen && j->seen[i].pid == pid ? &j->seen[i] : NULL;
}

/* the effective uid of a live process (a zombie's too), -1 if it is gone: the owner of its
 * /proc folder, which the kernel gives its effective uid (task_dump_owner) unless it is not
 * dumpable (after a setuid without an exec since), whose folder is root's: then a map owned
 * by its user is refused, as one whose owner is not its process's. A stat, not the status
 * file the kernel renders whole: the agent follows every process a machine starts */
static s64 process_uid(struct jitmaps *j, u32 pid)
{
	char path[64];
	struct stat st;

	j->st.users_read++;
	snprintf(path, sizeof(path), "/proc/%u", pid);
	return stat(path, &st) ? -1 : (s64)st.st_uid;
}

/* pid followed from now on; renew: a new process (fork, exec), so one that had exited is a
 * pid reused, its user taken anew. NULL without memory. A pointer into seen lives until the
 * next call */
static struct seen *follow(struct jitmaps *j, u32 pid, bool renew)
{
	size_t i = seen_at(j, pid);
	struct seen *e;

	if (i < j->nr_seen && j->seen[i].pid == pid) {
		e = &j->seen[i];
		if (renew && e->exited) {
			e->exited = false;
			e->uid = process_uid(j, pid);
			e->uid_round = j->round;
			e->nspid_read = false;
		}
		return e;
	}
	if (array__reserve((void **)&j->seen, &j->cap_seen, j->nr_seen + 1, sizeof(*j->seen)))
		return NULL;
	memmove(&j->seen[i + 1], &j->seen[i], (j->nr_seen - i) * sizeof(*j->seen));
	j->nr_seen++;
	j->seen[i] = (struct seen){ .pid = pid, .uid = process_uid(j, pid), .uid_round = j->round };
	return &j->seen[i];
}

int jitmaps__target(struct jitmaps *j, const u32 *pids, size_t nr)
{
	j->all = !nr;
	for (size_t i = 0; i < nr; i++)
		if (!follow(j, pids[i], false))
			return -ENOMEM;
	return 0;
}

int jitmaps__follow_gone(struct jitmaps *j, u32 pid, u32 uid)
{
	struct seen *e = follow(j, pid, false);

	if (!e)
		return -ENOMEM;
	e->uid = uid;
	e->gone = true;
	return 0;
}

/* the processes p has heard of since the last look that are to be followed: targets'
 * children, or all */
static int follow_new(struct jitmaps *j, const struct profile *p)
{
	/* forgetting exited processes compacts the arrays: what moved is looked at again */
	j->round++;
	j->seen_forks = j->seen_forks < p->nr_forks ? j->seen_forks : p->nr_forks;
	j->seen_comms = j->seen_comms < p->nr_comms ? j->seen_comms : p->nr_comms;
	for (; j->seen_forks < p->nr_forks; j->seen_forks++) {
		const struct profile_fork *f = &p->forks[j->seen_forks];

		/* a pid an exited process had is a new process: follow renews it (its user too) */
		if ((j->all || find(j, f->ppid)) && !follow(j, f->pid, true))
			return -ENOMEM;
	}
	for (; j->seen_comms < p->nr_comms; j->seen_comms++) {
		const struct profile_comm *c = &p->comms[j->seen_comms];
		struct seen *e;
		s64 uid;

		if (j->all && !follow(j, c->pid, true))
			return -ENOMEM;
		/* an exec may change the user (setuid, or a runner's drop): taken again while
		 * the process lives, unless taken in this round, after the exec already (a fork
		 * and its exec, the churn of a busy machine: one stat, not two) */
		if (c->exec && (e = find(j, c->pid)) && !e->exited && e->uid_round != j->round &&
		    (uid = process_uid(j, c->pid)) >= 0) {
			e->uid = uid;
			e->uid_round = j->round;
		}
	}
	return 0;
}

/* a map not taken: counted once, and why said once */
static int ignore(struct profile *p, struct seen *e, const char *path, const char *why)
{
	if (!e->ignored) {
		e->ignored = true;
		p->stats.jit_ignored++;
		debug("'%s' is not read: %s", path, why);
	}
	return -EPERM;
}

/* whole lines from e->off up to end, parsed into p */
static int read_lines(struct jitmaps *j, struct profile *p, struct seen *e, int fd, u64 end,
		      u64 time_ns)
{
	struct jitmap_stats st = { .lines = e->lines };
	u32 before;
	int err = 0;

	if (!j->buf && !(j->buf = malloc(CHUNK)))
		return -ENOMEM;
	while (e->off < end) {
		size_t want = end - e->off < CHUNK ? end - e->off : CHUNK;
		ssize_t n = pread(fd, j->buf, want, e->off);
		const char *s = j->buf, *last;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			break;	/* cut short since the fstat */
		j->st.bytes += n;
		last = memrchr(s, '\n', n);
		if (!last) {
			if ((size_t)n < CHUNK)
				break;	/* a last line still being written */
			if (!e->skipping) {
				e->skipping = true;
				st.malformed++;
				st.lines++;
			}
			e->off += n;
			j->total_read += n;
			continue;
		}
		if (e->skipping) {	/* the long line's end */
			s = (const char *)memchr(s, '\n', n) + 1;
			e->skipping = false;
		}
		before = st.lines;
		err = jitmap__parse(p, e->pid, time_ns, s, last + 1 - s, &st);
		j->st.lines += st.lines - before;
		if (err)
			break;
		e->off += last + 1 - j->buf;
		j->total_read += last + 1 - j->buf;
		if ((size_t)n == want && want == CHUNK)
			continue;
		break;	/* what follows the last newline up to end was seen: a line being written */
	}
	e->lines = st.lines;
	e->malformed += st.malformed;
	p->stats.jit_malformed += st.malformed;
	return err;
}

/* A process in another PID namespace (a container's) writes perf-NSPID.map, its own PID,
 * in its own /tmp: perf reads /proc/PID/root/tmp/perf-NSPID.map. It is opened from that root
 * with openat2's RESOLVE_IN_ROOT, so that a link in the container's tree (its /tmp made a
 * link to /etc) resolves inside it, never in ours; the last component is not followed, as
 * in /tmp. -1 with errno set, as open */
static int open_in_root(u32 pid, const char *dir, u32 nspid)
{
	struct open_how how = {
		.flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char root[64], rel[PATH_MAX + 32];
	int dfd, fd, err;

	snprintf(root, sizeof(root), "/proc/%u/root", pid);
	snprintf(rel, sizeof(rel), "%s/perf-%u.map", dir, nspid);
	dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	fd = syscall(SYS_openat2, dfd, rel, &how, sizeof(how));
	err = errno;
	close(dfd);
	errno = err;
	return fd;
}

int jitmaps__read(struct jitmaps *j, struct profile *p, u32 pid, u64 time_ns)
{
	char path[PATH_MAX + 32];
	struct stat sb;
	struct seen *e = follow(j, pid, false);
	char why[128];
	u64 end, room, bound;
	bool partial;
	int fd, err = 0;
	u32 nspid;

	if (!e)
		return -ENOMEM;
	/* a process gone before its user was known has no namespace left to look in */
	if (!e->gone && !e->nspid_read && e->uid >= 0) {
		e->nspid = procfs__nspid(pid);
		e->nspid_read = true;
	}
	nspid = e->gone ? 0 : e->nspid;
	if (nspid)
		snprintf(path, sizeof(path), "/proc/%u/root%s/perf-%u.map", pid, j->dir, nspid);
	else
		snprintf(path, sizeof(path), "%s/perf-%u.map", j->dir, pid);
	if (e->uid < 0) {	/* its owner cannot be checked: not opened */
		if (fstatat(AT_FDCWD, path, &sb, AT_SYMLINK_NOFOLLOW))
			return -ENOENT;
		return ignore(p, e, path, "its process had exited before its user could be known");
	}
	if (nspid)
		fd = open_in_root(pid, j->dir, nspid);
	else
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ELOOP)
		return ignore(p, e, path, "it is a symbolic link");
	if (fd < 0)
		return -errno;
	j->st.opened++;
	if (fstat(fd, &sb)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		err = ignore(p, e, path, "it is not a regular file");
		goto out;
	}
	if (sb.st_uid && sb.st_uid != e->uid) {
		snprintf(why, sizeof(why), "its owner (uid %u) is neither root nor its process's "
			 "user (uid %lld)", (unsigned)sb.st_uid, (long long)e->uid);
		err = ignore(p, e, path, why);
		goto out;
	}
	if (e->dev != sb.st_dev || e->ino != sb.st_ino || e->off > (u64)sb.st_size) {
		/* another file, or one cut: read whole, replacing what the other gave */
		profile__drop_jitsyms(p, pid);
		p->stats.jit_malformed -= e->malformed + e->partial;
		e->malformed = e->off = e->lines = 0;
		e->partial = e->skipping = false;
		e->dev = sb.st_dev;
		e->ino = sb.st_ino;
	}
	if (!e->counted) {
		e->counted = true;
		p->stats.jit_maps++;
	}
	end = (u64)sb.st_size < j->per_map ? (u64)sb.st_size : j->per_map;
	room = j->total > j->total_read ? j->total - j->total_read : 0;
	if (end > e->off && end - e->off > room)
		end = e->off + room;
	bound = end;	/* past it, capped; past the scan's share, left for later */
	room = j->scan_end > j->total_read ? j->scan_end - j->total_read : 0;
	if (end > e->off && end - e->off > room)
		end = e->off + room;
	if (end > e->off) {
		err = read_lines(j, p, e, fd, end, time_ns);
		profile__sort_jitsyms(p);
		p->stats.jit_syms = p->nr_jitsyms;
		if (err)
			goto out;
	}
	if (bound < (u64)sb.st_size && !e->capped) {
		e->capped = true;
		p->stats.jit_capped++;
		debug("'%s' is read up to %llu MB of its %llu MB (the bounds: %llu MB a map, %llu MB "
		      "in all)", path, (unsigned long long)bound >> 20,
		      (unsigned long long)sb.st_size >> 20, (unsigned long long)j->per_map >> 20,
		      (unsigned long long)j->total >> 20);
	}
	/* an unterminated last line may be one being written: malformed unless completed */
	partial = end == (u64)sb.st_size && e->off < end;
	p->stats.jit_malformed += (u64)partial - e->partial;
	e->partial = partial;
out:
	close(fd);
	return err;
}

int jitmaps__exit(struct jitmaps *j, struct profile *p, u32 pid, u64 time_ns)
{
	struct seen *e;
	int err = follow_new(j, p);

	if (err || !find(j, pid))
		return err;
	err = jitmaps__read(j, p, pid, time_ns);
	e = find(j, pid);
	e->exited = true;
	return err == -ENOMEM ? err : 0;
}

static int cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* the pids DIR has a perf-PID.map for, sorted (malloc'd; NULL and 0 when none or unreadable) */
static u32 *maps_in_dir(const char *dir, size_t *nr)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	u32 *pids = NULL;
	size_t cap = 0;

	*nr = 0;
	while (d && (de = readdir(d))) {
		const char *n = de->d_name;
		unsigned long pid;
		char *end;

		if (strncmp(n, "perf-", 5) || !isdigit((unsigned char)n[5]))
			continue;
		pid = strtoul(n + 5, &end, 10);
		if (strcmp(end, ".map") || pid > UINT32_MAX)
			continue;
		if (array__reserve((void **)&pids, &cap, *nr + 1, sizeof(*pids)))
			break;
		pids[(*nr)++] = pid;
	}
	if (d)
		closedir(d);
	if (*nr)
		qsort(pids, *nr, sizeof(*pids), cmp_u32);
	return pids;
}

int jitmaps__scan(struct jitmaps *j, struct profile *p, u64 time_ns)
{
	int err = follow_new(j, p);
	size_t nr_maps;
	/* one listing of DIR rather than an open per process (every process of the machine with
	 * -a, each second) of a map that most do not have */
	u32 *maps = maps_in_dir(j->dir, &nr_maps);

	j->scan_end = j->total_read + j->per_scan;
	for (size_t i = 0; i < j->nr_seen && !err; i++) {
		const struct seen *e = &j->seen[i];

		if (e->exited || e->uid < 0)
			continue;
		/* a process of our PID namespace never read, whose map is not in DIR: nothing to
		 * read (one in another has its map in its own root's DIR) */
		if (e->nspid_read && !e->nspid && !e->gone && !e->off && !e->lines &&
		    (!nr_maps || !bsearch(&e->pid, maps, nr_maps, sizeof(*maps), cmp_u32)))
			continue;
		if (jitmaps__read(j, p, e->pid, time_ns) == -ENOMEM)
			err = -ENOMEM;
	}
	j->scan_end = UINT64_MAX;
	free(maps);
	return err;
}
