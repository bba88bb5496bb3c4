// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The callbacks of the option groups several commands share (option_groups.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "hsbpf.h"
#include "record/call_graph.h"
#include "option_groups.h"

int option_groups__freq(const struct option_spec *opt, const char *arg)
{
	struct session_opts *so = opt->value;

	if (!strcmp(arg, "max")) {
		/* as perf's -F max: the highest rate the kernel takes */
		if (session__max_sample_rate(&so->freq))
			return fail(-EINVAL, "-F max: cannot read "
				    "/proc/sys/kernel/perf_event_max_sample_rate");
		note("-F max: %" PRIu64 " Hz (kernel.perf_event_max_sample_rate)", so->freq);
		return 0;
	}
	if (parse_u64(arg, &so->freq) || !so->freq)
		return fail(-EINVAL, "invalid frequency '%s'", arg);
	return 0;
}

int option_groups__period_mode(const struct option_spec *opt, const char *arg)
{
	struct session_opts *so = opt->value;

	if (period__parse_mode(arg, &so->mode))
		return fail(-EINVAL, "invalid period mode '%s' (known: phase, fixed, prime, random, "
			    "prime-random)", arg);
	so->mode_given = true;
	return 0;
}

int option_groups__dwarf(const struct option_spec *opt, const char *arg)
{
	struct session_opts *so = opt->value;

	(void)arg;
	so->call_graph = call_graph__find(CALL_GRAPH_DEFAULT)->bpf_mode;
	so->max_frames = 0;
	return 0;
}

int option_groups__call_graph(const struct option_spec *opt, const char *arg)
{
	struct session_opts *so = opt->value;

	return session__parse_call_graph(arg, &so->call_graph, &so->max_frames);
}

int option_groups__python_frames(const struct option_spec *opt, const char *arg)
{
	static const char *const modes[] = {
		[HSBPF_PY_INTERLEAVE] = "interleave", [HSBPF_PY_REPLACE] = "replace", [HSBPF_PY_OFF_MODE] = "off",
	};
	struct session_opts *so = opt->value;

	for (u32 i = 0; i < ARRAY_SIZE(modes); i++) {
		if (!strcmp(arg, modes[i])) {
			so->python_frames = i;
			return 0;
		}
	}
	return fail(-EINVAL, "invalid --python-frames '%s' (interleave, replace or off)", arg);
}

int option_groups__ids(const struct option_spec *opt, const char *arg)
{
	char name[64];

	snprintf(name, sizeof(name), "--%s", opt->long_name);
	if (sample_filter__parse_ids(arg, name))
		return -EINVAL;
	*(const char **)opt->value = arg;
	return 0;
}

int option_groups__time(const struct option_spec *opt, const char *arg)
{
	return sample_filter__parse_time(opt->value, arg);
}

int option_groups__buildid_dir(const struct option_spec *opt, const char *arg)
{
	(void)opt;
	/* where the symbolizer and debuginfod look: the variable says it to both */
	setenv("HSBPF_BUILDID_DIR", arg, 1);
	return 0;
}

int option_groups__compare(const struct option_spec *opt, const char *arg)
{
	if (profile_diff__parse_compare(arg, opt->value))
		return fail(-EINVAL, "invalid --compare '%s' (rates or shares)", arg);
	return 0;
}

int option_groups__work(const struct option_spec *opt, const char *arg)
{
	struct diff_args *d = opt->value;

	if (profile_diff__parse_work(arg, d->work))
		return fail(-EINVAL, "invalid --work '%s' (two positive numbers: BASE,NEW)", arg);
	d->has_work = true;
	return 0;
}

int option_groups__check_diff(const struct diff_args *d)
{
	if (d->has_work && d->compare == DIFF_SHARES)
		return fail(-EINVAL, "--work compares rates: not with --compare shares");
	return 0;
}
