/* Counting the memory controllers (uncore_impl.h). */
#include "uncore_impl.h"

/* ---- counting --------------------------------------------------------- */

static void explain_denied(const struct uncore_set *set, char *why, size_t len)
{
	int level = perf_event_paranoid(set->paranoid_path);

	if (level == INT_MIN) {
		strbuf(why, len, "system-wide memory-controller counters need root (or CAP_PERFMON) or "
		       "perf_event_paranoid <= 0 (it could not be read): run as root or "
		       "sudo sysctl kernel.perf_event_paranoid=0");
	} else if (level <= 0) {
		strbuf(why, len, "system-wide memory-controller counters were refused although "
		       "perf_event_paranoid is %d (a security module or kernel lockdown?): run as root",
		       level);
	} else {
		strbuf(why, len, "system-wide memory-controller counters need root (or CAP_PERFMON) or "
		       "perf_event_paranoid <= 0 (it is %d): run as root or "
		       "sudo sysctl kernel.perf_event_paranoid=0", level);
	}
}

static int open_all(struct uncore_set *set, struct uncore_event **failed)
{
	for (int i = 0; i < set->n; i++) {
		struct uncore_event *ev = &set->ev[i];
		struct perf_event_attr attr = ev->attr;
		int group_fd = ev->leader == i ? -1 : set->ev[ev->leader].fd;
		int fd;

		attr.size = sizeof(attr);
		attr.disabled = 0;
		attr.inherit = 0;
		/* uncore PMUs refuse exclude_* bits (PERF_PMU_CAP_NO_EXCLUDE) */
		attr.exclude_user = attr.exclude_kernel = attr.exclude_hv = 0;
		attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
				   PERF_FORMAT_TOTAL_TIME_RUNNING;
		fd = perf_event_open_fd(&attr, -1, ev->cpu, group_fd);
		if (fd < 0) {
			*failed = ev;
			return fd;
		}
		ev->fd = fd;
	}
	return 0;
}

int uncore_open(struct uncore_set *set, char *why, size_t why_len)
{
	struct uncore_event *failed = NULL;
	char scratch[2];
	int err;

	if (!why) {
		why = scratch;
		why_len = sizeof(scratch);
	}
	if (why_len)
		why[0] = '\0';
	if (!set)
		return -EINVAL;
	if (set->open || set->n == 0)
		return 0;

	err = open_all(set, &failed);
	if (err == -EINVAL && failed && failed->leader != failed - set->ev) {
		/* a PMU that takes no groups: each event alone (twice the reads) */
		uncore_close(set);
		for (int i = 0; i < set->n; i++)
			set->ev[i].leader = i;
		err = open_all(set, &failed);
	}
	if (err) {
		if (err == -EACCES || err == -EPERM) {
			explain_denied(set, why, why_len);
			err = -EACCES;
		} else {
			strbuf(why, why_len, "cannot open %s/%s on CPU %d: %s%s", failed->pmu, failed->name,
			       failed->cpu, strerror(-err),
			       err == -EMFILE ? " (raise the open-file limit: ulimit -n)" :
			       err == -ENOENT || err == -ENODEV || err == -EOPNOTSUPP || err == -EINVAL ?
			       " (the PMU does not take this event)" : "");
		}
		uncore_close(set);
		return err;
	}
	set->open = 1;
	return 0;
}

int uncore_read(const struct uncore_set *set, struct uncore_reading *r)
{
	uint64_t t0, t1, buf[3 + GROUP_MAX];
	int err = 0;

	if (!set || !r)
		return -EINVAL;
	r->n = 0;
	t0 = now_ns();
	if (!set->open) {
		r->t_ns = t0;
		r->read_ns = 0;
		return 0;
	}
	for (int i = 0; i < set->n;) {
		int members = 1;
		ssize_t want, got;

		while (i + members < set->n && set->ev[i + members].leader == i)
			members++;
		if (members > GROUP_MAX)
			return -EIO;
		want = (ssize_t)((3 + (size_t)members) * sizeof(uint64_t));
		got = read(set->ev[i].fd, buf, sizeof(buf));
		if (got < 0) {
			err = -errno;
			goto out;
		}
		if (got != want || buf[0] != (uint64_t)members) {
			err = -EIO;
			goto out;
		}
		for (int k = 0; k < members; k++) {
			r->value[i + k] = buf[3 + k];
			r->enabled[i + k] = buf[1];
			r->running[i + k] = buf[2];
		}
		i += members;
	}
	r->n = set->n;
out:
	t1 = now_ns();
	r->t_ns = t0 + (t1 - t0) / 2;
	r->read_ns = t1 - t0;
	return err;
}

