/*
 * mfu-record: run a program under perf_event counters and record its marked
 * steps and phases into an SQLite database. The recording is a session in
 * stages (session.h); the command line is options.h's.
 */
#include "cli.h"
#include "options.h"
#include "session.h"

#include <sqlite3.h>

int main(int argc, char **argv)
{
	struct options o = { 0 };
	struct session *s;
	int rc;

	/* No allocation statistics (nothing reads them): without, an
	 * allocation takes no global mutex, and the recorder allocates in
	 * every row it inserts. Before SQLite's first use. */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	rc = options_parse(argc, argv, &o);
	if (rc != CLI_GO_ON)
		return rc;
	s = session_new(&o);
	rc = s ? session_plan(s) : 125;
	if (rc < 0)
		rc = session_start(s);
	if (rc < 0)
		rc = session_run(s);
	if (rc < 0)
		rc = session_finish(s);
	return session_end(s, rc);
}
