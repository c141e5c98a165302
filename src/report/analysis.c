#include "analysis.h"
#include "embedded.h"
#include "step_totals.h"
#include "phase_stats.h"
#include "time_split.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct analysis analyses[] = {
	{ "summary", "the whole run: steps, time, MFU/HFU/MBU, the peaks used, how it ended", 1 },
	{ "steps", "one row per complete step: time, FLOPs, bytes, MFU, HFU, MBU, CPU use", 0,
	  "step,wall_ms,model_flops,flops_source,model_bytes,mfu,hfu,mbu,cpu_ms,cpu_util,ipc" },
	{ "phases", "one row per phase name: count, total/mean/p50/p95 time, share of step time, MFU", 0,
	  "phase,count,total_ms,mean_ms,p50_ms,p95_ms,share,mfu,hfu,mbu,cpu_ms" },
	{ "notes", "what to know about the data: missing counters, peaks used, anomalies, lost records", 0 },
	/* the lo/hi columns (a Wilson interval per class) are left out by
	 * default: with the 1-20 samples a step has, they span most of 0-100%
	 * and say only that the step was short */
	{ "breakdown", "per step: the driver thread's wall time split into blocked, runnable, kernel, sync, dispatch, unclassified, compute", 0,
	  "step,wall_ms,blocked_ms,runnable_ms,kernel_ms,sync_ms,dispatch_ms,unclassified_ms,compute_ms,samples" },
	{ "phase_breakdown", "per phase: the same split for the thread that ran the phase", 0 },
	{ "gaps", "idle gaps: off-CPU intervals inside steps and gaps between steps, with where they happened", 0 },
	{ "dispatch", "per phase: the top dispatch, sync, unclassified and compute functions, from samples", 0 },
	{ "waterfall", "from peak to MFU: idle, sync, kernel, dispatch, unclassified, compute share, compute-kernel efficiency", 0 },
	{ "events", "per step: every hardware and -e event, raw and scaled", 0 },
	{ "intervals", "the counters over time, every -I ms (like perf stat -I): CPUs busy, switches, faults, IPC, FLOPs, HFU", 0 },
	{ "peaks", "every peak known for the run, spec and measured, and which one is used", 0 },
	{ "job", "a job of several ranks (several --db): common steps, job MFU, slowest rank, stragglers", 1 },
	{ "ranks", "per rank of a job: steps, mean step time, times slowest and straggler, its own MFU", 0 },
	{ "job_steps", "per step of a job: each rank matched by step index, slowest rank, max/median, job MFU", 0 },
	{ "job_notes", "a job's notes: the merge's (step counts, ranks), the ranks' own, the job's peak", 0 },
};

const struct analysis *analysis_all(size_t *count)
{
	*count = ARRAY_SIZE(analyses);
	return analyses;
}

const struct analysis *analysis_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(analyses); i++)
		if (strcmp(analyses[i].name, name) == 0)
			return &analyses[i];
	return NULL;
}

const char *analysis_names(void)
{
	static char names[512];

	if (!names[0]) {
		size_t len = 0;
		for (size_t i = 0; i < ARRAY_SIZE(analyses); i++)
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "",
						analyses[i].name);
	}
	return names;
}

const char *analysis_sql(const struct analysis *a)
{
	char file[64];
	const struct mfu_embedded *e;

	if (strbuf(file, sizeof(file), "%s.sql", a->name))
		return NULL;
	e = embedded_find(mfu_analysis_files, file);
	return e ? e->text : NULL;
}

#define COMPUTED_MARK "-- @computed:"
#define END_MARK "-- @end"
#define SUMMARY_MARK "-- @summary:"

/* The line of @sql that starts with @mark, from @from on, or NULL. */
static const char *find_line(const char *sql, const char *from, const char *mark)
{
	for (const char *p = strstr(from, mark); p; p = strstr(p + 1, mark))
		if (p == sql || p[-1] == '\n')
			return p;
	return NULL;
}

