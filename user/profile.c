// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The profile model and its file: a header, a section table and checksummed sections.
 * Readers reject a newer major version, skip unknown sections, and trust no offset. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "profile.h"

struct file_header {
	char magic[8];
	u16 version_major;
	u16 version_minor;
	u32 header_size;
	u64 file_size;
	u64 section_table;	/* offset */
	u32 nr_sections;
	u32 header_crc;		/* crc32 of this header with header_crc 0 */
	u32 table_crc;		/* crc32 of the section table */
	u8 reserved[20];
};
_Static_assert(sizeof(struct file_header) == 64, "file_header");

struct section_desc {
	u32 type;
	u32 crc;
	u64 offset;
	u64 size;
};
_Static_assert(sizeof(struct section_desc) == 24, "section_desc");
_Static_assert(sizeof(struct profile_sample) == 48, "profile_sample");
_Static_assert(sizeof(struct profile_mapping) == 64, "profile_mapping");
_Static_assert(sizeof(struct profile_comm) == 24, "profile_comm");
_Static_assert(sizeof(struct profile_fork) == 16, "profile_fork");
_Static_assert(sizeof(struct profile_ksym) == 16, "profile_ksym");
_Static_assert(sizeof(struct profile_cgroup) == 16, "profile_cgroup");

#define MAX_SECTIONS 64

struct profile *profile__new(void)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	/* offset 0 is the empty string, so a zeroed reference is always valid */
	if (profile__intern(p, "") < 0) {
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

void profile__free(struct profile *p)
{
	if (!p)
		return;
	free(p->samples);
	free(p->mappings);
	free(p->comms);
	free(p->forks);
	free(p->ksyms);
	free(p->cgroups);
	free(p->strs.buf);
	free(p->strs.slots);
	free(p);
}

static u64 hash_str(const char *s)
{
	u64 h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (u8)*s) * 1099511628211ull;
	return h;
}

static int strtab_rehash(struct strtab *st, size_t nslots)
{
	u32 *slots = calloc(nslots, sizeof(*slots));
	size_t off, i;

	if (!slots)
		return -ENOMEM;
	for (off = 0; off < st->len; off += strlen(st->buf + off) + 1) {
		i = hash_str(st->buf + off) & (nslots - 1);
		while (slots[i])
			i = (i + 1) & (nslots - 1);
		slots[i] = off + 1;
	}
	free(st->slots);
	st->slots = slots;
	st->nslots = nslots;
	return 0;
}

s64 profile__intern(struct profile *p, const char *s)
{
	struct strtab *st = &p->strs;
	size_t n = strlen(s) + 1, i, off;
	int err;

	if (st->nused * 2 >= st->nslots) {
		err = strtab_rehash(st, st->nslots ? st->nslots * 2 : 256);
		if (err)
			return err;
	}
	i = hash_str(s) & (st->nslots - 1);
	while (st->slots[i]) {
		if (!strcmp(st->buf + st->slots[i] - 1, s))
			return st->slots[i] - 1;
		i = (i + 1) & (st->nslots - 1);
	}
	if (st->len + n > UINT32_MAX - 1)
		return -E2BIG;
	if (array__reserve((void **)&st->buf, &st->cap, st->len + n, 1))
		return -ENOMEM;
	off = st->len;
	memcpy(st->buf + off, s, n);
	st->len += n;
	st->slots[i] = off + 1;
	st->nused++;
	return off;
}

const char *profile__str(const struct profile *p, u32 off)
{
	return off < p->strs.len ? p->strs.buf + off : "";
}

#define APPEND(p, arr, nr, cap, item)						\
	({									\
		int __err = array__reserve((void **)&(p)->arr, &(p)->cap,	\
					   (p)->nr + 1, sizeof(*(p)->arr));	\
		if (!__err)							\
			(p)->arr[(p)->nr++] = (item);				\
		__err;								\
	})

