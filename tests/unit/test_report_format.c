/* mfu-report's output formats: number text, escaping, format names. */
#include "check.h"
#include "report/format.h"
#include "report/format_impl.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void test_double_table(void)
{
	static const struct {
		int line;
		double v;
		const char *want;
	} rows[] = {
		{ __LINE__, 0.0, "0" },
		{ __LINE__, 1.0, "1" },
		{ __LINE__, -2.5, "-2.5" },
		{ __LINE__, 0.9, "0.9" },
		{ __LINE__, 907919 / 1e6, "0.907919" },
		{ __LINE__, 123456789 / 1e6, "123.456789" },
		{ __LINE__, 2e8, "200000000" },
		{ __LINE__, 1.2e12, "1200000000000" },
		{ __LINE__, 0.1 + 0.2, "0.30000000000000004" },
		{ __LINE__, 1.0 / 3, "0.33333333333333331" },
		{ __LINE__, 2.0 / 3 * 1e-3, "0.00066666666666666664" },
		{ __LINE__, 1e-7 / 3, "3.3333333333333334e-08" },
		{ __LINE__, 1e300, "1.0000000000000001e+300" },
		{ __LINE__, 6.02214076e23, "6.0221407599999999e+23" }, /* %.17g, not shortest */
		{ __LINE__, 9007199254740993.0, "9007199254740992" },
		{ __LINE__, 1e17, "1e+17" },
		{ __LINE__, 5e-324, "4.9406564584124654e-324" },
		{ __LINE__, INFINITY, "inf" },
		{ __LINE__, -INFINITY, "-inf" },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t n = format_double(buf, rows[i].v);
		CHECK_ROW(strcmp(buf, rows[i].want) == 0, rows[i].line);
		CHECK_ROW(n == strlen(buf), rows[i].line);
		if (strcmp(buf, rows[i].want))
			fprintf(stderr, "  got %s want %s\n", buf, rows[i].want);
	}
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Every finite double reads back exactly; where the output is not printf's
 * %.17g it must be the short plain decimal. */
static void test_double_roundtrip(void)
{
	char buf[64], ref[64];
	int bad = 0;

	for (int i = 0; i < 2000000; i++) {
		double v;
		uint64_t bits = rng();

		switch (i % 4) {
		case 0: memcpy(&v, &bits, sizeof(v)); break;                     /* any double */
		case 1: v = (double)(bits % 100000000000ull) / 1e6; break;        /* ns -> ms */
		case 2: v = (double)(bits >> 11) / 9007199254740992.0; break;     /* a fraction */
		default: v = ldexp((double)(bits >> 11), (int)(bits % 160) - 80); break;
		}
		if (!isfinite(v))
			continue;
		format_double(buf, v);
		snprintf(ref, sizeof(ref), "%.17g", v);
		if (strtod(buf, NULL) != v || (strcmp(buf, ref) != 0 && (strchr(buf, 'e') || strlen(buf) > strlen(ref)))) {
			if (bad++ < 10)
				fprintf(stderr, "  %s vs %%.17g %s\n", buf, ref);
		}
	}
	CHECK_EQ_INT(bad, 0);
}

static void test_eng(void)
{
	static const struct {
		int line;
		double v;
		const char *want;
	} rows[] = {
		{ __LINE__, 0, "0" },
		{ __LINE__, 12, "12" },
		{ __LINE__, 0.5, "0.5" },
		{ __LINE__, 999, "999" },
		{ __LINE__, 1000, "1.00 k" },
		{ __LINE__, 1234567, "1.23 M" },
		{ __LINE__, 12.34e9, "12.3 G" },
		{ __LINE__, 999.7e9, "1.00 T" },
		{ __LINE__, 123.4e12, "123 T" },
		{ __LINE__, -2.5e15, "-2.50 P" },
		{ __LINE__, 4e18, "4.00 E" },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		format_eng(buf, sizeof(buf), rows[i].v);
		CHECK_ROW(strcmp(buf, rows[i].want) == 0, rows[i].line);
		if (strcmp(buf, rows[i].want))
			fprintf(stderr, "  got '%s' want '%s'\n", buf, rows[i].want);
	}
}

static void test_sanitize(void)
{
	static const struct {
		int line;
		const char *in;
		size_t n;
		int markdown;
		const char *want;
		long width;
	} rows[] = {
		{ __LINE__, "forward", 7, 0, "forward", 7 },
		{ __LINE__, "a,\"b\"\nc", 7, 0, "a,\"b\"\\nc", 8 },
		{ __LINE__, "a|b", 3, 1, "a\\|b", 4 },
		{ __LINE__, "a|b", 3, 0, "a|b", 3 },
		{ __LINE__, "x\x1b[2Jy", 6, 0, "x\\x1b[2Jy", 9 },
		{ __LINE__, "t\tr\r", 4, 0, "t\\tr\\r", 6 },
		{ __LINE__, "bad\xff", 4, 0, "bad\\xff", 7 },
		{ __LINE__, "nul\0x", 5, 0, "nul\\x00x", 8 },
		{ __LINE__, "caf\xc3\xa9", 5, 0, "caf\xc3\xa9", 4 },
		{ __LINE__, "c1\xc2\x9b", 4, 0, "c1\\u009b", 8 },
		{ __LINE__, "rtl\xe2\x80\xae", 6, 0, "rtl\\u202e", 9 },
		{ __LINE__, "back\\slash", 10, 0, "back\\\\slash", 11 },
		{ __LINE__, "*em* `c` <b>", 12, 1, "\\*em\\* \\`c\\` \\<b\\>", 18 },
		{ __LINE__, "\xed\xa0\x80", 3, 0, "\\xed\\xa0\\x80", 12 }, /* a surrogate */
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *buf = NULL;
		size_t len = 0, cap = 0;
		long w = format_sanitize(&buf, &len, &cap, (const unsigned char *)rows[i].in, rows[i].n,
					 rows[i].markdown);
		CHECK_ROW(buf && strcmp(buf, rows[i].want) == 0, rows[i].line);
		CHECK_ROW(w == rows[i].width, rows[i].line);
		if (!buf || strcmp(buf, rows[i].want) || w != rows[i].width)
			fprintf(stderr, "  got '%s' (%ld) want '%s' (%ld)\n", buf ? buf : "(null)", w,
				rows[i].want, rows[i].width);
		free(buf);
	}
}

/* Every column of the analyses keeps its header now that headers come from
 * naming rules plus exceptions (the table is the one the rules replaced). */
static void test_column_labels(void)
{
	static const struct {
		const char *name, *label;
	} rows[] = {
		{ "step", "step" },
		{ "begin_ms", "begin ms" },
		{ "wall_ms", "wall ms" },
		{ "model_flops", "model FLOP" },
		{ "model_bytes", "model bytes" },
		{ "hw_flops", "HW FLOP" },
		{ "mfu", "MFU %" },
		{ "hfu", "HFU %" },
		{ "mbu", "MBU %" },
		{ "cpu_ms", "CPU ms" },
		{ "cpu_util", "CPU util %" },
		{ "ctx_switches", "ctx switches" },
		{ "page_faults", "page faults" },
		{ "ipc", "IPC" },
		{ "t_ms", "t ms" },
		{ "interval_ms", "interval ms" },
		{ "cpus", "CPUs busy" },
		{ "cpu_migrations", "migrations" },
		{ "counts", "counts" },
		{ "cpu_err_ms", "CPU +- ms" },
		{ "phase", "phase" },
		{ "count", "count" },
		{ "total_ms", "total ms" },
		{ "mean_ms", "mean ms" },
		{ "p50_ms", "p50 ms" },
		{ "p95_ms", "p95 ms" },
		{ "share", "share %" },
		{ "steps", "steps" },
		{ "peak_flops", "peak FLOP/s" },
		{ "peak_source", "peak FLOP/s source" },
		{ "peak_bw", "peak bytes/s" },
		{ "peak_bw_source", "peak bytes/s source" },
		{ "dtype", "dtype" },
		{ "mean_step_ms", "mean step ms" },
		{ "p50_step_ms", "p50 step ms" },
		{ "p95_step_ms", "p95 step ms" },
		{ "ncpu", "CPUs" },
		{ "run_ms", "run ms" },
		{ "incomplete_steps", "incomplete steps" },
		{ "lost_records", "lost records" },
		{ "anomalies", "anomalies" },
		{ "exit_status", "exit status" },
		{ "exit_signal", "exit signal" },
		{ "state", "state" },
		{ "kind", "kind" },
		{ "text", "text" },
		{ "missing", "missing" },
		{ "alert", "alert" },
		{ "blocked_ms", "blocked ms" },
		{ "runnable_ms", "runnable ms" },
		{ "kernel_ms", "kernel ms" },
		{ "sync_ms", "sync ms" },
		{ "dispatch_ms", "dispatch ms" },
		{ "unclassified_ms", "unclassified ms" },
		{ "compute_ms", "compute ms" },
		{ "oncpu_ms", "on-CPU ms" },
		{ "samples", "samples" },
		{ "kernel_lo", "kernel lo %" },
		{ "kernel_hi", "kernel hi %" },
		{ "sync_lo", "sync lo %" },
		{ "sync_hi", "sync hi %" },
		{ "dispatch_lo", "dispatch lo %" },
		{ "dispatch_hi", "dispatch hi %" },
		{ "unclassified_lo", "unclassified lo %" },
		{ "unclassified_hi", "unclassified hi %" },
		{ "compute_lo", "compute lo %" },
		{ "compute_hi", "compute hi %" },
		{ "tid", "tid" },
		{ "start_ms", "start ms" },
		{ "dur_ms", "dur ms" },
		{ "where", "where" },
		{ "class", "class" },
		{ "rank", "rank" },
		{ "symbol", "symbol" },
		{ "dso", "library" },
		{ "est_ms", "est ms" },
		{ "share_lo", "share lo %" },
		{ "share_hi", "share hi %" },
		{ "capacity_ms", "capacity ms" },
		{ "idle", "idle %" },
		{ "kernel", "kernel %" },
		{ "sync", "sync %" },
		{ "dispatch", "dispatch %" },
		{ "unclassified", "unclassified %" },
		{ "compute", "compute %" },
		{ "compute_efficiency", "compute eff %" },
		{ "event", "event" },
		{ "raw", "raw" },
		{ "value", "value" },
		{ "per_s", "per s" },
		{ "hw_fraction", "counted %" },
		{ "hw_flops_fp64", "HW FLOP fp64" },
		{ "hw_flops_fp32", "HW FLOP fp32" },
		{ "hw_flops_fp16", "HW FLOP fp16" },
		{ "amx_ops", "AMX ops" },
		{ "dram_bytes", "DRAM bytes" },
		{ "dram_bw_util", "DRAM BW %" },
		{ "e2e_mfu", "e2e MFU %" },
		{ "e2e_wall_ms", "e2e wall ms" },
		{ "union_ms", "union ms" },
		{ "model_flops_per_s", "model FLOP/s" },
		{ "hw_flops_per_s", "HW FLOP/s" },
		{ "model_bytes_per_s", "model bytes/s" },
		{ "skipped_steps", "skipped steps" },
		{ "ncores", "cores" },
		{ "ai_model", "AI model FLOP/B" },
		{ "ai_hw", "AI HW FLOP/B" },
		{ "source", "source" },
		{ "scope", "scope" },
		{ "ratio_to_spec", "vs spec" },
		{ "used", "used" },
		{ "detail", "detail" },
		/* new names need no exception */
		{ "queue_ms", "queue ms" },
		{ "cpu_flops_per_s", "CPU FLOP/s" },
		{ "gpu_lo", "gpu lo %" },
	};
	sqlite3 *db = NULL;

	CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK);
	for (size_t i = 0; db && i < sizeof(rows) / sizeof(rows[0]); i++) {
		char sql[160], err[128], *out = NULL, want[96];
		size_t outlen = 0;
		sqlite3_stmt *st = NULL;
		struct format *f = NULL;
		FILE *mem = open_memstream(&out, &outlen);

		snprintf(sql, sizeof(sql), "SELECT 0.25 AS \"%s\"", rows[i].name);
		CHECK(mem && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK);
		CHECK(format_new(FORMAT_TABLE, mem, 1, &f) == 0);
		CHECK(format_section(f, "s", st, 1, err, sizeof(err)) == 0);
		CHECK(format_end(f) == 0);
		format_free(f);
		sqlite3_finalize(st);
		fclose(mem);
		/* a field/value list: "  LABEL  VALUE" */
		snprintf(want, sizeof(want), "\n  %s  ", rows[i].label);
		CHECK(out && strstr(out, want) != NULL);
		if (!out || !strstr(out, want))
			fprintf(stderr, "  %s: want header '%s' in:\n%s\n", rows[i].name, rows[i].label, out ? out : "");
		free(out);
	}
	sqlite3_close(db);
}

