/*
 * The writer: everything mfu-record stores in the run database, through
 * prepared statements inside batched transactions. writer_commit() ends the
 * current batch (mfu-record calls it about 4 times a second, so a killed
 * recorder loses at most the last batch) and starts the next.
 */
#ifndef MFU_WRITER_H
#define MFU_WRITER_H

#include <sqlite3.h>
#include <stdint.h>

#include "record/counters/counters.h"
#include "libflops.h"
#include "machine.h"
#include "record/markers/markers.h"
#include "record/counters/peaks.h"

struct writer;

struct run_info {
	const char *command_json;
	const char *cwd;
	uint64_t start_unix_ns, start_ns;
	const struct machine *machine;
	const char *dtype;
	double peak_flops;      /* 0: unknown */
	const char *peak_flops_source;
	double peak_bw;         /* 0: unknown */
	const char *peak_bw_source;
	int target_pid;
	int attach;             /* mfu-record -p: joined a running process */
	uint64_t interval_ns;   /* period of the counter readings; 0: none */
};

int writer_open(struct writer **out, sqlite3 *db, char *err, size_t errlen);

struct libflops_region;
/* The region of library-call counts (libflops.h) from which step rows get
 * their lib_call rows; NULL (the default): none. */
void writer_set_libflops(struct writer *w, const struct libflops_region *lf);
/* Steps whose lib_call rows were lost: their snapshots were overwritten
 * before the recorder read them. */
uint64_t writer_lib_snaps_lost(const struct writer *w);
/* Steps without lib_call rows because their process had called more
 * functions than a snapshot holds (LIBFLOPS_SNAP_FUNCS). */
uint64_t writer_lib_snaps_full(const struct writer *w);
/* Commit the pending batch and close; the database stays open (caller's). */
void writer_close(struct writer *w);

int writer_run_begin(struct writer *w, const struct run_info *ri);
/* exit_status/exit_signal < 0: unknown. state: complete, interrupted,
 * failed, detached (an attached recording that ended before its target).
 * @marker_records: the marker records that reached the recorder
 * (UINT64_MAX: unknown, stored as NULL). */
int writer_run_end(struct writer *w, uint64_t end_ns, int exit_status, int exit_signal,
		   uint64_t lost_records, uint64_t marker_records, const char *state);
int writer_counters(struct writer *w, const struct counters *cs);
/* The run's place in an MPI or Slurm job (run.rank...; rank < 0: none, and
 * nothing is written); @shared: the peaks count this rank's share of the
 * node. */
int writer_run_rank(struct writer *w, int rank, int size, int local_rank, int local_size, const char *job,
		    const char *source, int shared);
/* run.lib_counting: "on", "off" or "unavailable". */
int writer_run_lib_counting(struct writer *w, const char *state);
/* The whole run's library calls: run.lib_* from @sum (calls, then FLOPs
 * per precision, as lib_counts_sum() gives them) and a run_lib_call row for
 * each of the @nfuncs functions (libflops_funcs order) with calls. */
int writer_run_lib(struct writer *w, const uint64_t sum[LIBFLOPS_WORDS], const struct libflops_counter *funcs,
		   unsigned nfuncs);
/* run.exe_functions (1: the executable's symbol tables name functions it
 * defines, 0: stripped) and run.exe_usdt (its USDT probes); < 0: unknown,
 * NULL. */
int writer_run_exe(struct writer *w, int functions, long usdt);
/* run.emulated: the engine of an --emulate run (NULL: native). */
int writer_run_emulated(struct writer *w, const char *engine);
/* Store the counters' whole-run totals (read by the recorder after the end);
 * @enabled UINT64_MAX: not timed (the emulator's counts), NULL times. */
int writer_counter_total(struct writer *w, int id, uint64_t total, uint64_t enabled, uint64_t running);
int writer_peak(struct writer *w, const char *kind, const char *dtype, const char *scope,
		double value, const char *source, const char *detail);
int writer_note(struct writer *w, const char *kind, const char *text);
/* Replace the peak table with @pk's rows, and the note of kind "profile"
 * with @pk's profile_note. */
int writer_peaks(struct writer *w, const struct peaks *pk);
/* Set the run's CPU set (from @m: the target's), the peaks it uses and
 * their sources, how they were chosen (@peak_mode: auto, spec, measured)
 * and whose CPU set it is (@cpus_source). Called after writer_run_begin,
 * again when the target's CPU set turns out to differ. */
int writer_run_peaks(struct writer *w, const struct machine *m, const struct peaks *pk,
		     const char *peak_mode, const char *cpus_source);

/* markers_sink callbacks (ctx = the writer) */
int writer_step(void *w, const struct interval_row *row);
int writer_phase(void *w, const struct interval_row *row);
int writer_anomaly(void *w, const struct anomaly_row *row);

/* Fill the counter columns (and step_counter / phase_counter rows) of an
 * interpolated row stored earlier: values from @row->d, error bounds from
 * @err (err->v[COL_CPU_NS] for cpu_ns_err, counters_hw_flops(err) for
 * hw_flops_err, err->scaled[k] for each counter's err). */
int writer_step_counts(struct writer *w, const struct interval_row *row, const struct counter_delta *err);
int writer_phase_counts(struct writer *w, const struct interval_row *row, const struct counter_delta *err);

int writer_commit(struct writer *w);
/* Abandon the pending batch (after a failed write) and start a new one. */
void writer_rollback(struct writer *w);
/* The last SQLite error, for messages. */
const char *writer_error(const struct writer *w);

#endif
