// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The build-id cache, perf's ~/.debug idea: DIR/XX/YYYY.../elf is the object whose build-id
 * is XXYYYY..., DIR/XX/YYYY.../debug its separate debug file. Entries are written to an
 * unnamed file (O_TMPFILE, else a random name made with O_EXCL) and linked or renamed into
 * place, so that a reader never sees half a file and two recorders never keep two copies.
 * The cache is trusted only if it is ours: its root must be owned by us and writable by no
 * one else (as ssh asks of its files), and every folder inside it is opened relative to its
 * parent without following links and refused unless it is a folder we own; what we create
 * is 0700, and a copy keeps at most its source's permissions. A cache another user can write
 * to would let that user plant links that make root overwrite its own files. The keeper holds
 * each object a recording maps open from the moment it is seen, so that one deleted while its
 * process runs can still be copied. */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>
#include "symbols/build_id.h"
#include "symbols/buildid_cache.h"
#include "hsbpf.h"
#include "profile/profile.h"

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

const char *buildid_cache__dir_in_use(void)
{
	const char *off = getenv("HSBPF_NO_BUILDID_CACHE");

	return off && !strcmp(off, "1") ? NULL : buildid_cache__default_dir();
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

/* ---- the folders, trusted only if ours ---- */

/* why the folder st describes is not to be trusted: NULL if it is ours, a folder, and
 * writable by no one else */
static const char *distrust(const struct stat *st, char *buf, size_t size)
{
	if (!S_ISDIR(st->st_mode))
		return "is not a folder";
	if (st->st_uid != geteuid()) {
		snprintf(buf, size, "is owned by uid %u, not by you", (unsigned)st->st_uid);
		return buf;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return "is writable by group or others";
	return NULL;
}

/* say once per folder why a cache root is not used */
static void refuse_root(const char *dir, const char *why)
{
	static char said[PATH_MAX];

	if (!strcmp(said, dir))
		return;
	snprintf(said, sizeof(said), "%s", dir);
	warning("build-id cache '%s' %s: not used", dir, why);
}

/* mkdir -p of dir, what is created 0700 */
static int make_dirs(const char *dir)
{
	char path[PATH_MAX];
	size_t n = strlen(dir);
	char c;

	if (n >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, n + 1);
	for (char *s = path + 1;; s++) {
		if (*s && *s != '/')
			continue;
		c = *s;
		*s = 0;
		if (mkdir(path, 0700) && errno != EEXIST)
			return -errno;
		if (!c)
			return 0;
		*s = c;
	}
}

/* the cache root, open (made 0700 with its parents if create), or -errno: -EPERM (said once)
 * if it is not ours or others can write to it, or if it is a link someone else made */
static int root_open(const char *dir, bool create)
{
	char buf[64];
	const char *why;
	struct stat st;
	int fd, err;

	if (!dir || !*dir)
		return -EINVAL;
	if (create) {
		err = make_dirs(dir);
		if (err)
			return err;
	}
	/* the root may be a link (to another disk) if we made it: a link in /tmp another
	 * user made would lead us to a folder of their choosing */
	if (lstat(dir, &st))
		return -errno;
	if (S_ISLNK(st.st_mode) && st.st_uid != geteuid()) {
		snprintf(buf, sizeof(buf), "is a link owned by uid %u, not by you", (unsigned)st.st_uid);
		refuse_root(dir, buf);
		return -EPERM;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	why = distrust(&st, buf, sizeof(buf));
	if (why) {
		refuse_root(dir, why);
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* the folder name in the folder at at, without following a link, made 0700 if create and
 * missing; refused (-EPERM, -ELOOP, -ENOTDIR) unless it is a folder we own that no one else
 * can write to */
static int sub_open(int at, const char *name, bool create)
{
	char buf[64];
	struct stat st;
	int fd, err;

	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && create) {
		if (mkdirat(at, name, 0700) && errno != EEXIST)
			return -errno;
		fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (distrust(&st, buf, sizeof(buf))) {
		debug("build-id cache: '%s' %s: not used", name, distrust(&st, buf, sizeof(buf)));
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* the folder of a build-id's entries (XX/YYYY...) in the cache open at root */
static int entry_open(int root, const u8 *id, size_t len, bool create)
{
	char hex[2 * BUILD_ID_MAX + 1], first[3];
	int xx, fd;

	if (!len || len > BUILD_ID_MAX)
		return -EINVAL;
	build_id__hex(id, len, hex, sizeof(hex));
	snprintf(first, sizeof(first), "%.2s", hex);
	xx = sub_open(root, first, create);
	if (xx < 0)
		return xx;
	fd = sub_open(xx, hex + 2, create);
	close(xx);
	return fd;
}

/* 0 if a regular file kind is in the entry folder at, else -ENOENT */
static int entry_has(int at, const char *kind)
{
	struct stat st;

	return !fstatat(at, kind, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode) ? 0 : -ENOENT;
}

/* the entry folder at was used: its mtime is the entry's last use, which eviction goes by */
static void entry_touch(int at)
{
	if (futimens(at, NULL))
		debug("build-id cache: cannot mark an entry used: %s", strerror(errno));
}

/* the object's path beside its copy, for buildid-cache --list and --purge (kept if there) */
static void entry_name(int at, const char *path)
{
	int fd = openat(at, BUILDID_CACHE_NAME, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0600);

	if (fd < 0)
		return;
	if (write(fd, path, strlen(path)) < 0)
		debug("build-id cache: cannot note the path '%s': %s", path, strerror(errno));
	close(fd);
}

int buildid_cache__find(const char *dir, const u8 *id, size_t len, const char *kind,
			char *buf, size_t size)
{
	int err = buildid_cache__path(dir, id, len, kind, buf, size), root, at;

	if (err)
		return err;
	root = root_open(dir, false);
	if (root < 0)
		return root == -EPERM ? root : -ENOENT;
	at = entry_open(root, id, len, false);
	close(root);
	if (at < 0)
		return at == -EPERM || at == -ELOOP || at == -ENOTDIR ? at : -ENOENT;
	err = entry_has(at, kind);
	if (!err)
		entry_touch(at);
	close(at);
	return err;
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

/* a new file in the folder at, open read-write with mode: unnamed (O_TMPFILE, *tmp empty),
 * else under a random name written to tmp that no one else can have made */
static int tmp_open(int at, const char *kind, mode_t mode, char *tmp, size_t size)
{
	u64 rnd;
	int fd;

	tmp[0] = 0;
	fd = openat(at, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, mode);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL))
		return fd < 0 ? -errno : fd;
	/* a file system without O_TMPFILE */
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		return -EIO;
	snprintf(tmp, size, "%s.tmp.%016" PRIx64, kind, rnd);
	fd = openat(at, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	return fd < 0 ? -errno : fd;
}

/* the unnamed file fd, as kind in the folder at: -EEXIST if one is there already */
static int tmp_link(int fd, int at, const char *kind)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (!linkat(AT_FDCWD, proc, at, kind, AT_SYMLINK_FOLLOW))
		return 0;
	if (errno != ENOENT)
		return -errno;
	/* no /proc: the same by the fd (it takes CAP_DAC_READ_SEARCH) */
	return linkat(fd, "", at, kind, AT_EMPTY_PATH) ? -errno : 0;
}

/* copy fd as kind into the entry folder at, with fn given the copy first */
static int add_at(int at, const char *kind, int fd, int (*fn)(int fd), u64 *added)
{
	char tmp[NAME_MAX + 1];
	struct stat st;
	/* at most the source's permissions, never executable (a 0700 program: 0600) */
	mode_t mode = fstat(fd, &st) ? 0600 : st.st_mode & 0644;
	u64 bytes = 0;
	int out, err;

	out = tmp_open(at, kind, mode, tmp, sizeof(tmp));
	if (out < 0)
		return out;
	err = copy_fd(fd, out, &bytes);
	if (!err && fn)
		err = fn(out);
	if (!err && !tmp[0]) {
		err = tmp_link(out, at, kind);
		/* another recorder put it there meanwhile: still one copy */
		if (err == -EEXIST) {
			err = 0;
			bytes = 0;
		}
	}
	if (close(out) && !err)
		err = -errno;
	if (tmp[0]) {
		/* another recorder's copy is replaced by the same bytes, still one copy */
		if (!err && renameat(at, tmp, at, kind))
			err = -errno;
		if (err)
			unlinkat(at, tmp, 0);
	}
	if (!err)
		*added = bytes;
	return err;
}

int buildid_cache__add_fd(const char *dir, const u8 *id, size_t len, const char *kind, int fd,
			  u64 *added)
{
	return buildid_cache__add_fd_then(dir, id, len, kind, fd, NULL, added);
}

int buildid_cache__add_fd_then(const char *dir, const u8 *id, size_t len, const char *kind, int fd,
			       int (*fn)(int fd), u64 *added)
{
	int root, at, err;

	*added = 0;
	if (!len || len > BUILD_ID_MAX)
		return -EINVAL;
	root = root_open(dir, true);
	if (root < 0)
		return root;
	at = entry_open(root, id, len, true);
	close(root);
	if (at < 0)
		return at;
	err = entry_has(at, kind) ? add_at(at, kind, fd, fn, added) : 0;
	close(at);
	return err;
}

/* ---- listing, removing, and keeping within a size ---- */

static bool is_hex(const char *s, size_t min, size_t max)
{
	size_t n = strspn(s, "0123456789abcdef");

	return !s[n] && n >= min && n <= max;
}

/* the names in the open folder at, read through a descriptor of its own (at stays open);
 * NULL and errno */
static DIR *dir_read(int at)
{
	int fd = dup(at), err;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d && fd >= 0) {
		err = errno;
		close(fd);
		errno = err;
	}
	return d;
}

/* the entry folder the open folder at is: its size, last use and recorded path */
static void entry_read(int at, struct buildid_cache_entry *e)
{
	DIR *d = dir_read(at);
	struct stat st;
	ssize_t n;
	int fd;

	for (struct dirent *de; d && (de = readdir(d));)
		if (!fstatat(at, de->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode))
			e->size += st.st_size;
	if (d)
		closedir(d);
	if (!fstat(at, &st))
		e->last_use_ns = (u64)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	e->path[0] = 0;
	fd = openat(at, BUILDID_CACHE_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, e->path, sizeof(e->path) - 1);
	e->path[n > 0 ? n : 0] = 0;
	e->path[strcspn(e->path, "\n")] = 0;
	close(fd);
}

/* the names in the folder at that are hex of min..max digits, each given to fn */
static int each_hex(int at, size_t min, size_t max, int (*fn)(int at, const char *name, void *ctx),
		    void *ctx)
{
	DIR *d = dir_read(at);
	int err = 0;

	if (!d)
		return -errno;
	for (struct dirent *de; !err && (de = readdir(d));)
		if (is_hex(de->d_name, min, max))
			err = fn(at, de->d_name, ctx);
	closedir(d);
	return err;
}

struct listing {
	const char *xx;
	struct buildid_cache_entry *entries;
	size_t nr, cap;
};

static int list_entry(int xx, const char *rest, void *ctx)
{
	struct listing *l = ctx;
	struct buildid_cache_entry *e;
	int at = sub_open(xx, rest, false);

	if (at < 0)
		return 0;	/* not ours, or gone meanwhile: not listed */
	if (array__reserve((void **)&l->entries, &l->cap, l->nr + 1, sizeof(*l->entries))) {
		close(at);
		return -ENOMEM;
	}
	e = &l->entries[l->nr++];
	memset(e, 0, sizeof(*e));
	snprintf(e->id, sizeof(e->id), "%s%s", l->xx, rest);
	entry_read(at, e);
	close(at);
	return 0;
}

static int list_first(int root, const char *name, void *ctx)
{
	struct listing *l = ctx;
	int xx = sub_open(root, name, false), err;

	if (xx < 0)
		return 0;
	l->xx = name;
	err = each_hex(xx, 2, 2 * BUILD_ID_MAX - 2, list_entry, l);
	close(xx);
	return err;
}

static int by_last_use(const void *a, const void *b)
{
	const struct buildid_cache_entry *x = a, *y = b;

	if (x->last_use_ns != y->last_use_ns)
		return x->last_use_ns < y->last_use_ns ? -1 : 1;
	return strcmp(x->id, y->id);
}

int buildid_cache__list(const char *dir, struct buildid_cache_entry **entries, size_t *nr)
{
	struct listing l = {};
	int root = root_open(dir, false), err;

	*entries = NULL;
	*nr = 0;
	if (root == -ENOENT)
		return 0;
	if (root < 0)
		return root;
	err = each_hex(root, 2, 2, list_first, &l);
	close(root);
	if (err) {
		free(l.entries);
		return err;
	}
	if (l.nr)
		qsort(l.entries, l.nr, sizeof(*l.entries), by_last_use);
	*entries = l.entries;
	*nr = l.nr;
	return 0;
}

/* unlink every file of the entry folder at (it holds no folders: none is made there) */
static int entry_empty(int at)
{
	DIR *d = dir_read(at);
	int err = 0;

	if (!d)
		return -errno;
	for (struct dirent *de; (de = readdir(d));)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    unlinkat(at, de->d_name, 0) && errno != ENOENT && !err)
			err = -errno;
	closedir(d);
	return err;
}

int buildid_cache__remove(const char *dir, const char *hex)
{
	char first[3];
	int root, xx, at, err;

	if (!is_hex(hex, 4, 2 * BUILD_ID_MAX))
		return -EINVAL;
	root = root_open(dir, false);
	if (root < 0)
		return root;
	snprintf(first, sizeof(first), "%.2s", hex);
	xx = sub_open(root, first, false);
	if (xx < 0) {
		close(root);
		return xx;
	}
	at = sub_open(xx, hex + 2, false);
	err = at < 0 ? at : entry_empty(at);
	if (at >= 0)
		close(at);
	if (!err && unlinkat(xx, hex + 2, AT_REMOVEDIR) && errno != ENOENT)
		err = -errno;
	close(xx);
	/* the first byte's folder goes with its last entry */
	if (!err)
		unlinkat(root, first, AT_REMOVEDIR);
	close(root);
	return err;
}

int buildid_cache__trim(const char *dir, u64 max, u64 keep_since_ns, unsigned *removed,
			u64 *freed)
{
	struct buildid_cache_entry *e;
	size_t nr;
	u64 total = 0;
	int err = buildid_cache__list(dir, &e, &nr);

	*removed = 0;
	*freed = 0;
	if (err)
		return err;
	for (size_t i = 0; i < nr; i++)
		total += e[i].size;
	for (size_t i = 0; i < nr && total > max; i++) {
		if (e[i].last_use_ns >= keep_since_ns)
			continue;
		err = buildid_cache__remove(dir, e[i].id);
		if (err == -ENOENT)	/* another hsbpf removed it */
			err = 0;
		if (err)
			break;
		total -= e[i].size;
		*freed += e[i].size;
		(*removed)++;
	}
	free(e);
	return err;
}

int buildid_cache__parse_size(const char *s, u64 *out)
{
	static const char units[] = "KMGT";
	char *end;
	const char *u;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (*end) {
		u = strchr(units, *end);
		if (!u || (end[1] && strcmp(end + 1, "B") && strcmp(end + 1, "iB")))
			return -EINVAL;
		for (int i = 0; i <= u - units; i++) {
			if (v > UINT64_MAX / 1024)
				return -EINVAL;
			v *= 1024;
		}
	}
	*out = v;
	return 0;
}

u64 buildid_cache__max_size(const char *dir)
{
	const char *env = getenv("HSBPF_BUILDID_MAX_SIZE");
	char buf[32];
	u64 v;
	ssize_t n;
	int root, fd;

	if (env && *env) {
		if (!buildid_cache__parse_size(env, &v))
			return v;
		warning("HSBPF_BUILDID_MAX_SIZE='%s' is no size: the cache's own limit holds", env);
	}
	root = root_open(dir, false);
	if (root < 0)
		return BUILDID_CACHE_DEFAULT_MAX;
	fd = openat(root, BUILDID_CACHE_MAX_SIZE_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close(root);
	if (fd < 0)
		return BUILDID_CACHE_DEFAULT_MAX;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return buildid_cache__parse_size(buf, &v) ? BUILDID_CACHE_DEFAULT_MAX : v;
}

int buildid_cache__set_max_size(const char *dir, u64 max)
{
	char buf[32];
	int root = root_open(dir, true), fd, n, err = 0;

	if (root < 0)
		return root;
	fd = openat(root, BUILDID_CACHE_MAX_SIZE_FILE,
		    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	close(root);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", max);
	if (write(fd, buf, n) != n)
		err = errno ? -errno : -EIO;
	if (close(fd) && !err)
		err = -errno;
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
static void mark(const struct profile *p, u8 *used, u32 pid, u64 exec_ns, u64 map_ns, u64 ip)
{
	const struct profile_mapping *m = profile__find_mapping(p, pid, exec_ns, map_ns, ip);

	if (m)
		used[m - p->mappings] = 1;
}

/* one object into the cache open at root */
static int save_one(struct buildid_keeper *k, const struct profile *p,
		    const struct profile_mapping *m, int root, struct buildid_save_stats *st)
{
	const char *path = profile__str(p, m->path);
	struct kept *e = k ? find_kept(k, m->path, m->build_id, m->build_id_size) : NULL;
	u8 id[BUILD_ID_MAX];
	size_t id_size;
	u64 added = 0;
	int at, fd = -1, err;

	at = entry_open(root, m->build_id, m->build_id_size, true);
	if (at < 0)
		return at;
	if (!entry_has(at, BUILDID_CACHE_ELF)) {
		st->present++;
		entry_name(at, path);
		entry_touch(at);
		close(at);
		return 0;
	}
	if (e && e->fd >= 0) {
		fd = dup(e->fd);
		err = fd < 0 ? -errno : 0;
	} else {
		fd = file__open_regular(path);
		err = fd < 0 ? fd : 0;
		if (!err && (build_id__read_fd(fd, id, sizeof(id), &id_size) ||
			     id_size != m->build_id_size || memcmp(id, m->build_id, id_size)))
			err = -ESTALE;
	}
	if (!err)
		err = add_at(at, BUILDID_CACHE_ELF, fd, NULL, &added);
	if (!err)
		entry_name(at, path);
	if (fd >= 0)
		close(fd);
	close(at);
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
	u8 *used;
	int root;

	memset(st, 0, sizeof(*st));
	if (!dir)
		return fail(-EINVAL, "no build-id cache folder: set HSBPF_BUILDID_DIR or HOME");
	root = root_open(dir, true);
	if (root == -EPERM)
		return root;	/* said why */
	if (root < 0) {
		warning("cannot open the build-id cache '%s': %s: nothing kept", dir, strerror(-root));
		return root;
	}
	used = calloc(p->nr_mappings + 1, 1);
	if (!used) {
		close(root);
		return fail(-ENOMEM, "cannot fill the build-id cache: %s", strerror(ENOMEM));
	}
	for (size_t i = 0; i < p->nr_samples; i++) {
		const struct profile_sample *s = &p->samples[i];

		if (!(s->flags & HSBPF_KEY_KERNEL))
			mark(p, used, s->pid, s->exec_ns, s->map_ns, s->ip);
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
			mark(p, used, ss->pid, ss->exec_ns, ss->map_ns, profile__frames(p, st)[j]);
	}
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
		err = save_one(k, p, m, root, st);
		if (err) {
			st->failed++;
			debug("cannot keep '%s' in the build-id cache: %s", profile__str(p, m->path),
			      file__strerror(err));
		}
	}
	free(used);
	close(root);
	return 0;
}
