/* The marker ring: layout pinned (it crosses a process boundary), order,
 * multi-producer correctness, and exact loss counting when full. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "attach_page.h"
#include "check.h"
#include "marker_ring.h"

static void test_layout(void)
{
	/* Changing any of these needs MRING_VERSION + 1. */
	CHECK_EQ_INT(MRING_VERSION, 6);
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
	CHECK_EQ_INT(MRING_LIB_WORDS, 7); /* the last one was reserved in version 4 */
	CHECK_EQ_INT(offsetof(struct mring_header, group_nr), 48);
	CHECK_EQ_INT(offsetof(struct mring_header, head), 64);
	CHECK_EQ_INT(offsetof(struct mring_header, tail), 128);
}

/* The attach page crosses a process boundary too (attach_page.h). */
static void test_attach_layout(void)
{
	/* Changing any of these needs MFU_ATTACH_VERSION + 1. */
	CHECK_EQ_INT(MFU_ATTACH_VERSION, 1);
	CHECK_EQ_INT(sizeof(struct mfu_attach_page), 256);
	CHECK_EQ_INT(offsetof(struct mfu_attach_page, magic), 0);
	CHECK_EQ_INT(offsetof(struct mfu_attach_page, version), 8);
	CHECK_EQ_INT(offsetof(struct mfu_attach_page, page_size), 12);
	CHECK_EQ_INT(offsetof(struct mfu_attach_page, nslots), 16);
	CHECK_EQ_INT(offsetof(struct mfu_attach_page, size), 24);
	CHECK_EQ_INT(offsetof(struct mfu_attach_page, pid), 32);
	CHECK_EQ_INT(offsetof(struct mfu_attach_page, lib), 40);
	CHECK_EQ_INT(offsetof(struct mfu_attach_page, on), 128);
	CHECK_EQ_INT(offsetof(struct mfu_attach_page, gen), 132);
	CHECK_EQ_INT(offsetof(struct mfu_attach_page, owner), 136);
	CHECK_EQ_INT(offsetof(struct mfu_attach_page, accepted_gen), 192);
	CHECK_EQ_INT(offsetof(struct mfu_attach_page, refused_gen), 196);
	CHECK_EQ_INT(MFU_ATTACH_PAGE % 4096, 0);
	CHECK(MFU_ATTACH_PAGE >= sizeof(struct mfu_attach_page));
	CHECK_EQ_INT(MFU_ATTACH_RECORDS & (MFU_ATTACH_RECORDS - 1), 0);
	CHECK(MRING_F_UNREAD <= 0xff);
}

/* Exactly mring_size() bytes on the heap: AddressSanitizer sees any
 * access past the ring. */
static void *new_ring(uint64_t nslots)
{
	static const uint8_t nr[2] = { 4, 3 };
	void *mem = calloc(1, mring_size(nslots));
	CHECK_EQ_INT(mring_init(mem, nslots, 2, nr), 0);
	return mem;
}

/* A ring and the recorder's consumer of it. */
static void *new_consumed(uint64_t nslots, struct mring_consumer *c)
{
	void *mem = new_ring(nslots);
	CHECK_EQ_INT(mring_consumer_init(c, mem, mring_size(nslots), nslots), 0);
	return mem;
}

static uint64_t pending(const void *mem, const struct mring_consumer *c)
{
	return ((const struct mring_header *)mem)->head - c->tail;
}

static void publish(void *mem, int32_t pid, uint64_t time_ns)
{
	uint64_t pos;
	struct mring_record *r = mring_claim(mem, &pos);
	CHECK(r != NULL);
	if (!r)
		return;
	r->pid = pid;
	r->time_ns = time_ns;
	mring_publish(mem, r, pos);
}

/* A producer keeps the geometry it checked: a header rewritten under it
 * (nslots, header_size) makes it lose records at worst, never write past
 * the ring (AddressSanitizer watches the heap block). */
