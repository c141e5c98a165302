/* The unions of a phase name's occurrences within each step: what
 * phases.sql's window computes, with SQLite's own order, subtraction and
 * SUM() of NULLs, integers and reals (phase_stats_impl.h). */
#include "phase_stats_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static struct cell span_cell(const struct span *sp, int k)
{
	struct cell c = { .type = sp->t[k] };

	if (c.type == SQLITE_INTEGER)
		c.i = sp->v[k];
	else if (c.type == SQLITE_FLOAT)
		memcpy(&c.r, &sp->v[k], sizeof(c.r));
	return c;
}

/* An integer against a real, exactly, as SQLite compares them
 * (sqlite3IntFloatCompare). */
static int cmp_int_real(int64_t i, double r)
{
	int64_t y;
	double x;

	if (r < -9223372036854775808.0)
		return 1;
	if (r >= 9223372036854775808.0)
		return -1;
	y = (int64_t)r; /* in range: defined */
	if (i != y)
		return (i > y) - (i < y);
	x = (double)i;
	return (x > r) - (x < r);
}

/* SQLite's order of two values that are NULL or numbers: NULL first. */
static int cmp_value(const struct cell *a, const struct cell *b)
{
	if (a->type == SQLITE_NULL || b->type == SQLITE_NULL)
		return (a->type != SQLITE_NULL) - (b->type != SQLITE_NULL);
	if (a->type == SQLITE_INTEGER && b->type == SQLITE_INTEGER)
		return (a->i > b->i) - (a->i < b->i);
	if (a->type == SQLITE_INTEGER)
		return cmp_int_real(a->i, b->r);
	if (b->type == SQLITE_INTEGER)
		return -cmp_int_real(b->i, a->r);
	return (a->r > b->r) - (a->r < b->r);
}

/* @a - @b (numbers) as SQLite subtracts: an integer while the difference
 * fits in 64 bits, else a real; a real that is not a number (inf - inf)
 * is NULL. */
static struct cell sub_value(const struct cell *a, const struct cell *b)
{
	struct cell d = { .type = SQLITE_INTEGER };

	if (a->type == SQLITE_INTEGER && b->type == SQLITE_INTEGER && !__builtin_sub_overflow(a->i, b->i, &d.i))
		return d;
	d.type = SQLITE_FLOAT;
	d.r = (a->type == SQLITE_INTEGER ? (double)a->i : a->r) - (b->type == SQLITE_INTEGER ? (double)b->i : b->r);
	if (isnan(d.r))
		d.type = SQLITE_NULL;
	return d;
}

static int cmp_span(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	struct cell cx = span_cell(x, S_STEP), cy = span_cell(y, S_STEP);
	int c = cmp_value(&cx, &cy);

	if (c)
		return c;
	cx = span_cell(x, S_BEGIN);
	cy = span_cell(y, S_BEGIN);
	return cmp_value(&cx, &cy);
}

/* phase_stats_impl.h says what this sweep computes. reach[u] NULL: no end
 * yet in this step. */
void phase_stats_unions(struct span *spans, size_t n, struct sum *unions)
{
	static const struct cell zero = { .type = SQLITE_INTEGER };
	struct cell reach[NUNIONS], step = { .type = SQLITE_NULL };

	/* A recording writes each thread's phases in order, so the spans of a
	 * single-threaded phase come sorted: a check costs one pass, the sort
	 * (glibc's merge sort) a third of the whole computation. */
	for (size_t i = 1; i < n; i++) {
		if (cmp_span(&spans[i - 1], &spans[i]) > 0) {
			qsort(spans, n, sizeof(*spans), cmp_span);
			break;
		}
	}
	for (size_t i = 0; i < n; i++) {
		const struct span *sp = &spans[i];
		struct cell begin = span_cell(sp, S_BEGIN), end = span_cell(sp, S_END), this = span_cell(sp, S_STEP);

		if (i == 0 || cmp_value(&this, &step) != 0) {
			step = this;
			for (int u = 0; u < NUNIONS; u++)
				reach[u].type = SQLITE_NULL;
		}
		for (int u = 0; u < NUNIONS; u++) {
			if (!(sp->has & (1u << u)))
				continue;
			if (begin.type != SQLITE_NULL && end.type != SQLITE_NULL) {
				const struct cell *from = cmp_value(&reach[u], &begin) > 0 ? &reach[u] : &begin;
				struct cell part = sub_value(&end, from);

				if (part.type != SQLITE_NULL)
					sum_add(&unions[u], cmp_value(&part, &zero) > 0 ? &part : &zero);
			}
			if (end.type != SQLITE_NULL && cmp_value(&end, &reach[u]) > 0)
				reach[u] = end;
		}
	}
}
