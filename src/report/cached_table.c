/* The frame of a cached eponymous virtual table: see cached_table.h. */
#include "cached_table.h"

#include <string.h>

void cached_result_unref(struct cached_result *r)
{
	if (r && --r->refs == 0)
		r->destroy(r);
}

int cached_table_connect(sqlite3 *db, const char *schema, const void *aux, cached_compute_fn compute,
			 sqlite3_vtab **out)
{
	struct cached_table *t;
	int rc = sqlite3_declare_vtab(db, schema);

	if (rc != SQLITE_OK)
		return rc;
	t = sqlite3_malloc(sizeof(*t));
	if (!t)
		return SQLITE_NOMEM;
	memset(t, 0, sizeof(*t));
	t->db = db;
	t->aux = aux;
	t->compute = compute;
	*out = &t->base;
	return SQLITE_OK;
}

int cached_table_disconnect(sqlite3_vtab *base)
{
	cached_result_unref(((struct cached_table *)base)->cache);
	sqlite3_free(base);
	return SQLITE_OK;
}

int cached_table_open(sqlite3_vtab *base, sqlite3_vtab_cursor **out)
{
	struct cached_cursor *c = sqlite3_malloc(sizeof(*c));

	(void)base;
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof(*c));
	*out = &c->base;
	return SQLITE_OK;
}

int cached_table_close(sqlite3_vtab_cursor *base)
{
	struct cached_cursor *c = (struct cached_cursor *)base;

	cached_result_unref(c->r);
	sqlite3_free(c);
	return SQLITE_OK;
}

int cached_table_filter(struct cached_cursor *c)
{
	struct cached_table *t = (struct cached_table *)c->base.pVtab;
	unsigned version = 0;
	int rc;

	cached_result_unref(c->r);
	c->r = NULL;
	c->row = c->end = 0;
	rc = sqlite3_file_control(t->db, "main", SQLITE_FCNTL_DATA_VERSION, &version);
	if (t->cache && (rc != SQLITE_OK || t->cache->data_version != version ||
			 t->cache->changes != sqlite3_total_changes(t->db))) {
		cached_result_unref(t->cache);
		t->cache = NULL;
	}
	if (!t->cache) {
		struct cached_result *r = NULL;

		rc = t->compute(t, &r);
		if (rc != SQLITE_OK)
			return rc;
		r->data_version = version;
		r->changes = sqlite3_total_changes(t->db);
		t->cache = r;
	}
	c->r = t->cache;
	c->r->refs++;
	return SQLITE_OK;
}

int cached_table_next(sqlite3_vtab_cursor *base)
{
	((struct cached_cursor *)base)->row++;
	return SQLITE_OK;
}

int cached_table_eof(sqlite3_vtab_cursor *base)
{
	struct cached_cursor *c = (struct cached_cursor *)base;

	return !c->r || c->row >= c->end;
}

int cached_table_rowid(sqlite3_vtab_cursor *base, sqlite3_int64 *rowid)
{
	*rowid = (sqlite3_int64)((struct cached_cursor *)base)->row;
	return SQLITE_OK;
}
