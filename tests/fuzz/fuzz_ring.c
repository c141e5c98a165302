/*
 * libFuzzer target: the recorder's reading of the marker ring
 * (mring_consumer in src/common/marker_ring.c, markers_drain() and the
 * markers in src/record/markers/markers.c), with a hostile target on the
 * other side that writes anything anywhere in the shared memory, header
 * included, between the reads.
 *
 * The ring is a heap block of exactly mring_size(nslots) bytes, so
 * AddressSanitizer sees any access outside it. The consumer is set up as
 * the recorder sets it up (right after mring_init()); the steps below
 * replay what session_loop.c's session_loop_drain_ring() and session_finish.c do with
 * it: drain with markers_drain(), say ring_tampered once and read no more,
 * skip holes at the end within a budget of two rings of records and one
 * of holes, then markers_finish().
 *
 * Input: byte 0 picks the slot count (2 to 32) and bytes 1-2 the process
 * and thread caps (1 to 16 each); then operations, each an opcode byte
 * and its arguments (missing bytes read as 0):
 *   0 W off len BYTES   write len (0-31) bytes into the header at off
 *                       (mod its size): magic, sizes, nslots, head, tail...
 *   1 S slot u64        set a slot's sequence number
 *   2 P kind flags pid tid t16 ab  publish a record as libmfu would
 *                       (claim the head's slot when its sequence says it
 *                       is free), with small pids and tids, time t16,
 *                       model values picked by ab (NaN, -1, 0, 1e9, 1e31,
 *                       inf...)
 *   3 R BYTES[576]      publish a raw record image at the head's slot, as
 *                       it comes (seq included)
 *   4 D max             drain up to max records (0: as many as there are)
 *   5 H u64             set head to the consumer's tail + u64 (wrapping)
 *   6 L u64             set the lost count
 *   7 C                 claim a slot and never publish it (a hole)
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record/counters/counters.h"
#include "marker_ring.h"
#include "record/markers/markers.h"
#include "../unit/markers_fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct counters cs;


/* The input, read byte by byte; past its end, zeros. */
struct in {
	const uint8_t *p;
	size_t n, off;
};

static uint8_t u8(struct in *in)
{
	return in->off < in->n ? in->p[in->off++] : 0;
}

static uint64_t u64(struct in *in)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)u8(in) << (8 * i);
	return v;
}

/* The recording: the ring, its consumer, the markers. */
struct rec {
	unsigned char *mem;
	struct mring_header *h;
	struct mring_record *slots; /* the real ones: where a target can write */
	uint64_t nslots;
	struct mring_consumer c;
	struct markers *m;
	int stopped;                /* tampered with: read no more */
	int failed;                 /* a sink error: drop what is read */
};

/* session_loop.c's drain_ring(), without the database. */
static uint64_t drain(struct rec *r, uint64_t max)
{
	struct markers_drained d;
	uint64_t n = 0;

	while (!r->stopped && n < max) {
		markers_drain(r->failed ? NULL : r->m, &r->c, max - n, UINT64_MAX, &d);
		n += d.read;
		if (d.tampered) {
			r->stopped = 1;
			if (!r->failed)
				(void)markers_ring_tampered(r->m, &r->c);
		} else if (d.err) {
			r->failed = 1;
			continue;
		}
		break;
	}
	return n;
}

/* The slot of the position the shared head names, within the real ring. */
static struct mring_record *head_slot(struct rec *r, uint64_t *pos)
{
	*pos = __atomic_load_n(&r->h->head, __ATOMIC_RELAXED);
	return &r->slots[*pos & (r->nslots - 1)];
}

