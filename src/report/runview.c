/* Open a run for reading, with the report's views (runview.h). */
#include "runview.h"
#include "analysis.h"
#include "db.h"
#include "embedded.h"
#include "merge.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *runview_sql(const struct runview_options *o)
{
	const struct mfu_embedded *views = embedded_find(mfu_analysis_files, "views.sql");
	const struct mfu_embedded *hw = embedded_find(mfu_analysis_files, "hw_flops_from.sql");
	char *head, *out = NULL;
	size_t len = 0, cap = 0;

	if (!views || !hw)
		return NULL;
	/* the option values as SQL literals: the views read them from here */
	head = sqlite3_mprintf("-- mfu-report's options (analyses/views.sql reads them from mfu_option)\n"
			       "CREATE TEMP VIEW mfu_option AS\n"
			       "SELECT %ld AS skip_steps, %d AS quiet, %Q AS hw_flops_from, %Q AS dtype;\n",
			       o->skip_steps, !!o->quiet, o->hw_flops_from, o->dtype);
	if (!head)
		return NULL;
	if (buf_append(&out, &len, &cap, head, strlen(head)))
		goto fail;
	sqlite3_free(head);
	head = NULL;
	if (o->hw_flops_from) {
		char *attach = sqlite3_mprintf("ATTACH DATABASE %Q AS hwf;\n", o->hw_flops_from);

		if (!attach || buf_append(&out, &len, &cap, attach, strlen(attach)) ||
		    buf_append(&out, &len, &cap, hw->text, strlen(hw->text))) {
			sqlite3_free(attach);
			goto fail;
		}
		sqlite3_free(attach);
	}
	if (buf_append(&out, &len, &cap, views->text, strlen(views->text)))
		goto fail;
	return out;
fail:
	sqlite3_free(head);
	free(out);
	return NULL;
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

/* --hw-flops-from @path: can that run give counts to the one in main?
 * Attaches it as hwf (@mine_path: the run in main). 0, -EINVAL (said in @err) or -EIO. */
static int hw_from_check(sqlite3 *db, const char *mine_path, const char *path, char *err, size_t errlen)
{
	char mine[256], theirs[256], main_emu[200], counted[32], msg[600];
	sqlite3 *other = NULL;
	char *sql;
	int rc;

	/* what mfu-report says of any database it cannot read */
	rc = db_open_readonly(path, &other, msg, sizeof(msg));
	sqlite3_close(other);
	if (rc) {
		strbuf(err, errlen, "--hw-flops-from %s", msg);
		return -EINVAL;
	}
	if (merge_is_merged(db)) {
		strbuf(err, errlen, "%s is a merged database: --hw-flops-from joins one run's steps to "
		       "another's (give a rank's own database)", mine_path);
		return -EINVAL;
	}
	sql = sqlite3_mprintf("ATTACH DATABASE %Q AS hwf", path);
	if (!sql) {
		strbuf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = db_exec(db, sql, err, errlen);
	sqlite3_free(sql);
	if (rc ||
	    query_text(db, "SELECT emulated FROM main.run WHERE id = 1", main_emu, sizeof(main_emu), err, errlen) ||
	    query_text(db, "SELECT count(*) FROM hwf.step WHERE complete = 1 AND hw_flops IS NOT NULL", counted,
		       sizeof(counted), err, errlen) ||
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
	if (strcmp(counted, "0") == 0) {
		strbuf(err, errlen, "--hw-flops-from %s: no complete step of that run has counted FLOPs "
		       "(record it with mfu-record --emulate, or on a machine with FP counters)", path);
		return -EINVAL;
	}
	return 0;
}

int runview_open(const char *path, const struct runview_options *o, sqlite3 **db, char *err, size_t errlen)
{
	char *sql = NULL, *plain;
	int rc;

	*db = NULL;
	rc = db_open_readonly(path, db, err, errlen);
	if (rc)
		return rc == -EIO ? -EPROTO : rc; /* said in full: no connection to ask */
	if (o->hw_flops_from) {
		rc = hw_from_check(*db, path, o->hw_flops_from, err, errlen);
		if (rc)
			goto fail;
		/* hw_from_check attached it; runview_sql attaches it again */
		if (db_exec(*db, "DETACH DATABASE hwf", err, errlen)) {
			rc = -EIO;
			goto fail;
		}
	}
	/* the views' "-- @computed:" blocks read these (analysis.h) */
	if (analysis_register(*db, err, errlen)) {
		rc = -EIO;
		goto fail;
	}
	plain = runview_sql(o);
	sql = plain ? analysis_computed_sql(plain) : NULL;
	free(plain);
	if (!sql) {
		strbuf(err, errlen, "out of memory, or analyses/views.sql is missing from this build");
		rc = -ENOMEM;
		goto fail;
	}
	if (db_exec(*db, sql, err, errlen) || db_exec(*db, "PRAGMA query_only = 1; BEGIN", err, errlen)) {
		rc = -EIO;
		goto fail;
	}
	free(sql);
	return 0;
fail:
	free(sql);
	if (rc != -EIO) {
		sqlite3_close(*db);
		*db = NULL;
	}
	return rc;
}

void runview_close(sqlite3 *db)
{
	if (!db)
		return;
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(db);
}
