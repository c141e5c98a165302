/* Counter planning (software always; hardware and FLOP events only with a
 * core PMU, encoded by libpfm4 for the PMU named by LIBPFM_FORCE_PMU) and
 * turning two readings into metrics (weights, multiplex scaling). */
#include <perfmon/pfmlib.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <string.h>

#include "check.h"
#include "counters.h"

#define FIX SRCDIR "/tests/unit/fixtures"

static const struct counter *find(const struct counters *cs, const char *name)
{
	for (int i = 0; i < cs->n; i++)
		if (strcmp(cs->c[i].name, name) == 0)
			return &cs->c[i];
	return NULL;
}

static void test_no_pmu(void)
{
	struct counters cs;
	CHECK_EQ_INT(counters_plan(&cs, "fp32", FIX "/sysfs-nopmu"), 0);
	CHECK_EQ_INT(cs.n, 4);
	CHECK_STR(cs.c[0].name, "task-clock");
	CHECK_EQ_INT(cs.c[0].col, COL_CPU_NS);
	CHECK(strstr(cs.hw_missing, "no hardware PMU") != NULL);
	for (int i = 0; i < cs.n; i++)
		CHECK_EQ_INT(cs.c[i].group, 0);
}

/* Raw codes from the vendors' event lists (Intel perfmon JSON for SKX, ICX
 * and SPR: FP_ARITH_INST_RETIRED is event 0xC7, FP_ARITH_INST_RETIRED2 is
 * 0xCF; AMD PPR for family 17h/19h: RETIRED_SSE_AVX_FLOPS is event 0x03). */
static const struct {
	int line;
	const char *pmu, *dtype, *event;
	unsigned long long config;
	double weight;
} encodings[] = {
	{ __LINE__, "spr", "fp64", "FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", 0x01c7, 1 },
	{ __LINE__, "spr", "fp64", "FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE", 0x04c7, 2 },
	{ __LINE__, "spr", "fp64", "FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE", 0x10c7, 4 },
	{ __LINE__, "spr", "fp64", "FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE", 0x40c7, 8 },
	{ __LINE__, "spr", "fp32", "FP_ARITH_INST_RETIRED:SCALAR_SINGLE", 0x02c7, 1 },
	{ __LINE__, "spr", "fp32", "FP_ARITH_INST_RETIRED:128B_PACKED_SINGLE", 0x08c7, 4 },
	{ __LINE__, "spr", "fp32", "FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE", 0x20c7, 8 },
	{ __LINE__, "spr", "fp32", "FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE", 0x80c7, 16 },
	{ __LINE__, "spr", "fp16", "FP_ARITH_INST_RETIRED2:SCALAR_HALF", 0x01cf, 1 },
	{ __LINE__, "spr", "fp16", "FP_ARITH_INST_RETIRED2:128B_PACKED_HALF", 0x04cf, 8 },
	{ __LINE__, "spr", "fp16", "FP_ARITH_INST_RETIRED2:256B_PACKED_HALF", 0x08cf, 16 },
	{ __LINE__, "spr", "fp16", "FP_ARITH_INST_RETIRED2:512B_PACKED_HALF", 0x10cf, 32 },
	{ __LINE__, "icx", "fp64", "FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE", 0x40c7, 8 },
	{ __LINE__, "icx", "fp32", "FP_ARITH_INST_RETIRED:SCALAR_SINGLE", 0x02c7, 1 },
	{ __LINE__, "skx", "fp64", "FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", 0x01c7, 1 },
	{ __LINE__, "skx", "fp32", "FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE", 0x20c7, 8 },
	{ __LINE__, "amd64_fam17h_zen2", "fp64", "RETIRED_SSE_AVX_FLOPS:ANY", 0x0f03, 1 },
	{ __LINE__, "amd64_fam19h_zen3", "fp32", "RETIRED_SSE_AVX_FLOPS:ANY", 0x0f03, 1 },
	{ __LINE__, "amd64_fam19h_zen4", "fp32", "RETIRED_SSE_AVX_FLOPS:ANY", 0x1f03, 1 },
};

/* libpfm4 reads LIBPFM_FORCE_PMU once per process (pfm_terminate() does not
 * forget a forced PMU), so each row runs in a child process. */
