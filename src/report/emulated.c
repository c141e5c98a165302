/* Emulated runs in reports (emulated.h). */
#include "emulated.h"
#include "db.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The counted-FLOP columns --hw-flops-from takes from the other run. */
static const char *const hw_cols[] = {
	"hw_flops", "hw_flops_fp64", "hw_flops_fp32", "hw_flops_fp16", "hw_flops_any", "hw_fraction",
};

static int is_hw_col(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(hw_cols); i++)
		if (strcmp(name, hw_cols[i]) == 0)
			return 1;
	return 0;
}

/* One text value of a one-row query, into @out ("" for NULL or no row).
 * Returns 0 or -EIO (@err set). */
static int query_text(sqlite3 *db, const char *sql, char *out, size_t len, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc;

	out[0] = '\0';
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		strbuf(err, errlen, "%s", sqlite3_errmsg(db));
		return -EIO;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		strbuf(out, len, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		strbuf(err, errlen, "%s", sqlite3_errmsg(db));
		return -EIO;
	}
	return 0;
}

static int query_int(sqlite3 *db, const char *sql, long long *v, char *err, size_t errlen)
{
	char buf[32];
	int rc = query_text(db, sql, buf, sizeof(buf), err, errlen);

	*v = rc ? 0 : strtoll(buf, NULL, 10);
	return rc;
}

/* Run @sql (from sqlite3_mprintf: NULL when it ran out of memory) and free
 * it. Returns 0, -ENOMEM or -EIO (@err set). */
