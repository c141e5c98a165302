/* The recap at the end of a recording: mfu-report's summary, on stderr. */
#include "recap.h"
#include "runview.h"

#include "analysis.h"
#include "db.h"
#include "format.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int recap_print(const char *path, FILE *out, char *err, size_t errlen)
{
	const struct analysis *summary = analysis_find("summary");
	struct format *fmt = NULL;
	sqlite3 *db = NULL;
	sqlite3_stmt *stmt = NULL;
	/* mfu-report's defaults: the same views, so the same text */
	struct runview_options opts = { 0 };
	int rc;

	if (!summary) {
		strbuf(err, errlen, "the summary analysis is missing from this build");
		return -ENOENT;
	}
	rc = runview_open(path, &opts, &db, err, errlen);
	if (rc)
		goto out;
	rc = format_new(FORMAT_TABLE, out, 1, &fmt);
	if (rc) {
		strbuf(err, errlen, "out of memory");
		goto out;
	}
	rc = analysis_prepare(summary, db, &stmt, err, errlen);
	if (!rc)
		rc = format_section(fmt, summary->name, stmt, summary->single_row, err, errlen);
	if (!rc)
		rc = format_end(fmt);
	if (rc == -ENOMEM)
		strbuf(err, errlen, "out of memory");
	else if (rc && rc != -EIO && rc != -EINVAL && rc != -ENOENT)
		strbuf(err, errlen, "cannot write: %s", strerror(-rc));
out:
	sqlite3_finalize(stmt);
	format_free(fmt);
	runview_close(db);
	return rc;
}
