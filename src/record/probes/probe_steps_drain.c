/* Probe hits to boundaries, and the end of the probes (probe_steps_impl.h). */
#include "probe_steps_impl.h"

/* ---- draining ---- */

static int on_hit(void *ctx, const struct perf_event_header *hdr, const void *rec, int cpu)
{
	struct probe_steps *ps = ctx;
	struct probe_hit h;
	size_t len = hdr->size - sizeof(*hdr);
	uint64_t id;
	int ev;

	(void)cpu;
	if (hdr->type != PERF_RECORD_SAMPLE || len < 8)
		return 0;
	memcpy(&id, rec, 8); /* PERF_SAMPLE_IDENTIFIER comes first */
	ev = idmap_get(&ps->ev, id);
	if (ev < 0)
		return 0;
	int pi = ev >> SITE_BITS;
	struct point *p = &ps->pt[pi];
	if (probes_parse_hit(hdr, rec, len, &h) != 0)
		return 0;
	p->hits++;
	ps->total_hits++;
	if (array_grow(&ps->hits, &ps->caphits, ps->nhits + 1, sizeof(*ps->hits)))
		return -ENOMEM;
	ps->hits[ps->nhits++] = (struct hit){ .time = h.time, .seq = ps->seq++, .pid = (pid_t)h.pid,
					      .tid = (pid_t)h.tid, .point = pi, .t = ps->draining };
	return 0;
}

