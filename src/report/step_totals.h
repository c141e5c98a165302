/* mfu_step_totals(...): an SQL aggregate that makes, in one call per step,
 * the sums and counts over the steps that the summary (its agg) and the
 * notes (their s) compute with some thirty SQL aggregates each: 0.6 s of a
 * million steps each, against about 0.15 s. Its value is a JSON object
 * whose keys are those aggregates' column names, each with SQLite's own
 * meaning (SUM: NULL over no value, an integer when every value is one,
 * "integer overflow" past 64 bits; AVG, MIN, MAX, COUNT). The @computed
 * blocks of analyses/summary.sql and analyses/notes.sql read it; their
 * plain SQL, which sqlite3 runs, computes the same with SQL aggregates.
 *
 * The arguments, in order: wall_ns, flops, flops_source, lib_flops,
 * model_flops, model_bytes, hw_flops, hw_flops_fp64, hw_flops_fp32,
 * hw_flops_fp16, cpu_ns, dram_total_bytes, begin_ns, end_ns, mfu, hfu,
 * mbu, lib_flops_fp64, lib_flops_fp32, lib_flops_bf16, lib_flops_fp16,
 * lib_ops_int8, complete (the step view's columns). A step whose complete
 * is not 1 is only counted (key incomplete); p50_ns and p95_ns are the
 * nearest-rank percentiles of the complete steps' integer wall_ns.
 *
 * mfu_step_totals_keep(...), the same aggregate, also keeps its value on
 * the connection, which mfu_step_totals_kept() returns (NULL before the
 * first): the summary keeps its totals, over every argument, and the
 * notes read theirs from them instead of scanning the steps again. */
#ifndef MFU_REPORT_STEP_TOTALS_H
#define MFU_REPORT_STEP_TOTALS_H

#include <sqlite3.h>

/* Register mfu_step_totals, mfu_step_totals_keep and mfu_step_totals_kept
 * on @db. Returns an SQLite result code. */
int step_totals_register(sqlite3 *db);

#endif
