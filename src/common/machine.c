/*
 * The machine model: cpuid identity and ISA, the CPUs this process may use,
 * and the spec peaks (FLOP/s per dtype, DRAM bandwidth) with their basis.
 *
 * The peaks are "spec" peaks: nominal frequency x physical cores x FLOPs
 * per cycle from a per-microarchitecture table (what the vendor's documents
 * say the core can do), as opposed to the peaks mfu-calibrate measures.
 * docs/machine-model.md explains the table and its sources.
 */
#include "machine.h"
#include "cpumap.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define MACHINE_X86 1
#else
#define MACHINE_X86 0
#endif

/* The largest CPU number a CPU list may name: Linux caps NR_CPUS at 8192
 * today; 65536 leaves room and keeps a CPU set of them at 8 KiB. */
#define MAX_CPUS CPUMAP_MAX

/* ------------------------------------------------------------------ */
/* The microarchitecture table                                         */
/* ------------------------------------------------------------------ */

/*
 * One row per (vendor, family, model range, stepping range, brand substring);
 * the first matching row wins, so rows with a brand substring come before
 * the catch-all row of the same models.
 *
 * Model ranges are checked against Linux: Intel models from
 * arch/x86/include/asm/intel-family.h (SKYLAKE_X 0x55, whose Cascade Lake
 * (s: 7) and Cooper Lake (s: 11) steppings the file notes; Skylake-SP ships
 * as steppings 0-4, Cascade Lake 5-7, Cooper Lake 10-11; ICELAKE_X 0x6A,
 * ICELAKE_D 0x6C, SAPPHIRERAPIDS_X 0x8F, EMERALDRAPIDS_X 0xCF, GRANITERAPIDS_X/D 0xAD/0xAE,
 * ALDERLAKE 0x97/0x9A, RAPTORLAKE 0xB7/0xBA/0xBF ...); AMD Zen generations
 * from bsp_init_amd() in arch/x86/kernel/cpu/amd.c (Zen 17h 0x00-0x2F and
 * 0x50-0x5F; Zen 2 17h 0x30-0x4F, 0x60-0x7F, 0x90-0x91, 0xA0-0xAF; Zen 3 19h
 * 0x00-0x0F, 0x20-0x5F; Zen 4 19h 0x10-0x1F, 0x60-0xAF; Zen 5 1Ah 0x00-0x2F,
 * 0x40-0x4F, 0x60-0x7F).
 *
 * FLOP rates are vector FMA instructions retired per cycle per core at each
 * width (fma256, fma512); FLOPs/cycle = instructions x lanes x 2. Sources:
 *  - Intel 64 and IA-32 Architectures Optimization Reference Manual: Skylake
 *    client/server, Ice Lake, Golden Cove chapters (FMA on ports 0 and 1 for
 *    256-bit; server parts add a 512-bit FMA on port 5, fusing p0+p1 for the
 *    other 512-bit FMA). Skylake-SP/Cascade Lake Xeon Bronze, Silver and
 *    Gold 5xxx (except Gold 5122 and 5222) have only the fused p0+p1 unit
 *    (Intel's Xeon Scalable specification update 336065; J. McCalpin on the
 *    Intel forum "Calculate the Max Flops on Skylake").
 *  - AMX: Intel Architecture Day 2021 and the Optimization Reference Manual
 *    AMX chapter: 1024 BF16 FLOPs/cycle/core on Sapphire Rapids, i.e. one
 *    TDPBF16PS (16x16x32 = 8192 MACs = 16384 FLOPs) every 16 cycles. Emerald
 *    and Granite Rapids keep the same TMUL; Granite Rapids adds AMX-FP16
 *    (TDPFP16PS) at the same rate.
 *  - AMD Software Optimization Guides for family 17h (pub. 55723), 19h
 *    (56665) and 1Ah (58455): two FMA pipes (FP0, FP1) of 128 bits on Zen,
 *    256 bits on Zen 2-4; Zen 4 runs 512-bit ops as two halves on the 256-bit
 *    pipes (one 512-bit FMA per cycle); Zen 5 desktop/server has 512-bit
 *    pipes. Zen 5 mobile (Strix Point, Krackan) keeps 256-bit pipes
 *    (chipsandcheese "AMD's Strix Point: Zen 5 hits mobile"; A. Yee,
 *    numberworld.org "Zen5's AVX512 teardown").
 *  - VDPBF16PS (bf16 pairs into fp32) issues on the FMA pipes like an FMA
 *    (uops.info / NumKong tables: p05 on Sapphire Rapids, p01 on Zen 4), so
 *    its rate is fma512 x 16 lanes x 2 products x 2 = 2x the fp32 rate;
 *    AVX512_FP16 FMAs have 32 lanes per zmm: also 2x the fp32 rate.
 *
 * DRAM: channels per socket (64-bit channels; LPDDR widths converted to
 * 64-bit equivalents) x MT/s, from Intel ARK / AMD product pages for the
 * platform named in the row. They assume every channel populated at the
 * platform's rated speed; on a VM only a share of it is reachable, which is
 * what mfu-calibrate measures.
 */
struct uarch {
	const char *vendor;
	int family;
	int model_lo, model_hi;
	int step_lo, step_hi;
	const char *brand;      /* substring of the brand string; NULL = any */
	const char *name;       /* machine.uarch */
	int fma128;             /* 128-bit FMA (or add/mul) ops per cycle */
	int fma256;             /* 256-bit FMA ops per cycle */
	int fma512;             /* 512-bit FMA ops per cycle; 0 = no AVX-512 */
	int amx;                /* AMX TMUL FLOPs per cycle (bf16, and fp16 with AMX-FP16) */
	const char *fpu_note;   /* appended to the FLOP detail, or NULL */
	int channels;           /* DRAM channels per socket; 0 = unknown */
	int mts;                /* DRAM transfer rate, MT/s */
	const char *dram;       /* "DDR5-4800" */
	const char *platform;   /* the product line the DRAM row is for */
};

#define INTEL "GenuineIntel"
#define AMD "AuthenticAMD"
#define ANY_STEP 0, 15

/* Notes on the 512-bit rate only; arrays so that their addresses identify
 * them (machine_flops_per_cycle drops them when 512-bit ops are not used). */
static const char skx_1fma_note[] = "this SKU has no port-5 FMA unit";
static const char zen4_note[] = "512-bit ops run as two halves on the 256-bit pipes";
static const char zen5_mobile_note[] = "mobile Zen 5: 256-bit FP pipes";
/* Notes that always apply. */
#define HYBRID_NOTE "P-core rate; Gracemont E-cores reach half of it"
#define ZEN1_NOTE "2x 128-bit FMA pipes"

