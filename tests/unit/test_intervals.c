/* Intervals: counts of probe steps interpolated from the recorder's counter
 * readings, and their error bounds, on a made-up interval_reading table
 * whose true curves are known. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "db.h"
#include "record/counters/intervals.h"
#include "record/db/writer.h"

#define T0 1000000000ull
#define JUMP_AT 1105000000ull /* the FLOP counter jumps by 1000 events here */

/* task-clock runs at half a CPU; page faults at 1 per us; FP events jump */
static uint64_t true_cpu(uint64_t t)
{
	return t < T0 ? 0 : (t - T0) / 2;
}

static uint64_t true_faults(uint64_t t)
{
	return t < T0 ? 0 : (t - T0) / 1000;
}

static uint64_t true_fp(uint64_t t)
{
	return t < JUMP_AT ? 0 : 1000;
}

static void plan(struct counters *cs)
{
	memset(cs, 0, sizeof(*cs));
	cs->n = 3;
	cs->ngroups = 2;
	const char *names[] = { "task-clock", "page-faults", "FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE" };
	enum counter_col cols[] = { COL_CPU_NS, COL_PAGE_FAULTS, COL_FLOPS_FP64 };
	for (int i = 0; i < 3; i++) {
		struct counter *c = &cs->c[i];
		strcpy(c->name, names[i]);
		c->kind = i < 2 ? "software" : "hardware";
		c->unit = i == 0 ? "ns" : "count";
		c->col = cols[i];
		c->opened = 1;
		c->group = i < 2 ? 0 : 1;
		c->weight = i == 2 ? 4 : 0;
		c->fd = -1;
	}
	cs->c[0].word = 3;
	cs->c[1].word = 4;
	cs->c[2].word = 5 + 3;
	cs->leader[0] = 0;
	cs->leader[1] = 2;
	cs->group_nr[0] = 2;
	cs->group_nr[1] = 1;
	cs->group_offset[0] = 0;
	cs->group_offset[1] = 5;
}

static void put(sqlite3 *db, uint64_t t, int counter, uint64_t raw)
{
	char sql[256], err[256];
	snprintf(sql, sizeof(sql), "INSERT INTO interval_reading VALUES (%llu, %d, %llu, %llu, %llu)",
		 (unsigned long long)t, counter, (unsigned long long)raw, (unsigned long long)(t - T0),
		 (unsigned long long)(t - T0));
	CHECK_EQ_INT(db_exec(db, sql, err, sizeof(err)), 0);
}

static const struct {
	int line;
	uint64_t b, e;
	int inside; /* both boundaries within the readings */
} rows[] = {
	{ __LINE__, 1102500000, 1127500000, 1 }, /* spans readings, FP jump inside */
	{ __LINE__, 1201000000, 1203000000, 1 }, /* within one reading period */
	{ __LINE__, 1300000000, 1400000000, 1 }, /* on readings: exact */
	{ __LINE__, 1104000000, 1106000000, 1 }, /* the jump inside one period */
	{ __LINE__, 1990000000, 2010000000, 0 }, /* ends after the last reading */
};

