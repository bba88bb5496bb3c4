// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cgroup: the v2 mount in hybrid and unified layouts, ids and paths. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "record/cgroup.h"
#include "helpers.h"

static const char *write_tmp(const char *name, const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir(), name);
	f = fopen(path, "w");
	cr_assert(f);
	fputs(text, f);
	fclose(f);
	return path;
}

TestSuite(cgroup, .fini = cleanup_tmpdir);

Test(cgroup, mount_in_each_layout)
{
	static const struct { const char *text, *want; } cases[] = {
		{ "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
		  "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
		  "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n",
		  "/sys/fs/cgroup/unified" },
		{ "30 23 0:27 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n",
		  "/sys/fs/cgroup" },
		{ "30 23 0:27 / /mnt/cg rw master:1 shared:2 - cgroup2 none rw\n", "/mnt/cg" },
	};
	char buf[PATH_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *path = write_tmp("mountinfo", cases[i].text);

		cr_assert_eq(cgroup__find_mount(path, buf, sizeof(buf)), 0, "case %zu", i);
		cr_expect_str_eq(buf, cases[i].want);
	}
	cr_expect_eq(cgroup__find_mount(write_tmp("m2", "1 2 0:1 / / rw - ext4 /dev/vda rw\n"),
					buf, sizeof(buf)), -ENOENT);
}

Test(cgroup, root_id_and_path_on_this_machine)
{
	struct cgroup_names names = {};
	char mnt[PATH_MAX], abs[PATH_MAX];
	u64 id, id2;
	int fd;

	cr_assert_eq(cgroup__find_mount("/proc/self/mountinfo", mnt, sizeof(mnt)), 0,
		     "this machine has cgroup v2 mounted");
	cr_assert_eq(cgroup__id(mnt, &id), 0);
	cr_assert_eq(cgroup_names__scan(&names), 0);
	cr_assert(cgroup_names__find(&names, id));
	cr_expect_str_eq(cgroup_names__find(&names, id), "/");
	cgroup_names__free(&names);
	cr_assert_eq(cgroup__open("/", abs, sizeof(abs), &id2, &fd), 0);
	cr_expect_eq(id, id2);
	cr_expect_str_eq(abs, mnt);
	close(fd);
	cr_expect_neq(cgroup__open("no-such-cgroup-here", abs, sizeof(abs), &id2, &fd), 0);
}

/* a cgroup keeps the name it had when scanned after it is removed; one made later is found
 * by the next scan; scanning twice adds nothing twice */
Test(cgroup, names_outlive_their_cgroups)
{
	struct cgroup_names names = {};
	char mnt[PATH_MAX], a[PATH_MAX + 32], b[PATH_MAX + 32];
	u64 ida, idb;
	size_t n;

	cr_assert_eq(cgroup__find_mount("/proc/self/mountinfo", mnt, sizeof(mnt)), 0);
	snprintf(a, sizeof(a), "%s/hsbpf-names-a-%d", mnt, getpid());
	snprintf(b, sizeof(b), "%s/hsbpf-names-b-%d", mnt, getpid());
	cr_assert_eq(mkdir(a, 0755), 0, "cannot create %s", a);
	cr_assert_eq(cgroup__id(a, &ida), 0);
	cr_assert_eq(cgroup_names__scan(&names), 0);
	n = names.n;
	cr_assert_eq(rmdir(a), 0);
	cr_assert_eq(mkdir(b, 0755), 0);
	cr_assert_eq(cgroup__id(b, &idb), 0);
	cr_assert_eq(cgroup_names__scan(&names), 0);
	rmdir(b);
	cr_expect_eq(names.n, n + 1, "the second scan added %zu", names.n - n);
	cr_assert(cgroup_names__find(&names, ida));
	cr_expect_str_eq(cgroup_names__find(&names, ida), a + strlen(mnt));
	cr_assert(cgroup_names__find(&names, idb));
	cr_expect_str_eq(cgroup_names__find(&names, idb), b + strlen(mnt));
	cr_expect_null(cgroup_names__find(&names, ~0ull));
	cgroup_names__free(&names);
}