/* A row of nothing but NULLs (an aggregate over no rows: the waterfall's
 * all-steps row of a run without steps) is left out by every format. */
static void test_empty_rows_left_out(void)
{
	static const struct {
		enum format_kind kind;
		const char *want;
	} cases[] = {
		{ FORMAT_CSV, "a,b\n1,\n" },
		{ FORMAT_JSON, "[\n{\"a\":1,\"b\":null}\n]\n" },
		{ FORMAT_TABLE, "s\na  b\n-  -\n1  -\n" },
	};
	sqlite3 *db = NULL;

	CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK);
	for (size_t i = 0; db && i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[128], *out = NULL;
		size_t outlen = 0;
		sqlite3_stmt *st = NULL;
		struct format *f = NULL;
		FILE *mem = open_memstream(&out, &outlen);

		CHECK(mem && sqlite3_prepare_v2(db, "SELECT NULL AS a, NULL AS b UNION ALL SELECT 1, NULL "
						"UNION ALL SELECT NULL, NULL", -1, &st, NULL) == SQLITE_OK);
		CHECK(format_new(cases[i].kind, mem, 1, &f) == 0);
		CHECK(format_section(f, "s", st, 0, err, sizeof(err)) == 0);
		CHECK(format_end(f) == 0);
		format_free(f);
		sqlite3_finalize(st);
		fclose(mem);
		CHECK(out && strcmp(out, cases[i].want) == 0);
		if (!out || strcmp(out, cases[i].want))
			fprintf(stderr, "  case %zu: got '%s' want '%s'\n", i, out ? out : "", cases[i].want);
		free(out);
	}
	sqlite3_close(db);
}

