// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* debuginfod through libdebuginfod. The client reads its servers from DEBUGINFOD_URLS at
 * each query, and libdwfl asks them on its own whenever that variable is set, with no word
 * and no limit we choose: so the variable is taken out of the environment at setup and put
 * back only around our own queries. One process-wide client, as the variable is too. The
 * library is opened only when there is a server to ask: linked, it would load curl and its
 * TLS libraries into every command (a tenth of a short report's time). */
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "symbols/build_id.h"
#include "symbols/buildid_cache.h"
#include "symbols/debuginfod.h"

struct miss {
	u8 id[BUILD_ID_MAX];
	u8 len;
	bool exec;
};

typedef int (*find_fn)(debuginfod_client *, const unsigned char *, int, char **);

static struct {
	void *lib;
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *);
	find_fn find_debuginfo, find_executable;
	char *urls;
	debuginfod_client *client;
	bool down;		/* a server failed: not asked again in this run */
	struct miss *misses;	/* asked and not found */
	size_t nr_misses, cap_misses;
} di;

int debuginfod__setup(const char *urls)
{
	const char *env = getenv(DEBUGINFOD_URLS_ENV_VAR);

	if (!urls)
		urls = env;
	if (urls && *urls) {
		di.urls = strdup(urls);
		if (!di.urls)
			return -ENOMEM;
	}
	unsetenv(DEBUGINFOD_URLS_ENV_VAR);
	/* a server that does not answer costs (retries + 1) timeouts, once */
	if (di.urls) {
		setenv(DEBUGINFOD_TIMEOUT_ENV_VAR, DEBUGINFOD_DEFAULT_TIMEOUT, 0);
		setenv(DEBUGINFOD_RETRY_LIMIT_ENV_VAR, DEBUGINFOD_DEFAULT_RETRIES, 0);
	}
	return 0;
}

void debuginfod__end(void)
{
	void *lib = di.lib;

	if (di.client)
		di.end(di.client);
	free(di.urls);
	free(di.misses);
	memset(&di, 0, sizeof(di));
	/* the library stays loaded: curl and its TLS library keep global state that closing
	 * it would orphan (and the next setup opens it again for nothing) */
	di.lib = lib;
}

bool debuginfod__enabled(void)
{
	return di.urls != NULL;
}

static bool missed(const u8 *id, size_t len, bool exec)
{
	for (size_t i = 0; i < di.nr_misses; i++)
		if (di.misses[i].exec == exec && di.misses[i].len == len &&
		    !memcmp(di.misses[i].id, id, len))
			return true;
	return false;
}

static void add_miss(const u8 *id, size_t len, bool exec)
{
	struct miss *m;

	if (array__reserve((void **)&di.misses, &di.cap_misses, di.nr_misses + 1, sizeof(*di.misses)))
		return;
	m = &di.misses[di.nr_misses++];
	memcpy(m->id, id, len);
	m->len = len;
	m->exec = exec;
}

/* Why a process-wide dlopen (checked on elfutils 0.188, Debian 12's): when
 * dwfl_standard_find_debuginfo finds no debug file on the machine, its last step asks
 * libdwfl's own debuginfod client, whose first use dlopens libdebuginfod (with curl and its
 * TLS libraries, some 30 objects to map and relocate) whether or not DEBUGINFOD_URLS is set:
 * the variable is read only at the query, after the load. No Dwfl_Callbacks setting skips
 * that step, and a find_debuginfo of our own would have to redo libdwfl's path search (its
 * debuglink, CRC, build-id and dwz checks reach into the module's internals). So this
 * dlopen, found before libc's, declines that one unless we asked: libdwfl then has no
 * client of its own (we fetch, and say so), and we open the library only when there is a
 * server to ask. Every other dlopen goes on to the real one. A python3 record -g profile's
 * report takes 47 ms of CPU without it, 42.5 with. */
static bool want_library;

void *dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);

	if (file && !strcmp(file, DEBUGINFOD_SONAME) && !want_library)
		return NULL;
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "dlopen");
	return real ? real(file, mode) : NULL;
}

static int open_library(void)
{
	want_library = true;
	if (!di.lib)
		di.lib = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (di.lib) {
		*(void **)&di.begin = dlsym(di.lib, "debuginfod_begin");
		*(void **)&di.end = dlsym(di.lib, "debuginfod_end");
		*(void **)&di.find_debuginfo = dlsym(di.lib, "debuginfod_find_debuginfo");
		*(void **)&di.find_executable = dlsym(di.lib, "debuginfod_find_executable");
	}
	if (!di.lib || !di.begin || !di.end || !di.find_debuginfo || !di.find_executable) {
		warning("debuginfod: cannot load %s: %s: nothing is fetched", DEBUGINFOD_SONAME,
			dlerror());
		free(di.urls);
		di.urls = NULL;	/* said once */
		return -ENOSYS;
	}
	return 0;
}

