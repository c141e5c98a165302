/* Small checked helpers shared by the programs. */
#ifndef MFU_UTIL_H
#define MFU_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Checked parsing: the whole string must be a number in range.
 * Return 0 or -EINVAL (garbage, empty) / -ERANGE. */
int safe_atoi(const char *s, int *out);
int safe_atou64(const char *s, uint64_t *out);
int safe_atod(const char *s, double *out);
/* A positive quantity with an optional SI suffix (k, M, G, T, P; powers of
 * 1000), e.g. "1.5T" -> 1.5e12. Non-finite and <= 0 values are -ERANGE. */
int parse_si(const char *s, double *out);

/* Read a small text file (sysfs, procfs) whole into @buf, NUL-terminated.
 * Returns 0 or -errno (-ENOENT when missing, -EFBIG when it does not fit). */
int read_text_file(const char *path, char *buf, size_t len);
/* read_text_file without the trailing whitespace (sysfs's newline): the
 * one reader of small sysfs and procfs values. */
int read_sysfs(const char *path, char *buf, size_t len);

/* Make room for @need elements of @size bytes in the malloc'd array
 * *@array (a T **, passed as void *) of *@cap elements: the capacity at
 * least doubles (from 16), so appending one at a time is amortized O(1).
 * Returns 0 or -ENOMEM (the array and *@cap are kept). The one growable
 * array of the project. */
int array_grow(void *array, size_t *cap, size_t need, size_t size);

/* The element of @base (@n elements of @size bytes, sorted by a leading
 * int64_t key) whose key is @key, or NULL: a binary search. */
const void *find_by_key(const void *base, size_t n, size_t size, int64_t key);

/* The value at time @t on the straight line through (@t0, @y0) and
 * (@t1, @y1): the one interpolation of readings (DRAM bytes, counter
 * groups) at step and phase boundaries. @t0 == @t1 gives @y1. */
double interp_linear(uint64_t t0, double y0, uint64_t t1, double y1, uint64_t t);

/* CLOCK_MONOTONIC / CLOCK_REALTIME in nanoseconds. */
uint64_t now_ns(void);
uint64_t realtime_ns(void);

/* snprintf that always terminates and reports truncation as -ENOSPC. */
int strbuf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Append @n bytes at @s to the malloc'd text *@buf (*@cap bytes, *@len
 * used), keeping it NUL-terminated. Returns 0 or -ENOMEM. */
int buf_append(char **buf, size_t *len, size_t *cap, const char *s, size_t n);
/* The UTF-8 sequence at @s (@n bytes left): its length with the code point
 * in *@cp, or 0 when it is not valid UTF-8 (overlong, surrogate, cut). */
size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);
/* Append @n bytes at @s to *@buf (as buf_append) as a quoted JSON string:
 * quotes, backslashes and controls (C0, DEL, C1, the bidirectional
 * overrides) escaped, U+2028/9 too, and bytes that
 * are not UTF-8 replaced by U+FFFD. The one JSON string writer (mfu-report,
 * mfu-calibrate, the run's argv). Returns 0 or -ENOMEM. */
int json_append_string(char **buf, size_t *len, size_t *cap, const char *s, size_t n);
/* A NULL-terminated argv as a JSON array of strings (malloc'd), or NULL
 * when out of memory. */
char *json_argv(char *const argv[]);

/* The program execvp() would run for @prog, into @out: @prog itself when it
 * has a '/', else the first executable regular file of that name in PATH
 * (default /usr/local/bin:/usr/bin:/bin; an empty entry is "."). Returns 0,
 * or -errno: ENOENT when none is found, EACCES when @prog is not
 * executable. */
int path_lookup(const char *prog, char *out, size_t len);

#endif
