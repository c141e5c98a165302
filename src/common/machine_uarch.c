/* The microarchitecture table (machine_impl.h). */
#include "machine_impl.h"

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

#define ANY_STEP 0, 15

/* Notes on the 512-bit rate only; arrays so that their addresses identify
 * them (machine_flops_per_cycle drops them when 512-bit ops are not used). */
const char skx_1fma_note[] = "this SKU has no port-5 FMA unit";
const char zen4_note[] = "512-bit ops run as two halves on the 256-bit pipes";
const char zen5_mobile_note[] = "mobile Zen 5: 256-bit FP pipes";
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
const struct uarch uarch_estimate = {
	NULL, 0, 0, 0, ANY_STEP, NULL, "unknown", 2, 2, 1, 1024, NULL, 0, 0, NULL, NULL,
};

static bool brand_has(const char *brand, const char *needle)
{
	return needle == NULL || strstr(brand, needle) != NULL;
}

/* The table row for @m's identity (vendor, family, model, stepping, brand),
 * NULL if none. */
const struct uarch *uarch_by_identity(const struct machine *m)
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
const struct uarch *uarch_find(const struct machine *m)
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

