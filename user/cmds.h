/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The subcommands: one file each, each only orchestrates library modules. */
#ifndef HSBPF_CMDS_H
#define HSBPF_CMDS_H

#include "lib/util.h"	/* HSBPF_VERSION */

/* each returns the process exit status: 0 ok, 1 error, 2 usage */
int cmd_record(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_selftest(int argc, char **argv);
int cmd_truth(int argc, char **argv);
int cmd_annotate(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_experiment(int argc, char **argv);
int cmd_flamegraph(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_buildid_cache(int argc, char **argv);

#endif /* HSBPF_CMDS_H */