int profile__add_sample(struct profile *p, const struct profile_sample *s)
{
	return APPEND(p, samples, nr_samples, cap_samples, *s);
}

int profile__add_mapping(struct profile *p, u32 pid, u64 time_ns, u64 start, u64 len,
			 u64 pgoff, const char *path, const u8 *build_id, u8 build_id_size)
{
	struct profile_mapping m = {
		.pid = pid, .time_ns = time_ns, .start = start, .len = len, .pgoff = pgoff,
	};
	s64 off = profile__intern(p, path);

	if (off < 0)
		return off;
	m.path = off;
	if (build_id_size > BUILD_ID_MAX)
		build_id_size = BUILD_ID_MAX;
	if (build_id && build_id_size) {
		memcpy(m.build_id, build_id, build_id_size);
		m.build_id_size = build_id_size;
	}
	return APPEND(p, mappings, nr_mappings, cap_mappings, m);
}

int profile__add_comm(struct profile *p, u32 pid, u64 time_ns, const char *comm, bool exec)
{
	struct profile_comm c = { .pid = pid, .time_ns = time_ns, .exec = exec };
	s64 off = profile__intern(p, comm);

	if (off < 0)
		return off;
	c.comm = off;
	return APPEND(p, comms, nr_comms, cap_comms, c);
}

int profile__add_fork(struct profile *p, u32 pid, u32 ppid, u64 time_ns)
{
	struct profile_fork f = { .pid = pid, .ppid = ppid, .time_ns = time_ns };

	return APPEND(p, forks, nr_forks, cap_forks, f);
}

int profile__add_ksym(struct profile *p, u64 addr, const char *name)
{
	struct profile_ksym k = { .addr = addr };
	s64 off = profile__intern(p, name);

	if (off < 0)
		return off;
	k.name = off;
	return APPEND(p, ksyms, nr_ksyms, cap_ksyms, k);
}

