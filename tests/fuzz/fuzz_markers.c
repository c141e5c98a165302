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

#include "record/counters/counters.h"
#include "record/markers/markers.h"
#include "../unit/markers_fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct counters cs;


int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct markers_sink sink = { NULL, markers_fixture_on_interval, markers_fixture_on_interval,
				     markers_fixture_on_anomaly };
	struct markers *m;
	const size_t rsz = sizeof(struct mring_record);

	if (!ready) {
		markers_fixture_counters(&cs);
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
	markers_finish(m, 0);
	markers_free(m);
	return 0;
}
