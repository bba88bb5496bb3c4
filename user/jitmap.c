// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Perf map files: parsed line by line (a bad line is counted and skipped, never fatal), read
 * again only when their size or time changes, opened without following links and only when
 * they are regular files (DIR is world-writable). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "jitmap.h"

struct seen {
	u32 pid;
	u64 size;
	u64 mtime_ns;
	u64 ino;
	u64 malformed;	/* in the last read */
};

struct jitmaps {
	char dir[PATH_MAX];
	struct seen *seen;
	size_t nr_seen, cap_seen;
};

/* a hex number ("0x" optional) ended by a blank; false if none */
static bool hex_field(const char **s, const char *end, u64 *v)
{
	const char *p = *s;
	u64 x = 0;
	int digits = 0;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; p < end && isxdigit((unsigned char)*p); p++, digits++) {
		if (x >> 60)
			return false;	/* more than 64 bits */
		x = x << 4 | (u64)(isdigit((unsigned char)*p) ? *p - '0' : (tolower(*p) - 'a' + 10));
	}
	if (!digits || p >= end || (*p != ' ' && *p != '\t'))
		return false;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	*s = p;
	*v = x;
	return true;
}

int jitmap__parse(struct profile *p, u32 pid, u64 time_ns, const char *buf, size_t len,
		  struct jitmap_stats *st)
{
	const char *end = buf + len;
	u32 line = 0;
	char name[4096];

	for (const char *s = buf; s < end; line++) {
		const char *nl = memchr(s, '\n', end - s), *e = nl ? nl : end, *q = s;
		u64 start, size;
		size_t n;
		int err;

		while (e > q && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (e == q) {		/* an empty line */
			s = nl ? nl + 1 : end;
			continue;
		}
		if (!hex_field(&q, e, &start) || !hex_field(&q, e, &size) || q >= e || !size ||
		    size > UINT32_MAX || start + size < start || memchr(q, '\0', e - q)) {
			st->malformed++;
			s = nl ? nl + 1 : end;
			continue;
		}
		n = e - q < (long)sizeof(name) ? (size_t)(e - q) : sizeof(name) - 1;
		memcpy(name, q, n);
		name[n] = '\0';
		err = profile__add_jitsym(p, pid, start, size, name, line, time_ns);
		if (err)
			return err;
		st->syms++;
		s = nl ? nl + 1 : end;
	}
	return 0;
}

struct jitmaps *jitmaps__new(const char *dir)
{
	struct jitmaps *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	snprintf(j->dir, sizeof(j->dir), "%s", dir ? dir : JITMAP_DIR);
	return j;
}

void jitmaps__free(struct jitmaps *j)
{
	if (!j)
		return;
	free(j->seen);
	free(j);
}

static struct seen *seen_of(struct jitmaps *j, u32 pid, bool add)
{
	for (size_t i = 0; i < j->nr_seen; i++)
		if (j->seen[i].pid == pid)
			return &j->seen[i];
	if (!add || array__reserve((void **)&j->seen, &j->cap_seen, j->nr_seen + 1, sizeof(*j->seen)))
		return NULL;
	j->seen[j->nr_seen] = (struct seen){ .pid = pid };
	return &j->seen[j->nr_seen++];
}

int jitmaps__read(struct jitmaps *j, struct profile *p, u32 pid, u64 time_ns)
{
	char path[PATH_MAX + 32];
	struct jitmap_stats st = {};
	struct stat sb;
	struct seen *seen;
	char *buf = NULL;
	size_t len = 0, want;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/perf-%u.map", j->dir, pid);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(sb.st_mode)) {
		warning("'%s' is not a regular file: its JIT symbols are not read", path);
		err = -EINVAL;
		goto out;
	}
	seen = seen_of(j, pid, true);
	if (!seen) {
		err = -ENOMEM;
		goto out;
	}
	if (seen->size == (u64)sb.st_size && seen->ino == sb.st_ino &&
	    seen->mtime_ns == (u64)sb.st_mtim.tv_sec * 1000000000ull + sb.st_mtim.tv_nsec)
		goto out;	/* as it was */
	want = sb.st_size < JITMAP_MAX_SIZE ? sb.st_size : JITMAP_MAX_SIZE;
	buf = malloc(want + 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	while (len < want) {
		ssize_t n = read(fd, buf + len, want - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto out;
		}
		if (!n)
			break;
		len += n;
	}
	if (len == JITMAP_MAX_SIZE)
		warning("'%s' is larger than %u MB: the rest is not read", path, JITMAP_MAX_SIZE >> 20);
	/* a last line without its newline may be one still being written: not taken, and
	 * counted as malformed unless a later read finds it complete */
	if (len && buf[len - 1] != '\n') {
		char *last = memrchr(buf, '\n', len);

		len = last ? (size_t)(last - buf + 1) : 0;
		st.malformed++;
	}
	profile__drop_jitsyms(p, pid);
	err = jitmap__parse(p, pid, time_ns, buf, len, &st);
	if (err)
		goto out;
	if (!seen->size && !seen->ino)
		p->stats.jit_maps++;
	p->stats.jit_malformed += st.malformed - seen->malformed;
	seen->malformed = st.malformed;
	seen->size = sb.st_size;
	seen->ino = sb.st_ino;
	seen->mtime_ns = (u64)sb.st_mtim.tv_sec * 1000000000ull + sb.st_mtim.tv_nsec;
	p->stats.jit_syms = p->nr_jitsyms;
	profile__sort_jitsyms(p);
out:
	free(buf);
	close(fd);
	return err;
}

int jitmaps__scan(struct jitmaps *j, struct profile *p, u64 time_ns)
{
	DIR *d = opendir(j->dir);
	struct dirent *e;
	int err = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		unsigned pid;
		int n = 0;

		if (sscanf(e->d_name, "perf-%u.map%n", &pid, &n) == 1 && n && !e->d_name[n] &&
		    jitmaps__read(j, p, pid, time_ns) == -ENOMEM) {
			err = -ENOMEM;
			break;
		}
	}
	closedir(d);
	return err;
}
