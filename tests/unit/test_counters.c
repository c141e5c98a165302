/* Counter planning (software always; hardware and FLOP events only with a
 * core PMU, encoded by libpfm4 for the PMU named by LIBPFM_FORCE_PMU) and
 * turning two readings into metrics (weights, multiplex scaling). */
#include <errno.h>
#include <perfmon/pfmlib.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <string.h>

#include "check.h"
#include "record/counters/counters.h"

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
	char why[256];
	unsetenv("LIBPFM_FORCE_PMU");
	CHECK_EQ_INT(counters_plan(&cs, FIX "/sysfs-nopmu", NULL, 0, why, sizeof(why)), 0);
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
	const char *pmu, *col, *event;
	unsigned long long config;
	double weight;
} encodings[] = {
	{ __LINE__, "spr", "hw_flops_fp64", "FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", 0x01c7, 1 },
	{ __LINE__, "spr", "hw_flops_fp64", "FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE", 0x04c7, 2 },
	{ __LINE__, "spr", "hw_flops_fp64", "FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE", 0x10c7, 4 },
	{ __LINE__, "spr", "hw_flops_fp64", "FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE", 0x40c7, 8 },
	{ __LINE__, "spr", "hw_flops_fp32", "FP_ARITH_INST_RETIRED:SCALAR_SINGLE", 0x02c7, 1 },
	{ __LINE__, "spr", "hw_flops_fp32", "FP_ARITH_INST_RETIRED:128B_PACKED_SINGLE", 0x08c7, 4 },
	{ __LINE__, "spr", "hw_flops_fp32", "FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE", 0x20c7, 8 },
	{ __LINE__, "spr", "hw_flops_fp32", "FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE", 0x80c7, 16 },
	{ __LINE__, "spr", "hw_flops_fp16", "FP_ARITH_INST_RETIRED2:SCALAR_HALF", 0x01cf, 1 },
	{ __LINE__, "spr", "hw_flops_fp16", "FP_ARITH_INST_RETIRED2:128B_PACKED_HALF", 0x04cf, 8 },
	{ __LINE__, "spr", "hw_flops_fp16", "FP_ARITH_INST_RETIRED2:256B_PACKED_HALF", 0x08cf, 16 },
	{ __LINE__, "spr", "hw_flops_fp16", "FP_ARITH_INST_RETIRED2:512B_PACKED_HALF", 0x10cf, 32 },
	{ __LINE__, "icx", "hw_flops_fp64", "FP_ARITH_INST_RETIRED:512B_PACKED_DOUBLE", 0x40c7, 8 },
	{ __LINE__, "icx", "hw_flops_fp32", "FP_ARITH_INST_RETIRED:SCALAR_SINGLE", 0x02c7, 1 },
	{ __LINE__, "skx", "hw_flops_fp64", "FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", 0x01c7, 1 },
	{ __LINE__, "skx", "hw_flops_fp32", "FP_ARITH_INST_RETIRED:256B_PACKED_SINGLE", 0x20c7, 8 },
	/* client cores (Skylake, Ice Lake): the same FP_ARITH codes */
	{ __LINE__, "skl", "hw_flops_fp64", "FP_ARITH_INST_RETIRED:256B_PACKED_DOUBLE", 0x10c7, 4 },
	{ __LINE__, "icl", "hw_flops_fp32", "FP_ARITH_INST_RETIRED:512B_PACKED_SINGLE", 0x80c7, 16 },
	{ __LINE__, "amd64_fam17h_zen2", "hw_flops_any", "RETIRED_SSE_AVX_FLOPS:ANY", 0x0f03, 1 },
	{ __LINE__, "amd64_fam19h_zen3", "hw_flops_any", "RETIRED_SSE_AVX_FLOPS:ANY", 0x0f03, 1 },
	{ __LINE__, "amd64_fam19h_zen4", "hw_flops_any", "RETIRED_SSE_AVX_FLOPS:ANY", 0x1f03, 1 },
	{ __LINE__, "spr", "amx_ops", "AMX_OPS_RETIRED:BF16", 0x02ce, 1 },
	{ __LINE__, "spr", "amx_ops", "AMX_OPS_RETIRED:INT8", 0x01ce, 1 },
};

