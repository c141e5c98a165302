/* The marker ring, see marker_ring.h. Compiled into libmfu and mfu-record. */
#include "marker_ring.h"

#include <errno.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static inline struct mring_record *slot(void *mem, uint64_t pos)
{
	struct mring_header *h = mem;
	return (struct mring_record *)((char *)mem + h->header_size) + (pos & (h->nslots - 1));
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#define MADV_POPULATE_WRITE 23
#endif

static void populate(const struct mring_producer *p, uint64_t from, uint64_t to);

/* madvise(@advice) the pages of slots [from, to) of the ring whose header
 * is at @h and slots at @slots (from the header's page when @from is 0). */
static void populate_range(const void *h, const struct mring_record *slots, uint64_t from, uint64_t to,
			   int advice)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = from ? (uintptr_t)&slots[from] : (uintptr_t)h;
	uintptr_t b = (uintptr_t)&slots[to];

	a &= ~(page - 1);
	(void)madvise((void *)a, b - a, advice);
}

size_t mring_size(uint64_t nslots)
{
	return sizeof(struct mring_header) + nslots * sizeof(struct mring_record);
}

unsigned mring_data_words(uint32_t ngroups, const uint8_t *group_nr)
{
	unsigned words = 0;
	for (uint32_t g = 0; g < ngroups; g++)
		words += 3u + group_nr[g];
	return words;
}

int mring_init(void *mem, uint64_t nslots, uint32_t ngroups, const uint8_t *group_nr)
{
	struct mring_header *h = mem;
	unsigned off = 0;

	if (ngroups > MRING_MAX_GROUPS || mring_data_words(ngroups, group_nr) > MRING_DATA_WORDS)
		return -E2BIG;
	for (uint32_t g = 0; g < ngroups; g++) {
		h->group_nr[g] = group_nr[g];
		h->group_offset[g] = (uint8_t)off;
		off += 3u + group_nr[g];
	}
	h->ngroups = ngroups;
	h->magic = MRING_MAGIC;
	h->version = MRING_VERSION;
	h->header_size = sizeof(*h);
	h->record_size = sizeof(struct mring_record);
	h->nslots = nslots;
	__atomic_store_n(&h->head, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&h->tail, 0, __ATOMIC_RELEASE);
	return 0;
}

void mring_clear(void *mem, uint64_t nslots)
{
	struct mring_record *slots = (struct mring_record *)((char *)mem + sizeof(struct mring_header));

	for (uint64_t i = 0; i < nslots; i++)
		__atomic_store_n(&slots[i].seq, 0, __ATOMIC_RELAXED);
}

int mring_check(const void *mem, size_t size)
{
	const struct mring_header *h = mem;
	if (size < sizeof(*h))
		return -EINVAL;
	if (h->magic != MRING_MAGIC || h->version != MRING_VERSION ||
	    h->header_size != sizeof(*h) || h->record_size != sizeof(struct mring_record))
		return -EPROTO;
	if (h->nslots == 0 || (h->nslots & (h->nslots - 1)) != 0 ||
	    h->ngroups > MRING_MAX_GROUPS || mring_data_words(h->ngroups, h->group_nr) > MRING_DATA_WORDS ||
	    mring_size(h->nslots) > size)
		return -EINVAL;
	for (uint32_t g = 0, off = 0; g < h->ngroups; off += 3u + h->group_nr[g], g++)
		if (h->group_offset[g] != off)
			return -EINVAL;
	return 0;
}

static struct mring_record *claim(struct mring_header *h, struct mring_record *slots, uint64_t mask,
				  uint64_t *pos, int count_loss)
{
	uint64_t p = __atomic_load_n(&h->head, __ATOMIC_RELAXED);
	for (;;) {
		struct mring_record *r = &slots[p & mask];
		uint64_t seq = __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE);
		int64_t diff = (int64_t)(seq - (p & ~mask)); /* stored: lap-relative */
		if (diff == 0) {
			if (__atomic_compare_exchange_n(&h->head, &p, p + 1, 1,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
				*pos = p;
				return r;
			}
			/* p was reloaded by the failed CAS */
		} else if (diff < 0) {
			/* the slot still holds a record from the previous lap: full */
			if (count_loss)
				__atomic_fetch_add(&h->lost, 1, __ATOMIC_RELAXED);
			return NULL;
		} else {
			p = __atomic_load_n(&h->head, __ATOMIC_RELAXED);
		}
	}
}

struct mring_record *mring_claim(void *mem, uint64_t *pos)
{
	struct mring_header *h = mem;
	return claim(h, slot(mem, 0), h->nslots - 1, pos, 1);
}

struct mring_record *mring_claim_uncounted(void *mem, uint64_t *pos)
{
	struct mring_header *h = mem;
	return claim(h, slot(mem, 0), h->nslots - 1, pos, 0);
}

int mring_producer_init(struct mring_producer *p, void *mem, size_t size)
{
	int rc = mring_check(mem, size);
	const struct mring_header *h = mem;

	memset(p, 0, sizeof(*p));
	if (rc)
		return rc;
	p->h = mem;
	p->slots = (struct mring_record *)((char *)mem + sizeof(struct mring_header));
	p->mask = h->nslots - 1;
	p->ready = 0;
	return 0;
}

