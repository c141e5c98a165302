#include "dram.h"
#include "uncore.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct dram {
	struct uncore_set set;
	struct uncore_reading first, cur;
	uint64_t interval_ns, last_ns;
	sqlite3_stmt *ins;
};

int dram_open(struct dram **out, const char *sysfs, uint64_t interval_ns, char *why, size_t whylen)
{
	struct dram *d = calloc(1, sizeof(*d)); /* large: uncore sets hold 256 events */
	int rc;

	*out = NULL;
	if (!d)
		return -ENOMEM;
	d->interval_ns = interval_ns;
	rc = uncore_discover(sysfs, &d->set);
	if (rc) {
		strbuf(why, whylen, "cannot read %s: %s", sysfs, strerror(-rc));
		goto fail;
	}
	if (d->set.n == 0) {
		strbuf(why, whylen, "%s", d->set.missing[0] ? d->set.missing
			: "no memory-controller PMU: DRAM bytes and bandwidth utilization are unknown");
		rc = -ENODEV;
		goto fail;
	}
	rc = uncore_open(&d->set, why, whylen);
	if (rc)
		goto fail;
	rc = uncore_read(&d->set, &d->first);
	if (rc) {
		strbuf(why, whylen, "cannot read the memory-controller counters: %s", strerror(-rc));
		goto fail;
	}
	*out = d;
	return 0;
fail:
	dram_close(d);
	return rc;
}

void dram_close(struct dram *d)
{
	if (!d)
		return;
	sqlite3_finalize(d->ins);
	uncore_close(&d->set);
	free(d);
}

int dram_sample(struct dram *d, sqlite3 *db, uint64_t now_ns, int force)
{
	struct uncore_delta delta;
	int rc;

	if (!force && now_ns - d->last_ns < d->interval_ns)
		return 0;
	d->last_ns = now_ns;
	if (!d->ins && sqlite3_prepare_v3(db, "INSERT INTO uncore_sample (time_ns, socket, read_bytes, write_bytes, "
				      "total_bytes) VALUES (?,?,?,?,?)", -1, SQLITE_PREPARE_PERSISTENT,
				      &d->ins, NULL) != SQLITE_OK)
		return -EIO;
	rc = uncore_read(&d->set, &d->cur);
	if (rc == 0)
		rc = uncore_delta(&d->set, &d->first, &d->cur, &delta);
	if (rc)
		return 0; /* a failed reading leaves a gap; interpolation bridges it */
	for (int s = 0; s < delta.nsockets; s++) {
		sqlite3_bind_int64(d->ins, 1, (sqlite3_int64)d->cur.t_ns);
		sqlite3_bind_int(d->ins, 2, s);
		if (d->set.split) {
			sqlite3_bind_double(d->ins, 3, delta.socket_read[s]);
			sqlite3_bind_double(d->ins, 4, delta.socket_write[s]);
		} else {
			sqlite3_bind_null(d->ins, 3);
			sqlite3_bind_null(d->ins, 4);
		}
		sqlite3_bind_double(d->ins, 5, delta.socket_total[s]);
		rc = sqlite3_step(d->ins);
		sqlite3_reset(d->ins);
		if (rc != SQLITE_DONE)
			return sqlite3_errcode(db) == SQLITE_FULL ? -ENOSPC : -EIO;
	}
	return 0;
}

double dram_interp(const uint64_t *t, const double *cum, size_t n, uint64_t x, size_t *hint)
{
	size_t i = hint ? *hint : 0;

	if (n < 2 || x < t[0] || x > t[n - 1])
		return NAN;
	if (i >= n - 1 || t[i] > x)
		i = 0;
	while (i + 1 < n - 1 && t[i + 1] <= x)
		i++;
	if (hint)
		*hint = i;
	return interp_linear(t[i], cum[i], t[i + 1], cum[i + 1], x);
}

struct curve {
	uint64_t *t;
	double *rd, *wr, *tot;
	size_t n;
	int split;
};