int profile__add_cgroup(struct profile *p, u64 id, const char *path)
{
	struct profile_cgroup c = { .id = id };
	s64 off = profile__intern(p, path);

	if (off < 0)
		return off;
	c.path = off;
	return APPEND(p, cgroups, nr_cgroups, cap_cgroups, c);
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct profile_ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_mapping(const void *a, const void *b)
{
	const struct profile_mapping *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

static int cmp_comm(const void *a, const void *b)
{
	const struct profile_comm *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

static int cmp_fork(const void *a, const void *b)
{
	const struct profile_fork *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->time_ns < y->time_ns ? -1 : x->time_ns > y->time_ns;
}

/* qsort wants a non-NULL base even for zero elements */
static void sort(void *base, size_t nr, size_t size, int (*cmp)(const void *, const void *))
{
	if (nr > 1)
		qsort(base, nr, size, cmp);
}

void profile__finish(struct profile *p)
{
	sort(p->ksyms, p->nr_ksyms, sizeof(*p->ksyms), cmp_ksym);
	sort(p->mappings, p->nr_mappings, sizeof(*p->mappings), cmp_mapping);
	sort(p->comms, p->nr_comms, sizeof(*p->comms), cmp_comm);
	sort(p->forks, p->nr_forks, sizeof(*p->forks), cmp_fork);
}

u64 profile__total_samples(const struct profile *p)
{
	u64 n = 0;

	for (size_t i = 0; i < p->nr_samples; i++)
		n += p->samples[i].count;
	return n;
}

u64 profile__total_weight(const struct profile *p)
{
	u64 n = 0;

	for (size_t i = 0; i < p->nr_samples; i++)
		n += p->samples[i].weight;
	return n;
}

/* ---- key=value sections ---- */

enum kv_kind { KV_STR, KV_U64, KV_U32, KV_DBL };

struct kv_field {
	const char *key;
	enum kv_kind kind;
	size_t off;
	size_t size;
};

#define M_STR(f) { #f, KV_STR, offsetof(struct profile_meta, f), sizeof(((struct profile_meta *)0)->f) }
#define M_U64(f) { #f, KV_U64, offsetof(struct profile_meta, f), 8 }
#define M_U32(f) { #f, KV_U32, offsetof(struct profile_meta, f), 4 }
static const struct kv_field meta_fields[] = {
	M_STR(version), M_STR(event), M_U32(event_type), M_U64(event_config), M_U32(precise),
	M_U64(period), M_U64(freq), M_STR(period_mode), M_STR(unit), M_STR(target),
	M_STR(host), M_STR(kernel), M_U64(start_realtime_ns), M_U64(start_mono_ns),
	M_U64(duration_ns), M_U32(nr_cpus),
};

#define S_U64(f) { #f, KV_U64, offsetof(struct profile_stats, f), 8 }
static const struct kv_field stats_fields[] = {
	S_U64(samples), S_U64(filtered), S_U64(dropped_full), S_U64(rearm_lost),
	S_U64(exec_full), S_U64(pids_full), S_U64(sideband_lost), S_U64(rearms),
	S_U64(intervals), S_U64(interval_sum), S_U64(interval_min), S_U64(interval_max),
	{ "interval_sumsq", KV_DBL, offsetof(struct profile_stats, interval_sumsq), 8 },
	S_U64(interval_repeats), S_U64(interval_outside), S_U64(bpf_run_ns), S_U64(bpf_run_cnt),
};

static char *kv_format(const void *obj, const struct kv_field *f, size_t n, size_t *len)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *fp = open_memstream(&buf, &size);

	if (!fp)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *field = (const char *)obj + f[i].off;

		switch (f[i].kind) {
		case KV_STR:
			fprintf(fp, "%s=%.*s\n", f[i].key, (int)f[i].size, field);
			break;
		case KV_U64:
			fprintf(fp, "%s=%" PRIu64 "\n", f[i].key, *(const u64 *)field);
			break;
		case KV_U32:
			fprintf(fp, "%s=%u\n", f[i].key, *(const u32 *)field);
			break;
		case KV_DBL:
			fprintf(fp, "%s=%.17g\n", f[i].key, *(const double *)field);
			break;
		}
	}
	if (fclose(fp)) {
		free(buf);
		return NULL;
	}
	*len = size;
	return buf;
}

/* unknown keys are skipped: a newer minor version may add some */
static int kv_parse(void *obj, const struct kv_field *f, size_t n, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p), *eq;
		size_t linelen;

		if (!nl)
			return -EINVAL;
		linelen = nl - p;
		eq = memchr(p, '=', linelen);
		if (!eq)
			return -EINVAL;
		for (size_t i = 0; i < n; i++) {
			char *field = (char *)obj + f[i].off;
			size_t klen = eq - p, vlen = nl - eq - 1;
			char num[64];

			if (strlen(f[i].key) != klen || memcmp(f[i].key, p, klen))
				continue;
			if (f[i].kind == KV_STR) {
				if (vlen >= f[i].size)
					return -EINVAL;
				memcpy(field, eq + 1, vlen);
				field[vlen] = 0;
				break;
			}
			if (vlen == 0 || vlen >= sizeof(num))
				return -EINVAL;
			memcpy(num, eq + 1, vlen);
			num[vlen] = 0;
			if (f[i].kind == KV_DBL) {
				char *e;

				*(double *)field = strtod(num, &e);
				if (*e)
					return -EINVAL;
			} else {
				u64 v;

				if (parse_u64(num, &v))
					return -EINVAL;
				if (f[i].kind == KV_U32)
					*(u32 *)field = v;
				else
					*(u64 *)field = v;
			}
			break;
		}
		p = nl + 1;
	}
	return 0;
}

/* ---- writing ---- */

struct out_section {
	u32 type;
	const void *data;
	size_t size;
};

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= n;
	}
	return 0;
}

