/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Where and how a command writes: the output formats and their one parser, and the file sink
 * every command writes a file or standard output through (atomic for regular files, in place
 * for devices and FIFOs, never through a planted link, never onto its input). */
#ifndef HSBPF_OUTPUT_H
#define HSBPF_OUTPUT_H

#include <stdio.h>
#include "lib/util.h"

/* ---- formats ---- */

/* every format a command may write; each command accepts a set of them */
enum output_format {
	OUT_TEXT,
	OUT_JSON,
	OUT_CSV,
	OUT_FOLDED,
	OUT_PPROF,
	OUT_SPEEDSCOPE,
	OUT_NR_FORMATS,
};

/* sets of formats, for output_format__parse */
#define OUT_SET(fmt)	(1u << (fmt))
#define OUT_TEXT_JSON	(OUT_SET(OUT_TEXT) | OUT_SET(OUT_JSON))
#define OUT_TABLES	(OUT_TEXT_JSON | OUT_SET(OUT_CSV))

/* "text", "json", ...: the name --format takes */
const char *output_format__name(enum output_format fmt);
/* --format NAME among the formats in allowed (OUT_SET()s): 0, or -EINVAL after saying
 * "unknown format 'NAME' (known: text, json, ...)" with this command's formats */
int output_format__parse(const char *name, unsigned int allowed, enum output_format *fmt);

/* ---- files ---- */

/* Where a file is written: every file hsbpf writes goes through one. A regular file (or a new
 * one) atomically: an unnamed temporary file in the same folder (O_TMPFILE; a short-named one
 * created with O_EXCL|O_NOFOLLOW where the filesystem has none), linked in under its name only
 * once complete, so that nothing is left behind even by a SIGKILL and a name of NAME_MAX
 * characters works. A symbolic link at the name is replaced by the new file, never followed:
 * the file it names is untouched (as perf does). Anything else, a device or a FIFO, is written
 * in place: /dev/null stays /dev/null. */
struct outfile {
	char *path;		/* as given, for messages and the final rename */
	char *tmp;		/* the temporary's name, while it has one */
	FILE *fp;		/* outfile__stream's, if asked for */
	int fd;
	int write_err;		/* the first failed write's errno, through fp */
	bool in_place;
	bool unnamed;
	bool dropping;		/* being discarded: fp's buffer goes nowhere */
};

/* open, and for a regular file reserve reserve bytes, so that a full disk is found before
 * the work and not after it. 0, or -errno after reporting */
int outfile__open(struct outfile *o, const char *path, size_t reserve);
/* the same for an output read while it is written (stat -I): a regular file is truncated and
 * written as it goes, not atomically, but never through a symbolic link (one at the name is
 * replaced); what was written stays on failure. 0, or -errno after reporting */
int outfile__open_live(struct outfile *o, const char *path);
/* all of buf to the descriptor (binary writers, not through the stream): 0 or -errno, not
 * reported */
int outfile__write(struct outfile *o, const void *buf, size_t len);
/* a buffered stream onto an open outfile, for text writers (a new file is then 0666 less
 * the umask, as fopen makes it, not 0600); NULL (ENOMEM) on failure. The stream keeps the
 * first failed write's errno, so that a full disk is said as such */
FILE *outfile__stream(struct outfile *o);
/* give the file its name (fsync, then rename over the old one, or over a link); closes. 0 or
 * -errno after reporting; on failure nothing is left behind */
int outfile__commit(struct outfile *o);
/* end a stream's outfile: err is the writer's (0: it succeeded). Committed when err is 0 and
 * every write succeeded, else discarded; a failed write is reported here with its own errno
 * ("No space left on device", not EIO), other errors are the caller's to report. 0 or -errno */
int outfile__finish(struct outfile *o, int err);
/* close and remove what was written; for an outfile that failed or was never opened too */
void outfile__discard(struct outfile *o);
/* a command that reads input and writes output refuses to overwrite it: by device and inode,
 * following links (another name, a hard link, a symbolic link all count). 0, or -EEXIST after
 * reporting "'OUT' is the input 'IN': not overwritten". output NULL or "-": 0 */
int outfile__check_input(const char *output, const char *input);

/* ---- the sink: a text output, to a file or a standard stream ---- */

struct output {
	FILE *f;		/* where to write: the file's stream, stdout or stderr */
	struct outfile file;	/* when f is a file's */
	bool is_file;
};

/* path NULL: standard output. Otherwise the file, through an outfile (appears only once
 * complete, never onto input, which may be NULL). 0, or -errno after reporting */
int output__open(struct output *o, const char *path, const char *input);
/* output__open for a file with no input to protect, for writers that want only its stream:
 * NULL after reporting */
FILE *output__create(struct output *o, const char *path);
/* an output read while it is written (outfile__open_live); path NULL: standard error. 0, or
 * -errno after reporting */
int output__open_live(struct output *o, const char *path);
/* end what output__open opened: err is the writer's (0: it succeeded). A file is committed
 * when err is 0 and every write, the last flush and the close succeeded, else discarded (a
 * failed write said here, with its errno); a live file keeps what was written. Standard
 * output's failed writes are said once by main at exit: a writer's error that is one is not
 * returned. 0 or -errno */
int output__close(struct output *o, int err);

#endif /* HSBPF_OUTPUT_H */
