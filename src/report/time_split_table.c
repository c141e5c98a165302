/* mfu_phase_split and mfu_step_samples: the eponymous virtual tables that
 * serve time_split.c's scans to phase_breakdown.sql and waterfall.sql (their
 * "-- @computed:" blocks), with the last result kept while the database
 * does not change (the table and markdown formats run a section twice).
 * When a scan meets data it does not compute (TS_IRREGULAR), the table's
 * rows are those of the file's own plain SQL: every CTE up to the block's
 * "-- @end" line, then SELECT * FROM the CTE the block replaces. */
#include "time_split.h"
#include "time_split_impl.h"
#include "analysis.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ts_kind {
	const char *module, *declare;
	const char *analysis, *cte; /* the plain SQL: analyses/<analysis>.sql's CTE <cte> */
	int named;                  /* column 0 is the name */
	int (*scan)(sqlite3 *db, struct ts_table *t);
};

static const struct ts_kind kinds[] = {
	{ "mfu_phase_split",
	  "CREATE TABLE x(name, first_id, count, wall_ns, blocked_ns, runnable_ns, n, nk, ns, nd, nu, nc)",
	  "phase_breakdown", "g", 1, ts_phase_split },
	{ "mfu_step_samples", "CREATE TABLE x(step, n, nk, ns, nd, nu, nc)", "waterfall", "smp", 0, ts_step_samples },
};

long ts_table_add(struct ts_table *t, int named)
{
	size_t cap = t->cap, n = (size_t)t->ncols;

	if (t->nrows + 1 > t->cap) {
		cap = t->cap ? 2 * t->cap : 16;
		int64_t *v = realloc(t->v, cap * n * sizeof(*v));
		unsigned char *null = v ? realloc(t->null, cap * n) : NULL;

		if (v)
			t->v = v;
		if (null)
			t->null = null;
		if (!v || !null)
			return -1;
		if (named) {
			char **names = realloc(t->names, cap * sizeof(*names));
			int *len = names ? realloc(t->name_len, cap * sizeof(*len)) : NULL;
			unsigned char *blob = len ? realloc(t->name_blob, cap) : NULL;

			if (names)
				t->names = names;
			if (len)
				t->name_len = len;
			if (blob)
				t->name_blob = blob;
			if (!blob)
				return -1;
		}
		t->cap = cap;
	}
	memset(t->v + t->nrows * n, 0, n * sizeof(*t->v));
	memset(t->null + t->nrows * n, 0, n);
	if (named)
		t->names[t->nrows] = NULL;
	return (long)t->nrows++;
}

static void ts_table_destroy(struct cached_result *r)
{
	struct ts_table *t = (struct ts_table *)r;

	for (size_t i = 0; t->names && i < t->nrows; i++)
		free(t->names[i]);
	for (size_t i = 0; t->fallback && i < t->nrows * (size_t)t->ncols; i++)
		sqlite3_value_free(t->fallback[i]);
	free(t->names);
	free(t->name_len);
	free(t->name_blob);
	free(t->v);
	free(t->null);
	free(t->fallback);
	free(t);
}

/* The line of @sql starting with @mark, from @from on, or NULL. */
static const char *line_of(const char *sql, const char *from, const char *mark)
{
	for (const char *p = strstr(from, mark); p; p = strstr(p + 1, mark))
		if (p == sql || p[-1] == '\n')
			return p;
	return NULL;
}

/* The plain SQL of @k's CTE: a malloc'd string, or NULL. */
static char *plain_sql(const struct ts_kind *k)
{
	const struct analysis *a = analysis_find(k->analysis);
	const char *text = a ? analysis_sql(a) : NULL, *block, *end;
	char *sql;
	size_t n;

	block = text ? line_of(text, text, "-- @computed:") : NULL;
	end = block ? line_of(text, block, "-- @end") : NULL;
	if (!end)
		return NULL;
	n = (size_t)(end - text);
	while (n && strchr(" \t\n", text[n - 1]))
		n--;
	if (!n || text[n - 1] != ',')
		return NULL;
	sql = malloc(n + 32);
	if (sql)
		snprintf(sql, n + 32, "%.*s\nSELECT * FROM %s", (int)(n - 1), text, k->cte);
	return sql;
}

/* @t's rows from the plain SQL. Returns an SQLite code, with SQLite's
 * message in *@msg (sqlite3_malloc'd). */
static int fallback_rows(sqlite3 *db, const struct ts_kind *k, struct ts_table *t, char **msg)
{
	char *sql = plain_sql(k);
	sqlite3_stmt *st = NULL;
	size_t cap = 0, n = (size_t)t->ncols;
	int rc = sql ? sqlite3_prepare_v2(db, sql, -1, &st, NULL) : SQLITE_ERROR;

	if (rc == SQLITE_OK && sqlite3_column_count(st) != t->ncols)
		rc = SQLITE_ERROR;
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (array_grow(&t->fallback, &cap, (t->nrows + 1) * n, sizeof(*t->fallback))) {
			rc = SQLITE_NOMEM;
			break;
		}
		for (size_t i = 0; i < n; i++)
			t->fallback[t->nrows * n + i] = sqlite3_value_dup(sqlite3_column_value(st, (int)i));
		t->nrows++;
		for (size_t i = 0; i < n; i++)
			if (!t->fallback[(t->nrows - 1) * n + i])
				rc = SQLITE_NOMEM;
		if (rc == SQLITE_ROW)
			rc = SQLITE_OK;
	}
	if (rc != SQLITE_DONE)
		*msg = sqlite3_mprintf("%s", sql ? sqlite3_errmsg(db) : "out of memory");
	sqlite3_finalize(st);
	free(sql);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static struct ts_table *table_new(int ncols)
{
	struct ts_table *t = calloc(1, sizeof(*t));

	if (t) {
		t->base.refs = 1;
		t->base.destroy = ts_table_destroy;
		t->ncols = ncols;
	}
	return t;
}

