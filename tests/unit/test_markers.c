/* The markers state machine: pairing, counter deltas, and every misuse
 * becoming an anomaly row (fed records directly, no recorder). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "record/counters/counters.h"
#include "record/markers/markers.h"
#include "markers_fixture.h"

#define MAXROWS 64

struct rows {
	struct interval_row steps[MAXROWS], phases[MAXROWS];
	char phase_names[MAXROWS][MRING_NAME_MAX];
	int nsteps, nphases, nanom;
	char anom[MAXROWS][40];
	char anom_detail[MAXROWS][512];
	int32_t anom_tid[MAXROWS];
	int64_t anom_step[MAXROWS];
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
	if (rs->nanom < MAXROWS) {
		strcpy(rs->anom_detail[rs->nanom], r->detail);
		rs->anom_tid[rs->nanom] = r->tid;
		rs->anom_step[rs->nanom] = r->step;
		strcpy(rs->anom[rs->nanom++], r->kind);
	}
	return 0;
}

static struct counters cs;


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
	CHECK_EQ_INT(markers_finish(m, 0), 0);

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

/* A recording that detaches from a process that runs on cuts its open
 * step and phase: incomplete rows, no *_open_at_exit anomaly (the
 * program did nothing wrong). */
static void test_detached(void)
{
	struct rows rs;
	struct markers *m = mk(&rs);

	feed(m, rec(MRING_STEP_BEGIN, 1, 1, 10, NULL));
	feed(m, rec(MRING_PHASE_BEGIN, 1, 1, 11, "forward"));
	markers_set_detached(m);
	CHECK_EQ_INT(markers_finish(m, 0), 0);
	CHECK_EQ_INT(rs.nanom, 0);
	CHECK_EQ_INT(rs.nsteps, 1);
	CHECK_EQ_INT(rs.steps[0].complete, 0);
	CHECK_EQ_INT(rs.nphases, 1);
	CHECK_EQ_INT(rs.phases[0].complete, 0);
	markers_free(m);
}

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
	CHECK_EQ_INT(markers_finish(m, 0), 0);

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

/* A record after a loss: thread @tid dropped @n records of @kinds before it. */
static struct mring_record after_loss(struct mring_record r, unsigned kinds, uint32_t n)
{
	r.flags = (uint8_t)(r.flags | MRING_F_AFTER_LOSS | kinds);
	r.lost = n;
	return r;
}

static int count_kind(const struct rows *rs, const char *kind)
{
	int n = 0;
	for (int i = 0; i < rs->nanom; i++)
		n += strcmp(rs->anom[i], kind) == 0;
	return n;
}

/* Records a full ring dropped are no misuse: the boundaries the loss
 * explains give no misuse anomaly, what was open across it is kept as
 * incomplete (never paired over the gap into a wrong duration), and each
 * thread that lost records gets one records_lost row. Misuse on a thread
 * without loss, or after a loss has been paid off, is still reported. */