static const struct uarch uarchs[] = {
	/* Skylake-SP (steppings 0-4): 6ch DDR4-2666 (Platinum/Gold 6xxx). */
	{ INTEL, 6, 0x55, 0x55, 0, 4, "Gold 5122", "skylake_sp", 2, 2, 2, 0, NULL, 6, 2666, "DDR4-2666", "Xeon Scalable 1st gen" },
	{ INTEL, 6, 0x55, 0x55, 0, 4, "Gold 5", "skylake_sp", 2, 2, 1, 0, skx_1fma_note, 6, 2666, "DDR4-2666", "Xeon Scalable 1st gen" },
	{ INTEL, 6, 0x55, 0x55, 0, 4, "Silver", "skylake_sp", 2, 2, 1, 0, skx_1fma_note, 6, 2666, "DDR4-2666", "Xeon Scalable 1st gen" },
	{ INTEL, 6, 0x55, 0x55, 0, 4, "Bronze", "skylake_sp", 2, 2, 1, 0, skx_1fma_note, 6, 2666, "DDR4-2666", "Xeon Scalable 1st gen" },
	{ INTEL, 6, 0x55, 0x55, 0, 4, NULL, "skylake_sp", 2, 2, 2, 0, NULL, 6, 2666, "DDR4-2666", "Xeon Scalable 1st gen" },
	/* Cascade Lake (steppings 5-7): 6ch DDR4-2933; Platinum 92xx (AP) 12ch. */
	{ INTEL, 6, 0x55, 0x55, 5, 7, "Platinum 92", "cascade_lake", 2, 2, 2, 0, NULL, 12, 2933, "DDR4-2933", "Xeon Platinum 9200" },
	{ INTEL, 6, 0x55, 0x55, 5, 7, "Gold 5222", "cascade_lake", 2, 2, 2, 0, NULL, 6, 2933, "DDR4-2933", "Xeon Scalable 2nd gen" },
	{ INTEL, 6, 0x55, 0x55, 5, 7, "Gold 5", "cascade_lake", 2, 2, 1, 0, skx_1fma_note, 6, 2933, "DDR4-2933", "Xeon Scalable 2nd gen" },
	{ INTEL, 6, 0x55, 0x55, 5, 7, "Silver", "cascade_lake", 2, 2, 1, 0, skx_1fma_note, 6, 2933, "DDR4-2933", "Xeon Scalable 2nd gen" },
	{ INTEL, 6, 0x55, 0x55, 5, 7, "Bronze", "cascade_lake", 2, 2, 1, 0, skx_1fma_note, 6, 2933, "DDR4-2933", "Xeon Scalable 2nd gen" },
	{ INTEL, 6, 0x55, 0x55, 5, 7, NULL, "cascade_lake", 2, 2, 2, 0, NULL, 6, 2933, "DDR4-2933", "Xeon Scalable 2nd gen" },
	/* Cooper Lake (steppings 10-11, AVX512_BF16): 6ch DDR4-3200. */
	{ INTEL, 6, 0x55, 0x55, 10, 11, NULL, "cooper_lake", 2, 2, 2, 0, NULL, 6, 3200, "DDR4-3200", "Xeon Scalable 3rd gen (Cooper Lake)" },
	/* Ice Lake-SP: 8ch DDR4-3200; Ice Lake-D (Xeon D-2700): 4ch DDR4-3200. */
	{ INTEL, 6, 0x6A, 0x6A, ANY_STEP, NULL, "ice_lake_sp", 2, 2, 2, 0, NULL, 8, 3200, "DDR4-3200", "Xeon Scalable 3rd gen (Ice Lake)" },
	{ INTEL, 6, 0x6C, 0x6C, ANY_STEP, NULL, "ice_lake_sp", 2, 2, 2, 0, NULL, 4, 3200, "DDR4-3200", "Xeon D-2700 (Ice Lake-D)" },
	/* Sapphire / Emerald / Granite Rapids: 2x 512-bit FMA and AMX. */
	{ INTEL, 6, 0x8F, 0x8F, ANY_STEP, NULL, "sapphire_rapids", 2, 2, 2, 1024, NULL, 8, 4800, "DDR5-4800", "Xeon Scalable 4th gen" },
	{ INTEL, 6, 0xCF, 0xCF, ANY_STEP, NULL, "emerald_rapids", 2, 2, 2, 1024, NULL, 8, 5600, "DDR5-5600", "Xeon Scalable 5th gen" },
	{ INTEL, 6, 0xAD, 0xAD, ANY_STEP, "Xeon(R) 67", "granite_rapids", 2, 2, 2, 1024, NULL, 8, 6400, "DDR5-6400", "Xeon 6700P" },
	{ INTEL, 6, 0xAD, 0xAD, ANY_STEP, "Xeon(R) 65", "granite_rapids", 2, 2, 2, 1024, NULL, 8, 6400, "DDR5-6400", "Xeon 6500P" },
	{ INTEL, 6, 0xAD, 0xAD, ANY_STEP, NULL, "granite_rapids", 2, 2, 2, 1024, NULL, 12, 6400, "DDR5-6400", "Xeon 6900P" },
	{ INTEL, 6, 0xAE, 0xAE, ANY_STEP, NULL, "granite_rapids", 2, 2, 2, 1024, NULL, 8, 6400, "DDR5-6400", "Xeon 6 SoC (Granite Rapids-D)" },
	/* Skylake client and its derivatives (kernel: "Sky Lake" cores). */
	{ INTEL, 6, 0x4E, 0x4E, ANY_STEP, NULL, "skylake", 2, 2, 0, 0, NULL, 2, 2133, "DDR4-2133", "Core 6th gen mobile" },
	{ INTEL, 6, 0x5E, 0x5E, ANY_STEP, NULL, "skylake", 2, 2, 0, 0, NULL, 2, 2133, "DDR4-2133", "Core 6th gen" },
	{ INTEL, 6, 0x8E, 0x8E, ANY_STEP, NULL, "skylake", 2, 2, 0, 0, NULL, 2, 2400, "DDR4-2400", "Kaby/Coffee/Whiskey Lake mobile" },
	{ INTEL, 6, 0x9E, 0x9E, 0, 9, NULL, "skylake", 2, 2, 0, 0, NULL, 2, 2400, "DDR4-2400", "Kaby Lake" },
	{ INTEL, 6, 0x9E, 0x9E, 10, 15, NULL, "skylake", 2, 2, 0, 0, NULL, 2, 2666, "DDR4-2666", "Coffee Lake" },
	{ INTEL, 6, 0xA5, 0xA5, ANY_STEP, NULL, "skylake", 2, 2, 0, 0, NULL, 2, 2933, "DDR4-2933", "Comet Lake" },
	{ INTEL, 6, 0xA6, 0xA6, ANY_STEP, NULL, "skylake", 2, 2, 0, 0, NULL, 2, 2666, "DDR4-2666", "Comet Lake mobile" },
	/* Sunny/Willow/Cypress Cove clients: one 512-bit FMA (fused p0+p1). */
	{ INTEL, 6, 0x7D, 0x7E, ANY_STEP, NULL, "ice_lake", 2, 2, 1, 0, NULL, 2, 3200, "DDR4-3200", "Core 10th gen (Ice Lake)" },
	{ INTEL, 6, 0x8C, 0x8D, ANY_STEP, NULL, "tiger_lake", 2, 2, 1, 0, NULL, 2, 3200, "DDR4-3200", "Core 11th gen (Tiger Lake)" },
	{ INTEL, 6, 0xA7, 0xA7, ANY_STEP, NULL, "rocket_lake", 2, 2, 1, 0, NULL, 2, 3200, "DDR4-3200", "Core 11th gen (Rocket Lake)" },
	/* Hybrid clients: AVX-512 fused off; Golden/Raptor Cove 2x 256-bit FMA. */
	{ INTEL, 6, 0x97, 0x97, ANY_STEP, NULL, "alder_lake", 2, 2, 0, 0, HYBRID_NOTE, 2, 4800, "DDR5-4800", "Core 12th gen" },
	{ INTEL, 6, 0x9A, 0x9A, ANY_STEP, NULL, "alder_lake", 2, 2, 0, 0, HYBRID_NOTE, 2, 4800, "DDR5-4800", "Core 12th gen mobile" },
	{ INTEL, 6, 0xB7, 0xB7, ANY_STEP, NULL, "raptor_lake", 2, 2, 0, 0, HYBRID_NOTE, 2, 5600, "DDR5-5600", "Core 13th/14th gen" },
	{ INTEL, 6, 0xBF, 0xBF, ANY_STEP, NULL, "raptor_lake", 2, 2, 0, 0, HYBRID_NOTE, 2, 5600, "DDR5-5600", "Core 13th/14th gen" },
	{ INTEL, 6, 0xBA, 0xBA, ANY_STEP, NULL, "raptor_lake", 2, 2, 0, 0, HYBRID_NOTE, 2, 5200, "DDR5-5200", "Core 13th gen mobile" },

	/* Zen / Zen+ (17h): two 128-bit FMA pipes. */
	{ AMD, 0x17, 0x00, 0x2F, ANY_STEP, "EPYC", "zen", 2, 1, 0, 0, ZEN1_NOTE, 8, 2666, "DDR4-2666", "EPYC 7001 (Naples)" },
	{ AMD, 0x17, 0x00, 0x2F, ANY_STEP, NULL, "zen", 2, 1, 0, 0, ZEN1_NOTE, 2, 2666, "DDR4-2666", "Ryzen 1000/2000" },
	{ AMD, 0x17, 0x50, 0x5F, ANY_STEP, NULL, "zen", 2, 1, 0, 0, ZEN1_NOTE, 0, 0, NULL, NULL },
	/* Zen 2 (17h). Threadripper 3000 shares model 0x31 with Rome. */
	{ AMD, 0x17, 0x30, 0x3F, ANY_STEP, "Threadripper PRO", "zen2", 2, 2, 0, 0, NULL, 8, 3200, "DDR4-3200", "Threadripper PRO 3000" },
	{ AMD, 0x17, 0x30, 0x3F, ANY_STEP, "Threadripper", "zen2", 2, 2, 0, 0, NULL, 4, 3200, "DDR4-3200", "Threadripper 3000" },
	{ AMD, 0x17, 0x30, 0x3F, ANY_STEP, NULL, "zen2", 2, 2, 0, 0, NULL, 8, 3200, "DDR4-3200", "EPYC 7002 (Rome)" },
	{ AMD, 0x17, 0x40, 0x4F, ANY_STEP, NULL, "zen2", 2, 2, 0, 0, NULL, 0, 0, NULL, NULL },
	{ AMD, 0x17, 0x60, 0x6F, ANY_STEP, NULL, "zen2", 2, 2, 0, 0, NULL, 2, 3200, "DDR4-3200", "Ryzen 4000/5000 mobile (Renoir, Lucienne)" },
	{ AMD, 0x17, 0x70, 0x7F, ANY_STEP, NULL, "zen2", 2, 2, 0, 0, NULL, 2, 3200, "DDR4-3200", "Ryzen 3000 (Matisse)" },
	{ AMD, 0x17, 0x90, 0x91, ANY_STEP, NULL, "zen2", 2, 2, 0, 0, NULL, 0, 0, NULL, NULL },
	{ AMD, 0x17, 0xA0, 0xAF, ANY_STEP, NULL, "zen2", 2, 2, 0, 0, NULL, 0, 0, NULL, NULL },
	/* Zen 3 (19h). */
	{ AMD, 0x19, 0x00, 0x0F, ANY_STEP, "Threadripper", "zen3", 2, 2, 0, 0, NULL, 8, 3200, "DDR4-3200", "Threadripper PRO 5000" },
	{ AMD, 0x19, 0x00, 0x0F, ANY_STEP, NULL, "zen3", 2, 2, 0, 0, NULL, 8, 3200, "DDR4-3200", "EPYC 7003 (Milan)" },
	{ AMD, 0x19, 0x20, 0x2F, ANY_STEP, NULL, "zen3", 2, 2, 0, 0, NULL, 2, 3200, "DDR4-3200", "Ryzen 5000 (Vermeer)" },
	{ AMD, 0x19, 0x30, 0x3F, ANY_STEP, NULL, "zen3", 2, 2, 0, 0, NULL, 0, 0, NULL, NULL },
	{ AMD, 0x19, 0x40, 0x4F, ANY_STEP, NULL, "zen3", 2, 2, 0, 0, NULL, 2, 4800, "DDR5-4800", "Ryzen 6000 mobile (Rembrandt)" },
	{ AMD, 0x19, 0x50, 0x5F, ANY_STEP, NULL, "zen3", 2, 2, 0, 0, NULL, 2, 3200, "DDR4-3200", "Ryzen 5000 APU (Cezanne)" },
	/* Zen 4 (19h): AVX-512 on 256-bit pipes. */
	{ AMD, 0x19, 0x10, 0x1F, ANY_STEP, "Threadripper PRO", "zen4", 2, 2, 1, 0, zen4_note, 8, 5200, "DDR5-5200", "Threadripper PRO 7000" },
	{ AMD, 0x19, 0x10, 0x1F, ANY_STEP, "Threadripper", "zen4", 2, 2, 1, 0, zen4_note, 4, 5200, "DDR5-5200", "Threadripper 7000" },
	{ AMD, 0x19, 0x10, 0x1F, ANY_STEP, NULL, "zen4", 2, 2, 1, 0, zen4_note, 12, 4800, "DDR5-4800", "EPYC 9004 (Genoa)" },
	{ AMD, 0x19, 0x60, 0x6F, ANY_STEP, NULL, "zen4", 2, 2, 1, 0, zen4_note, 2, 5200, "DDR5-5200", "Ryzen 7000 (Raphael)" },
	{ AMD, 0x19, 0x70, 0x7F, ANY_STEP, NULL, "zen4", 2, 2, 1, 0, zen4_note, 2, 5600, "DDR5-5600", "Ryzen 7040/8040 (Phoenix)" },
	{ AMD, 0x19, 0x80, 0x9F, ANY_STEP, NULL, "zen4", 2, 2, 1, 0, zen4_note, 0, 0, NULL, NULL },
	{ AMD, 0x19, 0xA0, 0xAF, ANY_STEP, "EPYC 8", "zen4", 2, 2, 1, 0, zen4_note, 6, 4800, "DDR5-4800", "EPYC 8004 (Siena)" },
	{ AMD, 0x19, 0xA0, 0xAF, ANY_STEP, NULL, "zen4", 2, 2, 1, 0, zen4_note, 12, 4800, "DDR5-4800", "EPYC 9004 (Bergamo)" },
	/* Zen 5 (1Ah): 512-bit pipes except the mobile parts. */
	{ AMD, 0x1A, 0x00, 0x1F, ANY_STEP, "Threadripper PRO", "zen5", 2, 2, 2, 0, NULL, 8, 6400, "DDR5-6400", "Threadripper PRO 9000" },
	{ AMD, 0x1A, 0x00, 0x1F, ANY_STEP, "Threadripper", "zen5", 2, 2, 2, 0, NULL, 4, 6400, "DDR5-6400", "Threadripper 9000" },
	{ AMD, 0x1A, 0x00, 0x1F, ANY_STEP, NULL, "zen5", 2, 2, 2, 0, NULL, 12, 6000, "DDR5-6000", "EPYC 9005 (Turin)" },
	{ AMD, 0x1A, 0x20, 0x2F, ANY_STEP, NULL, "zen5", 2, 2, 1, 0, zen5_mobile_note, 2, 7500, "LPDDR5X-7500", "Ryzen AI 300 (Strix Point)" },
	{ AMD, 0x1A, 0x40, 0x4F, ANY_STEP, NULL, "zen5", 2, 2, 2, 0, NULL, 2, 5600, "DDR5-5600", "Ryzen 9000 (Granite Ridge)" },
	{ AMD, 0x1A, 0x60, 0x6F, ANY_STEP, NULL, "zen5", 2, 2, 1, 0, zen5_mobile_note, 2, 5600, "DDR5-5600", "Ryzen AI 300 (Krackan Point)" },
	{ AMD, 0x1A, 0x70, 0x7F, ANY_STEP, NULL, "zen5", 2, 2, 2, 0, NULL, 4, 8000, "LPDDR5X-8000", "Ryzen AI Max (Strix Halo)" },
};

