/* mfu-report's command line (options.h): the defaults, what each option
 * sets, and the status and message of --help, --version and bad usage.
 * Each parse runs in a child: getopt's state and the --db list (freed at
 * exit) start fresh. */
#include "check.h"
#include "merge.h"
#include "options.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXARGS 12

/* Parse @args (after the program name, NULL-ended) into @r; the first line
 * of what it said on stderr in @err. Returns what options_parse() does. */
static int parse(const char *const *args, struct report_options *r, char *err, size_t errlen)
{
	char *argv[MAXARGS + 2] = { "mfu-report" };
	FILE *tmp = tmpfile();
	int argc = 1, saved = dup(2), rc;

	for (; args[argc - 1]; argc++)
		argv[argc] = (char *)args[argc - 1];
	memset(r, 0, sizeof(*r));
	fflush(stderr);
	dup2(fileno(tmp), 2);
	optind = 0; /* glibc: start over */
	rc = options_parse(argc, argv, r);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	err[0] = '\0';
	if (!fgets(err, (int)errlen, tmp))
		err[0] = '\0';
	err[strcspn(err, "\n")] = '\0';
	fclose(tmp);
	return rc;
}

/* Run @fn in a child with stdout to /dev/null; its exit status is its
 * number of failed checks. */
static void in_child(void (*fn)(void), int line)
{
	pid_t pid;
	int status = 0;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(99);
		check_failures = 0; /* the parent's so far are not the child's */
		fn();
		fflush(NULL);
		_exit(check_failures > 255 ? 255 : check_failures);
	}
	CHECK_ROW(pid > 0 && waitpid(pid, &status, 0) == pid, line);
	CHECK_ROW(WIFEXITED(status) && WEXITSTATUS(status) == 0, line);
}

static const struct row {
	int line;
	const char *args[MAXARGS];
	int status;      /* -1: go on */
	const char *err; /* the first line on stderr ("": nothing) */
} rows[] = {
	{ __LINE__, { NULL }, -1, "" },
	{ __LINE__, { "--help" }, 0, "" },
	{ __LINE__, { "-V" }, 0, "" },
	{ __LINE__, { "--bogus" }, EXIT_USAGE, "mfu-report: unknown option '--bogus'" },
	{ __LINE__, { "-z" }, EXIT_USAGE, "mfu-report: unknown option '-z'" },
	{ __LINE__, { "--db" }, EXIT_USAGE, "mfu-report: option '--db' needs a value" },
	{ __LINE__, { "--raw=1" }, EXIT_USAGE, "mfu-report: option '--raw' takes no value" },
	{ __LINE__, { "-k", "-1" }, EXIT_USAGE,
	  "mfu-report: --skip-steps '-1': expected a number of steps, 0 or more" },
	{ __LINE__, { "--skip-steps", "2x" }, EXIT_USAGE,
	  "mfu-report: --skip-steps '2x': expected a number of steps, 0 or more" },
	{ __LINE__, { "--rank", "x" }, EXIT_USAGE, "mfu-report: --rank 'x': expected a rank, 0 or more" },
	{ __LINE__, { "--straggler-threshold", "5000" }, EXIT_USAGE,
	  "mfu-report: --straggler-threshold '5000': expected a percentage from 0 to 1000" },
	/* how the options go together is main.c's: these parse */
	{ __LINE__, { "--format", "xml", "--raw", "--columns", ",", "steps" }, -1, "" },
};

static const struct row *current;

static void run_row(void)
{
	struct report_options r;
	char err[512];
	int rc = parse(current->args, &r, err, sizeof(err));

	CHECK_ROW(rc == current->status, current->line);
	CHECK_ROW(strcmp(err, current->err) == 0, current->line);
	if (strcmp(err, current->err) != 0)
		fprintf(stderr, "  said: %s\n", err);
}

