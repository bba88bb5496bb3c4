// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* CPython's layout (struct hsbpf_py_offsets) read from an interpreter's DWARF: the members of
 * _PyRuntimeState, PyInterpreterState, PyThreadState, the frame (3.10's PyFrameObject, 3.11+'s
 * _PyInterpreterFrame), PyCodeObject and the string and bytes objects, by name, in the ELF
 * itself (pyenv's libpython) or in its separate debug file found by build-id (Debian's
 * python3.11-dbg). The version is Py_Version's (3.11+), or 3.10 when the layout is 3.10's.
 * Which field exists decides which of the struct's alternatives is filled: a field a version
 * does not have is HSBPF_PY_ABSENT, never guessed. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/util.h"
#include "python/pyoffsets.h"
#include "symbols/build_id.h"

#define DEBUG_BUILD_ID_DIR "/usr/lib/debug/.build-id"

/* the types read, by their struct or typedef name (the first complete definition found) */
enum {
	T_RUNTIME, T_INTERP, T_TSTATE, T_CFRAME, T_IFRAME, T_FRAMEOBJ, T_CODE, T_ASCII,
	T_COMPACT, T_BYTES, T_NR,
};

static const char *const type_names[T_NR][2] = {
	[T_RUNTIME] = { "_PyRuntimeState", "pyruntimestate" },
	[T_INTERP] = { "PyInterpreterState", "_is" },
	[T_TSTATE] = { "PyThreadState", "_ts" },
	[T_CFRAME] = { "_PyCFrame", NULL },
	[T_IFRAME] = { "_PyInterpreterFrame", NULL },
	[T_FRAMEOBJ] = { "_frame", NULL },
	[T_CODE] = { "PyCodeObject", NULL },
	[T_ASCII] = { "PyASCIIObject", NULL },
	[T_COMPACT] = { "PyCompactUnicodeObject", NULL },
	[T_BYTES] = { "PyBytesObject", NULL },
};

struct types {
	Dwarf_Die die[T_NR];
	bool found[T_NR];
	bool cstack_found;
	int owned_by_cstack;	/* FRAME_OWNED_BY_CSTACK's value (3.12+) */
};

/* through typedefs and qualifiers to the struct (or whatever else) they name */
static bool strip_type(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute attr;

	*out = *die;
	for (int i = 0; i < 16; i++) {
		int tag = dwarf_tag(out);

		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type &&
		    tag != DW_TAG_volatile_type && tag != DW_TAG_member)
			return true;
		if (!dwarf_attr_integrate(out, DW_AT_type, &attr) || !dwarf_formref_die(&attr, out))
			return false;
	}
	return false;
}

static void note_enum(Dwarf_Die *die, struct types *t)
{
	Dwarf_Die child;
	Dwarf_Attribute attr;
	Dwarf_Sword v;

	if (t->cstack_found || dwarf_child(die, &child) != 0)
		return;
	do {
		const char *name = dwarf_diename(&child);

		if (name && !strcmp(name, "FRAME_OWNED_BY_CSTACK") &&
		    dwarf_attr(&child, DW_AT_const_value, &attr) && !dwarf_formsdata(&attr, &v)) {
			t->cstack_found = true;
			t->owned_by_cstack = (int)v;
			return;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

static void note_type(Dwarf_Die *die, struct types *t)
{
	const char *name = dwarf_diename(die);
	int tag = dwarf_tag(die);
	Dwarf_Die st;

	if (tag == DW_TAG_enumeration_type) {
		note_enum(die, t);
		return;
	}
	if (!name || (tag != DW_TAG_structure_type && tag != DW_TAG_typedef) ||
	    dwarf_hasattr(die, DW_AT_declaration))
		return;
	for (int i = 0; i < T_NR; i++) {
		if (t->found[i] || (strcmp(name, type_names[i][0]) &&
				    (!type_names[i][1] || strcmp(name, type_names[i][1]))))
			continue;
		/* a typedef counts only once it leads to a complete struct */
		if (!strip_type(die, &st) || dwarf_tag(&st) != DW_TAG_structure_type ||
		    dwarf_hasattr(&st, DW_AT_declaration))
			continue;
		t->die[i] = st;
		t->found[i] = true;
	}
}

static bool all_found(const struct types *t)
{
	for (int i = 0; i < T_NR; i++)
		if (!t->found[i])
			return false;
	return t->cstack_found;
}

/* one pass over every unit's top-level DIEs */
static void find_types(Dwarf *dw, struct types *t)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	Dwarf_Die cu, die;

	while (!all_found(t) && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &die) == 0) {
			do
				note_type(&die, t);
			while (dwarf_siblingof(&die, &die) == 0);
		}
		off = next;
	}
}

