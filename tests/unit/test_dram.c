/* DRAM attribution: interpolating the recorder's cumulative memory-controller
 * readings at step and phase boundaries (no uncore hardware needed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "db.h"
#include "record/counters/dram.h"

static void test_interp(void)
{
	const uint64_t t[] = { 100, 200, 300, 300, 500 };
	const double c[] = { 0, 1000, 1500, 1600, 2000 };
	size_t hint = 0;
	CHECK(isnan(dram_interp(t, c, 5, 99, &hint)));
	CHECK(isnan(dram_interp(t, c, 5, 501, &hint)));
	CHECK_NEAR(dram_interp(t, c, 5, 100, &hint), 0, 1e-9);
	CHECK_NEAR(dram_interp(t, c, 5, 150, &hint), 500, 1e-9);
	CHECK_NEAR(dram_interp(t, c, 5, 250, &hint), 1250, 1e-9);
	CHECK_NEAR(dram_interp(t, c, 5, 400, &hint), 1800, 1e-9);
	CHECK_NEAR(dram_interp(t, c, 5, 120, &hint), 200, 1e-9); /* going back resets the hint */
	CHECK(isnan(dram_interp(t, c, 1, 100, NULL)));
}

static void test_attribute(void)
{
	char path[] = "/tmp/mfu-test-dram-XXXXXX", err[256];
	int fd = mkstemp(path);
	sqlite3 *db;

	close(fd);
	unlink(path);
	CHECK_EQ_INT(db_create(path, &db, NULL, 0, err, sizeof(err)), 0);
	/* two sockets, each reading 1 byte/ns and writing 0.5 byte/ns, sampled
	 * every 10 ms from t = 1 s to t = 2 s */
	char sql[256];
	db_exec(db, "BEGIN", err, sizeof(err));
	for (uint64_t t = 1000000000; t <= 2000000000; t += 10000000)
		for (int s = 0; s < 2; s++) {
			double x = (double)(t - 1000000000);
			snprintf(sql, sizeof(sql), "INSERT INTO uncore_sample VALUES (%llu, %d, %.17g, %.17g, %.17g)",
				 (unsigned long long)t, s, x, x / 2, 1.5 * x);
			db_exec(db, sql, err, sizeof(err));
		}
	/* step 0 inside (25 ms, between samples), step 1 partly outside, step 2 incomplete */
	db_exec(db, "INSERT INTO step (step, pid, tid, begin_ns, end_ns, wall_ns, complete) VALUES "
		    "(0, 1, 1, 1105000000, 1130000000, 25000000, 1),"
		    "(1, 1, 1, 1990000000, 2010000000, 20000000, 1),"
		    "(2, 1, 1, 1500000000, NULL, NULL, 0);"
		    "INSERT INTO phase (id, step, name, pid, tid, depth, begin_ns, end_ns, wall_ns, complete) VALUES "
		    "(0, 0, 'p', 1, 1, 0, 1110000000, 1111000000, 1000000, 1);", err, sizeof(err));
	CHECK_EQ_INT(dram_attribute(db, err, sizeof(err)), 0);
	db_exec(db, "COMMIT", err, sizeof(err));

	sqlite3_stmt *st;
	sqlite3_prepare_v2(db, "SELECT step, dram_read_bytes, dram_write_bytes, dram_bytes FROM step ORDER BY step", -1, &st, NULL);
	CHECK(sqlite3_step(st) == SQLITE_ROW);
	CHECK_NEAR(sqlite3_column_double(st, 1), 2 * 25e6, 1e-3); /* 2 sockets x 1 B/ns x 25 ms */
	CHECK_NEAR(sqlite3_column_double(st, 2), 25e6, 1e-3);
	CHECK_NEAR(sqlite3_column_double(st, 3), 75e6, 1e-3);
	CHECK(sqlite3_step(st) == SQLITE_ROW);
	CHECK_EQ_INT(sqlite3_column_type(st, 3), SQLITE_NULL); /* outside the sampled span */
	CHECK(sqlite3_step(st) == SQLITE_ROW);
	CHECK_EQ_INT(sqlite3_column_type(st, 3), SQLITE_NULL); /* never ended */
	sqlite3_finalize(st);
	sqlite3_prepare_v2(db, "SELECT dram_bytes FROM phase", -1, &st, NULL);
	CHECK(sqlite3_step(st) == SQLITE_ROW);
	CHECK_NEAR(sqlite3_column_double(st, 0), 3e6, 1e-3);
	sqlite3_finalize(st);
	sqlite3_close(db);
	unlink(path);
}

int main(void)
{
	test_interp();
	test_attribute();
	return check_status();
}
