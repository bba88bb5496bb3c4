// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ELF images through libelf: program headers, the build-id note, .symtab or else .dynsym
 * function symbols, and the file mapped for decoding. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "symbols/elf_image.h"
#include "symbols/build_id.h"
#include "symbols/symname.h"

static int cmp_func(const void *a, const void *b)
{
	const struct elf_func *x = a, *y = b;

	int c;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* at one address the name perf shows first, as the symbolizer shows it */
	c = symname__cmp(x->name, x->size, x->bind, y->name, y->size, y->bind);
	return c ? c : strcmp(x->name, y->name);
}

static int load_symbols(struct elf_image *img, Elf *elf)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	size_t cap = 0, strs_len = 0, strs_cap = 0;
	GElf_Shdr sh;
	Elf_Data *data;
	Elf_Scn *use;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if ((sh.sh_flags & SHF_EXECINSTR) && (sh.sh_flags & SHF_ALLOC) && sh.sh_size) {
			size_t cap_x = img->nr_xsecs;

			if (array__reserve((void **)&img->xsecs, &cap_x, img->nr_xsecs + 1, sizeof(*img->xsecs)))
				return -ENOMEM;
			img->xsecs[img->nr_xsecs].start = sh.sh_addr;
			img->xsecs[img->nr_xsecs++].end = sh.sh_addr + sh.sh_size;
		}
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
	}
	use = symtab ? symtab : dynsym;
	if (!use || !gelf_getshdr(use, &sh) || !(data = elf_getdata(use, NULL)))
		return 0;
	for (size_t i = 0; i < sh.sh_size / (sh.sh_entsize ? sh.sh_entsize : 1); i++) {
		GElf_Sym sym;
		const char *name;
		size_t n;

		if (!gelf_getsym(data, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    !sym.st_value || sym.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name)
			continue;
		n = strlen(name) + 1;
		if (array__reserve((void **)&img->funcs, &cap, img->nr_funcs + 1, sizeof(*img->funcs)) ||
		    array__reserve((void **)&img->strs, &strs_cap, strs_len + n, 1))
			return -ENOMEM;
		memcpy(img->strs + strs_len, name, n);
		img->funcs[img->nr_funcs].addr = sym.st_value;
		img->funcs[img->nr_funcs].size = sym.st_size;
		img->funcs[img->nr_funcs].bind = GELF_ST_BIND(sym.st_info);
		img->funcs[img->nr_funcs].name = (const char *)(uintptr_t)strs_len;	/* fixed below */
		img->nr_funcs++;
		strs_len += n;
	}
	/* names are compared in the sort: point them into the table first */
	for (size_t i = 0; i < img->nr_funcs; i++)
		img->funcs[i].name = img->strs + (uintptr_t)img->funcs[i].name;
	if (img->nr_funcs > 1)
		qsort(img->funcs, img->nr_funcs, sizeof(*img->funcs), cmp_func);
	/* one symbol per address */
	size_t o = 0;
	for (size_t i = 0; i < img->nr_funcs; i++)
		if (!o || img->funcs[o - 1].addr != img->funcs[i].addr)
			img->funcs[o++] = img->funcs[i];
	img->nr_funcs = o;
	return 0;
}

struct elf_image *elf_image__open(const char *path)
{
	struct elf_image *img = calloc(1, sizeof(*img));
	GElf_Ehdr eh;
	struct stat st;
	size_t nph;
	Elf *elf = NULL;
	int err = 0;