void mring_producer_prefault_start(struct mring_producer *p)
{
	uint64_t to = p->mask + 1 < MRING_PREFAULT_FIRST ? p->mask + 1 : MRING_PREFAULT_FIRST;

	populate(p, 0, to);
	__atomic_store_n(&p->ready, to, __ATOMIC_RELAXED);
}

struct mring_record *mring_producer_claim(const struct mring_producer *p, uint64_t *pos)
{
	return claim(p->h, p->slots, p->mask, pos, 1);
}

struct mring_record *mring_producer_claim_uncounted(const struct mring_producer *p, uint64_t *pos)
{
	return claim(p->h, p->slots, p->mask, pos, 0);
}

void mring_publish(const void *mem, struct mring_record *r, uint64_t pos)
{
	const struct mring_header *h = mem;
	__atomic_store_n(&r->seq, (pos & ~(h->nslots - 1)) + 1, __ATOMIC_RELEASE);
}

void mring_producer_publish(const struct mring_producer *p, struct mring_record *r, uint64_t pos)
{
	__atomic_store_n(&r->seq, (pos & ~p->mask) + 1, __ATOMIC_RELEASE);
}

/* Map slots [from, to) in this process (and, where the recorder did not
 * populate them yet, allocate the pages). MADV_POPULATE_READ: a read fault
 * on a shared memfd maps the page writable (shmem keeps no write
 * notification), in batches of pages (fault-around), at about 0.44 us a
 * page here against 0.73 us for MADV_POPULATE_WRITE; were a page mapped
 * read-only, its first write would fault once, as with no populating.
 * Errors are ignored: a kernel without it (before 5.14) takes the faults in
 * the markers instead. */
static void populate(const struct mring_producer *p, uint64_t from, uint64_t to)
{
	populate_range(p->h, p->slots, from, to, MADV_POPULATE_READ);
}

