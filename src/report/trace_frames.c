/* The sampled callchains as the trace format's stack frames
 * (trace_frames.h). */
#include "trace_frames.h"
#include "format_impl.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A frame of the tree: its parent node (-1: outermost) and what it is, a
 * symbol id, or UNKNOWN_SYM / KERNEL_SYM for a frame without one. */
struct node {
	int64_t parent, sym;
};

struct leaf {
	int64_t stack, node; /* the key first: find_by_key() */
};

/* A symbol's "name" and "category" members, as JSON text. */
struct sym_text {
	int64_t id; /* the key first: find_by_key() */
	char *text;
	size_t len;
};

struct trace_frames {
	struct node *nodes;
	size_t n, cap;
	int64_t *slots; /* open addressing on (parent, sym): node + 1, 0 empty */
	size_t nslots;
	struct leaf *leaves; /* by stack id */
	size_t nleaves, leaves_cap;
	struct sym_text *syms; /* by symbol id */
	size_t nsyms, syms_cap;
};

#define UNKNOWN_SYM (-1)
#define KERNEL_SYM (-2)

static size_t slot_of(int64_t parent, int64_t sym, size_t nslots)
{
	uint64_t h = (uint64_t)parent * 0x9e3779b97f4a7c15ull ^ ((uint64_t)sym + 0x632be59bd9b4e019ull);

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 29;
	return (size_t)h & (nslots - 1);
}

static int rehash(struct trace_frames *f, size_t nslots)
{
	int64_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < f->n; i++) {
		size_t k = slot_of(f->nodes[i].parent, f->nodes[i].sym, nslots);
		while (slots[k])
			k = (k + 1) & (nslots - 1);
		slots[k] = (int64_t)i + 1;
	}
	free(f->slots);
	f->slots = slots;
	f->nslots = nslots;
	return 0;
}

/* The node for @sym under @parent, made when new; -1 when out of memory. */
static int64_t node_for(struct trace_frames *f, int64_t parent, int64_t sym)
{
	size_t k;

	if (2 * (f->n + 1) > f->nslots && rehash(f, f->nslots ? 2 * f->nslots : 1024))
		return -1;
	for (k = slot_of(parent, sym, f->nslots); f->slots[k]; k = (k + 1) & (f->nslots - 1)) {
		const struct node *e = &f->nodes[f->slots[k] - 1];
		if (e->parent == parent && e->sym == sym)
			return f->slots[k] - 1;
	}
	if (array_grow(&f->nodes, &f->cap, f->n + 1, sizeof(*f->nodes)))
		return -1;
	f->nodes[f->n] = (struct node){ .parent = parent, .sym = sym };
	f->slots[k] = (int64_t)f->n + 1;
	return (int64_t)f->n++;
}

static int add_leaf(struct trace_frames *f, int64_t stack, int64_t node)
{
	if (array_grow(&f->leaves, &f->leaves_cap, f->nleaves + 1, sizeof(*f->leaves)))
		return -ENOMEM;
	f->leaves[f->nleaves++] = (struct leaf){ .stack = stack, .node = node };
	return 0;
}

/* Each symbol's name as the dispatch section says it (a symbol without a
 * name is its file, [libm.so.6]) and its file's base name as the category. */
static const char syms_sql[] =
	"SELECT id, coalesce(name, CASE WHEN dso LIKE '[%' THEN dso\n"
	"    ELSE '[' || replace(dso, rtrim(dso, replace(dso, '/', '')), '') || ']' END, '[unknown]'),\n"
	"  CASE WHEN kind = 'kernel' THEN 'kernel' WHEN dso LIKE '[%' THEN dso\n"
	"    ELSE coalesce(replace(dso, rtrim(dso, replace(dso, '/', '')), ''), '') END\n"
	"FROM symbol ORDER BY id";

static int load_syms(struct trace_frames *f, sqlite3 *db, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, syms_sql, -1, &st, NULL) == SQLITE_OK ? 0 : -EIO;

	while (!rc && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct sym_text *s;
		size_t cap = 0;

		rc = 0;
		if (array_grow(&f->syms, &f->syms_cap, f->nsyms + 1, sizeof(*f->syms))) {
			rc = -ENOMEM;
			break;
		}
		s = &f->syms[f->nsyms];
		*s = (struct sym_text){ .id = sqlite3_column_int64(st, 0) };
		f->nsyms++;
		if (buf_append(&s->text, &s->len, &cap, "\"name\":", 7) ||
		    json_append_string(&s->text, &s->len, &cap, (const char *)sqlite3_column_text(st, 1),
				       (size_t)sqlite3_column_bytes(st, 1)) ||
		    buf_append(&s->text, &s->len, &cap, ",\"category\":", 12) ||
		    json_append_string(&s->text, &s->len, &cap, (const char *)sqlite3_column_text(st, 2),
				       (size_t)sqlite3_column_bytes(st, 2)))
			rc = -ENOMEM;
	}
	if (rc == SQLITE_DONE)
		rc = 0;
	else if (rc > 0)
		rc = -EIO;
	if (rc == -EIO)
		strbuf(err, errlen, "stack frames: %s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return rc;
}

