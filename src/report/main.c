/* mfu-report: print the per-step and per-phase MFU of a recorded run. */
#include "analysis.h"
#include "db.h"
#include "diff.h"
#include "embedded.h"
#include "format.h"
#include "html.h"
#include "job.h"
#include "merge.h"
#include "runview.h"
#include "suggest.h"
#include "trace.h"
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PROG "mfu-report"

enum {
	EXIT_DATA = 1,  /* the database cannot be read, or output failed */
	EXIT_USAGE = 2,
	EXIT_WORSE = 3, /* --diff --fail-on: a figure got worse than allowed */
};

/* The section names, wrapped to 79 columns with a 2-space indent. */
static void section_list(char *buf, size_t len)
{
	const char *names = analysis_names();
	size_t used = 0, col = 0;

	buf[0] = '\0';
	for (const char *p = names; *p && used + 1 < len;) {
		size_t n = strcspn(p, ",");
		int last = p[n] == '\0';
		if (col == 0 || col + n + 2 > 79) {
			used += (size_t)snprintf(buf + used, len - used, "%s  ", col ? "\n" : "");
			col = 2;
		}
		used += (size_t)snprintf(buf + used, len - used, "%.*s%s", (int)n, p, last ? "" : ",");
		col += n + !last;
		p += n + (last ? 0 : 1);
		while (*p == ' ')
			p++;
		if (!last && used + 1 < len) {
			buf[used++] = ' ';
			buf[used] = '\0';
			col++;
		}
		if (used >= len)
			break;
	}
	/* no blank at the end of a wrapped line */
	for (char *q = strstr(buf, " \n"); q; q = strstr(q, " \n"))
		memmove(q, q + 1, strlen(q + 1) + 1);
}

