/* peaks_choose: spec, measured and user peaks, and which one MFU uses. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "record/counters/peaks.h"

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
	/* measured bandwidth above the spec: it wins, and the spec is called
	 * wrong (in the note the recording that measured it says) */
	CHECK_NEAR(pk.bw, 1e12, 1);
	CHECK(strncmp(pk.bw_source, "measured (auto: ", 16) == 0);
	CHECK(!has_warn(&pk, "memory bandwidth"));
	CHECK(strstr(pk.spec_note, "the measured memory bandwidth peak") != NULL);
	CHECK_NEAR(pk.clock_hz, 3.1e9, 1);
	CHECK(find(&pk, "clock", "", "core", "measured") == NULL); /* not a peak */

	/* a masked CPU: measured 3x the spec */
	pp[0].value = SPEC_FP32_ALL * 3;
	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, pp, 1, ""), 0);
	CHECK_NEAR(pk.flops, SPEC_FP32_ALL * 3, 1);
	CHECK(strncmp(pk.flops_source, "measured (auto: 3.00x the spec peak", 35) == 0);
	/* not a warning of every run: the source and the report say it */
	CHECK(!has_warn(&pk, "is 3.00x the spec peak"));
	CHECK(strstr(pk.spec_note, "is 3.00x the spec peak") != NULL);
	CHECK(strstr(pk.spec_note, "the measured peak is used") != NULL);

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
	CHECK(strstr(pk.spec_note, "FLOP/s peak") == NULL);
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
		CHECK(strstr(r->detail, "x 1 core (") != NULL);
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

/* The VM: 2 vCPUs of a Zen 5 EPYC (12 channels of DDR5-6000:
 * 576 GB/s for the socket), which reach about 60 GB/s together. */
static struct machine epyc_vm(void)
{
	struct machine m;

	memset(&m, 0, sizeof(m));
	strcpy(m.vendor, "AuthenticAMD");
	m.family = 0x1A;
	m.model = 2;
	m.stepping = 1;
	strcpy(m.name, "AMD EPYC");
	strcpy(m.uarch, "zen5");
	m.isa = MACHINE_ISA_SSE2 | MACHINE_ISA_AVX | MACHINE_ISA_FMA | MACHINE_ISA_AVX2 | MACHINE_ISA_AVX512F;
	m.hypervisor = 1;
	m.nominal_hz = 2.6e9;
	strcpy(m.nominal_hz_source, "test");
	strcpy(m.allowed_cpus, "0-1");
	m.ncpu_affinity = 2;
	m.ncpu = 2;
	m.ncores_affinity = 2;
	m.ncores = 2;
	m.sockets = 1;
	strcpy(m.packages, "0");
	m.socket_cpus = 2; /* all the guest sees */
	return m;
}

#define EPYC_SPEC_BW (12 * 6000e6 * 8)

static void test_bw_slice_vm(void)
{
	struct machine m = epyc_vm();
	struct peaks_request rq = { .mode = PEAKS_AUTO, .dtype = "fp32" };
	struct profile_peak pp[3] = {
		row("bandwidth", "", "all", 60.6e9),
		row("bandwidth", "", "core", 31e9),
		row("flops", "fp32", "core", 2.59e11),
	};

	pp[0].threads = 2;
	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, pp, 3, ""), 0);
	CHECK_NEAR(pk.bw, 60.6e9, 1);
	CHECK(strncmp(pk.bw_source, "measured (auto: memory bandwidth is shared by a socket, and the target's CPUs "
		      "are a slice of theirs: a virtual machine (cpuid hypervisor bit): its 2 vCPUs", 120) == 0);
	CHECK(strstr(pk.bw_source, "not the socket's spec of 576 GB/s, 0.11x of it") != NULL);
	/* the spec stays beside it, with the socket it is for */
	CHECK_NEAR(find(&pk, "bandwidth", "", "all", "spec")->value, EPYC_SPEC_BW, 1);
	CHECK(strstr(find(&pk, "bandwidth", "", "all", "spec")->detail, "1 socket (package 0) x 12 channels") != NULL);
	/* FLOP/s is per core: one core's figure times the cores */
	CHECK_NEAR(pk.flops, 2 * 2.59e11, 1);
	CHECK_EQ_INT(pk.nwarn, 0);
	CHECK(strstr(pk.spec_note, "is 1.56x the spec peak") != NULL); /* the FLOP spec is low */

	/* no figure of these CPUs: the spec, and why it reads low */
	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, NULL, 0, "no profile at /x"), 0);
	CHECK_NEAR(pk.bw, EPYC_SPEC_BW, 1);
	CHECK(strstr(pk.bw_source, "(auto: the target's CPUs are a slice of the socket: a virtual machine") != NULL);
	CHECK(strstr(pk.bw_source, "no memory bandwidth was measured on them (no profile at /x): the socket's spec "
		     "overstates what they reach, so MBU reads low; 'taskset -c 0-1 mfu-calibrate' measures them") != NULL);

	/* --peak spec: the socket's figure, as asked */
	rq.mode = PEAKS_SPEC;
	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, pp, 3, ""), 0);
	CHECK_NEAR(pk.bw, EPYC_SPEC_BW, 1);

	/* bare metal, the whole socket: the higher of the two, as for FLOP/s */
	rq.mode = PEAKS_AUTO;
	m.hypervisor = 0;
	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, pp, 3, ""), 0);
	CHECK_NEAR(pk.bw, EPYC_SPEC_BW, 1);
	CHECK(strstr(pk.bw_source, "(auto: the measured peak, 60.6 GB/s, is 0.11x of it)") != NULL);
}

