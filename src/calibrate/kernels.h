/*
 * The measurement kernels, one set per ISA, each set in its own file built
 * with that ISA's -m flags (meson static_library per ISA). Nothing here may
 * be called before flops.c / stream.c have checked that the CPU and the OS
 * support the ISA: the compiler is free to use it anywhere in those files.
 */
#ifndef MFU_CALIBRATE_KERNELS_H
#define MFU_CALIBRATE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* Independent accumulator chains per FLOP kernel: enough to cover FMA
 * latency x throughput (4 cycles x 2 FMA ports = 8 on Intel cores since
 * Skylake, 4 x 2 on Zen), with room to spare, and few enough to stay in
 * registers with SSE/AVX2's 16 vector registers (12 + 2 constants). */
#define FLOPS_CHAINS 12

/* A FLOP kernel: @iters iterations of FLOPS_CHAINS independent operations
 * on @x and @y (0.999 and 0.001: the chains converge to 1, so no value
 * overflows or turns denormal however long it runs). The result only keeps
 * the compiler from dropping the work. */
typedef double (*flops_kernel_fn)(uint64_t iters, double x, double y);

double flops_sse2_fp64(uint64_t iters, double x, double y);
double flops_sse2_fp32(uint64_t iters, double x, double y);
double flops_avx2_fp64(uint64_t iters, double x, double y);
double flops_avx2_fp32(uint64_t iters, double x, double y);
double flops_avx512_fp64(uint64_t iters, double x, double y);
double flops_avx512_fp32(uint64_t iters, double x, double y);
double flops_avx512_bf16(uint64_t iters, double x, double y);
double flops_avx512_fp16(uint64_t iters, double x, double y);
/* Integer (int8) kernels: the result counts ops, not FLOPs. */
double flops_avx512_vnni(uint64_t iters, double x, double y);
double flops_avx_vnni(uint64_t iters, double x, double y);
/* AMX: 4 tile dot products per iteration; tile state must be permitted
 * first (flops_amx_permit() in flops.c). */
double flops_amx_bf16(uint64_t iters, double x, double y);
double flops_amx_int8(uint64_t iters, double x, double y);

/* Memory kernels over @n doubles (a multiple of STREAM_ALIGN_DOUBLES),
 * 64-byte aligned. *_nt use non-temporal stores. */
#define STREAM_ALIGN_DOUBLES 64

struct stream_kernels {
	const char *isa;        /* "avx512", "avx2", "sse2" */
	double (*read)(const double *x, size_t n);
	void (*copy)(double *dst, const double *src, size_t n);
	void (*copy_nt)(double *dst, const double *src, size_t n);
	void (*triad)(double *a, const double *b, const double *c, double s, size_t n);
	void (*triad_nt)(double *a, const double *b, const double *c, double s, size_t n);
};

extern const struct stream_kernels stream_sse2_kernels;
extern const struct stream_kernels stream_avx2_kernels;
extern const struct stream_kernels stream_avx512_kernels;

#endif