/* @sql with every block from a line starting @mark TEXT to the next line
 * starting "-- @end" replaced by TEXT. A malloc'd string or NULL. */
static char *replace_blocks(const char *sql, const char *mark)
{
	size_t len = strlen(sql);
	char *out = malloc(len + 1), *o = out;
	const char *p = sql;

	if (!out)
		return NULL;
	for (const char *m; (m = find_line(sql, p, mark));) {
		const char *text = m + strlen(mark), *eol = strchr(text, '\n');
		const char *end = eol ? find_line(sql, eol, END_MARK) : NULL;

		if (!end) /* an unclosed block is left as it is: it is still SQL */
			break;
		memcpy(o, p, (size_t)(m - p));
		o += m - p;
		memcpy(o, text, (size_t)(eol - text));
		o += eol - text;
		p = end + strlen(END_MARK);
	}
	/* the replacement is never longer than the block it replaces */
	memcpy(o, p, strlen(p) + 1);
	return out;
}

char *analysis_computed_sql(const char *sql)
{
	return replace_blocks(sql, COMPUTED_MARK);
}

int analysis_register(sqlite3 *db, char *err, size_t errlen)
{
	if (phase_stats_register(db) || step_totals_register(db) != SQLITE_OK || time_split_register(db)) {
		strbuf(err, errlen, "cannot register mfu-report's SQL tables and functions: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	return 0;
}

int analysis_prepare(const struct analysis *a, sqlite3 *db, sqlite3_stmt **out, char *err, size_t errlen)
{
	return analysis_prepare_summary(a, db, 0, out, err, errlen);
}

int analysis_prepare_summary(const struct analysis *a, sqlite3 *db, int summary, sqlite3_stmt **out, char *err,
			     size_t errlen)
{
	const char *text = analysis_sql(a), *tail = NULL;
	char *sql = NULL, *variant = NULL;
	int rc = -EIO;

	*out = NULL;
	if (!text) {
		strbuf(err, errlen, "analyses/%s.sql is missing from this build", a->name);
		return -ENOENT;
	}
	if (summary && strstr(text, SUMMARY_MARK)) {
		variant = replace_blocks(text, SUMMARY_MARK);
		if (!variant) {
			strbuf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		text = variant;
	}
	if (strstr(text, COMPUTED_MARK)) {
		sqlite3_stmt *probe = NULL;

		/* the C tables, registered once per connection (runview_open()
		 * does; the probe is only prepared, never run) */
		if (sqlite3_prepare_v2(db, "SELECT 1 FROM mfu_phase_stats", -1, &probe, NULL) != SQLITE_OK &&
		    analysis_register(db, err, errlen)) {
			sqlite3_finalize(probe);
			free(variant);
			return -EIO;
		}
		sqlite3_finalize(probe);
		sql = analysis_computed_sql(text);
		if (!sql) {
			strbuf(err, errlen, "out of memory");
			free(variant);
			return -ENOMEM;
		}
		text = sql;
	}
	if (sqlite3_prepare_v2(db, text, -1, out, &tail) != SQLITE_OK) {
		strbuf(err, errlen, "%s", sqlite3_errmsg(db));
		sqlite3_finalize(*out);
		*out = NULL;
		goto out;
	}
	/* One statement per file: a second one would be silently ignored. */
	if (*out && tail && *tail) {
		sqlite3_stmt *extra = NULL;
		int src = sqlite3_prepare_v2(db, tail, -1, &extra, NULL);

		sqlite3_finalize(extra);
		if (src != SQLITE_OK || extra)
			tail = NULL;
	}
	if (!*out || !tail) {
		strbuf(err, errlen, "analyses/%s.sql must hold exactly one SELECT", a->name);
		sqlite3_finalize(*out);
		*out = NULL;
		rc = -EINVAL;
		goto out;
	}
	rc = 0;
out:
	free(sql);
	free(variant);
	return rc;
}

/* @name@ in @sql -> the text of analyses/name.sql without its final ';',
 * or @own_sql for @own_name@ when @own_name is not NULL.
 * Returns a malloc'd string or NULL (out of memory, or an unknown name). */
static char *substitute_own(const char *sql, const char *own_name, const char *own_sql)
{
	size_t cap = 0, len = 0;
	char *out = NULL;

	if (buf_append(&out, &len, &cap, "", 0))
		return NULL;
	for (const char *p = sql; *p;) {
		const char *end = *p == '@' ? strchr(p + 1, '@') : NULL;
		const char *text = NULL;
		size_t n = 1;
		char name[64];

		if (end && (size_t)(end - p - 1) < sizeof(name) && end > p + 1) {
			memcpy(name, p + 1, (size_t)(end - p - 1));
			name[end - p - 1] = '\0';
			const struct analysis *a = analysis_find(name);
			text = own_name && strcmp(name, own_name) == 0 ? own_sql : a ? analysis_sql(a) : NULL;
		}
		if (text) {
			n = strlen(text);
			while (n && (text[n - 1] == ';' || text[n - 1] == '\n' || text[n - 1] == ' '))
				n--;
		} else {
			text = p;
		}
		if (buf_append(&out, &len, &cap, text, n)) {
			free(out);
			return NULL;
		}
		p = text == p ? p + 1 : end + 1;
	}
	return out;
}

static char *substitute(const char *sql)
{
	return substitute_own(sql, NULL, NULL);
}

char *analysis_expand(const char *file)
{
	const struct mfu_embedded *e = embedded_find(mfu_analysis_files, file);

	return e ? substitute(e->text) : NULL;
}

/* The SELECT of one row: "SELECT ?1 AS "c1", ?2 AS "c2"..." with the
 * column names of @row, or NULL when out of memory. */
static char *row_select(sqlite3_stmt *row)
{
	size_t cap = 0, len = 0;
	char *out = NULL, *item;
	int ok = !buf_append(&out, &len, &cap, "SELECT ", 7);

	for (int i = 0; ok && i < sqlite3_column_count(row); i++) {
		item = sqlite3_mprintf("%s?%d AS \"%w\"", i ? ", " : "", i + 1, sqlite3_column_name(row, i));
		ok = item && !buf_append(&out, &len, &cap, item, strlen(item));
		sqlite3_free(item);
	}
	if (!ok) {
		free(out);
		return NULL;
	}
	return out;
}

int analysis_verdict_row(const struct analysis *a, sqlite3 *db, sqlite3_stmt *row, char **text, char *err,
			 size_t errlen)
{
	char file[80], *own = NULL;
	const struct mfu_embedded *e;
	sqlite3_stmt *st = NULL;
	char *sql;
	int rc = 0;

	*text = NULL;
	if (strbuf(file, sizeof(file), "%s_verdict.sql", a->name))
		return 0;
	e = embedded_find(mfu_analysis_files, file);
	if (!e)
		return 0;
	if (row && !(own = row_select(row)))
		return -ENOMEM;
	sql = substitute_own(e->text, row ? a->name : NULL, own);
	free(own);
	if (!sql)
		return -ENOMEM;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		strbuf(err, errlen, "%s: %s", file, sqlite3_errmsg(db));
		rc = -EIO;
		goto out;
	}
	for (int i = 0; row && i < sqlite3_column_count(row); i++)
		if (sqlite3_bind_value(st, i + 1, sqlite3_column_value(row, i)) != SQLITE_OK) {
			strbuf(err, errlen, "%s: %s", file, sqlite3_errmsg(db));
			rc = -EIO;
			goto out;
		}
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
		*text = strdup((const char *)sqlite3_column_text(st, 0));
		if (!*text)
			rc = -ENOMEM;
	}
out:
	sqlite3_finalize(st);
	free(sql);
	return rc;
}

int analysis_verdict(const struct analysis *a, sqlite3 *db, char **text, char *err, size_t errlen)
{
	return analysis_verdict_row(a, db, NULL, text, err, errlen);
}
