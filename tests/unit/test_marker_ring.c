/* The marker ring: layout pinned (it crosses a process boundary), order,
 * multi-producer correctness, and exact loss counting when full. */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "marker_ring.h"

static void test_layout(void)
{
	/* Changing any of these needs MRING_VERSION + 1. */
	CHECK_EQ_INT(MRING_VERSION, 4);
	CHECK_EQ_INT(sizeof(struct mring_record), 576);
	CHECK_EQ_INT(sizeof(struct mring_header), 192);
	CHECK_EQ_INT(offsetof(struct mring_record, seq), 0);
	CHECK_EQ_INT(offsetof(struct mring_record, kind), 8);
	CHECK_EQ_INT(offsetof(struct mring_record, flags), 9);
	CHECK_EQ_INT(offsetof(struct mring_record, name_len), 10);
	CHECK_EQ_INT(offsetof(struct mring_record, ngroups), 11);
	CHECK_EQ_INT(offsetof(struct mring_record, lost), 12);
	CHECK_EQ_INT(offsetof(struct mring_record, pid), 16);
	CHECK_EQ_INT(offsetof(struct mring_record, time_ns), 24);
	CHECK_EQ_INT(offsetof(struct mring_record, a), 32);
	CHECK_EQ_INT(offsetof(struct mring_record, data), 48);
	CHECK_EQ_INT(offsetof(struct mring_record, name), 512 - MRING_NAME_MAX);
	CHECK_EQ_INT(offsetof(struct mring_record, lib_snap), 512);
	CHECK_EQ_INT(offsetof(struct mring_record, lib), 520);
	CHECK_EQ_INT(offsetof(struct mring_header, group_nr), 48);
	CHECK_EQ_INT(offsetof(struct mring_header, head), 64);
	CHECK_EQ_INT(offsetof(struct mring_header, tail), 128);
}

static void *new_ring(uint64_t nslots)
{
	static const uint8_t nr[2] = { 4, 3 };
	void *mem = calloc(1, mring_size(nslots));
	CHECK_EQ_INT(mring_init(mem, nslots, 2, nr), 0);
	return mem;
}

static void test_check(void)
{
	void *mem = new_ring(8);
	struct mring_header *h = mem;
	CHECK_EQ_INT(mring_check(mem, mring_size(8)), 0);
	CHECK(mring_check(mem, mring_size(8) - 1) < 0);
	CHECK(mring_check(mem, 10) < 0);
	h->version = 99;
	CHECK(mring_check(mem, mring_size(8)) < 0);
	h->version = MRING_VERSION;
	h->nslots = 6; /* not a power of two */
	CHECK(mring_check(mem, mring_size(8)) < 0);
	h->nslots = 8;
	CHECK_EQ_INT(h->group_offset[1], 7); /* after group 0's nr, te, tr and 4 values */
	h->group_offset[1] = 6;
	CHECK(mring_check(mem, mring_size(8)) < 0);
	h->group_offset[1] = 7;
	h->group_nr[1] = MRING_DATA_WORDS; /* readings no longer fit a record */
	CHECK(mring_check(mem, mring_size(8)) < 0);
	h->group_nr[1] = 3;
	CHECK_EQ_INT(mring_check(mem, mring_size(8)), 0);
	uint8_t many[MRING_MAX_GROUPS + 1] = { 0 };
	CHECK_EQ_INT(mring_init(mem, 8, MRING_MAX_GROUPS + 1, many), -E2BIG);
	uint8_t big[2] = { 40, 10 };
	CHECK_EQ_INT(mring_init(mem, 8, 2, big), -E2BIG);
	free(mem);
}

static void test_fifo_and_full(void)
{
	void *mem = new_ring(8);
	uint64_t pos;

	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 8; i++) {
			struct mring_record *r = mring_claim(mem, &pos);
			CHECK(r != NULL);
			if (!r)
				return;
			r->time_ns = (uint64_t)(round * 100 + i);
			mring_publish(r, pos);
		}
		/* full: the next claims fail and are counted */
		CHECK(mring_claim(mem, &pos) == NULL);
		CHECK(mring_claim(mem, &pos) == NULL);
		CHECK_EQ_INT(mring_lost(mem), (uint64_t)(2 * (round + 1)));
		CHECK_EQ_INT(mring_pending(mem), 8);
		for (int i = 0; i < 8; i++) {
			const struct mring_record *r = mring_peek(mem);
			CHECK(r != NULL);
			if (r)
				CHECK_EQ_INT(r->time_ns, (uint64_t)(round * 100 + i));
			mring_release(mem);
		}
		CHECK(mring_peek(mem) == NULL);
	}
	free(mem);
}

