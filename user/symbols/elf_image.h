/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* An ELF object opened for reading code: its loadable segments (file offset <-> virtual
 * address), its bytes, its build-id, and its function symbols. */
#ifndef HSBPF_ELF_IMAGE_H
#define HSBPF_ELF_IMAGE_H

#include "lib/util.h"

struct elf_func {
	u64 addr;
	u64 size;
	const char *name;
	int bind;	/* STB_* */
};

struct elf_image {
	char *path;
	int fd;
	u8 *data;		/* the whole file, mapped */
	size_t size;
	u16 machine;
	u16 type;		/* ET_EXEC, ET_DYN */
	u8 build_id[20];
	size_t build_id_size;
	struct elf_load {
		u64 vaddr, memsz, offset, filesz;
		bool exec;
	} *loads;
	size_t nr_loads;
	struct elf_section {
		u64 start, end;
	} *xsecs;		/* executable sections: bounds for sizeless symbols */
	size_t nr_xsecs;
	struct elf_func *funcs;	/* sorted by address, deduplicated */
	size_t nr_funcs;
	char *strs;		/* names of funcs */
};

/* NULL with errno set and nothing reported (callers say what the file was for) */
struct elf_image *elf_image__open(const char *path);
void elf_image__close(struct elf_image *img);

int elf_image__off_to_vaddr(const struct elf_image *img, u64 off, u64 *vaddr);
int elf_image__vaddr_to_off(const struct elf_image *img, u64 vaddr, u64 *off);
/* the code bytes at vaddr and how many follow in the same segment; NULL if none */
const u8 *elf_image__bytes(const struct elf_image *img, u64 vaddr, size_t *avail);
/* the end of the executable section holding vaddr, or 0 */
u64 elf_image__section_end(const struct elf_image *img, u64 vaddr);
/* the function that holds vaddr, or NULL */
const struct elf_func *elf_image__func_at(const struct elf_image *img, u64 vaddr);

#endif /* HSBPF_ELF_IMAGE_H */
