/* mfu-record's command line (options.h). */
#include "options.h"
#include "cli.h"
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <pwd.h>
#include <unistd.h>

#include "record/counters/counters.h"
#include "machine.h"
#include "util.h"
#include "record/probes/probe_steps.h"



/* The usage, and the options of the output, the peaks and the emulator. */
static void usage_output(FILE *f)
{
	fprintf(f,
		"usage: mfu-record [options] [--] COMMAND [ARGS...]\n"
		"       mfu-record [options] -p PID [--duration SECONDS]\n"
		"\n"
		"Run COMMAND under perf_event counters and record the steps and phases it marks\n"
		"(libmfu, mfu.py) into an SQLite database; read it with mfu-report.\n"
		"\n"
		"options:\n"
		"  -o, --output FILE       database to write (default run.sqlite), checked\n"
		"                          before anything starts; an existing FILE is kept as\n"
		"                          FILE.old, or FILE.old.2, .3... when that exists\n"
		"                          (never overwritten). Under mpirun or srun, %%r\n"
		"                          is the rank (run.%%r.sqlite), %%h the host, %%p the\n"
		"                          pid, %%%% a %%; a rank of a job of several whose FILE\n"
		"                          has no %%r (nor %%p, nor its rank's number) writes\n"
		"                          FILE with .RANK before its extension (run.1.sqlite):\n"
		"                          never one file for all\n"
		"      --dtype DTYPE       precision of the peak used for MFU: fp64, fp32\n"
		"                          (default), bf16, fp16, int8 (ops/s, for quantized\n"
		"                          inference); every dtype's peak is kept, for\n"
		"                          mfu-report --dtype\n"
		"      --peak SOURCE       'auto' (default): the higher of the spec peak and the\n"
		"                          measured one, so MFU never claims more than the\n"
		"                          machine delivers (memory bandwidth of a slice of a\n"
		"                          socket: what its CPUs were measured to reach);\n"
		"                          'spec': the CPU's specification;\n"
		"                          'measured': mfu-calibrate's profile of this machine\n"
		"      --peak-flops FLOPS  peak FLOP/s to use instead, e.g. 1.5T\n"
		"      --peak-bw BYTES     peak memory bandwidth in bytes/s to use instead, e.g.\n"
		"                          200G\n"
		"      --no-calibrate      with no profile of this machine yet, do not run\n"
		"                          'mfu-calibrate --quick' first (a few seconds, once);\n"
		"                          also MFU_NO_CALIBRATE=1 in the environment\n"
		"      --profile FILE      the machine profile to read (default\n"
		"                          $XDG_CACHE_HOME/mfu/profile-HOST.sqlite)\n"
		"      --no-lib-flops      do not count the FLOPs of BLAS, LAPACK, oneDNN calls\n"
		"                          (counted by default: a library preloaded into\n"
		"                          COMMAND; they become MFU's numerator when COMMAND\n"
		"                          declares no model FLOPs)\n"
		"      --emulate           count the floating-point operations COMMAND executes\n"
		"                          in an emulator (Valgrind's mfufp tool, 2-1,000x\n"
		"                          slower) instead of the PMU, exactly, by precision\n"
		"                          and vector width, at every step and phase: for\n"
		"                          machines without FP counters. Its times are the\n"
		"                          emulator's, so the report shows counts, not MFU;\n"
		"                          mfu-report --hw-flops-from joins them to a native\n"
		"                          run. No samples, probes or -e events with it\n");
}

/* -o FILE as written: %r, %h, %p expanded; a rank of a job whose FILE
 * names no rank writes FILE with its rank in the name (rank_own_name). */
static int output_name(struct options *o)
{
	char why[512], own[sizeof(o->output_buf)], ranks[32] = "an unknown number of";
	const char *tmpl = o->output;
	size_t len = strlen(o->output);
	struct stat st;
	int rc = rank_own_name(o->output, &o->rank, own, sizeof(own));

	/* a directory is no file name, and a rank's name made from it would
	 * be DIR/.3, a hidden file (or DIR.3 beside it) */
	if ((len > 0 && o->output[len - 1] == '/') || (rc == 1 && stat(o->output, &st) == 0 && S_ISDIR(st.st_mode)))
		return cli_usage_error(PROG, "-o %s is a directory: name the recording's file (-o %s%srun.%ssqlite)",
				       o->output, o->output, len > 0 && o->output[len - 1] == '/' ? "" : "/",
				       o->rank.rank >= 0 && o->rank.size != 1 ? "%r." : "");
	if (rc < 0)
		return cli_usage_error(PROG, "-o '%s': the name is too long", o->output);
	if (rc == 1)
		tmpl = own;
	if (rank_expand(tmpl, &o->rank, o->output_buf, sizeof(o->output_buf), why, sizeof(why)) != 0)
		return cli_usage_error(PROG, "-o %s", why);
	if (rc == 1 && !o->quiet) {
		char *r = strstr(own, "%r");

		if (o->rank.size > 0)
			strbuf(ranks, sizeof(ranks), "%d", o->rank.size);
		/* the glob of the ranks' names: "%r" -> "*" */
		memmove(r + 1, r + 2, strlen(r + 2) + 1);
		*r = '*';
		fprintf(stderr, PROG ": note: rank %d of a job of %s ranks (%s): -o %s names no rank, so each rank "
			"writes its own database, this one %s (%%r in -o chooses where the rank goes); read them "
			"together with mfu-report --db '%s'\n",
			o->rank.rank, ranks, o->rank.source, o->output, o->output_buf, own);
	}
	o->output = o->output_buf;
	return CLI_GO_ON;
}