/* What an unknown microarchitecture is assumed to have, from its ISA alone:
 * one 512-bit FMA when it has AVX-512 (the cheaper Intel parts and Zen 4 have
 * one; assuming two could double the peak), two 256-bit FMA pipes with
 * AVX2+FMA (every such core since Haswell and Zen 2 has two), an add and a
 * multiply pipe before FMA. */
static const struct uarch uarch_estimate = {
	NULL, 0, 0, 0, ANY_STEP, NULL, "unknown", 2, 2, 1, 1024, NULL, 0, 0, NULL, NULL,
};

static bool brand_has(const char *brand, const char *needle)
{
	return needle == NULL || strstr(brand, needle) != NULL;
}

/* The table row for @m's identity (vendor, family, model, stepping, brand),
 * NULL if none. */
static const struct uarch *uarch_by_identity(const struct machine *m)
{
	for (size_t i = 0; i < ARRAY_SIZE(uarchs); i++) {
		const struct uarch *u = &uarchs[i];

		if (strcmp(m->vendor, u->vendor) == 0 && m->family == u->family &&
		    m->model >= u->model_lo && m->model <= u->model_hi &&
		    m->stepping >= u->step_lo && m->stepping <= u->step_hi &&
		    brand_has(m->name, u->brand))
			return u;
	}
	return NULL;
}

/* The server row of a core class: the catch-all row (no brand substring)
 * of a platform with at least 6 channels per socket. A distrusted model
 * number is a hypervisor's doing (bare metal reports its own model), and
 * hypervisors run on servers, so a class derived from the ISA takes the
 * server platform's memory, never a client's 2 channels. NULL if the class
 * has no server row. */
static const struct uarch *uarch_server_row(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(uarchs); i++) {
		const struct uarch *u = &uarchs[i];

		if (strcmp(u->name, name) == 0 && u->brand == NULL && u->channels >= 6)
			return u;
	}
	return NULL;
}

/* The table row for @m: by identity unless machine_identify() distrusted
 * it, else by the uarch name alone (the class the ISA shows, or a struct
 * filled by hand). NULL if none. */
