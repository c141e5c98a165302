/* mfu_phase_stats: the per-name totals and percentiles of the phases section,
 * computed in C.
 *
 * analyses/phases.sql defines them in SQL (its CTE g), which is what a user
 * runs in sqlite3; in SQLite 3.40 that costs a GROUP BY sort and a window
 * sort of every phase row (about 5 s per million occurrences on a 2 GHz
 * core). This table gives the same rows from one scan of the phase table in
 * rowid order, a hash of the names and an exact selection (quickselect) of
 * the two ranks: the nearest-rank percentiles stay exact observed values.
 * mfu-report runs phases.sql with that CTE replaced by this table (the
 * "-- @computed:" block, see analysis.h). */
#ifndef MFU_REPORT_PHASE_STATS_H
#define MFU_REPORT_PHASE_STATS_H

#include <sqlite3.h>
#include <stddef.h>

/* Register the eponymous virtual table mfu_phase_stats on @db. It has one
 * row per phase name over the counted occurrences (complete, and not in a
 * step that never ended), in the order of their first id, with the columns
 * of phases.sql's g: name, n, first_id, total_ns, model_flops,
 * model_flops_ns, hw_flops, hw_flops_ns, model_bytes, model_bytes_ns,
 * cpu_ns, dram_bytes, dram_ns, model_flops, lib_flops, nd, nl, step_ns
 * (sums as SQL's SUM() gives them: integer or real, NULL when no value),
 * p50_ns, p95_ns (nanoseconds), the unions and n_flops, n_hw, n_both: view
 * phase_sums of analyses/views.sql. Nothing is
 * written to the database. Returns 0 or -EIO. */
int phase_stats_register(sqlite3 *db);

/* Rearrange @v[0..n) so that v[k] is the value a sort would put there, with
 * every value before it <= v[k] and every value after it >= v[k]. O(n)
 * expected, O(n log n) at worst. @k < @n. */
void phase_stats_select(double *v, size_t n, size_t k);

#endif