static void usage(FILE *out)
{
	char sections[1024];

	section_list(sections, sizeof(sections));
	fprintf(out,
		"usage: " PROG " [--db FILE] [--format FORMAT] [--raw] [--columns LIST] [-q]\n"
		"                  [SECTION...]\n"
		"       " PROG " --db NATIVE --hw-flops-from EMULATED [SECTION...]\n"
		"       " PROG " [--db FILE] --trace FILE\n"
		"       " PROG " --diff BASE NEW [--format FORMAT] [--raw] [--skip-steps N]\n"
		"                  [--fail-on SPEC]\n"
		"       " PROG " [--db FILE] [--skip-steps N] [-q] --html FILE\n"
		"       " PROG " --db 'run.*.sqlite' [--db FILE...]\n"
		"                  [--straggler-threshold PCT] [--rank N] [SECTION...]\n"
		"       " PROG " merge -o FILE DB...\n"
		"       " PROG " --list | --sql SECTION | --help | --version\n"
		"\n"
		"Print the MFU report of a run recorded by mfu-record.\n"
		"\n"
		"  -d, --db FILE        the run database (default run.sqlite); several --db or a\n"
		"                       quoted glob ('run.*.sqlite'): the ranks of a job,\n"
		"                       merged by step index (summary and notes show the job,\n"
		"                       other sections the slowest rank; docs/ranks.md)\n"
		"  -f, --format FORMAT  " FORMAT_NAMES " (default table); csv escapes\n"
		"                       control bytes as table does (\\x1b, \\n, \\\\) and puts a\n"
		"                       ' before text that starts with = + - @ (not before\n"
		"                       numbers), so terminals and spreadsheets are safe\n"
		"      --raw            with --format csv: text byte for byte as stored\n"
		"                       (RFC 4180 quoting only), for programs\n"
		"      --columns LIST   table and markdown: the columns to show, by their csv\n"
		"                       names (step,wall_ms,mfu), or all; by default the wide\n"
		"                       sections (steps, phases, breakdown) show the columns\n"
		"                       read first, to fit 120 columns. csv and json always\n"
		"                       carry every column\n"
		"  -k, --skip-steps N   leave out the first N complete steps (warm-up)\n"
		"                       everywhere: their phases, samples and gaps too\n"
		"  -l, --list           list the sections and what they show\n"
		"  -q, --quiet          leave out the notes on counters this machine cannot\n"
		"                       open (no hardware or memory-controller PMU: on a\n"
		"                       virtual machine, the same in every run)\n"
		"  -s, --sql SECTION    print the SQL behind SECTION, to run or adapt: the\n"
		"                       views it reads (analyses/views.sql, with the options\n"
		"                       given: --skip-steps, -q, --hw-flops-from), then its own\n"
		"                         " PROG " --sql steps > steps.sql\n"
		"                         sqlite3 -header -column run.sqlite < steps.sql\n"
		"      --straggler-threshold PCT\n"
		"                       several --db: a rank is a straggler in a step when its\n"
		"                       step time is more than PCT%% above the ranks' median\n"
		"                       (default 10)\n"
		"      --rank N         several --db: per-run sections (steps, breakdown...)\n"
		"                       read rank N (default: the slowest in the most steps)\n"
		"  merge -o FILE DB...  write the ranks' databases merged into FILE, with a\n"
		"                       rank column, for SQL (" PROG " merge --help)\n"
		"      --trace FILE     write the run as Chrome trace-event JSON to FILE ('-':\n"
		"                       stdout) instead of a report, for ui.perfetto.dev:\n"
		"                       steps, phases, off-CPU gaps, counters, samples\n"
		"      --diff BASE NEW  compare two runs' step and phase times (net of\n"
		"                       preemption), breakdown and MFU: means, change in %%\n"
		"                       and ms per step with 95%% intervals (batch means),\n"
		"                       verdict (faster, slower, no significant change; a\n"
		"                       change under 2%% of the step time is not named)\n"
		"      --fail-on SPEC   with --diff: exit 3 when a figure got significantly\n"
		"                       worse by more than its threshold; SPEC is FIGURE>N%%\n"
		"                       or FIGURE>Nms, comma-separated, FIGURE one of step,\n"
		"                       mfu, phase:NAME, breakdown:PART ('step>2%%,mfu>5%%')\n"
		"      --html FILE      write one self-contained HTML file ('-': stdout) with\n"
		"                       charts instead of a report: MFU, HFU and MBU per step\n"
		"                       (zoomable), step time by phase, the waterfall, a\n"
		"                       roofline, top functions, the run, its peaks and notes\n"
		"      --hw-flops-from EMULATED\n"
		"                       take the counted FLOPs (hw_flops, HFU) of each step\n"
		"                       and phase from EMULATED, a run of the same program\n"
		"                       under mfu-record --emulate (or on a machine with FP\n"
		"                       counters), matched by step index: HFU for a machine\n"
		"                       without a PMU; steps that do not match are said\n"
		"  -h, --help           show this help\n"
		"  -V, --version        show the version\n"
		"\n"
		"SECTION (default summary; several are printed in the order given):\n"
		"%s\n"
		"Utilizations are fractions in csv and json, percentages in table and\n"
		"markdown (a '!' above 100%%); times are milliseconds.\n"
		"\n"
		"Exit status: 0 done, 1 the database cannot be read or output failed,\n"
		"2 bad usage, 3 --fail-on: a figure got worse.\nSee mfu-report(1) and docs/report.md.\n",
		sections);
}

static int bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '" PROG " --help'.\n");
	return EXIT_USAGE;
}

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

/* What SQLite's SUM() error means here: no recording stores values whose
 * sum leaves 64 bits (a year of nanoseconds is 2^55). */
static const char *overflow_hint(const char *msg)
{
	return strstr(msg, "integer overflow") ? " (a sum of the database's values does not fit in 64 bits: values "
						  "no recording writes; was the file edited or damaged?)"
					       : "";
}

