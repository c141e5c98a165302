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
 * The manual page is mfu(3).
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

/* Extension: nonzero while the process is being recorded by mfu-record:
 * started by it, or joined by mfu-record -p (then from the moment it
 * joined until it leaves). */
int mfu_recording(void);

/* Extension: the results of the last step, for the program itself.
 *
 * After mfu_step_end(), mfu_last_step() gives that step's wall time, the
 * FLOPs that are its MFU numerator (declared with mfu_step_model(), else
 * those of its BLAS/oneDNN calls) and its MFU and MBU. Under mfu-record
 * they are the recorder's figures (its peaks, its library-call counts, the
 * times in its database: mfu-report's per-step MFU of the same step).
 * Without a recorder the steps are measured only in the in-process mode
 * (mfu_enable(), or MFU_INPROCESS=1 in the environment): libmfu times them
 * itself and divides by the peak it was given, never one it made up.
 *
 *   struct mfu_step_result r = { .size = sizeof(r) };
 *   mfu_step_end();
 *   if (mfu_last_step(&r) == 0 && !isnan(r.mfu))
 *           printf("step %llu: MFU %.1f%%\n", r.step, 100 * r.mfu);
 *
 * The struct grows at its end only; @size says how much of it the caller
 * has, and only that much is written. */
#define MFU_FLOPS_UNKNOWN 0  /* no FLOPs known: MFU unknown */
#define MFU_FLOPS_DECLARED 1 /* mfu_step_model() */
#define MFU_FLOPS_LIBRARY 2  /* the step's BLAS/oneDNN calls (under mfu-record) */
#define MFU_MEASURED_RECORDER 1 /* mfu-record's peaks and counts */
#define MFU_MEASURED_INPROCESS 2 /* the in-process mode's */

struct mfu_step_result {
	unsigned size;             /* in: sizeof(struct mfu_step_result) */
	unsigned flops_source;     /* MFU_FLOPS_* */
	unsigned measured_by;      /* MFU_MEASURED_* */
	unsigned reserved;
	unsigned long long step;   /* its number: steps begun before it while measured (from 0,
				    * as mfu-report numbers the steps of a program recorded
				    * from its start) */
	unsigned long long wall_ns; /* the step's wall time, ns */
	double flops;              /* the MFU numerator; NAN: unknown */
	double model_flops;        /* declared; NAN: none declared */
	double model_bytes;        /* declared; NAN: none declared */
	double lib_flops;          /* the step's library calls; NAN: not counted */
	double flops_per_s;        /* flops / wall time; NAN: unknown */
	double mfu;                /* flops / (wall time x peak_flops), a fraction; NAN: unknown */
	double mbu;                /* model_bytes / (wall time x peak_bw); NAN: unknown */
	double peak_flops;         /* FLOP/s; NAN: none */
	double peak_bw;            /* bytes/s; NAN: none */
	const char *peak_source;   /* where peak_flops comes from; NULL: none */
	const char *dtype;         /* the peak's dtype (e.g. "fp32"); NULL: not said */
	const char *why;           /* why mfu is NAN (no peak, no FLOPs); NULL when known */
};

/* Fill @r (r->size bytes of it) with the results of the last step this
 * process ended. Returns 0; -EINVAL when @r is NULL or r->size is below
 * the struct's first version; -ENOTSUP when steps are not measured (not
 * recorded, in-process mode off; or mfu-record --emulate, whose times are
 * Valgrind's); -ENODATA when no step has ended since
 * they are. The strings stay valid until the process exits. */
int mfu_last_step(struct mfu_step_result *r);

/* Switch the in-process mode on: steps are timed by libmfu itself and
 * mfu_last_step() has their results without a recorder. @peak_flops
 * (FLOP/s) and @peak_bw (bytes/s) are the peaks to divide by, NAN (or 0)
 * for unknown: MFU or MBU are then NAN, with a reason; @peak_source says
 * where they come from (copied; NULL: "given by the program"). Under
 * mfu-record the recorder's peaks are used instead. A marker then costs
 * a clock read and a lock more than the no-op. Returns 0. */
int mfu_enable(double peak_flops, double peak_bw, const char *peak_source);

/* Switch the in-process mode off: the markers are no-ops again (unless
 * recorded). */
void mfu_disable(void);

/* FLOP-count helpers for mfu_step_model() and mfu_phase_model(): model
 * FLOPs of common operations, a multiply-add counting 2 (the convention of
 * every peak). Doubles: exact up to 2^53, and no integer overflow.
 *
 *   mfu_phase_begin("attention");
 *   mfu_phase_model(mfu_flops_attention(b, h, s, s, d), NAN);
 *   ...
 *   mfu_phase_end("attention");
 *
 * Under mfu-record the FLOPs of BLAS and oneDNN calls are also counted
 * without any declaration (lib_flops; docs/flops.md). */

/* C[m x n] += A[m x k] B[k x n]: 2mnk (complex: 4 times that). */
static inline double mfu_flops_gemm(double m, double n, double k)
{
	return 2.0 * m * n * k;
}

/* y[m] += A[m x n] x[n]: 2mn. */
static inline double mfu_flops_gemv(double m, double n)
{
	return 2.0 * m * n;
}

/* A 2-D convolution, forward: 2 x batch x out_c x out_h x out_w x in_c /
 * groups x k_h x k_w. */
static inline double mfu_flops_conv2d(double batch, double in_c, double out_c, double out_h, double out_w,
				      double k_h, double k_w, double groups)
{
	return 2.0 * batch * out_c * out_h * out_w * (in_c / groups) * k_h * k_w;
}

/* Attention scores and their weighted sum (Q K^T, then P V), forward:
 * 4 x batch x heads x q_len x kv_len x head_dim; halve it for a causal
 * mask over a square q_len = kv_len. */
static inline double mfu_flops_attention(double batch, double heads, double q_len, double kv_len,
					 double head_dim)
{
	return 4.0 * batch * heads * q_len * kv_len * head_dim;
}

/* A dense model's training step over @tokens tokens: 6 FLOPs per parameter
 * and token (2 forward, 4 backward), attention not included. */
static inline double mfu_flops_train(double params, double tokens)
{
	return 6.0 * params * tokens;
}

#ifdef __cplusplus
}
#endif

#endif /* MFU_H */