int trace_frames_build(sqlite3 *db, struct trace_frames **out, char *err, size_t errlen)
{
	struct trace_frames *f = calloc(1, sizeof(*f));
	sqlite3_stmt *st = NULL;
	int64_t stack = -1, node = -1;
	int rc;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	rc = load_syms(f, db, err, errlen);
	/* outermost frame first, so that each frame's parent exists */
	if (!rc && sqlite3_prepare_v2(db, "SELECT stack, symbol, kernel FROM stack_frame ORDER BY stack, depth DESC", -1,
				      &st, NULL) != SQLITE_OK)
		rc = -EIO;
	while (!rc && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t s = sqlite3_column_int64(st, 0), sym;

		rc = 0;
		if (s != stack) {
			if (node >= 0)
				rc = add_leaf(f, stack, node);
			stack = s;
			node = -1;
		}
		sym = sqlite3_column_type(st, 1) != SQLITE_NULL ? sqlite3_column_int64(st, 1)
			: sqlite3_column_int(st, 2)          ? KERNEL_SYM
							     : UNKNOWN_SYM;
		node = rc ? -1 : node_for(f, node, sym);
		if (!rc && node < 0)
			rc = -ENOMEM;
	}
	if (rc == SQLITE_DONE)
		rc = node >= 0 ? add_leaf(f, stack, node) : 0;
	else if (rc > 0)
		rc = -EIO;
	if (rc == -EIO)
		strbuf(err, errlen, "stack frames: %s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	if (rc) {
		trace_frames_free(f);
		return rc;
	}
	*out = f;
	return 0;
}

int64_t trace_frames_leaf(const struct trace_frames *f, int64_t stack)
{
	const struct leaf *l = f ? find_by_key(f->leaves, f->nleaves, sizeof(*l), stack) : NULL;

	return l ? l->node : -1;
}

size_t trace_frames_count(const struct trace_frames *f)
{
	return f ? f->n : 0;
}

int trace_frames_json(const struct trace_frames *f, char **text, size_t *len)
{
	static const char unknown[] = "\"name\":\"[unknown]\",\"category\":\"\"";
	static const char kernel[] = "\"name\":\"[kernel]\",\"category\":\"kernel\"";
	size_t cap = 0;
	char num[24];
	int rc;

	*text = NULL;
	*len = 0;
	rc = buf_append(text, len, &cap, "{", 1);
	for (size_t i = 0; !rc && f && i < f->n; i++) {
		const struct node *n = &f->nodes[i];
		const struct sym_text *s = n->sym >= 0 ? find_by_key(f->syms, f->nsyms, sizeof(*s), n->sym) : NULL;

		rc = buf_append(text, len, &cap, i ? ",\"" : "\"", i ? 2 : 1);
		if (!rc)
			rc = buf_append(text, len, &cap, num, fmt_i64(num, (long long)i));
		if (!rc)
			rc = buf_append(text, len, &cap, "\":{", 3);
		if (!rc && s)
			rc = buf_append(text, len, &cap, s->text, s->len);
		else if (!rc)
			rc = n->sym == KERNEL_SYM ? buf_append(text, len, &cap, kernel, sizeof(kernel) - 1)
						  : buf_append(text, len, &cap, unknown, sizeof(unknown) - 1);
		if (!rc && n->parent >= 0) {
			rc = buf_append(text, len, &cap, ",\"parent\":\"", 11);
			if (!rc)
				rc = buf_append(text, len, &cap, num, fmt_i64(num, (long long)n->parent));
			if (!rc)
				rc = buf_append(text, len, &cap, "\"", 1);
		}
		if (!rc)
			rc = buf_append(text, len, &cap, "}", 1);
	}
	if (!rc)
		rc = buf_append(text, len, &cap, "}", 1);
	if (rc) {
		free(*text);
		*text = NULL;
		*len = 0;
		return -ENOMEM;
	}
	return 0;
}

void trace_frames_free(struct trace_frames *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nsyms; i++)
		free(f->syms[i].text);
	free(f->syms);
	free(f->nodes);
	free(f->slots);
	free(f->leaves);
	free(f);
}
