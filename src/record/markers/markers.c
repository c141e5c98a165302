#include "markers_impl.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct markers *markers_new(const struct counters *cs, const struct markers_sink *sink)
{
	struct markers *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->cs = cs;
	m->sink = *sink;
	m->max_procs = MARKERS_MAX_PROCS;
	m->max_threads = MARKERS_MAX_THREADS;
	m->cap_threads = 64;
	m->threads = calloc(m->cap_threads, sizeof(*m->threads));
	if (!m->threads) {
		free(m);
		return NULL;
	}
	return m;
}

void markers_free(struct markers *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap_threads; i++)
		free(m->threads[i].stack);
	free(m->threads);
	free(m->procs);
	idmap_fini(&m->proc_idx);
	free(m->losses);
	idmap_fini(&m->loss_idx);
	free(m);
}

uint64_t markers_steps(const struct markers *m)
{
	return (uint64_t)m->next_step;
}

size_t markers_thread_slots(const struct markers *m)
{
	return m->cap_threads;
}

uint64_t markers_anomalies(const struct markers *m)
{
	return m->anomalies;
}

int markers_anomaly(struct markers *m, const struct mring_record *r, const char *kind,
		    int64_t step, const char *fmt, ...)
{
	char detail[512];
	va_list ap;
	struct anomaly_row row = {
		.time_ns = r ? r->time_ns : 0,
		.pid = r ? r->pid : 0,
		.tid = r ? r->tid : 0,
		.kind = kind,
		.step = step,
		.detail = detail,
	};

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	m->anomalies++;
	return m->sink.anomaly ? m->sink.anomaly(m->sink.ctx, &row) : 0;
}

void markers_set_limits(struct markers *m, size_t max_procs, size_t max_threads)
{
	m->max_procs = max_procs ? max_procs : 1;
	m->max_threads = max_threads ? max_threads : 1;
}


/* Close the innermost phase of @t (its row is out). A thread back at no
 * phase keeps a stack of two at most: forged threads that each nested deep
 * once must not keep that much. */
static void pop(struct markers *m, struct thread *t)
{
	t->depth--;
	m->open_phases--;
	if (t->depth == 0 && t->cap > 2) {
		free(t->stack);
		t->stack = NULL;
		t->cap = 0;
	}
}

static uint64_t loss_key(int32_t pid, int32_t tid)
{
	return (uint64_t)(uint32_t)pid << 32 | (uint32_t)tid;
}

/* What thread @tid of @pid lost: one entry per thread, up to max_threads
 * of them; the losses of threads beyond that are summed in loss_other
 * (forged ids must not grow the recorder). NULL on -ENOMEM. */
static struct loss *loss_get(struct markers *m, int32_t pid, int32_t tid, uint64_t time_ns)
{
	struct loss *l;
	int i;

	/* one burst tells of itself many times in a row: the last one first */
	if (m->last_loss < m->nlosses && m->losses[m->last_loss].pid == pid && m->losses[m->last_loss].tid == tid)
		return &m->losses[m->last_loss];
	i = idmap_get(&m->loss_idx, loss_key(pid, tid));
	if (i >= 0)
		return &m->losses[m->last_loss = (size_t)i];
	if (m->nlosses >= m->max_threads) {
		l = &m->loss_other;
		if (!l->bursts && !l->explained)
			l->first_ns = time_ns;
		return l;
	}
	if (array_grow(&m->losses, &m->cap_losses, m->nlosses + 1, sizeof(*m->losses)) ||
	    idmap_put(&m->loss_idx, loss_key(pid, tid), (int)m->nlosses))
		return NULL;
	l = &m->losses[m->last_loss = m->nlosses++];
	memset(l, 0, sizeof(*l));
	l->pid = pid;
	l->tid = tid;
	l->first_ns = time_ns;
	return l;
}

/* Count an unmatched boundary of thread @tid of @pid as explained by its
 * loss, not misuse. */
