// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The call-graph modes' table: what a new mode is, in one row (and its BPF code). */
#include <string.h>
#include "record/call_graph.h"
#include "hsbpf.h"

/* in the order --call-graph's error lists them */
static const struct call_graph modes[] = {
	{
		.name = "dwarf", .bpf_mode = HSBPF_CALL_GRAPH_DWARF, .max_frames = HSBPF_MAX_FRAMES,
		.unwind_tables = true, .late_unwind = true, .return_addresses = true,
	},
	{
		.name = "fp", .bpf_mode = HSBPF_CALL_GRAPH_FP, .max_frames = HSBPF_MAX_FRAMES,
		.return_addresses = true,
	},
	{
		/* the hardware keeps up to HSBPF_LBR_MAX callers. Its frames are the calls' "from"
		 * addresses, not return addresses: looked up at ip - 1 all the same, as ever */
		.name = "lbr", .bpf_mode = HSBPF_CALL_GRAPH_LBR, .max_frames = HSBPF_MAX_FRAMES,
		.lbr_call_stack = true, .return_addresses = true,
	},
};

const struct call_graph *call_graph__find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++)
		if (!strcmp(name, modes[i].name))
			return &modes[i];
	return NULL;
}

const struct call_graph *call_graph__get(u32 bpf_mode)
{
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++)
		if (modes[i].bpf_mode == bpf_mode)
			return &modes[i];
	return NULL;
}

const struct call_graph *call_graph__at(size_t i)
{
	return i < ARRAY_SIZE(modes) ? &modes[i] : NULL;
}

int call_graph__parse(const char *arg, const struct call_graph **cg, u32 *max_frames)
{
	const char *comma = strchr(arg, ',');
	size_t len = comma ? (size_t)(comma - arg) : strlen(arg);
	char name[16], known[64] = "";
	u64 depth = 0;

	snprintf(name, sizeof(name), "%.*s", (int)len, arg);
	*cg = len < sizeof(name) ? call_graph__find(name) : NULL;
	if (!*cg) {
		for (size_t i = 0; i < ARRAY_SIZE(modes); i++)
			snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
				 i ? ", " : "", modes[i].name);
		return fail(-EINVAL, "invalid --call-graph '%s' (known: %s; then ,DEPTH)", arg, known);
	}
	if (comma && parse_u64(comma + 1, &depth))
		depth = 0;
	/* perf's dwarf,SIZE: bytes of stack copied, a multiple of 8 up to 65528; nothing is
	 * copied here, so bytes are frames of CALL_GRAPH_FRAME_BYTES, up to the most kept */
	if ((*cg)->unwind_tables && depth > HSBPF_MAX_FRAMES && depth <= 65528 && !(depth % 8)) {
		*max_frames = depth / CALL_GRAPH_FRAME_BYTES < HSBPF_MAX_FRAMES ?
			      depth / CALL_GRAPH_FRAME_BYTES : HSBPF_MAX_FRAMES;
		return 0;
	}
	if (comma && (depth < 1 || depth > HSBPF_MAX_FRAMES))
		return fail(-EINVAL, "invalid call-graph depth '%s' (1 to %d user frames)", comma + 1,
			    HSBPF_MAX_FRAMES);
	*max_frames = depth;
	return 0;
}

u32 call_graph__max_frames(const struct call_graph *cg, u32 max_frames)
{
	if (!cg)
		return 0;
	return max_frames ? max_frames : cg->max_frames;
}