/* ---- bounded numbers (issue 22: a declared 1e300 printed ~250 bytes of
 * stack) ---- */

/* A number printer's output: its length is what it returned, within its
 * buffer, and it reads back as @v (within @rel relative or @abs absolute),
 * or is exactly @want when given. */
static void check_number(int line, const char *what, const char *buf, size_t n, size_t bufsize, double v,
			 const char *want, double rel, double abs)
{
	char *end;
	double back;

	CHECK_ROW(n == strlen(buf), line);
	CHECK_ROW(n < bufsize, line);
	if (want) {
		CHECK_ROW(strcmp(buf, want) == 0, line);
		if (strcmp(buf, want))
			fprintf(stderr, "  %s(%.17g): got '%s' want '%s'\n", what, v, buf, want);
		return;
	}
	back = strtod(buf, &end);
	CHECK_ROW(end != buf, line);
	if (isnan(v)) {
		CHECK_ROW(isnan(back), line);
	} else if (isinf(v)) {
		CHECK_ROW(back == v, line);
	} else {
		CHECK_ROW(fabs(back - v) <= fmax(rel * fabs(v), abs), line);
		if (!(fabs(back - v) <= fmax(rel * fabs(v), abs)))
			fprintf(stderr, "  %s(%.17g): got '%s'\n", what, v, buf);
	}
}

