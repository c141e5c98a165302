/* The marker ring, see marker_ring.h. Compiled into libmfu and mfu-record. */
#include "marker_ring.h"

#include <errno.h>
#include <string.h>

static inline struct mring_record *slot(void *mem, uint64_t pos)
{
	struct mring_header *h = mem;
	return (struct mring_record *)((char *)mem + h->header_size) + (pos & (h->nslots - 1));
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
	for (uint64_t i = 0; i < nslots; i++)
		__atomic_store_n(&slot(mem, i)->seq, i, __ATOMIC_RELAXED);
	__atomic_store_n(&h->head, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&h->tail, 0, __ATOMIC_RELEASE);
	return 0;
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

static struct mring_record *claim(void *mem, uint64_t *pos, int count_loss)
{
	struct mring_header *h = mem;
	uint64_t p = __atomic_load_n(&h->head, __ATOMIC_RELAXED);
	for (;;) {
		struct mring_record *r = slot(mem, p);
		uint64_t seq = __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE);
		int64_t diff = (int64_t)(seq - p);
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
	return claim(mem, pos, 1);
}

struct mring_record *mring_claim_uncounted(void *mem, uint64_t *pos)
{
	return claim(mem, pos, 0);
}

void mring_publish(struct mring_record *r, uint64_t pos)
{
	__atomic_store_n(&r->seq, pos + 1, __ATOMIC_RELEASE);
}

const struct mring_record *mring_peek(void *mem)
{
	struct mring_header *h = mem;
	uint64_t t = __atomic_load_n(&h->tail, __ATOMIC_RELAXED);
	struct mring_record *r = slot(mem, t);
	if (__atomic_load_n(&r->seq, __ATOMIC_ACQUIRE) != t + 1)
		return NULL;
	return r;
}

void mring_release(void *mem)
{
	struct mring_header *h = mem;
	uint64_t t = __atomic_load_n(&h->tail, __ATOMIC_RELAXED);
	struct mring_record *r = slot(mem, t);
	/* a hole left in this slot next lap must not name this record's writer */
	r->pid = 0;
	r->tid = 0;
	__atomic_store_n(&r->seq, t + h->nslots, __ATOMIC_RELEASE);
	__atomic_store_n(&h->tail, t + 1, __ATOMIC_RELEASE);
}

uint64_t mring_pending(const void *mem)
{
	const struct mring_header *h = mem;
	return __atomic_load_n(&h->head, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE);
}

int mring_skip_hole(void *mem)
{
	struct mring_header *h = mem;
	if (mring_pending(mem) == 0)
		return 0;
	uint64_t t = __atomic_load_n(&h->tail, __ATOMIC_RELAXED);
	if (__atomic_load_n(&slot(mem, t)->seq, __ATOMIC_ACQUIRE) == t + 1)
		return 0; /* published after all */
	__atomic_fetch_add(&h->lost, 1, __ATOMIC_RELAXED);
	slot(mem, t)->pid = 0;
	slot(mem, t)->tid = 0;
	__atomic_store_n(&slot(mem, t)->seq, t + h->nslots, __ATOMIC_RELEASE);
	__atomic_store_n(&h->tail, t + 1, __ATOMIC_RELEASE);
	return 1;
}

void mring_hole_owner(const void *mem, int32_t *pid, int32_t *tid)
{
	const struct mring_header *h = mem;
	uint64_t t = __atomic_load_n(&h->tail, __ATOMIC_RELAXED);
	const struct mring_record *r = slot((void *)mem, t);

	*pid = *tid = 0;
	if (mring_pending(mem) == 0 || __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE) == t + 1)
		return;
	*pid = __atomic_load_n(&r->pid, __ATOMIC_RELAXED);
	*tid = __atomic_load_n(&r->tid, __ATOMIC_RELAXED);
}

uint64_t mring_lost(const void *mem)
{
	const struct mring_header *h = mem;
	return __atomic_load_n(&h->lost, __ATOMIC_ACQUIRE);
}
