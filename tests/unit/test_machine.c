/* The machine model: CPU lists, dtypes, the peak table on hand-built
 * machines (numbers computed by hand in the rows), cgroup quotas on fixture
 * trees, and a probe of the machine the test runs on. */
#include "check.h"
#include "machine.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <string.h>
#include <unistd.h>

#define FIXTURES SRCDIR "/tests/unit/fixtures/cgroup/"
#define TOPOLOGY SRCDIR "/tests/unit/fixtures/topology/"

#define ISA_AVX2 (MACHINE_ISA_SSE2 | MACHINE_ISA_AVX | MACHINE_ISA_FMA | MACHINE_ISA_AVX2)
#define ISA_AVX512 (ISA_AVX2 | MACHINE_ISA_AVX512F)
#define ISA_SPR (ISA_AVX512 | MACHINE_ISA_AVX512_BF16 | MACHINE_ISA_AVX512_FP16 | \
		 MACHINE_ISA_AMX_BF16 | MACHINE_ISA_AMX_TILE | MACHINE_ISA_AVX_VNNI | \
		 MACHINE_ISA_AVX512_VNNI | MACHINE_ISA_AMX_INT8)
#define ISA_ZEN4 (ISA_AVX512 | MACHINE_ISA_AVX512_BF16)

#define NONE (-1.0) /* the dtype has no peak: -ENOENT */