/* libpfm4 reads LIBPFM_FORCE_PMU once per process (pfm_terminate() does not
 * forget a forced PMU), so each row runs in a child process. */
static void encoding_row(size_t i)
{
	struct counters cs;
	const struct counter *c;

	setenv("LIBPFM_FORCE_PMU", encodings[i].pmu, 1);
	pfm_terminate(); /* the parent initialised it unforced */
	{
		char why[256];
		CHECK_ROW(counters_plan(&cs, FIX "/sysfs-pmu", NULL, 0, why, sizeof(why)) == 0, encodings[i].line);
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
		CHECK_ROW(c->group >= 2 && strcmp(counters_col_name(c->col), encodings[i].col) == 0, encodings[i].line);
		/* at most COUNTER_GROUP_MAX hardware events per group, one precision each */
		for (int k = 0; k < cs.n; k++)
			if (cs.c[k].group == c->group)
				CHECK_ROW(cs.c[k].col == c->col, encodings[i].line);
		CHECK_ROW(cs.hw_missing[0] == '\0', encodings[i].line);
	}
	_exit(check_failures ? 1 : 0);
}

static void spr_plan(void);

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
	int status;
	pid_t pid = fork();
	if (pid == 0)
		spr_plan();
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* In a child of its own, like the rows: the host's CPU, whatever it is, must
 * not decide which PMU libpfm4 uses. */
static void spr_plan(void)
{
	/* SPR: software, cycles/instructions/ref-cycles, then fp64, fp32, fp16 and
	 * AMX in groups of their own: 4+3+4+4+4+2 events in 6 groups */
	struct counters cs;
	char why[256];
	setenv("LIBPFM_FORCE_PMU", "spr", 1);
	pfm_terminate();
	CHECK_EQ_INT(counters_plan(&cs, FIX "/sysfs-pmu", NULL, 0, why, sizeof(why)), 0);
	CHECK_EQ_INT(cs.n, 21);
	CHECK_EQ_INT(cs.ngroups, 6);
	CHECK(cs.amx_note[0] != '\0');
	for (int g = 1; g < cs.ngroups; g++) {
		int n = 0;
		for (int i = 0; i < cs.n; i++)
			n += cs.c[i].group == g;
		CHECK(n >= 1 && n <= COUNTER_GROUP_MAX);
	}
	/* user events: known ones are planned, unknown ones refused with a reason */
	const char *user[] = { "INST_RETIRED:ANY", "spr::BR_INST_RETIRED:ALL_BRANCHES" };
	CHECK_EQ_INT(counters_plan(&cs, FIX "/sysfs-pmu", user, 2, why, sizeof(why)), 0);
	const struct counter *inst = find(&cs, "INST_RETIRED:ANY");
	CHECK(inst != NULL);
	if (!inst)
		_exit(1);
	CHECK_STR(inst->kind, "user");
	CHECK_EQ_INT(inst->col, COL_NONE);
	const char *bad[] = { "NO_SUCH_EVENT:FOO" };
	CHECK_EQ_INT(counters_plan(&cs, FIX "/sysfs-pmu", bad, 1, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "NO_SUCH_EVENT:FOO") != NULL);
	_exit(check_failures ? 1 : 0);
}

