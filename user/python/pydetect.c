/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* CPython found in an ELF object: _PyRuntime, _PyEval_EvalFrameDefault, PyCode_Type and
 * Py_Version looked up in its symbol tables (the dynamic one has them: extension modules link
 * against them), the version read from Py_Version's bytes, else from the file's name. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "python/pydetect.h"

bool pydetect__candidate(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "python3", 7) || !strncmp(base, "libpython3", 10) ||
	       !strncmp(base, "python", 6);
}

/* "python3.11", "libpython3.11.so.1.0", "python3.11d": 3 and 11 */
static void version_from_name(const char *path, int *major, int *minor)
{
	const char *base = strrchr(path, '/'), *p;

	base = base ? base + 1 : path;
	p = strstr(base, "python");
	if (p && sscanf(p, "python%d.%d", major, minor) == 2)
		return;
	*major = *minor = 0;
}

/* the bytes of an ELF address from its section */
static int read_vaddr(Elf *elf, u64 vaddr, void *buf, size_t len)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || vaddr < sh.sh_addr ||
		    vaddr + len > sh.sh_addr + sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || vaddr - sh.sh_addr + len > d->d_size)
			return -EINVAL;
		memcpy(buf, (const char *)d->d_buf + (vaddr - sh.sh_addr), len);
		return 0;
	}
	return -ENOENT;
}

static void scan_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct pyelf *out, u64 *version)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; d && i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(d, i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name)
			continue;
		if (!strcmp(name, "_PyRuntime")) {
			out->runtime = sym.st_value;
		} else if (!strcmp(name, "_PyEval_EvalFrameDefault")) {
			out->eval = sym.st_value;
			out->eval_size = sym.st_size;
		} else if (!strcmp(name, "PyCode_Type")) {
			out->code_type = sym.st_value;
		} else if (!strcmp(name, "Py_Version") && sym.st_size == 4) {
			u32 v;

			if (!read_vaddr(elf, sym.st_value, &v, sizeof(v)))
				*version = v;
		} else if (!strcmp(name, "Py_Version") && sym.st_size == 8) {
			u64 v;

			if (!read_vaddr(elf, sym.st_value, &v, sizeof(v)))
				*version = v;
		}
	}
}

int pydetect__elf(const char *path, struct pyelf *out)
{
	Elf *elf = NULL;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	size_t nph = 0;
	u64 version = 0;
	int fd, err;

	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -EINVAL;
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB))
			scan_symbols(elf, scn, &sh, out, &version);
	if (!out->runtime) {
		err = -ENOENT;
		goto out;
	}
	if (version) {	/* PY_VERSION_HEX: 0x030B02F0 is 3.11.2 final */
		out->major = (version >> 24) & 0xff;
		out->minor = (version >> 16) & 0xff;
	} else {
		version_from_name(path, &out->major, &out->minor);
	}
	if (!elf_getphdrnum(elf, &nph)) {
		for (size_t i = 0; i < nph && out->nr_loads < PYDETECT_LOADS; i++) {
			if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
				continue;
			out->loads[out->nr_loads].offset = ph.p_offset;
			out->loads[out->nr_loads].vaddr = ph.p_vaddr;
			out->loads[out->nr_loads].filesz = ph.p_filesz;
			out->nr_loads++;
		}
	}
	err = 0;
out:
	elf_end(elf);
	close(fd);
	return err;
}

u64 pydetect__bias(const struct pyelf *e, u64 start, u64 pgoff, bool *ok)
{
	for (int i = 0; i < e->nr_loads; i++) {
		u64 off = e->loads[i].offset;

		if (pgoff >= (off & ~0xfffull) && pgoff < off + e->loads[i].filesz) {
			*ok = true;
			return start - pgoff + off - e->loads[i].vaddr;
		}
	}
	*ok = false;
	return 0;
}
