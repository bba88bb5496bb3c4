/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Small helpers every module uses: error reporting, clocks, growable arrays.
 * Errors are reported once, where the subject is known; functions return 0 or -errno. */
#ifndef HSBPF_UTIL_H
#define HSBPF_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>

typedef uint64_t u64;
typedef uint32_t u32;
typedef uint16_t u16;
typedef uint8_t u8;
typedef int64_t s64;
typedef int32_t s32;
typedef int16_t s16;

#define HSBPF_VERSION "0.1.0"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

extern int verbose;

/* "hsbpf: <message>" on stderr; the message has no capital and no final period */
__attribute__((format(printf, 1, 2))) int error(const char *fmt, ...);
/* report and evaluate to err: return fail(-EINVAL, "bad '%s'", s); */
#define fail(err, ...) (error(__VA_ARGS__), (err))

__attribute__((format(printf, 1, 2))) void warning(const char *fmt, ...);
/* the last line of a subcommand's usage error ("hsbpf record"), after what was wrong was
 * said: where the options are described; evaluates to the usage exit status, 2 */
int usage_hint(const char *cmd);
__attribute__((format(printf, 1, 2))) void debug(const char *fmt, ...);
/* "hsbpf: <message>": what a command says of its work (as error, not an error) */
__attribute__((format(printf, 1, 2))) void note(const char *fmt, ...);

/* hsbpf's messages no longer wait for a slow reader of the pipe (or FIFO) that stderr is:
 * fd 2 becomes a private non-blocking file description of the same pipe (the processes that
 * share the pipe keep theirs, blocking), a message that finds it full is dropped and counted.
 * A no-op for anything but a pipe. 0, or -errno with stderr unchanged */
int stderr__set_nonblocking(void);
/* from now on, messages may wait up to ms in all for room in the pipe */
void stderr__grace(unsigned ms);
/* the signals that end a run (SIGINT, SIGTERM, and SIGHUP and SIGQUIT: a closed terminal or
 * Ctrl-\ ends it as Ctrl-C does) call fn instead */
void signals__on_end(void (*fn)(int));
/* the messages dropped so far */
u64 stderr__lost(void);

u64 now_ns(int clockid);

/* grow *arr (of elem_size items, *cap slots) to hold at least n; 0 or -ENOMEM */
int array__reserve(void **arr, size_t *cap, size_t n, size_t elem_size);
/* in an array of n elements of size bytes sorted by the u64 at byte offset off: how many
 * have that key <= v (so element [result - 1] is the last one at or below v) */
size_t array__count_le(const void *base, size_t n, size_t size, size_t off, u64 v);
/* the same for a u32 key: how many have it < v (so element [result] is the first at or
 * above v, if any) */
size_t array__count_lt_u32(const void *base, size_t n, size_t size, size_t off, u32 v);

/* 64-bit counts compare without overflow (never return y - x) */
static inline int cmp_u64_desc(u64 a, u64 b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

/* a number, digits only (no blanks, no sign): decimal, leading zeros included, or hex after
 * 0x (parse_u64); hex without a prefix (parse_hex_u64); 0 or -EINVAL */
int parse_u64(const char *s, u64 *out);
int parse_hex_u64(const char *s, u64 *out);
/* a number of seconds within [min, max], written in decimal ("2", "0.5", "1e3"): no inf,
 * nan, hex or blanks, so that whatever passes converts to nanoseconds without overflow;
 * 0 or -EINVAL (not reported: the caller knows which option it was) */
int parse_seconds(const char *s, double min, double max, double *out);

/* src as a POSIX shell would take it back as one word: as it is when it holds only
 * [A-Za-z0-9_@%+=:,./-], else in single quotes with each ' written '\''; "" is ''. Appended
 * to dst at *off (dst stays terminated); false when it did not fit (nothing appended) */
bool str__shell_quote(const char *src, char *dst, size_t size, size_t *off);
/* Text from a profile, a binary or a process (names, paths, symbols: anyone can name a
 * process "\033]0;...\007") made harmless for a terminal: control characters (C0, DEL, and C1
 * both raw and UTF-8 encoded) and bytes that do not form UTF-8 become \xNN; valid UTF-8 and
 * backslashes stay as they are (systemd's unit names are full of \x2d). str__escape writes at
 * most size - 1 bytes and a NUL, never half an escape or half a character (NULL: ""), and
 * returns dst; str__fputs_escaped writes all of it. */
const char *str__escape(const char *src, char *dst, size_t size);
/* the length of the printable character at s: 1 to 4 bytes of UTF-8, or 0 when s starts with
 * a control character (C0, DEL, C1) or with bytes that are not UTF-8 */
size_t str__printable_len(const unsigned char *s);
void str__fputs_escaped(const char *s, FILE *f);

/* a string made as printf makes it (free it), or NULL when out of memory */
char *str__printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* the part of a path after its last '/': the path itself without one, "" for NULL */
const char *path__base(const char *path);

/* whether two paths name one file: the same device and inode when both exist, else the same
 * real folder and name (a file about to be created) */
bool file__same(const char *a, const char *b);

/* at the start of main: standard output (unless a terminal) through a stream that keeps the
 * errno of its first failed write, which stdio does not, for stdout__close to report */
void stdout__open(void);
/* flush and close standard output at the end of main, as git does: a write that failed
 * anywhere in a command (a full disk, /dev/full, a closed pipe with SIGPIPE ignored) is
 * reported here, once ("cannot write standard output: ..."). 0 or -errno after reporting */
int stdout__close(void);
/* flush standard output: 0, or -errno without reporting (stdout__close will); for a command
 * that writes repeatedly (top) and should stop once its output is gone */
int stdout__flush(void);

/* file__open_regular's refusal of a FIFO, a device or a socket: an errno that opening a path
 * to read never gives otherwise, so that callers can word it (file__strerror) */
#define ENOTREGULAR EMEDIUMTYPE
/* open a file to read that a profile, a truth file or the command line names, without
 * blocking on it and without opening a device: anything but a regular file is refused before
 * the open (stat) and again after it (fstat of an O_NONBLOCK open, in case it was swapped
 * meanwhile). A close-on-exec fd, or -ENOTREGULAR, -EISDIR, -errno; nothing reported */
int file__open_regular(const char *path);
/* strerror(err), but "not a regular file" for ENOTREGULAR */
const char *file__strerror(int err);
/* report a failed file__open_regular once ("'PATH' is not a regular file", "cannot open
 * 'PATH': ..."); returns err */
int file__open_error(const char *path, int err);

/* s in at most width columns, into buf: cut to width - 1 and marked with a final '+' when
 * longer, as report's tables cut values (a cut "lib.so+0x15ae0" must not read as a whole
 * "lib.so+0x15ae"); the length written */
int str__fit(const char *s, int width, char *buf, size_t size);

#endif /* HSBPF_UTIL_H */
