/*
 * The results of the last step, for the program itself (mfu_last_step()):
 * its wall time, FLOPs and their source, MFU and MBU against a peak.
 *
 * marker.c tells this module of every step boundary it handles (the begin,
 * the model declarations, the end) with the time and the library-call
 * counts it stamped into the marker record, so that under mfu-record a
 * step's figures are computed from exactly the numbers the recorder
 * stores, and with the peaks the recorder chose (handed over in the
 * environment at exec: MFU_RECORD_PEAK_*). Without a recorder it only
 * hears of steps in the in-process mode (mfu_enable()), and takes the
 * times itself.
 */
#ifndef MFU_LIB_STEP_RESULT_H
#define MFU_LIB_STEP_RESULT_H

#include <stdint.h>

/* The recorder's peaks, in the target's environment (set by mfu-record at
 * exec): FLOP/s for the run's dtype and bytes/s, as "%.17g" (exact
 * doubles), each with the text of its source; absent: unknown. */
#define MFU_ENV_RECORD_PEAK_FLOPS "MFU_RECORD_PEAK_FLOPS"
#define MFU_ENV_RECORD_PEAK_FLOPS_SOURCE "MFU_RECORD_PEAK_FLOPS_SOURCE"
#define MFU_ENV_RECORD_PEAK_BW "MFU_RECORD_PEAK_BW"
#define MFU_ENV_RECORD_PEAK_BW_SOURCE "MFU_RECORD_PEAK_BW_SOURCE"
#define MFU_ENV_RECORD_DTYPE "MFU_RECORD_DTYPE"
/* The in-process mode from the start (any value but "" and "0"), with
 * the user's peaks, if any. */
#define MFU_ENV_INPROCESS "MFU_INPROCESS"
#define MFU_ENV_PEAK_FLOPS "MFU_PEAK_FLOPS"
#define MFU_ENV_PEAK_BW "MFU_PEAK_BW"

/* Called once by libmfu's constructor: @recorded is 1 when the process
 * writes into a ring mfu-record made for it at launch (its peaks are in the
 * environment), @emulated when it runs under mfu-record --emulate (no
 * results: the emulator would count their arithmetic, and its times are
 * Valgrind's). Returns 1 when the in-process mode is asked for by the
 * environment (MFU_INPROCESS). */
int step_result_init(int recorded, int emulated);

/* A step boundary (MRING_STEP_BEGIN, _END or _MODEL) at @time_ns
 * (CLOCK_MONOTONIC), with the model values @a, @b of a declaration, and
 * the process's library-call counts @lib (MRING_LIB_WORDS words), NULL
 * when they are not counted. @pid: the process (a forked child's steps
 * are its own). */
void step_result_mark(uint8_t kind, uint64_t time_ns, double a, double b, const uint64_t *lib, int32_t pid);

/* Nonzero while the in-process mode is on. */
int step_result_inprocess(void);

#endif
