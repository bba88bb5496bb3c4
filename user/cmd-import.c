// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hsbpf import: read a perf.data file and write an hsbpf profile, so that report, annotate and
 * eval work on recordings made anywhere with perf record (-b). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "cmds.h"
#include "symbols/build_id.h"
#include "lib/file_format.h"
#include "lib/options.h"
#include "import/perf_import.h"

static const struct options_cmd import_cmd = {
	.name = "hsbpf import",
	.usage = "usage: hsbpf import PERF.DATA [-o PROFILE] [--symfs DIR] [--binary PATH]\n",
	.outro =
	"perf record -g callchains become call stacks; perf record --call-graph dwarf samples\n"
	"have their user stacks unwound here from perf's register and stack copies, with the\n"
	"kernel unwinder's rules (what cannot be unwound is counted and said).\n",
};

int cmd_import(int argc, char **argv)
{
	struct perf_import_opts o = {};
	const char *output = "hsbpf.data";
	const struct option_spec opts[] = {
		OPT_STRING('o', "output", &output, "FILE", "profile to write (default hsbpf.data)"),
		OPT_STRING(0, "symfs", &o.symfs, "DIR", "look recorded objects up under DIR (DIR/path, "
			   "then DIR/name)"),
		OPT_STRING(0, "binary", &o.binary, "PATH", "this file is the recorded program: matched "
			   "by build-id, or by name where the recording has no build-ids"),
		OPT_END(),
	};
	struct profile *p = NULL;
	struct stat st;
	int nr, err;

	nr = options__parse(&import_cmd, opts, argc, argv);
	if (nr < 0)
		return options__status(nr);
	if (nr != 1) {
		options__usage(&import_cmd, opts, stderr);
		return 2;
	}
	/* by device and inode: another name, a link, ./ do not fool it */
	if (outfile__check_input(output, argv[0]))
		return 1;
	if (o.binary) {
		/* a binary without a build-id is matched by name; one that is not there is a mistake */
		err = build_id__read(o.binary, o.binary_id, sizeof(o.binary_id), &o.binary_id_len);
		if (err == -EINVAL)
			return fail(1, "'%s' is not an ELF file", o.binary);
		if (err && err != -ENODATA)
			return fail(1, "cannot read '%s': %s", o.binary, file__strerror(err));
	}
	if (o.symfs && stat(o.symfs, &st))
		return fail(1, "cannot use --symfs '%s': %s", o.symfs, strerror(errno));
	if (o.symfs && !S_ISDIR(st.st_mode))
		return fail(1, "cannot use --symfs '%s': not a directory", o.symfs);
	p = profile__new();
	if (!p)
		return fail(1, "cannot import: %s", strerror(ENOMEM));
	err = perf_import__run(argv[0], &o, p);
	if (!err)
		err = profile__write(p, output);
	if (!err)
		fprintf(stderr, "hsbpf: %" PRIu64 " samples at %zu addresses, %zu branch edges and ranges; "
			"wrote '%s'\n", profile__total_samples(p), p->nr_samples, p->nr_lbr, output);
	profile__free(p);
	return err ? 1 : 0;
}