/* Bare metal: 2 CPUs (taskset) of a 96-CPU socket, then a cgroup quota. */
static void test_bw_slice_taskset_quota(void)
{
	struct machine m = epyc_vm();
	struct peaks_request rq = { .mode = PEAKS_AUTO, .dtype = "fp32" };
	/* a profile of the whole machine: its one-thread figure applies */
	struct profile_peak pp[1] = { row("bandwidth", "", "core", 31e9) };

	m.hypervisor = 0;
	m.socket_cpus = 96;
	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, pp, 1, "profile was measured on CPUs 0-95"), 0);
	CHECK_NEAR(pk.bw, 2 * 31e9, 1);
	CHECK(strstr(pk.bw_source, "slice of theirs: CPUs 0-1 are 2 of the 96 CPUs of socket 0 (an affinity mask, "
		     "taskset or a cpuset)") != NULL);
	CHECK(strstr(pk.bw_source, "one thread's 31 GB/s x 2 CPUs, an upper bound") != NULL);
	CHECK(strstr(pk.bw_source, "'taskset -c 0-1 mfu-calibrate' measures these CPUs") != NULL);
	/* one CPU: one thread's figure is that CPU's */
	strcpy(m.allowed_cpus, "5");
	m.ncpu_affinity = 1, m.ncpu = 1, m.ncores_affinity = 1, m.ncores = 1;
	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, pp, 1, ""), 0);
	CHECK_NEAR(pk.bw, 31e9, 1);
	CHECK(strstr(pk.bw_source, "one thread's 31 GB/s, measured alone on one CPU (the target's CPUs are 5, 1 CPU)")
	      != NULL);
	/* all 96 CPUs under a quota of 1.5: a slice by the quota */
	strcpy(m.allowed_cpus, "0-95");
	m.ncpu_affinity = 96, m.ncores_affinity = 96, m.cpu_quota = 1.5, m.ncpu = 1.5, m.ncores = 1.5;
	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, pp, 1, ""), 0);
	CHECK_NEAR(pk.bw, 1.5 * 31e9, 1);
	CHECK(strstr(pk.bw_source, "a cgroup CPU quota of 1.5 CPUs on its 96 CPUs") != NULL);
	/* so many CPUs that one thread's figure times them passes the spec */
	m.cpu_quota = 0, m.ncpu = 96, m.ncores = 96, m.socket_cpus = 192;
	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, pp, 1, ""), 0);
	CHECK_NEAR(pk.bw, EPYC_SPEC_BW, 1);
	CHECK(strstr(pk.bw_source, "x 96 CPUs, capped at the spec") != NULL);
}

/* The bandwidth of CPU sets holding the target's (the VM's two CPUs, for
 * a target bound to one): a row of scope "machine" per set, the fastest
 * undisturbed triad, never the run's own peak. */
