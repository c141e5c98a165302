/*
 * The command-line shape the three programs share (mfu-record, mfu-report,
 * mfu-calibrate): getopt_long() with opterr = 0 over a table of long
 * options, a parse function that returns CLI_GO_ON or the exit status, and
 * one way to say a bad usage:
 *
 *     PROG: what is wrong, naming the option and its value
 *     Try 'PROG --help'.
 *
 * with exit status CLI_EXIT_USAGE. --help prints on stdout and exits 0;
 * --version prints "PROG VERSION" and exits 0.
 */
#ifndef MFU_CLI_H
#define MFU_CLI_H

#include <getopt.h>

#define CLI_GO_ON (-1)      /* parsed: run the program */
#define CLI_EXIT_USAGE 2    /* bad usage (said on stderr) */

/* Say "@prog: <message>" and the --help hint on stderr. Returns
 * CLI_EXIT_USAGE. */
int cli_usage_error(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The message for what getopt_long() returned as ':' (a missing value) or
 * '?' (an unknown option, or a value given to a flag: "--quick=1") for
 * argv[optind - 1], with @longopts to tell the last two apart. Returns
 * CLI_EXIT_USAGE. */
int cli_option_error(const char *prog, int c, char **argv, const struct option *longopts);

/* "@prog @version" on stdout. Returns 0 (the exit status). */
int cli_version(const char *prog, const char *version);

#endif
