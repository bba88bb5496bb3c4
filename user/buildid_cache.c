// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The build-id cache, perf's ~/.debug idea: DIR/XX/YYYY.../elf is the object whose build-id
 * is XXYYYY..., DIR/XX/YYYY.../debug its separate debug file. Entries are written to a
 * temporary name and renamed, so that a reader never sees half a file and two recorders
 * never keep two copies. The keeper holds each object a recording maps open from the
 * moment it is seen, so that one deleted while its process runs can still be copied. */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>
#include "build_id.h"
#include "buildid_cache.h"
#include "hsbpf.h"
#include "symbolizer.h"

/* objects held open at once, and at most a quarter of the file limit (the sampler needs
 * its own per CPU): beyond that, the path is read at the end */
#define KEEP_MAX_FDS 512

const char *buildid_cache__default_dir(void)
{
	static char dir[PATH_MAX];
	const char *env = getenv("HSBPF_BUILDID_DIR"), *base;

	if (env && *env)
		return env;
	base = getenv("XDG_CACHE_HOME");
	if (base && *base) {
		snprintf(dir, sizeof(dir), "%s/hsbpf/buildid", base);
		return dir;
	}
	base = getenv("HOME");
	if (!base || !*base)
		return NULL;
	snprintf(dir, sizeof(dir), "%s/.cache/hsbpf/buildid", base);
	return dir;
}

int buildid_cache__path(const char *dir, const u8 *id, size_t len, const char *kind,
			char *buf, size_t size)
{
	char hex[2 * BUILD_ID_MAX + 1];

	if (!dir || !len || len > BUILD_ID_MAX)
		return -EINVAL;
	build_id__hex(id, len, hex, sizeof(hex));
	if ((size_t)snprintf(buf, size, "%s/%.2s/%s/%s", dir, hex, hex + 2, kind) >= size)
		return -ENAMETOOLONG;
	return 0;
}

int buildid_cache__find(const char *dir, const u8 *id, size_t len, const char *kind,
			char *buf, size_t size)
{
	struct stat st;
	int err = buildid_cache__path(dir, id, len, kind, buf, size);

	if (err)
		return err;
	return !stat(buf, &st) && S_ISREG(st.st_mode) ? 0 : -ENOENT;
}

/* mkdir -p of path's folder */
static int make_parents(char *path)
{
	for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		if (mkdir(path, 0755) && errno != EEXIST) {
			int err = -errno;

			*s = '/';
			return err;
		}
		*s = '/';
	}
	return 0;
}

static int copy_fd(int in, int out, u64 *bytes)
{
	off_t off = 0;

	*bytes = 0;
	for (;;) {
		ssize_t n = sendfile(out, in, &off, 1 << 30);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		*bytes += n;
	}
}

int buildid_cache__add_fd(const char *dir, const u8 *id, size_t len, const char *kind, int fd,
			  u64 *added)
{
	return buildid_cache__add_fd_then(dir, id, len, kind, fd, NULL, added);
}

int buildid_cache__add_fd_then(const char *dir, const u8 *id, size_t len, const char *kind, int fd,
			       int (*fn)(int fd), u64 *added)
{
	char path[PATH_MAX], tmp[PATH_MAX + 32];
	u64 bytes = 0;
	int out, err;

	*added = 0;
	err = buildid_cache__find(dir, id, len, kind, path, sizeof(path));
	if (!err || err != -ENOENT)
		return err;
	err = make_parents(path);
	if (err)
		return err;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= sizeof(tmp))
		return -ENAMETOOLONG;
	out = open(tmp, (fn ? O_RDWR : O_WRONLY) | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0)
		return -errno;
	err = copy_fd(fd, out, &bytes);
	if (!err && fn)
		err = fn(out);
	if (close(out) && !err)
		err = -errno;
	/* another recorder may have put it there meanwhile: the rename replaces it with the
	 * same bytes, still one copy */
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		unlink(tmp);
		return err;
	}
	*added = bytes;
	return 0;
}

int buildid_cache__add_file(const char *dir, const u8 *id, size_t len, const char *kind,
			    const char *file, u64 *added)
{
	char path[PATH_MAX];
	struct stat st;
	int fd, err;

	*added = 0;
	err = buildid_cache__find(dir, id, len, kind, path, sizeof(path));
	if (!err || err != -ENOENT)
		return err;
	err = make_parents(path);
	if (err)
		return err;
	/* a hard link where it can be (the same file system): no second copy on disk */
	if (!link(file, path) && !stat(path, &st)) {
		*added = st.st_size;
		return 0;
	}
	if (errno == EEXIST)
		return 0;
	fd = file__open_regular(file);
	if (fd < 0)
		return fd;
	err = buildid_cache__add_fd(dir, id, len, kind, fd, added);
	close(fd);
	return err;
}

