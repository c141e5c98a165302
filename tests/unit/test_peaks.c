/* peaks_choose: spec, measured and user peaks, and which one MFU uses. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "peaks.h"

/* A Sapphire Rapids core (a row the machine model trusts: model 143 with
 * AMX) at a 2.0 GHz nominal clock, 4 cores. fp32: 64 FLOP/cycle per core. */
static struct machine spr(void)
{
	struct machine m;

	memset(&m, 0, sizeof(m));
	strcpy(m.vendor, "GenuineIntel");
	m.family = 6;
	m.model = 0x8F;
	m.stepping = 8;
	strcpy(m.name, "Intel(R) Xeon(R) Platinum 8480+");
	strcpy(m.uarch, "sapphire_rapids");
	m.isa = MACHINE_ISA_SSE2 | MACHINE_ISA_AVX | MACHINE_ISA_FMA | MACHINE_ISA_AVX2 | MACHINE_ISA_AVX512F |
		MACHINE_ISA_AVX512_BF16 | MACHINE_ISA_AVX512_FP16 | MACHINE_ISA_AMX_BF16 | MACHINE_ISA_AMX_TILE;
	m.nominal_hz = 2.0e9;
	strcpy(m.nominal_hz_source, "test");
	strcpy(m.allowed_cpus, "0-7");
	m.ncpu_affinity = 8;
	m.ncpu = 8;
	m.ncores_affinity = 4;
	m.ncores = 4;
	m.sockets = 1;
	return m;
}

#define SPEC_FP32_ALL (4 * 2.0e9 * 64)
#define SPEC_FP32_CORE (2.0e9 * 64)

static struct profile_peak row(const char *kind, const char *dtype, const char *scope, double v)
{
	struct profile_peak p;

	memset(&p, 0, sizeof(p));
	snprintf(p.kind, sizeof(p.kind), "%s", kind);
	snprintf(p.dtype, sizeof(p.dtype), "%s", dtype);
	snprintf(p.scope, sizeof(p.scope), "%s", scope);
	snprintf(p.kernel, sizeof(p.kernel), "k");
	snprintf(p.detail, sizeof(p.detail), "measured %s %s %s", kind, dtype, scope);
	p.value = v;
	p.best = 1;
	return p;
}

static const struct peak_row *find(const struct peaks *p, const char *kind, const char *dtype,
				   const char *scope, const char *source)
{
	for (int i = 0; i < p->nrows; i++)
		if (!strcmp(p->rows[i].kind, kind) && !strcmp(p->rows[i].dtype, dtype) &&
		    !strcmp(p->rows[i].scope, scope) && !strcmp(p->rows[i].source, source))
			return &p->rows[i];
	return NULL;
}

static int has_warn(const struct peaks *p, const char *needle)
{
	for (int i = 0; i < p->nwarn; i++)
		if (strstr(p->warn[i], needle))
			return 1;
	return 0;
}

static struct peaks pk; /* large */

static void test_spec_only(void)
{
	struct machine m = spr();
	struct peaks_request rq = { .mode = PEAKS_AUTO, .dtype = "fp32" };

	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, NULL, 0, "no profile at /x: run mfu-calibrate"), 0);
	CHECK_NEAR(pk.flops, SPEC_FP32_ALL, 1);
	CHECK(strncmp(pk.flops_source, "spec: ", 6) == 0);
	CHECK(strstr(pk.flops_source, "auto: no measured peak: no profile at /x") != NULL);
	CHECK(find(&pk, "flops", "fp32", "core", "spec") != NULL);
	CHECK_NEAR(find(&pk, "flops", "fp32", "core", "spec")->value, SPEC_FP32_CORE, 1);
	CHECK(find(&pk, "flops", "bf16", "all", "spec") != NULL);
	CHECK(find(&pk, "bandwidth", "", "all", "spec") != NULL);
	CHECK(find(&pk, "flops", "fp32", "all", "measured") == NULL);
	CHECK_EQ_INT(pk.nwarn, 0);
	CHECK(pk.bw > 0);

	/* --peak measured without a profile: the spec, and a warning */
	rq.mode = PEAKS_MEASURED;
	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, NULL, 0, "no profile at /x"), 0);
	CHECK_NEAR(pk.flops, SPEC_FP32_ALL, 1);
	/* said once, plainly, for both peaks; the sources say it too */
	CHECK_EQ_INT(pk.nwarn, 1);
	CHECK(has_warn(&pk, "--peak measured, but this machine has no measured peaks (no profile at /x): "
		       "MFU, HFU and MBU use the spec peaks instead; run mfu-calibrate"));
	CHECK(strstr(pk.flops_source, "--peak measured asked for a measured peak, and there is none: "
		     "no profile at /x") != NULL);
	CHECK(strstr(pk.bw_source, "--peak measured asked for a measured peak") != NULL);
	/* with --peak-flops, only the bandwidth fell back */
	rq.user_flops = 1e12;
	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, NULL, 0, "no profile at /x"), 0);
	CHECK_EQ_INT(pk.nwarn, 1);
	CHECK(has_warn(&pk, "no measured memory bandwidth peak (no profile at /x): MBU uses the spec peak instead"));
	rq.user_flops = 0;
}