static void test_cpulist(void)
{
	static const struct { int line; const char *list; int want; } rows[] = {
		{ __LINE__, "0", 1 },
		{ __LINE__, "0-3", 4 },
		{ __LINE__, "0-3,8", 5 },
		{ __LINE__, "0-3,8,10-11", 7 },
		{ __LINE__, "5-5", 1 },
		{ __LINE__, "0-3,2", 4 },          /* overlap counts once */
		{ __LINE__, "007", 1 },
		{ __LINE__, "65535", 1 },
		{ __LINE__, "0-65535", 65536 },
		{ __LINE__, "", -EINVAL },
		{ __LINE__, "1-", -EINVAL },
		{ __LINE__, "3-1", -EINVAL },
		{ __LINE__, "a", -EINVAL },
		{ __LINE__, "-1", -EINVAL },
		{ __LINE__, ",", -EINVAL },
		{ __LINE__, "1,", -EINVAL },
		{ __LINE__, ",1", -EINVAL },
		{ __LINE__, "1,,2", -EINVAL },
		{ __LINE__, "1-2-3", -EINVAL },
		{ __LINE__, "1-a", -EINVAL },
		{ __LINE__, " 1", -EINVAL },
		{ __LINE__, "1 ", 1 },             /* sysfs's trailing newline */
		{ __LINE__, "1\n", 1 },
		{ __LINE__, "0x1", -EINVAL },
		{ __LINE__, "65536", -EINVAL },
		{ __LINE__, "99999999999999999999999", -EINVAL },
		{ __LINE__, "0-18446744073709551617", -EINVAL },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		CHECK_ROW(machine_cpulist_count(rows[i].list) == rows[i].want, rows[i].line);
	CHECK(machine_cpulist_count(NULL) == -EINVAL);
}

static void test_dtype(void)
{
	CHECK_EQ_INT(machine_dtype_parse("fp64"), MACHINE_FP64);
	CHECK_EQ_INT(machine_dtype_parse("fp32"), MACHINE_FP32);
	CHECK_EQ_INT(machine_dtype_parse("bf16"), MACHINE_BF16);
	CHECK_EQ_INT(machine_dtype_parse("fp16"), MACHINE_FP16);
	CHECK_EQ_INT(machine_dtype_parse("bfloat16"), MACHINE_BF16);
	CHECK_EQ_INT(machine_dtype_parse("float32"), MACHINE_FP32);
	CHECK_EQ_INT(machine_dtype_parse("FP32"), -EINVAL);
	CHECK_EQ_INT(machine_dtype_parse("fp8"), -EINVAL);
	CHECK_EQ_INT(machine_dtype_parse(""), -EINVAL);
	CHECK_EQ_INT(machine_dtype_parse(NULL), -EINVAL);
	for (int d = 0; d < MACHINE_NDTYPES; d++)
		CHECK_EQ_INT(machine_dtype_parse(machine_dtype_name((enum machine_dtype)d)), d);
	CHECK_STR(machine_dtype_name(MACHINE_NDTYPES), "unknown");
}

static void test_isa_string(void)
{
	char buf[256], small[10];

	machine_isa_string(MACHINE_ISA_SSE2 | MACHINE_ISA_AVX2 | MACHINE_ISA_AVX512F, buf, sizeof(buf));
	CHECK_STR(buf, "sse2 avx2 avx512f");
	machine_isa_string(0, buf, sizeof(buf));
	CHECK_STR(buf, "");
	machine_isa_string(MACHINE_ISA_AMX_BF16 | MACHINE_ISA_AMX_TILE | MACHINE_ISA_HYBRID, buf,
			   sizeof(buf));
	CHECK_STR(buf, "amx_bf16 amx_tile hybrid");
	/* A short buffer keeps whole names only. */
	machine_isa_string(MACHINE_ISA_SSE2 | MACHINE_ISA_AVX | MACHINE_ISA_AVX2, small, sizeof(small));
	CHECK_STR(small, "sse2 avx");
}

static struct machine make(const char *vendor, int family, int model, int stepping,
			   const char *brand, unsigned isa)
{
	struct machine m;

	memset(&m, 0, sizeof(m));
	snprintf(m.vendor, sizeof(m.vendor), "%s", vendor);
	m.family = family;
	m.model = model;
	m.stepping = stepping;
	snprintf(m.name, sizeof(m.name), "%s", brand);
	snprintf(m.uarch, sizeof(m.uarch), "unknown");
	m.isa = isa;
	m.nominal_hz = 2.0e9;
	snprintf(m.nominal_hz_source, sizeof(m.nominal_hz_source), "test");
	m.sockets = 1;
	machine_identify(&m);
	return m;
}

/* FLOPs/cycle per dtype (fp64, fp32, bf16, fp16; int8 ops/cycle) and spec
 * bandwidth for one socket, computed by hand: FMA ops/cycle x lanes x 2;
 * int8: AMX 2048, VPDPBUSD zmm units x 16 x 4 x 2, ymm (AVX-VNNI) units x
 * 8 x 4 x 2; channels x MT/s x 8. */
static const struct table_row {
	int line;
	const char *vendor;
	int family, model, stepping;
	const char *brand;
	unsigned isa;
	const char *uarch;
	double fpc[MACHINE_NDTYPES];
	double bw;
} table_rows[] = {
	/* SPR: 2x512 FMA = 2x8x2 / 2x16x2; AMX 1024; AVX512_FP16 2x32x2;
	 * 8 x 4800 MT/s x 8 B */
	{ __LINE__, "GenuineIntel", 6, 0x8F, 8, "Intel(R) Xeon(R) Platinum 8480+", ISA_SPR,
	  "sapphire_rapids", { 32, 64, 1024, 128, 2048 }, 307.2e9 },
	/* SPR in a VM that hides AMX: bf16 falls back to VDPBF16PS 2x16x2x2. */
	{ __LINE__, "GenuineIntel", 6, 0x8F, 8, "Intel(R) Xeon(R) Processor",
	  ISA_SPR & ~(MACHINE_ISA_AMX_BF16 | MACHINE_ISA_AMX_TILE),
	  "sapphire_rapids", { 32, 64, 128, 128, 256 }, 307.2e9 },
	/* SPR with AVX-512 state disabled: 2x256 FMA = 2x4x2; no bf16/fp16. */
	{ __LINE__, "GenuineIntel", 6, 0x8F, 8, "", ISA_AVX2,
	  "sapphire_rapids", { 16, 32, NONE, NONE, NONE }, 307.2e9 },
	/* EMR: as SPR; 8 x 5600 x 8 */
	{ __LINE__, "GenuineIntel", 6, 0xCF, 2, "", ISA_SPR,
	  "emerald_rapids", { 32, 64, 1024, 128, 2048 }, 358.4e9 },
	/* GNR with AMX-FP16: 12 x 6400 x 8 */
	{ __LINE__, "GenuineIntel", 6, 0xAD, 1, "Intel(R) Xeon(R) 6980P", ISA_SPR | MACHINE_ISA_AMX_FP16,
	  "granite_rapids", { 32, 64, 1024, 1024, 2048 }, 614.4e9 },
	/* ICX: 2x512 FMA, no bf16/fp16; 8 x 3200 x 8 */
	{ __LINE__, "GenuineIntel", 6, 0x6A, 6, "Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz",
	  ISA_AVX512, "ice_lake_sp", { 32, 64, NONE, NONE, NONE }, 204.8e9 },
	/* SKX Platinum: 2x512 FMA; 6 x 2666 x 8 */
	{ __LINE__, "GenuineIntel", 6, 0x55, 4, "Intel(R) Xeon(R) Platinum 8180 CPU @ 2.50GHz",
	  ISA_AVX512, "skylake_sp", { 32, 64, NONE, NONE, NONE }, 127.968e9 },
	/* SKX Silver: 1x512 FMA = 1x8x2 */
	{ __LINE__, "GenuineIntel", 6, 0x55, 4, "Intel(R) Xeon(R) Silver 4114 CPU @ 2.20GHz",
	  ISA_AVX512, "skylake_sp", { 16, 32, NONE, NONE, NONE }, 127.968e9 },
	/* SKX Gold 5122: the Gold 5 with two units */
	{ __LINE__, "GenuineIntel", 6, 0x55, 4, "Intel(R) Xeon(R) Gold 5122 CPU @ 3.60GHz",
	  ISA_AVX512, "skylake_sp", { 32, 64, NONE, NONE, NONE }, 127.968e9 },
	/* CLX Gold 5218: one unit; 6 x 2933 x 8 */
	{ __LINE__, "GenuineIntel", 6, 0x55, 7, "Intel(R) Xeon(R) Gold 5218 CPU @ 2.30GHz",
	  ISA_AVX512, "cascade_lake", { 16, 32, NONE, NONE, NONE }, 140.784e9 },
	/* CLX Gold 6248: two units */
	{ __LINE__, "GenuineIntel", 6, 0x55, 7, "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz",
	  ISA_AVX512, "cascade_lake", { 32, 64, NONE, NONE, NONE }, 140.784e9 },
	/* Cooper Lake: AVX512_BF16 2x16x2x2; 6 x 3200 x 8 */
	{ __LINE__, "GenuineIntel", 6, 0x55, 11, "Intel(R) Xeon(R) Platinum 8380H CPU @ 2.90GHz",
	  ISA_AVX512 | MACHINE_ISA_AVX512_BF16, "cooper_lake", { 32, 64, 128, NONE, NONE }, 153.6e9 },
	/* Coffee Lake client: 2x256 FMA; 2 x 2666 x 8 */
	{ __LINE__, "GenuineIntel", 6, 0x9E, 10, "Intel(R) Core(TM) i7-8700K CPU @ 3.70GHz",
	  ISA_AVX2, "skylake", { 16, 32, NONE, NONE, NONE }, 42.656e9 },
	/* Alder Lake (hybrid): P-core 2x256 FMA; 2 x 4800 x 8 */
	{ __LINE__, "GenuineIntel", 6, 0x97, 2, "12th Gen Intel(R) Core(TM) i9-12900K",
	  ISA_AVX2 | MACHINE_ISA_HYBRID | MACHINE_ISA_AVX_VNNI, "alder_lake",
	  { 16, 32, NONE, NONE, 128 }, 76.8e9 },
	/* Ice Lake client: 1x512 FMA = 16 */
	{ __LINE__, "GenuineIntel", 6, 0x7E, 5, "Intel(R) Core(TM) i7-1065G7 CPU @ 1.30GHz",
	  ISA_AVX512, "ice_lake", { 16, 32, NONE, NONE, NONE }, 51.2e9 },
	/* Zen 2 Rome: 2x256 FMA; 8 x 3200 x 8 */
	{ __LINE__, "AuthenticAMD", 0x17, 0x31, 0, "AMD EPYC 7742 64-Core Processor",
	  ISA_AVX2, "zen2", { 16, 32, NONE, NONE, NONE }, 204.8e9 },
	/* Zen 2 Threadripper 3000 shares Rome's model: 4 x 3200 x 8 */
	{ __LINE__, "AuthenticAMD", 0x17, 0x31, 0, "AMD Ryzen Threadripper 3970X 32-Core Processor",
	  ISA_AVX2, "zen2", { 16, 32, NONE, NONE, NONE }, 102.4e9 },
	/* Zen 3 Milan: 8 x 3200 x 8 */
	{ __LINE__, "AuthenticAMD", 0x19, 0x01, 1, "AMD EPYC 7763 64-Core Processor",
	  ISA_AVX2, "zen3", { 16, 32, NONE, NONE, NONE }, 204.8e9 },
	/* Zen 3 Vermeer: 2 x 3200 x 8 */
	{ __LINE__, "AuthenticAMD", 0x19, 0x21, 0, "AMD Ryzen 9 5950X 16-Core Processor",
	  ISA_AVX2, "zen3", { 16, 32, NONE, NONE, NONE }, 51.2e9 },
	/* Zen 4 Genoa: 1x512 (double-pumped) = 16; bf16 1x16x2x2; 12 x 4800 x 8 */
	{ __LINE__, "AuthenticAMD", 0x19, 0x11, 1, "AMD EPYC 9654 96-Core Processor",
	  ISA_ZEN4, "zen4", { 16, 32, 64, NONE, NONE }, 460.8e9 },
	/* Zen 4 Raphael: 2 x 5200 x 8 */
	{ __LINE__, "AuthenticAMD", 0x19, 0x61, 2, "AMD Ryzen 9 7950X 16-Core Processor",
	  ISA_ZEN4, "zen4", { 16, 32, 64, NONE, NONE }, 83.2e9 },
	/* Zen 5 Turin: 2x512 = 32; bf16 2x16x2x2; 12 x 6000 x 8 */
	{ __LINE__, "AuthenticAMD", 0x1A, 0x02, 1, "AMD EPYC 9755 128-Core Processor",
	  ISA_ZEN4, "zen5", { 32, 64, 128, NONE, NONE }, 576e9 },
	/* Zen 5 Strix Point: 256-bit pipes, 1x512 = 16 */
	{ __LINE__, "AuthenticAMD", 0x1A, 0x24, 0, "AMD Ryzen AI 9 HX 370 w/ Radeon 890M",
	  ISA_ZEN4, "zen5", { 16, 32, 64, NONE, NONE }, 120e9 },
	/* Unknown (Haswell-EP is not in the table) with AVX2+FMA: assume 2x256 */
	{ __LINE__, "GenuineIntel", 6, 0x3F, 2, "Intel(R) Xeon(R) CPU E5-2680 v3 @ 2.50GHz",
	  ISA_AVX2, "unknown", { 16, 32, NONE, NONE, NONE }, NONE },
	/* Unknown with AVX-512: assume one 512-bit unit */
	{ __LINE__, "GenuineIntel", 6, 0x01, 0, "", ISA_AVX512, "unknown",
	  { 16, 32, NONE, NONE, NONE }, NONE },
	/* Unknown with AVX only (no FMA): add + mul, 2x4 */
	{ __LINE__, "GenuineIntel", 6, 0x2A, 7, "", MACHINE_ISA_SSE2 | MACHINE_ISA_AVX, "unknown",
	  { 8, 16, NONE, NONE, NONE }, NONE },
	/* Unknown with no ISA flags at all: nothing */
	{ __LINE__, "SomeVendor", 1, 1, 0, "", 0, "unknown", { NONE, NONE, NONE, NONE, NONE }, NONE },
};

static void test_table(void)
{
	for (size_t i = 0; i < sizeof(table_rows) / sizeof(table_rows[0]); i++) {
		const struct table_row *r = &table_rows[i];
		struct machine m = make(r->vendor, r->family, r->model, r->stepping, r->brand, r->isa);
		char detail[512];
		double v;
		int err;

		for (int d = 0; d < MACHINE_NDTYPES; d++) {
			err = machine_flops_per_cycle(&m, (enum machine_dtype)d, &v, detail,
						      sizeof(detail));
			if (r->fpc[d] == NONE) {
				CHECK_ROW(err == -ENOENT && v == 0, r->line);
				CHECK_ROW(detail[0] != '\0', r->line);
				err = machine_peak_flops(&m, (enum machine_dtype)d, 2, &v, detail,
							 sizeof(detail));
				CHECK_ROW(err == -ENOENT && v == 0, r->line);
				continue;
			}
			CHECK_ROW(err == 0, r->line);
			CHECK_ROW(v == r->fpc[d], r->line);
			if (v != r->fpc[d])
				fprintf(stderr, "  %s: got %g want %g (%s)\n",
					machine_dtype_name((enum machine_dtype)d), v, r->fpc[d], detail);
			/* peak = 2 CPUs x 2 GHz x FLOPs/cycle */
			err = machine_peak_flops(&m, (enum machine_dtype)d, 2, &v, detail,
						 sizeof(detail));
			CHECK_ROW(err == 0, r->line);
			CHECK_ROW(v == 2 * 2.0e9 * r->fpc[d], r->line);
			CHECK_ROW(strstr(detail, r->uarch) != NULL, r->line);
			if (strcmp(r->uarch, "unknown") == 0)
				CHECK_ROW(strstr(detail, "estimated from ISA (unknown microarchitecture)"),
					  r->line);
		}

		err = machine_peak_bw(&m, &v, detail, sizeof(detail));
		if (r->bw == NONE) {
			CHECK_ROW(err == -ENOENT && v == 0, r->line);
		} else {
			CHECK_ROW(err == 0, r->line);
			CHECK_ROW(fabs(v - r->bw) < 1, r->line);
			if (fabs(v - r->bw) >= 1)
				fprintf(stderr, "  bw: got %g want %g (%s)\n", v, r->bw, detail);
			/* Two sockets, twice the bandwidth. */
			m.sockets = 2;
			CHECK_ROW(machine_peak_bw(&m, &v, detail, sizeof(detail)) == 0, r->line);
			CHECK_ROW(fabs(v - 2 * r->bw) < 1, r->line);
			CHECK_ROW(strstr(detail, "2 sockets") != NULL, r->line);
		}
	}
}

static void test_details(void)
{
	struct machine m = make("GenuineIntel", 6, 0x8F, 8, "Intel(R) Xeon(R) Processor", ISA_SPR);
	char detail[512];
	double v;

	CHECK(machine_peak_flops(&m, MACHINE_FP32, 2, &v, detail, sizeof(detail)) == 0);
	CHECK_NEAR(v, 256e9, 1);
	CHECK_STR(detail, "spec: 2.00 GHz nominal (test) x 2 cores x 64 FLOP/cycle "
		  "(2x 512-bit FMA/cycle, fp32: 2 x 16 lanes x 2) [sapphire_rapids]");

	CHECK(machine_peak_flops(&m, MACHINE_BF16, 2, &v, detail, sizeof(detail)) == 0);
	CHECK_NEAR(v, 4.096e12, 1);
	CHECK(strstr(detail, "AMX") != NULL);
	CHECK(strstr(detail, "FP_ARITH counters do not count AMX FLOPs") != NULL);

	/* A fractional CPU quota. */
	CHECK(machine_peak_flops(&m, MACHINE_FP64, 1.5, &v, detail, sizeof(detail)) == 0);
	CHECK_NEAR(v, 1.5 * 2e9 * 32, 1);
	CHECK(strstr(detail, "x 1.5 cores x 32 FLOP/cycle") != NULL);
	CHECK(machine_peak_flops(&m, MACHINE_FP64, 1, &v, detail, sizeof(detail)) == 0);
	CHECK(strstr(detail, "x 1 core x") != NULL);

	/* int8: ops, AMX TDPBSSD */
	CHECK(machine_peak_flops(&m, MACHINE_INT8, 1, &v, detail, sizeof(detail)) == 0);
	CHECK_NEAR(v, 2e9 * 2048, 1);
	CHECK(strstr(detail, "2048 op/cycle") != NULL);
	CHECK(strstr(detail, "TDPBSSD") != NULL);

	/* SMT: the peak counts cores, and says how many CPUs share them */
	m.ncpu_affinity = 4;
	m.ncores_affinity = 2;
	CHECK(machine_peak_flops(&m, MACHINE_FP64, 2, &v, detail, sizeof(detail)) == 0);
	CHECK_NEAR(v, 2 * 2e9 * 32, 1);
	CHECK(strstr(detail, " x 2 cores (4 CPUs, 2 threads per core) x 32 FLOP/cycle") != NULL);
	m.ncpu_affinity = 3; /* one core with both threads, one with one */
	CHECK(machine_peak_flops(&m, MACHINE_FP64, 2, &v, detail, sizeof(detail)) == 0);
	CHECK(strstr(detail, " x 2 cores (3 CPUs on 2 cores) x 32 FLOP/cycle") != NULL);
	/* the one-core figure is about no CPU set */
	CHECK(machine_peak_flops(&m, MACHINE_FP64, 1, &v, detail, sizeof(detail)) == 0);
	CHECK(strstr(detail, " x 1 core x 32 FLOP/cycle") != NULL);
	m.ncpu_affinity = m.ncores_affinity = 0;
	CHECK(machine_peak_flops(&m, MACHINE_FP64, 2, &v, detail, sizeof(detail)) == 0);
	CHECK(strstr(detail, "CPUs") == NULL);

	/* a measured clock that differs is named, the nominal one is used */
	m.clock_hz = 3.1e9;
	snprintf(m.clock_hz_source, sizeof(m.clock_hz_source), "mfu-calibrate");
	CHECK(machine_peak_flops(&m, MACHINE_FP64, 1, &v, detail, sizeof(detail)) == 0);
	CHECK_NEAR(v, 2e9 * 32, 1);
	CHECK(strstr(detail, "the core clock measured 3.10 GHz (mfu-calibrate)") != NULL);
	m.clock_hz = 2.05e9; /* within 5%: not worth a word */
	CHECK(machine_peak_flops(&m, MACHINE_FP64, 1, &v, detail, sizeof(detail)) == 0);
	CHECK(strstr(detail, "measured") == NULL);
	m.clock_hz = 0;
	CHECK(machine_peak_flops(&m, MACHINE_FP64, 0, &v, detail, sizeof(detail)) == -EINVAL);

	CHECK(machine_peak_bw(&m, &v, detail, sizeof(detail)) == 0);
	CHECK_STR(detail, "spec: 1 socket x 8 channels x 4800 MT/s x 8 B "
		  "[sapphire_rapids, DDR5-4800, Xeon Scalable 4th gen]");

	/* Unknown frequency: no FLOP/s peak, though FLOPs/cycle are known. */
	m.nominal_hz = 0;
	CHECK(machine_flops_per_cycle(&m, MACHINE_FP32, &v, detail, sizeof(detail)) == 0);
	CHECK(machine_peak_flops(&m, MACHINE_FP32, 2, &v, detail, sizeof(detail)) == -ENOENT);
	CHECK(v == 0);

	/* A struct naming only the uarch finds its row by name. */
	memset(&m, 0, sizeof(m));
	snprintf(m.uarch, sizeof(m.uarch), "zen4");
	m.isa = ISA_ZEN4;
	CHECK(machine_flops_per_cycle(&m, MACHINE_FP64, &v, detail, sizeof(detail)) == 0);
	CHECK(v == 16);
	CHECK(strstr(detail, "two halves") != NULL);

	/* The hybrid note, and the Zen 4 note only when 512-bit ops are used. */
	m = make("GenuineIntel", 6, 0x97, 2, "", ISA_AVX2 | MACHINE_ISA_HYBRID);
	CHECK(machine_flops_per_cycle(&m, MACHINE_FP32, &v, detail, sizeof(detail)) == 0);
	CHECK(strstr(detail, "P-core") != NULL);
	m = make("AuthenticAMD", 0x19, 0x11, 1, "", ISA_AVX2);
	CHECK(machine_flops_per_cycle(&m, MACHINE_FP64, &v, detail, sizeof(detail)) == 0);
	CHECK(v == 16);
	CHECK(strstr(detail, "two halves") == NULL);

	/* An unknown model with AMX: a Sapphire Rapids class core, said so. */
	m = make("GenuineIntel", 6, 0x02, 0, "", ISA_SPR);
	CHECK_STR(m.uarch, "sapphire_rapids");
	CHECK(machine_flops_per_cycle(&m, MACHINE_BF16, &v, detail, sizeof(detail)) == 0);
	CHECK(v == 1024);
	CHECK(machine_peak_flops(&m, MACHINE_BF16, 1, &v, detail, sizeof(detail)) == 0);
	CHECK(strstr(detail, "sapphire_rapids class from the ISA: CPUID family 6 model 2 is not in the table") != NULL);
}

/* The model number checked against the ISA (machine_identify): CPUs as
 * their cpuid describes them (vendor, family, model, stepping, brand, ISA,
 * hypervisor bit, L3), among them a VM whose hypervisor masks the model
 * number of a Sapphire Rapids class Xeon as a client Rocket Lake. FLOPs per
 * cycle as in test_table; bandwidth per socket, NONE when unknown. */
#define ISA_ZEN4_VNNI (ISA_ZEN4 | MACHINE_ISA_AVX512_VNNI)
#define ISA_NO_AMX (ISA_SPR & ~(MACHINE_ISA_AMX_BF16 | MACHINE_ISA_AMX_TILE | MACHINE_ISA_AMX_INT8))
#define MASKED_NOTE "(a hypervisor may mask the model number)"

static const struct ident_row {
	int line;
	int family, model, stepping;
	const char *vendor, *brand;
	unsigned isa;
	int hypervisor;
	double l3_mib;
	const char *uarch;
	int from_isa;
	const char *note;               /* substring of ident_note, NULL: empty */
	double fpc[MACHINE_NDTYPES];    /* fp64 fp32 bf16 fp16 int8, per core */
	double bw;                      /* one socket */
} ident_rows[] = {
	/* the masked VM: model 167 with AMX, AVX512-FP16 and 480 MiB L3 */
	{ __LINE__, 6, 167, 1, "GenuineIntel", "Intel(R) Xeon(R) Processor", ISA_SPR, 1, 480,
	  "sapphire_rapids", 1,
	  "sapphire_rapids class from the ISA: CPUID family 6 model 167 names rocket_lake "
	  "(Core 11th gen (Rocket Lake)), which has no AMX or AVX512-FP16, but the CPU reports "
	  "AMX-TILE, AVX512-FP16, a 480 MiB L3 " MASKED_NOTE,
	  { 32, 64, 1024, 128, 2048 }, 307.2e9 },
	/* the same with AMX hidden too: AVX512-FP16 alone is a server core */
	{ __LINE__, 6, 167, 1, "GenuineIntel", "Intel(R) Xeon(R) Processor", ISA_NO_AMX, 1, 480,
	  "sapphire_rapids", 1, "which has no AMX or AVX512-FP16, but the CPU reports AVX512-FP16, "
	  "a 480 MiB L3 " MASKED_NOTE, { 32, 64, 128, 128, 256 }, 307.2e9 },
	/* ... and with FP16 hidden: a "Xeon" with a server-sized L3 is no client */
	{ __LINE__, 6, 167, 1, "GenuineIntel", "Intel(R) Xeon(R) Processor",
	  ISA_AVX512 | MACHINE_ISA_AVX512_BF16 | MACHINE_ISA_AVX512_VNNI, 1, 480, "sapphire_rapids", 1,
	  "names rocket_lake (Core 11th gen (Rocket Lake)), a client core, but the CPU reports "
	  "a \"Xeon\" brand, a 480 MiB L3", { 32, 64, 128, NONE, 256 }, 307.2e9 },
	/* the longest note: every piece at its widest (AMX-TILE, AVX512-FP16, an
	 * L3 of 16 digits, the hypervisor) still ends whole */
	{ __LINE__, 6, 167, 1, "GenuineIntel", "Intel(R) Xeon(R) Processor", ISA_SPR, 1, 1e15,
	  "sapphire_rapids", 1, "AMX-TILE, AVX512-FP16, a 1000000000000000 MiB L3 " MASKED_NOTE,
	  { 32, 64, 1024, 128, 2048 }, 307.2e9 },
	/* masked, with AMX-FP16: Granite Rapids class, 12 x 6400 x 8 */
	{ __LINE__, 6, 167, 1, "GenuineIntel", "Intel(R) Xeon(R) Processor", ISA_SPR | MACHINE_ISA_AMX_FP16,
	  1, 504, "granite_rapids", 1, "granite_rapids class from the ISA", { 32, 64, 1024, 1024, 2048 },
	  614.4e9 },
	/* a genuine Rocket Lake: one 512-bit FMA, VNNI on it, 2 x 3200 x 8 */
	{ __LINE__, 6, 167, 1, "GenuineIntel", "11th Gen Intel(R) Core(TM) i9-11900K @ 3.50GHz",
	  ISA_AVX512 | MACHINE_ISA_AVX512_VNNI, 0, 16, "rocket_lake", 0, NULL,
	  { 16, 32, NONE, NONE, 128 }, 51.2e9 },
	/* a Xeon on the Rocket Lake die (E-2300): the brand alone is no server */
	{ __LINE__, 6, 167, 1, "GenuineIntel", "Intel(R) Xeon(R) E-2388G CPU @ 3.20GHz",
	  ISA_AVX512 | MACHINE_ISA_AVX512_VNNI, 0, 16, "rocket_lake", 0, NULL,
	  { 16, 32, NONE, NONE, 128 }, 51.2e9 },
	/* Sapphire Rapids, as it says */
	{ __LINE__, 6, 143, 8, "GenuineIntel", "Intel(R) Xeon(R) Platinum 8480+", ISA_SPR, 0, 105,
	  "sapphire_rapids", 0, NULL, { 32, 64, 1024, 128, 2048 }, 307.2e9 },
	/* the Emerald Rapids VM that hides AMX: the row stands */
	{ __LINE__, 6, 207, 2, "GenuineIntel", "Intel(R) Xeon(R) Processor", ISA_NO_AMX, 1, 260,
	  "emerald_rapids", 0, NULL, { 32, 64, 128, 128, 256 }, 358.4e9 },
	/* Zen 4 Genoa: AVX-512 as two halves; 12 x 4800 x 8 */
	{ __LINE__, 0x19, 0x11, 1, "AuthenticAMD", "AMD EPYC 9654 96-Core Processor", ISA_ZEN4_VNNI, 0, 32,
	  "zen4", 0, NULL, { 16, 32, 64, NONE, 128 }, 460.8e9 },
	/* Zen 5 Turin: 512-bit pipes, AVX-VNNI; 12 x 6000 x 8 */
	{ __LINE__, 0x1A, 0x02, 1, "AuthenticAMD", "AMD EPYC 9755 128-Core Processor",
	  ISA_ZEN4_VNNI | MACHINE_ISA_AVX_VNNI, 0, 32, "zen5", 0, NULL, { 32, 64, 128, NONE, 256 }, 576e9 },
	/* a VM that calls a Zen 4 host a Milan: Zen 3 has no AVX-512 */
	{ __LINE__, 0x19, 0x01, 1, "AuthenticAMD", "AMD EPYC Processor", ISA_ZEN4_VNNI, 1, 32, "zen4", 1,
	  "zen4 class from the ISA: CPUID family 25 model 1 names zen3 (EPYC 7003 (Milan)), which has "
	  "no AVX-512, but the CPU reports AVX-512, AVX512-BF16 " MASKED_NOTE,
	  { 16, 32, 64, NONE, 128 }, 460.8e9 },
	/* ... a Zen 5 host: AVX-VNNI came with Zen 5 */
	{ __LINE__, 0x19, 0x01, 1, "AuthenticAMD", "AMD EPYC Processor", ISA_ZEN4_VNNI | MACHINE_ISA_AVX_VNNI,
	  1, 32, "zen5", 1, "zen5 class from the ISA", { 32, 64, 128, NONE, 256 }, 576e9 },
	/* a container on an unknown x86 model with AVX2 only: estimated, no note */
	{ __LINE__, 6, 0x3F, 2, "GenuineIntel", "Intel(R) Xeon(R) CPU E5-2680 v3 @ 2.50GHz", ISA_AVX2, 1,
	  30, "unknown", 0, NULL, { 16, 32, NONE, NONE, NONE }, NONE },
	/* a client model number on a CPU with AVX-512: distrusted, estimated */
	{ __LINE__, 6, 0x9E, 10, "GenuineIntel", "Intel(R) Xeon(R) Processor", ISA_AVX512, 1, 0,
	  "unknown", 1, "estimated class from the ISA: CPUID family 6 model 158 names skylake",
	  { 16, 32, NONE, NONE, NONE }, NONE },
	/* an Alder Lake with AVX-512 unlocked (E-cores off): a Core with
	 * AVX512-FP16 is no server; one 512-bit unit, as estimated */
	{ __LINE__, 6, 0x97, 2, "GenuineIntel", "12th Gen Intel(R) Core(TM) i9-12900K",
	  ISA_AVX512 | MACHINE_ISA_AVX512_FP16 | MACHINE_ISA_AVX512_BF16 | MACHINE_ISA_AVX512_VNNI |
	  MACHINE_ISA_AVX_VNNI | MACHINE_ISA_HYBRID, 0, 30, "unknown", 1,
	  "names alder_lake (Core 12th gen), which has no AVX-512, but the CPU reports AVX-512, "
	  "AVX512-FP16", { 16, 32, 64, 64, 128 }, NONE },
};

static void test_identify(void)
{
	for (size_t i = 0; i < sizeof(ident_rows) / sizeof(ident_rows[0]); i++) {
		const struct ident_row *r = &ident_rows[i];
		struct machine m = make(r->vendor, r->family, r->model, r->stepping, r->brand, r->isa);
		char detail[1024];
		double v;
		int err, line = r->line;

		m.hypervisor = r->hypervisor;
		m.l3_bytes = r->l3_mib * 1024 * 1024;
		machine_identify(&m);
		CHECK_ROW(strcmp(m.uarch, r->uarch) == 0, line);
		CHECK_ROW(m.uarch_from_isa == r->from_isa, line);
		/* room to spare: a note that filled its field was cut */
		CHECK_ROW(strlen(m.ident_note) + 1 < sizeof(m.ident_note), line);
		if (r->note)
			CHECK_ROW(strstr(m.ident_note, r->note) != NULL, line);
		else
			CHECK_ROW(m.ident_note[0] == '\0', line);
		if (strcmp(m.uarch, r->uarch) || (r->note && !strstr(m.ident_note, r->note)) ||
		    (!r->note && m.ident_note[0]))
			fprintf(stderr, "  uarch %s: '%s'\n", m.uarch, m.ident_note);
		for (int d = 0; d < MACHINE_NDTYPES; d++) {
			err = machine_flops_per_cycle(&m, (enum machine_dtype)d, &v, detail, sizeof(detail));
			if (r->fpc[d] == NONE) {
				CHECK_ROW(err == -ENOENT && v == 0, line);
				continue;
			}
			CHECK_ROW(err == 0 && v == r->fpc[d], line);
			if (v != r->fpc[d])
				fprintf(stderr, "  %s: %g, want %g (%s)\n",
					machine_dtype_name((enum machine_dtype)d), v, r->fpc[d], detail);
			/* the spec text carries the reason */
			err = machine_peak_flops(&m, (enum machine_dtype)d, 1, &v, detail, sizeof(detail));
			CHECK_ROW(err == 0 && v == 2e9 * r->fpc[d], line);
			if (r->note)
				CHECK_ROW(strstr(detail, r->note) != NULL, line);
		}
		/* a distrusted row's memory is a server's (never the client's 2
		 * channels), or unknown with the reason */
		err = machine_peak_bw(&m, &v, detail, sizeof(detail));
		if (r->bw == NONE) {
			CHECK_ROW(err == -ENOENT && v == 0, line);
			if (r->from_isa)
				CHECK_ROW(strstr(detail, "is not used") && strstr(detail, r->note), line);
		} else {
			CHECK_ROW(err == 0 && fabs(v - r->bw) < 1, line);
			if (err || fabs(v - r->bw) >= 1)
				fprintf(stderr, "  bw: %d %g, want %g (%s)\n", err, v, r->bw, detail);
			if (r->note)
				CHECK_ROW(strstr(detail, r->note) != NULL, line);
		}
	}

	/* identification is repeatable: a second call on its own output
	 * neither stacks notes nor keeps a stale class */
	struct machine m = make("GenuineIntel", 6, 167, 1, "Intel(R) Xeon(R) Processor", ISA_SPR);
	m.l3_bytes = 480.0 * 1024 * 1024;
	machine_identify(&m);
	machine_identify(&m);
	CHECK_STR(m.uarch, "sapphire_rapids");
	CHECK(strstr(m.ident_note, "names rocket_lake") != NULL);
	m.isa = ISA_AVX512 | MACHINE_ISA_AVX512_VNNI;
	snprintf(m.name, sizeof(m.name), "11th Gen Intel(R) Core(TM) i9-11900K @ 3.50GHz");
	m.l3_bytes = 16.0 * 1024 * 1024;
	machine_identify(&m);
	CHECK_STR(m.uarch, "rocket_lake");
	CHECK(m.uarch_from_isa == 0 && m.ident_note[0] == '\0');
	machine_identify(NULL); /* must not crash */
}

/* The L3 from the kernel's cache attributes: found by level, not index. */
static void test_l3_sysfs(void)
{
	const char *root = SRCDIR "/tests/unit/fixtures/topology/smt2";
	double b = -1;

	CHECK_EQ_INT(machine_l3_from_sysfs(root, 0, &b), 0);
	CHECK_NEAR(b, 480.0 * 1024 * 1024, 0.5);
	CHECK_EQ_INT(machine_l3_from_sysfs(root, 1, &b), -EINVAL); /* "12x" */
	CHECK_EQ_INT(machine_l3_from_sysfs(root, 2, &b), -ENOENT); /* no cache directory */
	CHECK(b == 0);
	CHECK_EQ_INT(machine_l3_from_sysfs(NULL, 0, &b), -EINVAL);
	CHECK_EQ_INT(machine_l3_from_sysfs(root, -1, &b), -EINVAL);
}

/* Physical cores from topology fixtures: 2 sockets x 2 cores x 2 threads,
 * CPUs 0-3 the first thread of each core, 4-7 their siblings. */
static void test_topology(void)
{
	static const struct { int line; const char *list; int cores, sockets; } rows[] = {
		{ __LINE__, "0-7", 4, 2 },
		{ __LINE__, "0,4", 1, 1 },      /* both threads of one core */
		{ __LINE__, "0,1", 2, 1 },      /* one thread of two cores */
		{ __LINE__, "0-3", 4, 2 },
		{ __LINE__, "2,6,3", 2, 1 },   /* socket 1: core 0 twice, core 1 */
		{ __LINE__, "8", 1, 1 },        /* no topology files: a core of its own */
		{ __LINE__, "0,8-9", 3, 1 },
	};
	int cores, sockets;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int err = machine_topology_count(rows[i].list, SRCDIR "/tests/unit/fixtures/topology/smt2",
						 &cores, &sockets);
		CHECK_ROW(err == 0, rows[i].line);
		CHECK_ROW(cores == rows[i].cores && sockets == rows[i].sockets, rows[i].line);
		if (cores != rows[i].cores || sockets != rows[i].sockets)
			fprintf(stderr, "  %s: %d cores, %d sockets\n", rows[i].list, cores, sockets);
	}
	CHECK(machine_topology_count("1-", "/nonexistent", &cores, &sockets) == -EINVAL);
	CHECK(machine_topology_count(NULL, "/x", &cores, &sockets) == -EINVAL);
}