static const struct uarch *uarch_find(const struct machine *m)
{
	const struct uarch *u = m->uarch_from_isa ? uarch_server_row(m->uarch) : uarch_by_identity(m);

	if (u)
		return u;
	if (m->uarch_from_isa)
		return NULL;
	if (m->uarch[0] && strcmp(m->uarch, "unknown") != 0) {
		for (size_t i = 0; i < ARRAY_SIZE(uarchs); i++)
			if (strcmp(m->uarch, uarchs[i].name) == 0)
				return &uarchs[i];
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

/* Append to a NUL-terminated buffer; truncation is silent because details
 * are for people, and the caller's buffer bounds them. */
__attribute__((format(printf, 3, 4)))
static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used;
	va_list ap;

	if (!buf || len == 0)
		return;
	used = strnlen(buf, len);
	if (used >= len - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

static void set_str(char *buf, size_t len, const char *s)
{
	if (buf && len)
		snprintf(buf, len, "%s", s);
}

static void trim(char *s)
{
	size_t n = strlen(s), i = 0;

	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	while (s[i] && isspace((unsigned char)s[i]))
		i++;
	if (i)
		memmove(s, s + i, n - i + 1);
}

/* A whole file holding one unsigned number (sysfs style, newline allowed). */
static int read_u64_file(const char *path, uint64_t *v)
{
	char buf[64];
	int err;

	err = read_sysfs(path, buf, sizeof(buf));
	if (err)
		return err;
	trim(buf);
	return safe_atou64(buf, v);
}

/* ------------------------------------------------------------------ */
/* dtype and ISA names                                                 */
/* ------------------------------------------------------------------ */

static const char *const dtype_names[MACHINE_NDTYPES] = {
	[MACHINE_FP64] = "fp64",
	[MACHINE_FP32] = "fp32",
	[MACHINE_BF16] = "bf16",
	[MACHINE_FP16] = "fp16",
	[MACHINE_INT8] = "int8",
};

int machine_dtype_parse(const char *s)
{
	/* The spellings numpy and PyTorch users type, besides ours. */
	static const struct { const char *name; enum machine_dtype d; } alias[] = {
		{ "float64", MACHINE_FP64 }, { "double", MACHINE_FP64 },
		{ "float32", MACHINE_FP32 }, { "float", MACHINE_FP32 },
		{ "bfloat16", MACHINE_BF16 },
		{ "float16", MACHINE_FP16 }, { "half", MACHINE_FP16 },
		{ "qint8", MACHINE_INT8 }, { "i8", MACHINE_INT8 },
	};

	if (!s)
		return -EINVAL;
	for (int d = 0; d < MACHINE_NDTYPES; d++)
		if (strcmp(s, dtype_names[d]) == 0)
			return d;
	for (size_t i = 0; i < ARRAY_SIZE(alias); i++)
		if (strcmp(s, alias[i].name) == 0)
			return (int)alias[i].d;
	return -EINVAL;
}

int machine_dtype_is_integer(enum machine_dtype d)
{
	return d == MACHINE_INT8;
}

const char *machine_dtype_name(enum machine_dtype d)
{
	if ((int)d < 0 || d >= MACHINE_NDTYPES)
		return "unknown";
	return dtype_names[d];
}

/* Spelled as the kernel spells them in /proc/cpuinfo, except "hybrid". */
static const struct { unsigned bit; const char *name; } isa_names[] = {
	{ MACHINE_ISA_SSE2, "sse2" },
	{ MACHINE_ISA_AVX, "avx" },
	{ MACHINE_ISA_FMA, "fma" },
	{ MACHINE_ISA_AVX2, "avx2" },
	{ MACHINE_ISA_AVX512F, "avx512f" },
	{ MACHINE_ISA_AVX512_BF16, "avx512_bf16" },
	{ MACHINE_ISA_AVX512_FP16, "avx512_fp16" },
	{ MACHINE_ISA_AMX_BF16, "amx_bf16" },
	{ MACHINE_ISA_AMX_TILE, "amx_tile" },
	{ MACHINE_ISA_AMX_FP16, "amx_fp16" },
	{ MACHINE_ISA_AVX_VNNI, "avx_vnni" },
	{ MACHINE_ISA_AVX512_VNNI, "avx512_vnni" },
	{ MACHINE_ISA_AMX_INT8, "amx_int8" },
	{ MACHINE_ISA_HYBRID, "hybrid" },
};

void machine_isa_string(unsigned isa, char *buf, size_t len)
{
	if (!buf || len == 0)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(isa_names); i++) {
		size_t used = strlen(buf), need;

		if (!(isa & isa_names[i].bit))
			continue;
		need = strlen(isa_names[i].name) + (used ? 1 : 0);
		/* Never cut a name in half: a partial "avx5" would read as a flag. */
		if (used + need >= len)
			break;
		append(buf, len, "%s%s", used ? " " : "", isa_names[i].name);
	}
}

/* ------------------------------------------------------------------ */
/* CPU lists                                                           */
/* ------------------------------------------------------------------ */

/* Parse a CPU list into @set (sized for @ncpus); an empty list is an error. */
static int cpulist_parse(const char *list, cpu_set_t *set, size_t setsize, unsigned ncpus)
{
	struct cpumap m;
	int err = cpumap_parse(&m, list);

	if (err)
		return err;
	if (m.n == 0)
		return -EINVAL;
	CPU_ZERO_S(setsize, set);
	for (int i = 0; i < m.n; i++)
		if ((unsigned)m.cpu[i] < ncpus)
			CPU_SET_S((unsigned)m.cpu[i], setsize, set);
	cpumap_fini(&m);
	return 0;
}

int machine_cpulist_count(const char *list)
{
	/* A set, so that overlapping items ("0-3,2") count each CPU once. */
	cpu_set_t *set = CPU_ALLOC(MAX_CPUS);
	size_t setsize = CPU_ALLOC_SIZE(MAX_CPUS);
	int err;

	if (!set)
		return -ENOMEM;
	err = cpulist_parse(list, set, setsize, MAX_CPUS);
	if (!err)
		err = CPU_COUNT_S(setsize, set);
	CPU_FREE(set);
	return err;
}

/* Write @set as "0-3,8". Returns 0 or -ENOSPC, in which case the list ends
 * in "..." (ncpu_affinity still has the exact count). */
static int cpulist_format(const cpu_set_t *set, size_t setsize, unsigned ncpus,
			  char *buf, size_t len)
{
	int *cpu = calloc(ncpus ? ncpus : 1, sizeof(*cpu)), n = 0, err;

	if (!cpu) {
		snprintf(buf, len, "%s", "...");
		return -ENOMEM;
	}
	for (unsigned c = 0; c < ncpus; c++)
		if (CPU_ISSET_S(c, setsize, set))
			cpu[n++] = (int)c;
	err = cpumap_format(cpu, n, buf, len);
	free(cpu);
	return err;
}

/* ------------------------------------------------------------------ */
/* cgroup CPU quota                                                    */
/* ------------------------------------------------------------------ */

/* cgroup v2 cpu.max of one directory: "max 100000" (no limit) or
 * "QUOTA PERIOD" in microseconds. A missing file is no limit. */
static int read_cpu_max(const char *dir, double *cpus)
{
	char path[PATH_MAX], buf[128], *save = NULL, *q, *p;
	uint64_t quota, period;
	int err;

	*cpus = 0;
	if (strbuf(path, sizeof(path), "%s/cpu.max", dir))
		return -ENAMETOOLONG;
	err = read_sysfs(path, buf, sizeof(buf));
	if (err == -ENOENT || err == -ENOTDIR)
		return 0;
	if (err)
		return err;
	q = strtok_r(buf, " \t\n", &save);
	p = strtok_r(NULL, " \t\n", &save);
	if (!q || !p || strtok_r(NULL, " \t\n", &save))
		return -EINVAL;
	if (safe_atou64(p, &period) || period == 0)
		return -EINVAL;
	if (strcmp(q, "max") == 0)
		return 0;
	if (safe_atou64(q, &quota) || quota == 0)
		return -EINVAL;
	*cpus = (double)quota / (double)period;
	return 0;
}

/* cgroup v1 cpu.cfs_quota_us (-1 = no limit) over cpu.cfs_period_us. */
static int read_cfs_quota(const char *dir, double *cpus)
{
	char path[PATH_MAX], buf[64];
	uint64_t quota, period;
	int err;

	*cpus = 0;
	if (strbuf(path, sizeof(path), "%s/cpu.cfs_quota_us", dir))
		return -ENAMETOOLONG;
	err = read_sysfs(path, buf, sizeof(buf));
	if (err == -ENOENT || err == -ENOTDIR)
		return 0;
	if (err)
		return err;
	trim(buf);
	if (strcmp(buf, "-1") == 0)
		return 0;
	if (safe_atou64(buf, &quota) || quota == 0)
		return -EINVAL;
	if (strbuf(path, sizeof(path), "%s/cpu.cfs_period_us", dir))
		return -ENAMETOOLONG;
	err = read_u64_file(path, &period);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	if (period == 0)
		return -EINVAL;
	*cpus = (double)quota / (double)period;
	return 0;
}

/* Walk from @mount/@cgpath up to @mount itself, keeping the smallest quota.
 * Levels that do not exist are read as "no quota" and the walk goes on:
 * a container without its own cgroup namespace sees a path such as
 * "/docker/<id>" in /proc/self/cgroup, while its own cgroup is mounted at
 * @mount; the walk then finds the container's quota at the mount root. */
static int walk_quota(const char *mount, const char *cgpath,
		      int (*read_level)(const char *dir, double *cpus), double *best)
{
	char dir[PATH_MAX];
	size_t base = strlen(mount);
	int err;

	/* "/.." appears when the cgroup lies outside our cgroup namespace;
	 * there is no directory under @mount to read then. */
	if (strstr(cgpath, "/..") || cgpath[0] != '/')
		return 0;
	if (strbuf(dir, sizeof(dir), "%s%s", mount, cgpath))
		return -ENAMETOOLONG;
	for (;;) {
		size_t n = strlen(dir);
		double q;
		char *slash;

		while (n > base && dir[n - 1] == '/')
			dir[--n] = '\0';
		err = read_level(dir, &q);
		if (err)
			return err;
		if (q > 0 && (*best == 0 || q < *best))
			*best = q;
		if (n <= base)
			return 0;
		slash = strrchr(dir + base, '/');
		if (!slash)
			return 0;
		*slash = '\0';
	}
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Does the comma-separated controller list @ctrls name "cpu" itself? */
static bool has_cpu_controller(const char *ctrls)
{
	const char *p = ctrls;

	while (*p) {
		size_t n = strcspn(p, ",");

		if (n == 3 && strncmp(p, "cpu", 3) == 0)
			return true;
		p += n;
		if (*p == ',')
			p++;
	}
	return false;
}

/* v1: the cpu controller is mounted under @root by its controller list
 * ("cpu,cpuacct"), often with a "cpu" symlink; try the usual spellings. */
static int v1_quota(const char *root, const char *ctrls, const char *cgpath, double *best)
{
	const char *names[] = { ctrls, "cpu", "cpu,cpuacct", "cpuacct,cpu" };
	char mount[PATH_MAX];

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if (strbuf(mount, sizeof(mount), "%s/%s", root, names[i]))
			return -ENAMETOOLONG;
		if (is_dir(mount))
			return walk_quota(mount, cgpath, read_cfs_quota, best);
	}
	return 0;
}

int machine_cgroup_quota(const char *root, const char *proc_cgroup, double *cpus)
{
	char *line = NULL;
	size_t cap = 0;
	double best = 0;
	FILE *f;
	int err = 0;

	if (!root || !proc_cgroup || !cpus)
		return -EINVAL;
	*cpus = 0;
	f = fopen(proc_cgroup, "re");
	if (!f) {
		err = -errno;
		/* No cgroup file: a kernel without cgroups, so no quota. */
		return err == -ENOENT ? 0 : err;
	}
	while (getline(&line, &cap, f) > 0) {
		/* "hierarchy-id:controller-list:path"; the path may hold ':'. */
		char *id = line, *ctrls, *path;
		int hid;

		line[strcspn(line, "\n")] = '\0';
		ctrls = strchr(id, ':');
		if (!ctrls)
			continue;
		*ctrls++ = '\0';
		path = strchr(ctrls, ':');
		if (!path)
			continue;
		*path++ = '\0';
		if (safe_atoi(id, &hid)) {
			err = -EINVAL;
			goto out;
		}
		if (hid == 0 && ctrls[0] == '\0')
			/* v2. In hybrid mode @root is a tmpfs of v1 mounts and has
			 * no cpu.max: no quota from here, as it should be, since the
			 * cpu controller then lives in v1. */
			err = walk_quota(root, path, read_cpu_max, &best);
		else if (has_cpu_controller(ctrls))
			err = v1_quota(root, ctrls, path, &best);
		if (err)
			goto out;
	}
	if (ferror(f)) {
		err = -EIO;
		goto out;
	}
	*cpus = best;
out:
	free(line);
	fclose(f);
	return err;
}

/* ------------------------------------------------------------------ */
/* Identification: the model number checked against the ISA           */
/* ------------------------------------------------------------------ */

/* Hypervisors may report another CPU model than the host's: a VM seen here
 * says family 6 model 167, a client Rocket Lake (one 512-bit FMA unit,
 * 2-channel DDR4), while it reports AMX, AVX512-FP16 and a 480 MiB L3: a
 * Sapphire Rapids class Xeon. A peak from the wrong row was 2.96x off, so
 * the row is checked against what only some cores have. The rules, and why:
 *
 * Intel, evidence of a Sapphire Rapids or later server core (Golden Cove
 * server and successors: 2x 512-bit FMA, the AMX TMUL):
 *  - any AMX bit: AMX exists on no client core and no Xeon before Sapphire
 *    Rapids;
 *  - AVX512-FP16: Golden Cove and later cores have it, but the only client
 *    ones that expose it are early Alder Lake desktops with AVX-512 unlocked
 *    (E-cores off; one 512-bit FMA), whose brand says "Core" and which are
 *    not VMs. That case is left to the rule on AVX-512 below;
 *  - a "Xeon" brand with an L3 of 64 MiB or more, on a client row: the Xeon
 *    E-2100/2200/2300 and W-1200/1300 are client cores (the brand alone does
 *    not contradict the row) but have at most 20 MiB of L3. No Intel client
 *    has more than 36 MiB and no Xeon before Sapphire Rapids more than
 *    60 MiB (Ice Lake-SP), so a server-sized L3 rules the client row out.
 *    The L3 alone does not overrule a server row: a hypervisor may
 *    synthesize the cache leaf (480 MiB is more than any Sapphire Rapids
 *    has), and the server rows differ from the class only in DRAM speed.
 * A row that has AMX (Sapphire/Emerald/Granite Rapids) is consistent with
 * all of these and stands: an Emerald Rapids VM that hides AMX is still
 * Emerald Rapids. Otherwise the class is sapphire_rapids (granite_rapids
 * with AMX-FP16): the two share the FMA and TMUL rates, and both their
 * server rows have 8 or more DDR5 channels per socket.
 *
 * Intel, AVX-512 on a row whose core has none (a client Skylake or hybrid
 * number) without the evidence above: the row is wrong, but the ISA does
 * not say how many 512-bit units the core has; the estimate from the ISA
 * (one unit) is used, and the bandwidth is left unknown.
 *
 * AMD: AVX-512 on a Zen, Zen 2 or Zen 3 row: the core is Zen 4 or later.
 * Zen 5 added AVX-VNNI (VEX), which Zen 4 lacks, so with it the class is
 * zen5 (512-bit pipes on the server parts), without it zen4 (one 512-bit op
 * per cycle, the lower of the two). AVX512-FP16 is not Intel-only for ever
 * (AMD adds it after Zen 5), which is why the Intel rules check the vendor.
 * The brand is no evidence on AMD: the EPYC 4004 is a Ryzen 7000 die and
 * rightly gets its 2-channel row.
 *
 * AVX512-BF16 and AVX-VNNI are no evidence on Intel: Cooper Lake, the
 * hybrid clients and the servers share them across rows. The hypervisor
 * bit is not evidence either (most VMs report their host's model), but the
 * note names it, as it is what makes a masked model number possible. */

/* Intel rows that are client cores (a "Xeon" with a server-sized L3
 * cannot be one of them). */
static bool intel_client_row(const struct uarch *u)
{
	static const char *const names[] = {
		"skylake", "ice_lake", "tiger_lake", "rocket_lake", "alder_lake", "raptor_lake",
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcmp(u->name, names[i]) == 0)
			return true;
	return false;
}

#define MIB (1024.0 * 1024.0)
#define SERVER_L3_BYTES (64 * MIB)

#define AMX_BITS (MACHINE_ISA_AMX_TILE | MACHINE_ISA_AMX_BF16 | MACHINE_ISA_AMX_INT8 | \
		  MACHINE_ISA_AMX_FP16)

/* The core class @m's ISA shows when it contradicts row @u (NULL: no row),
 * with the evidence and what the row lacks; NULL when nothing contradicts
 * it. "unknown" means the row is wrong but no class can be named. */
static const char *intel_class(const struct machine *m, const struct uarch *u, char *ev, size_t len,
			       const char **lacks)
{
	bool amx = m->isa & AMX_BITS;
	bool fp16 = (m->isa & MACHINE_ISA_AVX512_FP16) &&
		!(strstr(m->name, "Core") && !m->hypervisor);
	bool xeon_l3 = strstr(m->name, "Xeon") && m->l3_bytes >= SERVER_L3_BYTES &&
		u && intel_client_row(u);

	if (u && u->amx > 0)
		return NULL;
	if (amx || fp16 || xeon_l3) {
		if (amx)
			append(ev, len, "%s", (m->isa & MACHINE_ISA_AMX_TILE) ? "AMX-TILE" : "AMX");
		if (m->isa & MACHINE_ISA_AVX512_FP16)
			append(ev, len, "%sAVX512-FP16", ev[0] ? ", " : "");
		if (xeon_l3 && !amx && !fp16)
			append(ev, len, "%sa \"Xeon\" brand", ev[0] ? ", " : "");
		if (m->l3_bytes >= SERVER_L3_BYTES)
			append(ev, len, "%sa %.0f MiB L3", ev[0] ? ", " : "", m->l3_bytes / MIB);
		*lacks = amx || fp16 ? "which has no AMX or AVX512-FP16" : "a client core";
		return (m->isa & MACHINE_ISA_AMX_FP16) ? "granite_rapids" : "sapphire_rapids";
	}
	if (u && u->fma512 == 0 && (m->isa & MACHINE_ISA_AVX512F)) {
		append(ev, len, "AVX-512");
		if (m->isa & MACHINE_ISA_AVX512_FP16)
			append(ev, len, ", AVX512-FP16");
		*lacks = "which has no AVX-512";
		return "unknown";
	}
	return NULL;
}

static const char *amd_class(const struct machine *m, const struct uarch *u, char *ev, size_t len,
			     const char **lacks)
{
	if (!u || u->fma512 > 0 || !(m->isa & MACHINE_ISA_AVX512F))
		return NULL;
	append(ev, len, "AVX-512");
	if (m->isa & MACHINE_ISA_AVX512_BF16)
		append(ev, len, ", AVX512-BF16");
	if (m->isa & MACHINE_ISA_AVX_VNNI)
		append(ev, len, ", AVX-VNNI");
	*lacks = "which has no AVX-512";
	return (m->isa & MACHINE_ISA_AVX_VNNI) ? "zen5" : "zen4";
}

void machine_identify(struct machine *m)
{
	const struct uarch *u;
	const char *cls = NULL, *lacks = "";
	char ev[192] = "";

	if (!m)
		return;
	u = uarch_by_identity(m);
	m->uarch_from_isa = 0;
	m->ident_note[0] = '\0';
	set_str(m->uarch, sizeof(m->uarch), u ? u->name : "unknown");
	if (strcmp(m->vendor, INTEL) == 0)
		cls = intel_class(m, u, ev, sizeof(ev), &lacks);
	else if (strcmp(m->vendor, AMD) == 0)
		cls = amd_class(m, u, ev, sizeof(ev), &lacks);
	/* no row and no class: the estimate from the ISA, nothing to say */
	if (!cls || (!u && strcmp(cls, "unknown") == 0))
		return;
	m->uarch_from_isa = 1;
	set_str(m->uarch, sizeof(m->uarch), cls);
	if (!u) {
		/* an unknown model with AMX or FP16 is still of that class */
		snprintf(m->ident_note, sizeof(m->ident_note),
			 "%s class from the ISA: CPUID family %d model %d is not in the table, and "
			 "the CPU reports %s", cls, m->family, m->model, ev);
		return;
	}
	snprintf(m->ident_note, sizeof(m->ident_note),
		 "%s class from the ISA: CPUID family %d model %d names %s (%s), %s, but the CPU "
		 "reports %s%s", strcmp(cls, "unknown") ? cls : "estimated", m->family, m->model,
		 u->name, u->platform ? u->platform : "no platform", lacks, ev,
		 m->hypervisor ? " (a hypervisor may mask the model number)" : "");
}

/* ------------------------------------------------------------------ */
/* Probing                                                             */
/* ------------------------------------------------------------------ */

#if MACHINE_X86
/* XCR0 says which register state the OS saves on context switch; without
 * it the instructions fault (#UD), so a CPU flag alone does not make a peak. */
static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

#define XCR0_AVX    0x6ull       /* SSE + AVX (ymm upper halves) */
#define XCR0_AVX512 0xE6ull      /* + opmask, zmm upper halves, zmm16-31 */
#define XCR0_AMX    0x60000ull   /* XTILECFG + XTILEDATA */

/* The L3 of one socket from the deterministic cache parameters: Intel
 * leaf 4, AMD leaf 0x8000001D (same layout): ways x partitions x line size
 * x sets. A VM shows the host's cache, which is what identifies its class. */
static double l3_size(const char *vendor, unsigned max_leaf)
{
	unsigned leaf = 4, a, b, c, d;

	if (strcmp(vendor, "AuthenticAMD") == 0) {
		if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x8000001D)
			return 0;
		leaf = 0x8000001D;
	} else if (max_leaf < 4) {
		return 0;
	}
	for (unsigned sub = 0; sub < 16; sub++) {
		__cpuid_count(leaf, sub, a, b, c, d);
		if ((a & 0x1F) == 0)
			break; /* no more caches */
		if (((a >> 5) & 0x7) == 3)
			return (double)(((b >> 22) & 0x3FF) + 1) * (((b >> 12) & 0x3FF) + 1) *
			       ((b & 0xFFF) + 1) * ((double)c + 1);
	}
	return 0;
}