static void test_auto_takes_the_higher(void)
{
	struct machine m = spr();
	struct peaks_request rq = { .mode = PEAKS_AUTO, .dtype = "fp32" };
	struct profile_peak pp[3] = {
		row("flops", "fp32", "all", SPEC_FP32_ALL / 2),
		row("bandwidth", "", "all", 1e12), /* far above the spec's 8 x 4800 MT/s x 8 B */
		row("clock", "", "core", 3.1e9),
	};

	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, pp, 3, ""), 0);
	/* measured FLOP/s at half the spec: the spec stays, the ratio is named */
	CHECK_NEAR(pk.flops, SPEC_FP32_ALL, 1);
	CHECK(strncmp(pk.flops_source, "spec: ", 6) == 0);
	CHECK(strstr(pk.flops_source, "0.50x") != NULL);
	/* measured bandwidth above the spec: it wins, and is warned about */
	CHECK_NEAR(pk.bw, 1e12, 1);
	CHECK(strncmp(pk.bw_source, "measured (auto: ", 16) == 0);
	CHECK(has_warn(&pk, "memory bandwidth"));
	CHECK_NEAR(pk.clock_hz, 3.1e9, 1);
	CHECK(find(&pk, "clock", "", "core", "measured") == NULL); /* not a peak */

	/* a masked CPU: measured 3x the spec */
	pp[0].value = SPEC_FP32_ALL * 3;
	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, pp, 1, ""), 0);
	CHECK_NEAR(pk.flops, SPEC_FP32_ALL * 3, 1);
	CHECK(strncmp(pk.flops_source, "measured (auto: 3.00x the spec peak", 35) == 0);
	CHECK(has_warn(&pk, "is 3.00x the spec peak"));
	CHECK(has_warn(&pk, "the measured peak is used"));

	/* --peak spec keeps the spec, and says what that means */
	rq.mode = PEAKS_SPEC;
	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, pp, 1, ""), 0);
	CHECK_NEAR(pk.flops, SPEC_FP32_ALL, 1);
	CHECK(has_warn(&pk, "utilizations may exceed 100%"));

	/* within 10%: no warning */
	rq.mode = PEAKS_AUTO;
	pp[0].value = SPEC_FP32_ALL * 1.05;
	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, pp, 1, ""), 0);
	CHECK_NEAR(pk.flops, SPEC_FP32_ALL * 1.05, 1);
	CHECK_EQ_INT(pk.nwarn, 0);
}

/* A profile measured on another CPU set has only its one-core figure for
 * us: the target's cores times it. */
static void test_core_times_cores(void)
{
	struct machine m = spr();
	struct peaks_request rq = { .mode = PEAKS_AUTO, .dtype = "fp32" };
	struct profile_peak pp[1] = { row("flops", "fp32", "core", SPEC_FP32_CORE * 2) };
	const struct peak_row *r;

	m.ncores = 1;
	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, pp, 1, ""), 0);
	r = find(&pk, "flops", "fp32", "all", "measured");
	CHECK(r != NULL);
	if (r) {
		CHECK_NEAR(r->value, SPEC_FP32_CORE * 2, 1);
		CHECK(strstr(r->detail, "x 1 cores") != NULL);
	}
	CHECK_NEAR(pk.flops, SPEC_FP32_CORE * 2, 1);
	CHECK_NEAR(find(&pk, "flops", "fp32", "all", "spec")->value, SPEC_FP32_CORE, 1);

	m.ncores = 4;
	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, pp, 1, ""), 0);
	CHECK_NEAR(pk.flops, SPEC_FP32_CORE * 2 * 4, 1);
}

static void test_user_and_int8(void)
{
	struct machine m = spr();
	struct peaks_request rq = { .mode = PEAKS_AUTO, .dtype = "fp32", .user_flops = 5e12, .user_bw = 7e10 };

	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, NULL, 0, ""), 0);
	CHECK_NEAR(pk.flops, 5e12, 1);
	CHECK_STR(pk.flops_source, "user: --peak-flops 5e+12");
	CHECK_NEAR(pk.bw, 7e10, 1);
	CHECK(find(&pk, "flops", "fp32", "all", "user") != NULL);
	CHECK(find(&pk, "bandwidth", "", "all", "user") != NULL);

	/* int8 on an AMX core: ops, not FLOPs, in what is said */
	struct peaks_request r8 = { .mode = PEAKS_AUTO, .dtype = "int8" };
	struct profile_peak pp[1] = { row("flops", "int8", "all", 1e15) };
	m.isa |= MACHINE_ISA_AMX_INT8;
	CHECK_EQ_INT(peaks_choose(&pk, &m, &r8, pp, 1, ""), 0);
	CHECK(find(&pk, "flops", "int8", "all", "spec") != NULL);
	CHECK(pk.flops > 0);
	if (pk.nwarn)
		CHECK(strstr(pk.warn[0], "op/s") != NULL);
}

static void test_modes(void)
{
	CHECK_EQ_INT(peaks_mode_parse("auto"), PEAKS_AUTO);
	CHECK_EQ_INT(peaks_mode_parse("spec"), PEAKS_SPEC);
	CHECK_EQ_INT(peaks_mode_parse("measured"), PEAKS_MEASURED);
	CHECK(peaks_mode_parse("Auto") < 0);
	CHECK(peaks_mode_parse("") < 0);
	CHECK(peaks_mode_parse(NULL) < 0);
	CHECK_STR(peaks_mode_name(PEAKS_MEASURED), "measured");
}

int main(void)
{
	test_modes();
	test_spec_only();
	test_auto_takes_the_higher();
	test_core_times_cores();
	test_user_and_int8();
	return check_status();
}
