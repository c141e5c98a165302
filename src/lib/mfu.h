/*
 * mfu.h: step and phase markers for mfu-record.
 *
 * Link with libmfu (`pkg-config --cflags --libs mfu`). Every function is
 * thread-safe and costs a few nanoseconds when the program is not running
 * under mfu-record. Under the recorder, each boundary reads the recorder's
 * counter group once and appends one fixed-size record to a shared ring.
 * Misuse (an end without a begin, a step left open at exit, unbalanced
 * phases) is recorded as an anomaly; these functions never print, abort or
 * exit. Each marker is also a USDT probe (provider "mfu") for perf/bpftrace.
 */
#ifndef MFU_H
#define MFU_H

#ifdef __cplusplus
extern "C" {
#endif

/* Begin a step (one iteration of the program's main loop). Steps belong to
 * the process: a step begun in one thread may be ended in another. */
void mfu_step_begin(void);

/* End the step begun by the last mfu_step_begin(). */
void mfu_step_end(void);

/* Declare the model FLOPs (floating-point operations the algorithm needs)
 * and model bytes (bytes it must move) of the current step. Calls within
 * one step add up. Pass NAN (from <math.h>) for a value you do not know:
 * mfu_step_model(flops, NAN) declares FLOPs only, and the step's bytes (and
 * so its MBU) stay unknown, never 0. A negative or infinite value is an
 * anomaly. */
void mfu_step_model(double flops, double bytes);

/* Begin a phase called @name (e.g. "forward") in the calling thread. Phases
 * nest per thread. @name is copied; at most 63 bytes are kept
 * (a longer name is truncated and recorded as an anomaly). */
void mfu_phase_begin(const char *name);

/* End the innermost open phase called @name in the calling thread (NULL
 * ends the innermost phase, whatever its name). */
void mfu_phase_end(const char *name);

/* Extension: declare the model FLOPs and bytes of the calling thread's
 * innermost open phase (for phase MFU/MBU). Calls within one phase add up;
 * NAN means unknown, as for mfu_step_model(). */
void mfu_phase_model(double flops, double bytes);

/* Extension: nonzero when the process is being recorded by mfu-record. */
int mfu_recording(void);

#ifdef __cplusplus
}
#endif

#endif /* MFU_H */
