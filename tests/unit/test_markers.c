/* The markers state machine: pairing, counter deltas, and every misuse
 * becoming an anomaly row (fed records directly, no recorder). */
#include <math.h>
#include <string.h>

#include "check.h"
#include "counters.h"
#include "markers.h"

#define MAXROWS 64

struct rows {
	struct interval_row steps[MAXROWS], phases[MAXROWS];
	char phase_names[MAXROWS][MRING_NAME_MAX];
	int nsteps, nphases, nanom;
	char anom[MAXROWS][40];
};

static int on_step(void *ctx, const struct interval_row *r)
{
	struct rows *rs = ctx;
	if (rs->nsteps < MAXROWS)
		rs->steps[rs->nsteps++] = *r;
	return 0;
}

static int on_phase(void *ctx, const struct interval_row *r)
{
	struct rows *rs = ctx;
	if (rs->nphases < MAXROWS) {
		strcpy(rs->phase_names[rs->nphases], r->name);
		rs->phases[rs->nphases] = *r;
		rs->phases[rs->nphases].name = rs->phase_names[rs->nphases];
		rs->nphases++;
	}
	return 0;
}

static int on_anomaly(void *ctx, const struct anomaly_row *r)
{
	struct rows *rs = ctx;
	if (rs->nanom < MAXROWS)
		strcpy(rs->anom[rs->nanom++], r->kind);
	return 0;
}

static struct counters cs;

/* Two software counters (task-clock, context-switches) in group 0 and two
 * hardware ones (cycles, an fp32 FLOP event of weight 8) in group 1. */
static void setup_counters(void)
{
	memset(&cs, 0, sizeof(cs));
	cs.n = 4;
	cs.ngroups = 2;
	const char *names[] = { "task-clock", "context-switches", "cycles", "FLOPS8" };
	const char *kinds[] = { "software", "software", "hardware", "hardware" };
	enum counter_col cols[] = { COL_CPU_NS, COL_CTX_SWITCHES, COL_CYCLES, COL_FLOPS_FP32 };
	for (int i = 0; i < 4; i++) {
		strcpy(cs.c[i].name, names[i]);
		cs.c[i].kind = kinds[i];
		cs.c[i].col = cols[i];
		cs.c[i].opened = 1;
		cs.c[i].group = i < 2 ? 0 : 1;
		cs.c[i].word = i < 2 ? 3 + i : 5 + 3 + (i - 2);
		cs.c[i].weight = i == 3 ? 8 : 0;
	}
	cs.group_nr[0] = cs.group_nr[1] = 2;
	cs.group_offset[0] = 0;
	cs.group_offset[1] = 5;
}

static struct mring_record rec(int kind, int pid, int tid, uint64_t t, const char *name)
{
	struct mring_record r;
	memset(&r, 0, sizeof(r));
	r.kind = (uint16_t)kind;
	r.pid = pid;
	r.tid = tid;
	r.time_ns = t;
	r.ngroups = 2;
	/* counters grow linearly with time: task-clock = t, switches = t/1000,
	 * cycles = 2t, flop events = t/10; group 1 ran half the time */
	uint64_t *g0 = &r.data[0], *g1 = &r.data[5];
	g0[0] = 2;
	g0[1] = g0[2] = t;
	g0[3] = t;
	g0[4] = t / 1000;
	g1[0] = 2;
	g1[1] = t;
	g1[2] = t / 2;
	g1[3] = 2 * t / 2;
	g1[4] = t / 10 / 2;
	if (name)
		strcpy(r.name, name);
	return r;
}

static struct markers *mk(struct rows *rs)
{
	struct markers_sink sink = { rs, on_step, on_phase, on_anomaly };
	memset(rs, 0, sizeof(*rs));
	return markers_new(&cs, &sink);
}

static void feed(struct markers *m, struct mring_record r)
{
	CHECK_EQ_INT(markers_feed(m, &r), 0);
}

