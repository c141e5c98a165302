/* mfu-report's analyses: every section has its SQL compiled in, the SQL
 * runs on an empty database of the current schema, and the columns that
 * SPEC section 4 promises are there. */
#include "report/analysis.h"
#include "check.h"
#include "embedded.h"
#include "report/runview.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static sqlite3 *schema_db(void)
{
	sqlite3 *db = NULL;

	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		return NULL;
	for (const struct mfu_embedded *f = mfu_schema_files; f->name; f++)
		if (sqlite3_exec(db, f->text, NULL, NULL, NULL) != SQLITE_OK)
			fprintf(stderr, "schema %s: %s\n", f->name, sqlite3_errmsg(db));
	/* the sections read the views mfu-report makes (analyses/views.sql) */
	struct runview_options o = { 0 };
	char *views = runview_sql(&o);
	if (!views || sqlite3_exec(db, views, NULL, NULL, NULL) != SQLITE_OK)
		fprintf(stderr, "views: %s\n", views ? sqlite3_errmsg(db) : "out of memory");
	free(views);
	return db;
}

static int has_column(sqlite3_stmt *st, const char *name)
{
	for (int i = 0; i < sqlite3_column_count(st); i++)
		if (strcmp(sqlite3_column_name(st, i), name) == 0)
			return 1;
	return 0;
}

static void test_sections(void)
{
	size_t n;
	const struct analysis *all = analysis_all(&n);

	CHECK(n >= 4);
	CHECK(analysis_find("summary") && analysis_find("summary")->single_row);
	CHECK(analysis_find("steps") && !analysis_find("steps")->single_row);
	CHECK(analysis_find("phases") != NULL);
	CHECK(analysis_find("notes") != NULL);
	CHECK(analysis_find("nope") == NULL);
	CHECK(analysis_find("") == NULL);
	CHECK_STR(analysis_names(), "summary, steps, phases, notes, breakdown, phase_breakdown, gaps, dispatch, "
				    "waterfall, events, intervals, peaks, job, ranks, job_steps, job_notes");
	for (size_t i = 0; i < n; i++)
		CHECK(analysis_sql(&all[i]) != NULL);
	/* and every compiled-in analysis is a section */
	for (const struct mfu_embedded *f = mfu_analysis_files; f->name; f++) {
		char name[64];
		size_t len = strlen(f->name);

		CHECK(len > 4 && len < sizeof(name) && strcmp(f->name + len - 4, ".sql") == 0);
		memcpy(name, f->name, len - 4);
		name[len - 4] = '\0';
		/* NAME_verdict.sql is the one-line verdict of section NAME */
		if (len > 12 && strcmp(name + strlen(name) - 8, "_verdict") == 0)
			name[strlen(name) - 8] = '\0';
		/* diff.sql is not a section: the per-step values of --diff;
		 * views.sql and hw_flops_from.sql are the views every section
		 * reads (runview.h), job_views.sql those the job sections read */
		if (strcmp(name, "diff") == 0 || strcmp(name, "views") == 0 || strcmp(name, "hw_flops_from") == 0 ||
		    strcmp(name, "job_views") == 0)
			continue;
		CHECK(analysis_find(name) != NULL);
		if (!analysis_find(name))
			fprintf(stderr, "  analyses/%s is not a section\n", f->name);
	}
}

/* analysis_expand: a file with its at-sign names written out, runnable. */
static void test_expand(void)
{
	char *sql = analysis_expand("diff.sql");

	CHECK(sql != NULL);
	CHECK(sql && strstr(sql, "@breakdown@") == NULL);
	CHECK(sql && strstr(sql, "AS compute_hi") != NULL); /* breakdown.sql's query is in it */
	free(sql);
	CHECK(analysis_expand("nope.sql") == NULL);
}

static void test_columns(void)
{
	static const struct {
		int line;
		const char *section;
		const char *columns;
	} rows[] = {
		{ __LINE__, "steps", "step wall_ms model_flops model_bytes hw_flops mfu hfu mbu cpu_util "
				     "begin_ms cpu_ms ctx_switches page_faults ipc" },
		{ __LINE__, "phases", "phase count total_ms mean_ms p50_ms p95_ms share mfu model_flops cpu_ms hfu mbu" },
		{ __LINE__, "summary", "steps wall_ms mfu peak_flops peak_source peak_bw dtype mean_step_ms "
				       "p50_step_ms mbu hfu cpu_util ncpu lost_records anomalies exit_status "
				       "exit_signal state" },
		{ __LINE__, "notes", "kind text missing alert" },
		{ __LINE__, "summary", "e2e_mfu e2e_wall_ms model_flops_per_s hw_flops_per_s model_bytes_per_s "
				       "skipped_steps" },
		{ __LINE__, "steps", "model_flops_per_s hw_flops_per_s model_bytes_per_s" },
		{ __LINE__, "phases", "union_ms model_flops_per_s hw_flops_per_s model_bytes_per_s" },
		{ __LINE__, "breakdown", "step wall_ms blocked_ms runnable_ms kernel_ms sync_ms dispatch_ms unclassified_ms "
					 "compute_ms sync_lo sync_hi unclassified_lo unclassified_hi" },
		{ __LINE__, "phase_breakdown", "phase count wall_ms kernel_ms sync_ms dispatch_ms unclassified_ms compute_ms" },
		{ __LINE__, "gaps", "kind step tid start_ms dur_ms where" },
		{ __LINE__, "waterfall", "step capacity_ms idle sync kernel dispatch unclassified compute compute_efficiency mfu" },
		{ __LINE__, "dispatch", "phase class symbol samples share est_ms" },
		{ __LINE__, "steps", "hw_flops_fp64 hw_flops_fp32 hw_flops_fp16 hw_fraction dram_bytes dram_bw_util ai_model ai_hw" },
		{ __LINE__, "steps", "counts cpu_err_ms" },
		{ __LINE__, "intervals", "t_ms interval_ms cpus cpu_util ctx_switches cpu_migrations page_faults cycles "
					 "instructions ipc hw_flops hfu" },
	};
	sqlite3 *db = schema_db();

	CHECK(db != NULL);
	for (size_t i = 0; db && i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct analysis *a = analysis_find(rows[i].section);
		sqlite3_stmt *st = NULL;
		char err[256] = "", cols[512], *save = NULL;

		CHECK_ROW(a != NULL, rows[i].line);
		if (!a)
			continue;
		CHECK_ROW(analysis_prepare(a, db, &st, err, sizeof(err)) == 0, rows[i].line);
		if (!st) {
			fprintf(stderr, "  %s: %s\n", rows[i].section, err);
			continue;
		}
		snprintf(cols, sizeof(cols), "%s", rows[i].columns);
		for (char *c = strtok_r(cols, " ", &save); c; c = strtok_r(NULL, " ", &save)) {
			CHECK_ROW(has_column(st, c), rows[i].line);
			if (!has_column(st, c))
				fprintf(stderr, "  %s lacks column %s\n", rows[i].section, c);
		}
		/* Runs on an empty run: the summary is one row of 0 steps. */
		int rc = sqlite3_step(st), rows_seen = 0;
		while (rc == SQLITE_ROW) {
			rows_seen++;
			rc = sqlite3_step(st);
		}
		CHECK_ROW(rc == SQLITE_DONE, rows[i].line);
		if (strcmp(rows[i].section, "summary") == 0)
			CHECK_ROW(rows_seen == 1, rows[i].line);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
}

int main(void)
{
	test_sections();
	test_expand();
	test_columns();
	return check_status();
}
