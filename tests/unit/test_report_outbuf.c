/* mfu-report's output buffer (src/report/outbuf.c): output of every size
 * comes out whole, in order and in few writes; a write error is kept and reported at the end, never lost. */
#include "check.h"
#include "outbuf.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* A FILE (stdio's buffer 4 KiB) that keeps what it is given and counts the writes
 * that reach it; a write that would take it past @limit bytes fails with
 * ENOSPC, and so does every write after it. (glibc takes a short write of
 * a cookie FILE for an error, so short writes of the kernel's kind cannot
 * be made here; and an unbuffered one loses the error of fwrite.) */
struct sink {
	char *data;
	size_t len, cap, limit;
	size_t calls;
	int full;
};

static ssize_t sink_write(void *cookie, const char *buf, size_t n)
{
	struct sink *s = cookie;

	s->calls++;
	if (s->full || n > s->limit - s->len) {
		s->full = 1; /* and stays full, as a disk does */
		errno = ENOSPC;
		return -1;
	}
	if (s->len + n > s->cap) {
		s->cap = (s->len + n) * 2;
		s->data = realloc(s->data, s->cap);
		if (!s->data)
			abort();
	}
	memcpy(s->data + s->len, buf, n);
	s->len += n;
	return (ssize_t)n;
}

static FILE *sink_open(struct sink *s, size_t limit)
{
	cookie_io_functions_t io = { .write = sink_write };
	FILE *f;

	memset(s, 0, sizeof(*s));
	s->limit = limit;
	f = fopencookie(s, "w", io);
	if (f)
		setvbuf(f, NULL, _IOFBF, 4096);
	return f;
}

/* A deterministic byte for position @i, so a lost or doubled byte shows. */
static char byte_at(size_t i)
{
	return (char)('a' + (i * 7 + i / 26) % 26);
}

/* Pieces of every awkward size: empty, one byte, just under, at and over
 * the buffer, and several buffers long; the expected bytes in @want. */
static size_t write_pieces(struct outbuf *ob, char *want)
{
	static const size_t sizes[] = { 0, 1, 3, 100, OUTBUF_SIZE - 1, 1, OUTBUF_SIZE, 2,
					OUTBUF_SIZE + 1, 5, 3 * OUTBUF_SIZE + 17, 4096, 1 };
	static char piece[3 * OUTBUF_SIZE + 17];
	size_t total = 0;

	for (size_t k = 0; k < ARRAY_SIZE(sizes); k++) {
		for (size_t i = 0; i < sizes[k]; i++)
			piece[i] = byte_at(total + i);
		outbuf_write(ob, piece, sizes[k]);
		memcpy(want + total, piece, sizes[k]);
		total += sizes[k];
		/* between pieces: a char, padding, a printf */
		outbuf_char(ob, '|');
		want[total++] = '|';
		outbuf_fill(ob, ' ', k * 1000);
		memset(want + total, ' ', k * 1000);
		total += k * 1000;
		outbuf_printf(ob, "<%zu:%s>", k, "x");
		total += (size_t)sprintf(want + total, "<%zu:%s>", k, "x");
	}
	return total;
}

static void test_whole_and_in_order(void)
{
	static char want[8 * OUTBUF_SIZE];
	static struct outbuf ob;
	struct sink s;
	FILE *f = sink_open(&s, (size_t)-1);
	size_t n;

	CHECK(f != NULL);
	if (!f)
		return;
	outbuf_init(&ob, f);
	n = write_pieces(&ob, want);
	CHECK(n < sizeof(want));
	CHECK_EQ_INT(outbuf_finish(&ob), 0);
	CHECK_EQ_INT(s.len, n);
	CHECK(s.len == n && memcmp(s.data, want, n) == 0);
	fclose(f);
	free(s.data);
}

/* Many one-byte writes reach the FILE in whole buffers: 200,000 bytes in
 * four fwrite calls, which stdio passes on in at most two writes each (it
 * fills its own buffer first). */
static void test_few_writes(void)
{
	static struct outbuf ob;
	struct sink s;
	FILE *f = sink_open(&s, (size_t)-1);

	CHECK(f != NULL);
	if (!f)
		return;
	outbuf_init(&ob, f);
	for (size_t i = 0; i < 200000; i++)
		outbuf_char(&ob, byte_at(i));
	CHECK(s.calls >= 1 && s.calls <= 2 * (200000 / OUTBUF_SIZE));
	CHECK_EQ_INT(outbuf_finish(&ob), 0);
	CHECK(s.calls <= 2 * (200000 / OUTBUF_SIZE + 1));
	CHECK_EQ_INT(s.len, 200000);
	for (size_t i = 0; i < s.len && i < 200000; i++) {
		if (s.data[i] != byte_at(i)) {
			CHECK(s.data[i] == byte_at(i));
			break;
		}
	}
	fclose(f);
	free(s.data);
}