	if (!img)
		return NULL;
	img->fd = -1;
	img->path = strdup(path);
	if (!img->path) {
		err = -ENOMEM;
		goto fail;
	}
	elf_version(EV_CURRENT);
	/* a path from a profile or a truth file: never a FIFO or a device */
	img->fd = file__open_regular(path);
	if (img->fd < 0) {
		err = img->fd;
		goto fail;
	}
	if (fstat(img->fd, &st)) {
		err = -errno;
		goto fail;
	}
	img->size = st.st_size;
	img->data = mmap(NULL, img->size ? img->size : 1, PROT_READ, MAP_PRIVATE, img->fd, 0);
	if (img->data == MAP_FAILED) {
		img->data = NULL;
		err = -errno;
		goto fail;
	}
	elf = elf_memory((char *)img->data, img->size);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &nph)) {
		err = -ENOEXEC;
		goto fail;
	}
	img->machine = eh.e_machine;
	img->type = eh.e_type;
	img->loads = calloc(nph ? nph : 1, sizeof(*img->loads));
	if (!img->loads) {
		err = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		img->loads[img->nr_loads++] = (struct elf_load){
			.vaddr = ph.p_vaddr, .memsz = ph.p_memsz, .offset = ph.p_offset,
			.filesz = ph.p_filesz, .exec = ph.p_flags & PF_X,
		};
	}
	err = load_symbols(img, elf);
	if (err)
		goto fail;
	elf_end(elf);
	elf = NULL;
	if (build_id__read_fd(img->fd, img->build_id, sizeof(img->build_id), &img->build_id_size))
		img->build_id_size = 0;
	return img;
fail:
	if (elf)
		elf_end(elf);
	elf_image__close(img);
	errno = -err;
	return NULL;
}

void elf_image__close(struct elf_image *img)
{
	if (!img)
		return;
	if (img->data)
		munmap(img->data, img->size ? img->size : 1);
	if (img->fd >= 0)
		close(img->fd);
	free(img->loads);
	free(img->xsecs);
	free(img->funcs);
	free(img->strs);
	free(img->path);
	free(img);
}

int elf_image__off_to_vaddr(const struct elf_image *img, u64 off, u64 *vaddr)
{
	for (size_t i = 0; i < img->nr_loads; i++) {
		const struct elf_load *l = &img->loads[i];

		if (off >= l->offset && off - l->offset < l->filesz) {
			*vaddr = off - l->offset + l->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

int elf_image__vaddr_to_off(const struct elf_image *img, u64 vaddr, u64 *off)
{
	for (size_t i = 0; i < img->nr_loads; i++) {
		const struct elf_load *l = &img->loads[i];

		if (vaddr >= l->vaddr && vaddr - l->vaddr < l->filesz) {
			*off = vaddr - l->vaddr + l->offset;
			return 0;
		}
	}
	return -ENOENT;
}

const u8 *elf_image__bytes(const struct elf_image *img, u64 vaddr, size_t *avail)
{
	for (size_t i = 0; i < img->nr_loads; i++) {
		const struct elf_load *l = &img->loads[i];
		u64 off;

		if (vaddr < l->vaddr || vaddr - l->vaddr >= l->filesz)
			continue;
		off = vaddr - l->vaddr + l->offset;
		if (off >= img->size)
			return NULL;
		*avail = l->filesz - (vaddr - l->vaddr);
		if (*avail > img->size - off)
			*avail = img->size - off;
		return img->data + off;
	}
	return NULL;
}

u64 elf_image__section_end(const struct elf_image *img, u64 vaddr)
{
	for (size_t i = 0; i < img->nr_xsecs; i++)
		if (vaddr >= img->xsecs[i].start && vaddr < img->xsecs[i].end)
			return img->xsecs[i].end;
	return 0;
}

const struct elf_func *elf_image__func_at(const struct elf_image *img, u64 vaddr)
{
	size_t lo = array__count_le(img->funcs, img->nr_funcs, sizeof(*img->funcs),
				    offsetof(struct elf_func, addr), vaddr);
	if (!lo)
		return NULL;
	/* sizeless symbols (hand-written asm) reach up to the next symbol */
	if (img->funcs[lo - 1].size && vaddr - img->funcs[lo - 1].addr >= img->funcs[lo - 1].size)
		return NULL;
	return &img->funcs[lo - 1];
}
