/*
 * AMX tile kernels (built with -mamx-tile -mamx-bf16 -mamx-int8): the TMUL
 * unit of Sapphire Rapids and later Xeons. Tiles 0-3 accumulate (four
 * independent chains: a TDP takes 16 cycles to issue, so four cover its
 * latency), tiles 4-5 hold A, 6-7 B. Every tile is 16 rows x 64 bytes.
 *  - TDPBF16PS: C[16][16] fp32 += A[16][32] bf16 . B[16][32] bf16 (pairs):
 *    16 x 16 x 32 multiply-adds = 16384 FLOPs per instruction.
 *  - TDPBSSD: C[16][16] int32 += A[16][64] int8 . B[16][64] int8 (quads):
 *    16 x 16 x 64 multiply-adds = 32768 ops per instruction.
 * Linux hands out the tile state only after arch_prctl(ARCH_REQ_XCOMP_PERM)
 * (flops.c asks before these run).
 */
#include <immintrin.h>
#include <string.h>

#include "kernels.h"

/* The LDTILECFG operand (Intel SDM vol. 1, 18.2): 64 bytes. */
struct tile_config {
	uint8_t palette;        /* 1: 8 tiles of up to 16 rows x 64 bytes */
	uint8_t start_row;
	uint8_t reserved[14];
	uint16_t colsb[16];     /* bytes per row of tile i */
	uint8_t rows[16];       /* rows of tile i */
};

_Static_assert(sizeof(struct tile_config) == 64, "LDTILECFG takes 64 bytes");

static void configure(void)
{
	struct tile_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.palette = 1;
	for (int i = 0; i < 8; i++) {
		cfg.colsb[i] = 64;
		cfg.rows[i] = 16;
	}
	_tile_loadconfig(&cfg);
}

double flops_amx_bf16(uint64_t iters, double x, double y)
{
	float out[16 * 16] __attribute__((aligned(64)));
	uint8_t operand[16 * 64] __attribute__((aligned(64))); /* A and B: 16 rows x 64 bytes */
	uint16_t one = 0x3F80; /* bf16 1.0 */
	double sum = 0;

	(void)x;
	(void)y;
	for (int i = 0; i < 16 * 32; i++)
		memcpy(operand + 2 * i, &one, 2);
	configure();
	_tile_zero(0);
	_tile_zero(1);
	_tile_zero(2);
	_tile_zero(3);
	_tile_loadd(4, operand, 64);
	_tile_loadd(5, operand, 64);
	_tile_loadd(6, operand, 64);
	_tile_loadd(7, operand, 64);
	for (uint64_t i = 0; i < iters; i++) {
		_tile_dpbf16ps(0, 4, 6);
		_tile_dpbf16ps(1, 4, 7);
		_tile_dpbf16ps(2, 5, 6);
		_tile_dpbf16ps(3, 5, 7);
	}
	_tile_stored(0, out, 64);
	for (int i = 0; i < 16 * 16; i++)
		sum += out[i];
	_tile_release();
	return sum;
}

double flops_amx_int8(uint64_t iters, double x, double y)
{
	int32_t out[16 * 16] __attribute__((aligned(64)));
	uint8_t operand[16 * 64] __attribute__((aligned(64)));
	double sum = 0;

	(void)x;
	(void)y;
	memset(operand, 1, sizeof(operand));
	configure();
	_tile_zero(0);
	_tile_zero(1);
	_tile_zero(2);
	_tile_zero(3);
	_tile_loadd(4, operand, 64);
	_tile_loadd(5, operand, 64);
	_tile_loadd(6, operand, 64);
	_tile_loadd(7, operand, 64);
	for (uint64_t i = 0; i < iters; i++) {
		_tile_dpbssd(0, 4, 6);
		_tile_dpbssd(1, 4, 7);
		_tile_dpbssd(2, 5, 6);
		_tile_dpbssd(3, 5, 7);
	}
	_tile_stored(0, out, 64);
	for (int i = 0; i < 16 * 16; i++)
		sum += out[i];
	_tile_release();
	return sum;
}