/* The options of what is counted and sampled. */
static void usage_counting(FILE *f)
{
	fprintf(f,
		"  -e, --event EVENT       also count EVENT (a libpfm4 name such as\n"
		"                          INST_RETIRED:ANY or PMU::EVENT:UMASK, or sysfs\n"
		"                          pmu/alias/ or pmu/terms/); repeatable; stored per\n"
		"                          step and phase\n"
		"      --step SPEC         take the steps from probes instead of markers: FUNC\n"
		"                          (entry to return), FUNC_A,FUNC_B, sdt:PROVIDER:NAME\n"
		"                          (hit to next hit), sdt:P:BEGIN,sdt:P:END,\n"
		"                          py:[MODULE.]FUNC (a Python function, one: no pair;\n"
		"                          needs no root); [OBJECT:]\n"
		"                          before a point names its file, as a point in a\n"
		"                          library loaded later (dlopen) must: one found\n"
		"                          nowhere at the start is an error. Needs root\n"
		"                          (uprobes need CAP_SYS_ADMIN)\n"
		"      --phase NAME=SPEC   a phase NAME from probes, SPEC as for --step;\n"
		"                          repeatable\n"
		"      --list-events       show what would be counted on this machine and exit\n"
		"                          (LIBPFM_FORCE_PMU=spr|icx|skx|amd64_fam19h_zen4...\n"
		"                          shows the encodings for another CPU)\n"
		"  -F, --freq HZ           cpu-clock samples per second of CPU time, with\n"
		"                          callchains (default 1000; 0: no samples, context\n"
		"                          switches only)\n"
		"      --compute REGEX     also count functions matching REGEX (POSIX ERE over\n"
		"                          \"library:function\") as compute kernels; repeatable\n"
		"      --compute-file FILE read compute patterns from FILE, one per line\n"
		"                          (default $XDG_CONFIG_HOME/mfu/compute when it exists)\n"
		"      --dispatch REGEX    count functions matching REGEX as dispatch (runtime\n"
		"                          overhead: your framework's glue); repeatable. Code\n"
		"                          neither compute nor dispatch is \"unclassified\"\n"
		"      --dram-interval MS  read the memory-controller counters every MS ms\n"
		"                          (default 10); steps get DRAM bytes interpolated at\n"
		"                          their bounds\n");
}

/* The options of the target, the limits, the exit status. */
static void usage_target(FILE *f)
{
	fprintf(f,
		"  -p, --pid PID           attach to running process PID (and all its threads)\n"
		"                          instead of running a command; detach on Ctrl-C,\n"
		"                          SIGTERM, when --duration ends or when PID exits; PID\n"
		"                          is never stopped\n"
		"      --duration SECONDS  with -p: detach after SECONDS (e.g. 2, 0.5)\n"
		"  -I, --interval MS       read the counter groups every MS ms into\n"
		"                          interval_reading (default 10; 0: off): a time series\n"
		"                          of the run, and what the counts of probe steps are\n"
		"                          interpolated from\n"
		"      --ring-records N    marker ring capacity in records (default 131072, a\n"
		"                          power of two, 576 bytes each: 75 MiB)\n"
		"      --max-procs N       keep step state for at most N processes at once\n"
		"                          (default 4096); markers of more are dropped, counted\n"
		"                          and noted\n"
		"      --max-threads N     keep phase state for at most N threads and 2N open\n"
		"                          phases at once (default 65536); as --max-procs\n"
		"      --on-error ACTION   when the database cannot be written (disk full...):\n"
		"                          'continue' (default) lets COMMAND run on unrecorded,\n"
		"                          'kill' stops it with SIGTERM\n"
		"      --as-root           under sudo, run COMMAND as root (default: as the user\n"
		"                          who ran sudo, from SUDO_UID/SUDO_GID)\n"
		"  -q, --quiet             print errors only: no notes (they stay in the\n"
		"                          database), no live line on a terminal while\n"
		"                          recording (time, steps, last and median step,\n"
		"                          running MFU), and no summary at the end\n"
		"  -h, --help              show this help\n"
		"  -V, --version           show the version\n"
		"\n"
		"The exit status is COMMAND's own (128 + N if signal N killed it); with -p, 0;\n"
		"125 if mfu-record itself failed, 126 if COMMAND could not be executed, 127 if\n"
		"it was not found, 2 for bad usage. SIGINT, SIGTERM and SIGHUP sent to\n"
		"mfu-record are passed to COMMAND, and the database is completed when it exits.\n");
}