int profile__write(struct profile *p, const char *path)
{
	struct section_desc descs[16];
	struct out_section secs[16];
	struct file_header hdr = {};
	char *meta = NULL, *stats = NULL, *tmp = NULL;
	size_t meta_len = 0, stats_len = 0, nsec = 0;
	u64 off;
	int fd = -1, err;

	profile__finish(p);
	meta = kv_format(&p->meta, meta_fields, ARRAY_SIZE(meta_fields), &meta_len);
	stats = kv_format(&p->stats, stats_fields, ARRAY_SIZE(stats_fields), &stats_len);
	if (!meta || !stats) {
		err = -ENOMEM;
		error("cannot format profile: %s", strerror(-err));
		goto cleanup;
	}
	secs[nsec++] = (struct out_section){ SEC_META, meta, meta_len };
	secs[nsec++] = (struct out_section){ SEC_STATS, stats, stats_len };
	secs[nsec++] = (struct out_section){ SEC_STRINGS, p->strs.buf, p->strs.len };
	secs[nsec++] = (struct out_section){ SEC_SAMPLES, p->samples, p->nr_samples * sizeof(*p->samples) };
	secs[nsec++] = (struct out_section){ SEC_MAPPINGS, p->mappings, p->nr_mappings * sizeof(*p->mappings) };
	secs[nsec++] = (struct out_section){ SEC_COMMS, p->comms, p->nr_comms * sizeof(*p->comms) };
	secs[nsec++] = (struct out_section){ SEC_FORKS, p->forks, p->nr_forks * sizeof(*p->forks) };
	secs[nsec++] = (struct out_section){ SEC_KSYMS, p->ksyms, p->nr_ksyms * sizeof(*p->ksyms) };
	secs[nsec++] = (struct out_section){ SEC_CGROUPS, p->cgroups, p->nr_cgroups * sizeof(*p->cgroups) };

	off = sizeof(hdr) + nsec * sizeof(struct section_desc);
	for (size_t i = 0; i < nsec; i++) {
		descs[i].type = secs[i].type;
		descs[i].offset = off;
		descs[i].size = secs[i].size;
		descs[i].crc = crc32(0, secs[i].data, secs[i].size);
		off += secs[i].size;
	}
	memcpy(hdr.magic, PROFILE_MAGIC, 8);
	hdr.version_major = PROFILE_VERSION_MAJOR;
	hdr.version_minor = PROFILE_VERSION_MINOR;
	hdr.header_size = sizeof(hdr);
	hdr.file_size = off;
	hdr.section_table = sizeof(hdr);
	hdr.nr_sections = nsec;
	hdr.table_crc = crc32(0, (const void *)descs, nsec * sizeof(descs[0]));
	hdr.header_crc = crc32(0, (const void *)&hdr, sizeof(hdr));

	if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0) {
		tmp = NULL;
		err = -ENOMEM;
		error("cannot write '%s': %s", path, strerror(-err));
		goto cleanup;
	}
	fd = mkostemp(tmp, O_CLOEXEC);	/* mode 0600 */
	if (fd < 0) {
		err = -errno;
		error("cannot create '%s': %s", path, strerror(-err));
		free(tmp);
		tmp = NULL;
		goto cleanup;
	}
	err = write_all(fd, &hdr, sizeof(hdr));
	if (!err)
		err = write_all(fd, descs, nsec * sizeof(descs[0]));
	for (size_t i = 0; !err && i < nsec; i++)
		err = write_all(fd, secs[i].data, secs[i].size);
	if (!err && fsync(fd))
		err = -errno;
	if (!err && close(fd))
		err = -errno;
	fd = -1;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		error("cannot write '%s': %s", path, strerror(-err));
cleanup:
	if (fd >= 0)
		close(fd);
	if (err && tmp)
		unlink(tmp);
	free(tmp);
	free(meta);
	free(stats);
	return err;
}

/* ---- reading ---- */

static int bad(const char *name, const char *what)
{
	error("'%s' is corrupt: %s", name, what);
	return -EINVAL;
}