static void test_fixed_bounded(void)
{
	static const struct {
		int line;
		double v;
		int dec;
		const char *want;
	} rows[] = {
		{ __LINE__, 0, 3, "0.000" },
		{ __LINE__, 1.5, 3, "1.500" },
		{ __LINE__, -1.5, 2, "-1.50" },
		{ __LINE__, -0.0001, 2, "0.00" },          /* no "-0.00" */
		{ __LINE__, 123456.789, 0, "123457" },
		{ __LINE__, 999999999999.999, 3, "999999999999.999" },
		{ __LINE__, 99999999999999.9, 3, "99999999999999.906" }, /* printf's digits, as before */
		{ __LINE__, 999999999999999.0, 0, "999999999999999" },
		{ __LINE__, 1e15, 3, "1e+15" },            /* from here: 6 significant digits */
		{ __LINE__, -1234567890123456789.0, 2, "-1.23457e+18" },
		{ __LINE__, 1e300, 3, "1e+300" },
		{ __LINE__, 1e302, 2, "1e+302" },          /* a 1e300 MFU in percent */
		{ __LINE__, -DBL_MAX, 3, "-1.79769e+308" },
		{ __LINE__, DBL_MIN, 3, "0.000" },
		{ __LINE__, 5e-324, 2, "0.00" },
		{ __LINE__, INFINITY, 3, "inf" },
		{ __LINE__, -INFINITY, 0, "-inf" },
		{ __LINE__, NAN, 2, "nan" },
		{ __LINE__, -NAN, 2, "nan" },
		{ __LINE__, 0.123456789012, 99, "0.123456789" }, /* decimals capped at 9 */
		{ __LINE__, 2.5, -4, "3" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char buf[FMT_NUM_MAX + 16];
		size_t n;

		memset(buf, 'X', sizeof(buf));
		n = fmt_fixed(buf, rows[i].v, rows[i].dec);
		check_number(rows[i].line, "fmt_fixed", buf, n, FMT_NUM_MAX, rows[i].v, rows[i].want, 0, 0);
		/* nothing past the NUL, nothing past FMT_NUM_MAX */
		for (size_t k = FMT_NUM_MAX; k < sizeof(buf); k++)
			CHECK_ROW(buf[k] == 'X', rows[i].line);
	}
}

static void test_eng_bounded(void)
{
	static const struct {
		int line;
		double v;
		size_t len;
		const char *want;
	} rows[] = {
		{ __LINE__, 999.5e18, 64, "1e+21" },
		{ __LINE__, 5e20, 64, "500 E" },
		{ __LINE__, 999.4e18, 64, "999 E" },
		{ __LINE__, 1e300, 64, "1e+300" },
		{ __LINE__, -1.234e300, 64, "-1.23e+300" },
		{ __LINE__, 1e-300, 64, "1e-300" },
		{ __LINE__, -0.0042, 64, "-0.0042" },
		{ __LINE__, INFINITY, 64, "inf" },
		{ __LINE__, -INFINITY, 64, "-inf" },
		{ __LINE__, NAN, 64, "nan" },
		/* a short buffer: cut, never past it, and the length says so */
		{ __LINE__, 1234567, 4, "1.2" },
		{ __LINE__, 1e300, 3, "1e" },
		{ __LINE__, 1e300, 1, "" },
		{ __LINE__, 12, 2, "1" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char buf[80];
		size_t n;

		memset(buf, 'X', sizeof(buf));
		n = format_eng(buf, rows[i].len, rows[i].v);
		check_number(rows[i].line, "format_eng", buf, n, rows[i].len, rows[i].v, rows[i].want, 0, 0);
		for (size_t k = rows[i].len; k < sizeof(buf); k++)
			CHECK_ROW(buf[k] == 'X', rows[i].line);
	}
	CHECK_EQ_INT(format_eng(NULL, 0, 1e300), 0);
}

/* Every double, every number of decimals: what each printer returns is what
 * it wrote, inside FMT_NUM_MAX, and reads back as the value. */
static void test_numbers_bounded_random(void)
{
	int bad = 0;

	for (int i = 0; i < 400000; i++) {
		uint64_t bits = rng();
		char buf[FMT_NUM_MAX + 16];
		size_t n;
		double v;
		int dec = (int)(bits % 13) - 1;

		if (i % 2)
			memcpy(&v, &bits, sizeof(v));                          /* any double */
		else
			v = ldexp((double)(bits >> 11), (int)(bits % 120) - 60); /* near the 1e15 edge too */
		memset(buf, 'X', sizeof(buf));
		n = fmt_fixed(buf, v, dec);
		if (n != strlen(buf) || n >= FMT_NUM_MAX || buf[FMT_NUM_MAX] != 'X') {
			if (bad++ < 10)
				fprintf(stderr, "  fmt_fixed(%.17g, %d): %zu bytes '%s'\n", v, dec, n, buf);
			continue;
		}
		if (isfinite(v)) {
			int d = dec < 0 ? 0 : dec > FMT_FIXED_MAX_DEC ? FMT_FIXED_MAX_DEC : dec;
			double back = strtod(buf, NULL);
			/* fixed: half a unit of the last decimal (and the double's own
			 * 16 digits); scientific: 6 significant digits */
			double tol = fabs(v) >= 1e15 ? 5e-6 * fabs(v) : 0.5 * pow(10, -d) + 4e-16 * fabs(v);
			if (!(fabs(back - v) <= tol * 1.000001)) {
				if (bad++ < 10)
					fprintf(stderr, "  fmt_fixed(%.17g, %d) = '%s'\n", v, dec, buf);
			}
		}
		memset(buf, 'X', sizeof(buf));
		n = format_double(buf, v);
		if (n != strlen(buf) || n >= FMT_NUM_MAX || (isfinite(v) && strtod(buf, NULL) != v)) {
			if (bad++ < 10)
				fprintf(stderr, "  format_double(%.17g) = '%s'\n", v, buf);
		}
		for (size_t len = 1; len <= 40; len += 13) {
			memset(buf, 'X', sizeof(buf));
			n = format_eng(buf, len, v);
			if (n != strlen(buf) || n >= len || buf[len] != 'X') {
				if (bad++ < 10)
					fprintf(stderr, "  format_eng(%.17g, %zu) = '%s'\n", v, len, buf);
			}
		}
	}
	CHECK_EQ_INT(bad, 0);
}

/* Run @sql (one statement; @text bound to ?1 if not NULL) through format
 * @kind and return the malloc'd output. */
static char *run_format(sqlite3 *db, enum format_kind kind, int raw, const char *sql, const char *text, size_t textlen,
			int single_row)
{
	char err[128], *out = NULL;
	size_t outlen = 0;
	sqlite3_stmt *st = NULL;
	struct format *f = NULL;
	FILE *mem = open_memstream(&out, &outlen);

	CHECK(mem && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK);
	if (text)
		sqlite3_bind_text(st, 1, text, (int)textlen, SQLITE_STATIC);
	CHECK(format_new(kind, mem, 1, &f) == 0);
	format_set_raw(f, raw);
	CHECK(format_section(f, "s", st, single_row, err, sizeof(err)) == 0);
	CHECK(format_end(f) == 0);
	format_free(f);
	sqlite3_finalize(st);
	fclose(mem);
	return out;
}

/* A library's path is its file name in table and markdown, whole in csv
 * and json; a path without '/' or ending in one is shown as it is. */
static void test_path_cells(void)
{
	static const char *const sql =
		"SELECT '/usr/lib/x86_64-linux-gnu/libc.so.6' AS dso UNION ALL SELECT '[vdso]' UNION ALL SELECT '/odd/'";
	sqlite3 *db = NULL;

	CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK);
	char *t = run_format(db, FORMAT_TABLE, 0, sql, NULL, 0, 0);
	CHECK(t && strstr(t, "\nlibc.so.6\n") && !strstr(t, "/usr/lib") && strstr(t, "\n[vdso]") &&
	      strstr(t, "\n/odd/"));
	char *c = run_format(db, FORMAT_CSV, 0, sql, NULL, 0, 0);
	CHECK(c && strstr(c, "/usr/lib/x86_64-linux-gnu/libc.so.6"));
	char *j = run_format(db, FORMAT_JSON, 0, sql, NULL, 0, 0);
	CHECK(j && strstr(j, "/usr/lib/x86_64-linux-gnu/libc.so.6"));
	free(t);
	free(c);
	free(j);
	sqlite3_close(db);
}

/* A field/value list leaves its unknown (NULL) fields out, and names them
 * on one last line, in order; csv and json keep them. */
static void test_unknown_fields_one_line(void)
{
	static const char *const sql = "SELECT 3 AS steps, NULL AS wall_ms, 0.5 AS mfu, NULL AS job_mfu";
	sqlite3 *db = NULL;

	CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK);
	char *t = run_format(db, FORMAT_TABLE, 0, sql, NULL, 0, 1);
	CHECK(t && strstr(t, "  steps  ") && strstr(t, "50.00") && !strstr(t, "  -\n"));
	CHECK(t && strstr(t, "  not known  wall ms, job MFU %\n"));
	if (t && !strstr(t, "  not known  wall ms, job MFU %\n"))
		fprintf(stderr, "%s\n", t);
	char *m = run_format(db, FORMAT_MARKDOWN, 0, sql, NULL, 0, 1);
	CHECK(m && strstr(m, "| not known | wall ms, job MFU % |"));
	char *c = run_format(db, FORMAT_CSV, 0, sql, NULL, 0, 1);
	CHECK(c && strstr(c, "steps,wall_ms,mfu,job_mfu\n3,,0.5,\n"));
	char *none = run_format(db, FORMAT_TABLE, 0, "SELECT 1 AS steps", NULL, 0, 1);
	CHECK(none && !strstr(none, "not known"));
	free(t);
	free(m);
	free(c);
	free(none);
	sqlite3_close(db);
}

