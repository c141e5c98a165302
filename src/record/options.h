/*
 * mfu-record's command line: the options of a recording, parsed and
 * checked. docs/man/mfu-record.1 and --help say what each means.
 */
#ifndef MFU_RECORD_OPTIONS_H
#define MFU_RECORD_OPTIONS_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "record/counters/counters.h"
#include "record/markers/markers.h"
#include "record/counters/peaks.h"
#include "record/probes/probe_steps.h"
#include "rank.h"

#define PROG "mfu-record"

struct options {
	const char *output;
	const char *dtype;
	double peak_flops, peak_bw;
	uint64_t ring_records;
	size_t max_procs;      /* --max-procs: processes with markers state at once */
	size_t max_threads;    /* --max-threads: threads with markers state at once */
	int quiet;
	int list_events;
	int as_root;
	int kill_on_error;
	unsigned freq;
	unsigned dram_ms;
	unsigned interval_ms;
	enum peaks_mode peak_mode;
	int no_calibrate;
	int no_lib_flops;      /* --no-lib-flops: no library-call counting */
	int emulate;           /* --emulate: count FP operations under the emulator */
	int freq_given;        /* -F was given */
	const char *profile;
	const char *compute[32];
	int ncompute;
	const char *compute_file;
	const char *dispatch[32];
	int ndispatch;
	const char *events[COUNTERS_MAX];
	int nevents;
	struct probe_request req[PROBE_STEPS_MAX_REQUESTS];
	int nreq, have_step;
	pid_t pid;             /* -p: attach to this running process */
	double duration;       /* --duration: seconds to stay attached; 0: until it ends */
	struct rank_info rank; /* the job rank mpirun or srun started this one as */
	char output_buf[4096]; /* -o after %r, %h, %p */
	char **argv;
};

/* --help's text, to @f. */
void options_usage(FILE *f);

/* Parse the command line into @o (zeroed by the caller). Returns CLI_GO_ON,
 * or the exit status for --help, --version (0) and bad usage (said on
 * stderr: cli.h). */
int options_parse(int argc, char **argv, struct options *o);

#endif