static void test_machine_rows(void)
{
	struct machine m = epyc_vm();
	struct profile_peak pp[1] = { row("bandwidth", "", "core", 60.3e9) };
	struct profile_peak sup[5] = { row("bandwidth", "", "all", 58.2e9), row("bandwidth", "", "all", 50e9),
				       row("bandwidth", "", "all", 70e9), row("flops", "fp32", "all", 1e12),
				       row("bandwidth", "", "all", 90e9) };
	struct peaks_request rq = { .mode = PEAKS_AUTO, .dtype = "fp32", .machine = sup, .nmachine = 5 };
	const struct peak_row *r;
	int nmachine = 0;

	strcpy(m.allowed_cpus, "0");
	m.ncpu_affinity = 1, m.ncpu = 1, m.ncores_affinity = 1, m.ncores = 1;
	for (int i = 0; i < 5; i++) {
		strcpy(sup[i].cpus, i == 2 ? "0-3" : "0-1");
		sup[i].ncpu = i == 2 ? 4 : 2;
		sup[i].threads = i == 2 ? 4 : 2;
	}
	sup[1].best = 0;      /* not the triad */
	sup[4].disturbed = 1; /* other tasks ran */
	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, pp, 1, ""), 0);
	/* the run's own: one thread's, as without the rows */
	CHECK_NEAR(pk.bw, 60.3e9, 1);
	CHECK(strstr(pk.bw_source, "one thread's 60.3 GB/s, measured alone on one CPU") != NULL);
	for (int i = 0; i < pk.nrows; i++)
		nmachine += !strcmp(pk.rows[i].scope, "machine");
	CHECK_EQ_INT(nmachine, 2);
	r = find(&pk, "bandwidth", "", "machine", "measured");
	CHECK(r && r->value == 58.2e9);
	CHECK(r && strstr(r->detail, "CPUs 0-1 (2 threads together; the target's CPUs 0 are among them): "
			  "measured bandwidth  all") == r->detail);
	CHECK(r && r[1].value == 70e9 && strncmp(r[1].detail, "CPUs 0-3 (4 threads", 19) == 0);
	/* none: no such row */
	rq.nmachine = 0;
	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, pp, 1, ""), 0);
	CHECK(find(&pk, "bandwidth", "", "machine", "measured") == NULL);
	CHECK_NEAR(pk.bw, 60.3e9, 1);
}

/* A figure the profile marks disturbed is never a ceiling: the issue's
 * VM, re-measured beside other jobs (all CPUs 269 G at 52%, one core
 * 259 G undisturbed): MFU divides by 2 x 259 G, not the 332 G spec. */