/* A declared 1e300 FLOPs through every cell style of the human formats:
 * bounded, readable numbers, and an MFU that says it is impossible. */
static void test_absurd_values_in_cells(void)
{
	static const char *const sql =
		"SELECT 1e300 AS model_flops, 1e300 / 1e-3 AS model_flops_per_s, 1e298 AS mfu, 50.0 AS hfu,"
		" -1e300 AS wall_ms, 1e300 AS share, 1e300 AS ipc, 1e300 AS steps, 1e-300 AS count,"
		" -9e18 AS page_faults, 1.5 AS mbu, 100.5 AS dram_bw_util";
	static const struct {
		const char *label, *value;
	} want[] = {
		{ "model FLOP", "1e+300" },
		{ "model FLOP/s", "1e+303" },
		{ "MFU %", "impossible" },
		{ "HFU %", "5000.00!" },      /* above 100%: flagged, still a number */
		{ "wall ms", "-1e+300" },
		{ "share %", "1e+302" },
		{ "IPC", "1e+300" },
		{ "steps", "1e+300" },
		{ "count", "1e-300" },
		{ "page faults", "-9e+18" },
		{ "MBU %", "150.00!" },
		{ "DRAM BW %", "impossible" },
	};
	sqlite3 *db = NULL;

	CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK);
	for (int md = 0; db && md < 2; md++) {
		for (int single = 0; single < 2; single++) {
			char *out = run_format(db, md ? FORMAT_MARKDOWN : FORMAT_TABLE, 0, sql, NULL, 0, single);

			CHECK(out && strlen(out) < 2000);
			for (size_t i = 0; out && i < sizeof(want) / sizeof(want[0]); i++) {
				CHECK(strstr(out, want[i].value) != NULL);
				if (!strstr(out, want[i].value))
					fprintf(stderr, "  %s: want '%s' in:\n%s\n", want[i].label, want[i].value, out);
			}
			/* only printable text: no byte of anything else */
			for (const char *c = out; c && *c; c++)
				CHECK(*c == '\n' || (*c >= 0x20 && *c < 0x7f));
			free(out);
		}
	}
	/* csv and json keep the numbers, in full */
	{
		char *out = run_format(db, FORMAT_CSV, 0, "SELECT 1e298 AS mfu, -1e300 AS wall_ms", NULL, 0, 0);
		CHECK(out && strcmp(out, "mfu,wall_ms\n9.9999999999999996e+297,-1.0000000000000001e+300\n") == 0);
		free(out);
	}
	sqlite3_close(db);
}

