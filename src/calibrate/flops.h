/*
 * FLOP/s measurement: FMA loops (and SSE2 multiply + add loops) per ISA and
 * dtype, dispatched only to kernels that this build has and that the CPU and
 * the OS support, run on the workers of a team.
 */
#ifndef MFU_CALIBRATE_FLOPS_H
#define MFU_CALIBRATE_FLOPS_H

#include <stdint.h>

#include "kernels.h"
#include "machine.h"
#include "team.h"

struct flops_kernel {
	const char *name;          /* "avx512_fma", "avx2_fma", "sse_mul_add", ... */
	enum machine_dtype dtype;
	unsigned isa;              /* MACHINE_ISA_* bits it needs, all of them */
	double flops_per_iter;     /* exact: chains x lanes x FLOPs per lane and operation */
	const char *basis;         /* how flops_per_iter comes about */
	flops_kernel_fn run;
};

#define FLOPS_MAX_KERNELS 16

/* Ask Linux for the AMX tile state (arch_prctl ARCH_REQ_XCOMP_PERM,
 * XTILEDATA) for this process. Returns 0 or -errno; flops_kernels() leaves
 * the AMX kernels out when it fails. */
int flops_amx_permit(void);

/* The kernels usable with the ISA features @isa (machine.isa) and, for
 * AMX, permitted by the kernel, fastest ISA first within each dtype, at
 * most @max. Returns how many. */
int flops_kernels(unsigned isa, const struct flops_kernel **out, int max);

/* Iterations of @k for one repetition of about @seconds on worker 0 of @t
 * (found by doubling from a short run). Returns 0 or -errno. */
int flops_iterations(const struct flops_kernel *k, struct team *t, double seconds, uint64_t *iters);

struct flops_result {
	double flops;           /* the best FLOP/s of the team */
	double seconds;         /* that repetition's wall time */
	double cpu_share;       /* and its team_timing.cpu_share */
	int reps;               /* repetitions run */
	double clock_hz;        /* one worker: the highest core clock measured right
				 * before and after the repetitions (after
				 * flops_clock_hz()); else 0 */
};

/* Run @k for @iters iterations on every worker of @t at once, @reps times,
 * and up to @reps more while the best repetition was disturbed (another
 * task shared a CPU): the best is all workers' FLOPs / the wall time until
 * the slowest finished. */
int flops_measure(const struct flops_kernel *k, struct team *t, uint64_t iters, int reps,
		  struct flops_result *out);

/* The core clock of the one worker of @t in Hz, from a chain of dependent
 * integer adds (one per cycle on every x86 core of the last twenty years),
 * best of @reps runs of about @seconds: what turbo or a hypervisor really
 * gives, to compare with the nominal frequency the spec peak uses. Also
 * makes flops_measure() on a one-worker team measure the clock around each
 * repetition. -ENOTSUP off x86. */
int flops_clock_hz(struct team *t, double seconds, int reps, double *hz);

#endif