int uncore_delta(const struct uncore_set *set, const struct uncore_reading *a,
		 const struct uncore_reading *b, struct uncore_delta *d)
{
	struct uncore_delta tmp;

	if (!set || !a || !b || !d)
		return -EINVAL;
	if (set->n == 0)
		return -ENODEV;
	if (a->n != set->n || b->n != set->n)
		return -EINVAL;
	memset(&tmp, 0, sizeof(tmp));
	tmp.nsockets = set->nsockets;
	tmp.running_fraction = 1.0;
	for (int i = 0; i < set->n; i++) {
		const struct uncore_event *ev = &set->ev[i];
		uint64_t en = b->enabled[i] - a->enabled[i];
		uint64_t run = b->running[i] - a->running[i];
		double v = (double)(b->value[i] - a->value[i]);
		double ub = uncore_unit_bytes(ev->unit), bytes;

		if (ub <= 0 || !(ev->scale > 0) || ev->socket < 0 || ev->socket >= set->nsockets)
			return -EINVAL;
		if (en > 0) {
			if (run == 0)
				return -ENODATA; /* never counted: nothing can be said */
			if (run < en) {
				/* multiplexed: extrapolate, as perf stat does */
				v *= (double)en / (double)run;
				if ((double)run / (double)en < tmp.running_fraction)
					tmp.running_fraction = (double)run / (double)en;
			}
		}
		bytes = v * ev->scale * ub;
		tmp.socket_total[ev->socket] += bytes;
		tmp.total += bytes;
		if (ev->dir == UNCORE_DIR_READ) {
			tmp.socket_read[ev->socket] += bytes;
			tmp.read += bytes;
		} else if (ev->dir == UNCORE_DIR_WRITE) {
			tmp.socket_write[ev->socket] += bytes;
			tmp.write += bytes;
		}
	}
	if (!set->split) {
		tmp.read = tmp.write = NAN;
		for (int k = 0; k < tmp.nsockets; k++)
			tmp.socket_read[k] = tmp.socket_write[k] = NAN;
	}
	*d = tmp;
	return 0;
}

int uncore_bytes(const struct uncore_set *set, const struct uncore_reading *a,
		 const struct uncore_reading *b, double *read_bytes, double *write_bytes)
{
	struct uncore_delta d;
	int err;

	if (!read_bytes || !write_bytes)
		return -EINVAL;
	err = uncore_delta(set, a, b, &d);
	if (err)
		return err;
	if (!set->split)
		return -EOPNOTSUPP;
	*read_bytes = d.read;
	*write_bytes = d.write;
	return 0;
}

void uncore_close(struct uncore_set *set)
{
	if (!set)
		return;
	/* members before their leader: closing a leader first would detach
	 * the members into singleton groups for a moment */
	for (int i = set->n - 1; i >= 0; i--) {
		if (set->ev[i].fd >= 0) {
			close(set->ev[i].fd);
			set->ev[i].fd = -1;
		}
	}
	set->open = 0;
}

int uncore_describe(const struct uncore_set *set, char *buf, size_t len)
{
	char cpus[UNCORE_MAX_SOCKETS * 8] = "";
	size_t used = 0;

	if (!set || !buf)
		return -EINVAL;
	if (set->n == 0)
		return strbuf(buf, len, "none: %s", set->missing[0] ? set->missing : "no events");
	for (int k = 0; k < set->nsockets; k++) {
		int w = snprintf(cpus + used, sizeof(cpus) - used, "%s%d", k ? "," : "", set->socket_cpu[k]);
		if (w < 0 || (size_t)w >= sizeof(cpus) - used)
			break;
		used += (size_t)w;
	}
	return strbuf(buf, len, "%s: %d events on %d socket%s (CPUs %s), %s%s",
		      uncore_kind_name(set->kind), set->n, set->nsockets, set->nsockets == 1 ? "" : "s",
		      cpus, set->split ? "read/write" : "reads and writes together",
		      set->complete ? "" : ", incomplete (some PMUs skipped)");
}
