/*
 * libFuzzer target: the marker-record state machine (src/record/markers/markers.c).
 *
 * The input is a sequence of raw struct mring_record images (sizeof(struct mring_record) bytes each).
 * Nothing is sanitised: kind, flags, ngroups, data[] and a name without its
 * NUL all come straight from the fuzzer, as they would from a target that
 * scribbles over the shared ring. Each record is copied into its own heap
 * block of exactly sizeof(struct mring_record) so that AddressSanitizer
 * catches any read past the record.
 *
 * A tail shorter than a record replays the records: its first byte is a
 * number of extra rounds (at most 64), each with the tids moved by the round
 * number (the pids too when bit 0 of the second byte is set; nothing moved
 * when bit 1 is). Many threads and processes (the thread table growing and
 * dropping idle threads, the process table growing) and deep nesting would
 * otherwise need more records than the fuzzer puts together in a short run.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "markers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct counters cs;
static volatile size_t sink_bytes; /* keeps the sink's reads alive */

/* As tests/unit/test_markers.c: task-clock and context-switches in group 0,
 * cycles and a FLOP event of weight 8 in group 1 (data[0..4], data[5..9]). */
static void setup_counters(void)
{
	static const char *const names[] = { "task-clock", "context-switches", "cycles", "FLOPS8" };
	static const char *const kinds[] = { "software", "software", "hardware", "hardware" };
	static const enum counter_col cols[] = { COL_CPU_NS, COL_CTX_SWITCHES, COL_CYCLES,
						 COL_FLOPS_FP32 };

	memset(&cs, 0, sizeof(cs));
	cs.n = 4;
	cs.ngroups = 2;
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

/* The sink reads every string it is given (the writer would bind them). */
static int on_interval(void *ctx, const struct interval_row *r)
{
	(void)ctx;
	sink_bytes += r->name ? strlen(r->name) : 0;
	sink_bytes += (size_t)r->d.has[COL_CPU_NS];
	return 0;
}

static int on_anomaly(void *ctx, const struct anomaly_row *r)
{
	(void)ctx;
	sink_bytes += strlen(r->kind) + strlen(r->detail);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct markers_sink sink = { NULL, on_interval, on_interval, on_anomaly };
	struct markers *m;
	const size_t rsz = sizeof(struct mring_record);

	if (!ready) {
		setup_counters();
		ready = 1;
	}
	size_t nrec = size / rsz, tail = size % rsz;
	unsigned rounds = tail ? data[nrec * rsz] % 65u : 0;
	int move_pid = tail > 1 && (data[nrec * rsz + 1] & 1);
	int move_tid = !(tail > 1 && (data[nrec * rsz + 1] & 2));

	if (nrec > 256) /* bounded work per input */
		return 0;
	while (rounds && nrec * (rounds + 1) > 4096)
		rounds--;
	m = markers_new(&cs, &sink);
	if (!m)
		return 0;
	for (unsigned round = 0; round <= rounds; round++) {
		int err = 0;
		for (size_t i = 0; i < nrec && !err; i++) {
			struct mring_record *r = malloc(rsz);

			if (!r)
				break;
			memcpy(r, data + i * rsz, rsz);
			/* unsigned: any int32 is a valid input, wrapping too */
			if (move_tid)
				r->tid = (int32_t)((uint32_t)r->tid + round);
			if (move_pid)
				r->pid = (int32_t)((uint32_t)r->pid + round);
			err = markers_feed(m, r);
			free(r);
		}
		if (err)
			break;
	}
	markers_finish(m);
	markers_free(m);
	return 0;
}
