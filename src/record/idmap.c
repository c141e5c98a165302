#include "idmap.h"

#include <errno.h>
#include <stdlib.h>

struct idmap_slot {
	uint64_t key;
	int value; /* -1: empty */
};

static size_t slot_of(uint64_t x, size_t cap)
{
	/* splitmix64's finalizer: keys that differ in a few bits (aligned
	 * addresses, consecutive ids) land far apart */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return (size_t)x & (cap - 1);
}

static int grow(struct idmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64, h;
	struct idmap_slot *ns = malloc(ncap * sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < ncap; i++)
		ns[i].value = -1;
	for (size_t i = 0; i < m->cap; i++) {
		if (m->slot[i].value < 0)
			continue;
		for (h = slot_of(m->slot[i].key, ncap); ns[h].value >= 0; h = (h + 1) & (ncap - 1))
			;
		ns[h] = m->slot[i];
	}
	free(m->slot);
	m->slot = ns;
	m->cap = ncap;
	return 0;
}

int idmap_put(struct idmap *m, uint64_t key, int value)
{
	size_t h;

	if (value < 0)
		return -EINVAL;
	if ((m->n + 1) * 2 > m->cap && grow(m))
		return -ENOMEM;
	for (h = slot_of(key, m->cap); m->slot[h].value >= 0 && m->slot[h].key != key; h = (h + 1) & (m->cap - 1))
		;
	if (m->slot[h].value < 0)
		m->n++;
	m->slot[h].key = key;
	m->slot[h].value = value;
	return 0;
}

int idmap_get(const struct idmap *m, uint64_t key)
{
	if (!m->cap)
		return -1;
	for (size_t h = slot_of(key, m->cap); m->slot[h].value >= 0; h = (h + 1) & (m->cap - 1))
		if (m->slot[h].key == key)
			return m->slot[h].value;
	return -1;
}

void idmap_fini(struct idmap *m)
{
	if (!m)
		return;
	free(m->slot);
	m->slot = NULL;
	m->n = m->cap = 0;
}