/* the byte offset of member path ("interpreters.head": a member of a member) in struct st;
 * HSBPF_PY_ABSENT if it has none */
static u16 member(const struct types *t, int type, const char *path)
{
	char name[64];
	Dwarf_Die st, child;
	Dwarf_Word loc;
	Dwarf_Attribute attr;
	size_t total = 0;

	if (!t->found[type])
		return HSBPF_PY_ABSENT;
	st = t->die[type];
	while (*path) {
		size_t len = strcspn(path, ".");
		bool hit = false;

		if (len >= sizeof(name))
			return HSBPF_PY_ABSENT;
		memcpy(name, path, len);
		name[len] = '\0';
		path += len + (path[len] == '.');
		if (dwarf_child(&st, &child) != 0)
			return HSBPF_PY_ABSENT;
		do {
			const char *n = dwarf_diename(&child);

			if (dwarf_tag(&child) != DW_TAG_member || !n || strcmp(n, name))
				continue;
			if (!dwarf_attr(&child, DW_AT_data_member_location, &attr) ||
			    dwarf_formudata(&attr, &loc))
				return HSBPF_PY_ABSENT;
			total += loc;
			hit = true;
			break;
		} while (dwarf_siblingof(&child, &child) == 0);
		if (!hit || (*path && !strip_type(&child, &st)))
			return HSBPF_PY_ABSENT;
	}
	return total < HSBPF_PY_ABSENT ? total : HSBPF_PY_ABSENT;
}

/* the first of the names the struct has */
static u16 member_of(const struct types *t, int type, const char *a, const char *b)
{
	u16 off = member(t, type, a);

	return off == HSBPF_PY_ABSENT && b ? member(t, type, b) : off;
}

static u16 size_of(const struct types *t, int type)
{
	Dwarf_Die st = t->die[type];
	int size = t->found[type] ? dwarf_bytesize(&st) : -1;

	return size > 0 && size < HSBPF_PY_ABSENT ? size : HSBPF_PY_ABSENT;
}

/* PY_VERSION_HEX from the Py_Version symbol (3.11+), where the file holds its bytes: 0 or
 * -ENOENT */
static int read_py_version(Elf *elf, unsigned long *hex)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			GElf_Shdr dsh;
			Elf_Scn *dscn;
			Elf_Data *d;
			const char *name;
			u64 at;

			if (!gelf_getsym(data, i, &sym) || sym.st_size < 4 ||
			    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)) ||
			    strcmp(name, "Py_Version"))
				continue;
			dscn = elf_getscn(elf, sym.st_shndx);
			if (!dscn || !gelf_getshdr(dscn, &dsh) || dsh.sh_type != SHT_PROGBITS ||
			    !(d = elf_getdata(dscn, NULL)))
				continue;
			at = sym.st_value - dsh.sh_addr;
			if (at + 4 > d->d_size)
				continue;
			/* x86-64 and arm64: little-endian, and the version fits in 32 bits */
			*hex = (unsigned long)((const u8 *)d->d_buf)[at] |
			       (unsigned long)((const u8 *)d->d_buf)[at + 1] << 8 |
			       (unsigned long)((const u8 *)d->d_buf)[at + 2] << 16 |
			       (unsigned long)((const u8 *)d->d_buf)[at + 3] << 24;
			return 0;
		}
	}
	return -ENOENT;
}