static int explained(struct markers *m, int32_t pid, int32_t tid, uint64_t time_ns)
{
	struct loss *l = loss_get(m, pid, tid, time_ns);
	if (!l)
		return -ENOMEM;
	l->explained++;
	return 0;
}

/*
 * Thread @r->tid of @r->pid dropped @n records of @kinds (MRING_F_LOST_*)
 * right before @r (the ring was full), or left a hole. What was dropped is
 * unknown, so the thread's pairing is not trusted across the gap:
 *  - a lost phase record: every phase the thread has open is kept as
 *    incomplete now (its end may be among the lost, and an end seen later
 *    may belong to a later occurrence), and the thread owes up to
 *    depth + n unmatched phase ends (the ends of those phases, and of
 *    phases whose begin was lost), at most MAX_DEPTH since no more can be
 *    open at once. Until that debt is paid, an unmatched phase end (or a
 *    phase model outside a phase) is counted as explained, not misuse.
 *  - a lost step record: the process's open step is kept as incomplete
 *    (step_broken_by_loss: its duration and counts are unknown), and one
 *    step end without a begin is explained (a process has one step open
 *    at a time), until the next step begins.
 * Boundaries begun after the gap pair as usual, so misuse after it (a
 * step begun while one begun after the gap is open, a phase ending over
 * phases begun after the gap) is still reported.
 */
static int on_loss(struct markers *m, const struct mring_record *r, unsigned kinds, uint64_t n)
{
	struct loss *l = loss_get(m, r->pid, r->tid, r->time_ns);
	int err;

	if (!l)
		return -ENOMEM;
	l->bursts++;
	l->records += n;
	if (kinds & MRING_F_LOST_PHASE) {
		struct thread *t = markers_thread_get(m, r->pid, r->tid, &err);
		if (!t)
			return err ? err : markers_refuse(m, REFUSED_THREAD);
		uint64_t debt = (uint64_t)t->debt + (uint64_t)t->depth + n;
		t->debt = debt < MAX_DEPTH ? (int)debt : MAX_DEPTH;
		while (t->depth > 0) {
			err = markers_emit_phase(m, t, t->depth - 1, NULL);
			if (err)
				return err;
			pop(m, t);
			l->phases++;
		}
	}
	if ((kinds & MRING_F_LOST_STEP) && !m->probe_steps) {
		struct proc *p = markers_proc_get(m, r->pid, &err);
		if (!p)
			return err ? err : markers_refuse(m, REFUSED_PROC);
		p->debt = 1;
		p->debt_tid = r->tid;
		if (p->open) {
			err = markers_anomaly(m, r, "step_broken_by_loss", p->step,
				      "step %lld was open when thread %d dropped marker records (the marker ring "
				      "was full); kept as incomplete: its end and counts are unknown",
				      (long long)p->step, (int)r->tid);
			if (!err)
				err = markers_emit_step(m, p, NULL);
			if (err)
				return err;
			l->steps++;
		}
	}
	return 0;
}

static int on_step_begin(struct markers *m, const struct mring_record *r)
{
	int err;
	struct proc *p = markers_proc_get(m, r->pid, &err);

	if (!p)
		return err ? err : markers_refuse(m, REFUSED_PROC);
	if (p->open) {
		err = markers_anomaly(m, r, "step_begin_while_open", p->step,
			      "step %lld was still open when a new step began; it is kept as incomplete",
			      (long long)p->step);
		if (err)
			return err;
		err = markers_emit_step(m, p, NULL);
		if (err)
			return err;
	}
	p->debt = 0; /* a step begins: no step of before the gap is open any more */
	p->open = 1;
	p->step = m->next_step++;
	p->tid = r->tid;
	p->begin_ns = r->time_ns;
	p->has_model = 0;
	p->flops = p->bytes = 0;
	p->implausible = 0;
	p->probe = m->timed;
	counters_reading_from_record(&p->begin, r);
	return 0;
}

