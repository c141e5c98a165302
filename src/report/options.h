/* The command line of mfu-report: what it asks for (struct report_options),
 * its parsing, the --help text, and the message of bad usage. main.c checks
 * how the options go together; report.c writes what they ask for. */
#ifndef MFU_REPORT_OPTIONS_H
#define MFU_REPORT_OPTIONS_H

#include "analysis.h"
#include "cli.h"
#include "format.h"

#include <stddef.h>

#define PROG "mfu-report"

enum {
	EXIT_DATA = 1,  /* the database cannot be read, or output failed */
	EXIT_USAGE = CLI_EXIT_USAGE,
	EXIT_WORSE = 3, /* --diff --fail-on: a figure got worse than allowed */
};

struct job;

struct report_options {
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
	const char *dtype;               /* --dtype DTYPE: the FLOP peak's precision, NULL: the run's */
	int db_given, format_given;
	const char **db_args;            /* every --db, in order */
	size_t ndb;
	double threshold;                /* --straggler-threshold, a fraction */
	int threshold_given, rank_given, rank; /* --rank N */
	struct job *job;                 /* several databases: the job */
};

/* Parse the options into @r (getopt_long: optind is left at the first
 * argument after them), with the defaults (run.sqlite, table, the default
 * straggler threshold); the list of --db is freed at exit. Returns -1 to go
 * on, else the exit status (--help, --version, bad usage). */
int options_parse(int argc, char **argv, struct report_options *r);

/* Say "mfu-report: MESSAGE" and where help is on stderr (cli.h). Returns
 * EXIT_USAGE, the status of bad usage. */
#define bad_usage(...) cli_usage_error(PROG, __VA_ARGS__)

#endif