static void probe_cpuid(struct machine *m, unsigned *leaf16_mhz, double *tsc_hz)
{
	unsigned a, b, c, d, max_leaf, max_sub7 = 0;
	unsigned fam, mod, ext_fam, ext_mod;
	uint64_t xcr0 = 0;
	bool os_avx, os_avx512, os_amx;

	if (!__get_cpuid(0, &max_leaf, &b, &c, &d))
		return;
	memcpy(m->vendor, &b, 4);
	memcpy(m->vendor + 4, &d, 4);
	memcpy(m->vendor + 8, &c, 4);
	m->vendor[12] = '\0';

	if (!__get_cpuid(1, &a, &b, &c, &d))
		return;
	fam = (a >> 8) & 0xF;
	mod = (a >> 4) & 0xF;
	ext_fam = (a >> 20) & 0xFF;
	ext_mod = (a >> 16) & 0xF;
	m->stepping = (int)(a & 0xF);
	/* The display family/model rule of the Intel SDM (CPUID leaf 1) and
	 * the AMD APM: extended family only for family 0xF, extended model
	 * for families 6 and 0xF. */
	m->family = (int)(fam == 0xF ? fam + ext_fam : fam);
	m->model = (int)((fam == 6 || fam == 0xF) ? (ext_mod << 4) + mod : mod);

	m->hypervisor = (c >> 31) & 1;
	if (c & (1u << 27))                 /* OSXSAVE: XGETBV is usable */
		xcr0 = xgetbv0();
	os_avx = (xcr0 & XCR0_AVX) == XCR0_AVX;
	os_avx512 = (xcr0 & XCR0_AVX512) == XCR0_AVX512;
	os_amx = (xcr0 & XCR0_AMX) == XCR0_AMX;

	if (d & (1u << 26))
		m->isa |= MACHINE_ISA_SSE2;
	if (os_avx && (c & (1u << 28)))
		m->isa |= MACHINE_ISA_AVX;
	if (os_avx && (c & (1u << 12)))
		m->isa |= MACHINE_ISA_FMA;

	if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
		max_sub7 = a;
		if (os_avx && (b & (1u << 5)))
			m->isa |= MACHINE_ISA_AVX2;
		if (os_avx512 && (b & (1u << 16)))
			m->isa |= MACHINE_ISA_AVX512F;
		if (os_avx512 && (d & (1u << 23)))
			m->isa |= MACHINE_ISA_AVX512_FP16;
		if (os_amx && (d & (1u << 22)))
			m->isa |= MACHINE_ISA_AMX_BF16;
		if (os_amx && (d & (1u << 24)))
			m->isa |= MACHINE_ISA_AMX_TILE;
		if (os_amx && (d & (1u << 25)))
			m->isa |= MACHINE_ISA_AMX_INT8;
		if (os_avx512 && (c & (1u << 11)))
			m->isa |= MACHINE_ISA_AVX512_VNNI;
		if (d & (1u << 15))
			m->isa |= MACHINE_ISA_HYBRID;
	}
	if (max_sub7 >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &d)) {
		if (os_avx && (a & (1u << 4)))
			m->isa |= MACHINE_ISA_AVX_VNNI;
		if (os_avx512 && (a & (1u << 5)))
			m->isa |= MACHINE_ISA_AVX512_BF16;
		if (os_amx && (a & (1u << 21)))
			m->isa |= MACHINE_ISA_AMX_FP16;
	}

	if (__get_cpuid(0x16, &a, &b, &c, &d))
		*leaf16_mhz = a & 0xFFFF;
	/* Leaf 0x15: TSC = crystal x EBX / EAX; ECX (crystal Hz) is 0 on many
	 * parts and on VMs, and then the ratio says nothing. */
	if (__get_cpuid(0x15, &a, &b, &c, &d) && a && b && c)
		*tsc_hz = (double)c * b / a;

	m->l3_bytes = l3_size(m->vendor, max_leaf);
	if (__get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x80000004) {
		unsigned regs[12] = { 0 };

		for (unsigned i = 0; i < 3; i++)
			__get_cpuid(0x80000002 + i, &regs[i * 4], &regs[i * 4 + 1],
				    &regs[i * 4 + 2], &regs[i * 4 + 3]);
		memcpy(m->name, regs, 48);
		m->name[48] = '\0';
		trim(m->name);
	}
}
#endif