static void test_hole(void)
{
	void *mem = new_ring(8);
	uint64_t p0, p1;
	int32_t pid, tid;
	mring_hole_owner(mem, &pid, &tid);
	CHECK_EQ_INT(pid, 0); /* nothing pending */
	struct mring_record *a = mring_claim(mem, &p0); /* claimed, never published */
	struct mring_record *b = mring_claim(mem, &p1);
	a->pid = 7; /* a writer names itself first thing after the claim */
	a->tid = 8;
	mring_publish(b, p1);
	CHECK(mring_peek(mem) == NULL); /* blocked behind the hole */
	mring_hole_owner(mem, &pid, &tid);
	CHECK_EQ_INT(pid, 7);
	CHECK_EQ_INT(tid, 8);
	CHECK_EQ_INT(mring_skip_hole(mem), 1);
	CHECK_EQ_INT(mring_lost(mem), 1);
	CHECK(mring_peek(mem) == b);
	mring_release(mem);
	CHECK_EQ_INT(mring_skip_hole(mem), 0);
	/* the next lap's hole in those slots names nobody stale */
	for (int i = 0; i < 8; i++) { /* positions 2..9: a whole lap */
		struct mring_record *r = mring_claim(mem, &p0);
		CHECK(r != NULL);
		if (!r)
			break;
		r->pid = 99;
		mring_publish(r, p0);
		mring_peek(mem);
		mring_release(mem);
	}
	CHECK(mring_claim(mem, &p0) != NULL); /* position 10: slot 2 again, a hole */
	CHECK_EQ_INT(p0, 10);
	mring_hole_owner(mem, &pid, &tid);
	CHECK_EQ_INT(pid, 0);
	CHECK_EQ_INT(tid, 0);
	free(mem);
}

/* A loss notice (MRING_LOSS) is no marker: a full ring does not count it. */
static void test_uncounted(void)
{
	void *mem = new_ring(8);
	uint64_t pos;
	for (int i = 0; i < 8; i++) {
		struct mring_record *r = mring_claim_uncounted(mem, &pos);
		CHECK(r != NULL);
		if (r)
			mring_publish(r, pos);
	}
	CHECK(mring_claim_uncounted(mem, &pos) == NULL);
	CHECK_EQ_INT(mring_lost(mem), 0);
	CHECK(mring_claim(mem, &pos) == NULL);
	CHECK_EQ_INT(mring_lost(mem), 1);
	free(mem);
}

#define PRODUCERS 4
#define PER_PRODUCER 200000

struct prod { void *mem; int id; uint64_t written; };
static int finished;

static void *producer(void *arg)
{
	struct prod *p = arg;
	for (uint64_t i = 0; i < PER_PRODUCER; i++) {
		uint64_t pos;
		struct mring_record *r = mring_claim(p->mem, &pos);
		if (!r)
			continue;
		r->pid = p->id;
		r->time_ns = i;
		mring_publish(r, pos);
		p->written++;
	}
	__atomic_fetch_add(&finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_concurrent(void)
{
	void *mem = new_ring(1024);
	pthread_t t[PRODUCERS];
	struct prod p[PRODUCERS];
	uint64_t last[PRODUCERS], got = 0, written = 0;
	int order_ok = 1, done = 0;

	for (int i = 0; i < PRODUCERS; i++) {
		p[i] = (struct prod){ mem, i, 0 };
		last[i] = 0;
		pthread_create(&t[i], NULL, producer, &p[i]);
	}
	/* consume while they produce; each producer's records arrive in order */
	uint64_t seen_first[PRODUCERS] = { 0 };
	while (!done) {
		const struct mring_record *r;
		while ((r = mring_peek(mem))) {
			int id = r->pid;
			if (id < 0 || id >= PRODUCERS) {
				order_ok = 0;
			} else {
				if (seen_first[id] && r->time_ns <= last[id])
					order_ok = 0;
				seen_first[id] = 1;
				last[id] = r->time_ns;
			}
			got++;
			mring_release(mem);
		}
		done = __atomic_load_n(&finished, __ATOMIC_ACQUIRE) == PRODUCERS;
		if (done) {
			for (int i = 0; i < PRODUCERS; i++)
				pthread_join(t[i], NULL);
			while ((r = mring_peek(mem))) {
				got++;
				mring_release(mem);
			}
		}
	}
	for (int i = 0; i < PRODUCERS; i++)
		written += p[i].written;
	CHECK(order_ok);
	CHECK_EQ_INT(got, written);
	CHECK_EQ_INT(written + mring_lost(mem), (uint64_t)PRODUCERS * PER_PRODUCER);
	free(mem);
}

int main(void)
{
	test_layout();
	test_check();
	test_fifo_and_full();
	test_hole();
	test_uncounted();
	test_concurrent();
	return check_status();
}