static void test_loss_is_not_misuse(void)
{
	struct rows rs;
	struct markers *m = mk(&rs);

	/* thread 10: x begins; its end and the next begin are lost; the next
	 * end must not close the first x (a wrong duration) */
	feed(m, rec(MRING_PHASE_BEGIN, 1, 10, 100, "x"));
	feed(m, after_loss(rec(MRING_PHASE_END, 1, 10, 400, "x"), MRING_F_LOST_PHASE, 2));
	/* a lost begin: its end is no phase_end_without_begin */
	feed(m, after_loss(rec(MRING_PHASE_END, 1, 10, 500, "y"), MRING_F_LOST_PHASE, 1));
	/* z's end is lost, z begins again: no mismatch, the second z pairs */
	feed(m, rec(MRING_PHASE_BEGIN, 1, 10, 600, "z"));
	feed(m, after_loss(rec(MRING_PHASE_BEGIN, 1, 10, 700, "z"), MRING_F_LOST_PHASE, 1));
	feed(m, rec(MRING_PHASE_END, 1, 10, 750, "z"));
	/* steps of process 1: a lost end, then a lost begin */
	feed(m, rec(MRING_STEP_BEGIN, 1, 10, 1000, NULL));
	feed(m, after_loss(rec(MRING_STEP_BEGIN, 1, 10, 1200, NULL), MRING_F_LOST_STEP, 1));
	feed(m, rec(MRING_STEP_END, 1, 10, 1300, NULL));
	struct mring_record model = after_loss(rec(MRING_STEP_MODEL, 1, 10, 1500, NULL), MRING_F_LOST_STEP, 1);
	model.a = 10;
	feed(m, model);
	feed(m, rec(MRING_STEP_END, 1, 10, 1600, NULL));
	/* a thread exits with its last records lost: its notice closes the
	 * phase it had open (no phase_open_at_exit) */
	feed(m, rec(MRING_PHASE_BEGIN, 1, 12, 1700, "tail"));
	feed(m, after_loss(rec(MRING_LOSS, 1, 12, 1800, NULL), MRING_F_LOST_PHASE, 3));
	CHECK_EQ_INT(rs.nanom, 1); /* step_broken_by_loss only */

	/* genuine misuse: on a thread that lost nothing, and on thread 20 once
	 * its loss is paid off (it lost one record with no phase open: one
	 * unmatched end is explained, not two) */
	feed(m, rec(MRING_PHASE_END, 1, 11, 2000, "q"));
	feed(m, after_loss(rec(MRING_PHASE_END, 1, 20, 2100, "w"), MRING_F_LOST_PHASE, 1));
	feed(m, rec(MRING_PHASE_END, 1, 20, 2200, "w"));
	/* the step debt was paid by the end at 1600 */
	feed(m, rec(MRING_STEP_END, 1, 10, 2300, NULL));
	/* a step begun after the gap, then another: still misuse */
	feed(m, rec(MRING_STEP_BEGIN, 1, 10, 2400, NULL));
	feed(m, rec(MRING_STEP_BEGIN, 1, 10, 2500, NULL));
	feed(m, rec(MRING_STEP_END, 1, 10, 2600, NULL));
	CHECK_EQ_INT(markers_finish(m, 0), 0);

	static const struct { const char *kind; int32_t tid; int line; } want[] = {
		{ "step_broken_by_loss", 10, __LINE__ },
		{ "phase_end_without_begin", 11, __LINE__ },
		{ "phase_end_without_begin", 20, __LINE__ },
		{ "step_end_without_begin", 10, __LINE__ },
		{ "step_begin_while_open", 10, __LINE__ },
		{ "records_lost", 10, __LINE__ },
		{ "records_lost", 12, __LINE__ },
		{ "records_lost", 20, __LINE__ },
	};
	int nwant = (int)(sizeof(want) / sizeof(want[0]));
	CHECK_EQ_INT(rs.nanom, nwant);
	for (int i = 0; i < nwant && i < rs.nanom; i++) {
		CHECK_ROW(strcmp(rs.anom[i], want[i].kind) == 0, want[i].line);
		CHECK_ROW(rs.anom_tid[i] == want[i].tid, want[i].line);
	}
	CHECK_EQ_INT(rs.anom_step[0], 0);
	CHECK(strstr(rs.anom_detail[5], "dropped 6 marker records") != NULL);
	CHECK(strstr(rs.anom_detail[5], "in 5 bursts") != NULL);
	CHECK(strstr(rs.anom_detail[5], "1 step, 2 phases") != NULL);
	/* x's end, y's end, the model and the end at 1600 */
	CHECK(strstr(rs.anom_detail[5], "4 unmatched boundaries") != NULL);
	CHECK(strstr(rs.anom_detail[6], "dropped 3 marker records") != NULL);
	CHECK(strstr(rs.anom_detail[7], "1 unmatched boundary ") != NULL);

	/* phases: x (incomplete), z@600 (incomplete), z@700 (complete), tail (incomplete) */
	CHECK_EQ_INT(rs.nphases, 4);
	CHECK_STR(rs.phases[0].name, "x");
	CHECK_EQ_INT(rs.phases[0].complete, 0);
	CHECK_EQ_INT(rs.phases[1].begin_ns, 600);
	CHECK_EQ_INT(rs.phases[1].complete, 0);
	CHECK_EQ_INT(rs.phases[2].begin_ns, 700);
	CHECK_EQ_INT(rs.phases[2].complete, 1);
	CHECK_EQ_INT(rs.phases[2].end_ns, 750);
	CHECK_STR(rs.phases[3].name, "tail");
	CHECK_EQ_INT(rs.phases[3].complete, 0);
	/* steps: 0 broken (incomplete), 1 complete 1200-1300, then 2 and 3
	 * (misuse after the gap) */
	CHECK_EQ_INT(rs.nsteps, 4);
	CHECK_EQ_INT(rs.steps[0].complete, 0);
	CHECK_EQ_INT(rs.steps[1].complete, 1);
	CHECK_EQ_INT(rs.steps[1].end_ns - rs.steps[1].begin_ns, 100);
	CHECK_EQ_INT(rs.steps[2].complete, 0);
	CHECK_EQ_INT(rs.steps[3].complete, 1);
	CHECK_EQ_INT(count_kind(&rs, "phase_open_at_exit") + count_kind(&rs, "step_open_at_exit"), 0);
	markers_free(m);
}