static void test_pairing_and_deltas(void)
{
	struct rows rs;
	struct markers *m = mk(&rs);
	struct mring_record r;

	feed(m, rec(MRING_STEP_BEGIN, 10, 10, 1000000, NULL));
	r = rec(MRING_STEP_MODEL, 10, 10, 1000100, NULL);
	r.a = 1e9;
	r.b = 4e6;
	feed(m, r);
	feed(m, r); /* calls add up */
	feed(m, rec(MRING_PHASE_BEGIN, 10, 10, 1100000, "forward"));
	feed(m, rec(MRING_PHASE_BEGIN, 10, 11, 1150000, "loader")); /* other thread */
	feed(m, rec(MRING_PHASE_END, 10, 10, 1300000, "forward"));
	feed(m, rec(MRING_PHASE_END, 10, 11, 1400000, "loader"));
	feed(m, rec(MRING_STEP_END, 10, 12, 3000000, NULL)); /* ended by another thread */
	CHECK_EQ_INT(markers_finish(m), 0);

	CHECK_EQ_INT(rs.nsteps, 1);
	CHECK_EQ_INT(rs.nanom, 0);
	struct interval_row *s = &rs.steps[0];
	CHECK_EQ_INT(s->id, 0);
	CHECK_EQ_INT(s->complete, 1);
	CHECK_EQ_INT(s->end_ns - s->begin_ns, 2000000);
	CHECK_EQ_INT(s->tid, 10);
	CHECK_EQ_INT(s->end_tid, 12);
	CHECK_NEAR(s->model_flops, 2e9, 0);
	CHECK_NEAR(s->model_bytes, 8e6, 0);
	CHECK(s->d.has[COL_CPU_NS] && s->d.has[COL_CTX_SWITCHES] && s->d.has[COL_CYCLES] && s->d.has[COL_FLOPS_FP32]);
	CHECK_NEAR(s->d.v[COL_CPU_NS], 2000000, 0);
	CHECK_NEAR(s->d.v[COL_CTX_SWITCHES], 2000, 0);
	/* multiplexed group 1: raw delta x enabled/running (2) */
	CHECK_NEAR(s->d.v[COL_CYCLES], 4000000, 1);
	CHECK_NEAR(s->d.v[COL_FLOPS_FP32], 8.0 * 200000, 8);
	CHECK_NEAR(counters_hw_flops(&s->d), 8.0 * 200000, 8);
	/* raw (as counted) and scaled values per counter */
	CHECK_EQ_INT(s->d.raw[2], 2000000);
	CHECK_NEAR(s->d.scaled[2], 4000000, 1);
	CHECK_NEAR(s->d.hw_fraction, 0.5, 1e-9);

	CHECK_EQ_INT(rs.nphases, 2);
	CHECK_STR(rs.phases[0].name, "forward");
	CHECK_EQ_INT(rs.phases[0].step, 0);
	CHECK_EQ_INT(rs.phases[0].end_ns - rs.phases[0].begin_ns, 200000);
	CHECK_STR(rs.phases[1].name, "loader");
	CHECK_EQ_INT(rs.phases[1].tid, 11);
	CHECK_EQ_INT(rs.phases[1].depth, 0);
	markers_free(m);
}

static void test_nesting(void)
{
	struct rows rs;
	struct markers *m = mk(&rs);

	feed(m, rec(MRING_PHASE_BEGIN, 1, 1, 100, "a"));
	feed(m, rec(MRING_PHASE_BEGIN, 1, 1, 200, "b"));
	feed(m, rec(MRING_PHASE_END, 1, 1, 300, "b"));
	feed(m, rec(MRING_PHASE_END, 1, 1, 400, "a"));
	CHECK_EQ_INT(rs.nphases, 2);
	CHECK_STR(rs.phases[0].name, "b");
	CHECK_EQ_INT(rs.phases[0].depth, 1);
	CHECK_EQ_INT(rs.phases[0].parent, rs.phases[1].id);
	CHECK_EQ_INT(rs.phases[1].step, -1); /* outside any step */
	CHECK_EQ_INT(rs.nanom, 0);
	markers_free(m);
}

static const struct {
	int line;
	const char *kind;
} expected_misuse[] = {
	{ __LINE__, "step_end_without_begin" },
	{ __LINE__, "model_outside_step" },
	{ __LINE__, "phase_end_without_begin" },
	{ __LINE__, "bad_model_value" },
	{ __LINE__, "step_begin_while_open" },
	{ __LINE__, "phase_end_mismatch" },
	{ __LINE__, "phase_end_without_begin" },
	{ __LINE__, "model_outside_phase" },
	{ __LINE__, "phase_open_at_exit" },
	{ __LINE__, "step_open_at_exit" },
};

