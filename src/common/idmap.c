#include "idmap.h"

#include <errno.h>
#include <stdlib.h>

struct idmap_slot {
	uint64_t id; /* 0: empty */
	int value;
};

static size_t slot_of(uint64_t id, size_t cap)
{
	return (size_t)(id * 0x9E3779B97F4A7C15ull) & (cap - 1);
}

int idmap_put(struct idmap *m, uint64_t id, int value)
{
	size_t h;

	if (!id)
		return -EINVAL;
	if ((m->n + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		struct idmap_slot *ns = calloc(ncap, sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->slot[i].id)
				continue;
			for (h = slot_of(m->slot[i].id, ncap); ns[h].id; h = (h + 1) & (ncap - 1))
				;
			ns[h] = m->slot[i];
		}
		free(m->slot);
		m->slot = ns;
		m->cap = ncap;
	}
	for (h = slot_of(id, m->cap); m->slot[h].id && m->slot[h].id != id; h = (h + 1) & (m->cap - 1))
		;
	if (!m->slot[h].id)
		m->n++;
	m->slot[h].id = id;
	m->slot[h].value = value;
	return 0;
}

int idmap_get(const struct idmap *m, uint64_t id)
{
	if (!m->cap || !id)
		return -1;
	for (size_t h = slot_of(id, m->cap); m->slot[h].id; h = (h + 1) & (m->cap - 1))
		if (m->slot[h].id == id)
			return m->slot[h].value;
	return -1;
}

void idmap_fini(struct idmap *m)
{
	free(m->slot);
	m->slot = NULL;
	m->n = m->cap = 0;
}
