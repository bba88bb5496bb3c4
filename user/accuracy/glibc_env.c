// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Compare what ld.so --list-diagnostics reports natively and under qemu-x86_64, turn the
 * differences into tunables, and verify them by asking ld.so again with them set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "glibc_env.h"

#define LDSO "/lib64/ld-linux-x86-64.so.2"
#define MAX_IDX 10

struct diag {
	u32 active[MAX_IDX][4];
	struct {
		char name[48];
		int value;
	} pref[48];
	int nr_pref;
	u64 nt, movsb, stosb, dcache, scache;
	bool ok;
};

/* (cpuid index, register, bit) of the features glibc's ifuncs look at, as tunables name them */
static const struct {
	u8 idx, reg, bit;
	const char *name;
} features[] = {
	{ 0, 2, 9, "SSSE3" }, { 0, 2, 12, "FMA" }, { 0, 2, 19, "SSE4_1" }, { 0, 2, 20, "SSE4_2" },
	{ 0, 2, 22, "MOVBE" }, { 0, 2, 23, "POPCNT" }, { 0, 2, 28, "AVX" }, { 0, 2, 29, "F16C" },
	{ 1, 1, 3, "BMI1" }, { 1, 1, 5, "AVX2" }, { 1, 1, 8, "BMI2" }, { 1, 1, 9, "ERMS" },
	{ 1, 1, 11, "RTM" }, { 1, 1, 16, "AVX512F" }, { 1, 1, 17, "AVX512DQ" },
	{ 1, 1, 26, "AVX512PF" }, { 1, 1, 27, "AVX512ER" }, { 1, 1, 28, "AVX512CD" },
	{ 1, 1, 30, "AVX512BW" }, { 1, 1, 31, "AVX512VL" }, { 1, 2, 1, "AVX512_VBMI" },
	{ 1, 2, 6, "AVX512_VBMI2" }, { 1, 2, 11, "AVX512_VNNI" }, { 1, 2, 12, "AVX512_BITALG" },
	{ 1, 2, 14, "AVX512_VPOPCNTDQ" }, { 1, 3, 4, "FSRM" }, { 1, 3, 23, "AVX512_FP16" },
	{ 2, 2, 5, "LZCNT" }, { 2, 2, 16, "FMA4" }, { 3, 0, 1, "XSAVEC" },
	{ 6, 0, 4, "AVX_VNNI" }, { 6, 0, 5, "AVX512_BF16" },
};

static int read_diag(const char *cmd, struct diag *d)
{
	char line[512];
	FILE *f = popen(cmd, "r");

	memset(d, 0, sizeof(*d));
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned idx, reg;
		unsigned long long v;
		char name[48];

		if (sscanf(line, "x86.cpu_features.features[%x].active[%x]=%llx", &idx, &reg, &v) == 3) {
			if (idx < MAX_IDX && reg < 4)
				d->active[idx][reg] = v;
		} else if (sscanf(line, "x86.cpu_features.preferred.%47[^=]=%llx", name, &v) == 2) {
			if (d->nr_pref < (int)ARRAY_SIZE(d->pref)) {
				snprintf(d->pref[d->nr_pref].name, sizeof(d->pref[0].name), "%s", name);
				d->pref[d->nr_pref++].value = !!v;
			}
		} else if (sscanf(line, "x86.cpu_features.non_temporal_threshold=%llx", &v) == 1) {
			d->nt = v;
		} else if (sscanf(line, "x86.cpu_features.rep_movsb_threshold=%llx", &v) == 1) {
			d->movsb = v;
		} else if (sscanf(line, "x86.cpu_features.rep_stosb_threshold=%llx", &v) == 1) {
			d->stosb = v;
		} else if (sscanf(line, "x86.cpu_features.data_cache_size=%llx", &v) == 1) {
			d->dcache = v;
		} else if (sscanf(line, "x86.cpu_features.shared_cache_size=%llx", &v) == 1) {
			d->scache = v;
		}
	}
	d->ok = pclose(f) == 0 && d->nr_pref > 0;
	return d->ok ? 0 : -EIO;
}

