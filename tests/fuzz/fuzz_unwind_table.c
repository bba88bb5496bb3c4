// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer target: the unwind table builder must build or refuse any ELF object, never crash
 * nor build rows out of order. make fuzz runs it over tests/fuzz/unwind-corpus (kept). */
#include <stdlib.h>
#include <string.h>
#include "unwind/unwind_table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct unwind_table *t = NULL;
	char *copy = malloc(size ? size : 1);
	Elf *elf;

	if (!copy)
		return 0;
	memcpy(copy, data, size);	/* libelf may write through an ELF_C_READ_MMAP image */
	elf_version(EV_CURRENT);
	elf = elf_memory(copy, size);
	if (elf && !unwind_table__build(elf, NULL, &t)) {
		for (size_t i = 1; i < t->nr_rows; i++)
			if (t->rows[i].pc <= t->rows[i - 1].pc)
				abort();
		for (u64 a = t->base; a < t->end && a < t->base + 65536; a += 7)
			unwind_table__find(t, a);
		unwind_table__free(t);
	}
	if (elf)
		elf_end(elf);
	free(copy);
	return 0;
}
