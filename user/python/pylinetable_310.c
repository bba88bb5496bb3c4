// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* CPython 3.10's line table (PEP 626, Objects/lnotab_notes.txt of 3.10): co_linetable is a
 * sequence of byte pairs, each an address range and its line: the range's length in bytes
 * (unsigned) and the line's change from the previous range's (signed; -128: the range has no
 * line). Ranges of length 0 only carry a line change. Offsets are in bytes there and in code
 * units (2 bytes) in f_lasti, which is what the unwinder reads. As PyCode_Addr2Line of 3.10. */
#include <errno.h>
#include <stdbool.h>
#include "python/pyoffsets.h"

#define NO_LINE		-128

int pylinetable__line_310(const uint8_t *table, size_t len, int firstlineno, uint32_t instr,
			  int *line)
{
	uint64_t addr = (uint64_t)instr * 2, end = 0;
	int computed = firstlineno;

	for (size_t i = 0; i + 1 < len; i += 2) {
		uint64_t start = end;
		int8_t ldelta = (int8_t)table[i + 1];
		bool has_line = ldelta != NO_LINE;

		end += table[i];
		if (has_line)
			computed += ldelta;
		if (addr >= start && addr < end) {
			if (!has_line)
				return -ENOENT;
			*line = computed;
			return 0;
		}
	}
	return -ENOENT;
}
