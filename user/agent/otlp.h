/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The agent's --otlp sink's message: one interval as OpenTelemetry's profiles request
 * (ExportProfilesServiceRequest, proto/otlp.proto), converted from the interval's gzipped
 * pprof so that both sinks send the same profile. One ResourceProfiles per process (its
 * resource attributes host.name, service.name, process.pid, process.executable.name,
 * container.id where known, and the configured labels), one shared dictionary; the sample
 * type is the pprof's first (samples/count), its period type and period the pprof's. Sent to
 * POST URL/v1development/profiles by a pusher (push.h). docs/agent.md. */
#ifndef HSBPF_AGENT_OTLP_H
#define HSBPF_AGENT_OTLP_H

#include <stddef.h>
#include "agent/push.h"
#include "lib/util.h"

#define OTLP_PATH "/v1development/profiles"
#define OTLP_CONTENT_TYPE "application/x-protobuf"

struct otlp_resource {
	const char *host;		/* host.name */
	const char *service;		/* service.name */
	const struct push_label *labels;	/* more resource attributes */
	size_t nr_labels;
};

/* the request for the gzipped pprof of one interval in a malloc'd buffer; 0, -EINVAL (not a
 * gzipped pprof) or -ENOMEM, said */
int otlp__encode(const u8 *pprof_gz, size_t len, const struct otlp_resource *res, u8 **out,
		 size_t *out_len);
/* the container.id in a pprof "container" label ("docker 0123...", "pod 01234567 crio
 * 89ab..."): its last word, or NULL for a systemd unit; in buf */
const char *otlp__container_id(const char *label, char *buf, size_t size);

#endif /* HSBPF_AGENT_OTLP_H */
