/* The summary for people: the table and markdown form of the summary
 * section (csv and json print its row as it is, every column).
 *
 * Grouped as perf stat groups its lines: result (steps, wall time, MFU,
 * HFU and MBU beside the peak each used), where the time went (the
 * breakdown's verdict), work (FLOPs and bytes by source), machine (CPUs,
 * cores, clock, each peak's source once), run health (lost records,
 * anomalies, exit); then one line for what is unknown on this run and why,
 * and the notes the lines above do not already say. A figure that is
 * unknown has no line of its own; every line is shorter than
 * SUMMARY_TEXT_WIDTH columns (long text wraps; a peak's source is cut to
 * two lines, its whole text in the peaks section and in json).
 *
 * mfu-report's summary and the recap mfu-record prints at exit are this
 * one function on the same views, so they are the same bytes. */
#ifndef MFU_REPORT_SUMMARY_TEXT_H
#define MFU_REPORT_SUMMARY_TEXT_H

#include "format.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>

/* The widest line written, in columns (characters), the newline not
 * counted. */
#define SUMMARY_TEXT_WIDTH FORMAT_TEXT_WIDTH

/* The breakdown verdict runs at most this many SQLite virtual-machine
 * instructions (in thousands): a count, not a time, so that the same
 * database gives the same text on every call (the recap and mfu-report
 * agree byte for byte). About 50 ms on a 2024 core, enough for a run of
 * 20,000 steps with a few samples each; a run past it gets a line saying
 * where the verdict is. */
#define SUMMARY_VERDICT_KOPS 10000u

/* 1 if @stmt (prepared, not stepped) is a run's summary section
 * (analyses/summary.sql), which summary_text_write() knows how to show; 0
 * for another one-row section (a job's summary). */
int summary_text_handles(sqlite3_stmt *stmt);

/* Write the summary of the run behind @stmt (analyses/summary.sql,
 * prepared on a connection opened by runview_open) to @out, as the table
 * format (@markdown 0) or markdown (1); @title_gap: a blank line first
 * (a section came before). Runs the breakdown verdict and the notes on the
 * same connection. Returns 0; -EIO with SQLite's message in @err; -ENOMEM;
 * -errno of a failed write. */
int summary_text_write(FILE *out, int markdown, int title_gap, sqlite3_stmt *stmt, char *err, size_t errlen);

#endif
