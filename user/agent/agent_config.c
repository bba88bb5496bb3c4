// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The agent's key = value configuration file (agent_config.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "agent/agent_config.h"
#include "agent/push.h"
#include "lib/util.h"

/* the text between leading and trailing blanks, in place */
static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		*--end = '\0';
	return s;
}

static int set_string(char *dst, size_t size, const char *val)
{
	if (strlen(val) >= size)
		return -EINVAL;
	snprintf(dst, size, "%s", val);
	return 0;
}

/* an http or https URL (said by the caller, which knows the line) */
static int set_url(char *dst, size_t size, const char *val)
{
	char why[128];

	if (push__check_url(val, why, sizeof(why)))
		return -EINVAL;
	return set_string(dst, size, val);
}

static int set_label(struct agent_config *c, const char *name, const char *val)
{
	size_t i;

	if (!*name || strlen(name) >= sizeof(c->labels[0].name) ||
	    strlen(val) >= sizeof(c->labels[0].value))
		return -EINVAL;
	for (i = 0; i < c->nr_labels; i++)
		if (!strcmp(c->labels[i].name, name))
			break;
	if (i == AGENT_MAX_LABELS)
		return -ENOSPC;
	snprintf(c->labels[i].name, sizeof(c->labels[i].name), "%s", name);
	snprintf(c->labels[i].value, sizeof(c->labels[i].value), "%s", val);
	if (i == c->nr_labels)
		c->nr_labels++;
	return 0;
}

static int set_key(struct agent_config *c, const char *key, const char *val)
{
	if (!strcmp(key, "server"))
		return set_url(c->server, sizeof(c->server), val);
	if (!strcmp(key, "otlp"))
		return set_url(c->otlp, sizeof(c->otlp), val);
	if (!strcmp(key, "spool_dir"))
		return set_string(c->spool_dir, sizeof(c->spool_dir), val);
	if (!strcmp(key, "spool_max"))
		return parse_u64(val, &c->spool_max);
	if (!strcmp(key, "metrics_listen"))
		return set_string(c->metrics_listen, sizeof(c->metrics_listen), val);
	if (!strcmp(key, "cacert"))
		return set_string(c->cacert, sizeof(c->cacert), val);
	if (!strcmp(key, "output_dir"))
		return set_string(c->output_dir, sizeof(c->output_dir), val);
	if (!strcmp(key, "output_format"))
		return strcmp(val, "pprof") ? -EINVAL : 0;
	if (!strcmp(key, "service_name"))
		return set_string(c->service_name, sizeof(c->service_name), val);
	if (!strcmp(key, "max_files"))
		return parse_u64(val, &c->max_files);
	if (!strcmp(key, "max_bytes"))
		return parse_u64(val, &c->max_bytes);
	if (!strcmp(key, "interval"))
		return parse_seconds(val, 1, 3600, &c->interval);
	if (!strncmp(key, "label.", 6))
		return set_label(c, key + 6, val);
	return -ENOENT;
}

int agent_config__parse(struct agent_config *c, const char *text, const char *name)
{
	char *copy = strdup(text), *line, *save = NULL;
	int err = 0, nr = 0;

	if (!copy)
		return fail(-ENOMEM, "cannot read '%s': %s", name, strerror(ENOMEM));
	for (line = copy; line && !err; line = save) {
		char *eq, *key, *val;

		save = strchr(line, '\n');
		if (save)
			*save++ = '\0';
		nr++;
		line = trim(line);
		if (!*line || *line == '#')
			continue;
		eq = strchr(line, '=');
		if (!eq) {
			err = fail(-EINVAL, "%s:%d: expected key = value", name, nr);
			break;
		}
		*eq = '\0';
		key = trim(line);
		val = trim(eq + 1);
		err = set_key(c, key, val);
		if (err == -ENOENT)
			err = fail(-EINVAL, "%s:%d: unknown key '%s'", name, nr, key);
		else if (err == -ENOSPC)
			err = fail(-EINVAL, "%s:%d: more than %d labels", name, nr, AGENT_MAX_LABELS);
		else if (err) {
			char why[128] = "";

			if ((!strcmp(key, "server") || !strcmp(key, "otlp")) &&
			    push__check_url(val, why + 2, sizeof(why) - 2))
				memcpy(why, ": ", 2);
			err = fail(-EINVAL, "%s:%d: invalid value for %s: '%s'%s", name, nr, key, val, why);
		}
	}
	free(copy);
	return err;
}

int agent_config__load(struct agent_config *c, const char *path)
{
	struct agent_config next = *c;
	char *text = NULL;
	size_t size = 0;
	FILE *f = fopen(path, "r");
	int err = 0;

	if (!f)
		return fail(-errno, "cannot open '%s': %s", path, strerror(errno));
	if (getdelim(&text, &size, '\0', f) < 0 && ferror(f))
		err = fail(-EIO, "cannot read '%s': %s", path, strerror(errno));
	fclose(f);
	if (!err)
		err = agent_config__parse(&next, text ? text : "", path);
	if (!err)
		*c = next;
	free(text);
	return err;
}

void agent_config__overlay(struct agent_config *c, const struct agent_config *over)
{
	if (over->server[0])
		snprintf(c->server, sizeof(c->server), "%s", over->server);
	if (over->otlp[0])
		snprintf(c->otlp, sizeof(c->otlp), "%s", over->otlp);
	if (over->spool_dir[0])
		snprintf(c->spool_dir, sizeof(c->spool_dir), "%s", over->spool_dir);
	if (over->spool_max)
		c->spool_max = over->spool_max;
	if (over->metrics_listen[0])
		snprintf(c->metrics_listen, sizeof(c->metrics_listen), "%s", over->metrics_listen);
	if (over->cacert[0])
		snprintf(c->cacert, sizeof(c->cacert), "%s", over->cacert);
	if (over->output_dir[0])
		snprintf(c->output_dir, sizeof(c->output_dir), "%s", over->output_dir);
	if (over->service_name[0])
		snprintf(c->service_name, sizeof(c->service_name), "%s", over->service_name);
	if (over->max_files)
		c->max_files = over->max_files;
	if (over->max_bytes)
		c->max_bytes = over->max_bytes;
	if (over->interval)
		c->interval = over->interval;
	for (size_t i = 0; i < over->nr_labels; i++)
		set_label(c, over->labels[i].name, over->labels[i].value);
}
