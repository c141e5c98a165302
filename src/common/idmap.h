/*
 * idmap: a small hash map from a perf event id (a nonzero u64) to an int,
 * for telling apart the events whose records share a ring (the sampler's
 * per-thread events, the uprobe events of a thread). Open addressing,
 * grows to keep at most half full; no removal (ids are never reused).
 */
#ifndef MFU_IDMAP_H
#define MFU_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap {
	struct idmap_slot *slot; /* NULL until the first put */
	size_t n, cap;
};

/* Map @id (nonzero) to @value, replacing any earlier value. 0 or -ENOMEM. */
int idmap_put(struct idmap *m, uint64_t id, int value);

/* The value of @id, or -1 when it has none. */
int idmap_get(const struct idmap *m, uint64_t id);

/* Free the slots; the map is then empty and usable again. */
void idmap_fini(struct idmap *m);

#endif
