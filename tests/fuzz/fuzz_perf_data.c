// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libFuzzer target: the perf.data reader must refuse or read any input, never crash.
 * make fuzz FUZZ_SECONDS=N runs it over tests/fuzz/corpus (kept in the repository). */
#include <stddef.h>
#include <stdint.h>
#include "record/perf_data.h"

static int on_sample(void *ctx, const struct perf_sample *s)
{
	volatile u64 sink = s->ip;

	for (u64 i = 0; i < s->nr_branches; i++)
		sink += s->branches[i].from ^ s->branches[i].to;
	for (u64 i = 0; i < s->nr_callchain; i++)
		sink += s->callchain[i];
	/* --call-graph dwarf: every register and stack byte the reader hands out */
	for (u64 i = 0; i < s->nr_regs; i++)
		sink += s->regs[i];
	for (u64 i = 0; i < s->stack_size; i++)
		sink += s->stack[i];
	(void)ctx;
	(void)sink;
	return 0;
}

static int on_mmap(void *ctx, u32 pid, u64 start, u64 len, u64 pgoff, const char *path, u64 time)
{
	(void)ctx, (void)pid, (void)start, (void)len, (void)pgoff, (void)time;
	return path[0] == 0;	/* touch the string */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_data_callbacks cb = { .sample = on_sample, .mmap = on_mmap, .history_first = true };
	struct perf_data_stats st;

	perf_data__parse(data, size, "fuzz", &cb, &st);
	return 0;
}
