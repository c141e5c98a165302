/* The output buffer of mfu-report's writers (format.c, trace.c, html.c):
 * bytes gathered in a fixed 64 KiB block and written to a FILE in whole
 * blocks, so a report of a million rows costs few fwrite calls.
 *
 * A write never fails on the spot: the first error (a short fwrite's
 * -errno, or one a writer records with outbuf_fail) is kept, later output
 * is dropped, and outbuf_flush or outbuf_finish returns it at the end. The
 * buffer lives inside its writer's struct: no allocation, no free. */
#ifndef MFU_REPORT_OUTBUF_H
#define MFU_REPORT_OUTBUF_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define OUTBUF_SIZE ((size_t)1 << 16)

struct outbuf {
	FILE *out;
	int err;    /* the first error, -errno; 0 while all is well */
	size_t len; /* bytes held in buf */
	char buf[OUTBUF_SIZE];
};

/* Start an empty buffer that writes to @out. */
void outbuf_init(struct outbuf *ob, FILE *out);

/* Write the held bytes to the FILE (not fflush: they may still sit in its
 * stdio buffer). Returns 0 or the first error, -errno. */
int outbuf_flush(struct outbuf *ob);

/* outbuf_flush, then fflush the FILE, so that an error of the last bytes
 * (a full disk) shows. Returns 0 or the first error, -errno. */
int outbuf_finish(struct outbuf *ob);

/* Keep @err (-errno, e.g. -ENOMEM of a writer's scratch buffer) as the
 * error unless one is kept already: the first one is what went wrong. */
void outbuf_fail(struct outbuf *ob, int err);

/* The first error, -errno, or 0. */
static inline int outbuf_error(const struct outbuf *ob)
{
	return ob->err;
}

/* The slow path of outbuf_write: flush, and write @n bytes of @s past the
 * buffer when they do not fit in it. */
void outbuf_write_long(struct outbuf *ob, const void *s, size_t n);

/* Append @n bytes of @s. */
static inline void outbuf_write(struct outbuf *ob, const void *s, size_t n)
{
	if (n > OUTBUF_SIZE - ob->len) {
		outbuf_write_long(ob, s, n);
		return;
	}
	memcpy(ob->buf + ob->len, s, n);
	ob->len += n;
}

/* Append the NUL-terminated @s. */
static inline void outbuf_str(struct outbuf *ob, const char *s)
{
	outbuf_write(ob, s, strlen(s));
}

/* Append the byte @c. */
static inline void outbuf_char(struct outbuf *ob, char c)
{
	if (ob->len == OUTBUF_SIZE)
		outbuf_flush(ob);
	ob->buf[ob->len++] = c;
}

/* Append @n copies of the byte @c (padding). */
void outbuf_fill(struct outbuf *ob, char c, size_t n);

/* Append printf(@fmt, ...); output of any length. A vsnprintf failure
 * (EOVERFLOW) or an allocation failure is kept as the error. */
void outbuf_printf(struct outbuf *ob, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
