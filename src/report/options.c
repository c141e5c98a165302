/* mfu-report's command line: the options into struct report_options, and
 * --help. */
#include "options.h"

#include "analysis.h"
#include "format.h"
#include "machine.h"
#include "merge.h"
#include "util.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		"                  [--dtype DTYPE] [SECTION...]\n"
		"       " PROG " --db NATIVE --hw-flops-from EMULATED [SECTION...]\n"
		"       " PROG " [--db FILE] --trace FILE\n"
		"       " PROG " --diff BASE NEW [--format FORMAT] [--raw] [--columns LIST]\n"
		"                  [--skip-steps N] [--fail-on SPEC]\n"
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
		"                       sections (steps, phases, breakdown) and --diff show\n"
		"                       the columns read first, to fit 120 columns. csv and\n"
		"                       json always carry every column\n"
		"  -k, --skip-steps N   leave out the first N complete steps (warm-up)\n"
		"                       everywhere: their phases, samples and gaps too\n"
		"      --dtype DTYPE    MFU and HFU against the DTYPE FLOP/s peak (fp64, fp32,\n"
		"                       bf16, fp16, int8) instead of the one the run was\n"
		"                       recorded with (mfu-record --dtype): the peak mfu-record\n"
		"                       chose for DTYPE by its --peak rule, stored in the run\n"
		"  -l, --list           list the sections and what they show\n"
		"  -q, --quiet          leave out the notes on counters this machine cannot\n"
		"                       open (no hardware or memory-controller PMU: on a\n"
		"                       virtual machine, the same in every run)\n"
		"  -s, --sql SECTION    print the SQL behind SECTION, to run or adapt: the\n"
		"                       views it reads (analyses/views.sql, with the options\n"
		"                       given: --skip-steps, -q, --hw-flops-from, --dtype), then\n"
		"                       its own\n"
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
		"                       change under 2%% of the step time is 'too small\n"
		"                       to name')\n"
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
	OPT_DTYPE,
};

/* Every --db, freed at exit (main returns from many places). */
static const char **db_args;

static void free_db_args(void)
{
	free(db_args);
	db_args = NULL;
}

int options_parse(int argc, char **argv, struct report_options *r)
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
		{ "dtype", required_argument, NULL, OPT_DTYPE },
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
		case OPT_DTYPE: {
			int d = machine_dtype_parse(optarg);
			if (d < 0)
				return bad_usage("--dtype '%s': expected fp64, fp32, bf16, fp16 or int8", optarg);
			r->dtype = machine_dtype_name((enum machine_dtype)d);
			break;
		}
		case 'h': usage(stdout); return 0;
		case 'V': return cli_version(PROG, MFU_VERSION);
		default: return cli_option_error(PROG, opt, argv, options);
		}
	}
	return -1;
}
