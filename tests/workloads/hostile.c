/*
 * hostile: a target that attacks its recorder through the marker ring it
 * shares with it (tests/e2e/test_hostile.py). It maps the ring itself from
 * MFU_RING_FD, as any program of the user could.
 *
 *   hostile scribble FIELD   mark 5 steps, wait until the recorder has
 *                            read them (its tail, published in the header,
 *                            reaches the head), then overwrite FIELD of
 *                            the ring header and wait 300 ms; exit 3.
 *                            FIELD: magic, version, hdrsize, recsize,
 *                            nslots0, nslots_huge, ngroups, groups,
 *                            head_far, head_back, tail_ahead (tail =
 *                            head + 1, harmless: the recorder never reads
 *                            it back), lost_down, seq (a slot no producer
 *                            claimed made to look published), random
 *   hostile burst-magic      one thread marks steps flat out while the
 *                            main one clears the magic 100 ms in; exit 3
 *   hostile forge-tids N [D] write N phase-begin records with N distinct
 *                            thread ids straight into the ring (D nested
 *                            ones each, default 1); exit 0
 *   hostile forge-pids N     the same with N distinct process ids and
 *                            step begins
 *   hostile forge-values     records with values no marker writes (a time
 *                            past 2^63 ns, library-call counts going down),
 *                            then 3 honest steps; exit 0
 * After tampering it calls no marker: libmfu in this process trusts the
 * header it has just broken.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "marker_ring.h"
#include "mfu.h"

static struct mring_header *h;

static uint64_t now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int map_ring(void)
{
	const char *s = getenv("MFU_RING_FD");
	struct stat st;
	void *mem;

	if (!s || fstat(atoi(s), &st) != 0) {
		fprintf(stderr, "hostile: not recorded (no MFU_RING_FD)\n");
		return -1;
	}
	mem = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, atoi(s), 0);
	if (mem == MAP_FAILED) {
		perror("hostile: mmap");
		return -1;
	}
	h = mem;
	return 0;
}

/* Until the recorder has read everything claimed (up to 10 s). */
static void wait_drained(void)
{
	for (int i = 0; i < 10000; i++) {
		if (__atomic_load_n(&h->tail, __ATOMIC_ACQUIRE) == __atomic_load_n(&h->head, __ATOMIC_ACQUIRE))
			return;
		sleep_ms(1);
	}
	fprintf(stderr, "hostile: the recorder did not drain the ring\n");
}

static void steps(int n)
{
	for (int i = 0; i < n; i++) {
		mfu_step_begin();
		mfu_step_model(1e6, 1e3);
		mfu_phase_begin("work");
		sleep_ms(1);
		mfu_phase_end("work");
		mfu_step_end();
	}
}

static int scribble(const char *field)
{
	uint64_t head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);

	if (!strcmp(field, "magic")) {
		h->magic = 0;
	} else if (!strcmp(field, "version")) {
		h->version++;
	} else if (!strcmp(field, "hdrsize")) {
		h->header_size = 0xffffffffu;
	} else if (!strcmp(field, "recsize")) {
		h->record_size = 8;
	} else if (!strcmp(field, "nslots0")) {
		h->nslots = 0;
	} else if (!strcmp(field, "nslots_huge")) {
		h->nslots = (uint64_t)1 << 30;
	} else if (!strcmp(field, "ngroups")) {
		h->ngroups = 200;
	} else if (!strcmp(field, "groups")) {
		h->group_nr[0] = 250;
		h->group_offset[1] = 250;
	} else if (!strcmp(field, "head_far")) {
		__atomic_store_n(&h->head, head + ((uint64_t)1 << 40), __ATOMIC_RELEASE);
	} else if (!strcmp(field, "head_back")) {
		__atomic_store_n(&h->head, head - 3, __ATOMIC_RELEASE);
	} else if (!strcmp(field, "tail_ahead")) {
		__atomic_store_n(&h->tail, head + 1, __ATOMIC_RELEASE);
	} else if (!strcmp(field, "lost_down")) {
		/* a count the recorder has seen, then a smaller one */
		__atomic_store_n(&h->lost, 7, __ATOMIC_RELEASE);
		sleep_ms(100);
		__atomic_store_n(&h->lost, 3, __ATOMIC_RELEASE);
	} else if (!strcmp(field, "seq")) {
		/* the slot of the next position, made to look published */
		struct mring_record *r = (struct mring_record *)((char *)h + sizeof(*h)) + (head & (h->nslots - 1));
		r->kind = MRING_STEP_BEGIN;
		__atomic_store_n(&r->seq, (head & ~(h->nslots - 1)) + 1, __ATOMIC_RELEASE);
	} else if (!strcmp(field, "random")) {
		unsigned char *b = (unsigned char *)h;
		uint64_t x = now() | 1;
		for (size_t i = 0; i < sizeof(*h); i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			b[i] = (unsigned char)x;
		}
	} else {
		fprintf(stderr, "hostile: unknown field %s\n", field);
		return 2;
	}
	return 0;
}