static void test_misuse(void)
{
	struct rows rs;
	struct markers *m = mk(&rs);
	struct mring_record r;

	feed(m, rec(MRING_STEP_END, 1, 1, 10, NULL));
	r = rec(MRING_STEP_MODEL, 1, 1, 11, NULL);
	feed(m, r);
	feed(m, rec(MRING_PHASE_END, 1, 1, 12, "x"));
	feed(m, rec(MRING_STEP_BEGIN, 1, 1, 20, NULL));
	r = rec(MRING_STEP_MODEL, 1, 1, 21, NULL);
	r.a = INFINITY; /* NAN would mean "unknown", not misuse */
	feed(m, r);
	feed(m, rec(MRING_STEP_BEGIN, 1, 1, 30, NULL));
	feed(m, rec(MRING_PHASE_BEGIN, 1, 1, 40, "outer"));
	feed(m, rec(MRING_PHASE_BEGIN, 1, 1, 41, "inner"));
	feed(m, rec(MRING_PHASE_END, 1, 1, 42, "outer"));
	feed(m, rec(MRING_PHASE_BEGIN, 1, 1, 43, "p"));
	feed(m, rec(MRING_PHASE_END, 1, 1, 44, "q"));   /* not open: ignored */
	feed(m, rec(MRING_PHASE_END, 1, 1, 45, "p"));
	feed(m, rec(MRING_PHASE_MODEL, 1, 1, 46, NULL)); /* nothing open */
	feed(m, rec(MRING_PHASE_BEGIN, 1, 1, 50, "dangling"));
	CHECK_EQ_INT(markers_finish(m), 0);

	CHECK_EQ_INT(rs.nanom, (int)(sizeof(expected_misuse) / sizeof(expected_misuse[0])));
	for (size_t i = 0; i < sizeof(expected_misuse) / sizeof(expected_misuse[0]) && (int)i < rs.nanom; i++)
		CHECK_ROW(strcmp(rs.anom[i], expected_misuse[i].kind) == 0, expected_misuse[i].line);
	/* steps: 0 incomplete (replaced), 1 incomplete (open at exit) */
	CHECK_EQ_INT(rs.nsteps, 2);
	CHECK_EQ_INT(rs.steps[0].id, 0);
	CHECK_EQ_INT(rs.steps[0].complete, 0);
	CHECK_EQ_INT(rs.steps[1].id, 1);
	CHECK_EQ_INT(rs.steps[1].complete, 0);
	/* phases: inner (incomplete), outer, p, dangling (incomplete) */
	CHECK_EQ_INT(rs.nphases, 4);
	CHECK_STR(rs.phases[0].name, "inner");
	CHECK_EQ_INT(rs.phases[0].complete, 0);
	CHECK_STR(rs.phases[1].name, "outer");
	CHECK_EQ_INT(rs.phases[1].complete, 1);
	CHECK_STR(rs.phases[3].name, "dangling");
	CHECK_EQ_INT(rs.phases[3].complete, 0);
	CHECK_EQ_INT(markers_anomalies(m), (uint64_t)rs.nanom);
	markers_free(m);
}

static void test_processes_and_threads(void)
{
	struct rows rs;
	struct markers *m = mk(&rs);

	/* two processes each with an open step at once: no anomaly */
	feed(m, rec(MRING_STEP_BEGIN, 1, 1, 100, NULL));
	feed(m, rec(MRING_STEP_BEGIN, 2, 2, 150, NULL));
	feed(m, rec(MRING_STEP_END, 2, 2, 250, NULL));
	feed(m, rec(MRING_STEP_END, 1, 1, 300, NULL));
	/* many threads, forcing the thread table to grow */
	for (int t = 0; t < 500; t++)
		feed(m, rec(MRING_PHASE_BEGIN, 1, 1000 + t, 400 + (uint64_t)t, "w"));
	for (int t = 0; t < 500; t++)
		feed(m, rec(MRING_PHASE_END, 1, 1000 + t, 1000 + (uint64_t)t, "w"));
	CHECK_EQ_INT(rs.nanom, 0);
	CHECK_EQ_INT(rs.nsteps, 2);
	CHECK_EQ_INT(rs.steps[0].pid, 2);
	CHECK_EQ_INT(rs.steps[0].id, 1);
	CHECK_EQ_INT(rs.steps[1].end_ns - rs.steps[1].begin_ns, 200);
	CHECK_EQ_INT(markers_steps(m), 2);
	markers_free(m);
}

/* A long run with thread churn: 100,000 short-lived threads each mark a
 * phase; the thread table stays small. */