static void test_producer_keeps_its_geometry(void)
{
	struct mring_producer p;
	struct mring_header *h;
	void *mem = new_ring(8);
	uint64_t pos;
	int stored = 0;

	CHECK_EQ_INT(mring_producer_init(&p, mem, mring_size(8) - 1), -EINVAL);
	CHECK_EQ_INT(mring_producer_init(&p, mem, mring_size(8)), 0);
	h = mem;
	h->nslots = 1ull << 40;
	h->header_size = 1u << 30;
	for (int i = 0; i < 20; i++) {
		struct mring_record *r = mring_producer_claim(&p, &pos);
		if (!r)
			continue;
		CHECK((char *)r >= (char *)mem + sizeof(*h) && (char *)(r + 1) <= (char *)mem + mring_size(8));
		r->pid = i;
		mring_publish(mem, r, pos);
		stored++;
	}
	CHECK_EQ_INT(stored, 8);
	CHECK_EQ_INT(h->lost, 12);
	CHECK(mring_producer_claim_uncounted(&p, &pos) == NULL);
	CHECK_EQ_INT(h->lost, 12);
	free(mem);
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

static void test_consumer_init(void)
{
	struct mring_consumer c;
	void *mem = new_ring(8);

	CHECK_EQ_INT(mring_consumer_init(&c, mem, mring_size(8), 8), 0);
	CHECK_EQ_INT(mring_consumer_init(&c, mem, mring_size(8), 16), -EINVAL); /* not as made */
	CHECK_EQ_INT(mring_consumer_init(&c, mem, mring_size(8) - 1, 8), -EINVAL);
	CHECK_EQ_INT(mring_consumer_init(&c, mem, mring_size(8), 6), -EINVAL);
	CHECK_EQ_INT(mring_consumer_init(&c, mem, mring_size(8), 0), -EINVAL);
	CHECK_EQ_INT(mring_consumer_init(&c, mem, SIZE_MAX, (uint64_t)1 << 62), -EINVAL);
	free(mem);
}

static void test_fifo_and_full(void)
{
	struct mring_consumer c;
	void *mem = new_consumed(8, &c);
	struct mring_record out;
	uint64_t pos;

	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 8; i++)
			publish(mem, 1, (uint64_t)(round * 100 + i));
		/* full: the next claims fail and are counted */
		CHECK(mring_claim(mem, &pos) == NULL);
		CHECK(mring_claim(mem, &pos) == NULL);
		CHECK_EQ_INT(mring_consumer_lost(&c), (uint64_t)(2 * (round + 1)));
		CHECK_EQ_INT(pending(mem, &c), 8);
		for (int i = 0; i < 8; i++) {
			CHECK_EQ_INT(mring_consumer_read(&c, &out), 1);
			CHECK_EQ_INT(out.time_ns, (uint64_t)(round * 100 + i));
		}
		CHECK_EQ_INT(mring_consumer_read(&c, &out), 0);
		/* the tail is published for the producers */
		CHECK_EQ_INT(((struct mring_header *)mem)->tail, c.tail);
	}
	CHECK(!c.tampered);
	free(mem);
}