static int hit_cmp(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int emit(struct probe_steps *ps, const struct probe_request *q, int begin, const struct hit *h)
{
	struct mring_record r;

	memset(&r, 0, sizeof(r));
	r.kind = q->phase ? (begin ? MRING_PHASE_BEGIN : MRING_PHASE_END) : (begin ? MRING_STEP_BEGIN : MRING_STEP_END);
	r.pid = h->pid;
	r.tid = h->tid;
	r.time_ns = h->time;
	if (q->phase) {
		strbuf(r.name, sizeof(r.name), "%s", q->name);
		r.name_len = (uint16_t)strlen(r.name);
	}
	return ps->sink.boundary ? ps->sink.boundary(ps->sink.ctx, &r) : 0;
}

/* Turn one hit into boundaries with its request's per-thread state. */
static int apply(struct probe_steps *ps, const struct hit *h)
{
	const struct point *p = &ps->pt[h->point];
	const struct probe_request *q = &ps->req[p->req];
	int *st = &h->t->state[p->req];
	if (p->boundary == BOUND_EACH) {
		int rc = *st ? emit(ps, q, 0, h) : 0;
		*st = 1;
		return rc ? rc : emit(ps, q, 1, h);
	}
	int nests = q->spec.kind == PROBE_SPEC_CALL;
	if (p->boundary == BOUND_BEGIN) {
		/* entered before the return probe was in place (probe_steps.c,
		 * armed): its end may never come */
		if (h->time < h->t->armed[p->req])
			return 0;
		if (nests ? (*st)++ == 0 : !*st) {
			*st = nests ? *st : 1;
			return emit(ps, q, 1, h);
		}
		return 0;
	}
	/* an end without its begin (a call that began before the probes were
	 * in place, or a pair's end alone) is no boundary */
	if (*st == 0)
		return 0;
	if (nests ? --(*st) == 0 : (*st = 0, 1))
		return emit(ps, q, 0, h);
	return 0;
}

/* sdt:P:N alone: the part after a thread's last hit is not a step. */
static void cancel_each(struct probe_steps *ps, struct pthread *t)
{
	for (int pi = 0; pi < ps->npt; pi++) {
		const struct point *p = &ps->pt[pi];
		const struct probe_request *q = &ps->req[p->req];
		if (p->boundary == BOUND_EACH && t->state[p->req]) {
			if (ps->sink.cancel)
				ps->sink.cancel(ps->sink.ctx, t->pid, t->tid, q->phase ? q->name : NULL);
			t->state[p->req] = 0;
		}
	}
}

int probe_steps_drain(struct probe_steps *ps, int final)
{
	uint64_t cutoff = now_ns();
	size_t before = ps->nhits, k;
	int rc = 0;

	for (size_t i = 0; i < ps->nth; i++) {
		struct pthread *t = ps->th[i];
		if (!t->ring)
			continue;
		ps->draining = t;
		int n = perf_ring_drain(t->ring, on_hit, ps);
		if (n < 0 && n != -EPROTO)
			return n;
		if (t->exited == 2) {
			/* gone: its ring is empty now */
			ps->lost += perf_ring_lost(t->ring, -1);
			thread_close(t);
			t->exited = 1;
		}
	}
	size_t drained = ps->nhits - before;
	/* Hits up to the drain's start are all in the rings (a uprobe writes
	 * its sample before the thread goes on): later ones may still be
	 * missing from other threads' rings, so they wait for the next drain. */
	if (ps->nhits > 1)
		qsort(ps->hits, ps->nhits, sizeof(*ps->hits), hit_cmp);
	for (k = 0; k < ps->nhits && !rc; k++) {
		if (!final && ps->hits[k].time > cutoff)
			break;
		rc = apply(ps, &ps->hits[k]);
	}
	if (k && k < ps->nhits)
		memmove(ps->hits, ps->hits + k, (ps->nhits - k) * sizeof(*ps->hits));
	ps->nhits -= k;
	if (rc)
		return rc;
	/* forget the threads that are gone once their hits are applied */
	for (size_t i = 0; !final && i < ps->nth;) {
		struct pthread *t = ps->th[i];
		int pending = 0;
		for (size_t j = 0; j < ps->nhits && !pending; j++)
			pending = ps->hits[j].t == t;
		if (t->exited && !t->ring && !pending) {
			cancel_each(ps, t);
			free(t->fds);
			free(t);
			ps->th[i] = ps->th[--ps->nth];
			continue;
		}
		i++;
	}
	return (int)drained;
}

/* ---- the end ---- */

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

int probe_steps_store_row(sqlite3 *db, const struct probe_row *r, char *why, size_t whylen)
{
	sqlite3_stmt *st = NULL;
	int rc = 0;

	if (sqlite3_prepare_v2(db,
		"INSERT INTO probe (role, name, spec, boundary, point, sites, paths, hits, status, detail) "
		"VALUES (?,?,?,?,?,?,?,?,?,?)", -1, &st, NULL) != SQLITE_OK) {
		strbuf(why, whylen, "%s", sqlite3_errmsg(db));
		return -EIO;
	}
	bind_text_or_null(st, 1, r->role);
	bind_text_or_null(st, 2, r->name);
	bind_text_or_null(st, 3, r->spec);
	bind_text_or_null(st, 4, r->boundary);
	bind_text_or_null(st, 5, r->point);
	sqlite3_bind_int64(st, 6, r->sites);
	bind_text_or_null(st, 7, r->paths);
	sqlite3_bind_int64(st, 8, (sqlite3_int64)r->hits);
	bind_text_or_null(st, 9, r->status);
	bind_text_or_null(st, 10, r->detail);
	if (sqlite3_step(st) != SQLITE_DONE) {
		strbuf(why, whylen, "%s", sqlite3_errmsg(db));
		rc = sqlite3_errcode(db) == SQLITE_FULL ? -ENOSPC : -EIO;
	}
	sqlite3_finalize(st);
	return rc;
}

int probe_steps_finish(struct probe_steps *ps, sqlite3 *db, char *why, size_t whylen)
{
	int rc = 0;

	for (size_t i = 0; i < ps->nth; i++)
		cancel_each(ps, ps->th[i]);
	if (!ps->closed)
		probe_steps_close(ps);
	for (int pi = 0; pi < ps->npt && !rc; pi++) {
		const struct point *p = &ps->pt[pi];
		const struct probe_request *q = &ps->req[p->req];
		char text[PROBE_OBJECT_MAX + 64], *paths = NULL;
		size_t plen = 0;
		static const char *const bnames[] = { "begin", "end", "each" };

		point_text(p, text, sizeof(text));
		for (size_t s = 0; s < p->nsites; s++) {
			int dup = 0;
			for (size_t k = 0; k < s && !dup; k++)
				dup = strcmp(p->sites[k].path, p->sites[s].path) == 0;
			if (dup)
				continue;
			size_t add = strlen(p->sites[s].path) + 2;
			char *np = realloc(paths, plen + add);
			if (!np)
				break;
			paths = np;
			plen += (size_t)sprintf(paths + plen, "%s%s", plen ? "\n" : "", p->sites[s].path);
		}
		struct probe_row row = {
			.role = q->phase ? "phase" : "step",
			.name = q->phase ? q->name : NULL,
			.spec = q->text,
			.boundary = bnames[p->boundary],
			.point = text,
			.sites = (long long)p->nsites,
			.paths = paths,
			.hits = p->hits,
			.status = !p->nsites ? "not_found" : p->failed ? "failed" : "placed",
			.detail = p->detail[0] ? p->detail : NULL,
		};
		rc = probe_steps_store_row(db, &row, why, whylen);
		free(paths);
	}
	size_t len = strlen(ps->note);
	if (ps->lost)
		snprintf(ps->note + len, sizeof(ps->note) - len,
			 "%s%llu probe hits were lost (a thread's uprobe ring was full): steps and "
			 "phases around them may be missing or merged", len ? "; " : "", ps->lost);
	return rc;
}