/* ---- csv for terminals and spreadsheets (issue 22) ---- */

static void test_csv_text(void)
{
	static const struct {
		int line;
		const char *in;
		size_t n;
		const char *want;     /* the csv field */
		const char *want_raw; /* with --raw */
	} rows[] = {
		{ __LINE__, "forward", 7, "forward", "forward" },
		{ __LINE__, "", 0, "", "" },
		/* terminal escapes: shown, not obeyed */
		{ __LINE__, "\x1b]0;pwned\x07", 10, "\\x1b]0;pwned\\x07", "\"\x1b]0;pwned\x07\"" },
		{ __LINE__, "ok\rgone", 7, "ok\\rgone", "\"ok\rgone\"" },
		{ __LINE__, "a\nb", 3, "a\\nb", "\"a\nb\"" },
		{ __LINE__, "c1\xc2\x9b" "2J", 6, "c1\\u009b2J", "c1\xc2\x9b" "2J" },
		{ __LINE__, "rtl\xe2\x80\xae" "x", 7, "rtl\\u202ex", "rtl\xe2\x80\xae" "x" },
		{ __LINE__, "bad\xff", 4, "bad\\xff", "bad\xff" },
		{ __LINE__, "nul\0x", 5, "nul\\x00x", "\"nul\0x\"" },
		{ __LINE__, "back\\slash", 10, "back\\\\slash", "back\\slash" },
		{ __LINE__, "caf\xc3\xa9", 5, "caf\xc3\xa9", "caf\xc3\xa9" },
		/* RFC 4180 quoting */
		{ __LINE__, "a,\"b\"", 5, "\"a,\"\"b\"\"\"", "\"a,\"\"b\"\"\"" },
		/* formulas: a ' in front (OWASP), inside the quotes */
		{ __LINE__, "=HYPERLINK(\"http://x\",\"y\")", 26, "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"",
		  "\"=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\"" },
		{ __LINE__, "=1+1", 4, "'=1+1", "=1+1" },
		{ __LINE__, "+1+2", 4, "'+1+2", "+1+2" },
		{ __LINE__, "-2+3", 4, "'-2+3", "-2+3" },
		{ __LINE__, "@SUM(A1)", 8, "'@SUM(A1)", "@SUM(A1)" },
		{ __LINE__, "=cmd|' /C calc'!A0", 18, "'=cmd|' /C calc'!A0", "=cmd|' /C calc'!A0" },
		{ __LINE__, "-", 1, "'-", "-" },
		{ __LINE__, "--x", 3, "'--x", "--x" },
		{ __LINE__, "-inf", 4, "'-inf", "-inf" },
		{ __LINE__, "\t=1+1", 5, "\\t=1+1", "\"\t=1+1\"" },  /* escaped: starts with '\' */
		{ __LINE__, "\r=1+1", 5, "\\r=1+1", "\"\r=1+1\"" },
		/* text that is a plain number stays a number */
		{ __LINE__, "-1.5", 4, "-1.5", "-1.5" },
		{ __LINE__, "+2", 2, "+2", "+2" },
		{ __LINE__, "-3e-7", 5, "-3e-7", "-3e-7" },
		{ __LINE__, "-.5", 3, "-.5", "-.5" },
		{ __LINE__, "-1e", 3, "'-1e", "-1e" },
		{ __LINE__, "-1.5.2", 6, "'-1.5.2", "-1.5.2" },
		/* not at the start: left alone */
		{ __LINE__, "a=1+1", 5, "a=1+1", "a=1+1" },
		{ __LINE__, " =1+1", 5, " =1+1", " =1+1" },
	};
	sqlite3 *db = NULL;

	CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK);
	for (size_t i = 0; db && i < sizeof(rows) / sizeof(rows[0]); i++) {
		for (int raw = 0; raw < 2; raw++) {
			const char *w = raw ? rows[i].want_raw : rows[i].want;
			char want[128], *out;
			size_t wlen = strlen(w);

			/* a NUL in the raw output: compare as bytes */
			if (raw && memchr(rows[i].in, '\0', rows[i].n))
				wlen = rows[i].n + 2;
			memcpy(want, "name\n", 5);
			memcpy(want + 5, w, wlen);
			memcpy(want + 5 + wlen, "\n", 2);
			out = run_format(db, FORMAT_CSV, raw, "SELECT ?1 AS name", rows[i].in, rows[i].n, 0);
			CHECK_ROW(out && memcmp(out, want, wlen + 7) == 0, rows[i].line);
			if (!out || memcmp(out, want, wlen + 7))
				fprintf(stderr, "  raw %d: got '%s' want '%s'\n", raw, out ? out : "", want);
			free(out);
		}
	}
	sqlite3_close(db);
}