/* Attached to a running process, the markers start wherever its threads
 * are: the end of a step or phase begun before (or its model declared
 * after the begin) has nothing to pair with, and is no misuse. Counted,
 * and the recording says how many (markers_before_attach()). */
static int before_attach(struct markers *m)
{
	m->before_attach++;
	return 0;
}

static int on_step_end(struct markers *m, const struct mring_record *r)
{
	struct proc *p = markers_proc_find(m, r->pid);

	if (p && !p->open && p->debt) {
		p->debt = 0;
		return explained(m, r->pid, p->debt_tid, r->time_ns);
	}
	if ((!p || !p->open) && m->attached)
		return before_attach(m);
	if (!p || !p->open)
		return markers_anomaly(m, r, "step_end_without_begin", -1,
			       "mfu_step_end() with no open step in process %d; ignored", (int)r->pid);
	return markers_emit_step(m, p, r);
}

static int on_step_model(struct markers *m, const struct mring_record *r)
{
	struct proc *p = markers_proc_find(m, r->pid);
	int bad;

	if (p && !p->open && p->debt)
		return explained(m, r->pid, p->debt_tid, r->time_ns);
	if ((!p || !p->open) && m->attached)
		return before_attach(m);
	if (!p || !p->open)
		return markers_anomaly(m, r, "model_outside_step", -1,
			       "mfu_step_model(%g, %g) with no open step; ignored", r->a, r->b);
	bad = markers_check_model(m, r, p->step);
	if (bad)
		return bad < 0 ? bad : 0;
	markers_add_model(&p->has_model, &p->flops, &p->bytes, r);
	return markers_check_plausible(m, r, &p->implausible, p->flops, p->bytes, p->step, "step");
}

static int push_phase(struct markers *m, struct thread *t, const struct mring_record *r,
		      const char *name)
{
	const struct proc *p = markers_proc_find(m, r->pid);
	int64_t step = p && p->open ? p->step : -1;

	if (t->depth >= MAX_DEPTH)
		return markers_anomaly(m, r, "phase_too_deep", step,
			       "phase '%s' would nest deeper than %d; ignored", name, MAX_DEPTH);
	/* each thread may nest 64 deep, but not all of them at once: the
	 * open phases of all threads together are capped too */
	if (m->open_phases >= markers_max_open_phases(m))
		return markers_refuse(m, REFUSED_THREAD);
	/* most threads nest a level or two: start small (a target's forged
	 * thread ids each cost this much, up to --max-threads of them) */
	if (!t->cap) {
		t->stack = malloc(sizeof(*t->stack));
		if (!t->stack)
			return -ENOMEM;
		t->cap = 1;
	}
	if (array_grow(&t->stack, &t->cap, (size_t)t->depth + 1, sizeof(*t->stack)))
		return -ENOMEM;
	struct open_phase *op = &t->stack[t->depth++];
	m->open_phases++;
	op->id = m->next_phase++;
	op->step = step;
	strbuf(op->name, sizeof(op->name), "%s", name);
	op->begin_ns = r->time_ns;
	op->has_model = 0;
	op->flops = op->bytes = 0;
	op->implausible = 0;
	op->probe = m->timed;
	counters_reading_from_record(&op->begin, r);
	return 0;
}

static int on_phase_begin(struct markers *m, const struct mring_record *r)
{
	const char *name = (r->flags & MRING_F_NULL_NAME) ? "(null)" : r->name;
	int err;
	struct thread *t = markers_thread_get(m, r->pid, r->tid, &err);

	if (!t)
		return err ? err : markers_refuse(m, REFUSED_THREAD);
	if (r->flags & MRING_F_NULL_NAME)
		err = markers_anomaly(m, r, "phase_null_name", -1, "mfu_phase_begin(NULL): recorded as '(null)'");
	else if (r->flags & MRING_F_NAME_TRUNCATED)
		err = markers_anomaly(m, r, "name_truncated", -1,
			      "phase name longer than %d bytes, kept as '%s'", MRING_NAME_MAX - 1, r->name);
	return err ? err : push_phase(m, t, r, name);
}

