// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* perf.data, read field by field with bounds checks: the header and its sections, each
 * attribute (however old its size) with its ids, records with sample_id_all trailers, samples
 * up to the branch stack (with or without the hardware index), HEADER_BUILD_ID (and the
 * build-ids of --buildid-mmap's records) and HEADER_OSRELEASE. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/file_format.h"
#include "record/perf_data.h"

#define PERF_MAGIC2 0x32454c4946524550ull	/* "PERFILE2" */
#define HEADER_BUILD_ID 2
#define HEADER_OSRELEASE 4
#ifndef PERF_RECORD_MISC_BUILD_ID_SIZE
#define PERF_RECORD_MISC_BUILD_ID_SIZE (1 << 15)
#endif
#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1 << 14)
#endif

struct section {
	u64 offset, size;
};

struct file_header {
	u64 magic, size, attr_size;
	struct section attrs, data, event_types;
	u64 features[4];
};
_Static_assert(sizeof(struct file_header) == 104, "perf file header");

struct attr_entry {
	struct perf_event_attr attr;
	u64 *ids;
	size_t nr_ids;
};

struct reader {
	const u8 *base;
	size_t size;
	const char *name;
	struct attr_entry *attrs;
	size_t nr_attrs;
	const struct perf_data_callbacks *cb;
	struct perf_data_stats *st;
	bool build_ids;		/* an attribute asked for build-ids in mmap records */
	struct perf_branch branches[PERF_DATA_MAX_BRANCHES];
	u64 callchain[PERF_DATA_MAX_CALLCHAIN];
	u64 regs[64];
};

/* a cursor over one record */
struct cur {
	const u8 *p, *end;
	bool bad;
};

static u64 rd64(struct cur *c)
{
	u64 v = 0;

	if (c->end - c->p < 8) {
		c->bad = true;
		c->p = c->end;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

static u32 rd32(struct cur *c)
{
	u32 v = 0;

	if (c->end - c->p < 4) {
		c->bad = true;
		c->p = c->end;
		return 0;
	}
	memcpy(&v, c->p, 4);
	c->p += 4;
	return v;
}

static void skip(struct cur *c, u64 n)
{
	if ((u64)(c->end - c->p) < n) {
		c->bad = true;
		c->p = c->end;
		return;
	}
	c->p += n;
}

static bool in_file(const struct reader *r, const struct section *s)
{
	return s->offset <= r->size && s->size <= r->size - s->offset;
}

static int bad(const struct reader *r, const char *what)
{
	return file_format__bad(r->name, what);
}

static const struct attr_entry *attr_by_id(const struct reader *r, u64 id)
{
	if (r->nr_attrs == 1)
		return &r->attrs[0];
	for (size_t i = 0; i < r->nr_attrs; i++)
		for (size_t j = 0; j < r->attrs[i].nr_ids; j++)
			if (r->attrs[i].ids[j] == id)
				return &r->attrs[i];
	return NULL;
}

/* which attribute a sample belongs to: IDENTIFIER first, else ID after the fixed fields */
static const struct attr_entry *sample_attr(const struct reader *r, const u8 *p, const u8 *end)
{
	u64 st = r->attrs[0].attr.sample_type, id;
	struct cur c = { p, end, false };

	if (r->nr_attrs == 1)
		return &r->attrs[0];
	if (st & PERF_SAMPLE_IDENTIFIER)
		return attr_by_id(r, rd64(&c));
	if (!(st & PERF_SAMPLE_ID))
		return NULL;
	if (st & PERF_SAMPLE_IP)
		skip(&c, 8);
	if (st & PERF_SAMPLE_TID)
		skip(&c, 8);
	if (st & PERF_SAMPLE_TIME)
		skip(&c, 8);
	if (st & PERF_SAMPLE_ADDR)
		skip(&c, 8);
	id = rd64(&c);
	return c.bad ? NULL : attr_by_id(r, id);
}

static void read_values(struct cur *c, u64 fmt)
{
	u64 nr = 1;

	if (fmt & PERF_FORMAT_GROUP)
		nr = rd64(c);
	else
		skip(c, 8);	/* value */
	if (fmt & PERF_FORMAT_TOTAL_TIME_ENABLED)
		skip(c, 8);
	if (fmt & PERF_FORMAT_TOTAL_TIME_RUNNING)
		skip(c, 8);
	if (fmt & PERF_FORMAT_GROUP) {
		u64 each = 8 + !!(fmt & PERF_FORMAT_ID) * 8 + !!(fmt & (1u << 4) /* LOST */) * 8;

		if (nr > 1024)
			c->bad = true;
		else
			skip(c, nr * each);
	} else {
		if (fmt & PERF_FORMAT_ID)
			skip(c, 8);
		if (fmt & (1u << 4))
			skip(c, 8);
	}
}

static int parse_sample(struct reader *r, const struct perf_event_header *h, const u8 *p, const u8 *end)
{
	const struct attr_entry *a = sample_attr(r, p, end);
	struct perf_sample s = { .misc = h->misc };
	struct cur c = { p, end, false };
	u64 st;

	if (!a)
		return bad(r, "a sample matches no attribute");
	st = a->attr.sample_type;
	s.attr = &a->attr;
	if (st & PERF_SAMPLE_IDENTIFIER)
		skip(&c, 8);
	if (st & PERF_SAMPLE_IP)
		s.ip = rd64(&c);
	if (st & PERF_SAMPLE_TID) {
		s.pid = rd32(&c);
		s.tid = rd32(&c);
	}
	if (st & PERF_SAMPLE_TIME)
		s.time = rd64(&c);
	if (st & PERF_SAMPLE_ADDR)
		skip(&c, 8);
	if (st & PERF_SAMPLE_ID)
		s.id = rd64(&c);
	if (st & PERF_SAMPLE_STREAM_ID)
		skip(&c, 8);
	if (st & PERF_SAMPLE_CPU) {
		s.cpu = rd32(&c);
		skip(&c, 4);
	}
	s.period = (st & PERF_SAMPLE_PERIOD) ? rd64(&c) : a->attr.sample_period;
	if (st & PERF_SAMPLE_READ)
		read_values(&c, a->attr.read_format);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		u64 nr = rd64(&c);

		if (nr > PERF_DATA_MAX_CALLCHAIN || nr > (u64)(c.end - c.p) / 8) {
			c.bad = true;
		} else {
			for (u64 i = 0; i < nr; i++)
				r->callchain[i] = rd64(&c);
			s.nr_callchain = nr;
			s.callchain = r->callchain;
		}
	}
	if (st & PERF_SAMPLE_RAW)
		skip(&c, rd32(&c));
	if (st & PERF_SAMPLE_BRANCH_STACK) {
		u64 nr = rd64(&c);

		if (a->attr.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
			skip(&c, 8);
		if (nr > PERF_DATA_MAX_BRANCHES || nr > (u64)(c.end - c.p) / 24) {
			c.bad = true;
		} else {
			for (u64 i = 0; i < nr; i++) {
				r->branches[i].from = rd64(&c);
				r->branches[i].to = rd64(&c);
				r->branches[i].flags = rd64(&c);
			}
			s.nr_branches = nr;
			s.branches = r->branches;
		}
	}
	/* the register and stack copies come last of what is read here: when they are damaged
	 * the sample is still good, its copy is not (said in copy_err) */
	if ((st & PERF_SAMPLE_REGS_USER) && !c.bad) {
		u64 nr = __builtin_popcountll(a->attr.sample_regs_user);

		s.regs_abi = rd64(&c);
		if (c.bad) {
			c.bad = false;
			s.copy_err = PERF_COPY_SHORT_REGS;
		} else if (s.regs_abi && nr > (u64)(c.end - c.p) / 8) {
			s.regs_abi = 0;
			s.copy_err = PERF_COPY_SHORT_REGS;
		} else if (s.regs_abi) {
			for (u64 i = 0; i < nr; i++)
				r->regs[i] = rd64(&c);
			s.nr_regs = nr;
			s.regs = r->regs;
		}
	}
	if ((st & PERF_SAMPLE_STACK_USER) && !c.bad && !s.copy_err) {
		u64 size = rd64(&c), left = c.end - c.p;

		if (c.bad || (size && (left < 8 || size > left - 8))) {
			c.bad = false;
			s.copy_err = PERF_COPY_SHORT_STACK;
		} else if (size) {
			const u8 *data = c.p;
			u64 dyn;

			skip(&c, size);
			dyn = rd64(&c);
			if (dyn > size) {
				s.copy_err = PERF_COPY_DYN_SIZE;
			} else {
				s.stack = data;
				s.stack_size = dyn;
			}
		}
	}
	if (c.bad)
		return bad(r, "a sample is shorter than its fields");
	r->st->samples++;
	return r->cb->sample ? r->cb->sample(r->cb->ctx, &s) : 0;
}

/* the sample_id_all trailer of a non-sample record: its time */
static u64 trailer_time(const struct reader *r, const u8 *end, const u8 *min)
{
	const struct perf_event_attr *a = &r->attrs[0].attr;
	u64 st = a->sample_type, n = 0, time_at = 0;

	if (!a->sample_id_all)
		return 0;
	if (st & PERF_SAMPLE_TID)
		n++;
	if (st & PERF_SAMPLE_TIME)
		time_at = ++n;
	n += !!(st & PERF_SAMPLE_ID) + !!(st & PERF_SAMPLE_STREAM_ID) + !!(st & PERF_SAMPLE_CPU) +
	     !!(st & PERF_SAMPLE_IDENTIFIER);
	if (!time_at || (u64)(end - min) < n * 8)
		return 0;
	u64 t;

	memcpy(&t, end - n * 8 + (time_at - 1) * 8, 8);
	return t;
}

static const char *str_in(const u8 *p, const u8 *end)
{
	return p < end && memchr(p, 0, end - p) ? (const char *)p : NULL;
}

static int parse_record(struct reader *r, const struct perf_event_header *h, const u8 *p, const u8 *end)
{
	const struct perf_data_callbacks *cb = r->cb;
	struct cur c = { p, end, false };

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		return parse_sample(r, h, p, end);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		u32 pid = rd32(&c), prot = 4;
		u64 start, len, pgoff;
		const u8 *id = NULL;
		const char *path;
		u8 id_len = 0;

		rd32(&c);
		start = rd64(&c);
		len = rd64(&c);
		pgoff = rd64(&c);
		if (h->type == PERF_RECORD_MMAP2) {
			/* maj, min, ino, generation, or (--buildid-mmap) the build-id: its size,
			 * 3 reserved bytes, 20 of id. The kernel shares the record among its
			 * listeners and leaves the flag set after one that asked for build-ids:
			 * a recording that did not ask (no attr.build_id) has maj/min/ino there */
			if ((h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) && r->build_ids && c.end - c.p >= 24 &&
			    c.p[0] && c.p[0] <= 20 && !c.p[1] && !c.p[2] && !c.p[3]) {
				id_len = c.p[0];
				id = c.p + 4;
			}
			skip(&c, 24);
			prot = rd32(&c);
			rd32(&c);
		}
		path = c.bad ? NULL : str_in(c.p, end);
		if (!path)
			return bad(r, "an mmap record is malformed");
		r->st->mmaps++;
		/* the kernel's text, where it was (perf synthesizes it, pid -1) */
		if (pid == (u32)-1 && !strncmp(path, "[kernel.kallsyms]", 17)) {
			r->st->kernel_map = true;
			r->st->kernel_start = start;
		}
		if (id_len && cb->build_id) {
			int err = cb->build_id(cb->ctx, path, id, id_len);

			if (err)
				return err;
		}
		if (!(prot & 4) || !cb->mmap)
			return 0;
		return cb->mmap(cb->ctx, pid, start, len, pgoff, path, trailer_time(r, end, c.p));
	}
	case PERF_RECORD_COMM: {
		u32 pid = rd32(&c), tid = rd32(&c);
		const char *comm = c.bad ? NULL : str_in(c.p, end);
		bool exec = h->misc & PERF_RECORD_MISC_COMM_EXEC;

		if (!comm)
			return bad(r, "a comm record is malformed");
		r->st->comms++;
		if ((pid != tid && !exec) || !cb->comm)
			return 0;
		return cb->comm(cb->ctx, pid, comm, exec, trailer_time(r, end, c.p));
	}
	case PERF_RECORD_FORK: {
		u32 pid = rd32(&c), ppid = rd32(&c), tid = rd32(&c);
		u64 time;

		rd32(&c);
		time = rd64(&c);
		if (c.bad)
			return bad(r, "a fork record is malformed");
		r->st->forks++;
		if (pid != tid || pid == ppid || !cb->fork)
			return 0;
		return cb->fork(cb->ctx, pid, ppid, time);
	}
	case PERF_RECORD_LOST:
		rd64(&c);
		r->st->lost += rd64(&c);
		return c.bad ? bad(r, "a lost record is malformed") : 0;
	default:
		r->st->unknown++;	/* not needed here; sizes keep the walk in step */
		return 0;
	}
}

static int parse_build_ids(struct reader *r, const struct section *s)
{
	const u8 *p = r->base + s->offset, *end = p + s->size;

	while (end - p >= (ptrdiff_t)sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		const char *path;
		size_t len = 20;
		u8 id[24];

		memcpy(&h, p, sizeof(h));
		if (h.size < sizeof(h) + 4 + 24 || h.size > end - p)
			return bad(r, "a build-id record is malformed");
		memcpy(id, p + sizeof(h) + 4, 24);
		path = str_in(p + sizeof(h) + 28, p + h.size);
		if (!path)
			return bad(r, "a build-id record has no file name");
		if (h.misc & PERF_RECORD_MISC_BUILD_ID_SIZE) {
			len = id[20] <= 20 ? id[20] : 20;
		} else {
			/* older files pad shorter ids (lld's 8-byte ones) with zeros */
			bool zero = true;

			for (int i = 8; i < 20; i++)
				zero &= !id[i];
			if (zero)
				len = 8;
		}
		r->st->build_ids++;
		if (r->cb->build_id) {
			int err = r->cb->build_id(r->cb->ctx, path, id, len);

			if (err)
				return err;
		}
		p += h.size;
	}
	return 0;
}

static int parse_attrs(struct reader *r, const struct file_header *fh)
{
	size_t n, attr_part;

	if (fh->attr_size < 16 + 64 || fh->attr_size > 4096 || fh->attrs.size % fh->attr_size)
		return bad(r, "attribute size");
	n = fh->attrs.size / fh->attr_size;
	if (!n || n > 256)
		return bad(r, "attribute count");
	r->attrs = calloc(n, sizeof(*r->attrs));
	if (!r->attrs)
		return -ENOMEM;
	attr_part = fh->attr_size - 16;
	for (size_t i = 0; i < n; i++) {
		const u8 *e = r->base + fh->attrs.offset + i * fh->attr_size;
		struct section ids;

		memcpy(&r->attrs[i].attr, e, attr_part < sizeof(struct perf_event_attr) ?
		       attr_part : sizeof(struct perf_event_attr));
		memcpy(&ids, e + attr_part, sizeof(ids));
		/* fields a shorter (older) attribute did not have stay zero */
		if (attr_part < offsetof(struct perf_event_attr, branch_sample_type) + 8)
			r->attrs[i].attr.branch_sample_type = 0;
		if (!in_file(r, &ids) || ids.size % 8)
			return bad(r, "attribute ids out of bounds");
		r->attrs[i].nr_ids = ids.size / 8;
		r->attrs[i].ids = calloc(r->attrs[i].nr_ids + 1, 8);
		if (!r->attrs[i].ids)
			return -ENOMEM;
		memcpy(r->attrs[i].ids, r->base + ids.offset, ids.size);
		r->build_ids |= r->attrs[i].attr.build_id;
		r->nr_attrs++;
	}
	r->st->nr_attrs = r->nr_attrs;
	return 0;
}

/* the header, from the file's first head_len bytes, against the file's size */
static int check_header(const void *head, size_t head_len, u64 size, const char *name,
			struct file_header *fh)
{
	const struct reader r = { .size = size };

	if (head_len < 8 || memcmp(head, "PERFILE2", 8)) {
		if (head_len >= 8 && !memcmp(head, "PERFFILE", 8))
			return fail(-EINVAL, "'%s' is a version 1 perf.data file: not supported", name);
		return fail(-EINVAL, "'%s' is not a perf.data file", name);
	}
	if (head_len < sizeof(*fh))
		return fail(-EINVAL, "'%s' is truncated: %" PRIu64 " bytes, shorter than the header",
			    name, size);
	memcpy(fh, head, sizeof(*fh));
	if (fh->size == 16)
		return fail(-EINVAL, "'%s' was written to a pipe (perf record -o -): not supported", name);
	if (fh->size < sizeof(*fh) || !in_file(&r, &fh->attrs) || !in_file(&r, &fh->data))
		return fail(-EINVAL, "'%s' is truncated or corrupt: its sections lie outside the file", name);
	return 0;
}

enum { PASS_ALL, PASS_HISTORY, PASS_SAMPLES };

/* the data section's records, all of them or one pass's */
static int parse_data(struct reader *r, const struct file_header *fh, int pass)
{
	const u8 *p = r->base + fh->data.offset, *end = p + fh->data.size;
	int err = 0;

	while (!err && end - p >= (ptrdiff_t)sizeof(struct perf_event_header)) {
		struct perf_event_header h;

		memcpy(&h, p, sizeof(h));
		if (h.size < sizeof(h) || h.size > end - p)
			return bad(r, "a record's size runs past the data section");
		if (pass == PASS_ALL || (pass == PASS_SAMPLES) == (h.type == PERF_RECORD_SAMPLE))
			err = parse_record(r, &h, p + sizeof(h), p + h.size);
		p += h.size;
	}
	return err;
}

/* feature index feat's section (sections follow the data, one per set bit, in bit order):
 * 0 and *fs set, 1 without the feature, or -EINVAL after reporting */
static int feature_section(const struct reader *r, const struct file_header *fh, int feat,
			   struct section *fs)
{
	size_t at = fh->data.offset + fh->data.size;
	int before = __builtin_popcountll(fh->features[0] & ((1ull << feat) - 1));

	if (!((fh->features[0] >> feat) & 1))
		return 1;
	if (at > r->size || (r->size - at) / sizeof(*fs) <= (size_t)before)
		return fail(-EINVAL, "'%s' is truncated: its feature sections are missing", r->name);
	memcpy(fs, r->base + at + before * sizeof(*fs), sizeof(*fs));
	return in_file(r, fs) ? 0 : bad(r, "a feature section is out of bounds");
}

/* HEADER_OSRELEASE: a perf string (u32 length, then the text padded with NULs) */
static int parse_os_release(struct reader *r, const struct section *s)
{
	const u8 *p = r->base + s->offset;
	u32 len;

	if (s->size < 4)
		return bad(r, "the os release section is malformed");
	memcpy(&len, p, 4);
	if (len > s->size - 4)
		return bad(r, "the os release section is malformed");
	snprintf(r->st->os_release, sizeof(r->st->os_release), "%.*s", (int)strnlen((const char *)p + 4, len),
		 (const char *)p + 4);
	return 0;
}

static int parse_features(struct reader *r, const struct file_header *fh)
{
	struct section fs;
	int err = feature_section(r, fh, HEADER_OSRELEASE, &fs);

	if (!err)
		err = parse_os_release(r, &fs);
	if (err < 0)
		return err;
	err = feature_section(r, fh, HEADER_BUILD_ID, &fs);
	return err ? (err < 0 ? err : 0) : parse_build_ids(r, &fs);
}

int perf_data__parse(const void *buf, size_t size, const char *name,
		     const struct perf_data_callbacks *cb, struct perf_data_stats *st)
{
	struct reader r = { .base = buf, .size = size, .name = name, .cb = cb, .st = st };
	struct file_header fh;
	bool two_pass;
	int err = 0;

	memset(st, 0, sizeof(*st));
	err = check_header(buf, size < sizeof(fh) ? size : sizeof(fh), size, name, &fh);
	if (err)
		return err;
	err = parse_attrs(&r, &fh);
	if (err)
		goto out;
	two_pass = cb->history_first;
	if (two_pass) {
		err = parse_data(&r, &fh, PASS_HISTORY);
		if (!err)
			err = parse_features(&r, &fh);
		if (!err && cb->samples_begin)
			err = cb->samples_begin(cb->ctx);
		if (!err)
			err = parse_data(&r, &fh, PASS_SAMPLES);
	} else {
		err = parse_data(&r, &fh, PASS_ALL);
		if (!err)
			err = parse_features(&r, &fh);
	}
out:
	for (size_t i = 0; i < r.nr_attrs; i++)
		free(r.attrs[i].ids);
	free(r.attrs);
	return err;
}

/* the header before the file is read whole: a large file that is no perf.data costs nothing */
static int check_head(int fd, u64 size, const char *name, const void *arg)
{
	struct file_header fh;
	u8 head[sizeof(fh)];
	ssize_t n;

	(void)arg;
	n = pread(fd, head, sizeof(head), 0);
	if (n < 0) {
		n = -errno;
		return fail((int)n, "cannot read '%s': %s", name, strerror(-n));
	}
	return check_header(head, n, size, name, &fh);
}

int perf_data__read(const char *path, const struct perf_data_callbacks *cb, struct perf_data_stats *st)
{
	size_t size;
	void *buf;
	int err = file_format__read_file(path, check_head, NULL, &buf, &size);

	if (err)
		return err;
	err = perf_data__parse(buf, size, path, cb, st);
	free(buf);
	return err;
}