static void test_hole(void)
{
	struct mring_consumer c;
	void *mem = new_consumed(8, &c);
	struct mring_record out;
	uint64_t p0, p1;
	int32_t pid, tid;

	CHECK_EQ_INT(mring_consumer_skip_hole(&c, &pid, &tid), 0); /* nothing pending */
	CHECK_EQ_INT(pid, 0);
	struct mring_record *a = mring_claim(mem, &p0); /* claimed, never published */
	struct mring_record *b = mring_claim(mem, &p1);
	a->pid = 7; /* a writer names itself first thing after the claim */
	a->tid = 8;
	b->time_ns = 42;
	mring_publish(mem, b, p1);
	CHECK_EQ_INT(mring_consumer_read(&c, &out), 0); /* blocked behind the hole */
	CHECK_EQ_INT(mring_consumer_skip_hole(&c, &pid, &tid), 1);
	CHECK_EQ_INT(pid, 7);
	CHECK_EQ_INT(tid, 8);
	CHECK_EQ_INT(mring_consumer_lost(&c), 1);
	CHECK_EQ_INT(mring_consumer_skip_hole(&c, &pid, &tid), 0); /* published: no hole */
	CHECK_EQ_INT(mring_consumer_read(&c, &out), 1);
	CHECK_EQ_INT(out.time_ns, 42);
	CHECK_EQ_INT(mring_consumer_skip_hole(&c, &pid, &tid), 0);
	/* the next lap's hole in those slots names nobody stale */
	for (int i = 0; i < 8; i++) { /* positions 2..9: a whole lap */
		publish(mem, 99, 0);
		CHECK_EQ_INT(mring_consumer_read(&c, &out), 1);
	}
	CHECK(mring_claim(mem, &p0) != NULL); /* position 10: slot 2 again, a hole */
	CHECK_EQ_INT(p0, 10);
	CHECK_EQ_INT(mring_consumer_skip_hole(&c, &pid, &tid), 1);
	CHECK_EQ_INT(pid, 0);
	CHECK_EQ_INT(tid, 0);
	CHECK(!c.tampered);
	free(mem);
}

/* Hole skipping ends: a whole ring of holes at most, even with a producer
 * that goes on claiming (a child process still running at the end), and
 * never from a shared tail put past the head (it spun towards 2^64). */
static void test_hole_skip_capped(void)
{
	struct mring_consumer c;
	void *mem = new_consumed(8, &c);
	struct mring_header *h = mem;
	int32_t pid, tid;
	uint64_t pos;
	int skipped = 0;

	h->tail = h->head + 1; /* the old consumer's tail: not read any more */
	CHECK_EQ_INT(mring_consumer_skip_hole(&c, &pid, &tid), 0);
	CHECK(!c.tampered);
	for (int i = 0; i < 100; i++) {
		mring_claim(mem, &pos); /* claimed, never published */
		int k = mring_consumer_skip_hole(&c, &pid, &tid);
		CHECK(k >= 0);
		skipped += k > 0;
	}
	CHECK_EQ_INT(skipped, 8);
	CHECK_EQ_INT(c.holes, 8);
	CHECK(!c.tampered);
	free(mem);
}

/* A loss notice (MRING_LOSS) is no marker: a full ring does not count it. */
static void test_uncounted(void)
{
	struct mring_consumer c;
	void *mem = new_consumed(8, &c);
	uint64_t pos;
	for (int i = 0; i < 8; i++) {
		struct mring_record *r = mring_claim_uncounted(mem, &pos);
		CHECK(r != NULL);
		if (r)
			mring_publish(mem, r, pos);
	}
	CHECK(mring_claim_uncounted(mem, &pos) == NULL);
	CHECK_EQ_INT(mring_consumer_lost(&c), 0);
	CHECK(mring_claim(mem, &pos) == NULL);
	CHECK_EQ_INT(mring_consumer_lost(&c), 1);
	free(mem);
}

/* What a hostile target can write into the header, one case per row: the
 * consumer stays inside the ring (ASan: the ring is a heap block of
 * exactly its size), reads what was published before, and then says the
 * ring was tampered with (why names the field), or, for the shared tail,
 * which it never reads, goes on as if nothing happened. */
enum field { F_MAGIC, F_VERSION, F_HDRSIZE, F_RECSIZE, F_NSLOTS, F_NGROUPS, F_GROUP_NR, F_GROUP_OFF,
	     F_HEAD, F_TAIL, F_LOST, F_SEQ };