static int on_phase_end(struct markers *m, const struct mring_record *r)
{
	struct thread *t = markers_thread_find(m, r->pid, r->tid);
	int idx, err;

	if (t && t->depth == 0 && t->debt > 0) {
		t->debt--;
		return explained(m, r->pid, r->tid, r->time_ns);
	}
	if ((!t || t->depth == 0) && m->attached)
		return before_attach(m);
	if (!t || t->depth == 0)
		return markers_anomaly(m, r, "phase_end_without_begin", -1,
			       "mfu_phase_end('%s') with no open phase in thread %d; ignored",
			       (r->flags & MRING_F_NULL_NAME) ? "(null)" : r->name, (int)r->tid);
	if (r->flags & MRING_F_NULL_NAME) {
		idx = t->depth - 1;
	} else {
		for (idx = t->depth - 1; idx >= 0; idx--)
			if (strcmp(t->stack[idx].name, r->name) == 0)
				break;
		if (idx < 0 && t->debt > 0) {
			t->debt--;
			return explained(m, r->pid, r->tid, r->time_ns);
		}
		if (idx < 0)
			return markers_anomaly(m, r, "phase_end_without_begin", t->stack[t->depth - 1].step,
				       "mfu_phase_end('%s') but the open phase is '%s'; ignored", r->name,
				       t->stack[t->depth - 1].name);
	}
	/* Phases opened inside the one being ended and never closed. */
	while (t->depth - 1 > idx) {
		struct open_phase *op = &t->stack[t->depth - 1];
		err = markers_anomaly(m, r, "phase_end_mismatch", op->step,
			      "phase '%s' was still open when its enclosing phase '%s' ended; "
			      "kept as incomplete", op->name, t->stack[idx].name);
		if (!err)
			err = markers_emit_phase(m, t, t->depth - 1, NULL);
		if (err)
			return err;
		pop(m, t);
	}
	err = markers_emit_phase(m, t, idx, r);
	pop(m, t);
	return err;
}

static int on_phase_model(struct markers *m, const struct mring_record *r)
{
	struct thread *t = markers_thread_find(m, r->pid, r->tid);
	int bad;

	if (t && t->depth == 0 && t->debt > 0)
		return explained(m, r->pid, r->tid, r->time_ns);
	if ((!t || t->depth == 0) && m->attached)
		return before_attach(m);
	if (!t || t->depth == 0)
		return markers_anomaly(m, r, "model_outside_phase", -1,
			       "mfu_phase_model(%g, %g) with no open phase in thread %d; ignored",
			       r->a, r->b, (int)r->tid);
	struct open_phase *op = &t->stack[t->depth - 1];
	bad = markers_check_model(m, r, op->step);
	if (bad)
		return bad < 0 ? bad : 0;
	markers_add_model(&op->has_model, &op->flops, &op->bytes, r);
	return markers_check_plausible(m, r, &op->implausible, op->flops, op->bytes, op->step, "phase");
}

void markers_set_attached(struct markers *m)
{
	m->attached = 1;
}

uint64_t markers_before_attach(const struct markers *m)
{
	return m ? m->before_attach : 0;
}

void markers_set_probe_steps(struct markers *m)
{
	m->probe_steps = 1;
}

uint64_t markers_ignored_step_markers(const struct markers *m)
{
	return m ? m->ignored_step_markers : 0;
}

int markers_feed_probe(struct markers *m, const struct mring_record *rec)
{
	m->probe = 1;
	int rc = markers_feed(m, rec);
	m->probe = 0;
	m->timed = 0;
	return rc;
}