void options_usage(FILE *f)
{
	usage_output(f);
	usage_counting(f);
	usage_target(f);
}

/* A whole number from @lo to @hi (and a power of two when @pow2). On bad
 * input, says so with @what and @expect, and returns -1. */
static int ranged_u64(const char *arg, uint64_t lo, uint64_t hi, int pow2, const char *what, const char *expect,
		      uint64_t *out)
{
	uint64_t v;

	if (safe_atou64(arg, &v) != 0 || v < lo || v > hi || (pow2 && (v & (v - 1)))) {
		cli_usage_error(PROG, "%s '%s': expected %s", what, arg, expect);
		return -1;
	}
	*out = v;
	return 0;
}

/* Append @arg to a bounded list of @max; -1 (said) when it is full. */
static int append_arg(const char **list, int *n, int max, const char *arg, const char *what)
{
	if (*n == max) {
		cli_usage_error(PROG, "too many %s (at most %d)", what, max);
		return -1;
	}
	list[(*n)++] = arg;
	return 0;
}

/* --step SPEC or --phase NAME=SPEC. 0, or -1 once said. */
static int add_probe_request(struct options *o, int phase, const char *arg)
{
	char why[512];

	if (!phase && o->have_step) {
		cli_usage_error(PROG, "--step given twice: one step spec per recording "
			"(phases take --phase NAME=SPEC)");
		return -1;
	}
	if (phase && o->nreq == PROBE_STEPS_MAX_REQUESTS - !o->have_step) {
		cli_usage_error(PROG, "too many --phase options (at most %d)", PROBE_STEPS_MAX_REQUESTS - 1);
		return -1;
	}
	if (probe_steps_parse(arg, phase, &o->req[o->nreq], why, sizeof(why)) != 0) {
		cli_usage_error(PROG, "%s '%s': %s", phase ? "--phase" : "--step", arg, why);
		return -1;
	}
	o->have_step |= !phase;
	o->nreq++;
	return 0;
}

/* What the options cannot be together, and the command after them.
 * Returns 0 or CLI_EXIT_USAGE (said). */
static int check_command(int argc, char **argv, struct options *o)
{
	if (o->list_events)
		return 0;
	if (o->pid) {
		if (o->emulate) {
			return cli_usage_error(PROG, "--emulate does not go with -p: the emulator must start the "
				"program (record it from its start)");
		}
		if (optind < argc) {
			return cli_usage_error(PROG, "-p attaches to a running process: no COMMAND with it ('%s')",
				argv[optind]);
		}
		for (int i = 0; i < o->nreq; i++)
			if (o->req[i].python) {
				return cli_usage_error(PROG, "'%s': py: names need mfu-record to start the Python "
						       "program (its hook loads at startup); with -p use a function "
						       "or sdt: spec", o->req[i].text);
			}
		return 0;
	}
	if (o->duration > 0) {
		return cli_usage_error(PROG, "--duration goes with -p PID (a command is recorded until it ends)");
	}
	if (o->emulate) {
		/* the program runs as code Valgrind translated: addresses
		 * sampled, and uprobes in its own code, are not the program's */
		if (o->freq_given && o->freq > 0) {
			return cli_usage_error(PROG, "-F does not go with --emulate: under the emulator the "
				"sampled addresses are the emulator's, not the program's");
		}
		if (o->nreq > 0) {
			return cli_usage_error(PROG, "--step and --phase do not go with --emulate: uprobes never "
				"fire in code the emulator runs (mark the steps with libmfu or mfu.py)");
		}
		o->freq = 0;
	}
	if (optind >= argc) {
		return cli_usage_error(PROG, "no command to record (usage: " PROG " [options] [--] COMMAND [ARGS...])");
	}
	o->argv = argv + optind;
	return 0;
}

