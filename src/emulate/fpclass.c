/*
 * The instruction classes of FP_ARITH_INST_RETIRED (Intel's event
 * descriptions, Skylake and later): ADD SUB HADD HSUB SUBADD MUL DIV MIN MAX
 * SQRT RSQRT RCP DPP FM(N)ADD/SUB, scalar or packed, single or double; DPP
 * and FM(N)ADD/SUB count twice. Legacy SSE encodings and VEX (AVX, AVX2,
 * FMA3); EVEX (AVX-512) is never decoded because Valgrind does not run it.
 */
#include "fpclass.h"
#include "mfu_emulate.h"

enum { MAP_0F = 1, MAP_0F38 = 2, MAP_0F3A = 3 };
/* The SIMD prefix (legacy 66/F3/F2, VEX.pp): ps, pd, ss, sd. */
enum { PP_NONE = 0, PP_66 = 1, PP_F3 = 2, PP_F2 = 3 };

static int simd(struct fpclass *out, int prec, int width, int count)
{
	out->kind = FPCLASS_SIMD;
	out->prec = (uint8_t)prec;
	out->width = (uint8_t)width;
	out->count = (uint8_t)count;
	return FPCLASS_SIMD;
}

/* @l256: VEX.L (a packed VEX instruction on ymm registers). */
static int classify_simd(int map, int pp, int w, int l256, int vex, uint8_t op,
			 struct fpclass *out)
{
	int packed = l256 ? MFU_EMU_V256 : MFU_EMU_V128;

	if (map == MAP_0F) {
		switch (op) {
		case 0x51: /* sqrt */
		case 0x58: /* add */
		case 0x59: /* mul */
		case 0x5c: /* sub */
		case 0x5d: /* min */
		case 0x5e: /* div */
		case 0x5f: /* max */
			switch (pp) {
			case PP_NONE: return simd(out, MFU_EMU_FP32, packed, 1);
			case PP_66: return simd(out, MFU_EMU_FP64, packed, 1);
			case PP_F3: return simd(out, MFU_EMU_FP32, MFU_EMU_SCALAR, 1);
			default: return simd(out, MFU_EMU_FP64, MFU_EMU_SCALAR, 1);
			}
		case 0x52: /* rsqrt: ps and ss only */
		case 0x53: /* rcp */
			if (pp == PP_NONE)
				return simd(out, MFU_EMU_FP32, packed, 1);
			if (pp == PP_F3)
				return simd(out, MFU_EMU_FP32, MFU_EMU_SCALAR, 1);
			return FPCLASS_NONE;
		case 0x7c: /* haddpd / haddps */
		case 0x7d: /* hsub */
		case 0xd0: /* addsubpd / addsubps */
			if (pp == PP_66)
				return simd(out, MFU_EMU_FP64, packed, 1);
			if (pp == PP_F2)
				return simd(out, MFU_EMU_FP32, packed, 1);
			return FPCLASS_NONE;
		default:
			return FPCLASS_NONE;
		}
	}
	if (map == MAP_0F3A && pp == PP_66) {
		if (op == 0x40) /* dpps: a multiply and an add per element */
			return simd(out, MFU_EMU_FP32, packed, 2);
		if (op == 0x41) /* dppd: 128-bit only */
			return simd(out, MFU_EMU_FP64, MFU_EMU_V128, 2);
		return FPCLASS_NONE;
	}
	if (map == MAP_0F38 && vex && pp == PP_66) {
		/* FMA3: 96-9F (132), A6-AF (213), B6-BF (231). In each row,
		 * 6 and 7 are fmaddsub/fmsubadd (packed only), 8 A C E the
		 * packed fmadd fmsub fnmadd fnmsub, 9 B D F their scalar
		 * forms. VEX.W gives the precision. */
		int hi = op >> 4, lo = op & 0xf;
		int prec = w ? MFU_EMU_FP64 : MFU_EMU_FP32;

		if ((hi == 0x9 || hi == 0xa || hi == 0xb) && lo >= 6) {
			if (lo >= 9 && (lo & 1))
				return simd(out, prec, MFU_EMU_SCALAR, 2);
			return simd(out, prec, packed, 2);
		}
	}
	return FPCLASS_NONE;
}