static int feed(struct markers *m, const struct mring_record *r)
{
	/* The database's integers are signed: a time past 2^63 ns (292 years
	 * of uptime: no marker writes one) would turn negative there and
	 * break the order of begin and end that a CHECK insists on. */
	if (r->time_ns > INT64_MAX)
		return markers_anomaly(m, r, "bad_record", -1, "marker record of kind %u at time %llu ns, past 2^63 ns "
			       "(no marker writes that: a damaged or forged record); ignored", (unsigned)r->kind,
			       (unsigned long long)r->time_ns);
	if (r->time_ns > m->last_ns)
		m->last_ns = r->time_ns;
	m->timed = m->probe || (r->flags & MRING_F_UNREAD);
	if (r->flags & MRING_F_AFTER_LOSS) {
		int err = on_loss(m, r, r->flags & (MRING_F_LOST_STEP | MRING_F_LOST_PHASE), r->lost ? r->lost : 1);
		if (err)
			return err;
	}
	if (m->probe_steps && !m->probe &&
	    (r->kind == MRING_STEP_BEGIN || r->kind == MRING_STEP_END || r->kind == MRING_STEP_MODEL)) {
		/* two step sources would interleave into nonsense: --step wins */
		m->ignored_step_markers++;
		return 0;
	}
	if (r->flags & MRING_F_NO_COUNTERS) {
		int err = markers_anomaly(m, r, "counter_read_failed", -1,
				  "the marker could not read the counter group (the target closed its fd?); "
				  "counts of the intervals that use this boundary are unknown");
		if (err)
			return err;
	}
	switch (r->kind) {
	case MRING_STEP_BEGIN: return on_step_begin(m, r);
	case MRING_STEP_END: return on_step_end(m, r);
	case MRING_STEP_MODEL: return on_step_model(m, r);
	case MRING_PHASE_BEGIN: return on_phase_begin(m, r);
	case MRING_PHASE_END: return on_phase_end(m, r);
	case MRING_PHASE_MODEL: return on_phase_model(m, r);
	case MRING_LOSS: return 0; /* told all it had to above */
	default:
		return markers_anomaly(m, r, "bad_record", -1, "unknown marker record kind %u; ignored",
			       (unsigned)r->kind);
	}
}

static void count_refused(struct capped *c, uint64_t time_ns)
{
	if (!c->records++)
		c->first_ns = time_ns;
}

/* Feed @r, a copy no other process can change. */
static int feed_copy(struct markers *m, struct mring_record *r)
{
	int err;

	/* its name surely ends inside it: a name without its NUL would make
	 * every string use run past the record */
	r->name[sizeof(r->name) - 1] = '\0';
	m->refused = 0;
	err = feed(m, r);
	m->fed++;
	if (m->refused & REFUSED_PROC)
		count_refused(&m->procs_capped, r->time_ns);
	if (m->refused & REFUSED_THREAD)
		count_refused(&m->threads_capped, r->time_ns);
	return err;
}

int markers_feed(struct markers *m, const struct mring_record *rec)
{
	/* The record may lie in memory the target writes, and change while it
	 * is read: work on a copy. */
	struct mring_record copy = *rec;

	return feed_copy(m, &copy);
}

int markers_ring_tampered(struct markers *m, const struct mring_consumer *c)
{
	struct mring_record when = { .time_ns = m->last_ns };
	return markers_anomaly(m, &when, "ring_tampered", -1, "%s: the recorder stopped reading the marker ring "
		       "there (after %llu records); the steps and phases before are kept, and what was open "
		       "then is kept as incomplete", c->why, (unsigned long long)c->tail);
}

int markers_drain(struct markers *m, struct mring_consumer *c, uint64_t max, uint64_t deadline_ns,
		  struct markers_drained *out)
{
	struct mring_record r;
	int rc;