/* A writer killed between claim and publish leaves a hole: the thread it
 * names lost a boundary of unknown kind; an unnamed one is counted apart. */
/* A thread that lost its last records and exited before its notice found
 * a slot told no one: the ring's count of lost records is then more than
 * the threads told of, and what is open at exit may have ended in that
 * loss (*_broken_by_loss, not the misuse *_open_at_exit). With every loss
 * told, an open phase and step are misuse as before. */
static void test_untold_loss_at_exit(void)
{
	for (int untold = 0; untold < 2; untold++) {
		struct rows rs;
		struct markers *m = mk(&rs);

		feed(m, rec(MRING_STEP_BEGIN, 1, 10, 100, NULL));
		feed(m, rec(MRING_PHASE_BEGIN, 1, 11, 200, "tick"));
		/* thread 12 told of 3 lost records */
		feed(m, after_loss(rec(MRING_LOSS, 1, 12, 300, NULL), MRING_F_LOST_PHASE, 3));
		CHECK_EQ_INT(markers_finish(m, untold ? 5 : 3), 0);
		CHECK_EQ_INT(rs.nanom, 3);
		CHECK(strcmp(rs.anom[0], "records_lost") == 0);
		CHECK(strcmp(rs.anom[1], untold ? "phase_broken_by_loss" : "phase_open_at_exit") == 0);
		CHECK(strcmp(rs.anom[2], untold ? "step_broken_by_loss" : "step_open_at_exit") == 0);
		if (untold) {
			CHECK(strstr(rs.anom_detail[1], "2 marker records were lost that no thread told of") != NULL);
			CHECK(strstr(rs.anom_detail[2], "step 0 was never ended") != NULL);
		}
		CHECK_EQ_INT(rs.nphases, 1);
		CHECK_EQ_INT(rs.nsteps, 1);
		markers_free(m);
	}
}

