#include "analysis.h"
#include "embedded.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const struct analysis analyses[] = {
	{ "summary", "the whole run: steps, time, MFU/HFU/MBU, the peaks used, how it ended", 1 },
	{ "steps", "one row per complete step: time, FLOPs, bytes, MFU, HFU, MBU, CPU use", 0 },
	{ "phases", "one row per phase name: count, total/mean/p50/p95 time, share of step time, MFU", 0 },
	{ "notes", "what to know about the data: missing counters, peaks used, anomalies, lost records", 0 },
};

const struct analysis *analysis_all(size_t *count)
{
	*count = ARRAY_SIZE(analyses);
	return analyses;
}

const struct analysis *analysis_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(analyses); i++)
		if (strcmp(analyses[i].name, name) == 0)
			return &analyses[i];
	return NULL;
}

const char *analysis_names(void)
{
	static char names[256];

	if (!names[0]) {
		size_t len = 0;
		for (size_t i = 0; i < ARRAY_SIZE(analyses); i++)
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", i ? ", " : "",
						analyses[i].name);
	}
	return names;
}

const char *analysis_sql(const struct analysis *a)
{
	char file[64];
	const struct mfu_embedded *e;

	if (strbuf(file, sizeof(file), "%s.sql", a->name))
		return NULL;
	e = embedded_find(mfu_analysis_files, file);
	return e ? e->text : NULL;
}

int analysis_prepare(const struct analysis *a, sqlite3 *db, sqlite3_stmt **out, char *err, size_t errlen)
{
	const char *sql = analysis_sql(a), *tail = NULL;

	*out = NULL;
	if (!sql) {
		strbuf(err, errlen, "analyses/%s.sql is missing from this build", a->name);
		return -ENOENT;
	}
	if (sqlite3_prepare_v2(db, sql, -1, out, &tail) != SQLITE_OK) {
		strbuf(err, errlen, "%s", sqlite3_errmsg(db));
		sqlite3_finalize(*out);
		*out = NULL;
		return -EIO;
	}
	/* One statement per file: a second one would be silently ignored. */
	if (*out && tail && *tail) {
		sqlite3_stmt *extra = NULL;
		int rc = sqlite3_prepare_v2(db, tail, -1, &extra, NULL);

		sqlite3_finalize(extra);
		if (rc != SQLITE_OK || extra)
			tail = NULL;
	}
	if (!*out || !tail) {
		strbuf(err, errlen, "analyses/%s.sql must hold exactly one SELECT", a->name);
		sqlite3_finalize(*out);
		*out = NULL;
		return -EINVAL;
	}
	return 0;
}