	memset(out, 0, sizeof(*out));
	while (out->read < max) {
		/* the clock only now and then: a record costs about a
		 * microsecond, a clock read some 20 ns */
		if (deadline_ns != UINT64_MAX && out->read % MARKERS_DRAIN_CLOCK_EVERY == 0 && out->read &&
		    now_ns() >= deadline_ns) {
			out->yielded = 1;
			break;
		}
		rc = mring_consumer_read(c, &r);
		if (rc == 0)
			break;
		if (rc < 0) {
			out->tampered = 1;
			break;
		}
		out->read++;
		out->records += r.kind != MRING_LOSS; /* a thread's loss notice is no marker */
		/* r is the consumer's copy already: no other */
		if (m && (out->err = feed_copy(m, &r)))
			break;
	}
	return out->err;
}

void markers_cancel(struct markers *m, int32_t pid, int32_t tid, const char *name)
{
	if (!name) {
		struct proc *p = markers_proc_find(m, pid);
		if (!p || !p->open || p->tid != tid)
			return;
		p->open = 0;
		if (p->step == m->next_step - 1)
			m->next_step--; /* no gap in the step numbers */
		return;
	}
	struct thread *t = markers_thread_find(m, pid, tid);
	if (!t || t->depth == 0 || strcmp(t->stack[t->depth - 1].name, name) != 0)
		return;
	if (t->stack[t->depth - 1].id == m->next_phase - 1)
		m->next_phase--;
	pop(m, t);
}

int markers_lost_hole(struct markers *m, int32_t pid, int32_t tid)
{
	if (pid == 0) {
		m->unowned_holes++;
		return 0;
	}
	struct mring_record fake = { .pid = pid, .tid = tid, .time_ns = m->last_ns };
	return on_loss(m, &fake, MRING_F_LOST_STEP | MRING_F_LOST_PHASE, 1);
}

/* One records_lost row per thread that lost records, and one for the holes
 * of writers that died before naming themselves. */
static int report_losses(struct markers *m)
{
	int err;

	for (size_t i = 0; i < m->nlosses; i++) {
		struct loss *l = &m->losses[i];
		struct mring_record fake = { .pid = l->pid, .tid = l->tid, .time_ns = l->first_ns };
		err = markers_anomaly(m, &fake, "records_lost", -1,
			      "thread %d of process %d dropped %llu marker record%s (the marker ring was full; "
			      "mfu-record --ring-records raises it) in %llu burst%s; kept as incomplete across "
			      "them: %llu step%s, %llu phase%s; %llu unmatched boundar%s after them explained "
			      "by the loss, not misuse",
			      (int)l->tid, (int)l->pid, (unsigned long long)l->records, l->records == 1 ? "" : "s",
			      (unsigned long long)l->bursts, l->bursts == 1 ? "" : "s",
			      (unsigned long long)l->steps, l->steps == 1 ? "" : "s",
			      (unsigned long long)l->phases, l->phases == 1 ? "" : "s",
			      (unsigned long long)l->explained, l->explained == 1 ? "y" : "ies");
		if (err)
			return err;
	}
	if (m->loss_other.bursts || m->loss_other.explained) {
		struct loss *l = &m->loss_other;
		struct mring_record fake = { .time_ns = l->first_ns };
		err = markers_anomaly(m, &fake, "records_lost", -1,
			      "threads beyond the %zu listed (--max-threads) dropped %llu marker records in %llu "
			      "bursts; kept as incomplete across them: %llu steps, %llu phases; %llu unmatched "
			      "boundaries after them explained by the loss, not misuse", m->max_threads,
			      (unsigned long long)l->records, (unsigned long long)l->bursts,
			      (unsigned long long)l->steps, (unsigned long long)l->phases,
			      (unsigned long long)l->explained);
		if (err)
			return err;
	}
	if (m->unowned_holes) {
		struct mring_record fake = { .time_ns = m->last_ns };
		err = markers_anomaly(m, &fake, "records_lost", -1,
			      "%llu marker record%s claimed by a writer that died before writing it (killed "
			      "inside a marker); which thread's is unknown",
			      (unsigned long long)m->unowned_holes, m->unowned_holes == 1 ? " was" : "s were");
		if (err)
			return err;
	}
	return 0;
}

