/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Code objects read from a live process with process_vm_readv: the pointers to the name,
 * file and line table objects, then each object's bytes (a compact string's characters, a
 * bytes object's contents) by the version's offsets. A string's length is the word after
 * the object head (PyASCIIObject.length, at 16 in every release build 3.10-3.13). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include "python/pyname.h"

#define STR_LENGTH_OFF	16

static int peek(pid_t pid, u64 addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n == (ssize_t)len)
		return 0;
	return n < 0 && errno == ESRCH ? -ESRCH : -EFAULT;
}

static int peek_u64(pid_t pid, u64 addr, u16 off, u64 *v)
{
	if (off == HSBPF_PY_ABSENT)
		return -ENOENT;
	return peek(pid, addr + off, v, sizeof(*v));
}

void pyname__utf8(const u8 *data, size_t len, int kind, char *buf, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		u32 c = kind == 4 ? ((const u32 *)(const void *)data)[i] :
			kind == 2 ? ((const u16 *)(const void *)data)[i] : data[i];
		char t[4];
		size_t n;

		if (!c || c >= 0x110000)
			c = '?';
		if (c < 0x80) {
			t[0] = c;
			n = 1;
		} else if (c < 0x800) {
			t[0] = 0xc0 | c >> 6;
			t[1] = 0x80 | (c & 63);
			n = 2;
		} else if (c < 0x10000) {
			t[0] = 0xe0 | c >> 12;
			t[1] = 0x80 | ((c >> 6) & 63);
			t[2] = 0x80 | (c & 63);
			n = 3;
		} else {
			t[0] = 0xf0 | c >> 18;
			t[1] = 0x80 | ((c >> 12) & 63);
			t[2] = 0x80 | ((c >> 6) & 63);
			t[3] = 0x80 | (c & 63);
			n = 4;
		}
		if (o + n >= size)
			break;	/* a character whole or not at all */
		memcpy(buf + o, t, n);
		o += n;
	}
	if (size)
		buf[o] = 0;
}

/* a str object's text, malloc'd */
static int read_str(pid_t pid, const struct hsbpf_py_offsets *o, u64 obj, char **out)
{
	u32 state;
	u64 len;
	int kind, err;
	u8 *raw = NULL;
	char *s = NULL;

	if (!obj)
		return -EFAULT;
	err = peek(pid, obj + o->unicode_state, &state, sizeof(state));
	if (!err)
		err = peek(pid, obj + STR_LENGTH_OFF, &len, sizeof(len));
	if (err)
		return err;
	kind = (state >> 2) & 7;
	if (!((state >> 5) & 1) || (kind != 1 && kind != 2 && kind != 4))
		return -EFAULT;	/* not a compact string: not what a code object holds */
	if (len > PYNAME_MAX_STR)
		len = PYNAME_MAX_STR;
	raw = malloc(len * kind + 1);
	s = malloc(len * 4 + 1);
	if (!raw || !s) {
		err = -ENOMEM;
		goto out;
	}
	err = peek(pid, obj + ((state >> 6) & 1 ? o->unicode_ascii_data : o->unicode_compact_data), raw,
		   len * kind);
	if (err)
		goto out;
	pyname__utf8(raw, len, kind, s, len * 4 + 1);
	*out = s;
	s = NULL;
out:
	free(raw);
	free(s);
	return err;
}

int pyname__ident(pid_t pid, const struct hsbpf_py_offsets *o, u64 code, u64 ident[4])
{
	int line = 0, err;

	err = peek_u64(pid, code, o->code_qualname != HSBPF_PY_ABSENT ? o->code_qualname : o->code_name,
		       &ident[0]);
	if (!err)
		err = peek_u64(pid, code, o->code_filename, &ident[1]);
	if (!err)
		err = peek_u64(pid, code, o->code_linetable, &ident[2]);
	if (!err)
		err = peek(pid, code + o->code_firstlineno, &line, sizeof(line));
	ident[3] = (u32)line;
	return err;
}

int pyname__read(pid_t pid, const struct hsbpf_py_offsets *o, u64 code, struct pycode *out)
{
	u64 size = 0;
	int err;

	memset(out, 0, sizeof(*out));
	err = pyname__ident(pid, o, code, out->ident);
	if (err)
		return err;
	out->firstlineno = (int)out->ident[3];
	err = read_str(pid, o, out->ident[0], &out->name);
	if (!err)
		err = read_str(pid, o, out->ident[1], &out->file);
	if (!err && out->ident[2])
		err = peek(pid, out->ident[2] + o->bytes_size, &size, sizeof(size));
	if (!err && size) {
		if (size > PYNAME_MAX_TABLE)
			size = PYNAME_MAX_TABLE;
		out->table = malloc(size);
		err = out->table ? peek(pid, out->ident[2] + o->bytes_data, out->table, size) : -ENOMEM;
		out->table_len = err ? 0 : size;
	}
	if (err)
		pycode__clear(out);
	return err;
}

void pycode__clear(struct pycode *c)
{
	free(c->name);
	free(c->file);
	free(c->table);
	memset(c, 0, sizeof(*c));
}
