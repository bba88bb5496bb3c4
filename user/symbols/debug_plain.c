// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Decompressed copies of separate debug files, kept by build-id (see debug_plain.h). */
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbols/buildid_cache.h"
#include "symbols/debug_plain.h"

/* some section is compressed (SHF_COMPRESSED): what libdw would inflate */
static bool has_compressed(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	bool any = false;

	while (elf && !any && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		any = gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED);
	}
	if (elf)
		elf_end(elf);
	return any;
}

/* the copy's compressed sections stored plain, in place */
static int decompress(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_RDWR, NULL);
	Elf_Scn *scn = NULL;
	int err = 0;

	if (!elf)
		return -EINVAL;
	while (!err && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			err = -EINVAL;
	}
	if (!err && elf_update(elf, ELF_C_WRITE) < 0)
		err = -EIO;
	elf_end(elf);
	return err;
}

int debug_plain__open(const u8 *id, size_t len, char **path)
{
	const char *dir = buildid_cache__default_dir();
	char plain[PATH_MAX];
	char *dup;
	int fd;

	if (!dir || !len || buildid_cache__find(dir, id, len, BUILDID_CACHE_DEBUG_PLAIN, plain, sizeof(plain)))
		return -ENOENT;
	fd = open(plain, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	dup = strdup(plain);
	if (!dup) {
		close(fd);
		return -ENOMEM;
	}
	free(*path);
	*path = dup;
	return fd;
}

int debug_plain__make(int fd, const u8 *id, size_t len)
{
	const char *dir = buildid_cache__default_dir();
	u64 added = 0;
	int err;

	if (!dir || !len)
		return -ENOENT;
	elf_version(EV_CURRENT);
	if (!has_compressed(fd))
		return 0;
	if (lseek(fd, 0, SEEK_SET))
		return -errno;
	err = buildid_cache__add_fd_then(dir, id, len, BUILDID_CACHE_DEBUG_PLAIN, fd, decompress, &added);
	lseek(fd, 0, SEEK_SET);
	if (!err)
		debug("a plain copy of a compressed debug file in the build-id cache (%.1f MB)",
		      added / 1048576.0);
	return err;
}
