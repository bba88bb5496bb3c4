// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unwind tables built on a thread of their own (table_worker.h): a queue of jobs in, the
 * same jobs with their tables out, both under one mutex; the thread sleeps on a condition
 * variable while the queue is empty. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "symbols/build_id.h"
#include "unwind/table_cache.h"
#include "unwind/table_worker.h"
#include "unwind/unwind_table.h"

struct job_list {
	struct table_job *head, *tail;
};

struct table_worker {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct job_list todo, done;
	size_t busy;		/* given and not taken back: the loop's count, not the thread's */
	bool stop;
};

struct table_job *table_job__new(const char *path, const char *open_path, const u8 *build_id,
				 u8 build_id_size)
{
	struct table_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->path = strdup(path);
	j->open_path = strdup(open_path);
	if (!j->path || !j->open_path) {
		table_job__free(j);
		errno = ENOMEM;
		return NULL;
	}
	j->build_id_size = build_id_size < BUILD_ID_MAX ? build_id_size : BUILD_ID_MAX;
	if (j->build_id_size)
		memcpy(j->build_id, build_id, j->build_id_size);
	return j;
}

/* the file's build-id checked against the mapping's: 0, -ESTALE for another build (or none),
 * or the error that kept the file from being read */
static int check_build(const char *open_path, const struct table_job *j)
{
	u8 fid[BUILD_ID_MAX];
	size_t flen = 0;
	int err = build_id__read(open_path, fid, sizeof(fid), &flen);

	if (err == -ENOENT || err == -ESRCH || err == -EACCES || err == -EPERM)
		return err;
	if (err || flen != j->build_id_size || memcmp(fid, j->build_id, j->build_id_size))
		return -ESTALE;
	return 0;
}

void table_job__run(struct table_job *j)
{
	u64 t0 = now_ns(CLOCK_MONOTONIC);
	bool vdso = !strcmp(j->path, "[vdso]");
	size_t n = strlen(j->path);
	const char *deleted = " (deleted)";
	u8 id[BUILD_ID_MAX];
	size_t id_size = 0;
	char *path;
	int err = 0;

	/* the process that showed the way (its root) may have ended before the job ran: then
	 * the path as this process sees it, which the build-id check below still guards (a
	 * deleted file has no other way in) */
	if (!vdso && strcmp(j->open_path, j->path) && j->path[0] == '/' &&
	    !(n > strlen(deleted) && !strcmp(j->path + n - strlen(deleted), deleted)) &&
	    access(j->open_path, R_OK) && (errno == ENOENT || errno == ESRCH)) {
		path = strdup(j->path);
		if (path) {
			free(j->open_path);
			j->open_path = path;
		}
	}
	/* the table of the build mapped, built before: whatever file is at hand now */
	if (!vdso && j->build_id_size && j->cache &&
	    !table_cache__load(j->cache, j->build_id, j->build_id_size, &j->table)) {
		j->cached = true;
		goto done;
	}
	/* the file at hand must be the one mapped: another build would unwind wrongly (the
	 * vDSO is this kernel's, ours) */
	if (!vdso && j->build_id_size)
		err = check_build(j->open_path, j);
	/* an object known by its path (read from /proc, no build-id given): the build-id of the
	 * file at hand names its table in the cache */
	else if (!vdso && j->cache && !build_id__read(j->open_path, id, sizeof(id), &id_size) &&
		 id_size && !table_cache__load(j->cache, id, id_size, &j->table)) {
		j->cached = true;
		goto done;
	}
	if (!err)
		err = vdso ? unwind_table__build_vdso(&j->table) : unwind_table__build_path(j->open_path, &j->table);
	/* kept for the next process of this build (not said when it cannot be: built again) */
	if (!err && !vdso && j->cache && (j->build_id_size || id_size))
		j->kept = !table_cache__store(j->cache, j->build_id_size ? j->build_id : id,
					      j->build_id_size ? j->build_id_size : id_size, j->table);
done:
	j->err = err;
	j->build_ns = now_ns(CLOCK_MONOTONIC) - t0;
}

void table_job__free(struct table_job *j)
{
	if (!j)
		return;
	unwind_table__free(j->table);
	free(j->path);
	free(j->open_path);
	free(j);
}

static void push(struct job_list *l, struct table_job *j)
{
	j->next = NULL;
	if (l->tail)
		l->tail->next = j;
	else
		l->head = j;
	l->tail = j;
}

static struct table_job *pop(struct job_list *l)
{
	struct table_job *j = l->head;

	if (j) {
		l->head = j->next;
		if (!l->head)
			l->tail = NULL;
		j->next = NULL;
	}
	return j;
}

static void *work(void *arg)
{
	struct table_worker *w = arg;
	struct table_job *j;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->stop && !w->todo.head)
			pthread_cond_wait(&w->wake, &w->lock);
		if (w->stop)
			break;
		j = pop(&w->todo);
		pthread_mutex_unlock(&w->lock);
		table_job__run(j);
		pthread_mutex_lock(&w->lock);
		push(&w->done, j);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct table_worker *table_worker__new(void)
{
	struct table_worker *w = calloc(1, sizeof(*w));
	sigset_t all, old;
	int err;

	if (!w)
		return NULL;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->wake, NULL);
	/* libelf's version is a global: set here, never by two threads at once */
	elf_version(EV_CURRENT);
	/* the thread takes no signal: SIGTERM, SIGHUP... go to the loop, whose waits they cut */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&w->thread, NULL, work, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_cond_destroy(&w->wake);
		pthread_mutex_destroy(&w->lock);
		free(w);
		errno = err;
		return NULL;
	}
	return w;
}

void table_worker__submit(struct table_worker *w, struct table_job *j)
{
	pthread_mutex_lock(&w->lock);
	push(&w->todo, j);
	w->busy++;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
}

struct table_job *table_worker__take(struct table_worker *w)
{
	struct table_job *j;

	pthread_mutex_lock(&w->lock);
	j = pop(&w->done);
	if (j)
		w->busy--;
	pthread_mutex_unlock(&w->lock);
	return j;
}

size_t table_worker__busy(const struct table_worker *w)
{
	return w->busy;
}

static void free_list(struct job_list *l)
{
	struct table_job *j;

	while ((j = pop(l)))
		table_job__free(j);
}

void table_worker__free(struct table_worker *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	free_list(&w->todo);
	free_list(&w->done);
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