static void set_defaults(struct options *o)
{
	const char *nc = getenv("MFU_NO_CALIBRATE");

	o->output = "run.sqlite";
	o->dtype = "fp32";
	/* 75 MiB: one thread marking flat out on a 2-CPU machine shared with
	 * other jobs lost 16-78% of a 10 s storm's records with 32,768 slots
	 * and none with 131,072 (2 runs each; docs/performance.md); it costs
	 * about 60 ms of CPU at the start (the pages are mapped in) */
	o->ring_records = 131072;
	o->max_procs = MARKERS_MAX_PROCS;
	o->max_threads = MARKERS_MAX_THREADS;
	o->freq = 1000;
	o->dram_ms = 10;
	o->interval_ms = 10;
	/* test suites and batch jobs: never start a calibration by surprise */
	o->no_calibrate = nc && *nc && strcmp(nc, "0") != 0;
}

enum { OPT_DTYPE = 256, OPT_PEAK_FLOPS, OPT_PEAK_BW, OPT_RING, OPT_VERSION, OPT_LIST, OPT_ON_ERROR,
       OPT_AS_ROOT, OPT_COMPUTE, OPT_COMPUTE_FILE, OPT_DISPATCH, OPT_DRAM_MS, OPT_PEAK, OPT_PROFILE, OPT_STEP,
       OPT_PHASE, OPT_DURATION, OPT_NO_CALIBRATE, OPT_NO_LIB_FLOPS, OPT_EMULATE, OPT_MAX_PROCS,
       OPT_MAX_THREADS };

/* The value options that take a number (parse_value()). */
static int parse_number(int c, const char *arg, struct options *o)
{
	uint64_t v;
	int i;

	switch (c) {
	case OPT_PEAK_FLOPS:
	case OPT_PEAK_BW: {
		double d;
		if (parse_si(arg, &d) != 0) {
			cli_usage_error(PROG, "--%s '%s': expected a positive number, optionally with "
				"a k, M, G, T or P suffix (e.g. 1.5T)", c == OPT_PEAK_FLOPS ? "peak-flops" : "peak-bw", arg);
			return -1;
		}
		*(c == OPT_PEAK_FLOPS ? &o->peak_flops : &o->peak_bw) = d;
		return 0;
	}
	case OPT_RING:
		if (ranged_u64(arg, 64, 1u << 24, 1, "--ring-records", "a power of two from 64 to 16777216", &v))
			return -1;
		o->ring_records = v;
		return 0;
	case OPT_MAX_PROCS:
	case OPT_MAX_THREADS:
		if (ranged_u64(arg, 1, 1u << 24, 0, c == OPT_MAX_PROCS ? "--max-procs" : "--max-threads",
			       "a whole number from 1 to 16777216", &v))
			return -1;
		*(c == OPT_MAX_PROCS ? &o->max_procs : &o->max_threads) = (size_t)v;
		return 0;
	case 'F':
		if (ranged_u64(arg, 0, 100000, 0, "-F", "a frequency in Hz from 0 to 100000", &v))
			return -1;
		o->freq = (unsigned)v;
		o->freq_given = 1;
		return 0;
	case OPT_DRAM_MS:
		if (ranged_u64(arg, 1, 60000, 0, "--dram-interval", "milliseconds from 1 to 60000", &v))
			return -1;
		o->dram_ms = (unsigned)v;
		return 0;
	case 'I':
		if (ranged_u64(arg, 0, 60000, 0, "-I", "milliseconds from 0 (off) to 60000", &v))
			return -1;
		o->interval_ms = (unsigned)v;
		return 0;
	case 'p':
		if (safe_atoi(arg, &i) != 0 || i <= 0) {
			cli_usage_error(PROG, "-p '%s': expected a process id", arg);
			return -1;
		}
		o->pid = (pid_t)i;
		return 0;
	case OPT_DURATION: {
		char *end;
		errno = 0;
		double d = strtod(arg, &end);
		if (errno || end == arg || *end || !(d > 0) || d > 1e7) {
			cli_usage_error(PROG, "--duration '%s': expected seconds, more than 0", arg);
			return -1;
		}
		o->duration = d;
		return 0;
	}
	}
	return 0;
}

/* The value options that take a number, a word or a spec. Returns 0, or -1
 * once the bad value is said. */
