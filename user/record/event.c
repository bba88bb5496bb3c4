// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Event parsing: software clocks and counts, generic hardware events, raw events, precise
 * levels and the u/k modifiers; and the one place that turns open failures into plain words. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include "record/event.h"

static bool event__cpu_is_amd(void)
{
	char line[256];
	bool amd = false;
	FILE *f = fopen("/proc/cpuinfo", "re");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "vendor_id", 9)) {
			amd = strstr(line, "AuthenticAMD") != NULL;
			break;
		}
	if (f)
		fclose(f);
	return amd;
}

static const struct {
	const char *name;
	u32 type;
	u64 config;
	bool clock;
} known[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, true },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, false },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, false },
	{ "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, false },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, false },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, false },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, false },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, false },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, false },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, false },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND, false },
	/* counted by the kernel, on every machine: what hsbpf stat shows by default */
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, false },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, false },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, false },
	{ "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, false },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, false },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, false },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, false },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, false },
	/* the rest of perf list's software events */
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, false },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, false },
	{ "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, false },
	{ "bpf-output", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, false },
	{ "cgroup-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CGROUP_SWITCHES, false },
};

int event__parse(const char *name, struct event_spec *ev)
{
	char base[64];
	const char *colon;
	size_t len, i;

	memset(ev, 0, sizeof(*ev));
	if (!name || !*name || strlen(name) >= sizeof(ev->name))
		return fail(-EINVAL, "invalid event name '%s'", name ? name : "");
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	colon = strchr(name, ':');
	len = colon ? (size_t)(colon - name) : strlen(name);
	memcpy(base, name, len);
	base[len] = 0;

	for (i = 0; i < ARRAY_SIZE(known); i++)
		if (!strcmp(base, known[i].name))
			break;
	if (i < ARRAY_SIZE(known)) {	/* before raw codes: ref-cycles is not r + "ef-cycles" */
		ev->type = known[i].type;
		ev->config = known[i].config;
		ev->is_clock = known[i].clock;
	} else if (!strcmp(base, "lbr")) {
		/* taken branches with their stacks: BR_INST_RETIRED.NEAR_TAKEN on Intel; AMD's
		 * LbrExtV2 (Zen 4) samples branch stacks on retired branches */
		ev->type = PERF_TYPE_RAW;
		ev->config = event__cpu_is_amd() ? 0xc4 : 0x20c4;
		ev->branch_stack = true;
	} else if (base[0] == 'r' && base[1]) {
		u64 cfg;

		if (parse_hex_u64(base + 1, &cfg))
			goto unknown;
		ev->type = PERF_TYPE_RAW;
		ev->config = cfg;
	} else {
		goto unknown;
	}
	for (const char *m = colon ? colon + 1 : ""; *m; m++) {
		switch (*m) {
		case 'p':
			ev->precise++;
			break;
		case 'u':
			ev->exclude_kernel = true;
			break;
		case 'k':
			ev->exclude_user = true;
			break;
		default:
			return fail(-EINVAL, "invalid modifier '%c' in event '%s' (known: p, pp, ppp, u, k)", *m, name);
		}
	}
	if (ev->precise > 3)
		return fail(-EINVAL, "invalid event '%s': at most three p", name);
	/* perf takes cpu-clock:ppp (its own default event is written so): precision is the PMU's,
	 * a software event has none to give, so the modifier goes, said once */
	if (ev->precise && ev->type == PERF_TYPE_SOFTWARE) {
		note("'%s': a software event has no precise mode: sampled as it is without :p, as "
		     "perf does", name);
		ev->precise = 0;
	}
	if (ev->exclude_user && ev->exclude_kernel)
		return fail(-EINVAL, "invalid event '%s': u and k together exclude everything", name);
	return 0;
unknown:
	error("unknown event '%s' (known: cpu-clock, task-clock, context-switches, cpu-migrations, "
	      "page-faults, minor-faults, major-faults, alignment-faults, emulation-faults, "
	      "cgroup-switches, dummy, bpf-output, cycles, instructions, branches, "
	      "branch-misses, cache-references, cache-misses, bus-cycles, ref-cycles, "
	      "stalled-cycles-frontend, stalled-cycles-backend, lbr, rNNNN; modifiers :p :pp :ppp "
	      ":u :k)", name);
	return -EINVAL;
}

void event__attr(const struct event_spec *ev, u64 period, u64 freq, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = ev->type;
	attr->config = ev->config;
	attr->precise_ip = ev->precise;
	attr->exclude_user = ev->exclude_user;
	attr->exclude_kernel = ev->exclude_kernel;
	attr->disabled = 1;
	if (freq) {
		attr->freq = 1;
		attr->sample_freq = freq;
	} else {
		attr->sample_period = period;
	}
	attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD;
	/* a software event that is no clock, asked for its period at a fixed one, is sampled
	 * at every event with a period of 1 (perf_swevent_event): -c 100 took every fault */
	if (ev->type == PERF_TYPE_SOFTWARE && !ev->is_clock && !freq)
		attr->sample_type &= ~PERF_SAMPLE_PERIOD;
	if (ev->branch_stack) {
		attr->sample_type |= PERF_SAMPLE_BRANCH_STACK;
		attr->branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER;
	} else if (ev->lbr_call_stack) {
		attr->sample_type |= PERF_SAMPLE_BRANCH_STACK;
		attr->branch_sample_type = PERF_SAMPLE_BRANCH_CALL_STACK | PERF_SAMPLE_BRANCH_USER;
	}
}

bool event__have_pmu(void)
{
	struct dirent *de;
	bool found = false;
	DIR *d = opendir("/sys/bus/event_source/devices");

	if (!d)
		return false;
	while (!found && (de = readdir(d)))
		found = !strcmp(de->d_name, "cpu") || !strncmp(de->d_name, "cpu_", 4) ||
			!strncmp(de->d_name, "armv", 4);
	closedir(d);
	return found;
}

int event__explain_open_error(const struct event_spec *ev, int err)
{
	bool hw = ev->type == PERF_TYPE_HARDWARE || ev->type == PERF_TYPE_RAW;

	if (err == -EACCES || err == -EPERM)
		error("cannot open event '%s': %s (need root or CAP_PERFMON and CAP_BPF)",
		      ev->name, strerror(-err));
	else if (ev->lbr_call_stack && (!event__have_pmu() || err == -EOPNOTSUPP || err == -ENOENT))
		error("cannot open event '%s' with --call-graph lbr: this machine has no LBR call-stack "
		      "mode (it needs an Intel PMU from Haswell on)%s", ev->name,
		      event__have_pmu() ? "" : "; it has no hardware PMU at all");
	else if (ev->branch_stack && (!event__have_pmu() || err == -EOPNOTSUPP || err == -ENOENT))
		error("cannot open event '%s' with branch stacks: this machine has no LBR (last branch "
		      "records need a hardware PMU: Intel LBR or AMD LbrExtV2)%s", ev->name,
		      event__have_pmu() ? "" : "; it has no hardware PMU at all");
	else if (hw && !event__have_pmu())
		error("cannot open event '%s': no hardware PMU on this machine: only software "
		      "events such as cpu-clock are available", ev->name);
	else if (ev->precise && (err == -EOPNOTSUPP || err == -EINVAL))
		error("cannot open event '%s': this PMU has no precise sampling at level %u",
		      ev->name, ev->precise);
	else if (err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV)
		error("cannot open event '%s': not supported by this machine's PMU (%s)",
		      ev->name, strerror(-err));
	else
		error("cannot open event '%s': %s", ev->name, strerror(-err));
	return err;
}
