/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* CPython's line tables: the source line of an instruction offset. 3.11+ encode it in the
 * location table (co_linetable, Objects/locations.md): entries of one to eight code units,
 * each a first byte with its high bit set (a 4-bit kind, the length - 1) and the kind's
 * varints; the line moves by a delta per entry from co_firstlineno. 3.10's line table
 * (co_lnotab's successor) is another format: pylinetable_310.c. */
#include <errno.h>
#include "python/pyoffsets.h"

enum {
	LOC_ONE_LINE0 = 10,	/* 10, 11, 12: the line moves by 0, 1, 2; two column bytes */
	LOC_NO_COLUMNS = 13,	/* a signed varint: the line's delta */
	LOC_LONG = 14,		/* a signed varint (the delta), then end line and columns */
	LOC_NONE = 15,		/* no location: the instructions have no line */
};

/* a varint of 6-bit chunks, least significant first, 0x40 marking more */
static unsigned int read_varint(const uint8_t *t, size_t len, size_t *i)
{
	unsigned int v = 0, shift = 0;

	while (*i < len) {
		uint8_t b = t[(*i)++];

		v |= (unsigned int)(b & 63) << shift;
		shift += 6;
		if (!(b & 64) || shift > 30)
			break;
	}
	return v;
}

static int read_svarint(const uint8_t *t, size_t len, size_t *i)
{
	unsigned int v = read_varint(t, len, i);

	return v & 1 ? -(int)(v >> 1) : (int)(v >> 1);
}

int pylinetable__line(int major, int minor, const uint8_t *table, size_t len, int firstlineno,
		      uint32_t instr, int *line)
{
	size_t i = 0;
	uint32_t addr = 0;
	int cur = firstlineno;

	if (major == 3 && minor == 10)
		return pylinetable__line_310(table, len, firstlineno, instr, line);
	if (major != 3 || minor < 11)
		return -ENOTSUP;
	while (i < len) {
		uint8_t first = table[i++];
		int kind = (first >> 3) & 15, delta = 0;
		uint32_t units = (first & 7) + 1;

		if (!(first & 0x80))
			return -EINVAL;	/* not at an entry's first byte: a corrupt table */
		if (kind == LOC_NO_COLUMNS || kind == LOC_LONG)
			delta = read_svarint(table, len, &i);
		else if (kind >= LOC_ONE_LINE0 && kind < LOC_NO_COLUMNS)
			delta = kind - LOC_ONE_LINE0;
		cur += delta;
		/* the rest of the entry (columns, end line) up to the next first byte */
		while (i < len && !(table[i] & 0x80))
			i++;
		if (instr < addr + units) {
			if (kind == LOC_NONE)
				return -ENOENT;
			*line = cur;
			return 0;
		}
		addr += units;
	}
	return -ENOENT;
}