static const struct hostile {
	int line;
	enum field field;
	uint64_t value;         /* F_HEAD, F_TAIL: added to the head */
	int tampered;
	const char *why;        /* a word of c.why */
} hostile[] = {
	{ __LINE__, F_MAGIC, 0, 1, "magic" },
	{ __LINE__, F_VERSION, MRING_VERSION + 1, 1, "version" },
	{ __LINE__, F_HDRSIZE, 0xffffffff, 1, "sizes" },
	{ __LINE__, F_HDRSIZE, 0, 1, "sizes" },
	{ __LINE__, F_RECSIZE, 1, 1, "sizes" },
	{ __LINE__, F_NSLOTS, 0, 1, "slot count" },
	{ __LINE__, F_NSLOTS, (uint64_t)1 << 30, 1, "slot count" },
	{ __LINE__, F_NSLOTS, UINT64_MAX, 1, "slot count" },
	{ __LINE__, F_NGROUPS, 200, 1, "group" },
	{ __LINE__, F_GROUP_NR, 255, 1, "group" },
	{ __LINE__, F_GROUP_OFF, 250, 1, "group" },
	{ __LINE__, F_HEAD, (uint64_t)1 << 40, 1, "head" },   /* far ahead */
	{ __LINE__, F_HEAD, 9, 1, "head" },                   /* more than a ring ahead */
	{ __LINE__, F_HEAD, (uint64_t)-3, 1, "head" },        /* behind what was read */
	{ __LINE__, F_TAIL, 1, 0, NULL },                     /* tail = head + 1: ignored */
	{ __LINE__, F_TAIL, (uint64_t)1 << 63, 0, NULL },
	{ __LINE__, F_LOST, 0, 1, "lost" },                   /* the lost count went down */
	{ __LINE__, F_SEQ, 0, 1, "head" },                    /* published past the head */
};

static void test_hostile_headers(void)
{
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		const struct hostile *t = &hostile[i];
		struct mring_consumer c;
		void *mem = new_consumed(8, &c);
		struct mring_header *h = mem;
		struct mring_record out;
		uint64_t pos;
		int rc, n = 0;

		/* 3 records read, 3 published and waiting, one loss counted */
		for (int k = 0; k < 6; k++)
			publish(mem, 5, (uint64_t)k);
		for (int k = 0; k < 3; k++)
			CHECK_ROW(mring_consumer_read(&c, &out) == 1, t->line);
		h->lost = 2;
		CHECK_ROW(mring_consumer_lost(&c) == 2, t->line);
		switch (t->field) {
		case F_MAGIC: h->magic = t->value; break;
		case F_VERSION: h->version = (uint32_t)t->value; break;
		case F_HDRSIZE: h->header_size = (uint32_t)t->value; break;
		case F_RECSIZE: h->record_size = (uint32_t)t->value; break;
		case F_NSLOTS: h->nslots = t->value; break;
		case F_NGROUPS: h->ngroups = (uint32_t)t->value; break;
		case F_GROUP_NR: h->group_nr[1] = (uint8_t)t->value; break;
		case F_GROUP_OFF: h->group_offset[1] = (uint8_t)t->value; break;
		case F_HEAD: h->head += t->value; break;
		case F_TAIL: h->tail = h->head + t->value; break;
		case F_LOST: h->lost = t->value; break;
		case F_SEQ: {
			/* slot 6 (not claimed: head is 6) says it holds position 6
			 * (stored lap-relative: 6 - 6 + 1) */
			struct mring_record *s6 = (struct mring_record *)((char *)mem + sizeof(*h)) + 6;
			s6->seq = 1;
			break;
		}
		}
		/* reads until none: what was published before the change (and
		 * the forged record of F_SEQ), until the consumer looks at the
		 * header again, when it finds nothing more */
		while ((rc = mring_consumer_read(&c, &out)) == 1 && n < 100)
			n++;
		CHECK_ROW(n <= 3 + (t->field == F_SEQ), t->line);
		if (t->tampered) {
			CHECK_ROW(rc == -EPROTO && c.tampered, t->line);
			CHECK_ROW(t->why && strstr(c.why, t->why) != NULL, t->line);
			if (!strstr(c.why, t->why ? t->why : ""))
				fprintf(stderr, "  why: %s\n", c.why);
			/* and nothing more, whatever comes */
			CHECK_ROW(mring_consumer_read(&c, &out) == -EPROTO, t->line);
			int32_t pid, tid;
			CHECK_ROW(mring_consumer_skip_hole(&c, &pid, &tid) == -EPROTO, t->line);
			/* the lost count stays what it was before */
			CHECK_ROW(mring_consumer_lost(&c) == 2, t->line);
		} else {
			CHECK_ROW(rc == 0 && n == 3 && !c.tampered, t->line);
			/* the recorder's tail is what the header shows again */
			CHECK_ROW(h->tail == 6, t->line);
			CHECK_ROW(mring_claim(mem, &pos) != NULL, t->line);
		}
		free(mem);
	}
}

