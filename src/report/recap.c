/* The recap at the end of a recording: mfu-report's summary, on stderr. */
#include "recap.h"
#include "runview.h"

#include "analysis.h"
#include "db.h"
#include "format.h"
#include "util.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct deadline {
	uint64_t at_ns;
	int hit;
};

/* SQLite calls this every few thousand instructions of a statement: a
 * nonzero return interrupts it. */
static int past_deadline(void *arg)
{
	struct deadline *d = arg;

	if (now_ns() < d->at_ns)
		return 0;
	d->hit = 1;
	return 1;
}

/* The breakdown's verdict within @ms, or a line that says where to get it. */
static int headline(sqlite3 *db, const char *path, unsigned ms, char **text, char *err, size_t errlen)
{
	const struct analysis *a = analysis_find("breakdown");
	struct deadline d = { .at_ns = now_ns() + (uint64_t)ms * 1000000ull };
	char line[512];
	int rc;

	*text = NULL;
	if (!a)
		return 0;
	sqlite3_progress_handler(db, 10000, past_deadline, &d);
	rc = analysis_verdict(a, db, text, err, errlen);
	sqlite3_progress_handler(db, 0, NULL, NULL);
	if (rc || !d.hit)
		return rc;
	free(*text);
	*text = NULL;
	strbuf(line, sizeof(line), "Where the step time went is not worked out here (over %u ms on this run): "
	       "mfu-report --db %s breakdown", ms, path);
	*text = strdup(line);
	return *text ? 0 : -ENOMEM;
}

int recap_print(const char *path, FILE *out, unsigned verdict_ms, char *err, size_t errlen)
{
	const struct analysis *summary = analysis_find("summary"), *notes = analysis_find("notes");
	struct format *fmt = NULL;
	sqlite3 *db = NULL;
	sqlite3_stmt *stmt = NULL;
	struct runview_options opts = { .no_recorded_notes = 1 };
	char *verdict = NULL;
	int rc;

	if (!summary || !notes) {
		strbuf(err, errlen, "the summary and notes analyses are missing from this build");
		return -ENOENT;
	}
	/* The recorder's own notes (table note) were each said on stderr as
	 * they came: the views leave them out. */
	rc = runview_open(path, &opts, &db, err, errlen);
	if (rc)
		goto out;
	rc = headline(db, path, verdict_ms, &verdict, err, errlen);
	if (rc)
		goto out;
	rc = format_new(FORMAT_TABLE, out, 1, &fmt);
	if (!rc)
		rc = format_set_verdict(fmt, verdict);
	if (rc) {
		strbuf(err, errlen, "out of memory");
		goto out;
	}
	rc = analysis_prepare(summary, db, &stmt, err, errlen);
	if (!rc)
		rc = format_section(fmt, summary->name, stmt, summary->single_row, err, errlen);
	sqlite3_finalize(stmt);
	stmt = NULL;
	if (!rc)
		rc = analysis_prepare(notes, db, &stmt, err, errlen);
	if (!rc)
		rc = format_notes(fmt, stmt, 0, err, errlen);
	if (!rc)
		rc = format_end(fmt);
	if (rc == -ENOMEM)
		strbuf(err, errlen, "out of memory");
	else if (rc && rc != -EIO && rc != -EINVAL && rc != -ENOENT)
		strbuf(err, errlen, "cannot write: %s", strerror(-rc));
out:
	sqlite3_finalize(stmt);
	format_free(fmt);
	free(verdict);
	runview_close(db);
	return rc;
}