/* the glibc decisions that still differ, by name: features, preferences, thresholds */
static int differences(const struct diag *a, const struct diag *b, char *names, size_t size)
{
	size_t off = 0;
	int n = 0;

#define DIFF(name)								\
	do {									\
		n++;								\
		if (off < size)							\
			off += snprintf(names + off, size - off, "%s%s", off ? "," : "", name); \
	} while (0)
	names[0] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(features); i++) {
		u32 bit = 1u << features[i].bit;

		if (!!(a->active[features[i].idx][features[i].reg] & bit) !=
		    !!(b->active[features[i].idx][features[i].reg] & bit))
			DIFF(features[i].name);
	}
	for (int i = 0; i < a->nr_pref && i < b->nr_pref; i++)
		if (a->pref[i].value != b->pref[i].value)
			DIFF(a->pref[i].name);
	if (a->nt != b->nt)
		DIFF("x86_non_temporal_threshold");
	if (a->movsb != b->movsb)
		DIFF("x86_rep_movsb_threshold");
	if (a->stosb != b->stosb)
		DIFF("x86_rep_stosb_threshold");
#undef DIFF
	return n;
}

int glibc_env__native_tunables(const char *unused, char *buf, size_t size)
{
	struct diag nat, emu, check;
	char hw[1024] = "", cmd[2048], names[512];
	size_t off = 0;
	int err, left;

	(void)unused;
	buf[0] = 0;
	err = read_diag(LDSO " --list-diagnostics 2>/dev/null", &nat);
	if (!err)
		err = read_diag("qemu-x86_64 " LDSO " --list-diagnostics 2>/dev/null", &emu);
	if (err)
		return err;
	for (size_t i = 0; i < ARRAY_SIZE(features); i++) {
		u32 bit = 1u << features[i].bit;
		bool n = nat.active[features[i].idx][features[i].reg] & bit;
		bool e = emu.active[features[i].idx][features[i].reg] & bit;

		if (n && !e)
			off += snprintf(hw + off, sizeof(hw) - off, "%s-%s", off ? "," : "", features[i].name);
	}
	for (int i = 0; i < nat.nr_pref && i < emu.nr_pref && off < sizeof(hw); i++)
		if (!strcmp(nat.pref[i].name, emu.pref[i].name) && nat.pref[i].value != emu.pref[i].value)
			off += snprintf(hw + off, sizeof(hw) - off, "%s%s%s", off ? "," : "",
					emu.pref[i].value ? "" : "-", emu.pref[i].name);
	snprintf(buf, size, "%s%s%sglibc.cpu.x86_non_temporal_threshold=%#llx:"
		 "glibc.cpu.x86_rep_movsb_threshold=%#llx:glibc.cpu.x86_rep_stosb_threshold=%#llx:"
		 "glibc.cpu.x86_data_cache_size=%#llx:glibc.cpu.x86_shared_cache_size=%#llx",
		 off ? "glibc.cpu.hwcaps=" : "", hw, off ? ":" : "", (unsigned long long)emu.nt,
		 (unsigned long long)emu.movsb, (unsigned long long)emu.stosb,
		 (unsigned long long)emu.dcache, (unsigned long long)emu.scache);
	snprintf(cmd, sizeof(cmd), "GLIBC_TUNABLES='%s' " LDSO " --list-diagnostics 2>/dev/null", buf);
	if (read_diag(cmd, &check))
		return -EIO;
	left = differences(&check, &emu, names, sizeof(names));
	if (left) {
		size_t len = strlen(buf);

		/* glibc cannot switch these off through tunables: said, not hidden */
		snprintf(buf + len, size - len, " (still differ: %s)", names);
	}
	return 0;
}
