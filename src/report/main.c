/* mfu-report: print the per-step and per-phase MFU of a recorded run. */
#include "analysis.h"
#include "embedded.h"
#include "format.h"
#include "job.h"
#include "options.h"
#include "report.h"
#include "runview.h"
#include "suggest.h"
#include "util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct analysis *find_section(const char *name)
{
	const struct analysis *a = analysis_find(name);
	const struct analysis *all;
	struct suggest sg;
	char hint[256] = "";
	size_t n, len = strlen(name);

	if (a)
		return a;
	/* "mfu-report run.sqlite": a database where a section goes */
	if ((len > 7 && strcmp(name + len - 7, ".sqlite") == 0) || access(name, F_OK) == 0) {
		fprintf(stderr, PROG ": '%s' is not a section; to read that database: " PROG " --db %s\n"
			"Try '" PROG " --help'.\n", name, name);
		return NULL;
	}
	suggest_init(&sg, name);
	all = analysis_all(&n);
	for (size_t i = 0; i < n; i++)
		suggest_add(&sg, all[i].name);
	if (suggest_format(&sg, hint, sizeof(hint)) > 0)
		fprintf(stderr, PROG ": unknown section '%s'; %s (sections: %s)\n", name, hint, analysis_names());
	else
		fprintf(stderr, PROG ": unknown section '%s' (sections: %s)\n", name, analysis_names());
	return NULL;
}

/* How the options go together, and the database names. Returns -1 to go
 * on, else the exit status (bad usage). */
static int check_options(struct report_options *r)
{
	if (format_parse(r->format_name, &r->kind))
		return bad_usage("unknown format '%s' (formats: " FORMAT_NAMES ")", r->format_name);
	if (r->raw && r->kind != FORMAT_CSV)
		return bad_usage("--raw goes with --format csv (csv text byte for byte, unescaped)");
	if (r->columns && !format_is_human(r->kind))
		return bad_usage("--columns chooses the columns of table and markdown: csv and json carry every column");
	if (r->columns && (!*r->columns || r->columns[0] == ',' || r->columns[strlen(r->columns) - 1] == ','
			   || strstr(r->columns, ",,")))
		return bad_usage("--columns '%s': expected all or column names separated by commas", r->columns);
	if (r->columns && (r->html || r->trace || r->list || r->sql_for))
		return bad_usage("--columns chooses the columns of the sections' tables: it does not go with %s",
				 r->html ? "--html" : r->trace ? "--trace" : r->list ? "--list" : "--sql");
	if (!*r->path)
		return bad_usage("the database name is empty");
	if (r->ndb == 0)
		r->db_args[r->ndb++] = r->path;
	if (r->ndb > 1 || strpbrk(r->path, "*?[")) {
		for (size_t i = 0; i < r->ndb; i++)
			if (!*r->db_args[i])
				return bad_usage("the database name is empty");
		if (r->trace || r->html)
			return bad_usage("%s draws one run: give one database (each rank's: " PROG
					 " --db run.0.sqlite %s ...; the job: " PROG " --db 'run.*.sqlite')",
					 r->trace ? "--trace" : "--html", r->trace ? "--trace" : "--html");
	}
	if (r->hw_from && !*r->hw_from)
		return bad_usage("the --hw-flops-from database name is empty");
	if (r->hw_from && (r->ndb > 1 || strpbrk(r->path, "*?[")))
		return bad_usage("--hw-flops-from gives one run the counts of another: give one --db (a "
				 "job's ranks each: " PROG " --db run.0.sqlite --hw-flops-from emu.0.sqlite)");
	if (r->dtype && (r->ndb > 1 || strpbrk(r->path, "*?[")))
		return bad_usage("--dtype reads one run's peak for another precision; a job's ceiling is made "
				 "from its ranks' recorded peaks: record the ranks with mfu-record --dtype");
	if (r->fail_on && !r->diff_base)
		return bad_usage("--fail-on goes with --diff BASE NEW");
	if (r->hw_from && r->diff_base)
		return bad_usage("--hw-flops-from does not go with --diff (compare the emulated run's counts "
				 "with --diff BASE NEW directly)");
	return -1;
}

/* --trace and --diff replace the report: what goes with them, and
 * --diff's second database (the argument after the options). Returns -1 to
 * go on, else the exit status. */
static int check_modes(int argc, char **argv, struct report_options *r)
{
	int npos = argc - optind;

	if (!r->trace && !r->diff_base)
		return -1;
	if (r->trace && r->diff_base)
		return bad_usage("--trace and --diff go one at a time");
	if (r->list || r->sql_for)
		return bad_usage("%s does not go with %s", r->list ? "--list" : "--sql",
				 r->trace ? "--trace" : "--diff");
	if (r->trace) {
		if (!*r->trace)
			return bad_usage("the trace file name is empty");
		if (r->format_given)
			return bad_usage("--trace writes JSON of its own: --format does not apply");
		if (npos > 0)
			return bad_usage("--trace writes the whole run: no section goes with it ('%s')", argv[optind]);
		return -1;
	}
	if (r->db_given)
		return bad_usage("--diff BASE NEW names both databases: no --db with it");
	if (npos < 1)
		return bad_usage("--diff needs two databases: --diff BASE NEW");
	if (npos > 1)
		return bad_usage("--diff BASE NEW: unexpected '%s' (no section goes with --diff)", argv[optind + 1]);
	r->diff_new = argv[optind];
	if (!*r->diff_base || !*r->diff_new)
		return bad_usage("the database name is empty");
	return -1;
}

