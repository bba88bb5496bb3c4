/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Container identity from a cgroup v2 path, by the conventions of the usual runtimes: docker,
 * containerd, CRI-O, podman, Kubernetes pod slices, systemd units and scopes. */
#ifndef HSBPF_CONTAINER_ID_H
#define HSBPF_CONTAINER_ID_H

#include "lib/util.h"

struct container_id {
	char runtime[16];	/* docker, containerd, crio, podman, systemd */
	char id[13];		/* the short (12-character) container id, "" for a unit */
	char pod[48];		/* Kubernetes pod uid, with dashes */
	char unit[128];		/* systemd unit or scope name */
};

/* 0 and *out filled when the path follows a known convention, -ENOENT otherwise */
int container_id__identify(const char *path, struct container_id *out);
/* "docker 1a2b3c4d5e6f", "pod 0a1b... containerd 1a2b...", "unit nginx.service" */
void container_id__describe(const struct container_id *c, char *buf, size_t size);

#endif
