/*
 * idmap: a hash map from a u64 key (any value: perf event ids, pids, ELF
 * addresses, hashes) to a non-negative int, e.g. an index into an array.
 * Open addressing with linear probing over a splitmix64-mixed key (aligned
 * addresses and small ids spread over every slot; seeded at random, so
 * that another process cannot choose keys that collide), grown to stay at
 * most half full; no removal. The one hash map of the project.
 */
#ifndef MFU_IDMAP_H
#define MFU_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap {
	struct idmap_slot *slot; /* NULL until the first put */
	size_t n, cap;
};

/* Map @key to @value (>= 0), replacing any earlier value. Returns 0,
 * -EINVAL for a negative value, or -ENOMEM. */
int idmap_put(struct idmap *m, uint64_t key, int value);

/* The value of @key, or -1 when it has none. */
int idmap_get(const struct idmap *m, uint64_t key);

/* Free the slots; the map is then empty and usable again. */
void idmap_fini(struct idmap *m);

/* The map's mix of a key: well spread, and seeded once per process at
 * random, so that keys chosen by another process (a target's forged ids)
 * cannot be made to collide. For hash tables of one's own. */
uint64_t idmap_mix(uint64_t key);

#endif
