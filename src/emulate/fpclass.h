/*
 * Which FP_ARITH_INST_RETIRED count one x86-64 instruction makes, decided
 * from its bytes alone (fpclass_decode()).
 *
 * The tool classifies guest instructions by their encoding, not by the VEX
 * IR they are translated into: VEX optimises a superblock (common
 * subexpressions, dead code) before a tool sees it, so an instruction whose
 * result is overwritten, or that repeats an earlier one, can have no IR op
 * left, while the hardware still retires it. The encoding also gives
 * Intel's classes directly (a horizontal add counts once, a DPPS twice),
 * whatever VEX lowers them to.
 *
 * Plain C with no library call: it is compiled into the Valgrind tool
 * (which has no libc) and into a native unit test (tests/unit/test_fpclass.c).
 */
#ifndef MFU_FPCLASS_H
#define MFU_FPCLASS_H

#include <stdint.h>

enum fpclass_kind {
	FPCLASS_NONE = 0,  /* not counted: no FP arithmetic, or not decoded */
	FPCLASS_SIMD = 1,  /* an SSE/AVX/FMA instruction: FP_ARITH counts */
	FPCLASS_X87 = 2,   /* x87 arithmetic: counted apart (x87_ops) */
};

struct fpclass {
	uint8_t kind;   /* enum fpclass_kind */
	uint8_t prec;   /* enum mfu_emu_prec (FPCLASS_SIMD only) */
	uint8_t width;  /* enum mfu_emu_width (FPCLASS_SIMD only) */
	uint8_t count;  /* counts the instruction makes: 2 for FMA and DPP, else 1 */
};

/* Classify the 64-bit-mode instruction whose @len bytes are at @code.
 * Fills @out (all zero for FPCLASS_NONE) and returns its kind. Reads no
 * byte past @len; a truncated or unknown encoding is FPCLASS_NONE. */
int fpclass_decode(const uint8_t *code, unsigned len, struct fpclass *out);

#endif