static const double model_values[8] = { NAN, -1.0, 0.0, 1e9, 1e29, 1e31, INFINITY, 1e308 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t group_nr[2] = { 2, 2 };
	static int ready;
	struct markers_sink sink = { NULL, markers_fixture_on_interval, markers_fixture_on_interval,
				     markers_fixture_on_anomaly };
	struct in in = { data, size, 0 };
	struct rec r;

	if (!ready) {
		markers_fixture_counters(&cs);
		ready = 1;
	}
	if (size > 16384) /* bounded work per input */
		return 0;
	memset(&r, 0, sizeof(r));
	r.nslots = (uint64_t)2 << (u8(&in) % 5);
	r.mem = calloc(1, mring_size(r.nslots));
	if (!r.mem)
		return 0;
	r.h = (struct mring_header *)r.mem;
	r.slots = (struct mring_record *)(r.mem + sizeof(struct mring_header));
	if (mring_init(r.mem, r.nslots, 2, group_nr) != 0 ||
	    mring_consumer_init(&r.c, r.mem, mring_size(r.nslots), r.nslots) != 0)
		abort(); /* the recorder's own ring must always do */
	r.m = markers_new(&cs, &sink);
	if (!r.m) {
		free(r.mem);
		return 0;
	}
	markers_set_limits(r.m, 1 + u8(&in) % 16, 1 + u8(&in) % 16);

	while (in.off < in.n) {
		uint8_t op = u8(&in) % 8;
		uint64_t pos;
		struct mring_record *s;

		switch (op) {
		case 0: { /* write into the header */
			size_t off = u8(&in) % sizeof(struct mring_header), len = u8(&in) % 32;
			for (size_t i = 0; i < len && off + i < sizeof(struct mring_header); i++)
				r.mem[off + i] = u8(&in);
			break;
		}
		case 1: /* a slot's sequence number */
			s = &r.slots[u8(&in) % r.nslots];
			__atomic_store_n(&s->seq, u64(&in), __ATOMIC_RELEASE);
			break;
		case 2: { /* a record as libmfu publishes it, if its slot is free */
			uint8_t kind = u8(&in), flags = u8(&in), pid = u8(&in), tid = u8(&in);
			uint64_t t = (uint64_t)u8(&in) << 8;
			uint8_t ab = u8(&in);
			s = head_slot(&r, &pos);
			if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != (pos & ~(r.nslots - 1)))
				break; /* full (or broken): a marker would drop it */
			__atomic_store_n(&r.h->head, pos + 1, __ATOMIC_RELAXED);
			memset((char *)s + sizeof(s->seq), 0, sizeof(*s) - sizeof(s->seq));
			s->kind = (uint8_t)(1 + kind % 8);
			s->flags = flags;
			s->lost = flags & MRING_F_AFTER_LOSS ? kind : 0;
			s->pid = pid % 4;
			s->tid = tid % 8;
			s->time_ns = t | (in.off & 0xff);
			s->a = model_values[ab % 8];
			s->b = model_values[(ab >> 3) % 8];
			s->ngroups = 2;
			s->data[0] = s->data[5] = 2;
			s->data[1] = s->data[2] = s->data[6] = s->data[7] = t;
			s->data[3] = s->data[8] = t / 2;
			strcpy(s->name, tid & 8 ? "fwd" : "bwd");
			s->name_len = 3;
			__atomic_store_n(&s->seq, (pos & ~(r.nslots - 1)) + 1, __ATOMIC_RELEASE); /* lap-relative */
			break;
		}
		case 3: /* a raw record image, seq and all */
			s = head_slot(&r, &pos);
			for (size_t i = 0; i < sizeof(*s); i++)
				((unsigned char *)s)[i] = u8(&in);
			break;
		case 4: { /* the recorder drains */
			uint64_t max = u8(&in);
			drain(&r, max ? max : UINT64_MAX);
			break;
		}
		case 5: /* head anywhere */
			__atomic_store_n(&r.h->head, r.c.tail + u64(&in), __ATOMIC_RELEASE);
			break;
		case 6: /* the lost count */
			__atomic_store_n(&r.h->lost, u64(&in), __ATOMIC_RELEASE);
			(void)mring_consumer_lost(&r.c); /* the live line reads it */
			break;
		case 7: /* a hole: claimed, never published */
			s = head_slot(&r, &pos);
			if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) == (pos & ~(r.nslots - 1))) {
				__atomic_store_n(&r.h->head, pos + 1, __ATOMIC_RELAXED);
				s->pid = 1;
				s->tid = (int32_t)u8(&in) % 8;
			}
			break;
		}
	}

	/* session_finish.c: the last records, the holes, then the end */
	{
		uint64_t budget = 2 * r.nslots;
		int32_t pid, tid;
		int k;

		budget -= drain(&r, budget);
		while (!r.stopped && (k = mring_consumer_skip_hole(&r.c, &pid, &tid)) != 0) {
			if (k < 0) {
				r.stopped = 1;
				if (!r.failed)
					(void)markers_ring_tampered(r.m, &r.c);
				break;
			}
			if (!r.failed && markers_lost_hole(r.m, pid, tid))
				r.failed = 1;
			budget -= drain(&r, budget);
		}
		(void)mring_consumer_lost(&r.c);
		if (!r.failed)
			(void)markers_finish(r.m, 0);
	}
	markers_free(r.m);
	free(r.mem);
	return 0;
}