/* --html FILE replaces the report: no section, format, --list or --sql
 * goes with it. Returns -1 to go on, else the exit status. */
static int check_html(int argc, char **argv, const struct report_options *r)
{
	if (!r->html)
		return -1;
	if (!*r->html)
		return bad_usage("the HTML file name is empty (--html -: standard output)");
	if (r->list || r->sql_for)
		return bad_usage("%s does not go with --html", r->list ? "--list" : "--sql");
	if (r->trace || r->diff_base)
		return bad_usage("--html and %s go one at a time", r->trace ? "--trace" : "--diff");
	if (r->format_given)
		return bad_usage("--html writes HTML: --format does not apply");
	if (optind < argc)
		return bad_usage("--html draws the whole run: no section goes with it ('%s')", argv[optind]);
	return -1;
}

/* The sections named after the options (default: summary), each once.
 * Returns -1 to go on, else the exit status. */
static int choose_sections(int argc, char **argv, struct report_options *r)
{
	for (int i = optind; i < argc; i++) {
		const struct analysis *a = find_section(argv[i]);
		int dup = 0;

		if (!a)
			return EXIT_USAGE;
		for (size_t k = 0; k < r->nsections; k++)
			dup |= r->sections[k] == a;
		if (!dup && r->nsections < ARRAY_SIZE(r->sections))
			r->sections[r->nsections++] = a;
	}
	if (r->nsections == 0)
		r->sections[r->nsections++] = analysis_find("summary");
	return -1;
}

/* --list: the sections and what each shows. */
static int list_sections(void)
{
	size_t nall;
	const struct analysis *all = analysis_all(&nall);
	int width = 0;

	for (size_t i = 0; i < nall; i++)
		if ((int)strlen(all[i].name) > width)
			width = (int)strlen(all[i].name);
	for (size_t i = 0; i < nall; i++)
		printf("%-*s  %s\n", width, all[i].name, all[i].description);
	return fflush(stdout) ? EXIT_DATA : 0;
}

/* --sql SECTION: the SQL a section runs, after the views it reads with
 * the options given (runview.h); --sql diff: the per-step values --diff
 * compares, breakdown written out. */
static int print_sql(const char *name, const struct report_options *r)
{
	struct runview_options o = { .skip_steps = r->skip, .quiet = r->quiet, .hw_flops_from = r->hw_from,
				     .dtype = r->dtype };
	char *views;
	int diff = strcmp(name, "diff") == 0;
	const struct analysis *a = diff ? NULL : find_section(name);
	char *expanded = diff ? analysis_expand("diff.sql") : NULL;
	const char *sql = diff ? expanded : a ? analysis_sql(a) : NULL;

	if (!a && !diff)
		return EXIT_USAGE;
	if (diff && !sql) {
		fprintf(stderr, PROG ": analyses/diff.sql is missing from this build\n");
		return EXIT_DATA;
	}
	if (!sql) {
		fprintf(stderr, PROG ": analyses/%s.sql is missing from this build\n", a->name);
		return EXIT_DATA;
	}
	views = runview_sql(&o);
	if (!views) {
		fprintf(stderr, PROG ": out of memory, or analyses/views.sql is missing from this build\n");
		free(expanded);
		return EXIT_DATA;
	}
	/* the views first: the section reads them, as in mfu-report; a job
	 * section also the job's (analyses/job_views.sql) */
	fputs(views, stdout);
	free(views);
	if (a && job_is_job_section(a)) {
		const struct mfu_embedded *jv = embedded_find(mfu_analysis_files, "job_views.sql");

		if (!jv) {
			fprintf(stderr, PROG ": analyses/job_views.sql is missing from this build\n");
			free(expanded);
			return EXIT_DATA;
		}
		fputs(jv->text, stdout);
	}
	fputs(sql, stdout);
	free(expanded);
	return fflush(stdout) ? EXIT_DATA : 0;
}

int main(int argc, char **argv)
{
	struct report_options r = { 0 };
	int rc;

	/* One thread uses SQLite here: no mutex around every sqlite3_column_*
	 * call (8% of a 1M-step csv report). Must precede any other call. */
	sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
	if (argc > 1 && strcmp(argv[1], "merge") == 0)
		return job_merge_main(argc - 1, argv + 1);
	rc = options_parse(argc, argv, &r);
	if (rc >= 0)
		return rc;
	rc = check_options(&r);
	if (rc >= 0)
		return rc;
	rc = check_modes(argc, argv, &r);
	if (rc >= 0)
		return rc;
	rc = check_html(argc, argv, &r);
	if (rc >= 0)
		return rc;
	if (r.html)
		return report_sections(&r);
	if (r.trace)
		return report_trace(&r);
	if (r.diff_base)
		return report_diff(&r);
	if (r.list)
		return list_sections();
	if (r.sql_for)
		return print_sql(r.sql_for, &r);
	rc = choose_sections(argc, argv, &r);
	if (rc >= 0)
		return rc;
	return report_sections(&r);
}
