/* Library calls inside the executable (lib_probes.h), at the end of the
 * recording: the hits paired into calls, then added to steps and phases. */
#include "lib_probes_impl.h"
#include "libflops.h"
#include "libflops_list.h"

static int exec_sql(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

/* Pair each thread's entries and returns in time order into the calls
 * that count: those that returned while no other counted call of their
 * thread was running, but workspace queries (flops -1). A function whose
 * FLOPs are unknown (flops NULL) is a call when no counted call encloses
 * it, and does not hide the counted calls it makes (as in the counting
 * library). */
static int pair_calls(sqlite3 *db, uint64_t *calls)
{
	sqlite3_stmt *q = NULL, *ins = NULL;
	struct { int func; double flops; } stack[64];
	const int cap = (int)(sizeof(stack) / sizeof(stack[0]));
	int depth = 0, counted = 0, rc = -EIO;
	int64_t tid = -1;

	if (exec_sql(db, "CREATE TEMP TABLE lib_hit (pid INTEGER, time_ns INTEGER, func INTEGER, flops REAL)") ||
	    sqlite3_prepare_v2(db, "SELECT time_ns, pid, tid, func, ret, flops FROM lib_hit_raw"
			       " ORDER BY tid, time_ns, ret", -1, &q, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO lib_hit VALUES (?,?,?,?)", -1, &ins, NULL) != SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		int func = sqlite3_column_int(q, 3), fn;
		int unknown = func >= 0 && (unsigned)func < LIBFLOPS_NIDS && libflops_funcs[func].op == LIBFLOPS_UNKNOWN;
		double flops;

		if (sqlite3_column_int64(q, 2) != tid) {
			tid = sqlite3_column_int64(q, 2);
			depth = counted = 0;
		}
		if (!sqlite3_column_int(q, 4)) {
			/* deeper than any BLAS nests: only the outer calls matter */
			if (depth < cap) {
				stack[depth].func = func;
				stack[depth].flops = sqlite3_column_type(q, 5) == SQLITE_NULL ? 0 : sqlite3_column_double(q, 5);
			}
			depth++;
			counted += !unknown;
			continue;
		}
		if (depth == 0)
			continue; /* a call that began before the events existed */
		depth--;
		if (!unknown && counted > 0)
			counted--;
		fn = depth < cap ? stack[depth].func : func;
		flops = depth < cap ? stack[depth].flops : 0;
		if (counted > 0 || flops < 0)
			continue; /* inside a counted call, or a workspace query */
		sqlite3_bind_int64(ins, 1, sqlite3_column_int64(q, 1));
		sqlite3_bind_int64(ins, 2, sqlite3_column_int64(q, 0));
		sqlite3_bind_int(ins, 3, fn);
		if (unknown)
			sqlite3_bind_null(ins, 4);
		else
			sqlite3_bind_double(ins, 4, flops);
		if (sqlite3_step(ins) != SQLITE_DONE)
			break;
		sqlite3_reset(ins);
		(*calls)++;
	}
	rc = rc == SQLITE_DONE ? 0 : -EIO;
out:
	sqlite3_finalize(q);
	sqlite3_finalize(ins);
	return rc;
}

/* The functions' names and precisions, for the SQL below. */
static int func_table(sqlite3 *db)
{
	sqlite3_stmt *ins = NULL;
	int rc = -EIO;

	if (exec_sql(db, "CREATE TEMP TABLE lib_func (id INTEGER PRIMARY KEY, name TEXT, prec INTEGER,"
		     " precision TEXT)") ||
	    sqlite3_prepare_v2(db, "INSERT INTO lib_func VALUES (?,?,?,?)", -1, &ins, NULL) != SQLITE_OK)
		goto out;
	for (unsigned i = 0; i < libflops_nfuncs; i++) {
		sqlite3_bind_int(ins, 1, (int)i);
		sqlite3_bind_text(ins, 2, libflops_funcs[i].name, -1, SQLITE_STATIC);
		sqlite3_bind_int(ins, 3, libflops_funcs[i].prec);
		sqlite3_bind_text(ins, 4, libflops_prec_name(libflops_funcs[i].prec), -1, SQLITE_STATIC);
		if (sqlite3_step(ins) != SQLITE_DONE)
			goto out;
		sqlite3_reset(ins);
	}
	rc = 0;
out:
	sqlite3_finalize(ins);
	return rc;
}

/* The calls of each interval, by the process's time window (whole
 * process, like the counters), added to its library columns; a row that
 * the counting library left NULL for calls whose FLOPs are unknown (its
 * lib_calls are not NULL) adds to 0, and is NULL again when no FLOPs were
 * counted in the end. */
#define ADD_CALLS(table, key)                                                                              \
	"UPDATE " table " SET lib_flops = 0, lib_flops_fp64 = 0, lib_flops_fp32 = 0, lib_flops_bf16 = 0,"  \
	" lib_flops_fp16 = 0, lib_ops_int8 = 0, lib_calls = 0, lib_calls_unknown = 0"                      \
	" WHERE complete = 1 AND lib_calls IS NULL AND pid IN lib_pid"                                      \
	" AND (counts = 'exact' OR pid NOT IN lib_shim_pid);"                                               \
	"UPDATE " table " SET lib_flops = coalesce(lib_flops, 0) + x.f,"                                    \
	" lib_flops_fp64 = coalesce(lib_flops_fp64, 0) + x.f0, lib_flops_fp32 = coalesce(lib_flops_fp32, 0) + x.f1," \
	" lib_flops_bf16 = coalesce(lib_flops_bf16, 0) + x.f2, lib_flops_fp16 = coalesce(lib_flops_fp16, 0) + x.f3," \
	" lib_ops_int8 = coalesce(lib_ops_int8, 0) + x.f4,"                                                 \
	" lib_calls = lib_calls + x.n, lib_calls_unknown = coalesce(lib_calls_unknown, 0) + x.u"             \
	" FROM (SELECT s." key " AS id, total(h.flops) AS f, count(*) AS n, count(*) - count(h.flops) AS u," \
	"   total(CASE f.prec WHEN 0 THEN h.flops END) AS f0, total(CASE f.prec WHEN 1 THEN h.flops END) AS f1," \
	"   total(CASE f.prec WHEN 2 THEN h.flops END) AS f2, total(CASE f.prec WHEN 3 THEN h.flops END) AS f3," \
	"   total(CASE f.prec WHEN 4 THEN h.flops END) AS f4"                                              \
	"   FROM " table " AS s JOIN lib_hit AS h ON h.pid = s.pid AND h.time_ns >= s.begin_ns"             \
	"   AND h.time_ns < s.end_ns JOIN lib_func AS f ON f.id = h.func"                                     \
	"   WHERE s.complete = 1 AND s.lib_calls IS NOT NULL GROUP BY s." key ") AS x"                       \
	" WHERE " table "." key " = x.id;"                                                                   \
	"UPDATE " table " SET lib_flops = NULL, lib_flops_fp64 = NULL, lib_flops_fp32 = NULL,"             \
	" lib_flops_bf16 = NULL, lib_flops_fp16 = NULL, lib_ops_int8 = NULL"                               \
	" WHERE lib_calls_unknown > 0 AND lib_flops = 0 AND pid IN lib_pid;"

static const char attribute_sql[] =
	"CREATE INDEX temp.lib_hit_pid_time ON lib_hit (pid, time_ns);"
	ADD_CALLS("step", "step")
	ADD_CALLS("phase", "id")
	"INSERT INTO lib_call (step, function, precision, calls, flops)"
	" SELECT s.step, f.name, f.precision, count(*), sum(h.flops)"
	" FROM step AS s JOIN lib_hit AS h ON h.pid = s.pid AND h.time_ns >= s.begin_ns AND h.time_ns < s.end_ns"
	" JOIN lib_func AS f ON f.id = h.func WHERE s.complete = 1 GROUP BY s.step, f.id"
	" ON CONFLICT (step, function) DO UPDATE SET calls = calls + excluded.calls,"
	" flops = flops + excluded.flops;";

/* The processes in which the counting library counted calls: their steps
 * from probes (no marker read its counters) stay unknown, whatever the
 * uprobes saw. */
static int shim_pids(sqlite3 *db, const struct libflops_region *lf)
{
	sqlite3_stmt *ins = NULL;
	int rc = -EIO;

	if (exec_sql(db, "CREATE TEMP TABLE lib_shim_pid (pid INTEGER PRIMARY KEY)") ||
	    sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO lib_shim_pid VALUES (?)", -1, &ins, NULL) != SQLITE_OK)
		goto out;
	for (int i = 0; lf && i < LIBFLOPS_MAX_PROCS; i++) {
		uint64_t w[LIBFLOPS_WORDS];
		int32_t pid = __atomic_load_n(&lf->procs[i].pid, __ATOMIC_ACQUIRE);

		libflops_sum(&lf->procs[i], w);
		if (pid <= 0 || !w[0])
			continue;
		sqlite3_bind_int(ins, 1, pid);
		if (sqlite3_step(ins) != SQLITE_DONE)
			goto out;
		sqlite3_reset(ins);
	}
	rc = 0;
out:
	sqlite3_finalize(ins);
	return rc;
}

int lib_probes_finish(struct lib_probes *lp, sqlite3 *db, pid_t pid, const struct libflops_region *lf,
		      char *note, size_t notelen)
{
	sqlite3_stmt *st = NULL;
	uint64_t calls = 0, lost;
	char names[256] = "";
	int err;

	note[0] = '\0';
	if (!lp)
		return 0;
	err = lib_probes_drain(lp, db);
	/* no more hits: the database may be closed before lib_probes_free() */
	sqlite3_finalize(lp->ins);
	lp->ins = NULL;
	if (!err)
		err = pair_calls(db, &calls);
	if (!err)
		err = func_table(db);
	if (!err)
		err = shim_pids(db, lf);
	if (!err && (sqlite3_prepare_v2(db, "CREATE TEMP TABLE lib_pid AS SELECT ? AS pid UNION"
					 " SELECT DISTINCT pid FROM lib_hit_raw", -1, &st, NULL) != SQLITE_OK ||
		     sqlite3_bind_int(st, 1, (int)pid) != SQLITE_OK || sqlite3_step(st) != SQLITE_DONE))
		err = -EIO;
	sqlite3_finalize(st);
	if (!err)
		err = exec_sql(db, attribute_sql);
	for (size_t i = 0; i < lp->nev && i < 4; i++) {
		size_t len = strlen(names);
		strbuf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "", libflops_funcs[lp->ev[i].func].name);
	}
	lost = perf_ring_lost(lp->rings, -1) + perf_ring_lost_samples(lp->rings, -1);
	strbuf(note, notelen, "the executable %s has %zu BLAS/oneDNN functions linked in (%s%s), which "
	       "preloading cannot reach: their %llu calls were counted with uprobes (a few microseconds "
	       "each)%s", lp->exe, lp->nev, names, lp->nev > 4 ? ", ..." : "", (unsigned long long)calls,
	       lost ? "; some hits were lost, so lib_flops may be too low" : "");
	return err;
}

/* The executable's calls in the whole run's library counts: the run row,
 * run_lib_call, and each lib_reading at or after them (cumulative; their
 * lib_calls_begun NULL: a hit says nothing of the calls running). */
static const char run_sql[] =
	"CREATE TEMP TABLE lib_hit_cum AS SELECT h.time_ns AS t,"
	" sum(h.flops) OVER w AS f,"
	" total(CASE f.prec WHEN 0 THEN h.flops END) OVER w AS f0,"
	" total(CASE f.prec WHEN 1 THEN h.flops END) OVER w AS f1,"
	" total(CASE f.prec WHEN 2 THEN h.flops END) OVER w AS f2,"
	" total(CASE f.prec WHEN 3 THEN h.flops END) OVER w AS f3,"
	" total(CASE f.prec WHEN 4 THEN h.flops END) OVER w AS f4,"
	" count(*) OVER w AS n"
	" FROM lib_hit AS h JOIN lib_func AS f ON f.id = h.func"
	" WINDOW w AS (ORDER BY h.time_ns, h.rowid ROWS UNBOUNDED PRECEDING);"
	"CREATE INDEX temp.lib_hit_cum_t ON lib_hit_cum (t);"
	"UPDATE run SET lib_flops = coalesce(lib_flops, 0) + CAST(x.f AS INTEGER),"
	" lib_flops_fp64 = coalesce(lib_flops_fp64, 0) + CAST(x.f0 AS INTEGER),"
	" lib_flops_fp32 = coalesce(lib_flops_fp32, 0) + CAST(x.f1 AS INTEGER),"
	" lib_flops_bf16 = coalesce(lib_flops_bf16, 0) + CAST(x.f2 AS INTEGER),"
	" lib_flops_fp16 = coalesce(lib_flops_fp16, 0) + CAST(x.f3 AS INTEGER),"
	" lib_ops_int8 = coalesce(lib_ops_int8, 0) + CAST(x.f4 AS INTEGER),"
	" lib_calls = coalesce(lib_calls, 0) + x.n"
	" FROM (SELECT f, f0, f1, f2, f3, f4, n FROM lib_hit_cum ORDER BY t DESC, n DESC LIMIT 1) AS x"
	" WHERE id = 1;"
	"INSERT INTO run_lib_call (function, precision, calls, flops)"
	" SELECT f.name, f.precision, count(*), CAST(total(h.flops) AS INTEGER)"
	" FROM lib_hit AS h JOIN lib_func AS f ON f.id = h.func GROUP BY f.id"
	" ON CONFLICT (function) DO UPDATE SET calls = calls + excluded.calls, flops = flops + excluded.flops;"
	"UPDATE lib_reading SET lib_flops = lib_flops + CAST(c.f AS INTEGER),"
	" lib_flops_fp64 = lib_flops_fp64 + CAST(c.f0 AS INTEGER),"
	" lib_flops_fp32 = lib_flops_fp32 + CAST(c.f1 AS INTEGER),"
	" lib_flops_bf16 = lib_flops_bf16 + CAST(c.f2 AS INTEGER),"
	" lib_flops_fp16 = lib_flops_fp16 + CAST(c.f3 AS INTEGER),"
	" lib_ops_int8 = lib_ops_int8 + CAST(c.f4 AS INTEGER), lib_calls = lib_calls + c.n,"
	" lib_calls_begun = NULL"
	" FROM (SELECT r.time_ns AS rt, (SELECT max(t) FROM lib_hit_cum WHERE t <= r.time_ns) AS ct"
	"       FROM lib_reading AS r) AS m"
	" JOIN lib_hit_cum AS c ON c.t = m.ct"
	" WHERE lib_reading.time_ns = m.rt"
	" AND c.n = (SELECT max(n) FROM lib_hit_cum WHERE t = m.ct);"
	"DROP TABLE temp.lib_hit_cum;";

int lib_probes_add_run(struct lib_probes *lp, sqlite3 *db)
{
	if (!lp)
		return 0;
	return exec_sql(db, run_sql);
}
