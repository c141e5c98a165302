/* mfu_step_totals(...): an SQL aggregate that makes, in one call per step,
 * the sums and counts over the complete steps that view step_sums
 * (analyses/views.sql) computes with some forty SQL aggregates and a sort:
 * 0.6 s of a million steps for a third of them, against about 0.15 s.
 * Its value is a JSON object whose keys are that view's column names, each
 * with SQLite's own meaning (SUM: NULL over no value, an integer when every
 * value is one; AVG, MIN, MAX, COUNT). A sum past 64 bits, where SUM()
 * fails with "integer overflow", has that text as its value, and
 * mfu_checked(value) fails the same way when a query reads it: a section
 * fails only on the sums it reads. The "-- @computed:" block of step_sums
 * reads the object; its plain SQL, which sqlite3 runs, computes the same.
 *
 * The arguments, in order: wall_ns, lib_flops, model_flops, model_bytes,
 * hw_flops, hw_flops_fp64, hw_flops_fp32, hw_flops_fp16, cpu_ns,
 * dram_total_bytes, begin_ns, end_ns (the step view's columns), peak_flops,
 * peak_bw (mfu_peak's), lib_flops_fp64, lib_flops_fp32, lib_flops_bf16,
 * lib_flops_fp16, lib_ops_int8, complete. flops and flops_source (virtual
 * columns, which SQLite computes again at each mention) and the view's mfu,
 * hfu and mbu are made here from them as the schema and the view make
 * them: as arguments they cost 0.2 s a million steps more. A step whose
 * complete is not 1 is only counted (key incomplete); p50_ns and p95_ns are
 * the nearest-rank percentiles of the complete steps' integer wall_ns.
 *
 * mfu_step_totals_keep(...), the same aggregate, also keeps its value on
 * the connection, which mfu_step_totals_kept() returns (NULL before the
 * first): step_sums makes the totals once per connection, and the summary
 * and the notes read the one result. */
#ifndef MFU_REPORT_STEP_TOTALS_H
#define MFU_REPORT_STEP_TOTALS_H

#include <sqlite3.h>

/* Register mfu_step_totals, mfu_step_totals_keep, mfu_step_totals_kept and
 * mfu_checked on @db. Returns an SQLite result code. */
int step_totals_register(sqlite3 *db);

#endif