/* the DWARF of the file at fd, or of its separate debug file by build-id: *dfd is that
 * file's descriptor (or -1) */
static Dwarf *open_dwarf(const char *path, int fd, int *dfd)
{
	char hex[2 * 64 + 1], dpath[sizeof(DEBUG_BUILD_ID_DIR) + sizeof(hex) + 16];
	u8 id[64];
	size_t len;
	Dwarf *dw;

	*dfd = -1;
	dw = dwarf_begin(fd, DWARF_C_READ);
	if (dw)
		return dw;
	if (build_id__read_fd(fd, id, sizeof(id), &len) || len < 2) {
		debug("'%s': no debug information and no build-id", path);
		return NULL;
	}
	build_id__hex(id, len, hex, sizeof(hex));
	snprintf(dpath, sizeof(dpath), "%s/%.2s/%s.debug", DEBUG_BUILD_ID_DIR, hex, hex + 2);
	*dfd = open(dpath, O_RDONLY | O_CLOEXEC);
	if (*dfd < 0) {
		debug("'%s': no debug information, and no '%s'", path, dpath);
		return NULL;
	}
	dw = dwarf_begin(*dfd, DWARF_C_READ);
	if (!dw)
		debug("'%s': %s", dpath, dwarf_errmsg(-1));
	return dw;
}

/* 3.10 has no Py_Version; its layout says which it is */
static int version_from_layout(const struct types *t, struct hsbpf_py_offsets *o)
{
	if (t->found[T_IFRAME] || member(t, T_CODE, "co_linetable") == HSBPF_PY_ABSENT ||
	    member(t, T_TSTATE, "frame") == HSBPF_PY_ABSENT)
		return -ENOENT;
	o->major = 3;
	o->minor = 10;
	return 0;
}

static void fill(const struct types *t, struct hsbpf_py_offsets *o)
{
	int frame = t->found[T_IFRAME] ? T_IFRAME : T_FRAMEOBJ;

	o->runtime_interp_head = member(t, T_RUNTIME, "interpreters.head");
	/* 3.12 keeps the current thread's state in a thread-local variable instead */
	o->runtime_tstate_current = member(t, T_RUNTIME, "gilstate.tstate_current._value");
	o->interp_next = member(t, T_INTERP, "next");
	o->interp_threads_head = member_of(t, T_INTERP, "threads.head", "tstate_head");
	o->tstate_next = member(t, T_TSTATE, "next");
	o->tstate_thread_id = member(t, T_TSTATE, "thread_id");
	o->tstate_native_thread_id = member(t, T_TSTATE, "native_thread_id");
	o->tstate_state = member(t, T_TSTATE, "state");
	/* 3.10 has a cframe too, but without the current frame */
	o->cframe_current_frame = member(t, T_CFRAME, "current_frame");
	o->tstate_cframe = o->cframe_current_frame == HSBPF_PY_ABSENT ? HSBPF_PY_ABSENT :
			   member(t, T_TSTATE, "cframe");
	o->tstate_current_frame = member(t, T_TSTATE, "current_frame");
	if (frame == T_FRAMEOBJ)
		o->tstate_current_frame = member(t, T_TSTATE, "frame");
	o->frame_code = member_of(t, frame, "f_executable", "f_code");
	o->frame_previous = member_of(t, frame, "previous", "f_back");
	o->frame_instr = member_of(t, frame, "instr_ptr", "prev_instr");
	if (frame == T_FRAMEOBJ)
		o->frame_instr = member(t, frame, "f_lasti");
	o->frame_is_entry = member(t, frame, "is_entry");
	/* 3.11 has an owner too (a generator's frame is never incomplete), but no
	 * FRAME_OWNED_BY_CSTACK: its entry is is_entry */
	o->frame_owner = member(t, frame, "owner");
	o->owned_by_cstack = t->cstack_found && o->frame_owner != HSBPF_PY_ABSENT ?
			     t->owned_by_cstack : HSBPF_PY_ABSENT;
	o->code_adaptive = member(t, T_CODE, "co_code_adaptive");
	o->code_code = member(t, T_CODE, "co_code");
	o->code_qualname = member(t, T_CODE, "co_qualname");
	o->code_name = member(t, T_CODE, "co_name");
	o->code_filename = member(t, T_CODE, "co_filename");
	o->code_firstlineno = member(t, T_CODE, "co_firstlineno");
	o->code_linetable = member(t, T_CODE, "co_linetable");
	o->unicode_state = member(t, T_ASCII, "state");
	o->unicode_ascii_data = size_of(t, T_ASCII);
	o->unicode_compact_data = size_of(t, T_COMPACT);
	o->bytes_size = member(t, T_BYTES, "ob_base.ob_size");
	o->bytes_data = member(t, T_BYTES, "ob_sval");
	o->code_firsttraceable = member(t, T_CODE, "_co_firsttraceable");
}

