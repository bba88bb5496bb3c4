// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf buildid-cache: list the build-id cache, remove entries from it, and set the size it is
 * kept within (as perf buildid-cache does for ~/.debug). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "symbols/build_id.h"
#include "symbols/buildid_cache.h"
#include "cmds.h"
#include "lib/options.h"

static const struct options_cmd buildid_cache_cmd = {
	.name = "hsbpf buildid-cache",
	.usage =
	"usage: hsbpf buildid-cache [--buildid-dir DIR] [--list | --remove BUILDID|PATH |\n"
	"                           --purge PATH | --purge-all] [--max-size SIZE]\n",
	.no_args = true,
};

enum action { LIST, REMOVE, PURGE, PURGE_ALL };

static struct {
	enum action a;
	int actions;		/* how many were given: one at a time */
	const char *arg;	/* --remove's or --purge's */
} want;

/* --list, --remove, --purge, --purge-all (opt->set: the action) */
static int action(const struct option_spec *opt, const char *arg)
{
	want.a = opt->set;
	want.arg = arg;
	want.actions++;
	return 0;
}

static void print_list(const char *dir, const struct buildid_cache_entry *e, size_t nr)
{
	u64 total = 0;

	for (size_t i = 0; i < nr; i++)
		total += e[i].size;
	printf("# build-id cache '%s': %zu entries, %.1f MB (limit %.1f MB)\n", dir, nr, total / 1e6,
	       buildid_cache__max_size(dir) / 1e6);
	for (size_t i = 0; i < nr; i++) {
		time_t t = e[i].last_use_ns / 1000000000;
		char when[32];
		struct tm tm;

		strftime(when, sizeof(when), "%Y-%m-%d %H:%M", localtime_r(&t, &tm));
		printf("%-40s %10.1f MB  %s  %s\n", e[i].id, e[i].size / 1e6, when,
		       e[i].path[0] ? e[i].path : "-");
	}
}

/* the build-id an argument names: itself in hex, else the one of the file at that path */
static int id_of(const char *arg, char *hex, size_t size)
{
	u8 id[BUILD_ID_MAX];
	size_t len;
	int err;

	if (!strchr(arg, '/') && strlen(arg) >= 4 && strlen(arg) <= 2 * BUILD_ID_MAX &&
	    strspn(arg, "0123456789abcdef") == strlen(arg)) {
		snprintf(hex, size, "%s", arg);
		return 0;
	}
	err = build_id__read(arg, id, sizeof(id), &len);
	if (err)
		return fail(err, "'%s' is no build-id, and its build-id cannot be read: %s", arg,
			    err == -ENODATA ? "it has none" : file__strerror(err));
	build_id__hex(id, len, hex, size);
	return 0;
}

/* remove the entries whose recorded path is path (all, when path is NULL) */
static int purge(const char *dir, const char *path)
{
	char real[PATH_MAX];
	struct buildid_cache_entry *e;
	size_t nr;
	unsigned removed = 0;
	u64 freed = 0;
	int err = buildid_cache__list(dir, &e, &nr);

	if (err)
		return fail(err, "cannot read the build-id cache '%s': %s", dir, strerror(-err));
	if (path && !realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);	/* deleted since: as given */
	for (size_t i = 0; i < nr && !err; i++) {
		if (path && strcmp(e[i].path, real) && strcmp(e[i].path, path))
			continue;
		err = buildid_cache__remove(dir, e[i].id);
		if (err == -ENOENT)
			err = 0;
		else if (err)
			error("cannot remove %s from the build-id cache: %s", e[i].id, strerror(-err));
		else {
			removed++;
			freed += e[i].size;
		}
	}
	free(e);
	note("removed %u entries%s%s%s (%.1f MB)", removed, path ? " of '" : "", path ? real : "",
	     path ? "'" : "", freed / 1e6);
	return err;
}