/* 0 if the file open at fd has the build-id id, else -EBADMSG with its own in hex in got
 * ("none" if it has none) */
static int check_id(int fd, const u8 *id, size_t len, char *got, size_t size)
{
	u8 buf[BUILD_ID_MAX];
	size_t n;

	if (build_id__read_fd(fd, buf, sizeof(buf), &n)) {
		snprintf(got, size, "none");
		return -EBADMSG;
	}
	if (n == len && !memcmp(buf, id, len))
		return 0;
	build_id__hex(buf, n, got, size);
	return -EBADMSG;
}

static int find(bool exec, const char *name, const u8 *id, size_t len, char **path)
{
	const char *kind = exec ? BUILDID_CACHE_ELF : BUILDID_CACHE_DEBUG;
	const char *what = exec ? "object" : "debug file";
	const char *dir = buildid_cache__default_dir();
	char cached[PATH_MAX], hex[2 * BUILD_ID_MAX + 1], got[2 * BUILD_ID_MAX + 1];
	struct stat st;
	u64 added;
	int fd;

	*path = NULL;
	if (!len || len > BUILD_ID_MAX)
		return -EINVAL;
	build_id__hex(id, len, hex, sizeof(hex));
	/* fetched by an earlier run; a wrong file an older hsbpf kept is removed and fetched
	 * again */
	if (dir && !buildid_cache__find(dir, id, len, kind, cached, sizeof(cached))) {
		fd = file__open_regular(cached);
		if (fd >= 0 && check_id(fd, id, len, got, sizeof(got))) {
			warning("build-id cache: '%s' has build-id %s, not %s: removed", cached, got, hex);
			unlink(cached);
			close(fd);
			fd = -EBADMSG;
		}
		if (fd >= 0) {
			*path = strdup(cached);
			if (*path)
				return fd;
			close(fd);
			return -ENOMEM;
		}
	}
	if (!di.urls)
		return -ENOSYS;
	if (di.down)
		return -EHOSTDOWN;
	if (missed(id, len, exec))
		return -ENOENT;
	if (!di.begin && open_library())
		return -ENOSYS;
	if (!di.client)
		di.client = di.begin();
	if (!di.client)
		return -ENOMEM;
	setenv(DEBUGINFOD_URLS_ENV_VAR, di.urls, 1);
	fd = (exec ? di.find_executable : di.find_debuginfo)(di.client, id, len, path);
	unsetenv(DEBUGINFOD_URLS_ENV_VAR);
	if (fd == -ENOENT) {
		debug("debuginfod: no %s for '%s' (build-id %s)", what, name, hex);
		add_miss(id, len, exec);
		return fd;
	}
	if (fd < 0) {
		di.down = true;
		if (fd == -ETIME)
			warning("debuginfod: '%s' sent nothing for %s s (%s) for the %s of '%s'; not "
				"asking again in this run", di.urls, getenv(DEBUGINFOD_TIMEOUT_ENV_VAR),
				DEBUGINFOD_TIMEOUT_ENV_VAR, what, name);
		else
			warning("debuginfod: cannot fetch the %s of '%s' from '%s': %s; not asking again "
				"in this run", what, name, di.urls, strerror(-fd));
		return fd;
	}
	/* a server that answers with another file: neither used nor kept, by us or by the
	 * client (whose cache later runs would trust) */
	if (check_id(fd, id, len, got, sizeof(got))) {
		warning("debuginfod: '%s' answered the build-id %s of '%s' with a wrong file (build-id "
			"%s): not used, not kept", di.urls, hex, name, got);
		if (*path)
			unlink(*path);
		free(*path);
		*path = NULL;
		close(fd);
		add_miss(id, len, exec);
		return -EBADMSG;
	}
	fprintf(stderr, "hsbpf: debuginfod: fetched the %s of '%s' (build-id %s, %.1f kB)\n", what,
		name, hex, fstat(fd, &st) ? 0.0 : st.st_size / 1e3);
	/* kept by build-id: the client's own cache forgets files after a while. Copied from the
	 * descriptor whose build-id was checked, not from the client's file by name: that file
	 * could be replaced between the check and the copy */
	if (dir && buildid_cache__add_fd(dir, id, len, kind, fd, &added))
		debug("debuginfod: cannot keep '%s' in the build-id cache", *path);
	return fd;
}

int debuginfod__find_debuginfo(const char *name, const u8 *id, size_t len, char **path)
{
	return find(false, name, id, len, path);
}

int debuginfod__find_executable(const char *name, const u8 *id, size_t len, char **path)
{
	return find(true, name, id, len, path);
}
