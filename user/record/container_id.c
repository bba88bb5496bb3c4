// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Container identity from a cgroup path: runtime, short id, pod, systemd unit.
 *
 * Runtime conventions, read from the last path components inward:
 *   docker        /docker/<64 hex>              or .../docker-<64 hex>.scope
 *   containerd    .../cri-containerd-<64 hex>.scope, or /kubepods/<qos>/pod<uid>/<64 hex>
 *   CRI-O         .../crio-<64 hex>.scope
 *   podman        .../libpod-<64 hex>.scope     or /libpod_parent/libpod-<64 hex>
 *   Kubernetes    ...-pod<uid with _>.slice or /pod<uid>/ above the container
 *   systemd       the innermost *.service or *.scope (user sessions, plain units) */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "record/container_id.h"

static bool hex64(const char *s, size_t len)
{
	if (len != 64)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* the component [begin, end) of a path, copied */
static void component(const char *begin, size_t len, char *buf, size_t size)
{
	if (len >= size)
		len = size - 1;
	memcpy(buf, begin, len);
	buf[len] = 0;
}

static void find_pod(const char *path, struct container_id *c)
{
	const char *p = strstr(path, "pod");

	for (; p; p = strstr(p + 3, "pod")) {
		const char *u = p + 3;
		size_t n = strcspn(u, "/.");

		if (n < 32 || n > 40)
			continue;
		component(u, n, c->pod, sizeof(c->pod));
		for (char *q = c->pod; *q; q++)
			if (*q == '_')
				*q = '-';	/* the systemd driver spells the uid with underscores */
		return;
	}
}

int container_id__identify(const char *path, struct container_id *c)
{
	static const struct {
		const char *prefix, *runtime;
	} scopes[] = {
		{ "docker-", "docker" }, { "cri-containerd-", "containerd" }, { "crio-", "crio" },
		{ "libpod-", "podman" },
	};
	const char *end = path + strlen(path), *start;

	memset(c, 0, sizeof(*c));
	while (end > path && end[-1] == '/')
		end--;
	/* innermost component first */
	for (; end > path; end = start - 1) {
		size_t len;

		start = end;
		while (start > path && start[-1] != '/')
			start--;
		len = end - start;
		for (size_t i = 0; i < ARRAY_SIZE(scopes); i++) {
			size_t pl = strlen(scopes[i].prefix);

			if (len == pl + 64 + 6 && !strncmp(start, scopes[i].prefix, pl) &&
			    !strncmp(start + pl + 64, ".scope", 6) && hex64(start + pl, 64)) {
				snprintf(c->runtime, sizeof(c->runtime), "%s", scopes[i].runtime);
				component(start + pl, 12, c->id, sizeof(c->id));
				find_pod(path, c);
				return 0;
			}
		}
		if (hex64(start, len)) {
			/* a bare id: under /docker, /libpod_parent/libpod-, or kubepods (cgroupfs) */
			const char *rt = strstr(path, "/docker/") ? "docker" :
					 strstr(path, "kubepods") ? "containerd" :
					 strstr(path, "libpod") ? "podman" : "container";

			snprintf(c->runtime, sizeof(c->runtime), "%s", rt);
			component(start, 12, c->id, sizeof(c->id));
			find_pod(path, c);
			return 0;
		}
		if (len > 8 && !strncmp(start, "libpod-", 7) && hex64(start + 7, len - 7)) {
			snprintf(c->runtime, sizeof(c->runtime), "podman");
			component(start + 7, 12, c->id, sizeof(c->id));
			return 0;
		}
		if ((len > 8 && !strncmp(end - 8, ".service", 8)) || (len > 6 && !strncmp(end - 6, ".scope", 6))) {
			snprintf(c->runtime, sizeof(c->runtime), "systemd");
			component(start, len, c->unit, sizeof(c->unit));
			return 0;
		}
		if (start == path)
			break;
	}
	return -ENOENT;
}

void container_id__describe(const struct container_id *c, char *buf, size_t size)
{
	if (c->unit[0])
		snprintf(buf, size, "unit %s", c->unit);
	else if (c->pod[0])
		snprintf(buf, size, "pod %.8s %s %s", c->pod, c->runtime, c->id);
	else
		snprintf(buf, size, "%s %s", c->runtime, c->id);
}