/* ---- the keeper ---- */

struct kept {
	u32 path;		/* string offset in the profile */
	u8 id[BUILD_ID_MAX];
	u8 id_size;
	int fd;			/* -1 when it could not be opened or no fd was left */
};

struct buildid_keeper {
	u32 *pids;		/* followed processes; all when filter is false */
	size_t nr_pids, cap_pids;
	bool filter;
	size_t seen_forks, seen_maps;
	struct kept *kept;
	size_t nr_kept, cap_kept;
	unsigned nr_fds, max_fds;
};

struct buildid_keeper *buildid_keeper__new(const u32 *pids, size_t nr)
{
	struct buildid_keeper *k = calloc(1, sizeof(*k));
	struct rlimit rl;

	if (!k)
		return NULL;
	k->max_fds = KEEP_MAX_FDS;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur / 4 < k->max_fds)
		k->max_fds = rl.rlim_cur / 4;
	k->filter = nr > 0;
	if (nr) {
		k->pids = malloc(nr * sizeof(*pids));
		if (!k->pids) {
			free(k);
			return NULL;
		}
		memcpy(k->pids, pids, nr * sizeof(*pids));
		k->nr_pids = k->cap_pids = nr;
	}
	return k;
}

void buildid_keeper__free(struct buildid_keeper *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->nr_kept; i++)
		if (k->kept[i].fd >= 0)
			close(k->kept[i].fd);
	free(k->kept);
	free(k->pids);
	free(k);
}

static bool followed(const struct buildid_keeper *k, u32 pid)
{
	if (!k->filter)
		return true;
	for (size_t i = 0; i < k->nr_pids; i++)
		if (k->pids[i] == pid)
			return true;
	return false;
}

static struct kept *find_kept(struct buildid_keeper *k, u32 path, const u8 *id, size_t id_size)
{
	for (size_t i = 0; i < k->nr_kept; i++) {
		struct kept *e = &k->kept[i];

		if (id_size ? e->id_size == id_size && !memcmp(e->id, id, id_size) : e->path == path)
			return e;
	}
	return NULL;
}

/* the path a mapping names, read as it is now: regular, and with the build-id the kernel
 * gave (if it gave one); else the mapping itself through /proc/PID/map_files */