/* No option: the defaults. */
static void defaults(void)
{
	const char *args[] = { NULL };
	struct report_options r;
	char err[512];

	CHECK_EQ_INT(parse(args, &r, err, sizeof(err)), -1);
	CHECK_STR(r.path, "run.sqlite");
	CHECK_STR(r.format_name, "table");
	CHECK_NEAR(r.threshold, MERGE_THRESHOLD_DEFAULT, 0);
	CHECK_EQ_INT(r.ndb, 0);
	CHECK(r.db_args && r.db_args[0] == NULL);
	CHECK(!r.db_given && !r.format_given && !r.list && !r.quiet && !r.raw && !r.skip);
	CHECK(!r.columns && !r.html && !r.trace && !r.diff_base && !r.fail_on && !r.hw_from && !r.sql_for);
	CHECK(!r.threshold_given && !r.rank_given);
	CHECK_EQ_INT(optind, 1);
}

/* Every option sets its field; the sections are left at optind. */
static void every_option(void)
{
	const char *args[] = { "-d", "a.sqlite", "--db", "b.sqlite", "-f", "csv", "-k", "3", "-q", "-l", "--raw",
			       "--columns=step,mfu", "--straggler-threshold", "20", "--rank", "1", "-s", "steps",
			       "--trace", "t.json", "--diff", "base.sqlite", "--html", "h.html",
			       "--hw-flops-from", "emu.sqlite", "--fail-on", "step>2%", "steps", "phases", NULL };
	char *argv[40] = { "mfu-report" };
	struct report_options r = { 0 };
	int argc = 1;

	for (; args[argc - 1]; argc++)
		argv[argc] = (char *)args[argc - 1];
	optind = 0;
	CHECK_EQ_INT(options_parse(argc, argv, &r), -1);
	CHECK_EQ_INT(r.ndb, 2);
	CHECK_STR(r.db_args[0], "a.sqlite");
	CHECK_STR(r.db_args[1], "b.sqlite");
	CHECK_STR(r.path, "b.sqlite");
	CHECK(r.db_given && r.format_given);
	CHECK_STR(r.format_name, "csv");
	CHECK_EQ_INT(r.skip, 3);
	CHECK(r.quiet && r.list && r.raw);
	CHECK_STR(r.columns, "step,mfu");
	CHECK_NEAR(r.threshold, 0.20, 1e-12);
	CHECK(r.threshold_given && r.rank_given);
	CHECK_EQ_INT(r.rank, 1);
	CHECK_STR(r.sql_for, "steps");
	CHECK_STR(r.trace, "t.json");
	CHECK_STR(r.diff_base, "base.sqlite");
	CHECK_STR(r.html, "h.html");
	CHECK_STR(r.hw_from, "emu.sqlite");
	CHECK_STR(r.fail_on, "step>2%");
	CHECK_EQ_INT(argc - optind, 2);
	CHECK_STR(argv[optind], "steps");
}

/* bad_usage(): the message, the hint, and the status of bad usage. */
static void bad_usage_says(void)
{
	const char *args[] = { NULL };
	struct report_options r;
	char err[512];
	FILE *tmp = tmpfile();
	int saved = dup(2), rc;

	parse(args, &r, err, sizeof(err));
	fflush(stderr);
	dup2(fileno(tmp), 2);
	rc = bad_usage("--x '%s': %d", "y", 7);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	memset(err, 0, sizeof(err));
	CHECK(fread(err, 1, sizeof(err) - 1, tmp) > 0);
	fclose(tmp);
	CHECK_EQ_INT(rc, EXIT_USAGE);
	CHECK_STR(err, "mfu-report: --x 'y': 7\nTry 'mfu-report --help'.\n");
}

int main(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		current = &rows[i];
		in_child(run_row, rows[i].line);
	}
	in_child(defaults, __LINE__);
	in_child(every_option, __LINE__);
	in_child(bad_usage_says, __LINE__);
	return check_status();
}