static void encoding_row(size_t i)
{
	struct counters cs;
	const struct counter *c;

	setenv("LIBPFM_FORCE_PMU", encodings[i].pmu, 1);
	{
		CHECK_ROW(counters_plan(&cs, encodings[i].dtype, FIX "/sysfs-pmu") == 0, encodings[i].line);
		CHECK_ROW(strcmp(cs.pmu, encodings[i].pmu) == 0, encodings[i].line);
		if (strcmp(cs.pmu, encodings[i].pmu) != 0)
			fprintf(stderr, "  pmu is %s\n", cs.pmu);
		CHECK_ROW(find(&cs, "cycles") && find(&cs, "instructions"), encodings[i].line);
		c = find(&cs, encodings[i].event);
		CHECK_ROW(c != NULL, encodings[i].line);
		if (!c)
			_exit(1);
		CHECK_ROW(c->attr.type == 4 /* PERF_TYPE_RAW */, encodings[i].line);
		CHECK_ROW(c->attr.config == encodings[i].config, encodings[i].line);
		CHECK_ROW(c->weight == encodings[i].weight, encodings[i].line);
		CHECK_ROW(c->group == 1 && c->col == COL_FLOPS, encodings[i].line);
		CHECK_ROW(cs.hw_missing[0] == '\0', encodings[i].line);
	}
	_exit(check_failures ? 1 : 0);
}

static void test_encodings(void)
{
	for (size_t i = 0; i < sizeof(encodings) / sizeof(encodings[0]); i++) {
		int status;
		pid_t pid = fork();
		if (pid == 0)
			encoding_row(i);
		waitpid(pid, &status, 0);
		CHECK_ROW(WIFEXITED(status) && WEXITSTATUS(status) == 0, encodings[i].line);
	}
	/* only the selected dtype's four width events: they fit an SMT core's
	 * four general-purpose counters */
	struct counters cs;
	setenv("LIBPFM_FORCE_PMU", "spr", 1);
	counters_plan(&cs, "fp64", FIX "/sysfs-pmu");
	int flops = 0;
	for (int i = 0; i < cs.n; i++)
		flops += cs.c[i].col == COL_FLOPS;
	CHECK_EQ_INT(flops, 4);
	/* no hardware FLOP counter for bf16 on SPR */
	counters_plan(&cs, "bf16", FIX "/sysfs-pmu");
	CHECK(strstr(cs.hw_missing, "bf16") != NULL);
	unsetenv("LIBPFM_FORCE_PMU");
}

static void test_delta(void)
{
	struct counters cs;
	struct counter_reading a, b;
	struct counter_delta d;

	memset(&cs, 0, sizeof(cs));
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	cs.n = 4;
	enum counter_col cols[] = { COL_CPU_NS, COL_CTX_SWITCHES, COL_CYCLES, COL_FLOPS };
	for (int i = 0; i < 4; i++) {
		cs.c[i].opened = 1;
		cs.c[i].col = cols[i];
		cs.c[i].index = i;
		cs.c[i].group = i >= 2;
		cs.c[i].weight = 16;
	}
	cs.nopen[0] = cs.nopen[1] = 2;
	a.nr = b.nr = 4;
	a.values[0] = 1000; b.values[0] = 5000;
	a.values[1] = 3; b.values[1] = 10;
	a.values[2] = 100; b.values[2] = 400;
	a.values[3] = 10; b.values[3] = 35;
	a.time_enabled1 = 1000; b.time_enabled1 = 5000;
	a.time_running1 = 500; b.time_running1 = 1500; /* counted 1/4 of the time */
	counters_delta(&cs, &a, &b, &d);
	CHECK_NEAR(d.v[COL_CPU_NS], 4000, 0);
	CHECK_NEAR(d.v[COL_CTX_SWITCHES], 7, 0);
	CHECK_NEAR(d.v[COL_CYCLES], 300 * 4, 1e-9);
	CHECK_NEAR(d.v[COL_FLOPS], 25 * 4 * 16, 1e-9);
	CHECK_NEAR(d.hw_fraction, 0.25, 1e-12);

	/* group 1 never scheduled: hardware values unknown, software known */
	b.time_running1 = a.time_running1;
	counters_delta(&cs, &a, &b, &d);
	CHECK(d.has[COL_CPU_NS]);
	CHECK(!d.has[COL_CYCLES] && !d.has[COL_FLOPS]);

	/* user-mode-only switch counts are unknown, not 0 */
	cs.c[1].user_only = 1;
	counters_delta(&cs, &a, &b, &d);
	CHECK(!d.has[COL_CTX_SWITCHES]);

	/* a reading without values (the marker could not read): unknown */
	b.nr = 0;
	counters_delta(&cs, &a, &b, &d);
	CHECK(!d.has[COL_CPU_NS]);
	CHECK_STR(counters_col_name(COL_CPU_NS), "cpu_ns");
}

int main(void)
{
	test_no_pmu();
	test_encodings();
	test_delta();
	return check_status();
}
