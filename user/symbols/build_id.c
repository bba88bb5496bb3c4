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

void build_id__hex(const u8 *id, size_t len, char *out, size_t size)
{
	size_t i;

	if (!size)
		return;
	out[0] = 0;
	for (i = 0; i < len && 2 * i + 2 < size; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
}
