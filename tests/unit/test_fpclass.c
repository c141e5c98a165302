/* The emulator's pieces that run natively: the instruction classifier
 * (src/emulate/fpclass.c) on encodings assembled by GNU as, one table row
 * per instruction with its source line, plus truncated encodings and
 * prefixes; and the layouts that cross a process boundary (the client
 * request's struct mfu_emu_counts and the --mfu-dir record), pinned. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "emulate/emu_record.h"
#include "emulate/fpclass.h"
#include "emulate/mfu_emulate.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define HAVE_VALGRIND_H 1
#endif
#endif

struct row {
	int line;
	const char *insn;
	uint8_t bytes[16];
	unsigned len;
	int kind, prec, width, count;
};

/* Bytes from `as --64` and `objdump -d` of each instruction. Expected:
 * Intel's FP_ARITH_INST_RETIRED classes (HADD/HSUB/ADDSUB once, DPP and
 * FMA twice), x87 arithmetic apart, nothing for the rest; EVEX (AVX-512)
 * is not decoded, as Valgrind does not run it. */
static const struct row rows[] = {
	{ __LINE__, "addsd %xmm1, %xmm0", { 0xf2, 0x0f, 0x58, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_SCALAR, 1 },
	{ __LINE__, "addsd %xmm9, %xmm8", { 0xf2, 0x45, 0x0f, 0x58, 0xc1 }, 5, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_SCALAR, 1 },
	{ __LINE__, "addsd 8(%rax,%rbx,4), %xmm15", { 0xf2, 0x44, 0x0f, 0x58, 0x7c, 0x98, 0x08 }, 7, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_SCALAR, 1 },
	{ __LINE__, "addss %xmm1, %xmm0", { 0xf3, 0x0f, 0x58, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_SCALAR, 1 },
	{ __LINE__, "addpd %xmm1, %xmm0", { 0x66, 0x0f, 0x58, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_V128, 1 },
	{ __LINE__, "addps %xmm1, %xmm0", { 0x0f, 0x58, 0xc1 }, 3, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_V128, 1 },
	{ __LINE__, "mulsd %xmm1, %xmm0", { 0xf2, 0x0f, 0x59, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_SCALAR, 1 },
	{ __LINE__, "subps (%rdi), %xmm3", { 0x0f, 0x5c, 0x1f }, 3, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_V128, 1 },
	{ __LINE__, "divsd %xmm1, %xmm0", { 0xf2, 0x0f, 0x5e, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_SCALAR, 1 },
	{ __LINE__, "divps %xmm1, %xmm0", { 0x0f, 0x5e, 0xc1 }, 3, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_V128, 1 },
	{ __LINE__, "sqrtpd %xmm1, %xmm0", { 0x66, 0x0f, 0x51, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_V128, 1 },
	{ __LINE__, "sqrtss %xmm1, %xmm0", { 0xf3, 0x0f, 0x51, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_SCALAR, 1 },
	{ __LINE__, "minpd %xmm1, %xmm0", { 0x66, 0x0f, 0x5d, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_V128, 1 },
	{ __LINE__, "maxss %xmm1, %xmm0", { 0xf3, 0x0f, 0x5f, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_SCALAR, 1 },
	{ __LINE__, "rcpps %xmm1, %xmm0", { 0x0f, 0x53, 0xc1 }, 3, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_V128, 1 },
	{ __LINE__, "rcpss %xmm1, %xmm0", { 0xf3, 0x0f, 0x53, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_SCALAR, 1 },
	{ __LINE__, "rsqrtps %xmm1, %xmm0", { 0x0f, 0x52, 0xc1 }, 3, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_V128, 1 },
	{ __LINE__, "rsqrtss %xmm1, %xmm0", { 0xf3, 0x0f, 0x52, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_SCALAR, 1 },
	{ __LINE__, "haddpd %xmm1, %xmm0", { 0x66, 0x0f, 0x7c, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_V128, 1 },
	{ __LINE__, "haddps %xmm1, %xmm0", { 0xf2, 0x0f, 0x7c, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_V128, 1 },
	{ __LINE__, "hsubpd %xmm1, %xmm0", { 0x66, 0x0f, 0x7d, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_V128, 1 },
	{ __LINE__, "hsubps %xmm1, %xmm0", { 0xf2, 0x0f, 0x7d, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_V128, 1 },
	{ __LINE__, "addsubpd %xmm1, %xmm0", { 0x66, 0x0f, 0xd0, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_V128, 1 },
	{ __LINE__, "addsubps %xmm1, %xmm0", { 0xf2, 0x0f, 0xd0, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_V128, 1 },
	{ __LINE__, "dpps $0xff, %xmm1, %xmm0", { 0x66, 0x0f, 0x3a, 0x40, 0xc1, 0xff }, 6, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_V128, 2 },
	{ __LINE__, "dppd $0x33, %xmm1, %xmm0", { 0x66, 0x0f, 0x3a, 0x41, 0xc1, 0x33 }, 6, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_V128, 2 },
	{ __LINE__, "vaddpd %xmm1, %xmm2, %xmm0", { 0xc5, 0xe9, 0x58, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_V128, 1 },
	{ __LINE__, "vaddpd %ymm1, %ymm2, %ymm0", { 0xc5, 0xed, 0x58, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_V256, 1 },
	{ __LINE__, "vaddps %ymm1, %ymm2, %ymm0", { 0xc5, 0xec, 0x58, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_V256, 1 },
	{ __LINE__, "vmulpd %ymm8, %ymm9, %ymm10", { 0xc4, 0x41, 0x35, 0x59, 0xd0 }, 5, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_V256, 1 },
	{ __LINE__, "vaddsd %xmm1, %xmm2, %xmm0", { 0xc5, 0xeb, 0x58, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_SCALAR, 1 },
	{ __LINE__, "vdivsd %xmm9, %xmm10, %xmm11", { 0xc4, 0x41, 0x2b, 0x5e, 0xd9 }, 5, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_SCALAR, 1 },
	{ __LINE__, "vsqrtps %ymm1, %ymm0", { 0xc5, 0xfc, 0x51, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_V256, 1 },
	{ __LINE__, "vrcpps %ymm1, %ymm0", { 0xc5, 0xfc, 0x53, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_V256, 1 },
	{ __LINE__, "vrsqrtss %xmm1, %xmm2, %xmm0", { 0xc5, 0xea, 0x52, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_SCALAR, 1 },
	{ __LINE__, "vhaddps %ymm1, %ymm2, %ymm0", { 0xc5, 0xef, 0x7c, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_V256, 1 },
	{ __LINE__, "vaddsubpd %ymm1, %ymm2, %ymm0", { 0xc5, 0xed, 0xd0, 0xc1 }, 4, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_V256, 1 },
	{ __LINE__, "vdpps $0xff, %ymm1, %ymm2, %ymm0", { 0xc4, 0xe3, 0x6d, 0x40, 0xc1, 0xff }, 6, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_V256, 2 },
	{ __LINE__, "vdppd $0x33, %xmm1, %xmm2, %xmm0", { 0xc4, 0xe3, 0x69, 0x41, 0xc1, 0x33 }, 6, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_V128, 2 },
	{ __LINE__, "vmaxpd 0x40(%rsp), %ymm2, %ymm0", { 0xc5, 0xed, 0x5f, 0x44, 0x24, 0x40 }, 6, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_V256, 1 },
	{ __LINE__, "vfmadd231pd %ymm1, %ymm2, %ymm0", { 0xc4, 0xe2, 0xed, 0xb8, 0xc1 }, 5, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_V256, 2 },
	{ __LINE__, "vfmadd231ps %ymm1, %ymm2, %ymm0", { 0xc4, 0xe2, 0x6d, 0xb8, 0xc1 }, 5, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_V256, 2 },
	{ __LINE__, "vfmadd132pd %xmm1, %xmm2, %xmm0", { 0xc4, 0xe2, 0xe9, 0x98, 0xc1 }, 5, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_V128, 2 },
	{ __LINE__, "vfmadd213ps %xmm1, %xmm2, %xmm0", { 0xc4, 0xe2, 0x69, 0xa8, 0xc1 }, 5, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_V128, 2 },
	{ __LINE__, "vfmadd231sd %xmm1, %xmm2, %xmm0", { 0xc4, 0xe2, 0xe9, 0xb9, 0xc1 }, 5, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_SCALAR, 2 },
	{ __LINE__, "vfmadd231ss %xmm1, %xmm2, %xmm0", { 0xc4, 0xe2, 0x69, 0xb9, 0xc1 }, 5, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_SCALAR, 2 },
	{ __LINE__, "vfmsub132sd %xmm1, %xmm2, %xmm0", { 0xc4, 0xe2, 0xe9, 0x9b, 0xc1 }, 5, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_SCALAR, 2 },
	{ __LINE__, "vfnmadd213ss %xmm1, %xmm2, %xmm0", { 0xc4, 0xe2, 0x69, 0xad, 0xc1 }, 5, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_SCALAR, 2 },
	{ __LINE__, "vfnmsub231sd %xmm1, %xmm2, %xmm0", { 0xc4, 0xe2, 0xe9, 0xbf, 0xc1 }, 5, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_SCALAR, 2 },
	{ __LINE__, "vfmsub231pd %ymm1, %ymm2, %ymm0", { 0xc4, 0xe2, 0xed, 0xba, 0xc1 }, 5, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_V256, 2 },
	{ __LINE__, "vfnmadd132ps %ymm1, %ymm2, %ymm0", { 0xc4, 0xe2, 0x6d, 0x9c, 0xc1 }, 5, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_V256, 2 },
	{ __LINE__, "vfnmsub213pd %ymm1, %ymm2, %ymm0", { 0xc4, 0xe2, 0xed, 0xae, 0xc1 }, 5, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_V256, 2 },
	{ __LINE__, "vfmaddsub132pd %ymm1, %ymm2, %ymm0", { 0xc4, 0xe2, 0xed, 0x96, 0xc1 }, 5, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_V256, 2 },
	{ __LINE__, "vfmsubadd231ps %xmm1, %xmm2, %xmm0", { 0xc4, 0xe2, 0x69, 0xb7, 0xc1 }, 5, FPCLASS_SIMD, MFU_EMU_FP32, MFU_EMU_V128, 2 },
	{ __LINE__, "vfmadd231pd (%rax), %ymm9, %ymm8", { 0xc4, 0x62, 0xb5, 0xb8, 0x00 }, 5, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_V256, 2 },
	{ __LINE__, "vfmadd231pd 0x20(%r12,%r13,8), %ymm14, %ymm15", { 0xc4, 0x02, 0x8d, 0xb8, 0x7c, 0xec, 0x20 }, 7, FPCLASS_SIMD, MFU_EMU_FP64, MFU_EMU_V256, 2 },
	{ __LINE__, "fadd %st(1), %st", { 0xd8, 0xc1 }, 2, FPCLASS_X87, 0, 0, 1 },
	{ __LINE__, "fadd %st, %st(1)", { 0xdc, 0xc1 }, 2, FPCLASS_X87, 0, 0, 1 },
	{ __LINE__, "faddp %st, %st(1)", { 0xde, 0xc1 }, 2, FPCLASS_X87, 0, 0, 1 },
	{ __LINE__, "fadds (%rax)", { 0xd8, 0x00 }, 2, FPCLASS_X87, 0, 0, 1 },
	{ __LINE__, "faddl (%rax)", { 0xdc, 0x00 }, 2, FPCLASS_X87, 0, 0, 1 },
	{ __LINE__, "fiaddl (%rax)", { 0xda, 0x00 }, 2, FPCLASS_X87, 0, 0, 1 },
	{ __LINE__, "fiadds (%rax)", { 0xde, 0x00 }, 2, FPCLASS_X87, 0, 0, 1 },
	{ __LINE__, "fmul %st(1), %st", { 0xd8, 0xc9 }, 2, FPCLASS_X87, 0, 0, 1 },
	{ __LINE__, "fmulp %st, %st(2)", { 0xde, 0xca }, 2, FPCLASS_X87, 0, 0, 1 },
	{ __LINE__, "fsub %st(1), %st", { 0xd8, 0xe1 }, 2, FPCLASS_X87, 0, 0, 1 },
	{ __LINE__, "fsubr %st(1), %st", { 0xd8, 0xe9 }, 2, FPCLASS_X87, 0, 0, 1 },
	{ __LINE__, "fsubrp %st, %st(1)", { 0xde, 0xe9 }, 2, FPCLASS_X87, 0, 0, 1 },
	{ __LINE__, "fdiv %st(1), %st", { 0xd8, 0xf1 }, 2, FPCLASS_X87, 0, 0, 1 },
	{ __LINE__, "fdivrl (%rax)", { 0xdc, 0x38 }, 2, FPCLASS_X87, 0, 0, 1 },
	{ __LINE__, "fidivrs (%rax)", { 0xde, 0x38 }, 2, FPCLASS_X87, 0, 0, 1 },
	{ __LINE__, "fsqrt", { 0xd9, 0xfa }, 2, FPCLASS_X87, 0, 0, 1 },
	{ __LINE__, "fcom %st(1)", { 0xd8, 0xd1 }, 2, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "fcomp %st(1)", { 0xd8, 0xd9 }, 2, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "fcompp", { 0xde, 0xd9 }, 2, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "fcoml (%rax)", { 0xdc, 0x10 }, 2, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "ficoml (%rax)", { 0xda, 0x10 }, 2, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "fucompp", { 0xda, 0xe9 }, 2, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "fcmovb %st(1), %st", { 0xda, 0xc1 }, 2, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "fld1", { 0xd9, 0xe8 }, 2, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "fldl (%rax)", { 0xdd, 0x00 }, 2, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "fstpl (%rax)", { 0xdd, 0x18 }, 2, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "fxch", { 0xd9, 0xc9 }, 2, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "fabs", { 0xd9, 0xe1 }, 2, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "fchs", { 0xd9, 0xe0 }, 2, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "fsin", { 0xd9, 0xfe }, 2, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "fscale", { 0xd9, 0xfd }, 2, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "fprem", { 0xd9, 0xf8 }, 2, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "fildl (%rax)", { 0xdb, 0x00 }, 2, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "movapd %xmm1, %xmm0", { 0x66, 0x0f, 0x28, 0xc1 }, 4, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "movsd (%rax), %xmm0", { 0xf2, 0x0f, 0x10, 0x00 }, 4, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "movss %xmm1, %xmm0", { 0xf3, 0x0f, 0x10, 0xc1 }, 4, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "andpd %xmm1, %xmm0", { 0x66, 0x0f, 0x54, 0xc1 }, 4, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "xorps %xmm1, %xmm1", { 0x0f, 0x57, 0xc9 }, 3, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "cmpltpd %xmm1, %xmm0", { 0x66, 0x0f, 0xc2, 0xc1, 0x01 }, 5, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "cmpsd $2, %xmm1, %xmm0", { 0xf2, 0x0f, 0xc2, 0xc1, 0x02 }, 5, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "ucomisd %xmm1, %xmm0", { 0x66, 0x0f, 0x2e, 0xc1 }, 4, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "cvtsi2sd %rax, %xmm0", { 0xf2, 0x48, 0x0f, 0x2a, 0xc0 }, 5, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "cvtsd2ss %xmm1, %xmm0", { 0xf2, 0x0f, 0x5a, 0xc1 }, 4, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "cvtps2pd %xmm1, %xmm0", { 0x0f, 0x5a, 0xc1 }, 3, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "shufps $0x1b, %xmm1, %xmm0", { 0x0f, 0xc6, 0xc1, 0x1b }, 4, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "unpcklpd %xmm1, %xmm0", { 0x66, 0x0f, 0x14, 0xc1 }, 4, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "roundpd $1, %xmm1, %xmm0", { 0x66, 0x0f, 0x3a, 0x09, 0xc1, 0x01 }, 6, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "blendvpd %xmm0, %xmm1, %xmm2", { 0x66, 0x0f, 0x38, 0x15, 0xd1 }, 5, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "paddd %xmm1, %xmm0", { 0x66, 0x0f, 0xfe, 0xc1 }, 4, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "pmulld %xmm1, %xmm0", { 0x66, 0x0f, 0x38, 0x40, 0xc1 }, 5, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "vbroadcastsd (%rax), %ymm0", { 0xc4, 0xe2, 0x7d, 0x19, 0x00 }, 5, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "vpermilps $0x1b, %ymm1, %ymm0", { 0xc4, 0xe3, 0x7d, 0x04, 0xc1, 0x1b }, 6, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "vandps %ymm1, %ymm2, %ymm0", { 0xc5, 0xec, 0x54, 0xc1 }, 4, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "vcvtdq2ps %ymm1, %ymm0", { 0xc5, 0xfc, 0x5b, 0xc1 }, 4, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "vcmpps $1, %ymm1, %ymm2, %ymm0", { 0xc5, 0xec, 0xc2, 0xc1, 0x01 }, 5, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "vpaddd %ymm1, %ymm2, %ymm0", { 0xc5, 0xed, 0xfe, 0xc1 }, 4, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "vpmadd52luq %ymm1, %ymm2, %ymm0", { 0x62, 0xf2, 0xed, 0x28, 0xb4, 0xc1 }, 6, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "vgatherdpd %ymm1, (%rax,%xmm2,8), %ymm0", { 0xc4, 0xe2, 0xf5, 0x92, 0x04, 0xd0 }, 6, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "vfmadd231pd %zmm1, %zmm2, %zmm0", { 0x62, 0xf2, 0xed, 0x48, 0xb8, 0xc1 }, 6, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "vaddps %zmm1, %zmm2, %zmm0", { 0x62, 0xf1, 0x6c, 0x48, 0x58, 0xc1 }, 6, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "add %rax, %rbx", { 0x48, 0x01, 0xc3 }, 3, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "imul %rax, %rbx", { 0x48, 0x0f, 0xaf, 0xd8 }, 4, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "lea 8(%rax), %rbx", { 0x48, 0x8d, 0x58, 0x08 }, 4, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "nop", { 0x90 }, 1, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "ret", { 0xc3 }, 1, FPCLASS_NONE, 0, 0, 0 },
	{ __LINE__, "rep movsb", { 0xf3, 0xa4 }, 2, FPCLASS_NONE, 0, 0, 0 },
};

static void test_table(void)
{
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const struct row *r = &rows[i];
		struct fpclass c;
		int kind = fpclass_decode(r->bytes, r->len, &c);

		CHECK_ROW(kind == r->kind, r->line);
		CHECK_ROW(c.kind == r->kind, r->line);
		CHECK_ROW(c.prec == r->prec, r->line);
		CHECK_ROW(c.width == r->width, r->line);
		CHECK_ROW(c.count == r->count, r->line);
		if (kind != r->kind || c.prec != r->prec || c.width != r->width || c.count != r->count)
			fprintf(stderr, "  %s: got kind %d prec %d width %d count %d\n", r->insn,
				kind, c.prec, c.width, c.count);
	}
}

/* Every proper prefix of every row is decoded without reading past its
 * length (each is copied to the very end of a static array, where ASan
 * sees a read past it) and gives no count, or the full instruction's when
 * only the ModRM byte and what follows it are cut off. */
static void test_truncated(void)
{
	static uint8_t page[4096];

	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const struct row *r = &rows[i];
		for (unsigned len = 0; len < r->len; len++) {
			uint8_t *at = page + sizeof page - len;
			struct fpclass c;

			memcpy(at, r->bytes, len);
			fpclass_decode(at, len, &c);
			CHECK_ROW(c.kind == FPCLASS_NONE || c.kind == r->kind, r->line);
		}
	}
	/* the opcode byte itself cut off: nothing */
	struct fpclass c;
	CHECK_EQ_INT(fpclass_decode((const uint8_t[]){ 0xf2, 0x0f }, 2, &c), FPCLASS_NONE);
	CHECK_EQ_INT(fpclass_decode((const uint8_t[]){ 0xc5, 0xfd }, 2, &c), FPCLASS_NONE);
	CHECK_EQ_INT(fpclass_decode((const uint8_t[]){ 0xc4, 0xe2, 0xed }, 3, &c), FPCLASS_NONE);
	CHECK_EQ_INT(fpclass_decode((const uint8_t[]){ 0xd8 }, 1, &c), FPCLASS_NONE);
	CHECK_EQ_INT(fpclass_decode((const uint8_t[]){ 0x66, 0x66, 0x66 }, 3, &c), FPCLASS_NONE);
	CHECK_EQ_INT(fpclass_decode(NULL, 0, &c), FPCLASS_NONE);
}

/* Prefixes: which of 66/F2/F3 decides, segment and lock prefixes skipped,
 * a REX that is not last is ignored, VEX after a legacy SIMD prefix is
 * invalid. */
static void test_prefixes(void)
{
	struct fpclass c;

	/* 66 F2 0F 58: F2 wins, addsd */
	CHECK_EQ_INT(fpclass_decode((const uint8_t[]){ 0x66, 0xf2, 0x0f, 0x58, 0xc1 }, 5, &c), FPCLASS_SIMD);
	CHECK_EQ_INT(c.prec, MFU_EMU_FP64);
	CHECK_EQ_INT(c.width, MFU_EMU_SCALAR);
	/* F2 F3 0F 58: the last of F2/F3, addss */
	CHECK_EQ_INT(fpclass_decode((const uint8_t[]){ 0xf2, 0xf3, 0x0f, 0x58, 0xc1 }, 5, &c), FPCLASS_SIMD);
	CHECK_EQ_INT(c.prec, MFU_EMU_FP32);
	CHECK_EQ_INT(c.width, MFU_EMU_SCALAR);
	/* 2E 66 0F 59 (a segment prefix first): mulpd */
	CHECK_EQ_INT(fpclass_decode((const uint8_t[]){ 0x2e, 0x66, 0x0f, 0x59, 0xc1 }, 5, &c), FPCLASS_SIMD);
	CHECK_EQ_INT(c.prec, MFU_EMU_FP64);
	CHECK_EQ_INT(c.width, MFU_EMU_V128);
	/* 66 C5 ...: VEX after a legacy prefix is #UD */
	CHECK_EQ_INT(fpclass_decode((const uint8_t[]){ 0x66, 0xc5, 0xed, 0x58, 0xc1 }, 5, &c), FPCLASS_NONE);
	/* legacy 66 0F 38 B8 is no FMA (FMA has only VEX encodings) */
	CHECK_EQ_INT(fpclass_decode((const uint8_t[]){ 0x66, 0x0f, 0x38, 0xb8, 0xc1 }, 5, &c), FPCLASS_NONE);
	/* 66 0F 52 / F2 0F 53: no rsqrtpd / rcpsd */
	CHECK_EQ_INT(fpclass_decode((const uint8_t[]){ 0x66, 0x0f, 0x52, 0xc1 }, 4, &c), FPCLASS_NONE);
	CHECK_EQ_INT(fpclass_decode((const uint8_t[]){ 0xf2, 0x0f, 0x53, 0xc1 }, 4, &c), FPCLASS_NONE);
	/* 0F 7C without 66/F2 is no haddp* */
	CHECK_EQ_INT(fpclass_decode((const uint8_t[]){ 0x0f, 0x7c, 0xc1 }, 3, &c), FPCLASS_NONE);
}

static void test_layouts(void)
{
	/* struct mfu_emu_counts: libmfu and the tool may come from different
	 * builds; a change needs MFU_EMU_VERSION + 1 or fields in reserved. */
	CHECK_EQ_INT(MFU_EMU_VERSION, 1);
	CHECK_EQ_INT(sizeof(struct mfu_emu_counts), 200);
	CHECK_EQ_INT(offsetof(struct mfu_emu_counts, version), 0);
	CHECK_EQ_INT(offsetof(struct mfu_emu_counts, size), 4);
	CHECK_EQ_INT(offsetof(struct mfu_emu_counts, inst), 8);
	CHECK_EQ_INT(offsetof(struct mfu_emu_counts, inst[MFU_EMU_FP32][MFU_EMU_SCALAR]), 8 + 4 * 8);
	CHECK_EQ_INT(offsetof(struct mfu_emu_counts, x87_ops), 136);
	CHECK_EQ_INT(offsetof(struct mfu_emu_counts, guest_insns), 144);
	CHECK_EQ_INT(offsetof(struct mfu_emu_counts, threads), 152);
	CHECK_EQ_INT(offsetof(struct mfu_emu_counts, children), 160);
	CHECK_EQ_INT(offsetof(struct mfu_emu_counts, reserved), 168);
	CHECK_EQ_INT(MFU_EMU_REQ_READ, 0x4d460001);
#ifdef HAVE_VALGRIND_H
	CHECK_EQ_INT(MFU_EMU_REQ_READ, VG_USERREQ_TOOL_BASE('M', 'F') + 1);
#endif
	CHECK_EQ_INT(mfu_emu_lanes(MFU_EMU_FP64, MFU_EMU_SCALAR), 1);
	CHECK_EQ_INT(mfu_emu_lanes(MFU_EMU_FP64, MFU_EMU_V256), 4);
	CHECK_EQ_INT(mfu_emu_lanes(MFU_EMU_FP32, MFU_EMU_V128), 4);
	CHECK_EQ_INT(mfu_emu_lanes(MFU_EMU_FP32, MFU_EMU_V512), 16);
	CHECK_EQ_INT(mfu_emu_lanes(MFU_EMU_BF16, MFU_EMU_V256), 16);

	/* The --mfu-dir record: written by one tool process, read by another. */
	CHECK_EQ_INT(EMU_REC_VERSION, 1);
	CHECK(memcmp(&(uint32_t){ EMU_REC_MAGIC }, "MFUR", 4) == 0);
	CHECK_EQ_INT(EMU_X87, 16);
	CHECK_EQ_INT(EMU_INSNS, 17);
	CHECK_EQ_INT(EMU_NCOUNTERS, 18);
	CHECK_EQ_INT(sizeof(struct emu_record), 176);
	CHECK_EQ_INT(offsetof(struct emu_record, magic), 0);
	CHECK_EQ_INT(offsetof(struct emu_record, version), 4);
	CHECK_EQ_INT(offsetof(struct emu_record, kind), 6);
	CHECK_EQ_INT(offsetof(struct emu_record, pid), 8);
	CHECK_EQ_INT(offsetof(struct emu_record, size), 12);
	CHECK_EQ_INT(offsetof(struct emu_record, count), 16);
	CHECK_EQ_INT(offsetof(struct emu_record, threads), 160);
	CHECK_EQ_INT(offsetof(struct emu_record, children), 168);
}

int main(void)
{
	test_table();
	test_truncated();
	test_prefixes();
	test_layouts();
	return check_status();
}