static void test_attribute(void)
{
	char path[] = "/tmp/mfu-test-intervals-XXXXXX", err[256], sql[512];
	int fd = mkstemp(path);
	struct counters cs;
	struct writer *w;
	sqlite3 *db;

	close(fd);
	unlink(path);
	plan(&cs);
	CHECK_EQ_INT(db_create(path, &db, NULL, 0, err, sizeof(err)), 0);
	CHECK_EQ_INT(writer_open(&w, db, err, sizeof(err)), 0);
	CHECK_EQ_INT(writer_counters(w, &cs), 0);
	for (uint64_t t = T0; t <= 2000000000; t += 10000000) {
		put(db, t, 0, true_cpu(t));
		put(db, t, 1, true_faults(t));
		put(db, t, 2, true_fp(t));
	}
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct interval_row r = { .id = (int64_t)i, .parent = -1, .step = (int64_t)i, .pid = 1, .tid = 1,
					  .end_tid = 1, .begin_ns = rows[i].b, .end_ns = rows[i].e, .complete = 1,
					  .interpolated = 1 };
		CHECK_EQ_INT(writer_step(w, &r), 0);
		r.name = "p";
		CHECK_EQ_INT(writer_phase(w, &r), 0);
	}
	/* an exact (marker) step is left alone */
	struct interval_row exact = { .id = 99, .parent = -1, .step = 99, .begin_ns = 1500000000,
				      .end_ns = 1600000000, .complete = 1 };
	exact.d.has[COL_CPU_NS] = 1;
	exact.d.v[COL_CPU_NS] = 12345;
	CHECK_EQ_INT(writer_step(w, &exact), 0);
	CHECK_EQ_INT(intervals_attribute(db, &cs, w, err, sizeof(err)), 0);
	CHECK_EQ_INT(writer_commit(w), 0);

	for (int phase = 0; phase < 2; phase++) {
		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			sqlite3_stmt *st;
			snprintf(sql, sizeof(sql),
				 "SELECT cpu_ns, cpu_ns_err, page_faults, hw_flops, hw_flops_err, counts, "
				 "(SELECT value FROM %s_counter WHERE %s = %zu AND counter = 2), "
				 "(SELECT err FROM %s_counter WHERE %s = %zu AND counter = 2) "
				 "FROM %s WHERE %s = %zu", phase ? "phase" : "step", phase ? "phase" : "step", i,
				 phase ? "phase" : "step", phase ? "phase" : "step", i, phase ? "phase" : "step",
				 phase ? "id" : "step", i);
			CHECK(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK);
			CHECK_ROW(sqlite3_step(st) == SQLITE_ROW, rows[i].line);
			CHECK_ROW(strcmp((const char *)sqlite3_column_text(st, 5), "interpolated") == 0, rows[i].line);
			if (!rows[i].inside) {
				CHECK_ROW(sqlite3_column_type(st, 0) == SQLITE_NULL, rows[i].line);
				sqlite3_finalize(st);
				continue;
			}
			double cpu = sqlite3_column_double(st, 0), cpu_err = sqlite3_column_double(st, 1);
			double flops = sqlite3_column_double(st, 3), flops_err = sqlite3_column_double(st, 4);
			double truth_cpu = (double)(true_cpu(rows[i].e) - true_cpu(rows[i].b));
			double truth_flops = 4.0 * (double)(true_fp(rows[i].e) - true_fp(rows[i].b));
			/* constant rates interpolate exactly (to the rounding of counts) */
			CHECK_ROW(fabs(cpu - truth_cpu) <= 1, rows[i].line);
			CHECK_ROW(fabs(sqlite3_column_double(st, 2) -
				       (double)(true_faults(rows[i].e) - true_faults(rows[i].b))) <= 1, rows[i].line);
			/* every true value lies within the stated bound */
			CHECK_ROW(fabs(flops - truth_flops) <= flops_err + 1e-6, rows[i].line);
			CHECK_ROW(cpu_err >= 0, rows[i].line);
			CHECK_ROW(fabs(sqlite3_column_double(st, 6) * 4 - flops) <= 1e-6, rows[i].line);
			CHECK_ROW(fabs(sqlite3_column_double(st, 7) * 4 - flops_err) <= 1e-6, rows[i].line);
			if (rows[i].line == rows[2].line) {
				/* boundaries on readings: no uncertainty at all */
				CHECK_ROW(cpu_err == 0 && flops_err == 0, rows[i].line);
			}
			if (rows[i].line == rows[0].line) {
				/* the FP jump lies in the begin's period [1.10, 1.11] s: the
				 * interpolated value misses part of it, within the bound */
				CHECK_ROW(flops < truth_flops && flops_err >= truth_flops - flops, rows[i].line);
				/* any monotone curve through the readings: the begin
				 * may be 3.75 ms of CPU later than interpolated and the
				 * end 3.75 ms earlier (3/4 of a 5 ms period each) */
				CHECK_ROW(fabs(cpu_err - 7.5e6) <= 1, rows[i].line);
			}
			if (rows[i].line == rows[1].line) {
				/* inside one period the least is 0 and the most the period's count */
				CHECK_ROW(fabs(cpu - 1e6) <= 1 && cpu_err <= 5e6 - 1e6 + 1 && cpu_err >= 1e6 - 1, rows[i].line);
			}
			sqlite3_finalize(st);
		}
	}
	sqlite3_stmt *st;
	CHECK(sqlite3_prepare_v2(db, "SELECT cpu_ns, cpu_ns_err, counts FROM step WHERE step = 99", -1, &st, NULL) ==
	      SQLITE_OK);
	CHECK(sqlite3_step(st) == SQLITE_ROW);
	CHECK_EQ_INT(sqlite3_column_int64(st, 0), 12345);
	CHECK_EQ_INT(sqlite3_column_int64(st, 1), 0);
	CHECK(strcmp((const char *)sqlite3_column_text(st, 2), "exact") == 0);
	sqlite3_finalize(st);
	writer_close(w);
	sqlite3_close(db);
	unlink(path);
}

static void test_interp(void)
{
	struct counters cs;
	struct counter_reading lo, hi, out;

	plan(&cs);
	memset(&lo, 0, sizeof(lo));
	memset(&hi, 0, sizeof(hi));
	lo.ngroups = hi.ngroups = 2;
	lo.data[0] = hi.data[0] = 2;
	lo.data[5] = hi.data[5] = 1;
	lo.data[3] = 100;
	hi.data[3] = 200;
	lo.data[8] = 10;
	hi.data[8] = 10;
	intervals_interp(&cs, &lo, 1000, &hi, 2000, 1250, &out);
	CHECK_EQ_INT(out.data[3], 125);
	CHECK_EQ_INT(out.data[8], 10);
	CHECK_EQ_INT(out.data[0], 2);
	/* a group missing from one reading is missing from the result */
	hi.data[5] = 0;
	intervals_interp(&cs, &lo, 1000, &hi, 2000, 1250, &out);
	CHECK_EQ_INT(out.data[5], 0);
	/* equal times: the lower reading */
	intervals_interp(&cs, &lo, 1000, &lo, 1000, 1000, &out);
	CHECK_EQ_INT(out.data[3], 100);
}

int main(void)
{
	test_interp();
	test_attribute();
	return check_status();
}
