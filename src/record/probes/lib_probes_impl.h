/*
 * The private half of lib_probes: the events and their fields, shared by
 *   lib_probes.c         the uprobes: tracefs events, perf events, hits
 *   lib_probes_finish.c  the end: hits paired into calls, then steps and phases
 */
#ifndef MFU_RECORD_LIB_PROBES_IMPL_H
#define MFU_RECORD_LIB_PROBES_IMPL_H

#include "lib_probes.h"
#include "probes_impl.h"

#define NFIELDS 5 /* m, n, k, side, lwork */

struct field {
	int present;
	unsigned offset, size;
	int is_signed;
};

struct lp_event {
	unsigned func;             /* libflops id */
	uint64_t offset;           /* in the executable */
	uint64_t id[2];            /* tracepoint ids: entry, return */
	struct field f[NFIELDS];   /* the entry's fetched fields in its raw data */
};

struct lib_probes {
	char group[32];
	char tracefs[64];
	char exe[PATH_MAX];
	struct lp_event *ev;
	size_t nev;
	int *fds;
	size_t nfds;
	void **maps;
	size_t map_len;
	int *cpus;
	int ncpu;
	struct perf_sampler *rings;
	sqlite3_stmt *ins;        /* INSERT INTO lib_hit_raw */
	uint64_t hits, bad;
};

#endif
