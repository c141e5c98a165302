/* JIT code, from /tmp/perf-PID.map (symbols_impl.h). */
#include "symbols_impl.h"
#include "asuser.h"

/* A JIT's map grows with the code it made; beyond this it is not one. */
#define PERFMAP_MAX_BYTES ((off_t)1 << 30)

/* ---- JIT: /tmp/perf-PID.map ---- */

static int jit_cmp(const void *pa, const void *pb)
{
	const struct jit_sym *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* Lines are "START SIZE name", START and SIZE in hex (perf's format; the
 * name may contain spaces). Bad lines are skipped: the file is written by
 * the JIT while it runs and may end mid-line. Returns 0 or -ENOMEM. */
static int perfmap_read(struct symbols *s, struct proc *p)
{
	char path[64], *line = NULL;
	size_t len = 0, cap = 0, order = 0;
	FILE *f;
	int err = 0;

	p->perfmap_read = true;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)p->pid);
	/* /tmp is everyone's: a link planted at the name, a FIFO, another
	 * user's file are not the JIT's map. Read as the target's user
	 * (asuser.h), a regular file of theirs (or root's), as perf does. */
	int fd = asuser_open_file(asuser_owner(), path, PERFMAP_MAX_BYTES, NULL);
	f = fd >= 0 ? fdopen(fd, "re") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	p->perfmap_path = pool_strdup(&s->pool, path);
	if (!p->perfmap_path) {
		err = -ENOMEM;
		goto out;
	}
	while (getline(&line, &len, f) > 0) {
		char *e1, *e2, *name;
		uint64_t start, size;

		order++;
		line[strcspn(line, "\n")] = '\0';
		errno = 0;
		start = strtoull(line, &e1, 16);
		if (e1 == line || *e1 != ' ')
			continue;
		size = strtoull(e1 + 1, &e2, 16);
		if (e2 == e1 + 1 || *e2 != ' ' || errno == ERANGE || !size || start + size < start)
			continue;
		name = e2 + 1;
		if (!*name)
			continue;
		if (array_grow(&p->jit, &cap, p->njit + 1, sizeof(*p->jit))) {
			err = -ENOMEM;
			goto out;
		}
		p->jit[p->njit] = (struct jit_sym){ .start = start, .end = start + size, .order = order };
		p->jit[p->njit].name = shown_name(s, name);
		if (p->jit[p->njit].name == name)
			p->jit[p->njit].name = pool_strdup(&s->pool, name);
		if (!p->jit[p->njit].name) {
			err = -ENOMEM;
			goto out;
		}
		p->njit++;
	}
	qsort(p->jit, p->njit, sizeof(*p->jit), jit_cmp);
out:
	free(line);
	fclose(f);
	return err;
}

static const struct jit_sym *perfmap_find(const struct proc *p, uint64_t ip)
{
	const struct jit_sym *best = NULL;
	size_t lo = 0, hi = p->njit;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->jit[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* code regions get reused: among overlapping entries the last written wins */
	for (size_t i = lo; i > 0 && lo - i < 16; i--) {
		const struct jit_sym *j = &p->jit[i - 1];
		if (ip < j->end && (!best || j->order > best->order))
			best = j;
	}
	return best;
}

int resolve_jit(struct symbols *s, pid_t pid, const struct map *m, uint64_t ip,
		       struct symbol_info *out)
{
	const struct jit_sym *j;
	struct proc *p;
	int err;

	if (m) {
		out->kind = SYMBOL_JIT;
		out->dso = m->name;
		out->dso_addr = ip - m->start;
	}
	err = proc_get(s, pid, &p);
	if (err)
		return err;
	if (!p->perfmap_read) {
		err = perfmap_read(s, p);
		if (err)
			return err;
	}
	j = perfmap_find(p, ip);
	if (!j)
		return -ENOENT;
	if (!m) {
		/* no mapping was recorded for it, but the JIT says it wrote code there */
		out->kind = SYMBOL_JIT;
		out->dso = p->perfmap_path;
		out->dso_addr = ip;
	}
	out->name = j->name;
	out->offset = ip - j->start;
	return 0;
}

