// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Reading the build-id note with libelf. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "symbols/build_id.h"

int build_id__read(const char *path, u8 *buf, size_t size, size_t *len)
{
	/* a path from a recording: never a FIFO or a device */
	int fd = file__open_regular(path), err;

	if (fd < 0)
		return fd;
	err = build_id__read_fd(fd, buf, size, len);
	close(fd);
	return err;
}

int build_id__read_fd(int fd, u8 *buf, size_t size, size_t *len)
{
	Elf_Scn *scn = NULL;
	int err = -ENODATA;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return -EINVAL;
	if (elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		return -EINVAL;
	}
	while (err == -ENODATA && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		while (data && (off = gelf_getnote(data, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)data->d_buf + noff, "GNU", 4))
				continue;
			*len = nh.n_descsz < size ? nh.n_descsz : size;
			memcpy(buf, (char *)data->d_buf + doff, *len);
			err = 0;
			break;
		}
	}
	elf_end(elf);
	return err;
}

int build_id__from_notes(const u8 *notes, size_t size, u8 *buf, size_t bufsize, size_t *len)
{
	size_t off = 0;

	/* Elf_Nhdr: namesz, descsz, type; the name and the desc padded to 4 bytes */
	while (size - off >= 12) {
		u32 nh[3];
		size_t name_end, desc_end;

		memcpy(nh, notes + off, sizeof(nh));
		name_end = off + 12 + (((size_t)nh[0] + 3) & ~(size_t)3);
		desc_end = name_end + (((size_t)nh[1] + 3) & ~(size_t)3);
		if (nh[0] > size || nh[1] > size || name_end > size || desc_end > size)
			return -EINVAL;
		if (nh[2] == NT_GNU_BUILD_ID && nh[0] == 4 && !memcmp(notes + off + 12, "GNU", 4)) {
			*len = nh[1] < bufsize ? nh[1] : bufsize;
			memcpy(buf, notes + name_end, *len);
			return 0;
		}
		off = desc_end;
	}
	return -ENODATA;
}

int build_id__kernel(const char *notes_path, u8 *buf, size_t size, size_t *len)
{
	u8 notes[4096];
	ssize_t n;
	int fd = open(notes_path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	n = read(fd, notes, sizeof(notes));
	err = n < 0 ? -errno : build_id__from_notes(notes, n, buf, size, len);
	close(fd);
	return err;
}

void build_id__hex(const u8 *id, size_t len, char *out, size_t size)
{
	size_t i;

	if (!size)
		return;
	out[0] = 0;
	for (i = 0; i < len && 2 * i + 2 < size; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
}
