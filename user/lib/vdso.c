// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Our vDSO: found through the auxiliary vector, sized by its headers. */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>
#include "lib/vdso.h"

int vdso__image(const u8 **image, size_t *size)
{
	const u8 *img = (const u8 *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	size_t end = 0;

	if (!img || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOENT;
	/* the end of its loaded segments, or of its section headers if further */
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(img + eh->e_phoff) + i;

		if (ph->p_type == PT_LOAD && ph->p_offset + ph->p_filesz > end)
			end = ph->p_offset + ph->p_filesz;
	}
	if (eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize > end)
		end = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (!end || end > (1u << 20))
		return -ENOEXEC;
	*image = img;
	*size = end;
	return 0;
}

int vdso__path(char *buf, size_t size)
{
	static int fd = -1;
	const u8 *img;
	size_t len;
	int err;

	if (fd < 0) {
		err = vdso__image(&img, &len);
		if (err)
			return err;
		fd = memfd_create("hsbpf-vdso", MFD_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (write(fd, img, len) != (ssize_t)len) {
			err = -EIO;
			close(fd);
			fd = -1;
			return err;
		}
	}
	snprintf(buf, size, "/proc/self/fd/%d", fd);
	return 0;
}