static int act(enum action a, const char *arg, const char *dir)
{
	struct buildid_cache_entry *e;
	char hex[2 * BUILD_ID_MAX + 1];
	size_t nr;
	int err;

	switch (a) {
	case LIST:
		err = buildid_cache__list(dir, &e, &nr);
		if (err)
			return fail(err, "cannot read the build-id cache '%s': %s", dir, strerror(-err));
		print_list(dir, e, nr);
		free(e);
		return 0;
	case REMOVE:
		err = id_of(arg, hex, sizeof(hex));
		if (err)
			return err;
		err = buildid_cache__remove(dir, hex);
		if (err)
			return fail(err, "cannot remove %s from the build-id cache '%s': %s", hex, dir,
				    err == -ENOENT ? "no such entry" : strerror(-err));
		note("removed %s", hex);
		return 0;
	case PURGE:
		return purge(dir, arg);
	case PURGE_ALL:
		return purge(dir, NULL);
	}
	return -EINVAL;
}

int cmd_buildid_cache(int argc, char **argv)
{
	const char *dir = NULL, *max_arg = NULL;
	const struct option_spec opts[] = {
		{ .kind = OPTION_CALLBACK, .short_name = 'l', .long_name = "list", .set = LIST,
		  .cb = action, .help = "every entry, least recently used first: build-id, size, last "
		  "use, the object's path when recorded (the default)" },
		{ .kind = OPTION_CALLBACK, .short_name = 'r', .long_name = "remove", .set = REMOVE,
		  .argh = "BUILDID|PATH", .cb = action, .help = "the entry of a build-id, or of the "
		  "object file at PATH" },
		{ .kind = OPTION_CALLBACK, .short_name = 'p', .long_name = "purge", .set = PURGE,
		  .argh = "PATH", .cb = action, .help = "every entry recorded from PATH (all its "
		  "versions)" },
		{ .kind = OPTION_CALLBACK, .short_name = 'P', .long_name = "purge-all", .set = PURGE_ALL,
		  .cb = action, .help = "every entry" },
		OPT_STRING('M', "max-size", &max_arg, "SIZE", "keep the cache within SIZE (500M, 2G: K, "
			   "M, G, T are powers of 1024), least recently used entries removed now and "
			   "after each recording (default 1G; $HSBPF_BUILDID_MAX_SIZE overrides)"),
		OPT_STRING(0, "buildid-dir", &dir, "DIR", "the cache (default $HSBPF_BUILDID_DIR, else "
			   "~/.cache/hsbpf/buildid)"),
		OPT_END(),
	};
	unsigned removed;
	u64 max, freed;
	int nr;

	want.a = LIST;
	want.actions = 0;
	want.arg = NULL;
	nr = options__parse(&buildid_cache_cmd, opts, argc, argv);
	if (nr < 0)
		return options__status(nr);
	if (want.actions > 1) {
		error("one of --list, --remove, --purge and --purge-all at a time");
		return usage_hint("hsbpf buildid-cache");
	}
	if (max_arg && buildid_cache__parse_size(max_arg, &max)) {
		error("invalid size '%s' (bytes, or a number with K, M, G or T)", max_arg);
		return usage_hint("hsbpf buildid-cache");
	}
	if (!dir)
		dir = buildid_cache__default_dir();
	if (!dir) {
		error("no build-id cache folder: set HSBPF_BUILDID_DIR or HOME, or give --buildid-dir");
		return 1;
	}
	if (max_arg) {
		int err = buildid_cache__set_max_size(dir, max);

		if (!err)
			err = buildid_cache__trim(dir, max, UINT64_MAX, &removed, &freed);
		if (err) {
			error("cannot set the size of the build-id cache '%s': %s", dir, strerror(-err));
			return 1;
		}
		note("build-id cache '%s' kept within %.1f MB: %u least recently used entries removed "
		     "(%.1f MB)", dir, max / 1e6, removed, freed / 1e6);
		if (!want.actions)
			return 0;
	}
	return act(want.a, want.arg, dir) ? 1 : 0;
}
