/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The build-id cache: copies of the objects a recording sampled (and debug files fetched
 * from debuginfod) kept by build-id, so a profile still symbolizes after its binaries are
 * deleted or upgraded; and the keeper that holds the objects open while recording. */
#ifndef HSBPF_BUILDID_CACHE_H
#define HSBPF_BUILDID_CACHE_H

#include "profile/profile.h"
#include <limits.h>

/* what is kept under DIR/XX/YYYY... (XX: the build-id's first byte in hex, YYYY: the rest) */
#define BUILDID_CACHE_ELF "elf"		/* the object as it was mapped */
#define BUILDID_CACHE_DEBUG "debug"	/* its separate debug file */
#define BUILDID_CACHE_DEBUG_PLAIN "debug-plain"	/* that file with its sections decompressed */

/* $HSBPF_BUILDID_DIR, else $XDG_CACHE_HOME/hsbpf/buildid, else $HOME/.cache/hsbpf/buildid;
 * NULL if none can be told (no HOME) */
const char *buildid_cache__default_dir(void);
/* that, unless $HSBPF_NO_BUILDID_CACHE is 1 (then NULL): for the commands that use the cache
 * without options of their own for it (top, the agent: their unwind tables) */
const char *buildid_cache__dir_in_use(void);
/* where kind (BUILDID_CACHE_ELF, _DEBUG) of a build-id is kept; -ENAMETOOLONG, -EINVAL */
int buildid_cache__path(const char *dir, const u8 *id, size_t len, const char *kind,
			char *buf, size_t size);
/* that path if a regular file is there: 0, or -ENOENT. A cache not ours (its root owned by
 * another user, writable by group or others, or another user's link; a folder inside that is
 * a link or not ours) is not used: -EPERM (-ELOOP, -ENOTDIR), the root's reason said once */
int buildid_cache__find(const char *dir, const u8 *id, size_t len, const char *kind,
			char *buf, size_t size);
/* copy the file open at fd into the cache unless it holds one already (an entry appears
 * whole or not at all; folders made 0700, the copy at most the source's mode and 0644);
 * *added is the bytes written, 0 if it was there */
int buildid_cache__add_fd(const char *dir, const u8 *id, size_t len, const char *kind, int fd,
			  u64 *added);

/* the same, with the copy (open read-write) given to fn before it takes its place: an error
 * of fn leaves nothing */
int buildid_cache__add_fd_then(const char *dir, const u8 *id, size_t len, const char *kind, int fd,
			       int (*fn)(int fd), u64 *added);

/* ---- what the cache holds, and keeping it within a size ---- */

#define BUILDID_CACHE_NAME "name"	/* in an entry: the path its object was recorded at */
#define BUILDID_CACHE_MAX_SIZE_FILE "max-size"	/* in the root: the size limit, in bytes */
#define BUILDID_CACHE_DEFAULT_MAX (1ull << 30)

struct buildid_cache_entry {
	char id[2 * BUILD_ID_MAX + 1];	/* the build-id in hex */
	u64 size;			/* the bytes of its files */
	u64 last_use_ns;		/* when it was last added to or read (its folder's mtime) */
	char path[PATH_MAX];		/* its object's path when recorded; "" if not known */
};

/* every entry of the cache at dir, least recently used first: 0 with *entries (malloc'd) and
 * *nr set (an empty or missing cache: 0 entries), or -errno (-EPERM: not ours, said once) */
int buildid_cache__list(const char *dir, struct buildid_cache_entry **entries, size_t *nr);
/* remove the entry of the build-id in hex, all its files: 0, -ENOENT, -EINVAL, -errno */
int buildid_cache__remove(const char *dir, const char *hex);
/* remove the least recently used entries until the cache holds at most max bytes, none used
 * at or after keep_since_ns (CLOCK_REALTIME): what a recording just kept stays. *removed and
 * *freed say what went; 0 or -errno */
int buildid_cache__trim(const char *dir, u64 max, u64 keep_since_ns, unsigned *removed,
			u64 *freed);
/* the size limit: $HSBPF_BUILDID_MAX_SIZE, else what DIR/max-size holds, else 1 GiB */
u64 buildid_cache__max_size(const char *dir);
/* keep max as the cache's limit (DIR/max-size); 0 or -errno */
int buildid_cache__set_max_size(const char *dir, u64 max);
/* "500M", "2G", "1048576": bytes, with an optional K, M, G or T (powers of 1024); 0 or -EINVAL */
int buildid_cache__parse_size(const char *s, u64 *out);

struct buildid_keeper;

/* pids: the processes (and their later children) whose objects matter; nr 0: all */
struct buildid_keeper *buildid_keeper__new(const u32 *pids, size_t nr);
void buildid_keeper__free(struct buildid_keeper *k);
/* look at the forks and mappings the profile gained since the last call: open each new
 * object (through /proc/PID/map_files when its path is gone or holds another file), so
 * that it can be copied at the end even if deleted, and fill in missing build-ids */
void buildid_keeper__scan(struct buildid_keeper *k, struct profile *p);

struct buildid_save_stats {
	unsigned objects;	/* sampled objects with a build-id */
	unsigned added;		/* copied now */
	unsigned present;	/* in the cache already */
	unsigned failed;	/* could not be read (say which with -v) */
	u64 bytes;		/* added */
};

/* copy every sampled object (of samples and stack frames) into the cache at dir */
int buildid_keeper__save(struct buildid_keeper *k, const struct profile *p, const char *dir,
			 struct buildid_save_stats *st);

#endif /* HSBPF_BUILDID_CACHE_H */
