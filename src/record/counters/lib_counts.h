/*
 * Library-call counts of the whole target, read by the recorder: the
 * counting library's counters (libflops.h) in every process slot of the
 * shared region, summed into the run's cumulative totals per function.
 *
 * The markers read one process's counters at its step boundaries; this
 * reads all of them on the recorder's timer (intervals.c, every -I ms) and
 * once more when the target has ended, so a program without steps still
 * has its library FLOPs: the whole run's (run.lib_*, run_lib_call) and
 * those of each interval (lib_reading).
 *
 * The totals only grow. A slot whose process exited keeps its counters
 * until the counting library gives the slot to a new process, which zeroes
 * them (libflops_proc_for(), when all LIBFLOPS_MAX_PROCS slots are held):
 * before that, a read takes the exited process's final counts into a
 * retired sum and frees the slot itself (claimed first with a
 * compare-and-swap of its pid to -1, so no process is given it half
 * read). It does so only when few slots are free, so that a program of a
 * few processes never has its slots touched. A slot that changed hands
 * between two reads all the same (more processes than slots came and went
 * within one period) loses what its old process counted after the last
 * read: lib_counts_procs_lost() says how many may have.
 */
#ifndef MFU_LIB_COUNTS_H
#define MFU_LIB_COUNTS_H

#include <stdint.h>

#include "libflops.h"

struct lib_counts;

/* Prepare reads of region @r (the recorder's mapping, read-write: freeing
 * exited processes' slots writes it). Returns 0 or -ENOMEM. */
int lib_counts_new(struct lib_counts **out, struct libflops_region *r);
void lib_counts_free(struct lib_counts *lc);

/* Read every slot now into the totals. */
void lib_counts_read(struct lib_counts *lc);

/* The totals as of the last read: out[0] calls, then FLOPs (ops for int8)
 * per enum libflops_prec, as libflops_sum() gives one process's. */
void lib_counts_sum(const struct lib_counts *lc, uint64_t out[LIBFLOPS_WORDS]);

/* The calls running (begun, not yet returned) in the processes as of the
 * last read: a call's FLOPs are counted when it returns, so the totals
 * leave out the work of these so far (the counting library's
 * libflops_proc.begun). 0 for a slot freed or given up, and for a
 * process that is gone (killed inside a call: it will never return). */
uint64_t lib_counts_running(const struct lib_counts *lc);

/* Function @f's totals (calls, FLOPs) as of the last read; zeros for an
 * id out of range. */
struct libflops_counter lib_counts_func(const struct lib_counts *lc, unsigned f);

/* Processes seen counting (the counting library active in their slot). */
uint64_t lib_counts_procs(const struct lib_counts *lc);

/* Processes whose slot changed hands between two reads: their calls after
 * the read before may be missing from the totals. */
uint64_t lib_counts_procs_lost(const struct lib_counts *lc);

/* Slots the recorder freed after their process exited. */
uint64_t lib_counts_procs_freed(const struct lib_counts *lc);

#endif
