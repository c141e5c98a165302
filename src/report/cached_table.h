/*
 * cached_table: the frame of an eponymous SQLite virtual table whose rows
 * are one computed result (mfu_phase_stats, the time-split tables), kept
 * while the database file is unchanged: the table and markdown formats
 * read every section twice, and a million rows are worth not scanning
 * twice. The module keeps its own xBestIndex, xFilter (which starts with
 * cached_table_filter()), xColumn and its result's layout; the rest is here.
 */
#ifndef MFU_CACHED_TABLE_H
#define MFU_CACHED_TABLE_H

#include <stddef.h>
#include <sqlite3.h>

/* The head of a module's result: the first member of its struct. */
struct cached_result {
	int refs;              /* the table's cache and each cursor reading it */
	unsigned data_version; /* of the database it was computed from */
	int changes;           /* sqlite3_total_changes() then */
	void (*destroy)(struct cached_result *r); /* frees the whole result */
};

/* Drop a reference to @r (NULL: nothing); the last one destroys it. */
void cached_result_unref(struct cached_result *r);

struct cached_table;
/* Make a fresh result with one reference in *@out. Returns an SQLite code;
 * on an error, the message in t->base.zErrMsg (sqlite3_mprintf). */
typedef int (*cached_compute_fn)(struct cached_table *t, struct cached_result **out);

struct cached_table {
	sqlite3_vtab base;
	sqlite3 *db;
	const void *aux;                /* the module's client data */
	cached_compute_fn compute;
	struct cached_result *cache;
};

struct cached_cursor {
	sqlite3_vtab_cursor base;
	struct cached_result *r;        /* what this cursor reads (a reference) */
	size_t row, end;                /* the next row; one past the last */
};

/* xConnect: declare @schema and make the table, computing with @compute. */
int cached_table_connect(sqlite3 *db, const char *schema, const void *aux, cached_compute_fn compute,
			 sqlite3_vtab **out);

/* xFilter's start: the cursor drops what it read and takes the table's
 * result, computed again when the file changed since (its data version
 * moves with every commit, of this connection or another; the change
 * count with this connection's own uncommitted writes). row is 0; the
 * caller sets end. Returns an SQLite code. */
int cached_table_filter(struct cached_cursor *c);

/* The other methods, shared as they are. */
int cached_table_disconnect(sqlite3_vtab *base);
int cached_table_open(sqlite3_vtab *base, sqlite3_vtab_cursor **out);
int cached_table_close(sqlite3_vtab_cursor *base);
int cached_table_next(sqlite3_vtab_cursor *base);
int cached_table_eof(sqlite3_vtab_cursor *base);
int cached_table_rowid(sqlite3_vtab_cursor *base, sqlite3_int64 *rowid);

/* A module of these, eponymous only (no CREATE VIRTUAL TABLE, no schema
 * change), with the module's own @best_index, @filter and @column. */
#define CACHED_TABLE_MODULE(best_index, filter, column)                                   \
	{                                                                                 \
		.iVersion = 0, .xCreate = NULL, .xConnect = connect_table,                \
		.xBestIndex = (best_index), .xDisconnect = cached_table_disconnect,       \
		.xOpen = cached_table_open, .xClose = cached_table_close,                 \
		.xFilter = (filter), .xNext = cached_table_next,                          \
		.xEof = cached_table_eof, .xColumn = (column),                            \
		.xRowid = cached_table_rowid,                                             \
	}

#endif