/* A sysfs tree of one socket of 96 CPUs (package 0), with an "online"
 * list, made in @dir: what a bare-metal 96-core EPYC shows. */
static void make_socket96(const char *dir)
{
	char p[512];
	FILE *f;

	for (int c = 0; c < 96; c++) {
		snprintf(p, sizeof(p), "mkdir -p %s/cpu%d/topology", dir, c);
		if (system(p) != 0)
			return;
		snprintf(p, sizeof(p), "%s/cpu%d/topology/physical_package_id", dir, c);
		if ((f = fopen(p, "w"))) {
			fputs("0\n", f);
			fclose(f);
		}
		snprintf(p, sizeof(p), "%s/cpu%d/topology/core_id", dir, c);
		if ((f = fopen(p, "w"))) {
			fprintf(f, "%d\n", c);
			fclose(f);
		}
	}
	snprintf(p, sizeof(p), "%s/online", dir);
	if ((f = fopen(p, "w"))) {
		fputs("0-95\n", f);
		fclose(f);
	}
}

/* Which sockets a CPU set spans and how many CPUs they have: what tells a
 * slice of a socket (whose memory bandwidth it shares) from whole ones. */
static void test_socket_cpus(void)
{
	static const struct { int line; const char *list; int socket_cpus; const char *packages; } rows[] = {
		{ __LINE__, "0-7", 8, "0-1" },  /* smt2: CPUs 0,1,4,5 in package 0, 2,3,6,7 in 1 */
		{ __LINE__, "0,1", 4, "0" },
		{ __LINE__, "0,4,1,5", 4, "0" },
		{ __LINE__, "2", 4, "1" },
		{ __LINE__, "1,2", 8, "0-1" },
	};
	char tmp[] = "/tmp/mfu-test-socket96-XXXXXX", packages[64], cmd[600];
	int n;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int err = machine_socket_cpus(rows[i].list, TOPOLOGY "smt2", &n, packages, sizeof(packages));
		CHECK_ROW(err == 0 && n == rows[i].socket_cpus && strcmp(packages, rows[i].packages) == 0,
			  rows[i].line);
	}
	/* a CPU without topology: no claim */
	CHECK_EQ_INT(machine_socket_cpus("0,8", TOPOLOGY "smt2", &n, packages, sizeof(packages)), -ENOENT);
	CHECK_EQ_INT(n, 0);
	CHECK_STR(packages, "");
	CHECK_EQ_INT(machine_socket_cpus("1-", TOPOLOGY "smt2", &n, packages, sizeof(packages)), -EINVAL);
	/* two CPUs of a 96-CPU socket (taskset -c 0-1 on bare metal) */
	if (!mkdtemp(tmp))
		return;
	make_socket96(tmp);
	CHECK_EQ_INT(machine_socket_cpus("0-1", tmp, &n, packages, sizeof(packages)), 0);
	CHECK_EQ_INT(n, 96);
	CHECK_STR(packages, "0");
	CHECK_EQ_INT(machine_socket_cpus("0-95", tmp, &n, packages, sizeof(packages)), 0);
	CHECK_EQ_INT(n, 96);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	CHECK_EQ_INT(system(cmd), 0);
}

