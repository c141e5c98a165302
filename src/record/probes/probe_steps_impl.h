/*
 * The probe steps module's private half: probe_steps.c parses requests,
 * resolves and opens the probe points; probe_steps_drain.c turns their hits
 * into boundaries and ends the probes.
 */
#ifndef MFU_PROBE_STEPS_IMPL_H
#define MFU_PROBE_STEPS_IMPL_H

#include "probe_steps.h"
#include "asuser.h"
#include "record/procmaps.h"
#include "record/idmap.h"
#include "record/sampling/perf_ring.h"
#include "suggest.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_POINTS (2 * PROBE_STEPS_MAX_REQUESTS)
#define RING_PAGES 16      /* per thread: 64 KiB, about 1,600 hits */
#define SITE_BITS 20 /* sites of one point: far more than any file has */

enum boundary { BOUND_BEGIN, BOUND_END, BOUND_EACH };

struct point {
	int req;
	enum boundary boundary;
	struct probe_point pp;
	struct probe_site *sites;
	size_t nsites, capsites;
	unsigned long long hits;
	int failed;             /* a site could not be opened: detail says why */
	char detail[512];
};
struct pthread {
	pid_t pid, tid;
	int exited;
	int ring_fd;
	void *map;
	size_t maplen;
	struct perf_sampler *ring;
	int *fds;
	size_t nfds, capfds;
	size_t nopen[MAX_POINTS];          /* sites of each point opened here */
	int state[PROBE_STEPS_MAX_REQUESTS]; /* call depth, or 1 while a step is open */
	/* CLOCK_MONOTONIC once the request's return probes were first open on
	 * this thread (0: none): a call entered before may return unseen;
	 * UINT64_MAX: they could not be opened here, no call's end is seen */
	uint64_t armed[PROBE_STEPS_MAX_REQUESTS];
};
struct hit {
	uint64_t time, seq;
	pid_t pid, tid;
	int point;
	struct pthread *t;      /* the thread whose ring it came from (freed only
				 * once none of its hits is pending) */
};
struct probe_steps {
	struct probe_request req[PROBE_STEPS_MAX_REQUESTS];
	int nreq;
	struct point pt[MAX_POINTS];
	int npt;
	struct probe_steps_sink sink;
	struct pthread **th;
	size_t nth, capth;
	struct idmap ev;        /* event id -> point << 20 | site */
	struct hit *hits;
	size_t nhits, caphits;
	uint64_t seq;
	char **seen;            /* files every point was resolved in */
	size_t nseen, capseen;
	unsigned long long total_hits, lost;
	int closed;
	struct pthread *draining; /* whose ring on_hit reads */
	char note[512];
};

void point_text(const struct point *p, char *buf, size_t len);
void thread_close(struct pthread *t);

#endif