static void test_disturbed(void)
{
	struct machine m = epyc_vm();
	struct profile_status st;
	struct peaks_request rq = { .mode = PEAKS_AUTO, .dtype = "fp32", .profile = &st };
	struct profile_peak pp[5] = {
		row("flops", "fp32", "all", 2.69e11),
		row("flops", "fp32", "core", 2.59e11),
		row("bandwidth", "", "all", 2.0e10),
		row("bandwidth", "", "core", 3.1e10),
		row("flops", "fp32", "all", 1.9e11), /* another kernel, undisturbed, slower */
	};
	char why[300];

	memset(&st, 0, sizeof(st));
	pp[0].disturbed = 1, pp[0].cpu_share = 0.52, pp[0].loadavg = 2.1, pp[0].measured_unix_s = 1767323045;
	pp[2].disturbed = 1, pp[2].cpu_share = 0.4, pp[2].ncpu = 2;
	snprintf(pp[2].cpus, sizeof(pp[2].cpus), "0-1");
	snprintf(pp[0].kernel, sizeof(pp[0].kernel), "avx512_fma");
	snprintf(pp[1].kernel, sizeof(pp[1].kernel), "avx512_fma");
	snprintf(pp[4].kernel, sizeof(pp[4].kernel), "avx2_fma");
	pp[0].ncpu = 2;
	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, pp, 5, ""), 0);
	CHECK_NEAR(pk.flops, 2 * 2.59e11, 1);
	CHECK(strstr(pk.flops_source, "one core's 259 GFLOP/s x 2 cores (the profile's all-CPU figure, 269 GFLOP/s, "
		     "was measured while other tasks used the CPUs: its threads ran 52% of the time, load average 2.10, "
		     "2026-01-02 03:04 UTC)") != NULL);
	/* bandwidth: the disturbed all-CPU figure is not used, one thread's x 2 is */
	CHECK_NEAR(pk.bw, 2 * 3.1e10, 1);
	CHECK(strstr(pk.bw_source, "the profile's figure for these CPUs, 20 GB/s, was measured while other tasks "
		     "used them: its threads ran 40% of the time") != NULL);
	CHECK(strstr(pk.profile_note, "the machine profile has figures measured while other tasks ran, which are "
		     "never used as peaks: its fp32 figure for all 2 CPUs (269 GFLOP/s, avx512_fma kernel)") != NULL);
	CHECK(strstr(pk.profile_note, "its memory bandwidth figure for 0-1 (20 GB/s)") != NULL);
	CHECK(strstr(pk.profile_note, "re-measure on a quiet machine with 'mfu-calibrate'") != NULL);
	/* the disturbed rows are not in the run's peak table */
	for (int i = 0; i < pk.nrows; i++)
		CHECK(pk.rows[i].value != 2.69e11 && pk.rows[i].value != 2.0e10);

	/* the profile kept the earlier figures over a disturbed calibration:
	 * said, and nothing to re-measure */
	pp[0].disturbed = 0, pp[0].value = 5.2e11;
	pp[2].disturbed = 0, pp[2].value = 6.0e10;
	st.format = 3;
	st.last = (struct profile_calibration){ .id = 2, .unix_s = 1767326645, .loadavg = 2.1, .measurements = 24,
						.disturbed = 13, .kept = 9, .lowest_share = 0.43,
						.kept_since = 1767323045 };
	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, pp, 5, ""), 0);
	CHECK_NEAR(pk.flops, 5.2e11, 1);
	CHECK_NEAR(pk.bw, 6.0e10, 1);
	CHECK(strstr(pk.profile_note, "the machine profile's latest calibration (2026-01-02 04:04 UTC, load average "
		     "2.10) was disturbed by other tasks in 13 of its 24 measurements (its threads ran as little as 43% of "
		     "the time): 9 of those figures were not saved, the earlier undisturbed ones (measured since "
		     "2026-01-02 03:04 UTC) stand in for them") != NULL);
	CHECK(strstr(pk.profile_note, "re-measure") == NULL);

	/* only disturbed figures for the dtype: the spec, said */
	pp[0].disturbed = 1, pp[1].disturbed = 1, pp[4].disturbed = 1;
	memset(&st, 0, sizeof(st));
	CHECK_EQ_INT(peaks_choose(&pk, &m, &rq, pp, 5, ""), 0);
	CHECK_NEAR(pk.flops, 2.6e9 * 2 * 64, 1);
	CHECK(strstr(pk.profile_note, "its one-core fp32 figure (259 GFLOP/s, avx512_fma kernel)") != NULL);
	CHECK_EQ_INT(peaks_profile_disturbed(pp, 5, "fp32", why, sizeof(why)), 1);
	CHECK_STR(why, "the machine profile's fp32 FLOP/s figures were measured while other tasks ran");
	CHECK_EQ_INT(peaks_profile_disturbed(pp, 5, "fp64", why, sizeof(why)), 0);
	pp[2].disturbed = 1, pp[3].disturbed = 1;
	CHECK_EQ_INT(peaks_profile_disturbed(pp, 5, "fp64", why, sizeof(why)), 1);
	CHECK_STR(why, "the machine profile's memory bandwidth figures were measured while other tasks ran");
}

/* How busy the machine was between two readings of /proc/stat. */
static void test_stat_busy(void)
{
	double busy = -1;

	/* 100 ticks: 25 user, 5 system, 60 idle, 10 iowait */
	CHECK_EQ_INT(peaks_stat_busy("cpu  100 0 50 1000 10 0 0 0 0 0\n",
				     "cpu  125 0 55 1060 20 0 0 0 0 0\n", &busy), 0);
	CHECK_NEAR(busy, 0.30, 1e-9);
	CHECK_EQ_INT(peaks_stat_busy("cpu 1 2 3\n", "cpu 1 2 3 4\n", &busy), -EINVAL);
	CHECK_EQ_INT(peaks_stat_busy("cpu 5 0 0 5\n", "cpu 4 0 0 5\n", &busy), -EINVAL); /* went back */
	CHECK_EQ_INT(peaks_stat_busy("cpu 5 0 0 5\n", "cpu 5 0 0 5\n", &busy), -EINVAL); /* no time */
	CHECK_EQ_INT(peaks_machine_busy(0.01, &busy), 0);
	CHECK(busy >= 0 && busy <= 1);
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
	test_bw_slice_vm();
	test_bw_slice_taskset_quota();
	test_machine_rows();
	test_disturbed();
	test_stat_busy();
	return check_status();
}