/* Say why an SQLite step failed: a damaged file is the usual reason. */
static void db_error(sqlite3 *db, const char *path, const char *what, const char *msg)
{
	int code = db ? sqlite3_errcode(db) : SQLITE_OK;

	if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
		fprintf(stderr, PROG ": %s: %s: the database is corrupt (truncated or damaged): %s\n", path, what,
			msg);
	else
		fprintf(stderr, PROG ": %s: %s: %s%s\n", path, what, msg, overflow_hint(msg));
}

/* csv and json keep stdout for data: the notes that explain missing values
 * and those that say a number cannot be right (alert) go to stderr, one line
 * each. */
static int notes_to_stderr(sqlite3_stmt *stmt, char *err, size_t errlen)
{
	char *line = NULL;
	size_t len = 0, cap = 0;
	int rc, ret = 0, text = -1, missing = -1, alert = -1;

	for (int i = 0; i < sqlite3_column_count(stmt); i++) {
		const char *name = sqlite3_column_name(stmt, i);

		if (name && strcmp(name, "text") == 0)
			text = i;
		else if (name && strcmp(name, "missing") == 0)
			missing = i;
		else if (name && strcmp(name, "alert") == 0)
			alert = i;
	}
	if (text < 0 || missing < 0)
		return 0;
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
		if (sqlite3_column_int(stmt, missing) == 0 && (alert < 0 || sqlite3_column_int(stmt, alert) == 0))
			continue;
		len = 0;
		if (format_sanitize(&line, &len, &cap, sqlite3_column_text(stmt, text),
				    (size_t)sqlite3_column_bytes(stmt, text), 0) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		fprintf(stderr, PROG ": note: %s\n", line);
	}
	if (rc != SQLITE_DONE) {
		strbuf(err, errlen, "%s", sqlite3_errmsg(sqlite3_db_handle(stmt)));
		ret = -EIO;
	}
out:
	free(line);
	return ret;
}

/* What the command line asks for. */
struct request {
	const char *path, *sql_for, *format_name;
	enum format_kind kind;
	const struct analysis *sections[32];
	size_t nsections;
	int list, skip, quiet;
	int raw;                         /* --raw: csv text as stored */
	const char *columns;             /* --columns LIST|all, NULL: each section's default */
	const char *html;                /* --html FILE */
	const char *trace;               /* --trace FILE */
	const char *diff_base, *diff_new; /* --diff BASE NEW */
	const char *fail_on;             /* --fail-on SPEC (with --diff) */
	const char *hw_from;             /* --hw-flops-from FILE */
	int db_given, format_given;
	const char **db_args;            /* every --db, in order */
	size_t ndb;
	double threshold;                /* --straggler-threshold, a fraction */
	int threshold_given, rank_given, rank; /* --rank N */
	struct job *job;                 /* several databases: the job */
};

/* The long options without a short one. */
enum {
	OPT_TRACE = 256,
	OPT_DIFF,
	OPT_HTML,
	OPT_STRAGGLER,
	OPT_RANK,
	OPT_HW_FROM,
	OPT_RAW,
	OPT_COLUMNS,
	OPT_FAIL_ON,
};

/* Every --db, freed at exit (main returns from many places). */
static const char **db_args;

static void free_db_args(void)
{
	free(db_args);
	db_args = NULL;
}

/* Parse the options into @r. Returns -1 to go on, else the exit status
 * (--help, --version, bad usage). */