static void put(struct counter_reading *r, unsigned off, uint64_t nr, uint64_t te, uint64_t tr,
		const uint64_t *v)
{
	r->data[off] = nr;
	r->data[off + 1] = te;
	r->data[off + 2] = tr;
	for (uint64_t k = 0; k < nr; k++)
		r->data[off + 3 + k] = v[k];
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
	cs.ngroups = 2;
	enum counter_col cols[] = { COL_CPU_NS, COL_CTX_SWITCHES, COL_CYCLES, COL_FLOPS_FP32 };
	for (int i = 0; i < 4; i++) {
		cs.c[i].opened = 1;
		cs.c[i].kind = i < 2 ? "software" : "hardware";
		cs.c[i].col = cols[i];
		cs.c[i].group = i >= 2;
		cs.c[i].word = i < 2 ? 3 + i : 5 + 3 + (i - 2);
		cs.c[i].weight = 16;
	}
	cs.group_nr[0] = cs.group_nr[1] = 2;
	cs.group_offset[1] = 5;
	a.ngroups = b.ngroups = 2;
	put(&a, 0, 2, 1000, 1000, (uint64_t[]){ 1000, 3 });
	put(&b, 0, 2, 5000, 5000, (uint64_t[]){ 5000, 10 });
	/* group 1 counted a quarter of the time: 500 -> 1500 of 1000 -> 5000 */
	put(&a, 5, 2, 1000, 500, (uint64_t[]){ 100, 10 });
	put(&b, 5, 2, 5000, 1500, (uint64_t[]){ 400, 35 });
	counters_delta(&cs, &a, &b, &d);
	CHECK_NEAR(d.v[COL_CPU_NS], 4000, 0);
	CHECK_NEAR(d.v[COL_CTX_SWITCHES], 7, 0);
	CHECK_NEAR(d.v[COL_CYCLES], 300 * 4, 1e-9);
	CHECK_NEAR(d.v[COL_FLOPS_FP32], 25 * 4 * 16, 1e-9);
	CHECK_NEAR(counters_hw_flops(&d), 25 * 4 * 16, 1e-9);
	CHECK_NEAR(d.hw_fraction, 0.25, 1e-12);
	CHECK_EQ_INT(d.raw[3], 25);
	CHECK_NEAR(d.scaled[3], 100, 1e-9);

	/* not multiplexed: fraction 1, scaled = raw */
	put(&b, 5, 2, 5000, 4500, (uint64_t[]){ 400, 35 });
	counters_delta(&cs, &a, &b, &d);
	CHECK_NEAR(d.hw_fraction, 1.0, 1e-12);
	CHECK_NEAR(d.scaled[2], 300, 1e-9);

	/* group 1 never scheduled: hardware values unknown, software known */
	put(&b, 5, 2, 5000, 500, (uint64_t[]){ 100, 10 });
	counters_delta(&cs, &a, &b, &d);
	CHECK(d.has[COL_CPU_NS]);
	CHECK(!d.has[COL_CYCLES] && !d.has[COL_FLOPS_FP32]);
	CHECK_NEAR(d.hw_fraction, 0, 0);
	CHECK_NEAR(counters_hw_flops(&d), -1, 0);

	/* user-mode-only switch counts are unknown, not 0 */
	cs.c[1].user_only = 1;
	counters_delta(&cs, &a, &b, &d);
	CHECK(!d.has[COL_CTX_SWITCHES]);

	/* a reading without the group (the marker could not read): unknown */
	b.data[0] = 0;
	counters_delta(&cs, &a, &b, &d);
	CHECK(!d.has[COL_CPU_NS]);
	CHECK_STR(counters_col_name(COL_CPU_NS), "cpu_ns");
	CHECK_STR(counters_col_name(COL_FLOPS_FP16), "hw_flops_fp16");
}

/* -e in perf's sysfs form: an alias of the PMU or literal terms, encoded
 * with its format files (fixture: SPR memory controller). */
static void test_sysfs_events(void)
{
	struct counters cs;
	char why[256];
	const char *ev[] = { "uncore_imc_0/cas_count_read/", "uncore_imc_0/event=0x4,umask=0x3/" };
	unsetenv("LIBPFM_FORCE_PMU");
	CHECK_EQ_INT(counters_plan(&cs, FIX "/uncore/intel-spr", ev, 2, why, sizeof(why)), 0);
	const struct counter *a = find(&cs, ev[0]), *b = find(&cs, ev[1]);
	CHECK(a && b);
	if (a && b) {
		CHECK_EQ_INT(a->attr.type, 20);
		CHECK(a->attr.config == 0xcf05); /* event=0x05 in 0-7, umask=0xcf in 8-15 */
		CHECK(b->attr.config == 0x0304);
		CHECK_STR(a->kind, "user");
	}
	const char *bad[][1] = { { "uncore_imc_0/no_such_alias/" }, { "nopmu/event=1/" }, { "uncore_imc_0/" },
				 { "/x/" }, { "uncore_imc_0/event=0x1ff/" } };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ_INT(counters_plan(&cs, FIX "/uncore/intel-spr", bad[i], 1, why, sizeof(why)), -EINVAL);
		CHECK(strstr(why, "unknown event") != NULL);
	}
}

