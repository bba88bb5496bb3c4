/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The agent's configuration file (docs/agent.md): one "key = value" a line, '#' starts a
 * comment line, blank lines ignored; keys: server, otlp, output_dir, output_format (pprof),
 * max_files, max_bytes, interval, service_name, spool_dir, spool_max, metrics_listen, cacert,
 * and label.NAME for labels of every profile. The command line's options win over the
 * file's; SIGHUP reads the file again. */
#ifndef HSBPF_AGENT_CONFIG_H
#define HSBPF_AGENT_CONFIG_H

#include <stddef.h>
#include "lib/util.h"

#define AGENT_MAX_LABELS 16

struct agent_label {
	char name[64];
	char value[128];
};

struct agent_config {
	char server[512];		/* Pyroscope's base URL, "" for none */
	char otlp[512];			/* an OTLP/HTTP receiver's base URL, "" for none */
	char spool_dir[1024];		/* "" for none: the HTTP sinks' queues in memory */
	u64 spool_max;			/* each sink's spool in bytes, 0: the default */
	char metrics_listen[128];	/* ADDR:PORT of /metrics, "" for none */
	char cacert[1024];		/* CA certificates for https, "" the system's */
	char output_dir[1024];		/* "" for none */
	u64 max_files;			/* output_dir: profiles kept, 0 no bound */
	u64 max_bytes;			/* output_dir: their total size, 0 no bound */
	double interval;		/* seconds, 0: unset */
	char service_name[128];		/* "" for unset */
	struct agent_label labels[AGENT_MAX_LABELS];
	size_t nr_labels;
};

/* parse a file's text onto c (what it does not say stays as it was); 0, or -EINVAL after
 * saying which line of name is wrong */
int agent_config__parse(struct agent_config *c, const char *text, const char *name);
/* read and parse the file at path onto a copy of c, which it replaces only when the whole
 * file is right; 0 or -errno (said) */
int agent_config__load(struct agent_config *c, const char *path);
/* over's settings that are set (non-empty, non-zero) onto c; its labels added */
void agent_config__overlay(struct agent_config *c, const struct agent_config *over);

#endif /* HSBPF_AGENT_CONFIG_H */