void mring_producer_prefault_more(struct mring_producer *p, uint64_t pos)
{
	uint64_t r = __atomic_load_n(&p->ready, __ATOMIC_RELAXED), to;

	if (r > p->mask || pos + MRING_PREFAULT_CHUNK < r)
		return;
	to = r + MRING_PREFAULT_CHUNK;
	if (to > p->mask + 1)
		to = p->mask + 1;
	/* one thread maps each chunk; the others go on (a claim that overtakes
	 * it takes an ordinary page fault) */
	if (__atomic_compare_exchange_n(&p->ready, &r, to, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		populate(p, r, to);
}

/* ---- the consumer: nothing read from the shared memory is trusted ---- */

int mring_consumer_init(struct mring_consumer *c, void *mem, size_t size, uint64_t nslots)
{
	memset(c, 0, sizeof(*c));
	if (nslots == 0 || (nslots & (nslots - 1)) != 0 ||
	    nslots > (SIZE_MAX - sizeof(struct mring_header)) / sizeof(struct mring_record) ||
	    mring_size(nslots) > size || mring_check(mem, size) != 0 ||
	    ((const struct mring_header *)mem)->nslots != nslots)
		return -EINVAL;
	c->h = mem;
	/* the slots follow the header as this recorder lays it out, not where
	 * the shared header_size says */
	c->slots = (struct mring_record *)((char *)mem + sizeof(struct mring_header));
	c->nslots = nslots;
	c->mask = nslots - 1;
	memcpy(&c->ref, mem, offsetof(struct mring_header, head));
	return 0;
}

void mring_consumer_populate_ahead(struct mring_consumer *c)
{
	uint64_t want = (c->head_seen > c->tail ? c->head_seen : c->tail) + MRING_POPULATE_AHEAD;

	if (c->populated >= c->nslots || want <= c->populated + MRING_PREFAULT_CHUNK)
		return;
	if (want > c->nslots)
		want = c->nslots;
	populate_range(c->h, c->slots, c->populated, want, MADV_POPULATE_WRITE);
	c->populated = want;
}

static int tampered(struct mring_consumer *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int tampered(struct mring_consumer *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->tampered) {
		c->tampered = 1;
		va_start(ap, fmt);
		vsnprintf(c->why, sizeof(c->why), fmt, ap);
		va_end(ap);
	}
	return -EPROTO;
}

int mring_consumer_check(struct mring_consumer *c)
{
	struct mring_header now;
	uint64_t lost;

	if (c->tampered)
		return -EPROTO;
	/* one copy, then compare: the fields may change under the reads */
	memcpy(&now, c->h, offsetof(struct mring_header, head));
	if (now.magic != c->ref.magic || now.version != c->ref.version)
		return tampered(c, "the ring header's magic or version changed (magic %#llx, version %u)",
				(unsigned long long)now.magic, now.version);
	if (now.header_size != c->ref.header_size || now.record_size != c->ref.record_size)
		return tampered(c, "the ring header's sizes changed (header %u bytes, record %u; created as %u and %u)",
				now.header_size, now.record_size, c->ref.header_size, c->ref.record_size);
	if (now.nslots != c->ref.nslots)
		return tampered(c, "the ring header's slot count changed to %llu (created with %llu)",
				(unsigned long long)now.nslots, (unsigned long long)c->ref.nslots);
	if (now.ngroups != c->ref.ngroups || memcmp(now.group_nr, c->ref.group_nr, sizeof(now.group_nr)) ||
	    memcmp(now.group_offset, c->ref.group_offset, sizeof(now.group_offset)))
		return tampered(c, "the ring header's counter group layout changed (%u groups; created with %u)",
				now.ngroups, c->ref.ngroups);
	/* producers add to it while this reads: one atomic load, never a
	 * copy that could tear */
	lost = __atomic_load_n(&c->h->lost, __ATOMIC_ACQUIRE);
	if (lost < c->lost_seen)
		return tampered(c, "the ring header's lost count went down, from %llu to %llu",
				(unsigned long long)c->lost_seen, (unsigned long long)lost);
	c->lost_seen = lost;
	return 0;
}

/* Read the head and check it against the private tail: producers claim
 * positions below it, and at most a ring ahead of the consumer (a slot is
 * claimed only once the consumer freed it a lap before); the consumer
 * reads only what was claimed, so never past it. */
static int read_head(struct mring_consumer *c, uint64_t *head)
{
	uint64_t hd = __atomic_load_n(&c->h->head, __ATOMIC_ACQUIRE);

	*head = hd; /* defined whatever follows: callers test the result first */
	if (hd < c->tail || hd - c->tail > c->nslots)
		return tampered(c, "the ring's head (%llu) is impossible: the recorder had read up to %llu "
				"of a ring of %llu slots", (unsigned long long)hd, (unsigned long long)c->tail,
				(unsigned long long)c->nslots);
	if (hd < c->head_seen)
		return tampered(c, "the ring's head went back, from %llu to %llu",
				(unsigned long long)c->head_seen, (unsigned long long)hd);
	c->head_seen = hd;
	return 0;
}

/* Free the slot at the read position and move on. */
static void advance(struct mring_consumer *c, struct mring_record *r)
{
	/* a hole left in this slot next lap must not name this record's writer */
	r->pid = 0;
	r->tid = 0;
	__atomic_store_n(&r->seq, (c->tail & ~c->mask) + c->nslots, __ATOMIC_RELEASE);
	c->tail++;
	/* for the producers' sake only: never read back */
	__atomic_store_n(&c->h->tail, c->tail, __ATOMIC_RELEASE);
}

int mring_consumer_read(struct mring_consumer *c, struct mring_record *out)
{
	struct mring_record *r;
	uint64_t t = c->tail, hd;

	if (c->tampered)
		return -EPROTO;
	r = &c->slots[t & c->mask];
	if (__atomic_load_n(&r->seq, __ATOMIC_ACQUIRE) != (t & ~c->mask) + 1) {
		/* none (yet): a drain ends here, so each one looks at the
		 * header once at least */
		return mring_consumer_check(c) || read_head(c, &hd) ? -EPROTO : 0;
	}
	/* During a burst that never lets the ring empty, every
	 * MRING_CHECK_EVERY records. Not at each record: the head's line is
	 * the one every producer's claim writes, and a reader that read it
	 * at each record (right behind a producer) would slow the markers.
	 * A record published where no producer claimed shows here, or at
	 * the end of the drain as a head behind what was read. */
	if ((t & (MRING_CHECK_EVERY - 1)) == 0) {
		if (mring_consumer_check(c) || read_head(c, &hd))
			return -EPROTO;
		if (hd <= t)
			return tampered(c, "a record was published at position %llu, which no producer claimed "
					"(head %llu)", (unsigned long long)t, (unsigned long long)hd);
	}
	memcpy(out, r, sizeof(*out));
	advance(c, r);
	return 1;
}

int mring_consumer_skip_hole(struct mring_consumer *c, int32_t *pid, int32_t *tid)
{
	struct mring_record *r;
	uint64_t hd;

	*pid = *tid = 0;
	if (mring_consumer_check(c) || read_head(c, &hd))
		return -EPROTO;
	/* nothing pending; or a whole ring of holes skipped already: no
	 * producer can leave more than that once none runs, so a producer
	 * still claiming slots cannot keep the consumer here */
	if (hd == c->tail || c->holes >= c->nslots)
		return 0;
	r = &c->slots[c->tail & c->mask];
	if (__atomic_load_n(&r->seq, __ATOMIC_ACQUIRE) == (c->tail & ~c->mask) + 1)
		return 0; /* published after all */
	*pid = __atomic_load_n(&r->pid, __ATOMIC_RELAXED);
	*tid = __atomic_load_n(&r->tid, __ATOMIC_RELAXED);
	c->holes++;
	advance(c, r);
	return 1;
}

uint64_t mring_consumer_lost(struct mring_consumer *c)
{
	uint64_t n;

	if (!c->tampered)
		(void)mring_consumer_check(c); /* refreshes lost_seen */
	if (__builtin_add_overflow(c->lost_seen, c->holes, &n) || n > INT64_MAX)
		n = INT64_MAX;
	return n;
}