/* x87: the arithmetic of D8 (m32fp and st(i)), DC (m64fp and st(i)),
 * DA/DE (m32int/m16int, and DE's popping register forms), by the ModRM
 * reg field: 0 add, 1 mul, 4 sub, 5 subr, 6 div, 7 divr (2 and 3 are
 * compares); and fsqrt (D9 FA). Loads, stores, compares, control and the
 * transcendental instructions are not counted. */
static int classify_x87(uint8_t op, uint8_t modrm, struct fpclass *out)
{
	int reg = (modrm >> 3) & 7, isreg = (modrm >> 6) == 3;
	int arith = reg != 2 && reg != 3;

	switch (op) {
	case 0xd8:
	case 0xdc:
	case 0xde:
		break;
	case 0xda:
		arith = arith && !isreg; /* register forms: fcmovcc, fucompp */
		break;
	case 0xd9:
		arith = modrm == 0xfa;
		break;
	default:
		arith = 0;
	}
	if (!arith)
		return FPCLASS_NONE;
	out->kind = FPCLASS_X87;
	out->count = 1;
	return FPCLASS_X87;
}

int fpclass_decode(const uint8_t *code, unsigned len, struct fpclass *out)
{
	unsigned i = 0;
	int p66 = 0, rep = 0, w = 0;

	out->kind = FPCLASS_NONE;
	out->prec = 0;
	out->width = 0;
	out->count = 0;

	for (; i < len; i++) {
		uint8_t b = code[i];
		if (b == 0x66)
			p66 = 1;
		else if (b == 0xf2 || b == 0xf3)
			rep = b; /* the last of F2/F3 is the one that counts */
		else if (b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e ||
			 b == 0x64 || b == 0x65 || b == 0x67 || b == 0xf0)
			continue;
		else
			break;
	}
	/* REX only counts right before the opcode. */
	if (i < len && (code[i] & 0xf0) == 0x40) {
		w = (code[i] >> 3) & 1;
		i++;
	}
	if (i >= len)
		return FPCLASS_NONE;

	uint8_t b = code[i];
	if (b == 0xc5 || b == 0xc4) {
		/* VEX; in 64-bit mode C4/C5 are never LES/LDS. */
		int map, pp, l;
		if (b == 0xc5) {
			if (i + 2 >= len)
				return FPCLASS_NONE;
			map = MAP_0F;
			w = 0;
			l = (code[i + 1] >> 2) & 1;
			pp = code[i + 1] & 3;
			i += 2;
		} else {
			if (i + 3 >= len)
				return FPCLASS_NONE;
			map = code[i + 1] & 0x1f;
			w = code[i + 2] >> 7;
			l = (code[i + 2] >> 2) & 1;
			pp = code[i + 2] & 3;
			i += 3;
		}
		if (p66 || rep || map < MAP_0F || map > MAP_0F3A)
			return FPCLASS_NONE; /* #UD, or not a map we count in */
		return classify_simd(map, pp, w, l, 1, code[i], out);
	}
	if (b == 0x0f) {
		int map = MAP_0F, pp;
		if (i + 1 >= len)
			return FPCLASS_NONE;
		i++;
		if (code[i] == 0x38 || code[i] == 0x3a) {
			map = code[i] == 0x38 ? MAP_0F38 : MAP_0F3A;
			if (++i >= len)
				return FPCLASS_NONE;
		}
		pp = rep == 0xf3 ? PP_F3 : rep == 0xf2 ? PP_F2 : p66 ? PP_66 : PP_NONE;
		return classify_simd(map, pp, w, 0, 0, code[i], out);
	}
	if (b >= 0xd8 && b <= 0xdf) {
		if (i + 1 >= len)
			return FPCLASS_NONE;
		return classify_x87(b, code[i + 1], out);
	}
	return FPCLASS_NONE;
}