static int take_array(void **dst, size_t *nr, size_t *cap, const void *src, size_t size,
		      size_t elem, const char *name, const char *what)
{
	if (size % elem)
		return bad(name, what);
	if (!size)
		return 0;
	*dst = malloc(size);
	if (!*dst)
		return -ENOMEM;
	memcpy(*dst, src, size);
	*nr = *cap = size / elem;
	return 0;
}

static bool str_ok(const struct profile *p, u32 off)
{
	return off < p->strs.len;
}

static int validate_refs(struct profile *p, const char *name)
{
	if (p->strs.len && p->strs.buf[p->strs.len - 1] != 0)
		return bad(name, "string table is not terminated");
	for (size_t i = 0; i < p->nr_mappings; i++)
		if (!str_ok(p, p->mappings[i].path) || p->mappings[i].build_id_size > BUILD_ID_MAX)
			return bad(name, "mapping refers outside the string table");
	for (size_t i = 0; i < p->nr_comms; i++)
		if (!str_ok(p, p->comms[i].comm))
			return bad(name, "comm refers outside the string table");
	for (size_t i = 0; i < p->nr_ksyms; i++)
		if (!str_ok(p, p->ksyms[i].name))
			return bad(name, "kernel symbol refers outside the string table");
	for (size_t i = 0; i < p->nr_cgroups; i++)
		if (!str_ok(p, p->cgroups[i].path))
			return bad(name, "cgroup refers outside the string table");
	return 0;
}

