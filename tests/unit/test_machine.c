/* The machine model: CPU lists, dtypes, the peak table on hand-built
 * machines (numbers computed by hand in the rows), cgroup quotas on fixture
 * trees, and a probe of the machine the test runs on. */
#include "check.h"
#include "machine.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define FIXTURES SRCDIR "/tests/unit/fixtures/cgroup/"

#define ISA_AVX2 (MACHINE_ISA_SSE2 | MACHINE_ISA_AVX | MACHINE_ISA_FMA | MACHINE_ISA_AVX2)
#define ISA_AVX512 (ISA_AVX2 | MACHINE_ISA_AVX512F)
#define ISA_SPR (ISA_AVX512 | MACHINE_ISA_AVX512_BF16 | MACHINE_ISA_AVX512_FP16 | \
		 MACHINE_ISA_AMX_BF16 | MACHINE_ISA_AMX_TILE | MACHINE_ISA_AVX_VNNI)
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
		{ __LINE__, "1 ", -EINVAL },
		{ __LINE__, "1\n", -EINVAL },
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
	return m;
}

/* FLOPs/cycle per dtype (fp64, fp32, bf16, fp16) and spec bandwidth for one
 * socket, computed by hand: FMA ops/cycle x lanes x 2; channels x MT/s x 8. */
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
	  "sapphire_rapids", { 32, 64, 1024, 128 }, 307.2e9 },
	/* SPR in a VM that hides AMX: bf16 falls back to VDPBF16PS 2x16x2x2. */
	{ __LINE__, "GenuineIntel", 6, 0x8F, 8, "Intel(R) Xeon(R) Processor",
	  ISA_SPR & ~(MACHINE_ISA_AMX_BF16 | MACHINE_ISA_AMX_TILE),
	  "sapphire_rapids", { 32, 64, 128, 128 }, 307.2e9 },
	/* SPR with AVX-512 state disabled: 2x256 FMA = 2x4x2; no bf16/fp16. */
	{ __LINE__, "GenuineIntel", 6, 0x8F, 8, "", ISA_AVX2,
	  "sapphire_rapids", { 16, 32, NONE, NONE }, 307.2e9 },
	/* EMR: as SPR; 8 x 5600 x 8 */
	{ __LINE__, "GenuineIntel", 6, 0xCF, 2, "", ISA_SPR,
	  "emerald_rapids", { 32, 64, 1024, 128 }, 358.4e9 },
	/* GNR with AMX-FP16: 12 x 6400 x 8 */
	{ __LINE__, "GenuineIntel", 6, 0xAD, 1, "Intel(R) Xeon(R) 6980P", ISA_SPR | MACHINE_ISA_AMX_FP16,
	  "granite_rapids", { 32, 64, 1024, 1024 }, 614.4e9 },
	/* ICX: 2x512 FMA, no bf16/fp16; 8 x 3200 x 8 */
	{ __LINE__, "GenuineIntel", 6, 0x6A, 6, "Intel(R) Xeon(R) Platinum 8380 CPU @ 2.30GHz",
	  ISA_AVX512, "ice_lake_sp", { 32, 64, NONE, NONE }, 204.8e9 },
	/* SKX Platinum: 2x512 FMA; 6 x 2666 x 8 */
	{ __LINE__, "GenuineIntel", 6, 0x55, 4, "Intel(R) Xeon(R) Platinum 8180 CPU @ 2.50GHz",
	  ISA_AVX512, "skylake_sp", { 32, 64, NONE, NONE }, 127.968e9 },
	/* SKX Silver: 1x512 FMA = 1x8x2 */
	{ __LINE__, "GenuineIntel", 6, 0x55, 4, "Intel(R) Xeon(R) Silver 4114 CPU @ 2.20GHz",
	  ISA_AVX512, "skylake_sp", { 16, 32, NONE, NONE }, 127.968e9 },
	/* SKX Gold 5122: the Gold 5 with two units */
	{ __LINE__, "GenuineIntel", 6, 0x55, 4, "Intel(R) Xeon(R) Gold 5122 CPU @ 3.60GHz",
	  ISA_AVX512, "skylake_sp", { 32, 64, NONE, NONE }, 127.968e9 },
	/* CLX Gold 5218: one unit; 6 x 2933 x 8 */
	{ __LINE__, "GenuineIntel", 6, 0x55, 7, "Intel(R) Xeon(R) Gold 5218 CPU @ 2.30GHz",
	  ISA_AVX512, "cascade_lake", { 16, 32, NONE, NONE }, 140.784e9 },
	/* CLX Gold 6248: two units */
	{ __LINE__, "GenuineIntel", 6, 0x55, 7, "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz",
	  ISA_AVX512, "cascade_lake", { 32, 64, NONE, NONE }, 140.784e9 },
	/* Cooper Lake: AVX512_BF16 2x16x2x2; 6 x 3200 x 8 */
	{ __LINE__, "GenuineIntel", 6, 0x55, 11, "Intel(R) Xeon(R) Platinum 8380H CPU @ 2.90GHz",
	  ISA_AVX512 | MACHINE_ISA_AVX512_BF16, "cooper_lake", { 32, 64, 128, NONE }, 153.6e9 },
	/* Coffee Lake client: 2x256 FMA; 2 x 2666 x 8 */
	{ __LINE__, "GenuineIntel", 6, 0x9E, 10, "Intel(R) Core(TM) i7-8700K CPU @ 3.70GHz",
	  ISA_AVX2, "skylake", { 16, 32, NONE, NONE }, 42.656e9 },
	/* Alder Lake (hybrid): P-core 2x256 FMA; 2 x 4800 x 8 */
	{ __LINE__, "GenuineIntel", 6, 0x97, 2, "12th Gen Intel(R) Core(TM) i9-12900K",
	  ISA_AVX2 | MACHINE_ISA_HYBRID | MACHINE_ISA_AVX_VNNI, "alder_lake",
	  { 16, 32, NONE, NONE }, 76.8e9 },
	/* Ice Lake client: 1x512 FMA = 16 */
	{ __LINE__, "GenuineIntel", 6, 0x7E, 5, "Intel(R) Core(TM) i7-1065G7 CPU @ 1.30GHz",
	  ISA_AVX512, "ice_lake", { 16, 32, NONE, NONE }, 51.2e9 },
	/* Zen 2 Rome: 2x256 FMA; 8 x 3200 x 8 */
	{ __LINE__, "AuthenticAMD", 0x17, 0x31, 0, "AMD EPYC 7742 64-Core Processor",
	  ISA_AVX2, "zen2", { 16, 32, NONE, NONE }, 204.8e9 },
	/* Zen 2 Threadripper 3000 shares Rome's model: 4 x 3200 x 8 */
	{ __LINE__, "AuthenticAMD", 0x17, 0x31, 0, "AMD Ryzen Threadripper 3970X 32-Core Processor",
	  ISA_AVX2, "zen2", { 16, 32, NONE, NONE }, 102.4e9 },
	/* Zen 3 Milan: 8 x 3200 x 8 */
	{ __LINE__, "AuthenticAMD", 0x19, 0x01, 1, "AMD EPYC 7763 64-Core Processor",
	  ISA_AVX2, "zen3", { 16, 32, NONE, NONE }, 204.8e9 },
	/* Zen 3 Vermeer: 2 x 3200 x 8 */
	{ __LINE__, "AuthenticAMD", 0x19, 0x21, 0, "AMD Ryzen 9 5950X 16-Core Processor",
	  ISA_AVX2, "zen3", { 16, 32, NONE, NONE }, 51.2e9 },
	/* Zen 4 Genoa: 1x512 (double-pumped) = 16; bf16 1x16x2x2; 12 x 4800 x 8 */
	{ __LINE__, "AuthenticAMD", 0x19, 0x11, 1, "AMD EPYC 9654 96-Core Processor",
	  ISA_ZEN4, "zen4", { 16, 32, 64, NONE }, 460.8e9 },
	/* Zen 4 Raphael: 2 x 5200 x 8 */
	{ __LINE__, "AuthenticAMD", 0x19, 0x61, 2, "AMD Ryzen 9 7950X 16-Core Processor",
	  ISA_ZEN4, "zen4", { 16, 32, 64, NONE }, 83.2e9 },
	/* Zen 5 Turin: 2x512 = 32; bf16 2x16x2x2; 12 x 6000 x 8 */
	{ __LINE__, "AuthenticAMD", 0x1A, 0x02, 1, "AMD EPYC 9755 128-Core Processor",
	  ISA_ZEN4, "zen5", { 32, 64, 128, NONE }, 576e9 },
	/* Zen 5 Strix Point: 256-bit pipes, 1x512 = 16 */
	{ __LINE__, "AuthenticAMD", 0x1A, 0x24, 0, "AMD Ryzen AI 9 HX 370 w/ Radeon 890M",
	  ISA_ZEN4, "zen5", { 16, 32, 64, NONE }, 120e9 },
	/* Unknown (Haswell-EP is not in the table) with AVX2+FMA: assume 2x256 */
	{ __LINE__, "GenuineIntel", 6, 0x3F, 2, "Intel(R) Xeon(R) CPU E5-2680 v3 @ 2.50GHz",
	  ISA_AVX2, "unknown", { 16, 32, NONE, NONE }, NONE },
	/* Unknown with AVX-512: assume one 512-bit unit */
	{ __LINE__, "GenuineIntel", 6, 0x01, 0, "", ISA_AVX512, "unknown",
	  { 16, 32, NONE, NONE }, NONE },
	/* Unknown with AVX only (no FMA): add + mul, 2x4 */
	{ __LINE__, "GenuineIntel", 6, 0x2A, 7, "", MACHINE_ISA_SSE2 | MACHINE_ISA_AVX, "unknown",
	  { 8, 16, NONE, NONE }, NONE },
	/* Unknown with no ISA flags at all: nothing */
	{ __LINE__, "SomeVendor", 1, 1, 0, "", 0, "unknown", { NONE, NONE, NONE, NONE }, NONE },
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
	CHECK_STR(detail, "spec: 2.00 GHz (test) x 2 CPUs x 64 FLOP/cycle "
		  "(2x 512-bit FMA/cycle, fp32: 2 x 16 lanes x 2) [sapphire_rapids]");

	CHECK(machine_peak_flops(&m, MACHINE_BF16, 2, &v, detail, sizeof(detail)) == 0);
	CHECK_NEAR(v, 4.096e12, 1);
	CHECK(strstr(detail, "AMX") != NULL);
	CHECK(strstr(detail, "FP_ARITH counters do not count AMX FLOPs") != NULL);

	/* A fractional CPU quota. */
	CHECK(machine_peak_flops(&m, MACHINE_FP64, 1.5, &v, detail, sizeof(detail)) == 0);
	CHECK_NEAR(v, 1.5 * 2e9 * 32, 1);
	CHECK(strstr(detail, "x 1.5 CPUs x 32 FLOP/cycle") != NULL);
	CHECK(machine_peak_flops(&m, MACHINE_FP64, 1, &v, detail, sizeof(detail)) == 0);
	CHECK(strstr(detail, "x 1 CPU x") != NULL);
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

	/* An unknown AMX machine: the TMUL rate, said to be an estimate. */
	m = make("GenuineIntel", 6, 0x02, 0, "", ISA_SPR);
	CHECK(machine_flops_per_cycle(&m, MACHINE_BF16, &v, detail, sizeof(detail)) == 0);
	CHECK(v == 1024);
	CHECK(strstr(detail, "estimated from ISA") != NULL);
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
	static const char *const dnames[] = { "fp64", "fp32", "bf16", "fp16" };
	struct machine m;
	char isa[256], detail[512];
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	double v;

	CHECK(machine_probe(&m) == 0);
	machine_isa_string(m.isa, isa, sizeof(isa));
	fprintf(stderr,
		"probe: vendor %s family %d model %d stepping %d name '%s' uarch %s\n"
		"       isa '%s'\n"
		"       nominal %.3f GHz (%s), allowed %s (%d), quota %g, ncpu %g, sockets %d\n",
		m.vendor, m.family, m.model, m.stepping, m.name, m.uarch, isa, m.nominal_hz / 1e9,
		m.nominal_hz_source, m.allowed_cpus, m.ncpu_affinity, m.cpu_quota, m.ncpu, m.sockets);
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

	for (int d = 0; d < MACHINE_NDTYPES; d++) {
		int err = machine_peak_flops(&m, (enum machine_dtype)d, m.ncpu, &v, detail,
					     sizeof(detail));
		fprintf(stderr, "peak %s: %d %.4g FLOP/s: %s\n", dnames[d], err, v, detail);
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
	test_cgroup();
	test_probe();
	return check_status();
}