/* A ring that never empties is still looked at, every MRING_CHECK_EVERY
 * records; a record published at one of those positions where no producer
 * claimed is caught there. */
static void test_checked_during_a_burst(void)
{
	struct mring_consumer c;
	void *mem = new_consumed(8, &c);
	struct mring_header *h = mem;
	struct mring_record out;

	/* a producer that keeps up: the ring never looks empty */
	for (uint64_t i = 0; i < 2 * MRING_CHECK_EVERY; i++) {
		publish(mem, 1, i);
		if (mring_consumer_read(&c, &out) != 1)
			break;
		if (i == 100)
			h->version = 77;
	}
	CHECK(c.tampered);
	CHECK(strstr(c.why, "version") != NULL);
	CHECK_EQ_INT(c.tail, MRING_CHECK_EVERY); /* stopped at the first look after it */
	free(mem);

	mem = new_consumed(8, &c);
	h = mem;
	for (uint64_t i = 0; i < MRING_CHECK_EVERY; i++) {
		publish(mem, 1, i);
		CHECK_EQ_INT(mring_consumer_read(&c, &out), 1);
	}
	/* position MRING_CHECK_EVERY made to look published, unclaimed */
	struct mring_record *s0 = (struct mring_record *)((char *)mem + sizeof(*h)) + (MRING_CHECK_EVERY & 7);
	s0->seq = MRING_CHECK_EVERY + 1;
	CHECK_EQ_INT(mring_consumer_read(&c, &out), -EPROTO);
	CHECK(strstr(c.why, "no producer claimed") != NULL);
	free(mem);
}

/* Random bytes over the header (and over slots' sequence numbers) between
 * reads: never a read outside the ring, never a loop. */
static void test_random_headers(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int tampered = 0;

	for (int round = 0; round < 2000; round++) {
		struct mring_consumer c;
		void *mem = new_consumed(16, &c);
		unsigned char *hb = mem;
		struct mring_record out;
		int32_t pid, tid;

		for (int k = 0; k < 10; k++)
			publish(mem, 5, (uint64_t)k);
		for (int step = 0; step < 8; step++) {
			/* a few random bytes anywhere in the header */
			for (int b = 0; b < 4; b++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				hb[x % sizeof(struct mring_header)] = (unsigned char)(x >> 32);
			}
			/* and a slot's sequence number */
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			struct mring_record *slot = (struct mring_record *)(hb + sizeof(struct mring_header)) + (x % 16);
			slot->seq = (x >> 8) % 64;
			for (int n = 0; n < 64 && mring_consumer_read(&c, &out) == 1; n++)
				;
			for (int n = 0; n < 64 && mring_consumer_skip_hole(&c, &pid, &tid) == 1; n++)
				;
			(void)mring_consumer_lost(&c);
		}
		CHECK(c.tail <= 10 + 16 + 16 * 8 * 2);
		CHECK(c.holes <= 16);
		tampered += c.tampered;
		free(mem);
	}
	/* nearly every round hits a checked field */
	CHECK(tampered > 1000);
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
		mring_publish(p->mem, r, pos);
		p->written++;
	}
	__atomic_fetch_add(&finished, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_concurrent(void)
{
	struct mring_consumer c;
	void *mem = new_consumed(1024, &c);
	struct mring_record out;
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
		while (mring_consumer_read(&c, &out) == 1) {
			int id = out.pid;
			if (id < 0 || id >= PRODUCERS) {
				order_ok = 0;
			} else {
				if (seen_first[id] && out.time_ns <= last[id])
					order_ok = 0;
				seen_first[id] = 1;
				last[id] = out.time_ns;
			}
			got++;
		}
		done = __atomic_load_n(&finished, __ATOMIC_ACQUIRE) == PRODUCERS;
		if (done) {
			for (int i = 0; i < PRODUCERS; i++)
				pthread_join(t[i], NULL);
			while (mring_consumer_read(&c, &out) == 1)
				got++;
		}
	}
	for (int i = 0; i < PRODUCERS; i++)
		written += p[i].written;
	CHECK(order_ok);
	CHECK_EQ_INT(got, written);
	CHECK_EQ_INT(written + mring_consumer_lost(&c), (uint64_t)PRODUCERS * PER_PRODUCER);
	CHECK(!c.tampered); /* honest producers never look like tampering */
	free(mem);
}