static void test_hole(void)
{
	struct rows rs;
	struct markers *m = mk(&rs);

	feed(m, rec(MRING_STEP_BEGIN, 5, 5, 100, NULL));
	feed(m, rec(MRING_PHASE_BEGIN, 5, 5, 110, "work"));
	feed(m, rec(MRING_PHASE_BEGIN, 6, 6, 120, "other")); /* another process: misuse stays */
	CHECK_EQ_INT(markers_lost_hole(m, 5, 5), 0);
	CHECK_EQ_INT(markers_lost_hole(m, 0, 0), 0);
	CHECK_EQ_INT(markers_finish(m, 0), 0);
	static const struct { const char *kind; int32_t tid; int line; } want[] = {
		{ "step_broken_by_loss", 5, __LINE__ },
		{ "records_lost", 5, __LINE__ },
		{ "records_lost", 0, __LINE__ },
		{ "phase_open_at_exit", 6, __LINE__ },
	};
	int nwant = (int)(sizeof(want) / sizeof(want[0]));
	CHECK_EQ_INT(rs.nanom, nwant);
	for (int i = 0; i < nwant && i < rs.nanom; i++) {
		CHECK_ROW(strcmp(rs.anom[i], want[i].kind) == 0, want[i].line);
		CHECK_ROW(rs.anom_tid[i] == want[i].tid, want[i].line);
	}
	CHECK_EQ_INT(rs.nsteps, 1);
	CHECK_EQ_INT(rs.steps[0].complete, 0);
	CHECK_EQ_INT(rs.nphases, 2);
	CHECK_EQ_INT(rs.phases[0].complete, 0);
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
	CHECK_EQ_INT(markers_finish(m, 0), 0);

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
/* An attached process's markers (mfu-record -p): records without counter
 * readings (MRING_F_UNREAD) make interpolated rows, and the ends of steps
 * and phases begun before the attach are counted, not misuse. */
static struct mring_record unread(int kind, int pid, int tid, uint64_t t, const char *name)
{
	struct mring_record r = rec(kind, pid, tid, t, name);
	r.ngroups = 0;
	r.flags = MRING_F_UNREAD;
	memset(r.data, 0, sizeof(r.data));
	return r;
}

static void test_attached(void)
{
	struct rows rs;
	struct markers *m = mk(&rs);

	markers_set_attached(m);
	/* attached inside a step of process 7, inside phases outer > inner */
	feed(m, unread(MRING_PHASE_END, 7, 7, 100, "inner"));
	feed(m, unread(MRING_PHASE_MODEL, 7, 7, 110, NULL));
	feed(m, unread(MRING_PHASE_END, 7, 7, 120, "outer"));
	feed(m, unread(MRING_STEP_MODEL, 7, 7, 130, NULL));
	feed(m, unread(MRING_STEP_END, 7, 7, 140, NULL));
	CHECK_EQ_INT(rs.nanom, 0);
	CHECK_EQ_INT(rs.nsteps + rs.nphases, 0);
	CHECK_EQ_INT((int)markers_before_attach(m), 5);
	/* then whole steps and phases, on two threads */
	feed(m, unread(MRING_STEP_BEGIN, 7, 7, 200, NULL));
	feed(m, unread(MRING_PHASE_BEGIN, 7, 8, 210, "w"));
	feed(m, unread(MRING_PHASE_END, 7, 8, 290, "w"));
	feed(m, unread(MRING_STEP_END, 7, 7, 300, NULL));
	CHECK_EQ_INT(rs.nanom, 0);
	CHECK_EQ_INT(rs.nsteps, 1);
	CHECK_EQ_INT(rs.nphases, 1);
	CHECK_EQ_INT(rs.steps[0].complete, 1);
	CHECK_EQ_INT(rs.steps[0].interpolated, 1);
	CHECK_EQ_INT((int)(rs.steps[0].end_ns - rs.steps[0].begin_ns), 100);
	CHECK_EQ_INT(rs.phases[0].interpolated, 1);
	CHECK_EQ_INT(rs.phases[0].step, rs.steps[0].id);
	CHECK_EQ_INT((int)markers_before_attach(m), 5);
	markers_free(m);

	/* not attached: the same leading ends are misuse, and records with
	 * readings stay exact */
	m = mk(&rs);
	feed(m, rec(MRING_STEP_END, 7, 7, 140, NULL));
	feed(m, rec(MRING_STEP_BEGIN, 7, 7, 200, NULL));
	feed(m, rec(MRING_STEP_END, 7, 7, 300, NULL));
	CHECK_EQ_INT(rs.nanom, 1);
	CHECK_STR(rs.anom[0], "step_end_without_begin");
	CHECK_EQ_INT(rs.steps[0].interpolated, 0);
	CHECK_EQ_INT((int)markers_before_attach(m), 0);
	markers_free(m);
}

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
	CHECK_EQ_INT(markers_finish(m, 0), 0);

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


/* Counts of anomalies by kind, beyond the MAXROWS the rows keep. */
struct tally {
	uint64_t steps, phases, anomalies, capped_procs, capped_threads, implausible, lost_rows;
	char last_cap[512];
	char last_lost[512];
};

static int tally_step(void *ctx, const struct interval_row *r)
{
	(void)r;
	((struct tally *)ctx)->steps++;
	return 0;
}

static int tally_phase(void *ctx, const struct interval_row *r)
{
	(void)r;
	((struct tally *)ctx)->phases++;
	return 0;
}

static int tally_anomaly(void *ctx, const struct anomaly_row *r)
{
	struct tally *t = ctx;
	t->anomalies++;
	if (!strcmp(r->kind, "too_many_processes") || !strcmp(r->kind, "too_many_threads")) {
		*(r->kind[9] == 'p' ? &t->capped_procs : &t->capped_threads) += 1;
		snprintf(t->last_cap, sizeof(t->last_cap), "%s", r->detail);
	}
	if (!strcmp(r->kind, "implausible_model"))
		t->implausible++;
	if (!strcmp(r->kind, "records_lost")) {
		t->lost_rows++;
		snprintf(t->last_lost, sizeof(t->last_lost), "%s", r->detail);
	}
	return 0;
}

static struct markers *mk_tally(struct tally *t)
{
	struct markers_sink sink = { t, tally_step, tally_phase, tally_anomaly };
	memset(t, 0, sizeof(*t));
	return markers_new(&cs, &sink);
}

/* Forged pids and tids (a target writing its own records) cannot grow the
 * recorder: at most --max-procs processes and --max-threads threads hold
 * state; the records of more are dropped, counted and said once each. */
static void test_caps(void)
{
	struct tally t;
	struct markers *m = mk_tally(&t);
	char note[512];

	markers_set_limits(m, 4, 8);
	/* 10 processes begin a step: 4 are kept, 6 records dropped */
	for (int pid = 1; pid <= 10; pid++)
		feed(m, rec(MRING_STEP_BEGIN, pid, pid, 1000 + (uint64_t)pid, NULL));
	/* their ends: the 4 pair, the 6 are ends without a begin (misuse as
	 * far as anyone can tell: their begin was dropped, which the note says) */
	for (int pid = 1; pid <= 10; pid++)
		feed(m, rec(MRING_STEP_END, pid, pid, 2000 + (uint64_t)pid, NULL));
	CHECK_EQ_INT(t.steps, 4);
	CHECK(markers_limits_note(m, 0, note, sizeof(note)) == 1);
	CHECK(strstr(note, "6 marker records were dropped") != NULL);
	CHECK(strstr(note, "--max-procs 4") != NULL);
	CHECK(markers_limits_note(m, 1, note, sizeof(note)) == 0);
	/* the 4 are idle now: new processes take their places (after a few
	 * records, the purge's retry interval) */
	for (int i = 0; i < 8; i++)
		feed(m, rec(MRING_STEP_MODEL, 99, 99, 3000, NULL)); /* no step: anomalies */
	for (int pid = 11; pid <= 14; pid++)
		feed(m, rec(MRING_STEP_BEGIN, pid, pid, 4000, NULL));
	for (int pid = 11; pid <= 14; pid++)
		feed(m, rec(MRING_STEP_END, pid, pid, 5000, NULL));
	CHECK_EQ_INT(t.steps, 8);

	/* 1,000 forged threads each begin a phase: 8 are kept */
	for (int tid = 100; tid < 1100; tid++)
		feed(m, rec(MRING_PHASE_BEGIN, 1, tid, 6000, "forged"));
	CHECK(markers_thread_slots(m) <= 64);
	CHECK(markers_limits_note(m, 1, note, sizeof(note)) == 1);
	CHECK(strstr(note, "992 marker records were dropped") != NULL);
	CHECK(strstr(note, "--max-threads 8") != NULL);
	/* ends and models of threads never seen make no slot */
	for (int tid = 2000; tid < 3000; tid++)
		feed(m, rec(MRING_PHASE_END, 1, tid, 7000, "forged"));
	CHECK(markers_thread_slots(m) <= 64);
	CHECK_EQ_INT(markers_finish(m, 0), 0);
	CHECK_EQ_INT(t.capped_procs, 1);
	CHECK_EQ_INT(t.capped_threads, 1);
	CHECK(strstr(t.last_cap, "992 marker records") != NULL);
	CHECK_EQ_INT(t.phases, 8); /* the kept ones, open at exit */
	markers_free(m);

	/* open phases of all threads together: at most 2 x --max-threads
	 * (64 at least, one whole stack): 8 threads 10 deep is 80 */
	m = mk_tally(&t);
	markers_set_limits(m, 4, 8);
	for (int tid = 1; tid <= 8; tid++)
		for (int d = 0; d < 10; d++)
			feed(m, rec(MRING_PHASE_BEGIN, 1, tid, 100 + (uint64_t)d, "p"));
	CHECK(markers_limits_note(m, 1, note, sizeof(note)) == 1);
	CHECK(strstr(note, "16 marker records were dropped") != NULL);
	CHECK(strstr(note, "64 phases were open at once") != NULL);
	/* one thread alone may still nest 64 deep once the others are done */
	for (int tid = 1; tid <= 8; tid++)
		for (int d = 0; d < 10; d++)
			feed(m, rec(MRING_PHASE_END, 1, tid, 200 + (uint64_t)d, "p"));
	for (int d = 0; d < 64; d++)
		feed(m, rec(MRING_PHASE_BEGIN, 1, 9, 300 + (uint64_t)d, "q"));
	CHECK(markers_limits_note(m, 1, note, sizeof(note)) == 1);
	CHECK(strstr(note, "16 marker records were dropped") != NULL);
	CHECK_EQ_INT(markers_finish(m, 0), 0);
	CHECK_EQ_INT(t.phases, 64 + 64);
	markers_free(m);

	/* many real processes, each once: found by hash, paired right */
	m = mk_tally(&t);
	for (int pid = 1; pid <= 3000; pid++)
		feed(m, rec(MRING_STEP_BEGIN, pid, pid, (uint64_t)pid, NULL));
	for (int pid = 3000; pid >= 1; pid--)
		feed(m, rec(MRING_STEP_END, pid, pid, 10000 + (uint64_t)pid, NULL));
	CHECK_EQ_INT(markers_finish(m, 0), 0);
	CHECK_EQ_INT(t.steps, 3000);
	CHECK_EQ_INT(t.anomalies, 0);
	markers_free(m);
}

/* Losses told by forged threads: one row per thread up to --max-threads,
 * the rest summed in one. */
static void test_losses_capped(void)
{
	struct tally t;
	struct markers *m = mk_tally(&t);

	markers_set_limits(m, 4, 16);
	for (int tid = 1; tid <= 500; tid++) {
		struct mring_record r = rec(MRING_LOSS, 1, tid, 1000, NULL);
		r.flags = MRING_F_AFTER_LOSS | MRING_F_LOST_PHASE;
		r.lost = 3;
		feed(m, r);
	}
	CHECK_EQ_INT(markers_finish(m, 0), 0);
	CHECK_EQ_INT(t.lost_rows, 17);
	CHECK(strstr(t.last_lost, "threads beyond the 16 listed (--max-threads) dropped 1452 marker records "
				  "in 484 bursts") != NULL);
	markers_free(m);
}

/* Declared values no machine can reach are kept, and flagged once per
 * step or phase, so that the report can call the MFU impossible; times
 * no marker writes are refused. */
static void test_implausible_model(void)
{
	struct tally t;
	struct rows rs;
	struct markers *m = mk(&rs);
	struct mring_record r;

	(void)t;
	feed(m, rec(MRING_STEP_BEGIN, 10, 10, 1000, NULL));
	r = rec(MRING_STEP_MODEL, 10, 10, 1100, NULL);
	r.a = 1e300;
	r.b = 1e300;
	feed(m, r);
	feed(m, r); /* twice: one anomaly */
	feed(m, rec(MRING_STEP_END, 10, 10, 2000, NULL));
	/* below the bound, but the sum is above: flagged when it passes */
	feed(m, rec(MRING_STEP_BEGIN, 10, 10, 3000, NULL));
	feed(m, rec(MRING_PHASE_BEGIN, 10, 10, 3100, "big"));
	r = rec(MRING_PHASE_MODEL, 10, 10, 3200, NULL);
	r.a = 6e29;
	r.b = NAN;
	feed(m, r);
	CHECK_EQ_INT(rs.nanom, 1);
	feed(m, r);
	feed(m, rec(MRING_PHASE_END, 10, 10, 3300, "big"));
	r = rec(MRING_STEP_MODEL, 10, 10, 3400, NULL);
	r.a = 1e29; /* plausible: nothing said */
	r.b = 1e12;
	feed(m, r);
	feed(m, rec(MRING_STEP_END, 10, 10, 4000, NULL));
	CHECK_EQ_INT(markers_finish(m, 0), 0);
	CHECK_EQ_INT(rs.nanom, 2);
	CHECK_STR(rs.anom[0], "implausible_model");
	CHECK_EQ_INT(rs.anom_step[0], 0);
	CHECK(strstr(rs.anom_detail[0], "step's declared model FLOPs") != NULL);
	CHECK_STR(rs.anom[1], "implausible_model");
	CHECK_EQ_INT(rs.anom_step[1], 1);
	CHECK(strstr(rs.anom_detail[1], "phase's") != NULL);
	CHECK_EQ_INT(rs.nsteps, 2);
	CHECK_NEAR(rs.steps[0].model_flops, 2e300, 1e286); /* stored as declared */
	CHECK_NEAR(rs.steps[1].model_flops, 1e29, 1e15);
	CHECK_NEAR(rs.phases[0].model_flops, 1.2e30, 1e16);
	markers_free(m);

	/* a time past 2^63 ns would be negative in the database (whose CHECK
	 * on end >= begin then stopped the recording): refused */
	m = mk(&rs);
	feed(m, rec(MRING_PHASE_BEGIN, 10, 10, (uint64_t)INT64_MAX - 5, "odd"));
	feed(m, rec(MRING_PHASE_END, 10, 10, (uint64_t)INT64_MAX + 5, "odd"));
	CHECK_EQ_INT(rs.nanom, 1);
	CHECK_STR(rs.anom[0], "bad_record");
	CHECK(strstr(rs.anom_detail[0], "past 2^63 ns") != NULL);
	CHECK_EQ_INT(rs.nphases, 0);
	markers_free(m);
}

/* markers_drain(): what the recorder's loop runs. Reads through the
 * consumer, yields at the deadline (a burst must not hold the commits
 * back), stops at @max, and stops for good when the ring is tampered. */
static void test_drain(void)
{
	static const uint8_t nr[2] = { 2, 2 };
	const uint64_t nslots = 2048;
	struct tally t;
	struct markers *m = mk_tally(&t);
	struct mring_consumer c;
	struct markers_drained d;
	void *mem = calloc(1, mring_size(nslots));
	uint64_t pos;

	CHECK_EQ_INT(mring_init(mem, nslots, 2, nr), 0);
	CHECK_EQ_INT(mring_consumer_init(&c, mem, mring_size(nslots), nslots), 0);
	for (int i = 0; i < 2000; i++) {
		struct mring_record *r = mring_claim(mem, &pos);
		*r = rec(i % 2 ? MRING_PHASE_END : MRING_PHASE_BEGIN, 1, 1, 1000 + (uint64_t)i, "p");
		mring_publish(mem, r, pos);
	}
	/* a deadline already passed: one clock look's worth, then yield */
	CHECK_EQ_INT(markers_drain(m, &c, UINT64_MAX, 1, &d), 0);
	CHECK(d.yielded);
	CHECK_EQ_INT(d.read, MARKERS_DRAIN_CLOCK_EVERY);
	CHECK_EQ_INT(markers_drain(m, &c, 100, UINT64_MAX, &d), 0);
	CHECK_EQ_INT(d.read, 100);
	CHECK(!d.yielded);
	/* dropped (the database failed): read, not fed */
	CHECK_EQ_INT(markers_drain(NULL, &c, 4, UINT64_MAX, &d), 0);
	CHECK_EQ_INT(d.read, 4);
	CHECK_EQ_INT(markers_drain(m, &c, UINT64_MAX, UINT64_MAX, &d), 0);
	CHECK_EQ_INT(d.read, 2000 - MARKERS_DRAIN_CLOCK_EVERY - 104);
	CHECK_EQ_INT(d.records, d.read);
	CHECK(!d.tampered);
	CHECK_EQ_INT(t.phases, 998); /* 1000 pairs, 2 of them among the four dropped */
	/* tampered: said by the consumer, then no more reading */
	((struct mring_header *)mem)->nslots = (uint64_t)1 << 40;
	CHECK_EQ_INT(markers_drain(m, &c, UINT64_MAX, UINT64_MAX, &d), 0);
	CHECK(d.tampered);
	CHECK_EQ_INT(d.read, 0);
	CHECK_EQ_INT(markers_ring_tampered(m, &c), 0);
	CHECK_EQ_INT(t.anomalies, 1); /* ring_tampered */
	markers_free(m);
	free(mem);
}

int main(void)
{
	test_attached();
	test_thread_churn();
	markers_fixture_counters(&cs);
	test_pairing_and_deltas();
	test_nesting();
	test_misuse();
	test_detached();
	test_unknown_model_values();
	test_out_of_order();
	test_processes_and_threads();
	test_loss_is_not_misuse();
	test_untold_loss_at_exit();
	test_hole();
	test_caps();
	test_losses_capped();
	test_implausible_model();
	test_drain();
	return check_status();
}