static int parse_options(int argc, char **argv, struct request *r)
{
	static const struct option options[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "format", required_argument, NULL, 'f' },
		{ "list", no_argument, NULL, 'l' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "skip-steps", required_argument, NULL, 'k' },
		{ "sql", required_argument, NULL, 's' },
		{ "trace", required_argument, NULL, OPT_TRACE },
		{ "diff", required_argument, NULL, OPT_DIFF },
		{ "html", required_argument, NULL, OPT_HTML },
		{ "straggler-threshold", required_argument, NULL, OPT_STRAGGLER },
		{ "rank", required_argument, NULL, OPT_RANK },
		{ "hw-flops-from", required_argument, NULL, OPT_HW_FROM },
		{ "raw", no_argument, NULL, OPT_RAW },
		{ "columns", required_argument, NULL, OPT_COLUMNS },
		{ "fail-on", required_argument, NULL, OPT_FAIL_ON },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	db_args = calloc((size_t)argc + 1, sizeof(*db_args));
	if (!db_args || atexit(free_db_args) != 0) {
		fprintf(stderr, PROG ": out of memory\n");
		return EXIT_DATA;
	}
	r->db_args = db_args;
	r->threshold = MERGE_THRESHOLD_DEFAULT;
	r->path = "run.sqlite";
	r->format_name = "table";
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":d:f:k:lqs:hV", options, NULL)) != -1) {
		switch (opt) {
		case 'd': r->db_args[r->ndb++] = r->path = optarg; r->db_given = 1; break;
		case OPT_STRAGGLER:
			if (merge_parse_threshold(optarg, &r->threshold))
				return bad_usage("--straggler-threshold '%s': expected a percentage from 0 to 1000", optarg);
			r->threshold_given = 1;
			break;
		case OPT_RANK:
			if (safe_atoi(optarg, &r->rank) != 0 || r->rank < 0)
				return bad_usage("--rank '%s': expected a rank, 0 or more", optarg);
			r->rank_given = 1;
			break;
		case 'k':
			if (safe_atoi(optarg, &r->skip) != 0 || r->skip < 0)
				return bad_usage("--skip-steps '%s': expected a number of steps, 0 or more", optarg);
			break;
		case 'f': r->format_name = optarg; r->format_given = 1; break;
		case 'l': r->list = 1; break;
		case 'q': r->quiet = 1; break;
		case 's': r->sql_for = optarg; break;
		case OPT_TRACE: r->trace = optarg; break;
		case OPT_DIFF: r->diff_base = optarg; break;
		case OPT_HTML: r->html = optarg; break;
		case OPT_HW_FROM: r->hw_from = optarg; break;
		case OPT_RAW: r->raw = 1; break;
		case OPT_COLUMNS: r->columns = optarg; break;
		case OPT_FAIL_ON: r->fail_on = optarg; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf(PROG " %s\n", MFU_VERSION); return 0;
		case ':': return bad_usage("option '%s' needs an argument", argv[optind - 1]);
		default: return bad_usage("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (format_parse(r->format_name, &r->kind))
		return bad_usage("unknown format '%s' (formats: " FORMAT_NAMES ")", r->format_name);
	if (r->raw && r->kind != FORMAT_CSV)
		return bad_usage("--raw goes with --format csv (csv text byte for byte, unescaped)");
	if (r->columns && !format_is_human(r->kind))
		return bad_usage("--columns chooses the columns of table and markdown: csv and json carry every column");
	if (r->columns && (!*r->columns || r->columns[0] == ',' || r->columns[strlen(r->columns) - 1] == ','
			   || strstr(r->columns, ",,")))
		return bad_usage("--columns '%s': expected all or column names separated by commas", r->columns);
	if (r->columns && (r->html || r->trace || r->diff_base || r->list || r->sql_for))
		return bad_usage("--columns chooses the columns of the sections' tables: it does not go with %s",
				 r->html ? "--html" : r->trace ? "--trace" : r->diff_base ? "--diff" :
				 r->list ? "--list" : "--sql");
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
static int check_modes(int argc, char **argv, struct request *r)
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
static int check_html(int argc, char **argv, const struct request *r)
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
static int choose_sections(int argc, char **argv, struct request *r)
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
static int print_sql(const char *name, const struct request *r)
{
	struct runview_options o = { r->skip, r->quiet, 0, r->hw_from };
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

/* The columns section @a shows in table and markdown (format_set_columns):
 * --columns' list, every column (--columns all, NULL), or the section's
 * default. */
static const char *section_columns(const struct request *r, const struct analysis *a)
{
	if (!r->columns)
		return a->columns;
	return strcmp(r->columns, "all") == 0 ? NULL : r->columns;
}

/* Every name in --columns' list is a column of one of the sections asked
 * for (their statements prepared, not run). 0; -1 once a database error is
 * said; -2 once the unknown name is said (bad usage). */
static int check_columns(const struct request *r, sqlite3 *db)
{
	const char *p = r->columns;
	int ret = 0;

	if (!p || strcmp(p, "all") == 0)
		return 0;
	while (*p && !ret) {
		size_t len = strcspn(p, ",");
		int found = 0;

		for (size_t i = 0; i < r->nsections && !found && !ret; i++) {
			const struct analysis *a = r->sections[i];
			const char *path = r->path, *who = NULL;
			sqlite3 *sdb = db;
			sqlite3_stmt *stmt = NULL;
			char err[1024];

			if (r->job)
				a = job_section(r->job, a, &sdb, &path, &who);
			if (analysis_prepare(a, sdb, &stmt, err, sizeof(err))) {
				db_error(sdb, path, a->name, err);
				ret = -1;
				break;
			}
			for (int c = 0; c < sqlite3_column_count(stmt) && !found; c++) {
				const char *name = sqlite3_column_name(stmt, c);
				found = name && strlen(name) == len && strncmp(name, p, len) == 0;
			}
			sqlite3_finalize(stmt);
		}
		if (!found && !ret) {
			fprintf(stderr, PROG ": --columns: no column '%.*s' in %s (the names are the csv header: "
				PROG " --format csv SECTION | head -1)\n", (int)len, p,
				r->nsections == 1 ? r->sections[0]->name : "the sections asked for");
			ret = -2;
		}
		p += len + (p[len] == ',');
	}
	return ret;
}

/* Write the requested sections, each with its verdict for people. 0, or -1
 * once the error is said, -2 once bad usage is said. */
static int write_sections(const struct request *r, sqlite3 *db, struct format *fmt)
{
	sqlite3_stmt *stmt = NULL;
	char err[1024];
	int rc;

	rc = check_columns(r, db);
	if (rc)
		return rc;
	for (size_t i = 0; i < r->nsections; i++) {
		const struct analysis *a = r->sections[i];
		const char *path = r->path, *who = NULL;

		if (r->job)
			a = job_section(r->job, a, &db, &path, &who);
		if (format_is_human(r->kind)) {
			char *verdict = NULL;
			rc = analysis_verdict(a, db, &verdict, err, sizeof(err));
			if (!rc && who)
				rc = job_verdict_line(who, &verdict);
			if (!rc)
				rc = format_set_verdict(fmt, verdict);
			free(verdict);
			if (rc) {
				db_error(db, path, a->name, rc == -ENOMEM ? "out of memory" : err);
				return -1;
			}
		}
		rc = analysis_prepare(a, db, &stmt, err, sizeof(err));
		if (!rc && format_is_human(r->kind))
			rc = format_set_columns(fmt, section_columns(r, r->sections[i]));
		if (!rc)
			rc = format_section(fmt, r->sections[i]->name, stmt, a->single_row, err, sizeof(err));
		sqlite3_finalize(stmt);
		stmt = NULL;
		if (rc) {
			if (rc == -EIO || rc == -EINVAL || rc == -ENOENT)
				db_error(db, path, a->name, err);
			else
				fprintf(stderr, PROG ": %s: %s\n", a->name, strerror(-rc));
			return -1;
		}
	}
	return 0;
}

/* The notes: under the tables for people (all of them with the summary,
 * else only why values are missing and which cannot be right), on stderr
 * for csv and json; then the end of the output. 0, or -1 once said. */
static int write_notes(const struct request *r, sqlite3 *db, struct format *fmt)
{
	const struct analysis *notes = analysis_find(r->job ? "job_notes" : "notes");
	sqlite3_stmt *stmt = NULL;
	int with_summary = 0, with_notes = 0, rc = 0, human = format_is_human(r->kind), run_summary = 0;
	char err[1024];

	for (size_t i = 0; i < r->nsections; i++) {
		with_summary |= strcmp(r->sections[i]->name, "summary") == 0 || strcmp(r->sections[i]->name, "job") == 0;
		with_notes |= r->sections[i] == notes || (r->job && strcmp(r->sections[i]->name, "notes") == 0);
		/* a run's summary for people says its notes itself (summary_text.h) */
		run_summary |= human && !r->job && strcmp(r->sections[i]->name, "summary") == 0;
	}
	if (r->job)
		db = job_db(r->job);
	if (!(human && with_notes) && !(run_summary && r->nsections == 1)) {
		rc = analysis_prepare(notes, db, &stmt, err, sizeof(err));
		if (!rc && human)
			rc = format_notes(fmt, stmt, !with_summary || run_summary, err, sizeof(err));
		if (rc) {
			db_error(db, r->job ? job_name(r->job) : r->path, "notes", err);
			goto fail;
		}
	}
	rc = format_end(fmt);
	if (rc) {
		fprintf(stderr, PROG ": cannot write the report: %s\n", strerror(-rc));
		goto fail;
	}
	if (stmt && !human) {
		rc = notes_to_stderr(stmt, err, sizeof(err));
		if (rc) {
			db_error(db, r->path, "notes", rc == -ENOMEM ? "out of memory" : err);
			goto fail;
		}
	}
	sqlite3_finalize(stmt);
	return 0;
fail:
	sqlite3_finalize(stmt);
	return -1;
}

/* Open @path as a report reads it (runview.h): the options' views, the
 * counts of --hw-flops-from for the report's own database (not --diff's).
 * Returns 0, or -1 once the error is said (the connection, if any, is in
 * *@db to close). */
static int open_run(const struct request *r, const char *path, sqlite3 **db)
{
	struct runview_options o = { r->skip, r->quiet, 0, path == r->path ? r->hw_from : NULL };
	char err[1024];
	int rc = runview_open(path, &o, db, err, sizeof(err));

	if (rc == -EIO)
		db_error(*db, path, "cannot read", err);
	else if (rc)
		fprintf(stderr, PROG ": %s\n", err);
	return rc ? -1 : 0;
}

static void close_run(sqlite3 *db)
{
	runview_close(db);
}

static int open_run(const struct request *r, const char *path, sqlite3 **db);

static int open_rank(void *ctx, const char *path, sqlite3 **db)
{
	return open_run(ctx, path, db);
}

/* Several databases (or a pattern), or a job section asked for. */
static int wants_job(const struct request *r)
{
	int yes = r->ndb > 1 || strpbrk(r->path, "*?[") != NULL;

	for (size_t i = 0; i < r->nsections; i++)
		yes |= job_is_job_section(r->sections[i]);
	return yes;
}

/* Several databases, a merged one, or a job section asked for: the report
 * of the job (job.h). Returns the exit status. */
static int job_report(const struct request *r)
{
	struct job_options o = { r->threshold, r->threshold_given, r->rank_given, r->rank };
	struct request jr = *r;
	struct format *fmt = NULL;
	char **paths = NULL, err[1024];
	size_t n = 0;
	int rc, ret = EXIT_DATA;

	rc = merge_expand(r->db_args, r->ndb, &paths, &n, err, sizeof(err));
	if (!rc)
		rc = job_open(&jr.job, paths, n, open_rank, (void *)r, &o, err, sizeof(err));
	if (rc) {
		if (rc != -ECANCELED)
			fprintf(stderr, PROG ": %s%s\n", err, overflow_hint(err));
		return rc == -EEXIST || rc == -ERANGE ? EXIT_USAGE : EXIT_DATA;
	}
	for (size_t i = 0; i < r->nsections; i++) {
		sqlite3 *db;
		const char *path, *who;

		job_section(jr.job, r->sections[i], &db, &path, &who);
		if (!db) {
			fprintf(stderr, PROG ": %s is a merged database: the %s section reads a rank's own database "
				"(" PROG " --db 'run.*.sqlite' %s)\n", path, r->sections[i]->name, r->sections[i]->name);
			ret = EXIT_USAGE;
			goto out;
		}
	}
	if (format_new(r->kind, stdout, r->nsections, &fmt)) {
		fprintf(stderr, PROG ": out of memory\n");
		goto out;
	}
	format_set_raw(fmt, r->raw);
	rc = write_sections(&jr, NULL, fmt);
	if (rc == -2)
		ret = EXIT_USAGE;
	else if (rc == 0 && write_notes(&jr, NULL, fmt) == 0)
		ret = 0;
out:
	format_free(fmt);
	job_free(jr.job);
	return ret;
}

/* Open the database and write the report. Returns the exit status. */
static int report(const struct request *r)
{
	struct format *fmt = NULL;
	sqlite3 *db = NULL;
	char err[1024];
	int rc, ret = EXIT_DATA;

	if (!r->html && wants_job(r))
		return job_report(r);

	/* Nothing in a report writes; make sure of it. One read transaction:
	 * every section sees the same rows, even while a recording writes.
	 * SQLite's default cache
	 * and temporary storage measured faster on a 1M-step run than a bigger
	 * cache or temp_store = MEMORY. */
	if (open_run(r, r->path, &db))
		goto out;
	if (merge_is_merged(db)) {
		/* written by mfu-report merge: the job's report */
		if (r->html || r->skip > 0) {
			fprintf(stderr, PROG ": %s is a merged database: %s reads the ranks' own databases ("
				PROG " --db 'run.*.sqlite' %s)\n", r->path, r->html ? "--html" : "--skip-steps",
				r->html ? "--html" : "--skip-steps N");
			ret = EXIT_USAGE;
			goto out;
		}
		sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
		sqlite3_close(db);
		return job_report(r);
	}
	if (r->html) {
		struct html_info info = { .db_path = r->path, .skip_steps = r->skip, .quiet = r->quiet };

		if (html_report(db, r->html, &info, err, sizeof(err)))
			fprintf(stderr, PROG ": %s\n", err);
		else
			ret = 0;
		goto out;
	}
	if (format_new(r->kind, stdout, r->nsections, &fmt)) {
		fprintf(stderr, PROG ": out of memory\n");
		goto out;
	}
	format_set_raw(fmt, r->raw);
	rc = write_sections(r, db, fmt);
	if (rc == -2)
		ret = EXIT_USAGE;
	else if (rc == 0 && write_notes(r, db, fmt) == 0)
		ret = 0;
out:
	format_free(fmt);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(db);
	return ret;
}

/* --trace FILE: the run as trace-event JSON. Returns the exit status. */
static int write_trace(const struct request *r)
{
	int to_stdout = strcmp(r->trace, "-") == 0, ret = EXIT_DATA, rc;
	const char *name = to_stdout ? "stdout" : r->trace;
	sqlite3 *db = NULL;
	FILE *out = NULL;
	char err[1024];

	/* the database first: a bad one leaves an existing trace file alone */
	if (open_run(r, r->path, &db))
		goto out;
	if (merge_is_merged(db)) {
		fprintf(stderr, PROG ": %s is a merged database: --trace draws one rank's run from its own "
			"database (" PROG " --db run.0.sqlite --trace FILE)\n", r->path);
		goto out;
	}
	out = to_stdout ? stdout : fopen(r->trace, "w");
	if (!out) {
		fprintf(stderr, PROG ": %s: cannot write the trace: %s\n", name, strerror(errno));
		goto out;
	}
	rc = trace_write(db, out, NULL, err, sizeof(err));
	if (rc == -EIO)
		db_error(db, r->path, "--trace", err);
	else if (rc)
		fprintf(stderr, PROG ": %s: %s\n", name, err);
	else
		ret = 0;
out:
	if (out && !to_stdout && fclose(out) != 0 && ret == 0) {
		fprintf(stderr, PROG ": %s: cannot write the trace: %s\n", name, strerror(errno));
		ret = EXIT_DATA;
	}
	close_run(db);
	return ret;
}

/* --diff BASE NEW: the comparison as one section in the chosen format.
 * Returns the exit status. */
static int write_diff(const struct request *r)
{
	const char *paths[2] = { r->diff_base, r->diff_new };
	sqlite3 *db[2] = { NULL, NULL };
	sqlite3_stmt *stmt = NULL;
	struct format *fmt = NULL;
	struct diff *d = NULL;
	int ret = EXIT_DATA, rc;
	char err[1024];

	if (diff_new(&d)) {
		fprintf(stderr, PROG ": out of memory\n");
		goto out;
	}
	if (r->fail_on && diff_fail_on(d, r->fail_on, err, sizeof(err))) {
		ret = bad_usage("--fail-on %s", err);
		goto out;
	}
	/* both opened before either is read: a bad NEW says so at once */
	for (int side = 0; side < 2; side++)
		if (open_run(r, paths[side], &db[side]))
			goto out;
	if (format_new(r->kind, stdout, 1, &fmt)) {
		fprintf(stderr, PROG ": out of memory\n");
		goto out;
	}
	format_set_raw(fmt, r->raw);
	for (int side = 0; side < 2; side++) {
		rc = diff_read(d, side, db[side], err, sizeof(err));
		if (rc) {
			db_error(db[side], paths[side], "--diff", rc == -ENOMEM ? "out of memory" : err);
			goto out;
		}
	}
	rc = diff_rows(d, &stmt, err, sizeof(err));
	if (!rc && diff_warning(d))
		fprintf(stderr, PROG ": warning: --diff: the runs differ: %s\n", diff_warning(d));
	if (!rc && format_is_human(r->kind))
		rc = format_set_verdict(fmt, diff_summary(d));
	if (!rc)
		rc = format_section(fmt, "diff", stmt, 0, err, sizeof(err));
	if (rc) {
		fprintf(stderr, PROG ": --diff: %s\n", rc == -EIO ? err : strerror(-rc));
		goto out;
	}
	rc = format_end(fmt);
	if (rc) {
		fprintf(stderr, PROG ": cannot write the report: %s\n", strerror(-rc));
		goto out;
	}
	rc = diff_gate(d, stderr);
	ret = rc == 1 ? EXIT_WORSE : rc ? EXIT_USAGE : 0;
out:
	sqlite3_finalize(stmt);
	format_free(fmt);
	diff_free(d);
	close_run(db[0]);
	close_run(db[1]);
	return ret;
}

int main(int argc, char **argv)
{
	struct request r = { 0 };
	int rc;

	/* One thread uses SQLite here: no mutex around every sqlite3_column_*
	 * call (8% of a 1M-step csv report). Must precede any other call. */
	sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
	if (argc > 1 && strcmp(argv[1], "merge") == 0)
		return job_merge_main(argc - 1, argv + 1);
	rc = parse_options(argc, argv, &r);
	if (rc >= 0)
		return rc;
	rc = check_modes(argc, argv, &r);
	if (rc >= 0)
		return rc;
	rc = check_html(argc, argv, &r);
	if (rc >= 0)
		return rc;
	if (r.html)
		return report(&r);
	if (r.trace)
		return write_trace(&r);
	if (r.diff_base)
		return write_diff(&r);
	if (r.list)
		return list_sections();
	if (r.sql_for)
		return print_sql(r.sql_for, &r);
	rc = choose_sections(argc, argv, &r);
	if (rc >= 0)
		return rc;
	return report(&r);
}