/* Pages of [a, a + len) resident: in the page cache, for a shared file
 * mapping (mincore()). */
static size_t resident_pages(const void *a, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (len + page - 1) / page, in = 0;
	unsigned char *v = calloc(n, 1);

	if (!v || mincore((void *)a, len, v) != 0) {
		free(v);
		return (size_t)-1;
	}
	for (size_t i = 0; i < n; i++)
		in += v[i] & 1;
	free(v);
	return in;
}

/* Pages of [a, a + len) mapped in this process's page tables
 * (/proc/self/pagemap, bit 63: present). */
static size_t mapped_pages(const void *a, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), n = (len + page - 1) / page, in = 0;
	uint64_t e;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return (size_t)-1;
	for (size_t i = 0; i < n; i++) {
		off_t off = (off_t)(((uintptr_t)a / page + i) * sizeof(e));
		if (pread(fd, &e, sizeof(e), off) != (ssize_t)sizeof(e)) {
			in = (size_t)-1;
			break;
		}
		in += e >> 63;
	}
	close(fd);
	return in;
}

/* A ring in fresh zeroed memory: made without touching a slot (its pages
 * stay unallocated), a producer maps MRING_PREFAULT_FIRST slots writable
 * at its start and the next MRING_PREFAULT_CHUNK when a publish comes
 * within a chunk of them, up to the end; the lap-relative sequence works
 * over laps; mring_clear() frees the slots of a used ring. */