/* Numbers are never guarded: a negative number stays a number in csv, and
 * the table and json are unchanged. */
static void test_csv_numbers_stay_numbers(void)
{
	sqlite3 *db = NULL;
	char *out;

	CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK);
	out = run_format(db, FORMAT_CSV, 0,
			 "SELECT -1.5 AS a, -2 AS b, -1e300 AS c, '-1.5' AS d, '-2+3' AS e, '=A1' AS \"=f\"", NULL, 0, 0);
	CHECK(out && strcmp(out, "a,b,c,d,e,'=f\n-1.5,-2,-1.0000000000000001e+300,-1.5,'-2+3,'=A1\n") == 0);
	if (out && strcmp(out, "a,b,c,d,e,'=f\n-1.5,-2,-1.0000000000000001e+300,-1.5,'-2+3,'=A1\n"))
		fprintf(stderr, "  got '%s'\n", out);
	free(out);
	out = run_format(db, FORMAT_JSON, 0, "SELECT -1.5 AS a, '=A1' AS b, '\x1b' AS c", NULL, 0, 0);
	CHECK(out && strcmp(out, "[\n{\"a\":-1.5,\"b\":\"=A1\",\"c\":\"\\u001b\"}\n]\n") == 0);
	free(out);
	CHECK(format_csv_guarded((const unsigned char *)"=", 1));
	CHECK(!format_csv_guarded((const unsigned char *)"", 0));
	CHECK(!format_csv_guarded((const unsigned char *)"-0", 2));
	sqlite3_close(db);
}

/* ---- a table of many rows: one pass, bounded, aligned ---- */

static int nrows_called;

static void count_rows(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	nrows_called++;
	sqlite3_result_value(ctx, argv[0]);
}

static void test_grid_streams(void)
{
	static const char *const sql =
		"WITH RECURSIVE i(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM i WHERE n + 1 < 10050)"
		" SELECT counted(n % 10000) AS step, CASE WHEN n = 10030 THEN 'a much longer name' ELSE 'x' END AS phase,"
		" n / 1000.0 AS wall_ms FROM i";
	sqlite3 *db = NULL;

	CHECK(GRID_SIZE_ROWS == 10000);
	CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK);
	CHECK(sqlite3_create_function(db, "counted", 1, SQLITE_UTF8, NULL, count_rows, NULL, NULL) == SQLITE_OK);
	for (int md = 0; db && md < 2; md++) {
		char *out, *line, *save = NULL;
		size_t nlines = 0, width = 0, wide = 0, bad = 0;

		nrows_called = 0;
		out = run_format(db, md ? FORMAT_MARKDOWN : FORMAT_TABLE, 0, sql, NULL, 0, 0);
		/* stepped once: every row formatted once */
		CHECK_EQ_INT(nrows_called, 10050);
		for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			size_t len = strlen(line);

			if (nlines++ == 0)
				continue;                      /* the title */
			if (!width)
				width = len;                   /* the header */
			/* the row with the longer name widens its column from there on */
			if (strstr(line, "a much longer name"))
				wide = len;
			else if (wide && len != wide)
				bad++;
			else if (!wide && len != width)
				bad++;
		}
		CHECK_EQ_INT(nlines, 1 + 2 + 10050);
		CHECK(wide > width);
		CHECK_EQ_INT(bad, 0);
		free(out);
	}
	/* a short section stays aligned on every row */
	{
		char *out = run_format(db, FORMAT_TABLE, 0,
				       "SELECT 1 AS step, 'x' AS phase UNION ALL SELECT 22, 'a longer one'", NULL, 0, 0);
		CHECK(out && strcmp(out, "s\nstep  phase\n----  ------------\n   1  x\n  22  a longer one\n") == 0);
		free(out);
	}
	sqlite3_close(db);
}

