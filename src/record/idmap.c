#include "idmap.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

struct idmap_slot {
	uint64_t key;
	int value; /* -1: empty */
};

/* Some keys come from another process (the pids and tids in a target's
 * marker records): with a mix fixed in the code, a target could pick ids
 * that all land in one run of slots and make every lookup linear. The mix
 * takes a seed the target cannot know, drawn once per process. */
static uint64_t seed(void)
{
	static uint64_t s;

	if (!s) {
		uint64_t v = 0;
		if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v)) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			v = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)&v;
		}
		s = v | 1;
	}
	return s;
}

uint64_t idmap_mix(uint64_t x)
{
	/* splitmix64's finalizer: keys that differ in a few bits (aligned
	 * addresses, consecutive ids) land far apart */
	x ^= seed();
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static size_t slot_of(uint64_t x, size_t cap)
{
	return (size_t)idmap_mix(x) & (cap - 1);
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
