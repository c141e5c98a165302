/*
 * The live line: while mfu-record runs on a terminal, one status line on
 * stderr, redrawn about once a second: the time since the start, the steps
 * so far, the last and the median step time, the running MFU (and HFU and
 * MBU when known) and the lost marker records. When the target has ended,
 * the same line names the end-of-run stage in progress (symbols, indexes)
 * and how long the end has taken so far. The line lives in the terminal's
 * last row, outside the scrolling region (as apt's progress does), so that
 * the program's own output scrolls above it; where the terminal's size is
 * unknown it is redrawn in place instead. Not on a terminal (CI, a
 * pipe, a file) or with --quiet, it prints nothing.
 */
#ifndef MFU_RECORD_LIVE_H
#define MFU_RECORD_LIVE_H

#include <stdint.h>
#include <stdio.h>

#include "record/markers/markers.h"

struct live;

/* A live line on @out when @enabled and @out is a terminal; otherwise a
 * struct that does nothing. @start_ns is the recording's start
 * (CLOCK_MONOTONIC). Returns NULL only when out of memory. */
struct live *live_new(FILE *out, int enabled, uint64_t start_ns);
void live_free(struct live *l);

/* 1 when it draws. */
int live_active(const struct live *l);

/* A step ended (the markers' sink): its time and counts. */
void live_step(struct live *l, const struct interval_row *row);

/* Redraw when a second has passed since the last time: @peak_flops and
 * @peak_bw are the peaks in use (0: unknown), @lost the marker records lost
 * so far. */
void live_tick(struct live *l, uint64_t now_ns, double peak_flops, double peak_bw, uint64_t lost);

/* The whole run's library FLOPs so far (lib_counts.h), shown while no step
 * has ended: with the run's MFU so far. */
void live_lib(struct live *l, double flops);

/* The end of the recording is at @what (e.g. "symbolizing the samples"). */
void live_stage(struct live *l, const char *what);

/* Before anything else is printed on the terminal: the line drawn in
 * place is erased (one in its own status row stays). */
void live_clear(struct live *l);

/* Erase the line and give the status row back (live_free() does it too). */
void live_end(struct live *l);

#endif
