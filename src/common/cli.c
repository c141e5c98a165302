/* The programs' shared command-line shape (cli.h). */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int cli_usage_error(const char *prog, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", prog);
	return CLI_EXIT_USAGE;
}

/* 1 when @arg is "--NAME=VALUE" and NAME is a long option of @longopts (or
 * an abbreviation getopt_long accepts). */
static int is_flag_with_value(const char *arg, const struct option *longopts)
{
	const char *eq = strchr(arg, '=');
	size_t n;

	if (!eq || strncmp(arg, "--", 2) != 0)
		return 0;
	n = (size_t)(eq - arg - 2);
	for (const struct option *lo = longopts; lo && lo->name; lo++)
		if (n > 0 && strlen(lo->name) >= n && strncmp(lo->name, arg + 2, n) == 0 &&
		    lo->has_arg == no_argument)
			return 1;
	return 0;
}

int cli_option_error(const char *prog, int c, char **argv, const struct option *longopts)
{
	const char *arg = argv[optind - 1];
	char shortopt[3] = { '-', (char)optopt, '\0' };

	/* a short option cluster ("-qx") leaves argv[optind - 1] whole:
	 * name the letter getopt stopped at */
	if (optopt > 0 && optopt < 128 && arg[0] == '-' && arg[1] != '-')
		arg = shortopt;
	if (c == ':')
		return cli_usage_error(prog, "option '%s' needs a value", arg);
	if (is_flag_with_value(arg, longopts)) {
		const char *eq = strchr(arg, '=');
		return cli_usage_error(prog, "option '%.*s' takes no value", (int)(eq - arg), arg);
	}
	return cli_usage_error(prog, "unknown option '%s'", arg);
}

int cli_version(const char *prog, const char *version)
{
	printf("%s %s\n", prog, version);
	return 0;
}
