// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Plain copies of compressed debug files: a fixture's debug file compressed by objcopy comes
 * back with every section stored plain, byte for byte what objcopy decompresses; a file with
 * nothing compressed gets no copy; and a report reads the copy to the same output. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbols/build_id.h"
#include "symbols/debug_plain.h"
#include "helpers.h"

TestSuite(debug_plain, .fini = cleanup_tmpdir, .timeout = 60);

/* the bytes of the section named name, malloc'd; NULL if none or compressed */
static u8 *section(const char *path, const char *name, size_t *size, bool *compressed)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	u8 *out = NULL;

	cr_assert_geq(fd, 0, "%s", path);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	cr_assert(elf && !elf_getshdrstrndx(elf, &shstrndx));
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || strcmp(elf_strptr(elf, shstrndx, sh.sh_name), name))
			continue;
		*compressed = sh.sh_flags & SHF_COMPRESSED;
		d = elf_rawdata(scn, NULL);
		cr_assert(d);
		*size = d->d_size;
		out = malloc(d->d_size);
		cr_assert(out);
		memcpy(out, d->d_buf, d->d_size);
	}
	elf_end(elf);
	close(fd);
	return out;
}

Test(debug_plain, a_compressed_debug_file_comes_back_plain)
{
	char dbg[600], ref[600], cache[600];
	struct run_result r;
	u8 id[BUILD_ID_MAX];
	size_t n = 0, a_size, b_size;
	char *path = NULL;
	u8 *a, *b;
	bool ca, cb;
	int fd, pfd;

	snprintf(dbg, sizeof(dbg), "%s/inlined.debug", tmpdir());
	snprintf(ref, sizeof(ref), "%s/inlined.plain", tmpdir());
	snprintf(cache, sizeof(cache), "%s/cache", tmpdir());
	setenv("HSBPF_BUILDID_DIR", cache, 1);
	cr_assert_eq(run(&r, "objcopy --only-keep-debug --compress-debug-sections=zlib-gabi %s %s && "
			 "objcopy --decompress-debug-sections %s %s", fixture("inline/inlined"), dbg, dbg, ref),
		     0, "%s", r.err);
	cr_assert_eq(build_id__read(dbg, id, sizeof(id), &n), 0);
	free(section(dbg, ".debug_info", &a_size, &ca));
	cr_assert(ca, "objcopy did not compress .debug_info");

	cr_expect_eq(debug_plain__open(id, n, &path), -ENOENT);
	fd = open(dbg, O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_assert_eq(debug_plain__make(fd, id, n), 0);
	cr_expect_eq(lseek(fd, 0, SEEK_CUR), 0);
	close(fd);
	pfd = debug_plain__open(id, n, &path);
	cr_assert_geq(pfd, 0);
	close(pfd);
	cr_assert(path && strstr(path, cache), "%s", path ? path : "(none)");
	/* every debug section as objcopy decompresses it */
	for (const char *const *s = (const char *const[]){ ".debug_info", ".debug_line", ".debug_abbrev", NULL }; *s; s++) {
		a = section(path, *s, &a_size, &ca);
		b = section(ref, *s, &b_size, &cb);
		cr_assert(a && b, "%s", *s);
		cr_expect(!ca && !cb, "%s still compressed", *s);
		cr_expect(a_size == b_size && !memcmp(a, b, a_size), "%s differs (%zu, %zu bytes)", *s, a_size, b_size);
		free(a);
		free(b);
	}
	free(path);
	unsetenv("HSBPF_BUILDID_DIR");
}

Test(debug_plain, nothing_compressed_no_copy)
{
	char cache[600];
	u8 id[BUILD_ID_MAX];
	size_t n = 0;
	char *path = NULL;
	int fd;

	snprintf(cache, sizeof(cache), "%s/cache", tmpdir());
	setenv("HSBPF_BUILDID_DIR", cache, 1);
	cr_assert_eq(build_id__read(fixture("inline/inlined"), id, sizeof(id), &n), 0);
	fd = open(fixture("inline/inlined"), O_RDONLY);
	cr_assert_geq(fd, 0);
	cr_expect_eq(debug_plain__make(fd, id, n), 0);
	close(fd);
	cr_expect_eq(debug_plain__open(id, n, &path), -ENOENT);
	unsetenv("HSBPF_BUILDID_DIR");
}

/* a program whose debug information is in a separate, compressed file (as Debian's -dbg
 * packages ship it), found by its debuglink: the second report reads the plain copy the first
 * one made, to the same output, inlined frames included */
Test(debug_plain, a_report_reads_the_copy_to_the_same_output)
{
	struct run_result r;
	const char *d = tmpdir();

	cr_assert_eq(run(&r, "cd %s && cp %s prog && objcopy --only-keep-debug --compress-debug-sections=zlib-gabi "
			 "prog prog.debug && objcopy --strip-debug --add-gnu-debuglink=prog.debug prog",
			 d, fixture("inline/inlined")), 0, "%s", r.err);
	cr_assert_eq(run(&r, "%s record -g -o %s/p.data -- %s/prog 0.5", hsbpf_bin(), d, d), 0, "%s", r.err);
	cr_assert_eq(run(&r, "cd %s && HSBPF_BUILDID_DIR=%s/c %s report -i p.data --sort sym,line > a.txt && "
			 "HSBPF_BUILDID_DIR=%s/c %s report -i p.data --sort sym,line > b.txt && cmp a.txt b.txt && "
			 "grep -c 'inlined' b.txt && find c -name debug-plain | grep -c .", d, d, hsbpf_bin(), d,
			 hsbpf_bin()), 0, "%s %s", r.out, r.err);
	{
		int inlined = 0, copies = 0;

		cr_assert_eq(sscanf(r.out, "%d %d", &inlined, &copies), 2, "%s", r.out);
		cr_expect_gt(inlined, 0, "no inlined frames: %s", r.out);
		/* the program's, and libc's and ld.so's where their -dbg packages are installed */
		cr_expect_geq(copies, 1, "no plain copy made: %s", r.out);
	}
}
