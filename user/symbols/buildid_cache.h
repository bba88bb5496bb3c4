/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The build-id cache: copies of the objects a recording sampled (and debug files fetched
 * from debuginfod) kept by build-id, so a profile still symbolizes after its binaries are
 * deleted or upgraded; and the keeper that holds the objects open while recording. */
#ifndef HSBPF_BUILDID_CACHE_H
#define HSBPF_BUILDID_CACHE_H

#include "profile/profile.h"

/* what is kept under DIR/XX/YYYY... (XX: the build-id's first byte in hex, YYYY: the rest) */
#define BUILDID_CACHE_ELF "elf"		/* the object as it was mapped */
#define BUILDID_CACHE_DEBUG "debug"	/* its separate debug file */
#define BUILDID_CACHE_DEBUG_PLAIN "debug-plain"	/* that file with its sections decompressed */

/* $HSBPF_BUILDID_DIR, else $XDG_CACHE_HOME/hsbpf/buildid, else $HOME/.cache/hsbpf/buildid;
 * NULL if none can be told (no HOME) */
const char *buildid_cache__default_dir(void);
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