static int parse_value(int c, const char *arg, struct options *o)
{
	int i;

	switch (c) {
	case OPT_DTYPE:
		i = machine_dtype_parse(arg);
		if (i < 0) {
			cli_usage_error(PROG, "unknown dtype '%s' (use fp64, fp32, bf16, fp16 or int8)", arg);
			return -1;
		}
		o->dtype = machine_dtype_name((enum machine_dtype)i);
		return 0;
	case OPT_PEAK:
		i = peaks_mode_parse(arg);
		if (i < 0) {
			cli_usage_error(PROG, "--peak '%s': expected 'auto', 'spec' or 'measured'", arg);
			return -1;
		}
		o->peak_mode = (enum peaks_mode)i;
		return 0;
	case OPT_ON_ERROR:
		if (strcmp(arg, "continue") != 0 && strcmp(arg, "kill") != 0) {
			cli_usage_error(PROG, "--on-error '%s': expected 'continue' or 'kill'", arg);
			return -1;
		}
		o->kill_on_error = strcmp(arg, "kill") == 0;
		return 0;
	case 'o':
		if (!*arg) {
			cli_usage_error(PROG, "-o needs a file name");
			return -1;
		}
		o->output = arg;
		return 0;
	case 'e':
		if (!*arg) {
			cli_usage_error(PROG, "-e needs an event name");
			return -1;
		}
		return append_arg(o->events, &o->nevents, COUNTERS_MAX, arg, "-e events");
	case OPT_COMPUTE:
		return append_arg(o->compute, &o->ncompute, (int)ARRAY_SIZE(o->compute), arg, "--compute patterns");
	case OPT_DISPATCH:
		return append_arg(o->dispatch, &o->ndispatch, (int)ARRAY_SIZE(o->dispatch), arg, "--dispatch patterns");
	case OPT_STEP:
	case OPT_PHASE:
		return add_probe_request(o, c == OPT_PHASE, arg);
	}
	return parse_number(c, arg, o);
}

int options_parse(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "dtype", required_argument, NULL, OPT_DTYPE },
		{ "peak-flops", required_argument, NULL, OPT_PEAK_FLOPS },
		{ "peak-bw", required_argument, NULL, OPT_PEAK_BW },
		{ "ring-records", required_argument, NULL, OPT_RING },
		{ "max-procs", required_argument, NULL, OPT_MAX_PROCS },
		{ "max-threads", required_argument, NULL, OPT_MAX_THREADS },
		{ "event", required_argument, NULL, 'e' },
		{ "list-events", no_argument, NULL, OPT_LIST },
		{ "on-error", required_argument, NULL, OPT_ON_ERROR },
		{ "as-root", no_argument, NULL, OPT_AS_ROOT },
		{ "freq", required_argument, NULL, 'F' },
		{ "compute", required_argument, NULL, OPT_COMPUTE },
		{ "compute-file", required_argument, NULL, OPT_COMPUTE_FILE },
		{ "dispatch", required_argument, NULL, OPT_DISPATCH },
		{ "dram-interval", required_argument, NULL, OPT_DRAM_MS },
		{ "interval", required_argument, NULL, 'I' },
		{ "step", required_argument, NULL, OPT_STEP },
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "phase", required_argument, NULL, OPT_PHASE },
		{ "peak", required_argument, NULL, OPT_PEAK },
		{ "profile", required_argument, NULL, OPT_PROFILE },
		{ "no-calibrate", no_argument, NULL, OPT_NO_CALIBRATE },
		{ "no-lib-flops", no_argument, NULL, OPT_NO_LIB_FLOPS },
		{ "emulate", no_argument, NULL, OPT_EMULATE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0, 0, 0, 0 },
	};
	int c, rc;

	set_defaults(o);
	opterr = 0; /* said by cli_option_error() */
	while ((c = getopt_long(argc, argv, "+:o:qhVe:F:I:p:", longopts, NULL)) != -1) {
		switch (c) {
		case 'q': o->quiet = 1; break;
		case OPT_LIST: o->list_events = 1; break;
		case OPT_AS_ROOT: o->as_root = 1; break;
		case OPT_NO_CALIBRATE: o->no_calibrate = 1; break;
		case OPT_NO_LIB_FLOPS: o->no_lib_flops = 1; break;
		case OPT_EMULATE: o->emulate = 1; break;
		case OPT_COMPUTE_FILE: o->compute_file = optarg; break;
		case OPT_PROFILE: o->profile = optarg; break;
		case 'h':
			options_usage(stdout);
			return 0;
		case 'V':
			return cli_version(PROG, MFU_VERSION);
		case ':':
		case '?':
			return cli_option_error(PROG, c, argv, longopts);
		default:
			if (parse_value(c, optarg, o))
				return CLI_EXIT_USAGE;
		}
	}
	rc = check_command(argc, argv, o);
	if (rc)
		return rc;
	rank_detect(&o->rank);
	return output_name(o);
}
