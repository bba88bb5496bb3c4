// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unwind tables kept in the build-id cache (table_cache.h). A file: a head (magic, checksum,
 * counts, segments, the build's statistics), then the rows, the pages and the 256-byte
 * chunks' indexes as the table holds them. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib/hashidx.h"
#include "symbols/build_id.h"
#include "symbols/buildid_cache.h"
#include "unwind/table_cache.h"
#include "unwind/unwind_table.h"

#define TABLE_MAGIC	"HSBUNWT1"
#define TABLE_MAX_ROWS	(1ull << 28)

struct table_head {
	char magic[8];
	u64 checksum;		/* of every byte after it */
	u32 nr_segs, has_subs;
	u64 base, end, nr_rows, nr_pages;
	struct unwind_segment segs[UNWIND_MAX_SEGMENTS];
	struct unwind_table_stats st;
	u32 pad;
};

_Static_assert(sizeof(struct table_head) % 8 == 0, "rows follow the head aligned");

static u64 checksum(const u8 *buf, size_t size)
{
	size_t from = offsetof(struct table_head, checksum) + sizeof(u64);

	return hashidx__hash(buf + from, size - from, 0x6873627075776e74ull);
}

int table_cache__encode(const struct unwind_table *t, u8 **out, size_t *size)
{
	size_t rows = t->nr_rows * sizeof(*t->rows), pages = t->nr_pages * sizeof(*t->pages);
	size_t subs = t->subs ? t->nr_pages * sizeof(*t->subs) : 0;
	struct table_head h = {
		.nr_segs = t->nr_segs, .has_subs = t->subs != NULL, .base = t->base, .end = t->end,
		.nr_rows = t->nr_rows, .nr_pages = t->nr_pages, .st = t->st,
	};
	u8 *buf;

	*size = sizeof(h) + rows + pages + subs;
	buf = malloc(*size);
	if (!buf)
		return -ENOMEM;
	memcpy(h.magic, TABLE_MAGIC, sizeof(h.magic));
	memcpy(h.segs, t->segs, sizeof(h.segs));
	memcpy(buf, &h, sizeof(h));
	if (rows)
		memcpy(buf + sizeof(h), t->rows, rows);
	if (pages)
		memcpy(buf + sizeof(h) + rows, t->pages, pages);
	if (subs)
		memcpy(buf + sizeof(h) + rows + pages, t->subs, subs);
	h.checksum = checksum(buf, *size);
	memcpy(buf + offsetof(struct table_head, checksum), &h.checksum, sizeof(h.checksum));
	*out = buf;
	return 0;
}

/* what the kernel's unwinder and unwind_table__find rely on: rows in pc order, each page's
 * rows among them, each chunk's first row within its page's */
static bool consistent(const struct unwind_table *t)
{
	if (t->end < t->base || t->nr_pages != (t->end - t->base + 4095) / 4096)
		return false;
	for (size_t i = 1; i < t->nr_rows; i++)
		if (t->rows[i].pc < t->rows[i - 1].pc)
			return false;
	for (size_t p = 0; p < t->nr_pages; p++) {
		const struct unwind_page *pg = &t->pages[p];

		if ((u64)pg->first + pg->nr > t->nr_rows)
			return false;
		for (u32 k = 0; t->subs && k < HSBPF_UNWIND_SUBS; k++)
			if (t->subs[p].first[k] >= (pg->nr ? pg->nr : 1))
				return false;
	}
	return true;
}

int table_cache__decode(const u8 *buf, size_t size, struct unwind_table **out)
{
	struct unwind_table *t = NULL;
	struct table_head h;
	size_t rows, pages, subs;
	int err = -EBADMSG;

	*out = NULL;
	if (size < sizeof(h))
		return -EBADMSG;
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, TABLE_MAGIC, sizeof(h.magic)) || h.nr_segs > UNWIND_MAX_SEGMENTS ||
	    h.has_subs > 1 || h.nr_rows > TABLE_MAX_ROWS || h.nr_pages > TABLE_MAX_ROWS)
		return -EBADMSG;
	rows = h.nr_rows * sizeof(*t->rows);
	pages = h.nr_pages * sizeof(*t->pages);
	subs = h.has_subs ? h.nr_pages * sizeof(*t->subs) : 0;
	if (size != sizeof(h) + rows + pages + subs || checksum(buf, size) != h.checksum)
		return -EBADMSG;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	memcpy(t->segs, h.segs, sizeof(t->segs));
	t->nr_segs = h.nr_segs;
	t->base = h.base;
	t->end = h.end;
	t->nr_rows = h.nr_rows;
	t->nr_pages = h.nr_pages;
	t->st = h.st;
	t->rows = malloc(rows ? rows : 1);
	t->pages = malloc(pages ? pages : 1);
	t->subs = h.has_subs ? malloc(subs ? subs : 1) : NULL;
	if (!t->rows || !t->pages || (h.has_subs && !t->subs)) {
		err = -ENOMEM;
		goto fail;
	}
	memcpy(t->rows, buf + sizeof(h), rows);
	memcpy(t->pages, buf + sizeof(h) + rows, pages);
	if (subs)
		memcpy(t->subs, buf + sizeof(h) + rows + pages, subs);
	if (!consistent(t))
		goto fail;
	*out = t;
	return 0;
fail:
	unwind_table__free(t);
	return err;
}

/* "unwind-" and this hsbpf's build-id: another build's tables are not ours to trust; NULL
 * when it cannot be read (then nothing is kept) */
static char kind[64];
static pthread_once_t kind_once = PTHREAD_ONCE_INIT;

static void read_kind(void)
{
	u8 id[BUILD_ID_MAX];
	char hex[2 * BUILD_ID_MAX + 1];
	size_t len;

	if (build_id__read("/proc/self/exe", id, sizeof(id), &len) || !len)
		return;
	build_id__hex(id, len, hex, sizeof(hex));
	snprintf(kind, sizeof(kind), "unwind-%.16s", hex);
}

static const char *table_kind(void)
{
	pthread_once(&kind_once, read_kind);
	return kind[0] ? kind : NULL;
}

int table_cache__load(const char *dir, const u8 *id, size_t len, struct unwind_table **out)
{
	const char *k = table_kind();
	char path[4096];
	struct stat st;
	void *map = MAP_FAILED;
	int fd = -1, err;

	*out = NULL;
	if (!k || !len)
		return -ENOENT;
	err = buildid_cache__find(dir, id, len, k, path, sizeof(path));
	if (err)
		return err;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) || (size_t)st.st_size < sizeof(struct table_head)) {
		err = -EBADMSG;
		goto out;
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		err = -errno;
		goto out;
	}
	err = table_cache__decode(map, st.st_size, out);
out:
	/* a damaged file goes: the table built instead is kept in its place */
	if (err == -EBADMSG)
		unlink(path);
	if (map != MAP_FAILED)
		munmap(map, st.st_size);
	close(fd);
	return err;
}

int table_cache__store(const char *dir, const u8 *id, size_t len, const struct unwind_table *t)
{
	const char *k = table_kind();
	u8 *buf = NULL;
	size_t size, done = 0;
	u64 added;
	int fd = -1, err;

	if (!k || !len)
		return -ENOENT;
	err = table_cache__encode(t, &buf, &size);
	if (err)
		return err;
	fd = memfd_create("hsbpf-unwind-table", MFD_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	while (done < size) {
		ssize_t n = write(fd, buf + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			goto out;
		}
		done += n;
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		err = -errno;
		goto out;
	}
	err = buildid_cache__add_fd(dir, id, len, k, fd, &added);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return err;
}