/* A fresh table of @k's rows in *@out. Returns an SQLite code, with the
 * message in *@msg. */
static int table_compute(sqlite3 *db, const struct ts_kind *k, struct ts_table **out, char **msg)
{
	struct ts_table *t = table_new(k->named ? 12 : 7);
	int rc;

	*out = NULL;
	if (!t)
		return SQLITE_NOMEM;
	rc = k->scan(db, t);
	if (rc != SQLITE_OK && rc != SQLITE_NOMEM) {
		int ncols = t->ncols;

		/* the scan's partial rows go; the plain SQL makes them all */
		cached_result_unref(&t->base);
		t = table_new(ncols);
		if (!t)
			return SQLITE_NOMEM;
		rc = fallback_rows(db, k, t, msg);
	}
	if (rc != SQLITE_OK) {
		cached_result_unref(&t->base);
		return rc;
	}
	*out = t;
	return SQLITE_OK;
}

/* The table's rows, computed (cached_table.h). */
static int compute(struct cached_table *vt, struct cached_result **out)
{
	const struct ts_kind *k = vt->aux;
	struct ts_table *t;
	char *msg = NULL;
	int rc;

	/* the plain SQL's own message: the section fails as it did */
	rc = table_compute(vt->db, k, &t, &msg);
	if (rc != SQLITE_OK) {
		sqlite3_free(vt->base.zErrMsg);
		vt->base.zErrMsg = msg ? msg : sqlite3_mprintf("%s: out of memory", k->module);
		return rc;
	}
	sqlite3_free(msg);
	*out = &t->base;
	return SQLITE_OK;
}

static int connect_table(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err)
{
	(void)argc;
	(void)argv;
	(void)err;
	return cached_table_connect(db, ((const struct ts_kind *)aux)->declare, aux, compute, out);
}

/* mfu_step_samples takes step = ? (waterfall.sql's per joins it to every
 * step): a binary search of its rows, in step order. SQLite checks the
 * constraint again (omit 0), so a table the plain SQL made may give all
 * its rows instead. */
static int vt_best_index(sqlite3_vtab *base, sqlite3_index_info *info)
{
	const struct ts_kind *k = ((struct cached_table *)base)->aux;

	info->estimatedCost = 1e6;
	info->estimatedRows = k->named ? 1000 : 1000000;
	for (int i = 0; !k->named && i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];

		if (c->usable && c->iColumn == 0 && c->op == SQLITE_INDEX_CONSTRAINT_EQ) {
			info->aConstraintUsage[i].argvIndex = 1;
			info->aConstraintUsage[i].omit = 0;
			info->idxNum = 1;
			info->estimatedCost = 10;
			info->estimatedRows = 1;
			break;
		}
	}
	return SQLITE_OK;
}

static int vt_filter(sqlite3_vtab_cursor *base, int idx, const char *idx_str, int argc, sqlite3_value **argv)
{
	struct cached_cursor *c = (struct cached_cursor *)base;
	const struct ts_table *t;
	int rc;

	(void)idx_str;
	rc = cached_table_filter(c);
	if (rc != SQLITE_OK)
		return rc;
	t = (const struct ts_table *)c->r;
	c->end = t->nrows;
	if (idx == 1 && argc == 1 && !t->fallback && sqlite3_value_type(argv[0]) == SQLITE_INTEGER) {
		int64_t step = sqlite3_value_int64(argv[0]);
		size_t lo = 0, hi = t->nrows, n = (size_t)t->ncols;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (t->v[mid * n] < step)
				lo = mid + 1;
			else
				hi = mid;
		}
		c->row = lo;
		c->end = lo < t->nrows && t->v[lo * n] == step ? lo + 1 : lo;
	}
	return SQLITE_OK;
}

static int vt_column(sqlite3_vtab_cursor *base, sqlite3_context *ctx, int col)
{
	struct cached_cursor *c = (struct cached_cursor *)base;
	const struct ts_table *t = (const struct ts_table *)c->r;
	size_t at = c->row * (size_t)t->ncols + (size_t)col;

	if (t->fallback)
		sqlite3_result_value(ctx, t->fallback[at]);
	else if (col == 0 && t->names && t->name_blob[c->row])
		sqlite3_result_blob(ctx, t->names[c->row], t->name_len[c->row], SQLITE_TRANSIENT);
	else if (col == 0 && t->names)
		sqlite3_result_text(ctx, t->names[c->row], t->name_len[c->row], SQLITE_TRANSIENT);
	else if (t->null[at])
		sqlite3_result_null(ctx);
	else
		sqlite3_result_int64(ctx, t->v[at]);
	return SQLITE_OK;
}

static const sqlite3_module ts_module = CACHED_TABLE_MODULE(vt_best_index, vt_filter, vt_column);

int time_split_register(sqlite3 *db)
{
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (sqlite3_create_module(db, kinds[i].module, &ts_module, (void *)&kinds[i]) != SQLITE_OK)
			return -EIO;
	return 0;
}