static volatile int stop;

static void *marker_thread(void *arg)
{
	(void)arg;
	while (!stop) {
		mfu_step_begin();
		mfu_step_end();
	}
	return NULL;
}

/* N records straight into the ring, each from a thread (@tids) or a
 * process (else) of its own, @depth of them each (phases nested in a
 * thread, step begins in a process). Waits for room: the recorder
 * drains. */
static void forge(long n, int tids, int depth)
{
	int32_t pid = (int32_t)getpid();

	for (long i = 0; i < n; i++) {
		for (int d = 0; d < depth; d++) {
			struct mring_record *r;
			uint64_t pos;

			while (!(r = mring_claim_uncounted(h, &pos)))
				sleep_ms(1);
			memset((char *)r + sizeof(r->seq), 0, sizeof(*r) - sizeof(r->seq));
			r->pid = tids ? pid : (int32_t)(4000000 + i);
			r->tid = tids ? (int32_t)(4000000 + i) : r->pid;
			r->kind = tids ? MRING_PHASE_BEGIN : MRING_STEP_BEGIN;
			r->time_ns = now();
			if (tids) {
				strcpy(r->name, "forged");
				r->name_len = 6;
			}
			mring_publish(h, r, pos);
		}
	}
	wait_drained();
}

/* One record straight into the ring (waiting for room). */
static void put(const struct mring_record *src)
{
	struct mring_record *r;
	uint64_t pos;

	while (!(r = mring_claim_uncounted(h, &pos)))
		sleep_ms(1);
	memcpy((char *)r + sizeof(r->seq), (const char *)src + sizeof(src->seq), sizeof(*r) - sizeof(r->seq));
	mring_publish(h, r, pos);
}

/* Records whose values no honest marker writes, each of which the
 * database would refuse as it stood (a time past 2^63 ns turns negative
 * in SQLite's signed integers; library-call counts that went down): the
 * recording must go on. */
static void forge_values(void)
{
	struct mring_record r;
	int32_t pid = (int32_t)getpid();

	memset(&r, 0, sizeof(r));
	r.pid = r.tid = pid;
	strcpy(r.name, "odd");
	r.name_len = 3;
	/* a phase across 2^63 ns */
	r.kind = MRING_PHASE_BEGIN;
	r.time_ns = (uint64_t)INT64_MAX - 5;
	put(&r);
	r.kind = MRING_PHASE_END;
	r.time_ns = (uint64_t)INT64_MAX + 5;
	put(&r);
	/* a step whose library-call counters went down */
	r.kind = MRING_STEP_BEGIN;
	r.time_ns = now();
	r.flags = MRING_F_LIB;
	r.lib[0] = 10;
	r.lib[1] = 1000;
	put(&r);
	r.kind = MRING_STEP_END;
	r.time_ns = now();
	r.lib[0] = 5;
	r.lib[1] = 10;
	put(&r);
	wait_drained();
	/* and honest steps after them */
	steps(3);
}

int main(int argc, char **argv)
{
	if (argc < 2 || map_ring() != 0)
		return 2;
	if (!strcmp(argv[1], "scribble") && argc == 3) {
		steps(5);
		wait_drained();
		int rc = scribble(argv[2]);
		if (rc)
			return rc;
		sleep_ms(300);
		return 3;
	}
	if (!strcmp(argv[1], "burst-magic")) {
		pthread_t t;
		steps(5);
		wait_drained();
		pthread_create(&t, NULL, marker_thread, NULL);
		sleep_ms(100);
		h->magic = 0;
		sleep_ms(200);
		stop = 1;
		pthread_join(t, NULL);
		return 3;
	}
	if (!strcmp(argv[1], "forge-values")) {
		forge_values();
		return 0;
	}
	if ((!strcmp(argv[1], "forge-tids") || !strcmp(argv[1], "forge-pids")) && (argc == 3 || argc == 4)) {
		forge(atol(argv[2]), argv[1][6] == 't', argc == 4 ? atoi(argv[3]) : 1);
		return 0;
	}
	fprintf(stderr, "usage: hostile scribble FIELD | burst-magic | forge-tids N [D] | forge-pids N | forge-values\n");
	return 2;
}