/* A printf longer than the buffer, and one that just fills it. */
static void test_printf_long(void)
{
	static struct outbuf ob;
	char *text = malloc(3 * OUTBUF_SIZE), *got = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&got, &len);

	CHECK(text && f);
	if (!text || !f)
		return;
	memset(text, 'q', 3 * OUTBUF_SIZE - 1);
	text[3 * OUTBUF_SIZE - 1] = '\0';
	outbuf_init(&ob, f);
	outbuf_fill(&ob, '.', 10);
	outbuf_printf(&ob, "[%s]", text);
	outbuf_fill(&ob, '.', OUTBUF_SIZE - 12 - 3); /* the buffer one byte short of full */
	outbuf_printf(&ob, "%d", 42);                /* does not fit: goes whole */
	CHECK_EQ_INT(outbuf_finish(&ob), 0);
	fclose(f);
	CHECK_EQ_INT(len, 10 + 3 * OUTBUF_SIZE + 1 + OUTBUF_SIZE - 15 + 2);
	if (got && len == 10 + 3 * OUTBUF_SIZE + 1 + OUTBUF_SIZE - 15 + 2) {
		CHECK(got[10] == '[' && got[11] == 'q' && got[10 + 3 * OUTBUF_SIZE] == ']');
		CHECK(memcmp(got + len - 3, ".42", 3) == 0);
	}
	free(got);
	free(text);
}

/* The FILE fails part way: the error is ENOSPC, the first one, and stays. */
static void test_error_kept(void)
{
	static char want[8 * OUTBUF_SIZE];
	static struct outbuf ob;
	struct sink s;
	FILE *f = sink_open(&s, 100000);

	CHECK(f != NULL);
	if (!f)
		return;
	outbuf_init(&ob, f);
	write_pieces(&ob, want);
	CHECK_EQ_INT(outbuf_error(&ob), -ENOSPC); /* seen while writing */
	outbuf_fail(&ob, -ENOMEM);                /* not the first: ignored */
	outbuf_str(&ob, "more");
	CHECK_EQ_INT(outbuf_finish(&ob), -ENOSPC);
	CHECK_EQ_INT(outbuf_flush(&ob), -ENOSPC);
	CHECK(s.len <= 100000 && memcmp(s.data, want, s.len) == 0); /* what went out is right */
	fclose(f);
	free(s.data);
}

/* /dev/full: a small output fails only when stdio flushes it, which
 * outbuf_finish does; a large one fails in the write itself. */
static void test_dev_full(void)
{
	static struct outbuf ob;
	static char big[2 * OUTBUF_SIZE];
	FILE *f = fopen("/dev/full", "w");

	if (!f) {
		printf("# /dev/full: %s; skipped\n", strerror(errno));
		return;
	}
	outbuf_init(&ob, f);
	outbuf_str(&ob, "a short report\n");
	CHECK_EQ_INT(outbuf_flush(&ob), 0);  /* in stdio's buffer yet */
	CHECK_EQ_INT(outbuf_finish(&ob), -ENOSPC);
	fclose(f);

	f = fopen("/dev/full", "w");
	CHECK(f != NULL);
	if (!f)
		return;
	outbuf_init(&ob, f);
	memset(big, 'x', sizeof(big));
	outbuf_write(&ob, big, sizeof(big));
	CHECK_EQ_INT(outbuf_error(&ob), -ENOSPC);
	CHECK_EQ_INT(outbuf_finish(&ob), -ENOSPC);
	fclose(f);
}

/* An error a writer records (its scratch buffer's -ENOMEM) is reported,
 * and nothing is written after it, not even what was held: the output is
 * broken already. */
static void test_fail(void)
{
	static struct outbuf ob;
	char *got = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&got, &len);

	CHECK(f != NULL);
	if (!f)
		return;
	outbuf_init(&ob, f);
	outbuf_str(&ob, "before");
	outbuf_fail(&ob, -ENOMEM);
	outbuf_str(&ob, "after");
	CHECK_EQ_INT(outbuf_finish(&ob), -ENOMEM);
	fclose(f);
	CHECK_EQ_INT(len, 0);
	free(got);
}

int main(void)
{
	test_whole_and_in_order();
	test_few_writes();
	test_printf_long();
	test_error_kept();
	test_dev_full();
	test_fail();
	return check_status();
}
