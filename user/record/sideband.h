/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The recording's sideband: the kernel's MMAP2, COMM and FORK records (what perf record
 * keeps so that symbols survive the process), read from per-CPU dummy events. */
#ifndef HSBPF_SIDEBAND_H
#define HSBPF_SIDEBAND_H

#include "profile/profile.h"

struct sideband;

/* per-CPU dummy events, disabled; records go into p as they are drained */
/* a wake-up per record (the unwinder wants mappings at once, build-ids are read while the
 * process lives); pages: data pages per CPU, a power of 2 (0: SIDEBAND_PAGES) */
struct sideband *sideband__open(const int *cpus, int nr_cpus, struct profile *p, unsigned pages);
#define SIDEBAND_PAGES 128	/* 512 KiB: a command, -p */
/* the whole machine's records come faster: up to 4 MiB a CPU, 64 MiB in all */
unsigned sideband__pages_for_all(int nr_cpus);
int sideband__enable(struct sideband *sb);
/* move every record the kernel has written so far into the profile */
int sideband__drain(struct sideband *sb);
/* an fd that becomes readable when records are waiting (epoll over the rings) */
int sideband__fd(const struct sideband *sb);
/* another fd whose readiness ends a wait on sideband__fd (a BPF ring's): 0 or -errno */
int sideband__watch(struct sideband *sb, int fd);
u64 sideband__lost(const struct sideband *sb);

/* the build-ids read as mappings were drained (the kernel is not asked for them) */
struct sideband_id_stats {
	u64 read;	/* distinct objects (inodes) read */
	u64 missed;	/* mappings whose object was gone before it could be read: its process
			 * had exited (or unmapped it) and the file was deleted or replaced */
	u64 read_ns;	/* time spent reading them */
};
void sideband__id_stats(const struct sideband *sb, struct sideband_id_stats *st);
/* fn(ctx, pid, time_ns) for each process (not thread) exit drained, before the next record */
typedef void (*sideband_exit_fn)(void *ctx, u32 pid, u64 time_ns);
void sideband__on_exit(struct sideband *sb, sideband_exit_fn fn, void *ctx);
void sideband__close(struct sideband *sb);

/* the same record decoding, for a record already copied out of a ring or a file;
 * sample_id_all trailer with TID|TIME is assumed. 0, or -EINVAL for a malformed record */
int sideband__record(struct profile *p, const void *rec, size_t size, u64 *lost);

/* fill in build-ids the kernel did not give, from the files themselves */
void sideband__fill_build_ids(struct profile *p);

#endif /* HSBPF_SIDEBAND_H */