/* format_set_columns: table and markdown show the listed columns in the
 * list's order (names the section lacks skipped, a list naming none of its
 * columns shows all) and count those left out under the table; csv and
 * json carry every column. Each row is a case, with its line. */
static void test_chosen_columns(void)
{
	static const struct {
		int line;
		enum format_kind kind;
		const char *list;
		const char *want;
		int empty; /* the section has no row */
	} cases[] = {
		/* of no rows there is nothing more to see: no count */
		{ __LINE__, FORMAT_TABLE, "c,a", "s\nc  a\n-  -\n(no rows)\n", 1 },
		{ __LINE__, FORMAT_TABLE, "c,a", "s\nc  a\n-  -\n3  1\n(1 more column: --columns all; csv and json carry every column)\n" },
		{ __LINE__, FORMAT_TABLE, "a,zz,a", "s\na\n-\n1\n(2 more columns: --columns all; csv and json carry every column)\n" },
		{ __LINE__, FORMAT_TABLE, "zz", "s\na  b  c\n-  -  -\n1  2  3\n" },
		{ __LINE__, FORMAT_TABLE, NULL, "s\na  b  c\n-  -  -\n1  2  3\n" },
		{ __LINE__, FORMAT_MARKDOWN, "b", "### s\n\n| b |\n| ---: |\n| 2 |\n\n(2 more columns: --columns all; csv and json carry every column)\n" },
		{ __LINE__, FORMAT_CSV, "b", "a,b,c\n1,2,3\n" },
		{ __LINE__, FORMAT_JSON, "b", "[\n{\"a\":1,\"b\":2,\"c\":3}\n]\n" },
	};
	sqlite3 *db = NULL;

	CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK);
	for (size_t i = 0; db && i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[128], *out = NULL;
		size_t outlen = 0;
		sqlite3_stmt *st = NULL;
		struct format *f = NULL;
		FILE *mem = open_memstream(&out, &outlen);

		CHECK(mem && sqlite3_prepare_v2(db, cases[i].empty ? "SELECT 1 AS a, 2 AS b, 3 AS c WHERE 0"
								   : "SELECT 1 AS a, 2 AS b, 3 AS c", -1, &st, NULL) == SQLITE_OK);
		CHECK(format_new(cases[i].kind, mem, 1, &f) == 0);
		CHECK(format_set_columns(f, cases[i].list) == 0);
		CHECK(format_section(f, "s", st, 0, err, sizeof(err)) == 0);
		CHECK(format_end(f) == 0);
		format_free(f);
		sqlite3_finalize(st);
		fclose(mem);
		CHECK(out && strcmp(out, cases[i].want) == 0);
		if (!out || strcmp(out, cases[i].want))
			fprintf(stderr, "  line %d: got '%s' want '%s'\n", cases[i].line, out ? out : "", cases[i].want);
		free(out);
	}
	sqlite3_close(db);
}

static void test_parse(void)
{
	enum format_kind k;

	CHECK(format_parse("table", &k) == 0 && k == FORMAT_TABLE);
	CHECK(format_parse("csv", &k) == 0 && k == FORMAT_CSV);
	CHECK(format_parse("json", &k) == 0 && k == FORMAT_JSON);
	CHECK(format_parse("markdown", &k) == 0 && k == FORMAT_MARKDOWN);
	CHECK(format_parse("md", &k) == 0 && k == FORMAT_MARKDOWN);
	CHECK(format_parse("xml", &k) < 0);
	CHECK(format_parse("", &k) < 0);
	CHECK(format_parse("CSV", &k) < 0);
	CHECK(format_is_human(FORMAT_TABLE) && format_is_human(FORMAT_MARKDOWN));
	CHECK(!format_is_human(FORMAT_CSV) && !format_is_human(FORMAT_JSON));
}

int main(void)
{
	test_column_labels();
	test_double_table();
	test_double_roundtrip();
	test_eng();
	test_sanitize();
	test_parse();
	test_empty_rows_left_out();
	test_fixed_bounded();
	test_eng_bounded();
	test_numbers_bounded_random();
	test_absurd_values_in_cells();
	test_csv_text();
	test_csv_numbers_stay_numbers();
	test_grid_streams();
	test_chosen_columns();
	test_path_cells();
	test_unknown_fields_one_line();
	return check_status();
}