static int exec_free(sqlite3 *db, char *sql, char *err, size_t errlen)
{
	int rc;

	if (!sql) {
		strbuf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = db_exec(db, sql, err, errlen);
	sqlite3_free(sql);
	return rc ? -EIO : 0;
}

/* "SELECT <columns of @schema.@table, each as @alias.name, with the
 * counted-FLOP ones from @hw_alias instead when @hw_alias is set, and the
 * peaks NULL when @null_peaks (their sources then begin 'not used
 * (emulated run): ')>" into @buf. Generated columns included. */
static int column_list(sqlite3 *db, const char *schema, const char *table, const char *alias,
		       const char *hw_alias, int null_peaks, char **buf, char *err, size_t errlen)
{
	char sql[160];
	sqlite3_stmt *st = NULL;
	size_t len = 0, cap = 0;
	int rc, n = 0;

	*buf = NULL;
	strbuf(sql, sizeof(sql), "SELECT name, hidden FROM pragma_table_xinfo('%s', '%s')", table, schema);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		strbuf(err, errlen, "%s", sqlite3_errmsg(db));
		return -EIO;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		char item[200];
		if (!name || sqlite3_column_int(st, 1) == 1)
			continue; /* a virtual table's hidden column */
		if (null_peaks && (strcmp(name, "peak_flops") == 0 || strcmp(name, "peak_bw") == 0))
			strbuf(item, sizeof(item), "%sNULL AS %s", n ? ", " : "", name);
		else if (null_peaks && (strcmp(name, "peak_flops_source") == 0 || strcmp(name, "peak_bw_source") == 0))
			/* the peak is hidden, its source says why */
			strbuf(item, sizeof(item), "%s'not used (emulated run): ' || %s.%s AS %s", n ? ", " : "",
			       alias, name, name);
		else if (hw_alias && is_hw_col(name))
			strbuf(item, sizeof(item), "%s%s.%s AS %s", n ? ", " : "", hw_alias, name, name);
		else
			strbuf(item, sizeof(item), "%s%s.\"%s\"", n ? ", " : "", alias, name);
		if (buf_append(buf, &len, &cap, item, strlen(item))) {
			sqlite3_finalize(st);
			free(*buf);
			*buf = NULL;
			strbuf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		n++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE || n == 0) {
		free(*buf);
		*buf = NULL;
		strbuf(err, errlen, "%s", rc != SQLITE_DONE ? sqlite3_errmsg(db) : "no such table");
		return -EIO;
	}
	return 0;
}

int emulated_run_view(sqlite3 *db, char *err, size_t errlen)
{
	char engine[200], *cols = NULL, *sql;
	int rc;

	if (query_text(db, "SELECT emulated FROM main.run WHERE id = 1", engine, sizeof(engine), err, errlen))
		return -EIO;
	if (!engine[0])
		return 0;
	rc = column_list(db, "main", "run", "r", NULL, 1, &cols, err, errlen);
	if (rc)
		return rc;
	sql = sqlite3_mprintf("CREATE TEMP VIEW run AS SELECT %s FROM main.run AS r", cols);
	free(cols);
	rc = exec_free(db, sql, err, errlen);
	return rc ? rc : 1;
}

/* The program a run ran: its command's first word, without the directory
 * (the same program may be run from two places, or with other args). */
static int program_of(sqlite3 *db, const char *schema, char *out, size_t len, char *err, size_t errlen)
{
	char sql[200], *slash;

	strbuf(sql, sizeof(sql), "SELECT json_extract(command, '$[0]') FROM %s.run WHERE id = 1", schema);
	if (query_text(db, sql, out, len, err, errlen))
		return -EIO;
	slash = strrchr(out, '/');
	if (slash)
		memmove(out, slash + 1, strlen(slash + 1) + 1);
	return 0;
}

/* Can the run in @path give counts to the one in main? 0, or -EINVAL with
 * @err set. */
static int check_source(sqlite3 *db, const char *path, char *engine, size_t elen, char *err, size_t errlen)
{
	char mine[256], theirs[256], main_emu[200];
	long long counted;

	if (query_text(db, "SELECT emulated FROM main.run WHERE id = 1", main_emu, sizeof(main_emu), err, errlen) ||
	    query_text(db, "SELECT emulated FROM hwf.run WHERE id = 1", engine, elen, err, errlen) ||
	    query_int(db, "SELECT count(*) FROM hwf.step WHERE complete = 1 AND hw_flops IS NOT NULL", &counted,
		      err, errlen) ||
	    program_of(db, "main", mine, sizeof(mine), err, errlen) ||
	    program_of(db, "hwf", theirs, sizeof(theirs), err, errlen))
		return -EIO;
	if (main_emu[0]) {
		strbuf(err, errlen, "--hw-flops-from gives a native run the counts of an emulated one, and "
		       "this run is emulated itself (%s): name the native run with --db", main_emu);
		return -EINVAL;
	}
	if (strcmp(mine, theirs) != 0) {
		strbuf(err, errlen, "--hw-flops-from %s: that run is of another program ('%s', this one ran "
		       "'%s'): steps of different programs do not match", path, theirs, mine);
		return -EINVAL;
	}
	if (counted == 0) {
		strbuf(err, errlen, "--hw-flops-from %s: no complete step of that run has counted FLOPs "
		       "(record it with mfu-record --emulate, or on a machine with FP counters)", path);
		return -EINVAL;
	}
	return 0;
}

/* The views of main's steps and phases with the other run's counts. */
static int make_views(sqlite3 *db, char *err, size_t errlen)
{
	char *cols = NULL, *sql;
	int rc;

	rc = column_list(db, "main", "step", "s", "e", 0, &cols, err, errlen);
	if (rc)
		return rc;
	/* a step's counts are known only when both are complete */
	sql = sqlite3_mprintf("CREATE TEMP VIEW mfu_hw_step AS SELECT %s FROM main.step AS s "
			      "LEFT JOIN hwf.step AS e ON e.step = s.step AND e.complete = 1 AND s.complete = 1",
			      cols);
	free(cols);
	rc = exec_free(db, sql, err, errlen);
	if (rc)
		return rc;
	rc = column_list(db, "main", "phase", "p", "e", 0, &cols, err, errlen);
	if (rc)
		return rc;
	/* a phase matches the one of the same name and occurrence (in begin
	 * order) in the step of the same index, or outside steps */
	sql = sqlite3_mprintf("CREATE TEMP VIEW mfu_hw_phase AS "
			      "WITH p AS (SELECT *, row_number() OVER (PARTITION BY step, name ORDER BY begin_ns, id) "
			      "AS mfu_nth FROM main.phase), "
			      "e AS (SELECT *, row_number() OVER (PARTITION BY step, name ORDER BY begin_ns, id) "
			      "AS mfu_nth FROM hwf.phase) "
			      "SELECT %s FROM p LEFT JOIN e ON e.step IS p.step AND e.name = p.name "
			      "AND e.mfu_nth = p.mfu_nth AND e.complete = 1 AND p.complete = 1",
			      cols);
	free(cols);
	return exec_free(db, sql, err, errlen);
}

/* The notes: where the counts come from, and what did not match. */
static int make_notes(sqlite3 *db, const char *path, const char *engine, char *err, size_t errlen)
{
	long long steps, matched, theirs, own, phases, pmatched;
	char *sql;
	int rc;

	if (query_int(db, "SELECT count(*) FROM main.step WHERE complete = 1", &steps, err, errlen) ||
	    query_int(db, "SELECT count(*) FROM mfu_hw_step WHERE complete = 1 AND hw_flops IS NOT NULL", &matched,
		      err, errlen) ||
	    query_int(db, "SELECT count(*) FROM hwf.step WHERE complete = 1", &theirs, err, errlen) ||
	    query_int(db, "SELECT count(*) FROM main.step WHERE complete = 1 AND hw_flops IS NOT NULL", &own, err,
		      errlen) ||
	    query_int(db, "SELECT count(*) FROM main.phase WHERE complete = 1", &phases, err, errlen) ||
	    query_int(db, "SELECT count(*) FROM mfu_hw_phase WHERE complete = 1 AND hw_flops IS NOT NULL",
		      &pmatched, err, errlen))
		return -EIO;
	if (db_exec(db, "CREATE TEMP TABLE mfu_hw_note (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, "
		    "text TEXT NOT NULL)", err, errlen))
		return -EIO;
	char beyond[160] = "";
	if (theirs > steps)
		strbuf(beyond, sizeof(beyond), " (that run has %lld complete steps: those beyond this run's "
		       "are not used)", theirs);
	sql = sqlite3_mprintf(
		"INSERT INTO mfu_hw_note (id, kind, text) VALUES (1000000000, 'hw_flops_from', "
		"'counted FLOPs (hw_flops, hfu) come from ' || %Q || ' (' || %Q || '), matched by step index: "
		"%lld of this run''s %lld complete steps have them%s; ' || %Q || %Q)",
		path, engine[0] ? engine : "counted by its PMU", matched, steps,
		matched < steps ? " (the others'' hfu is unknown)" : "",
		own ? "they replace the FLOPs this run counted itself" : "cycles, instructions and IPC stay this run's own",
		beyond);
	rc = exec_free(db, sql, err, errlen);
	if (rc)
		return rc;
	/* the same program with other arguments (fewer steps, say) is the
	 * usual case, but other arguments can mean other work per step (a
	 * Python interpreter running another script): say so */
	sql = sqlite3_mprintf("INSERT INTO mfu_hw_note (id, kind, text) "
			      "SELECT 1000000002, 'hw_flops_from', 'the two runs'' commands differ (this one: ' || "
			      "m.command || '; ' || %Q || ': ' || h.command || '): the counts are right for this run''s "
			      "steps only if each step does the same work in both' "
			      "FROM main.run AS m, hwf.run AS h WHERE m.id = 1 AND h.id = 1 AND m.command <> h.command",
			      path);
	rc = exec_free(db, sql, err, errlen);
	if (rc)
		return rc;
	if (phases > pmatched) {
		sql = sqlite3_mprintf("INSERT INTO mfu_hw_note (id, kind, text) VALUES (1000000001, 'hw_flops_from', "
				      "'%lld of this run''s %lld complete phases have no match in ' || %Q || ' (no "
				      "phase of the same name and occurrence in the step of the same index): their hfu "
				      "is unknown')",
				      phases - pmatched, phases, path);
		rc = exec_free(db, sql, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

int emulated_hw_from(sqlite3 *db, const char *path, char *err, size_t errlen)
{
	sqlite3 *other = NULL;
	char engine[600];
	int rc;

	/* what mfu-report says of any database it cannot read */
	rc = db_open_readonly(path, &other, engine, sizeof(engine));
	sqlite3_close(other);
	if (rc) {
		strbuf(err, errlen, "--hw-flops-from %s", engine);
		return -EINVAL;
	}
	rc = exec_free(db, sqlite3_mprintf("ATTACH DATABASE %Q AS hwf", path), err, errlen);
	if (rc)
		return rc;
	rc = check_source(db, path, engine, sizeof(engine), err, errlen);
	if (!rc)
		rc = make_views(db, err, errlen);
	if (!rc)
		rc = make_notes(db, path, engine, err, errlen);
	return rc;
}