/* machine_bw_slice(): the rules, in order, on described CPU sets. */
static void test_bw_slice(void)
{
	struct machine m;
	char why[400];

	memset(&m, 0, sizeof(m));
	strcpy(m.allowed_cpus, "0-95");
	m.ncpu_affinity = 96, m.ncpu = 96, m.socket_cpus = 96;
	strcpy(m.packages, "0");
	/* bare metal, the whole socket */
	CHECK_EQ_INT(machine_bw_slice(&m, why, sizeof(why)), 0);
	CHECK_STR(why, "");
	/* taskset -c 0-1 */
	strcpy(m.allowed_cpus, "0-1");
	m.ncpu_affinity = 2, m.ncpu = 2;
	CHECK_EQ_INT(machine_bw_slice(&m, why, sizeof(why)), 1);
	CHECK_STR(why, "CPUs 0-1 are 2 of the 96 CPUs of socket 0 (an affinity mask, taskset or a cpuset)");
	/* two sockets, half of each */
	strcpy(m.packages, "0-1");
	m.socket_cpus = 192, m.ncpu_affinity = 96;
	CHECK_EQ_INT(machine_bw_slice(&m, why, sizeof(why)), 1);
	CHECK(strstr(why, "of the 192 CPUs of sockets 0-1") != NULL);
	/* a cgroup quota on the whole socket */
	strcpy(m.packages, "0");
	m.socket_cpus = 96, m.ncpu_affinity = 96, m.cpu_quota = 4, m.ncpu = 4;
	CHECK_EQ_INT(machine_bw_slice(&m, why, sizeof(why)), 1);
	CHECK_STR(why, "a cgroup CPU quota of 4 CPUs on its 96 CPUs");
	/* a quota above the CPUs caps nothing */
	m.cpu_quota = 100, m.ncpu = 96;
	CHECK_EQ_INT(machine_bw_slice(&m, why, sizeof(why)), 0);
	/* a 2-vCPU VM: the guest sees a socket of 2 CPUs, its host has 96 */
	m.cpu_quota = 0, m.socket_cpus = 2, m.ncpu_affinity = 2, m.ncpu = 2, m.hypervisor = 1;
	CHECK_EQ_INT(machine_bw_slice(&m, why, sizeof(why)), 1);
	CHECK_STR(why, "a virtual machine (cpuid hypervisor bit): its 2 vCPUs get a share of the host socket whose "
		  "channels the spec counts");
	/* unknown topology on bare metal: no claim */
	m.hypervisor = 0, m.socket_cpus = 0;
	CHECK_EQ_INT(machine_bw_slice(&m, why, sizeof(why)), 0);
	CHECK_EQ_INT(machine_bw_slice(NULL, why, sizeof(why)), -EINVAL);
}