/* "... CPU @ 2.70GHz": Intel brand strings end in the nominal frequency. */
static int freq_from_brand(const char *brand, double *hz)
{
	const char *at = strrchr(brand, '@');
	char *end;
	double v;

	if (!at)
		return -ENOENT;
	at++;
	while (*at == ' ')
		at++;
	if (!isdigit((unsigned char)*at))
		return -ENOENT;
	errno = 0;
	v = strtod(at, &end);
	if (errno || !isfinite(v) || v <= 0)
		return -ENOENT;
	if (strncmp(end, "GHz", 3) == 0)
		*hz = v * 1e9;
	else if (strncmp(end, "MHz", 3) == 0)
		*hz = v * 1e6;
	else
		return -ENOENT;
	return 0;
}

/* The first "cpu MHz" line of /proc/cpuinfo. On a VM it is the TSC rate the
 * hypervisor announced; on bare metal with cpufreq it is a current clock,
 * which is why it is the last resort. */
static int freq_from_cpuinfo(double *hz)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f;
	int err = -ENOENT;

	f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *colon;
		double mhz;

		if (strncmp(line, "cpu MHz", 7) != 0)
			continue;
		colon = strchr(line, ':');
		if (!colon)
			continue;
		colon++;
		trim(colon);
		if (safe_atod(colon, &mhz) == 0 && mhz > 0) {
			*hz = mhz * 1e6;
			err = 0;
		}
		break;
	}
	free(line);
	fclose(f);
	return err;
}

static void probe_frequency(struct machine *m, unsigned leaf16_mhz, double tsc_hz)
{
	uint64_t khz;
	double hz = 0;

	if (leaf16_mhz) {
		m->nominal_hz = leaf16_mhz * 1e6;
		set_str(m->nominal_hz_source, sizeof(m->nominal_hz_source), "cpuid leaf 0x16");
	} else if (freq_from_brand(m->name, &hz) == 0) {
		m->nominal_hz = hz;
		set_str(m->nominal_hz_source, sizeof(m->nominal_hz_source), "brand string");
	} else if (read_u64_file("/sys/devices/system/cpu/cpu0/cpufreq/base_frequency", &khz) == 0 &&
		   khz > 0) {
		/* intel_pstate's base (non-turbo) frequency, in kHz. */
		m->nominal_hz = (double)khz * 1e3;
		set_str(m->nominal_hz_source, sizeof(m->nominal_hz_source), "cpufreq base_frequency");
	} else if (read_u64_file("/sys/devices/system/cpu/cpu0/cpufreq/amd_pstate_nominal_freq",
				 &khz) == 0 && khz > 0) {
		/* AMD parts have neither leaf 0x16 nor a frequency in the brand
		 * string; amd-pstate publishes the nominal one, in kHz. */
		m->nominal_hz = (double)khz * 1e3;
		set_str(m->nominal_hz_source, sizeof(m->nominal_hz_source),
			"cpufreq amd_pstate_nominal_freq");
	} else if (tsc_hz > 0) {
		m->nominal_hz = tsc_hz;
		set_str(m->nominal_hz_source, sizeof(m->nominal_hz_source), "cpuid leaf 0x15 (TSC)");
	} else if (freq_from_cpuinfo(&hz) == 0) {
		m->nominal_hz = hz;
		set_str(m->nominal_hz_source, sizeof(m->nominal_hz_source), "/proc/cpuinfo cpu MHz");
	}
}

/* An int from a small sysfs file, -ENOENT or -EINVAL. */
static int read_int_file(const char *path, int *v)
{
	char buf[32];

	if (read_sysfs(path, buf, sizeof(buf)))
		return -ENOENT;
	trim(buf);
	return safe_atoi(buf, v);
}

/* A sysfs cache size: "32768K" (the kernel writes KiB with a K), also
 * accepting M and a bare byte count. */