static int load_curve(sqlite3 *db, struct curve *c)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	c->split = 1;
	if (sqlite3_prepare_v2(db, "SELECT time_ns, sum(read_bytes), sum(write_bytes), sum(total_bytes), "
			       "count(read_bytes) = count(*) FROM uncore_sample GROUP BY time_ns ORDER BY time_ns",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while (sqlite3_step(st) == SQLITE_ROW) {
		/* four columns of one length: each grows from the same capacity */
		size_t ct = cap, crd = cap, cwr = cap, ctot = cap;
		if (array_grow(&c->t, &ct, c->n + 1, sizeof(*c->t)) || array_grow(&c->rd, &crd, c->n + 1, sizeof(*c->rd)) ||
		    array_grow(&c->wr, &cwr, c->n + 1, sizeof(*c->wr)) ||
		    array_grow(&c->tot, &ctot, c->n + 1, sizeof(*c->tot))) {
			rc = -ENOMEM;
			break;
		}
		cap = ct;
		c->t[c->n] = (uint64_t)sqlite3_column_int64(st, 0);
		c->rd[c->n] = sqlite3_column_double(st, 1);
		c->wr[c->n] = sqlite3_column_double(st, 2);
		c->tot[c->n] = sqlite3_column_double(st, 3);
		c->split &= sqlite3_column_int(st, 4);
		c->n++;
	}
	sqlite3_finalize(st);
	return rc;
}

static int attribute_table(sqlite3 *db, const struct curve *c, const char *table, const char *key)
{
	char sql[256];
	sqlite3_stmt *sel = NULL, *upd = NULL;
	size_t h0 = 0, h1 = 0;
	int rc = 0;

	strbuf(sql, sizeof(sql), "SELECT %s, begin_ns, end_ns FROM %s WHERE complete = 1 ORDER BY begin_ns", key, table);
	if (sqlite3_prepare_v2(db, sql, -1, &sel, NULL) != SQLITE_OK)
		return -EIO;
	strbuf(sql, sizeof(sql), "UPDATE %s SET dram_read_bytes = ?, dram_write_bytes = ?, dram_bytes = ? WHERE %s = ?",
	       table, key);
	if (sqlite3_prepare_v2(db, sql, -1, &upd, NULL) != SQLITE_OK) {
		sqlite3_finalize(sel);
		return -EIO;
	}
	while (!rc && sqlite3_step(sel) == SQLITE_ROW) {
		uint64_t b = (uint64_t)sqlite3_column_int64(sel, 1), e = (uint64_t)sqlite3_column_int64(sel, 2);
		size_t hb = h0, he = h1;
		double tot = dram_interp(c->t, c->tot, c->n, e, &he) - dram_interp(c->t, c->tot, c->n, b, &hb);
		if (isnan(tot))
			continue; /* outside the sampled span: unknown */
		if (c->split) {
			size_t x = hb, y = he;
			double rd = dram_interp(c->t, c->rd, c->n, e, &y) - dram_interp(c->t, c->rd, c->n, b, &x);
			x = hb;
			y = he;
			double wr = dram_interp(c->t, c->wr, c->n, e, &y) - dram_interp(c->t, c->wr, c->n, b, &x);
			sqlite3_bind_double(upd, 1, rd);
			sqlite3_bind_double(upd, 2, wr);
		} else {
			sqlite3_bind_null(upd, 1);
			sqlite3_bind_null(upd, 2);
		}
		sqlite3_bind_double(upd, 3, tot);
		sqlite3_bind_int64(upd, 4, sqlite3_column_int64(sel, 0));
		if (sqlite3_step(upd) != SQLITE_DONE)
			rc = sqlite3_errcode(db) == SQLITE_FULL ? -ENOSPC : -EIO;
		sqlite3_reset(upd);
		h0 = hb;
		h1 = he;
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(upd);
	return rc;
}

int dram_attribute(sqlite3 *db, char *why, size_t whylen)
{
	struct curve c;
	int rc = load_curve(db, &c);

	if (!rc && c.n >= 2)
		rc = attribute_table(db, &c, "step", "step");
	if (!rc && c.n >= 2)
		rc = attribute_table(db, &c, "phase", "id");
	if (rc)
		strbuf(why, whylen, "cannot attribute DRAM bytes: %s", rc == -ENOMEM ? "out of memory" : sqlite3_errmsg(db));
	free(c.t);
	free(c.rd);
	free(c.wr);
	free(c.tot);
	return rc;
}
