/*
 * The peaks a recording divides by: spec (the machine model's formula for
 * the target's cores), measured (mfu-calibrate's profile of this machine),
 * user (--peak-flops, --peak-bw), and which of them MFU and MBU use.
 *
 * --peak auto (the default) takes the higher of spec and measured for
 * FLOP/s, so a utilization never claims more of the machine than it
 * demonstrably delivers: a spec row that is too low (a masked CPU model, a
 * VM's TSC rate taken for the core clock) is overruled by what the machine
 * was seen to do. Memory bandwidth is a socket's, shared: for a CPU set
 * that is a slice of its sockets (machine_bw_slice(): a VM, taskset, a
 * cgroup quota) auto takes what those CPUs were measured to reach, the
 * socket's spec beside it; for whole sockets the higher of the two. A
 * figure the profile marks disturbed is never a ceiling. Writes the peak
 * table and the run's peak columns (writer.c).
 */
#ifndef MFU_RECORD_PEAKS_H
#define MFU_RECORD_PEAKS_H

#include <stddef.h>

#include "machine.h"
#include "asuser.h"
#include "profile.h"

#define PEAKS_MAX_ROWS 96
#define PEAKS_MAX_WARN 4

enum peaks_mode {
	PEAKS_AUTO = 0,  /* the higher of spec and measured; a slice's bandwidth: measured */
	PEAKS_SPEC,
	PEAKS_MEASURED,  /* measured where the profile has it, else spec (warned) */
};

struct peak_row {
	char kind[16];          /* flops | bandwidth */
	char dtype[8];          /* fp64 ... int8; "" for bandwidth */
	char scope[8];          /* core | all | machine (a CPU set holding the
				 * target's: its detail starts "CPUs LIST ") */
	double value;           /* FLOP/s (ops/s for int8) or bytes/s */
	char source[12];        /* spec | measured | user */
	char detail[640];
};

struct peaks {
	struct peak_row rows[PEAKS_MAX_ROWS];
	int nrows;
	double flops;           /* used for MFU/HFU; 0: unknown */
	char flops_source[1400];
	double bw;              /* used for MBU; 0: unknown */
	char bw_source[1400];
	double clock_hz;        /* measured core clock from the profile; 0: none */
	/* Lines for stderr (said once by the caller): a measured peak far
	 * above the spec, --peak measured without a profile. */
	char warn[PEAKS_MAX_WARN][600];
	int nwarn;
	/* A measured peak far above the spec that auto or --peak measured
	 * uses, "" if none: its source says so, and the report's notes; on
	 * stderr only from the recording that measured it (the same every
	 * run after, and nothing the user can change). */
	char spec_note[1200];
	/* What the machine profile holds that a reader of the run should know
	 * (figures measured while other tasks ran, and which were used
	 * instead), "" if nothing: a note of kind "profile" and a line on
	 * stderr. */
	char profile_note[1600];
};

struct peaks_request {
	enum peaks_mode mode;
	const char *dtype;      /* dtype of the MFU peak, e.g. "fp32" */
	double user_flops;      /* --peak-flops; 0: none */
	double user_bw;         /* --peak-bw; 0: none */
	/* The profile's latest calibration (profile_read()), for what the
	 * notes say of it; NULL: unknown. */
	const struct profile_status *profile;
	/* The profile's all-CPU rows measured on CPU sets that hold the
	 * target's and more (profile_read_sets()): their bandwidths become
	 * rows of scope "machine" (a job's host ceiling, job_peak.h), never
	 * the run's own peak. NULL / 0: none. */
	const struct profile_peak *machine;
	int nmachine;
};

/* Parse "auto", "spec" or "measured"; -EINVAL otherwise. */
int peaks_mode_parse(const char *s);
const char *peaks_mode_name(enum peaks_mode mode);

/* Work out every peak for @m (its cores and sockets are the target's) from
 * the machine model and the @npp profile rows @pp that apply to it
 * (profile_load's answer; @profile_why says why there are none), and choose
 * the ones @rq asks for. Rows marked disturbed are never used. FLOP peaks
 * of the whole CPU set come from the profile's "all" row when it was
 * measured on the same CPUs, else (or when the best kernel's "all" row was
 * disturbed and one core's figure times the cores is higher) from its
 * one-core row times the target's cores. Bandwidth of the CPU set: its
 * "all" row, else one thread's figure times its CPUs (an upper bound,
 * never above the spec). Returns 0 or -EINVAL. */
int peaks_choose(struct peaks *p, const struct machine *m, const struct peaks_request *rq,
		 const struct profile_peak *pp, int npp, const char *profile_why);

/* Does the profile (@pp, @npp rows that apply) give a run of @dtype
 * nothing undisturbed to use where it has disturbed figures: no
 * undisturbed FLOP figure of @dtype (one core's or all CPUs') beside a
 * disturbed one, or none for memory bandwidth beside a disturbed one?
 * 1 with what in @why, else 0. */
int peaks_profile_disturbed(const struct profile_peak *pp, int npp, const char *dtype, char *why, size_t len);

/* A machine at most this busy (share of all CPUs' time, /proc/stat) is
 * quiet enough to measure its peaks. */
#define PEAKS_QUIET_BUSY 0.10

/* The share of all CPUs' time that was busy (not idle or waiting for
 * I/O) over the next @seconds, from /proc/stat. Returns 0 or -errno. */
int peaks_machine_busy(double seconds, double *busy);

/* The busy share between two "cpu" lines of /proc/stat (@a before, @b
 * after). Returns 0 or -EINVAL. */
int peaks_stat_busy(const char *a, const char *b, double *busy);

/* The mfu-calibrate program to run for a first calibration: next to
 * mfu-record when installed, in the build tree when run from it, else
 * "mfu-calibrate" from PATH. Writes the path to @buf. */
void peaks_calibrate_program(char *buf, size_t len);

/* Run `mfu-calibrate --quick --profile PATH` (PATH NULL: its default) with
 * its table output discarded and its warnings on our stderr (discarded
 * too when @quiet), as user @as (NULL or inactive: as we are; under sudo
 * the invoking user, whose cache the profile goes to: nothing of root's
 * lands there). Returns 0, or -errno / -ECHILD (it failed) with the reason
 * in @why. */
int peaks_calibrate(const char *program, const char *profile, const struct asuser *as, int quiet, char *why,
		    size_t len);

#endif
