// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* containers: identities from the cgroup paths each runtime makes. */
#include <criterion/criterion.h>
#include "record/container_id.h"

#define ID "1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b"

Test(container_id, conventions)
{
	static const struct {
		const char *path, *want;
	} cases[] = {
		{ "/docker/" ID, "docker 1a2b3c4d5e6f" },
		{ "/system.slice/docker-" ID ".scope", "docker 1a2b3c4d5e6f" },
		{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod12345678_1234_1234_1234_123456789abc.slice/cri-containerd-" ID ".scope",
		  "pod 12345678 containerd 1a2b3c4d5e6f" },
		{ "/kubepods/besteffort/pod12345678-1234-1234-1234-123456789abc/" ID,
		  "pod 12345678 containerd 1a2b3c4d5e6f" },
		{ "/kubepods.slice/kubepods-pod12345678_1234_1234_1234_123456789abc.slice/crio-" ID ".scope",
		  "pod 12345678 crio 1a2b3c4d5e6f" },
		{ "/machine.slice/libpod-" ID ".scope", "podman 1a2b3c4d5e6f" },
		{ "/machine.slice/libpod-" ID ".scope/container", "podman 1a2b3c4d5e6f" },
		{ "/system.slice/nginx.service", "unit nginx.service" },
		{ "/user.slice/user-1000.slice/session-3.scope", "unit session-3.scope" },
	};
	struct container_id c;
	char buf[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_assert_eq(container_id__identify(cases[i].path, &c), 0, "%s", cases[i].path);
		container_id__describe(&c, buf, sizeof(buf));
		cr_expect_str_eq(buf, cases[i].want, "%s", cases[i].path);
	}
	cr_expect_eq(container_id__identify("/", &c), -ENOENT);
	cr_expect_eq(container_id__identify("/hsbpf-test-42", &c), -ENOENT);
	cr_expect_eq(container_id__identify("/docker/notanid", &c), -ENOENT);
}