/* The CPU set of another process: a child pinned to one CPU. */
static void test_probe_cpus_of_a_child(void)
{
	cpu_set_t all, one;
	struct machine m;
	int pipefd[2], cpu = -1;
	pid_t pid;
	char c;

	if (sched_getaffinity(0, sizeof(all), &all) != 0 || CPU_COUNT(&all) < 2) {
		fprintf(stderr, "test_probe_cpus_of_a_child: skipped (fewer than 2 CPUs allowed)\n");
		return;
	}
	for (int i = CPU_SETSIZE - 1; i >= 0 && cpu < 0; i--)
		if (CPU_ISSET(i, &all))
			cpu = i;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	CHECK(pipe(pipefd) == 0);
	pid = fork();
	if (pid == 0) {
		char go = 1;
		if (sched_setaffinity(0, sizeof(one), &one) != 0)
			_exit(1);
		if (write(pipefd[1], &go, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	CHECK(pid > 0);
	CHECK(read(pipefd[0], &c, 1) == 1);
	memset(&m, 0, sizeof(m));
	CHECK(machine_probe_cpus(&m, pid) == 0);
	CHECK_EQ_INT(m.ncpu_affinity, 1);
	CHECK_EQ_INT(m.ncores_affinity, 1);
	CHECK(m.ncpu <= 1 && m.ncores <= 1 && m.ncores > 0);
	char want[16];
	snprintf(want, sizeof(want), "%d", cpu);
	CHECK_STR(m.allowed_cpus, want);
	/* The same child against fixture trees: CPUs 0 and 1 are the two
	 * threads of one core, and a cgroup quota of half a CPU sits at the
	 * root, which every cgroup path walks up to. */
	CHECK(machine_probe_cpus_at(&m, pid, TOPOLOGY "siblings01", FIXTURES "half_at_root/root") == 0);
	CHECK_EQ_INT(m.ncpu_affinity, 1);
	CHECK_EQ_INT(m.ncores_affinity, 1);
	CHECK_NEAR(m.cpu_quota, 0.5, 1e-9);
	CHECK_NEAR(m.ncpu, 0.5, 1e-9);
	CHECK_NEAR(m.ncores, 0.5, 1e-9);
	CHECK_STR(m.allowed_cpus, want);
	/* ourselves there: CPUs 0 and 1 count once, others (no topology
	 * files) a core each */
	{
		int want_cores = 0;

		for (int i = 2; i < CPU_SETSIZE; i++)
			want_cores += CPU_ISSET(i, &all) ? 1 : 0;
		want_cores += (CPU_ISSET(0, &all) || CPU_ISSET(1, &all)) ? 1 : 0;
		CHECK(machine_probe_cpus_at(&m, 0, TOPOLOGY "siblings01", FIXTURES "half_at_root/root") == 0);
		CHECK_EQ_INT(m.ncpu_affinity, CPU_COUNT(&all));
		CHECK_EQ_INT(m.ncores_affinity, want_cores);
		CHECK_EQ_INT(m.sockets, 1);
		CHECK_NEAR(m.ncores, 0.5, 1e-9);
	}
	CHECK(machine_probe_cpus_at(&m, pid, NULL, "/") == -EINVAL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(pipefd[0]);
	close(pipefd[1]);
	/* a process that is gone */
	CHECK(machine_probe_cpus(&m, pid) == -ESRCH);
	/* ourselves */
	CHECK(machine_probe_cpus(&m, 0) == 0);
	CHECK_EQ_INT(m.ncpu_affinity, CPU_COUNT(&all));
	CHECK(m.ncores_affinity >= 1 && m.ncores_affinity <= m.ncpu_affinity);
}

static void test_cgroup(void)
{
	static const struct { int line; const char *dir; int err; double cpus; } rows[] = {
		{ __LINE__, "v2_nested", 0, 0.5 },      /* 0.5 at /a beats 2.0 at /a/b */
		{ __LINE__, "v2_max", 0, 0 },           /* "max": no quota */
		{ __LINE__, "v1_cpuacct", 0, 1.5 },     /* leaf 1.5 beats parent 4.0 */
		{ __LINE__, "v1_container", 0, 2.0 },   /* path missing: mount root's quota */
		{ __LINE__, "none", 0, 0 },             /* v1 -1 and an empty v2 */
		{ __LINE__, "bad", -EINVAL, 0 },        /* "abc 100000" */
		{ __LINE__, "no_such_case", 0, 0 },     /* no cgroup file at all */
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char root[512], proc[512];
		double q = -1;
		int err;

		snprintf(root, sizeof(root), "%s%s/root", FIXTURES, rows[i].dir);
		snprintf(proc, sizeof(proc), "%s%s/proc_cgroup", FIXTURES, rows[i].dir);
		err = machine_cgroup_quota(root, proc, &q);
		CHECK_ROW(err == rows[i].err, rows[i].line);
		if (err == 0)
			CHECK_ROW(fabs(q - rows[i].cpus) < 1e-9, rows[i].line);
		if (err != rows[i].err || (err == 0 && fabs(q - rows[i].cpus) >= 1e-9))
			fprintf(stderr, "  %s: err %d quota %g\n", rows[i].dir, err, q);
	}
}

static void test_probe(void)
{
	static const char *const dnames[] = { "fp64", "fp32", "bf16", "fp16", "int8" };
	struct machine m;
	char isa[256], detail[512];
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	double v;

	CHECK(machine_probe(&m) == 0);
	machine_isa_string(m.isa, isa, sizeof(isa));
	fprintf(stderr,
		"probe: vendor %s family %d model %d stepping %d name '%s' uarch %s\n"
		"       isa '%s'\n"
		"       nominal %.3f GHz (%s), allowed %s (%d), quota %g, ncpu %g, sockets %d\n"
		"       cores %d (%g), hypervisor %d, L3 %.0f MiB, ident note '%s'\n",
		m.vendor, m.family, m.model, m.stepping, m.name, m.uarch, isa, m.nominal_hz / 1e9,
		m.nominal_hz_source, m.allowed_cpus, m.ncpu_affinity, m.cpu_quota, m.ncpu, m.sockets,
		m.ncores_affinity, m.ncores, m.hypervisor, m.l3_bytes / (1024.0 * 1024), m.ident_note);
	CHECK(m.vendor[0] != '\0' && strcmp(m.vendor, "unknown") != 0);
	CHECK(m.nominal_hz > 0);
	CHECK(m.nominal_hz_source[0] != '\0');
	CHECK(m.ncpu_affinity >= 1 && m.ncpu_affinity <= online);
	CHECK(m.ncpu > 0 && m.ncpu <= m.ncpu_affinity);
	CHECK(m.ncpu >= 1 || m.cpu_quota > 0);
	CHECK_EQ_INT(machine_cpulist_count(m.allowed_cpus), m.ncpu_affinity);
	CHECK(m.sockets >= 1);
	if (m.family == 6 && m.model == 143)
		CHECK_STR(m.uarch, "sapphire_rapids");
	CHECK(m.ncores_affinity >= 1 && m.ncores_affinity <= m.ncpu_affinity);
	CHECK(m.ncores > 0 && m.ncores <= m.ncores_affinity);
	CHECK(m.l3_bytes >= 0);
	CHECK(m.clock_hz == 0); /* only a recorder with a profile sets it */
	/* whatever this CPU is, its row and its ISA agree or the note says why */
	CHECK(!!m.uarch_from_isa == !!m.ident_note[0]);

	for (int d = 0; d < MACHINE_NDTYPES; d++) {
		int err = machine_peak_flops(&m, (enum machine_dtype)d, m.ncores, &v, detail,
					     sizeof(detail));
		fprintf(stderr, "peak %s: %d %.4g %s/s: %s\n", dnames[d], err, v,
			machine_dtype_is_integer((enum machine_dtype)d) ? "op" : "FLOP", detail);
	}
	{
		int err = machine_peak_bw(&m, &v, detail, sizeof(detail));

		fprintf(stderr, "peak bw: %d %.4g B/s: %s\n", err, v, detail);
	}
}

int main(void)
{
	test_cpulist();
	test_dtype();
	test_isa_string();
	test_table();
	test_details();
	test_identify();
	test_l3_sysfs();
	test_topology();
	test_socket_cpus();
	test_bw_slice();
	test_probe_cpus_of_a_child();
	test_cgroup();
	test_probe();
	return check_status();
}
