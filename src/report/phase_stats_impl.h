/* mfu_phase_stats' private half: the values a phase row holds as SQLite
 * holds them, SUM() as SQLite computes it, and the unions of a name's
 * occurrences within each step (phase_stats_union.c), shared with the
 * table's scan (phase_stats.c). */
#ifndef MFU_REPORT_PHASE_STATS_IMPL_H
#define MFU_REPORT_PHASE_STATS_IMPL_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* The unions of a name's occurrences within each step (threads running the
 * phase at once count once): of all of them, and of those that declared or
 * counted each value (the time its MFU, HFU, MBU and DRAM figures divide by). */
enum { U_ALL, U_FLOPS, U_HW, U_BYTES, U_DRAM, NUNIONS };

/* An occurrence's step, begin_ns and end_ns as SQLite holds them: NULL,
 * an integer, or (only in an edited database) a real, whose bits v[] then
 * holds. The unions order, compare and subtract them as phases.sql's SQL
 * does (see phase_stats_unions). */
enum { S_STEP, S_BEGIN, S_END };

struct span {
	int64_t v[3];
	unsigned char t[3];    /* SQLITE_NULL, SQLITE_INTEGER, SQLITE_FLOAT */
	unsigned char has;     /* 1 << U_* */
};

/* One value of a row: its SQLite type and number. */
struct cell {
	int type;
	int64_t i;
	double r;
};

/* SQL's SUM() as SQLite computes it: an integer while every value is one
 * and the total fits, else a real; NULL over no values; an error on
 * integer overflow. */
struct sum {
	int64_t i;
	double r;
	int64_t count;
	int approx, overflow;
};

/* Add @c to @s as SUM() does: a NULL adds nothing. Inline: the scan calls
 * it for every sum of every phase row. */
static inline void sum_add(struct sum *s, const struct cell *c)
{
	switch (c->type) {
	case SQLITE_NULL:
		return;
	case SQLITE_INTEGER:
		s->r += (double)c->i;
		if (!s->approx && __builtin_add_overflow(s->i, c->i, &s->i))
			s->approx = s->overflow = 1;
		break;
	default:
		s->r += c->r;
		s->approx = 1;
	}
	s->count++;
}

/* The unions of one name's @n spans into @unions[NUNIONS] (zeroed before;
 * @spans are sorted here if they are not). Each step's spans are swept in
 * begin order: a span adds what reaches past the furthest end seen so far,
 * in each subset it belongs to. The same arithmetic as phases.sql's window,
 * for any value an edited database holds:
 *   MAX(end_ns) OVER (PARTITION BY name, step ORDER BY begin_ns ROWS
 *     BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS r,
 *   SUM(MAX(0, end_ns - MAX(begin_ns, coalesce(r, begin_ns))))
 * NULL steps form one partition, NULL begins sort first and add nothing
 * (MAX() of a NULL is NULL) but their ends reach; a NULL end adds and
 * reaches nothing; a part that does not fit in 64 bits (INT64_MIN to
 * INT64_MAX) is a real, and a sum of integers that overflows is SUM()'s
 * error (struct sum). */
void phase_stats_unions(struct span *spans, size_t n, struct sum *unions);

#endif