static int open_object(const struct profile *p, const struct profile_mapping *m, u8 *id,
		       size_t *id_size)
{
	const char *path = profile__str(p, m->path);
	char mf[64];
	size_t len;
	int fd = file__open_regular(path);

	if (fd >= 0 && !build_id__read_fd(fd, id, BUILD_ID_MAX, &len) &&
	    (!m->build_id_size || (len == m->build_id_size && !memcmp(id, m->build_id, len)))) {
		*id_size = len;
		return fd;
	}
	if (fd >= 0)
		close(fd);
	snprintf(mf, sizeof(mf), "/proc/%u/map_files/%" PRIx64 "-%" PRIx64, m->pid, m->start,
		 m->start + m->len);
	fd = open(mf, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (build_id__read_fd(fd, id, BUILD_ID_MAX, &len) ||
	    (m->build_id_size && (len != m->build_id_size || memcmp(id, m->build_id, len)))) {
		close(fd);
		return -ESTALE;
	}
	*id_size = len;
	return fd;
}

static void keep_mapping(struct buildid_keeper *k, struct profile *p, struct profile_mapping *m)
{
	const char *path = profile__str(p, m->path);
	struct kept *e;
	u8 id[BUILD_ID_MAX];
	size_t id_size = 0;
	int fd;

	if (path[0] != '/' || !strncmp(path, "/memfd:", 7) || !followed(k, m->pid))
		return;
	e = find_kept(k, m->path, m->build_id, m->build_id_size);
	if (e) {
		/* the same file seen again: /proc's mappings bring no build-id */
		if (!m->build_id_size && e->id_size) {
			memcpy(m->build_id, e->id, e->id_size);
			m->build_id_size = e->id_size;
		}
		return;
	}
	if (k->nr_fds >= k->max_fds)
		return;	/* read by path at the end */
	fd = open_object(p, m, id, &id_size);
	if (fd < 0) {
		debug("cannot keep '%s' open: %s", path, file__strerror(fd));
		return;
	}
	if (array__reserve((void **)&k->kept, &k->cap_kept, k->nr_kept + 1, sizeof(*k->kept))) {
		close(fd);
		return;
	}
	e = &k->kept[k->nr_kept++];
	e->path = m->path;
	memcpy(e->id, id, id_size);
	e->id_size = id_size;
	e->fd = fd;
	k->nr_fds++;
	if (!m->build_id_size && id_size) {
		memcpy(m->build_id, id, id_size);
		m->build_id_size = id_size;
	}
}

void buildid_keeper__scan(struct buildid_keeper *k, struct profile *p)
{
	if (!k)
		return;
	/* children first: a child's mappings come after its fork */
	for (; k->filter && k->seen_forks < p->nr_forks; k->seen_forks++) {
		const struct profile_fork *f = &p->forks[k->seen_forks];

		if (followed(k, f->ppid) && !followed(k, f->pid) &&
		    !array__reserve((void **)&k->pids, &k->cap_pids, k->nr_pids + 1, sizeof(*k->pids)))
			k->pids[k->nr_pids++] = f->pid;
	}
	for (; k->seen_maps < p->nr_mappings; k->seen_maps++)
		keep_mapping(k, p, &p->mappings[k->seen_maps]);
}

/* ---- saving ---- */

/* the distinct sampled mappings' indexes, as a bitmap over p->mappings */
static void mark(struct symbolizer *sy, const struct profile *p, u8 *used, u32 pid, u64 exec_ns,
		 u64 map_ns, u64 ip)
{
	const struct profile_mapping *m = symbolizer__find_mapping(sy, pid, exec_ns, map_ns, ip);

	if (m)
		used[m - p->mappings] = 1;
}

static int save_one(struct buildid_keeper *k, const struct profile *p,
		    const struct profile_mapping *m, const char *dir, struct buildid_save_stats *st)
{
	const char *path = profile__str(p, m->path);
	struct kept *e = k ? find_kept(k, m->path, m->build_id, m->build_id_size) : NULL;
	char where[PATH_MAX];
	u8 id[BUILD_ID_MAX];
	size_t id_size;
	u64 added;
	int fd, err;

	if (!buildid_cache__find(dir, m->build_id, m->build_id_size, BUILDID_CACHE_ELF, where,
				 sizeof(where))) {
		st->present++;
		return 0;
	}
	if (e && e->fd >= 0) {
		fd = dup(e->fd);
		if (fd < 0)
			return -errno;
	} else {
		fd = file__open_regular(path);
		if (fd < 0)
			return fd;
		if (build_id__read_fd(fd, id, sizeof(id), &id_size) || id_size != m->build_id_size ||
		    memcmp(id, m->build_id, id_size)) {
			close(fd);
			return -ESTALE;
		}
	}
	err = buildid_cache__add_fd(dir, m->build_id, m->build_id_size, BUILDID_CACHE_ELF, fd, &added);
	close(fd);
	if (err)
		return err;
	if (added) {
		st->added++;
		st->bytes += added;
	} else {
		st->present++;
	}
	return 0;
}

int buildid_keeper__save(struct buildid_keeper *k, const struct profile *p, const char *dir,
			 struct buildid_save_stats *st)
{
	struct symbolizer *sy;
	u8 *used;

	memset(st, 0, sizeof(*st));
	if (!dir)
		return fail(-EINVAL, "no build-id cache folder: set HSBPF_BUILDID_DIR or HOME");
	used = calloc(p->nr_mappings + 1, 1);
	sy = symbolizer__new(p);
	if (!used || !sy) {
		free(used);
		symbolizer__free(sy);
		return fail(-ENOMEM, "cannot fill the build-id cache: %s", strerror(ENOMEM));
	}
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct profile_sample *s = &p->samples[i];

		if (!(s->flags & HSBPF_KEY_KERNEL))
			mark(sy, p, used, s->pid, s->exec_ns, s->map_ns, s->ip);
	}
	for (size_t i = 0; i < p->nr_stack_samples; i++) {
		const struct profile_stack_sample *ss = &p->stack_samples[i];
		const struct profile_stack *st;

		if (!ss->user || ss->user > p->nr_stacks)
			continue;
		st = &p->stacks[ss->user - 1];
		if (st->end == PROFILE_STACK_LOST || (u64)st->first + st->nr > p->nr_frames)
			continue;
		for (u32 j = 0; j < st->nr; j++)
			mark(sy, p, used, ss->pid, ss->exec_ns, ss->map_ns,
			     profile__frames(p, st)[j]);
	}
	symbolizer__free(sy);
	for (size_t i = 0; i < p->nr_mappings; i++) {
		const struct profile_mapping *m = &p->mappings[i];
		bool seen = false;
		int err;

		if (!used[i] || !m->build_id_size)
			continue;
		/* one mapping per object: its segments are several mappings */
		for (size_t j = 0; j < i && !seen; j++)
			seen = used[j] && p->mappings[j].build_id_size == m->build_id_size &&
			       !memcmp(p->mappings[j].build_id, m->build_id, m->build_id_size);
		if (seen)
			continue;
		st->objects++;
		err = save_one(k, p, m, dir, st);
		if (err) {
			st->failed++;
			debug("cannot keep '%s' in the build-id cache: %s", profile__str(p, m->path),
			      file__strerror(err));
		}
	}
	free(used);
	return 0;
}