/* what the unwinder and the namer cannot do without */
static const char *missing(const struct hsbpf_py_offsets *o)
{
	static const struct {
		size_t off;
		const char *name;
	} need[] = {
#define NEED(f) { offsetof(struct hsbpf_py_offsets, f), #f }
		NEED(runtime_interp_head), NEED(interp_threads_head), NEED(tstate_next),
		NEED(tstate_thread_id), NEED(frame_code), NEED(frame_previous), NEED(frame_instr),
		NEED(code_name), NEED(code_filename), NEED(code_firstlineno),
		NEED(code_linetable), NEED(unicode_state), NEED(unicode_ascii_data),
		NEED(bytes_size), NEED(bytes_data),
#undef NEED
	};

	for (size_t i = 0; i < ARRAY_SIZE(need); i++)
		if (*(const u16 *)((const char *)o + need[i].off) == HSBPF_PY_ABSENT)
			return need[i].name;
	if (o->tstate_current_frame == HSBPF_PY_ABSENT && o->tstate_cframe == HSBPF_PY_ABSENT)
		return "tstate_current_frame";
	return NULL;
}

int pyoffsets__from_dwarf(const char *path, struct hsbpf_py_offsets *out)
{
	struct hsbpf_py_offsets o = { 0 };
	struct types *t = NULL;
	unsigned long hex;
	Dwarf *dw = NULL;
	Elf *elf = NULL;
	int fd, dfd = -1, err = 0;
	const char *lack;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	t = calloc(1, sizeof(*t));
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!t || !elf) {
		err = t ? -EINVAL : -ENOMEM;
		goto out;
	}
	dw = open_dwarf(path, fd, &dfd);
	if (!dw) {
		err = -ENOENT;
		goto out;
	}
	find_types(dw, t);
	if (!read_py_version(elf, &hex)) {
		o.major = hex >> 24 & 0xff;
		o.minor = hex >> 16 & 0xff;
	} else if (version_from_layout(t, &o)) {
		debug("'%s': neither Py_Version nor 3.10's layout", path);
		err = -ENOENT;
		goto out;
	}
	fill(t, &o);
	lack = missing(&o);
	if (lack) {
		debug("'%s': CPython %u.%u's debug information has no %s", path, o.major, o.minor,
		      lack);
		err = -ENOENT;
		goto out;
	}
	*out = o;
out:
	if (dw)
		dwarf_end(dw);
	if (elf)
		elf_end(elf);
	if (dfd >= 0)
		close(dfd);
	free(t);
	close(fd);
	return err;
}