static void test_thread_churn(void)
{
	struct rows rs;
	struct markers *m = mk(&rs);
	for (int t = 1; t <= 100000; t++) {
		feed(m, rec(MRING_PHASE_BEGIN, 1, t, (uint64_t)t * 10, "w"));
		feed(m, rec(MRING_PHASE_END, 1, t, (uint64_t)t * 10 + 5, "w"));
	}
	CHECK(markers_thread_slots(m) <= 256);
	CHECK_EQ_INT(rs.nanom, 0);
	markers_free(m);
}

/* NAN declares a value unknown: flops-only steps and phases keep their bytes
 * unknown (no MODEL_BYTES), never 0, and it is not misuse. */
static void test_unknown_model_values(void)
{
	struct rows rs;
	struct markers *m = mk(&rs);
	struct mring_record r;

	feed(m, rec(MRING_STEP_BEGIN, 10, 10, 1000000, NULL));
	r = rec(MRING_STEP_MODEL, 10, 10, 1000100, NULL);
	r.a = 3e9;
	r.b = NAN;
	feed(m, r);
	feed(m, rec(MRING_PHASE_BEGIN, 10, 10, 1100000, "forward"));
	r = rec(MRING_PHASE_MODEL, 10, 10, 1100100, NULL);
	r.a = NAN;
	r.b = 1e6;
	feed(m, r);
	feed(m, rec(MRING_PHASE_END, 10, 10, 1300000, "forward"));
	feed(m, rec(MRING_STEP_END, 10, 10, 3000000, NULL));
	feed(m, rec(MRING_STEP_BEGIN, 10, 10, 4000000, NULL));
	feed(m, rec(MRING_STEP_END, 10, 10, 5000000, NULL));
	CHECK_EQ_INT(markers_finish(m), 0);

	CHECK_EQ_INT(rs.nanom, 0);
	CHECK_EQ_INT(rs.nsteps, 2);
	CHECK_EQ_INT(rs.steps[0].has_model, MODEL_FLOPS);
	CHECK_NEAR(rs.steps[0].model_flops, 3e9, 0);
	CHECK_EQ_INT(rs.steps[1].has_model, 0); /* nothing declared */
	CHECK_EQ_INT(rs.nphases, 1);
	CHECK_EQ_INT(rs.phases[0].has_model, MODEL_BYTES);
	CHECK_NEAR(rs.phases[0].model_bytes, 1e6, 0);
	markers_free(m);
}

/* Probe boundaries and the program's own markers: under --step the
 * markers' steps are left out; an end before its begin never becomes a
 * negative duration. */
static void test_out_of_order(void)
{
	struct rows rs;
	struct markers *m = mk(&rs);
	struct mring_record r;

	markers_set_probe_steps(m);
	r = rec(MRING_STEP_BEGIN, 1, 1, 1000, NULL);
	CHECK_EQ_INT(markers_feed_probe(m, &r), 0);
	feed(m, rec(MRING_STEP_BEGIN, 1, 1, 1100, NULL));   /* the program's: left out */
	feed(m, rec(MRING_STEP_MODEL, 1, 1, 1150, NULL));
	feed(m, rec(MRING_STEP_END, 1, 1, 1200, NULL));
	r = rec(MRING_STEP_END, 1, 1, 2000, NULL);
	CHECK_EQ_INT(markers_feed_probe(m, &r), 0);
	/* a phase whose end record (drained late) is older than its begin */
	feed(m, rec(MRING_PHASE_BEGIN, 1, 1, 3000, "p"));
	r = rec(MRING_PHASE_END, 1, 1, 2500, "p");
	CHECK_EQ_INT(markers_feed_probe(m, &r), 0);
	CHECK_EQ_INT(markers_finish(m), 0);

	CHECK_EQ_INT(markers_ignored_step_markers(m), 3);
	CHECK_EQ_INT(rs.nsteps, 1);
	CHECK_EQ_INT(rs.steps[0].complete, 1);
	CHECK_EQ_INT(rs.steps[0].end_ns - rs.steps[0].begin_ns, 1000);
	CHECK_EQ_INT(rs.nphases, 1);
	CHECK_EQ_INT(rs.phases[0].complete, 0);
	CHECK_EQ_INT(rs.nanom >= 1, 1);
	if (rs.nanom >= 1)
		CHECK_STR(rs.anom[rs.nanom - 1], "end_before_begin");
	markers_free(m);
}

int main(void)
{
	test_thread_churn();
	setup_counters();
	test_pairing_and_deltas();
	test_nesting();
	test_misuse();
	test_unknown_model_values();
	test_out_of_order();
	test_processes_and_threads();
	return check_status();
}
