/*
 * Library calls the counting library cannot see: BLAS, LAPACK and oneDNN
 * functions linked into the program's executable itself (a statically linked
 * program, or a static libopenblas.a in a dynamic one). Calls inside one
 * file never go through the dynamic loader, so preloading cannot
 * interpose them; uprobes can.
 *
 * For each function of the libflops list (libflops_list.h) that the
 * executable defines, two tracefs uprobe events are created: the entry,
 * whose fetch arguments read the call's dimensions (the kernel reads them
 * at the hit, through the pointers for the Fortran interface), and the
 * return. They are opened per CPU on the target with inherit (tracefs
 * uprobe events may be inherited, unlike the uprobe PMU's) and drained into
 * a TEMP table. When the recording ends, each thread's hits are paired in
 * time order: a call counts once, at its return, when no other counted call
 * of its thread is running (a reference CBLAS calling its Fortran routine
 * counts once, as with the counting library). Then the steps and phases of
 * the processes that ran the executable get those calls' FLOPs added to
 * their lib_flops columns (by time: whole process, like the counters), and
 * the steps their lib_call rows.
 *
 * Needs root (tracefs and uprobes), and costs a uprobe hit per call and per
 * return (microseconds), which matters only for tiny calls.
 */
#ifndef MFU_LIB_PROBES_H
#define MFU_LIB_PROBES_H

#include <sqlite3.h>
#include <stddef.h>
#include <sys/types.h>

struct lib_probes;

/* The functions of the libflops list that the ELF file @exe defines:
 * their number (0: none, or @exe is no ELF file). */
int lib_probes_count_in(const char *exe);

/* Create the events for the functions @exe defines and open them on
 * @pid (stopped before its exec of @exe, or running it) on every CPU.
 * Returns 0 with *out set; 0 with *out NULL when @exe defines none;
 * -errno with @why set (not root, no tracefs, an event refused). */
int lib_probes_open(struct lib_probes **out, const char *exe, pid_t pid, char *why, size_t whylen);

/* Move the hits into @db's TEMP table lib_hit_raw. Returns 0 or -errno
 * (an SQLite failure: -EIO). */
int lib_probes_drain(struct lib_probes *lp, sqlite3 *db);

struct libflops_region;
/* After the last drain and once the step and phase rows are written: pair
 * the hits into calls and add them to the steps, phases and lib_call
 * rows of the processes that ran the executable (@pid and any that made a
 * call). A step from probes of a process in which the counting library
 * (@lf, may be NULL) counted calls stays unknown: no marker read those.
 * @note gets one line for the note table. Returns 0 or -EIO. */
int lib_probes_finish(struct lib_probes *lp, sqlite3 *db, pid_t pid, const struct libflops_region *lf,
		      char *note, size_t notelen);

/* After lib_probes_finish() and once the counting library's whole-run
 * totals are stored (run.lib_*, run_lib_call, lib_reading): add the
 * executable's calls to them, each reading getting the calls made up to
 * its time, so the readings still end at the run's totals. Returns 0 or
 * -EIO. */
int lib_probes_add_run(struct lib_probes *lp, sqlite3 *db);

/* Close the events and remove them from tracefs. Accepts NULL. */
void lib_probes_free(struct lib_probes *lp);

#endif
