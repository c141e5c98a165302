/* A closed step or phase to a row (markers_impl.h): counter deltas, model
 * FLOPs and bytes, the checks of what the program declared. */
#include "markers_impl.h"

static void fill_delta(struct markers *m, const struct counter_reading *a,
		       const struct mring_record *r, struct counter_delta *d)
{
	struct counter_reading b;
	counters_reading_from_record(&b, r);
	counters_delta(m->cs, a, &b, d);
}

/* A NAN declares nothing (unknown), any other value must be finite and >= 0. */
static int model_value_ok(double v)
{
	return isnan(v) || (isfinite(v) && v >= 0);
}

/* 0 if the model values are usable, 1 if not (anomaly recorded), < 0 on error. */
int markers_check_model(struct markers *m, const struct mring_record *r, int64_t step)
{
	int err;

	if (model_value_ok(r->a) && model_value_ok(r->b))
		return 0;
	err = markers_anomaly(m, r, "bad_model_value", step,
		      "model FLOPs %g and bytes %g: each must be finite and >= 0 (or NAN: unknown); "
		      "ignored", r->a, r->b);
	return err ? err : 1;
}

/* Add a declaration to a step's or phase's model values: a NAN part is left
 * out, so "flops only" keeps the bytes unknown (NULL), never 0. */
void markers_add_model(int *has, double *flops, double *bytes, const struct mring_record *r)
{
	if (!isnan(r->a)) {
		*has |= MODEL_FLOPS;
		*flops += r->a;
	}
	if (!isnan(r->b)) {
		*has |= MODEL_BYTES;
		*bytes += r->b;
	}
}

/* A declared total above MODEL_IMPLAUSIBLE is kept as declared but cannot
 * be a step's or phase's work on any machine: one anomaly per interval,
 * so that the report can say its MFU is impossible rather than print it. */
int markers_check_plausible(struct markers *m, const struct mring_record *r, int *flagged, double flops,
			    double bytes, int64_t step, const char *what)
{
	if (*flagged || !(flops > MODEL_IMPLAUSIBLE || bytes > MODEL_IMPLAUSIBLE))
		return 0;
	*flagged = 1;
	return markers_anomaly(m, r, "implausible_model", step,
		       "the %s's declared model FLOPs %g and bytes %g: above %g, no machine does that much "
		       "in one %s; kept as declared, so its MFU and MBU are impossible", what, flops, bytes,
		       MODEL_IMPLAUSIBLE, what);
}

/* Boundaries of one interval from two sources (the marker ring and probe
 * hits) are drained at different times; an end that comes before its
 * begin must never become a negative duration: the interval is kept as
 * incomplete (no end, no counts) and the anomaly says why. */
static int check_order(struct markers *m, const struct mring_record **end, uint64_t begin_ns, int64_t step,
		       const char *what)
{
	int err;

	if (!*end || (*end)->time_ns >= begin_ns)
		return 0;
	err = markers_anomaly(m, *end, "end_before_begin", step,
		      "%s ended %llu ns before it began (boundaries from two sources, the markers and "
		      "probes, out of order); kept as incomplete", what,
		      (unsigned long long)(begin_ns - (*end)->time_ns));
	*end = NULL;
	return err;
}

int markers_emit_step(struct markers *m, struct proc *p, const struct mring_record *end)
{
	int err = check_order(m, &end, p->begin_ns, p->step, "a step");

	if (err)
		return err;
	struct interval_row row = {
		.id = p->step,
		.step = p->step,
		.parent = -1,
		.pid = p->pid,
		.tid = p->tid,
		.end_tid = end ? end->tid : 0,
		.begin_ns = p->begin_ns,
		.end_ns = end ? end->time_ns : 0,
		.complete = end != NULL,
		.has_model = p->has_model,
		.model_flops = p->flops,
		.model_bytes = p->bytes,
		.interpolated = p->probe || (end && m->timed),
	};
	if (end) {
		fill_delta(m, &p->begin, end, &row.d);
		if (row.d.has_lib) {
			row.lib_snap_begin = p->begin.lib_snap;
			row.lib_snap_end = end->lib_snap;
		}
	}
	p->open = 0;
	return m->sink.step ? m->sink.step(m->sink.ctx, &row) : 0;
}

int markers_emit_phase(struct markers *m, struct thread *t, int idx, const struct mring_record *end)
{
	struct open_phase *op = &t->stack[idx];
	int err = check_order(m, &end, op->begin_ns, op->step, "a phase");

	if (err)
		return err;
	struct interval_row row = {
		.id = op->id,
		.step = op->step,
		.parent = idx > 0 ? t->stack[idx - 1].id : -1,
		.depth = idx,
		.name = op->name,
		.pid = t->pid,
		.tid = t->tid,
		.end_tid = t->tid,
		.begin_ns = op->begin_ns,
		.end_ns = end ? end->time_ns : 0,
		.complete = end != NULL,
		.has_model = op->has_model,
		.model_flops = op->flops,
		.model_bytes = op->bytes,
		.interpolated = op->probe || (end && m->timed),
	};
	if (end)
		fill_delta(m, &op->begin, end, &row.d);
	return m->sink.phase ? m->sink.phase(m->sink.ctx, &row) : 0;
}