int profile__parse(const void *buf, size_t size, const char *name, struct profile **out)
{
	const u8 *base = buf;
	struct file_header hdr;
	const struct section_desc *descs;
	struct profile *p = NULL;
	u32 want_crc;
	int err;

	*out = NULL;
	if (size < 8 || memcmp(base, PROFILE_MAGIC, 8)) {
		error("'%s' is not an hsbpf profile", name);
		return -EINVAL;
	}
	if (size < sizeof(hdr)) {
		error("'%s' is truncated: %zu bytes, shorter than the header", name, size);
		return -EINVAL;
	}
	memcpy(&hdr, base, sizeof(hdr));
	if (hdr.version_major > PROFILE_VERSION_MAJOR) {
		error("'%s' has format version %u.%u, newer than this hsbpf reads (%u.%u): upgrade hsbpf",
		      name, hdr.version_major, hdr.version_minor, PROFILE_VERSION_MAJOR,
		      PROFILE_VERSION_MINOR);
		return -EPROTO;
	}
	want_crc = hdr.header_crc;
	hdr.header_crc = 0;
	if (crc32(0, (const void *)&hdr, sizeof(hdr)) != want_crc)
		return bad(name, "header checksum mismatch");
	if (hdr.file_size != size) {
		if (size < hdr.file_size)
			error("'%s' is truncated: %zu of %" PRIu64 " bytes", name, size, (u64)hdr.file_size);
		else
			error("'%s' is corrupt: %zu bytes where the header says %" PRIu64, name, size,
			      (u64)hdr.file_size);
		return -EINVAL;
	}
	if (hdr.header_size < sizeof(hdr) || hdr.nr_sections > MAX_SECTIONS ||
	    hdr.section_table > size ||
	    hdr.nr_sections * sizeof(*descs) > size - hdr.section_table)
		return bad(name, "section table out of bounds");

	descs = (const void *)(base + hdr.section_table);
	if (crc32(0, (const void *)descs, hdr.nr_sections * sizeof(*descs)) != hdr.table_crc)
		return bad(name, "section table checksum mismatch");

	p = profile__new();
	if (!p)
		return -ENOMEM;
	/* drop the "" that profile__new interned; the file's table replaces it */
	p->strs.len = 0;
	p->strs.nused = 0;
	memset(p->strs.slots, 0, p->strs.nslots * sizeof(*p->strs.slots));

	for (u32 i = 0; i < hdr.nr_sections; i++) {
		struct section_desc d;
		const u8 *data;

		memcpy(&d, &descs[i], sizeof(d));
		if (d.offset > size || d.size > size - d.offset) {
			err = bad(name, "section out of bounds");
			goto fail;
		}
		data = base + d.offset;
		if (crc32(0, data, d.size) != d.crc) {
			err = bad(name, "section checksum mismatch");
			goto fail;
		}
		switch (d.type) {
		case SEC_META:
			err = kv_parse(&p->meta, meta_fields, ARRAY_SIZE(meta_fields), (const char *)data, d.size);
			if (err)
				err = bad(name, "bad metadata");
			break;
		case SEC_STATS:
			err = kv_parse(&p->stats, stats_fields, ARRAY_SIZE(stats_fields), (const char *)data, d.size);
			if (err)
				err = bad(name, "bad counters");
			break;
		case SEC_STRINGS:
			if (d.size >= UINT32_MAX) {
				err = bad(name, "string table too large");
				break;
			}
			err = array__reserve((void **)&p->strs.buf, &p->strs.cap, d.size ? d.size : 1, 1);
			if (!err) {
				memcpy(p->strs.buf, data, d.size);
				p->strs.len = d.size;
				err = strtab_rehash(&p->strs, 256);
				while (!err && p->strs.nslots < 2 * (d.size / 2 + 1) && p->strs.nslots < (1u << 26))
					err = strtab_rehash(&p->strs, p->strs.nslots * 2);
			}
			break;
		case SEC_SAMPLES:
			err = take_array((void **)&p->samples, &p->nr_samples, &p->cap_samples, data,
					 d.size, sizeof(*p->samples), name, "sample table size");
			break;
		case SEC_MAPPINGS:
			err = take_array((void **)&p->mappings, &p->nr_mappings, &p->cap_mappings, data,
					 d.size, sizeof(*p->mappings), name, "mapping table size");
			break;
		case SEC_COMMS:
			err = take_array((void **)&p->comms, &p->nr_comms, &p->cap_comms, data,
					 d.size, sizeof(*p->comms), name, "comm table size");
			break;
		case SEC_FORKS:
			err = take_array((void **)&p->forks, &p->nr_forks, &p->cap_forks, data,
					 d.size, sizeof(*p->forks), name, "fork table size");
			break;
		case SEC_KSYMS:
			err = take_array((void **)&p->ksyms, &p->nr_ksyms, &p->cap_ksyms, data,
					 d.size, sizeof(*p->ksyms), name, "kernel symbol table size");
			break;
		case SEC_CGROUPS:
			err = take_array((void **)&p->cgroups, &p->nr_cgroups, &p->cap_cgroups, data,
					 d.size, sizeof(*p->cgroups), name, "cgroup table size");
			break;
		default:
			err = 0;	/* a newer minor version's section */
			break;
		}
		if (err)
			goto fail;
	}
	if (p->strs.len == 0 && profile__intern(p, "") < 0) {
		err = -ENOMEM;
		goto fail;
	}
	err = validate_refs(p, name);
	if (err)
		goto fail;
	profile__finish(p);
	*out = p;
	return 0;
fail:
	if (err == -ENOMEM)
		error("cannot read '%s': %s", name, strerror(ENOMEM));
	profile__free(p);
	return err;
}

int profile__read(const char *path, struct profile **out)
{
	struct stat st;
	void *buf = NULL;
	size_t got = 0;
	int fd, err;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		error("cannot open '%s': %s", path, strerror(-err));
		return err;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		error("cannot stat '%s': %s", path, strerror(-err));
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		error("'%s' is not a regular file", path);
		goto cleanup;
	}
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf) {
		err = -ENOMEM;
		error("cannot read '%s': %s", path, strerror(-err));
		goto cleanup;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, (char *)buf + got, st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			error("cannot read '%s': %s", path, strerror(-err));
			goto cleanup;
		}
		got += n;
	}
	err = profile__parse(buf, got, path, out);
cleanup:
	free(buf);
	close(fd);
	return err;
}