static void test_lazy_pages(void)
{
	const uint64_t nslots = 16384; /* 9 MB */
	size_t size = mring_size(nslots), page = (size_t)sysconf(_SC_PAGESIZE);
	/* as mfu-record makes it: a memfd, mapped shared (twice: the
	 * recorder's consumer and the target's producer) */
	int fd = memfd_create("test-ring", MFD_CLOEXEC);
	void *mem = fd >= 0 && ftruncate(fd, (off_t)size) == 0
			    ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
	void *pmem = mem != MAP_FAILED ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
	uint8_t nr[2] = { 4, 2 };
	struct mring_producer p;
	struct mring_consumer c;
	struct mring_record out, *r;
	uint64_t pos, got = 0;
	char *slots;

	CHECK(pmem != MAP_FAILED);
	if (pmem == MAP_FAILED)
		return;
	slots = (char *)pmem + sizeof(struct mring_header);
	CHECK_EQ_INT(mring_init(mem, nslots, 2, nr), 0);
	CHECK_EQ_INT(mring_consumer_init(&c, mem, size, nslots), 0);
	/* the header's page only: no slot written */
	CHECK_EQ_INT(resident_pages(mem, size), 1);
	/* the recorder populates the first MRING_POPULATE_AHEAD slots */
	mring_consumer_populate_ahead(&c);
	size_t ahead = (mring_size(MRING_POPULATE_AHEAD) + page - 1) / page;
	size_t in = resident_pages(mem, size);
	/* MADV_POPULATE_* are Linux 5.14+; before, the pages come as written */
	CHECK(in == 1 || in == ahead);
	CHECK_EQ_INT(c.populated, MRING_POPULATE_AHEAD);
	CHECK_EQ_INT(mring_producer_init(&p, pmem, size), 0);
	CHECK_EQ_INT(p.ready, 0);
	/* the header read (a fault maps up to 64 KiB around: fault-around) */
	size_t first = (mring_size(MRING_PREFAULT_FIRST) + page - 1) / page;
	CHECK(mapped_pages(pmem, size) <= 16);
	mring_producer_prefault_start(&p);
	CHECK_EQ_INT(p.ready, MRING_PREFAULT_FIRST);
	size_t m = mapped_pages(pmem, size);
	CHECK(in == 1 || (m >= first && m <= first + 16));
	for (uint64_t i = 0; i < 3 * nslots; i++) {
		r = mring_producer_claim(&p, &pos);
		CHECK(r != NULL && pos == i);
		if (!r)
			break;
		CHECK_EQ_INT(r->seq, (i & ~(nslots - 1)));
		r->time_ns = i;
		mring_producer_publish(&p, r, pos);
		CHECK_EQ_INT(r->seq, (i & ~(nslots - 1)) + 1);
		mring_producer_prefault(&p, pos);
		if (i == MRING_PREFAULT_FIRST - MRING_PREFAULT_CHUNK - 1)
			CHECK_EQ_INT(p.ready, MRING_PREFAULT_FIRST);
		if (i == MRING_PREFAULT_FIRST - MRING_PREFAULT_CHUNK)
			CHECK_EQ_INT(p.ready, MRING_PREFAULT_FIRST + MRING_PREFAULT_CHUNK);
		/* the slots ahead of the claims are there before they are written */
		if (i == 5000 && in > 1)
			CHECK_EQ_INT(mapped_pages((void *)((uintptr_t)(slots + 7000 * sizeof(struct mring_record)) &
							   ~(uintptr_t)(page - 1)), page), 1);
		if (mring_consumer_read(&c, &out) == 1 && out.time_ns == got)
			got++;
		/* as after each drain: ahead of the latest head seen */
		if (i % 1000 == 0) {
			mring_consumer_populate_ahead(&c);
			CHECK(c.populated >= (c.tail < nslots - MRING_POPULATE_AHEAD ? c.tail + MRING_POPULATE_AHEAD - MRING_PREFAULT_CHUNK
										      : nslots));
		}
	}
	CHECK_EQ_INT(got, 3 * nslots); /* every record, in order, over three laps */
	CHECK_EQ_INT(p.ready, nslots);
	CHECK_EQ_INT(c.populated, nslots);
	CHECK_EQ_INT(mapped_pages(pmem, size), (size + page - 1) / page);
	/* a used ring made again: every slot free for the first lap */
	mring_clear(mem, nslots);
	memset(mem, 0, sizeof(struct mring_header));
	CHECK_EQ_INT(mring_init(mem, nslots, 2, nr), 0);
	CHECK_EQ_INT(mring_consumer_init(&c, mem, size, nslots), 0);
	CHECK(mring_claim(mem, &pos) != NULL && pos == 0);
	mring_publish(mem, &((struct mring_record *)slots)[0], pos);
	CHECK_EQ_INT(mring_consumer_read(&c, &out), 1);
	CHECK_EQ_INT(mring_consumer_read(&c, &out), 0);
	munmap(pmem, size);
	munmap(mem, size);
	close(fd);
}

int main(void)
{
	test_layout();
	test_attach_layout();
	test_check();
	test_producer_keeps_its_geometry();
	test_consumer_init();
	test_fifo_and_full();
	test_hole();
	test_hole_skip_capped();
	test_uncounted();
	test_hostile_headers();
	test_checked_during_a_burst();
	test_random_headers();
	test_concurrent();
	test_lazy_pages();
	return check_status();
}
