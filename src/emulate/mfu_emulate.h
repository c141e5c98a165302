/*
 * The FP-op counting emulator's interface: what the Valgrind tool `mfufp`
 * (src/emulate/) hands to libmfu through Valgrind's client-request
 * mechanism, and what mfu-record turns into the hw_flops_* columns.
 *
 * The counts follow FP_ARITH_INST_RETIRED's semantics: one count per
 * computational floating-point instruction of a given precision and vector
 * width (add, sub, mul, div, sqrt, min, max, rcp/rsqrt approximations, and
 * FMA, which counts twice); loads, stores, moves, compares, conversions,
 * shuffles and logic are not counted. FLOPs = count x lanes, where lanes =
 * width bits / precision bits (1 for scalar). x87 arithmetic is not in
 * FP_ARITH; it is counted apart, in x87_ops (one per operation).
 *
 * A process's counts cover all its threads, plus the counts of its
 * descendant processes that have exited (as perf's inherited counters do:
 * a child's counts are added to its parent's when it exits).
 *
 * Outside the tool (a native run, or another Valgrind tool) the request
 * returns 0 and leaves the struct alone: the call costs a few instructions.
 */
#ifndef MFU_EMULATE_H
#define MFU_EMULATE_H

#include <stdint.h>

#define MFU_EMU_TOOL "mfufp"   /* valgrind --tool=mfufp */
#define MFU_EMU_VERSION 1

enum mfu_emu_prec {
	MFU_EMU_FP64 = 0,
	MFU_EMU_FP32 = 1,
	MFU_EMU_FP16 = 2,
	MFU_EMU_BF16 = 3,
	MFU_EMU_NPREC = 4,
};

enum mfu_emu_width {
	MFU_EMU_SCALAR = 0,
	MFU_EMU_V128 = 1,
	MFU_EMU_V256 = 2,
	MFU_EMU_V512 = 3,
	MFU_EMU_NWIDTH = 4,
};

struct mfu_emu_counts {
	uint32_t version;      /* MFU_EMU_VERSION, set by the tool */
	uint32_t size;         /* sizeof(struct mfu_emu_counts), set by the caller */
	uint64_t inst[MFU_EMU_NPREC][MFU_EMU_NWIDTH]; /* FP_ARITH-style counts */
	uint64_t x87_ops;      /* x87 arithmetic operations (not FP_ARITH) */
	uint64_t guest_insns;  /* guest instructions executed (all kinds) */
	uint64_t threads;      /* threads this process has run, exited ones included */
	uint64_t children;     /* exited descendant processes folded in */
	uint64_t reserved[4];
};

/* Lanes of one count of precision @p at width @w. */
static inline unsigned mfu_emu_lanes(int p, int w)
{
	static const unsigned bits[MFU_EMU_NPREC] = { 64, 32, 16, 16 };
	static const unsigned wbits[MFU_EMU_NWIDTH] = { 0, 128, 256, 512 };
	return w == MFU_EMU_SCALAR ? 1 : wbits[w] / bits[p];
}

/* Client request codes: Valgrind's VG_USERREQ_TOOL_BASE('M', 'F') + n,
 * spelled out so that this header needs no Valgrind header. */
#define MFU_EMU_REQ_BASE (((unsigned)'M' & 0xff) << 24 | ((unsigned)'F' & 0xff) << 16)
/* arg1: struct mfu_emu_counts * (size set). Fills it with the calling
 * process's counts so far; returns 1. Returns 0 outside the tool. */
#define MFU_EMU_REQ_READ (MFU_EMU_REQ_BASE + 1)

#endif