static int parse_cache_size(const char *s, double *bytes)
{
	char num[32];
	size_t n = strspn(s, "0123456789");
	uint64_t v;
	double unit = 1;

	if (n == 0 || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = '\0';
	if (safe_atou64(num, &v))
		return -EINVAL;
	if (s[n] == 'K')
		unit = 1024, n++;
	else if (s[n] == 'M')
		unit = MIB, n++;
	if (s[n] != '\0')
		return -EINVAL;
	*bytes = (double)v * unit;
	return 0;
}

int machine_l3_from_sysfs(const char *sysfs_cpu, int cpu, double *bytes)
{
	if (!sysfs_cpu || cpu < 0 || !bytes)
		return -EINVAL;
	*bytes = 0;
	/* indexN are numbered by the kernel's cache walk, not by level: look
	 * for the one whose level is 3 */
	for (int i = 0; i < 16; i++) {
		char path[PATH_MAX], buf[32];
		int level;

		if (strbuf(path, sizeof(path), "%s/cpu%d/cache/index%d/level", sysfs_cpu, cpu, i))
			return -ENAMETOOLONG;
		if (read_int_file(path, &level))
			break;
		if (level != 3)
			continue;
		if (strbuf(path, sizeof(path), "%s/cpu%d/cache/index%d/size", sysfs_cpu, cpu, i))
			return -ENAMETOOLONG;
		if (read_sysfs(path, buf, sizeof(buf)))
			return -ENOENT;
		trim(buf);
		return parse_cache_size(buf, bytes);
	}
	return -ENOENT;
}

/* Physical cores (distinct package and core id) and sockets of the CPUs
 * in @set: SMT siblings share a core's FMA units, so FLOP peaks count
 * cores. */
static int topology_of(const cpu_set_t *set, size_t setsize, unsigned ncpus, const char *sysfs_cpu,
		       int *cores, int *sockets)
{
	/* (package, core) pairs seen; a VM has few, a big host a few hundred */
	struct pair { int pkg, core; } *seen = NULL;
	int npairs = 0, pkgs[256], npkgs = 0, lone = 0;
	size_t cap = 0;

	for (unsigned c = 0; c < ncpus; c++) {
		char path[PATH_MAX];
		int pkg, core, k;

		if (!CPU_ISSET_S(c, setsize, set))
			continue;
		snprintf(path, sizeof(path), "%s/cpu%u/topology/physical_package_id", sysfs_cpu, c);
		if (read_int_file(path, &pkg))
			pkg = 0;
		snprintf(path, sizeof(path), "%s/cpu%u/topology/core_id", sysfs_cpu, c);
		if (read_int_file(path, &core)) {
			lone++; /* no topology: a core of its own */
		} else {
			for (k = 0; k < npairs && (seen[k].pkg != pkg || seen[k].core != core); k++)
				;
			if (k == npairs) {
				if (array_grow(&seen, &cap, (size_t)npairs + 1, sizeof(*seen))) {
					free(seen);
					return -ENOMEM;
				}
				seen[npairs].pkg = pkg;
				seen[npairs].core = core;
				npairs++;
			}
		}
		for (k = 0; k < npkgs && pkgs[k] != pkg; k++)
			;
		if (k == npkgs && npkgs < (int)ARRAY_SIZE(pkgs))
			pkgs[npkgs++] = pkg;
	}
	free(seen);
	*cores = npairs + lone;
	*sockets = npkgs ? npkgs : 1;
	return 0;
}

int machine_topology_count(const char *cpulist, const char *sysfs_cpu, int *cores, int *sockets)
{
	cpu_set_t *set;
	size_t setsize = CPU_ALLOC_SIZE(MAX_CPUS);
	int err;

	if (!cpulist || !sysfs_cpu || !cores || !sockets)
		return -EINVAL;
	set = CPU_ALLOC(MAX_CPUS);
	if (!set)
		return -ENOMEM;
	err = cpulist_parse(cpulist, set, setsize, MAX_CPUS);
	if (!err)
		err = topology_of(set, setsize, MAX_CPUS, sysfs_cpu, cores, sockets);
	CPU_FREE(set);
	return err;
}

/* The affinity mask of @tid into @set (grown until the kernel accepts its
 * size: its nr_cpu_ids rounded up). */
static int get_affinity(pid_t tid, cpu_set_t **set, size_t *setsize, unsigned *ncpus)
{
	for (;;) {
		if (!*set) {
			*set = CPU_ALLOC(*ncpus);
			if (!*set)
				return -ENOMEM;
			*setsize = CPU_ALLOC_SIZE(*ncpus);
		}
		CPU_ZERO_S(*setsize, *set);
		if (sched_getaffinity(tid, *setsize, *set) == 0)
			return 0;
		if (errno != EINVAL || *ncpus >= MAX_CPUS)
			return -errno;
		CPU_FREE(*set);
		*set = NULL;
		*ncpus *= 2;
	}
}

/* The union of the affinity masks of @pid's threads: a runtime may pin
 * its main thread to one CPU (OpenMP's OMP_PROC_BIND does) and its workers
 * to the others, and the process may use them all. */
static int process_affinity(pid_t pid, cpu_set_t **set, size_t *setsize, unsigned *ncpus)
{
	char dir[64];
	DIR *d;
	struct dirent *e;
	cpu_set_t *one = NULL;
	size_t onesize = 0;
	int err;

	err = get_affinity(pid, set, setsize, ncpus);
	if (err || pid == 0)
		return err;
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	d = opendir(dir);
	if (!d)
		return 0; /* the main thread's mask stands */
	while ((e = readdir(d))) {
		int tid;
		unsigned n = *ncpus;

		if (safe_atoi(e->d_name, &tid) || tid <= 0 || tid == pid)
			continue;
		if (get_affinity(tid, &one, &onesize, &n))
			continue; /* a thread that just exited */
		if (n != *ncpus)
			continue; /* cannot happen: one kernel, one size */
		CPU_OR_S(*setsize, *set, *set, one);
	}
	closedir(d);
	CPU_FREE(one);
	return 0;
}

int machine_probe_cpus(struct machine *m, pid_t pid)
{
	return machine_probe_cpus_at(m, pid, "/sys/devices/system/cpu", "/sys/fs/cgroup");
}

int machine_probe_cpus_at(struct machine *m, pid_t pid, const char *sysfs_cpu,
			  const char *cgroup_root)
{
	unsigned ncpus = 1024;
	cpu_set_t *set = NULL;
	size_t setsize = 0;
	char cg[64];
	double quota = 0;
	int err, cores = 0, sockets = 1;

	if (!m || pid < 0 || !sysfs_cpu || !cgroup_root)
		return -EINVAL;
	err = process_affinity(pid, &set, &setsize, &ncpus);
	if (err)
		goto out;
	m->ncpu_affinity = CPU_COUNT_S(setsize, set);
	cpulist_format(set, setsize, ncpus, m->allowed_cpus, sizeof(m->allowed_cpus));
	err = topology_of(set, setsize, ncpus, sysfs_cpu, &cores, &sockets);
	if (err)
		goto out;
	m->sockets = sockets;
	m->ncores_affinity = cores > 0 ? cores : m->ncpu_affinity;

	/* A quota we cannot read is left unknown (0): the affinity still
	 * bounds the CPUs, and a probe should not fail over it. */
	if (pid)
		snprintf(cg, sizeof(cg), "/proc/%d/cgroup", (int)pid);
	else
		snprintf(cg, sizeof(cg), "/proc/self/cgroup");
	m->cpu_quota = 0;
	if (machine_cgroup_quota(cgroup_root, cg, &quota) == 0)
		m->cpu_quota = quota;
	m->ncpu = m->ncpu_affinity;
	if (m->cpu_quota > 0 && m->cpu_quota < m->ncpu)
		m->ncpu = m->cpu_quota;
	/* a quota of 1.5 CPUs lets 1.5 cores' worth of threads run at once */
	m->ncores = m->ncores_affinity;
	if (m->cpu_quota > 0 && m->cpu_quota < m->ncores)
		m->ncores = m->cpu_quota;
out:
	CPU_FREE(set);
	return err;
}

int machine_probe(struct machine *m)
{
	unsigned leaf16_mhz = 0;
	double tsc_hz = 0;

	if (!m)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	set_str(m->vendor, sizeof(m->vendor), "unknown");
	set_str(m->uarch, sizeof(m->uarch), "unknown");
#if MACHINE_X86
	probe_cpuid(m, &leaf16_mhz, &tsc_hz);
#endif
	/* cpuid leaves 4 / 0x8000001D may be absent (older AMD, other
	 * architectures) or zeroed by a hypervisor; the kernel's cache
	 * attributes may still know. Only a hint for identification. */
	if (!(m->l3_bytes > 0)) {
		double l3;

		if (machine_l3_from_sysfs("/sys/devices/system/cpu", 0, &l3) == 0)
			m->l3_bytes = l3;
	}
	machine_identify(m);
	probe_frequency(m, leaf16_mhz, tsc_hz);
	return machine_probe_cpus(m, 0);
}

/* ------------------------------------------------------------------ */
/* Peaks                                                               */
/* ------------------------------------------------------------------ */

static int no_support(double *fpc, char *detail, size_t len, const char *why)
{
	*fpc = 0;
	set_str(detail, len, why);
	return -ENOENT;
}

static bool note_is_512_only(const char *note)
{
	return note == skx_1fma_note || note == zen4_note || note == zen5_mobile_note;
}

int machine_flops_per_cycle(const struct machine *m, enum machine_dtype dtype,
			    double *fpc, char *detail, size_t len)
{
	const struct uarch *u;
	bool estimated = false, wide = false, fma;
	unsigned isa;
	int n, bits, lanes;

	if (!m || !fpc || (int)dtype < 0 || dtype >= MACHINE_NDTYPES)
		return -EINVAL;
	*fpc = 0;
	set_str(detail, len, "");
	isa = m->isa;
	u = uarch_find(m);
	if (!u) {
		if (!(isa & (MACHINE_ISA_SSE2 | MACHINE_ISA_AVX | MACHINE_ISA_AVX512F)))
			return no_support(fpc, detail, len,
					  "unknown microarchitecture and no ISA flags");
		u = &uarch_estimate;
		estimated = true;
		set_str(detail, len, "estimated from ISA (unknown microarchitecture): ");
	}

	if (dtype == MACHINE_INT8) {
		/* Ops: a multiply-add of two int8 values counts 2, like a FLOP
		 * of an FMA. */
		if ((isa & MACHINE_ISA_AMX_INT8) && (isa & MACHINE_ISA_AMX_TILE) && u->amx > 0) {
			*fpc = u->amx * 2.0;
			append(detail, len, "AMX TMUL, int8: TDPBSSD 16x16x64 MACs x 2 = 32768 ops per 16 cycles");
			if (estimated)
				append(detail, len, " (the Sapphire Rapids TMUL rate)");
			goto done;
		}
		if ((isa & MACHINE_ISA_AVX512_VNNI) && (isa & MACHINE_ISA_AVX512F) && u->fma512 > 0) {
			/* VPDPBUSD zmm: 16 int32 lanes x 4 byte products, on the
			 * FMA pipes */
			*fpc = u->fma512 * 16.0 * 4 * 2;
			wide = true;
			append(detail, len, "%dx 512-bit VPDPBUSD/cycle, int8: %d x 16 lanes x 4 products x 2 ops",
			       u->fma512, u->fma512);
			goto done;
		}
		if ((isa & MACHINE_ISA_AVX_VNNI) && u->fma256 > 0) {
			*fpc = u->fma256 * 8.0 * 4 * 2;
			append(detail, len, "%dx 256-bit VPDPBUSD (AVX-VNNI)/cycle, int8: %d x 8 lanes x 4 products x 2 ops",
			       u->fma256, u->fma256);
			goto done;
		}
		return no_support(fpc, detail, len,
				  "no int8 dot-product instructions: neither AMX-INT8, AVX512-VNNI nor AVX-VNNI");
	}

	if (dtype == MACHINE_BF16 || dtype == MACHINE_FP16) {
		unsigned amx_bit = dtype == MACHINE_BF16 ? MACHINE_ISA_AMX_BF16 : MACHINE_ISA_AMX_FP16;
		unsigned vec_bit = dtype == MACHINE_BF16 ? MACHINE_ISA_AVX512_BF16 :
			MACHINE_ISA_AVX512_FP16;

		if ((isa & amx_bit) && (isa & MACHINE_ISA_AMX_TILE) && u->amx > 0) {
			*fpc = u->amx;
			append(detail, len,
			       "AMX TMUL, %s: %s 16x16x32 MACs x 2 = 16384 FLOPs per 16 cycles",
			       machine_dtype_name(dtype),
			       dtype == MACHINE_BF16 ? "TDPBF16PS" : "TDPFP16PS");
			if (estimated)
				append(detail, len, " (the Sapphire Rapids TMUL rate)");
			append(detail, len, "; FP_ARITH counters do not count AMX FLOPs");
			goto done;
		}
		if ((isa & vec_bit) && (isa & MACHINE_ISA_AVX512F) && u->fma512 > 0) {
			/* VDPBF16PS: 16 fp32 lanes x 2 bf16 products, each a
			 * multiply-add; an AVX512_FP16 FMA has 32 fp16 lanes.
			 * Both issue like a 512-bit FMA. */
			*fpc = u->fma512 * 16.0 * 2 * 2;
			wide = true;
			if (dtype == MACHINE_BF16)
				append(detail, len,
				       "%dx 512-bit VDPBF16PS/cycle, bf16: %d x 16 lanes x 2 pairs x 2",
				       u->fma512, u->fma512);
			else
				append(detail, len,
				       "%dx 512-bit FP16 FMA/cycle, fp16: %d x 32 lanes x 2",
				       u->fma512, u->fma512);
			goto done;
		}
		return no_support(fpc, detail, len, dtype == MACHINE_BF16 ?
				  "no bf16 arithmetic: neither AMX-BF16 nor AVX512_BF16 is usable" :
				  "no fp16 arithmetic: neither AMX-FP16 nor AVX512_FP16 is usable");
	}

	/* fp64/fp32: the widest vectors both the core and the OS-enabled ISA
	 * allow (a VM may hide the AVX-512 of an AVX-512 core). */
	if ((isa & MACHINE_ISA_AVX512F) && u->fma512 > 0) {
		n = u->fma512, bits = 512, fma = true;
	} else if ((isa & MACHINE_ISA_AVX) && (isa & MACHINE_ISA_FMA)) {
		n = u->fma256, bits = 256, fma = true;
	} else if (isa & MACHINE_ISA_AVX) {
		n = u->fma256, bits = 256, fma = false;
	} else if (isa & MACHINE_ISA_SSE2) {
		n = u->fma128, bits = 128, fma = false;
	} else {
		return no_support(fpc, detail, len, "no SSE2 or AVX usable: no vector FLOP peak");
	}
	wide = bits == 512;
	lanes = bits / (dtype == MACHINE_FP64 ? 64 : 32);
	*fpc = (double)n * lanes * (fma ? 2 : 1);
	if (fma)
		append(detail, len, "%dx %d-bit FMA/cycle, %s: %d x %d lanes x 2", n, bits,
		       machine_dtype_name(dtype), n, lanes);
	else
		append(detail, len, "%dx %d-bit add or mul/cycle (no FMA), %s: %d x %d lanes",
		       n, bits, machine_dtype_name(dtype), n, lanes);
	if (estimated && wide)
		append(detail, len, "; assumed 1 FMA unit (some AVX-512 cores have 2)");
done:
	if (u->fpu_note && (wide || !note_is_512_only(u->fpu_note)))
		append(detail, len, "; %s", u->fpu_note);
	return 0;
}

/* "2 CPUs", "1 CPU", "1.5 CPUs" */
static void format_count(char *buf, size_t len, double v, const char *unit)
{
	snprintf(buf, len, "%g %s%s", v, unit, v == 1 ? "" : "s");
}

int machine_peak_flops(const struct machine *m, enum machine_dtype dtype, double ncores,
		       double *flops, char *detail, size_t len)
{
	const struct uarch *u;
	char basis[256], cores[64];
	double fpc;
	int err;

	if (!m || !flops || !(ncores > 0) || !isfinite(ncores))
		return -EINVAL;
	*flops = 0;
	set_str(detail, len, "");
	err = machine_flops_per_cycle(m, dtype, &fpc, basis, sizeof(basis));
	if (err) {
		set_str(detail, len, basis);
		return err;
	}
	if (!(m->nominal_hz > 0)) {
		set_str(detail, len, "no spec peak: the nominal frequency is unknown");
		return -ENOENT;
	}
	*flops = ncores * m->nominal_hz * fpc;
	u = uarch_find(m);
	format_count(cores, sizeof(cores), ncores, "core");
	/* SMT siblings share their core's FMA units: when the CPU set has
	 * more CPUs than cores, say that the count is of cores (not for the
	 * one-core figure, which is about no CPU set) */
	if (ncores > 1 && m->ncores_affinity > 0 && m->ncpu_affinity > m->ncores_affinity) {
		if (m->ncpu_affinity % m->ncores_affinity == 0)
			append(cores, sizeof(cores), " (%d CPUs, %d threads per core)", m->ncpu_affinity,
			       m->ncpu_affinity / m->ncores_affinity);
		else
			append(cores, sizeof(cores), " (%d CPUs on %d cores)", m->ncpu_affinity,
			       m->ncores_affinity);
	}
	snprintf(detail, len, "spec: %.2f GHz nominal (%s) x %s x %g %s/cycle (%s) [%s]",
		 m->nominal_hz / 1e9, m->nominal_hz_source[0] ? m->nominal_hz_source : "given",
		 cores, fpc, machine_dtype_is_integer(dtype) ? "op" : "FLOP", basis, u ? u->name : "unknown");
	if (m->clock_hz > 0 && fabs(m->clock_hz / m->nominal_hz - 1) > 0.05)
		append(detail, len, "; the core clock measured %.2f GHz (%s)", m->clock_hz / 1e9,
		       m->clock_hz_source[0] ? m->clock_hz_source : "mfu-calibrate");
	if (m->ident_note[0])
		append(detail, len, "; %s", m->ident_note);
	return 0;
}

int machine_peak_bw(const struct machine *m, double *bytes_per_s, char *detail, size_t len)
{
	const struct uarch *u;
	char sockets[32];
	int ns;

	if (!m || !bytes_per_s)
		return -EINVAL;
	*bytes_per_s = 0;
	set_str(detail, len, "");
	u = uarch_find(m);
	if (!u || u->channels == 0) {
		snprintf(detail, len,
			 "no spec bandwidth for microarchitecture '%s'%s; measure it with "
			 "mfu-calibrate or pass --peak-bw",
			 m->uarch[0] ? m->uarch : "unknown", u ? " on this platform" : "");
		/* the model's own row names a platform, but it was distrusted */
		if (m->uarch_from_isa)
			append(detail, len, " (the platform of CPUID model %d is not used: %s)", m->model,
			       m->ident_note);
		return -ENOENT;
	}
	/* The spec figure: every channel populated at the rated speed. On a VM
	 * only a share of the host's channels serves us; mfu-calibrate measures
	 * what is really reachable. */
	ns = m->sockets > 0 ? m->sockets : 1;
	*bytes_per_s = (double)ns * u->channels * u->mts * 1e6 * 8;
	format_count(sockets, sizeof(sockets), ns, "socket");
	snprintf(detail, len, "spec: %s x %d channels x %d MT/s x 8 B [%s, %s, %s]", sockets,
		 u->channels, u->mts, u->name, u->dram, u->platform);
	if (m->ident_note[0])
		append(detail, len, "; %s", m->ident_note);
	return 0;
}
