/*
 * The counter layout the markers' tests and fuzzers share
 * (tests/unit/test_markers.c, tests/fuzz/fuzz_markers.c, fuzz_ring.c):
 * task-clock and context-switches in group 0 (data[0..4]), cycles and an
 * fp32 FLOP event of weight 8 in group 1 (data[5..9]).
 */
#ifndef MFU_TEST_MARKERS_FIXTURE_H
#define MFU_TEST_MARKERS_FIXTURE_H

#include <string.h>

#include "record/counters/counters.h"
#include "record/markers/markers.h"

static inline void markers_fixture_counters(struct counters *cs)
{
	static const char *const names[] = { "task-clock", "context-switches", "cycles", "FLOPS8" };
	static const char *const kinds[] = { "software", "software", "hardware", "hardware" };
	static const enum counter_col cols[] = { COL_CPU_NS, COL_CTX_SWITCHES, COL_CYCLES,
						 COL_FLOPS_FP32 };

	memset(cs, 0, sizeof(*cs));
	cs->n = 4;
	cs->ngroups = 2;
	for (int i = 0; i < 4; i++) {
		strcpy(cs->c[i].name, names[i]);
		cs->c[i].kind = kinds[i];
		cs->c[i].col = cols[i];
		cs->c[i].opened = 1;
		cs->c[i].group = i < 2 ? 0 : 1;
		cs->c[i].word = i < 2 ? 3 + i : 5 + 3 + (i - 2);
		cs->c[i].weight = i == 3 ? 8 : 0;
	}
	cs->group_nr[0] = cs->group_nr[1] = 2;
	cs->group_offset[0] = 0;
	cs->group_offset[1] = 5;
}

/* Sinks for the fuzzers: they read every string they are given (the
 * writer would bind them), so ASan sees a name read past its end. */
static volatile size_t markers_fixture_sink_bytes;

static inline int markers_fixture_on_interval(void *ctx, const struct interval_row *r)
{
	(void)ctx;
	markers_fixture_sink_bytes += r->name ? strlen(r->name) : 0;
	markers_fixture_sink_bytes += (size_t)r->d.has[COL_CPU_NS];
	return 0;
}

static inline int markers_fixture_on_anomaly(void *ctx, const struct anomaly_row *r)
{
	(void)ctx;
	markers_fixture_sink_bytes += strlen(r->kind) + strlen(r->detail);
	return 0;
}

#endif
