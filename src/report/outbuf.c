#include "outbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

void outbuf_init(struct outbuf *ob, FILE *out)
{
	ob->out = out;
	ob->err = 0;
	ob->len = 0;
}

void outbuf_fail(struct outbuf *ob, int err)
{
	if (!ob->err)
		ob->err = err;
}

/* fwrite @n bytes of @s, keeping the first error. */
static void put(struct outbuf *ob, const void *s, size_t n)
{
	if (!n || ob->err)
		return;
	errno = 0;
	if (fwrite(s, 1, n, ob->out) != n)
		ob->err = errno ? -errno : -EIO;
}

int outbuf_flush(struct outbuf *ob)
{
	put(ob, ob->buf, ob->len);
	ob->len = 0;
	return ob->err;
}

int outbuf_finish(struct outbuf *ob)
{
	outbuf_flush(ob);
	if (!ob->err) {
		errno = 0;
		if (fflush(ob->out) != 0)
			ob->err = errno ? -errno : -EIO;
	}
	return ob->err;
}

void outbuf_write_long(struct outbuf *ob, const void *s, size_t n)
{
	outbuf_flush(ob);
	if (n > OUTBUF_SIZE) {
		put(ob, s, n); /* no copy of a block larger than the buffer */
		return;
	}
	memcpy(ob->buf, s, n);
	ob->len = n;
}

void outbuf_fill(struct outbuf *ob, char c, size_t n)
{
	while (n) {
		size_t k;

		if (ob->len == OUTBUF_SIZE)
			outbuf_flush(ob);
		k = OUTBUF_SIZE - ob->len < n ? OUTBUF_SIZE - ob->len : n;
		memset(ob->buf + ob->len, c, k);
		ob->len += k;
		n -= k;
	}
}

void outbuf_printf(struct outbuf *ob, const char *fmt, ...)
{
	size_t room = OUTBUF_SIZE - ob->len;
	va_list ap;
	char *big;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(ob->buf + ob->len, room, fmt, ap);
	va_end(ap);
	if (n < 0) {
		outbuf_fail(ob, errno ? -errno : -EINVAL);
		return;
	}
	if ((size_t)n < room) {
		ob->len += (size_t)n;
		return;
	}
	/* did not fit: the text is in the buffer only in part */
	big = malloc((size_t)n + 1);
	if (!big) {
		outbuf_fail(ob, -ENOMEM);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	outbuf_write(ob, big, (size_t)n);
	free(big);
}