int markers_limits_note(const struct markers *m, int threads, char *buf, size_t len)
{
	const struct capped *c = threads ? &m->threads_capped : &m->procs_capped;

	if (!c->records)
		return 0;
	if (threads)
		strbuf(buf, len, "%llu marker records were dropped because %zu threads already had phases open "
		       "or a loss to explain, or %zu phases were open at once (mfu-record --max-threads %zu): "
		       "the phases of further threads are missing; raise --max-threads if the program really "
		       "runs that many at once", (unsigned long long)c->records, m->max_threads,
		       markers_max_open_phases(m), m->max_threads);
	else
		strbuf(buf, len, "%llu marker records were dropped because %zu processes already had a step "
		       "open or a loss to explain (mfu-record --max-procs %zu): the steps of further "
		       "processes are missing; raise --max-procs if the program really runs that many at once",
		       (unsigned long long)c->records, m->max_procs, m->max_procs);
	return 1;
}

/* The records the threads told of losing (their notices, and holes). */
static uint64_t losses_told(const struct markers *m)
{
	uint64_t n = m->loss_other.records + m->unowned_holes;

	for (size_t i = 0; i < m->nlosses; i++)
		n += m->losses[i].records;
	return n;
}

void markers_set_detached(struct markers *m)
{
	m->detached = 1;
}

int markers_finish(struct markers *m, uint64_t ring_lost)
{
	char note[512];
	uint64_t told = losses_told(m);
	uint64_t untold = ring_lost > told ? ring_lost - told : 0;
	int err = report_losses(m);

	for (int k = 0; !err && k < 2; k++) {
		if (markers_limits_note(m, k, note, sizeof(note))) {
			struct mring_record fake = { .time_ns = k ? m->threads_capped.first_ns : m->procs_capped.first_ns };
			err = markers_anomaly(m, &fake, k ? "too_many_threads" : "too_many_processes", -1, "%s", note);
		}
	}
	if (err)
		return err;

	for (size_t i = 0; i < m->cap_threads; i++) {
		struct thread *t = &m->threads[i];
		while (t->tid && t->depth > 0) {
			struct open_phase *op = &t->stack[t->depth - 1];
			struct mring_record fake = { .pid = t->pid, .tid = t->tid, .time_ns = op->begin_ns };
			if (untold)
				err = markers_anomaly(m, &fake, "phase_broken_by_loss", op->step,
					      "phase '%s' was never ended: %llu marker records were lost that no thread "
					      "told of (one that exited right after losing them), its end may be among "
					      "them; kept as incomplete", op->name, (unsigned long long)untold);
			else if (!m->detached)
				err = markers_anomaly(m, &fake, "phase_open_at_exit", op->step,
					      "phase '%s' was never ended; kept as incomplete", op->name);
			if (!err)
				err = markers_emit_phase(m, t, t->depth - 1, NULL);
			if (err)
				return err;
			pop(m, t);
		}
	}
	for (size_t i = 0; i < m->nprocs; i++) {
		struct proc *p = &m->procs[i];
		if (!p->open)
			continue;
		struct mring_record fake = { .pid = p->pid, .tid = p->tid, .time_ns = p->begin_ns };
		if (untold)
			err = markers_anomaly(m, &fake, "step_broken_by_loss", p->step,
				      "step %lld was never ended: %llu marker records were lost that no thread told "
				      "of (one that exited right after losing them), its end may be among them; kept "
				      "as incomplete", (long long)p->step, (unsigned long long)untold);
		else if (!m->detached)
			err = markers_anomaly(m, &fake, "step_open_at_exit", p->step,
				      "step %lld was never ended; kept as incomplete", (long long)p->step);
		if (!err)
			err = markers_emit_step(m, p, NULL);
		if (err)
			return err;
	}
	return 0;
}