/* --emulate: the hardware events give way to one group the emulator fills
 * (mfu_emulate.h's order), weighted by lanes; user events are refused. */
static void test_emulated(void)
{
	struct counters cs;
	struct counter_reading a, b;
	struct counter_delta d;
	char why[256];
	uint64_t va[18] = { 0 }, vb[18] = { 0 };

	unsetenv("LIBPFM_FORCE_PMU");
	CHECK_EQ_INT(counters_plan(&cs, FIX "/sysfs-nopmu", NULL, 0, why, sizeof(why)), 0);
	CHECK_EQ_INT(counters_plan_emulated(&cs, why, sizeof(why)), 0);
	CHECK_EQ_INT(cs.n, 4 + 18);
	CHECK_EQ_INT(cs.ngroups, 2);
	CHECK_EQ_INT(cs.emulated_group, 1);
	CHECK_STR(cs.hw_missing, "");
	const struct counter *c = find(&cs, "emu:fp64_256b");
	CHECK(c && c->emulated && c->group == 1 && c->col == COL_FLOPS_FP64 && c->weight == 4);
	c = find(&cs, "emu:fp32_512b");
	CHECK(c && c->col == COL_FLOPS_FP32 && c->weight == 16);
	c = find(&cs, "emu:bf16_128b");
	CHECK(c && c->col == COL_FLOPS_FP16 && c->weight == 8);
	c = find(&cs, "emu:fp32_scalar");
	CHECK(c && c->weight == 1);
	c = find(&cs, "emu:instructions");
	CHECK(c && c->col == COL_INSTRUCTIONS && c == &cs.c[cs.n - 1]);
	c = find(&cs, "emu:x87_ops");
	CHECK(c && c->col == COL_NONE);

	/* the layout: group 0's four software values, then the 18 counts */
	CHECK(counters_open_self(&cs) >= 0);
	CHECK_EQ_INT(cs.group_nr[1], 18);
	CHECK_EQ_INT(cs.group_offset[1], 3 + cs.group_nr[0]);
	CHECK_EQ_INT(cs.leader[1], 4);
	CHECK_EQ_INT(cs.c[4].word, cs.group_offset[1] + 3);
	CHECK_EQ_INT(cs.c[4].fd, -1);
	for (int i = 0; i < cs.n; i++)
		if (cs.c[i].fd >= 0)
			close(cs.c[i].fd);

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.ngroups = b.ngroups = 2; /* group 0 unread (nr 0): software values unknown */
	va[0 * 4 + 2] = 10;   /* fp64 256-bit */
	vb[0 * 4 + 2] = 110;
	vb[1 * 4 + 0] = 7;    /* fp32 scalar */
	vb[1 * 4 + 3] = 3;    /* fp32 512-bit */
	va[16] = 5;           /* x87 */
	vb[16] = 9;
	va[17] = 100;         /* instructions */
	vb[17] = 1100;
	put(&a, cs.group_offset[1], 18, 1000, 1000, va);
	put(&b, cs.group_offset[1], 18, 9000, 9000, vb);
	counters_delta(&cs, &a, &b, &d);
	CHECK_NEAR(d.v[COL_FLOPS_FP64], 100 * 4, 0);
	CHECK_NEAR(d.v[COL_FLOPS_FP32], 7 + 3 * 16, 0);
	CHECK(d.has[COL_FLOPS_FP16] && d.v[COL_FLOPS_FP16] == 0);
	CHECK_NEAR(counters_hw_flops(&d), 455, 0);
	CHECK_NEAR(d.v[COL_INSTRUCTIONS], 1000, 0);
	CHECK_NEAR(d.hw_fraction, 1, 0);
	CHECK(!d.has[COL_CPU_NS]);

	/* a user event would count the emulator itself */
	CHECK_EQ_INT(counters_plan(&cs, FIX "/sysfs-nopmu", NULL, 0, why, sizeof(why)), 0);
	cs.c[cs.n - 1].kind = "user";
	CHECK_EQ_INT(counters_plan_emulated(&cs, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "--emulate") != NULL);
}

int main(void)
{
	test_sysfs_events();
	test_no_pmu();
	test_encodings();
	test_delta();
	test_emulated();
	return check_status();
}
