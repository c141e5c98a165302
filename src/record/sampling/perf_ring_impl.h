/*
 * The perf ring module's private half: perf_ring.c opens the sampling
 * events and their per-CPU rings and drains them; perf_ring_parse.c decodes
 * their records.
 */
#ifndef MFU_PERF_RING_IMPL_H
#define MFU_PERF_RING_IMPL_H

#include "perf_ring.h"
#include "cpumap.h"
#include "record/counters/perf_event.h"
#include "record/idmap.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define BOUNCE_SIZE 65536

struct ring {
	int cpu;
	int fd;        /* cpu-clock (or dummy) event: owns the ring */
	int sw_fd;     /* context-switch sampling event, output redirected here; -1 */
	uint64_t id, sw_id;
	void *map;     /* NULL for a ring the caller mapped */
	size_t map_len;
	struct perf_event_mmap_page *meta;
	const unsigned char *data;
	uint64_t size; /* data area bytes, a power of two */
	uint64_t lost, lost_samples;
};
struct perf_sampler {
	int n;
	struct ring *r;
	/* events of other threads redirected into the CPUs' rings
	 * (perf_ring_open_sampling_tids), and which kind each id samples */
	int *xfd;
	size_t nx, capx;
	struct idmap xkind;
	int *cpu_ring;   /* CPU number -> ring index, -1 */
	int ncpu_ring;   /* entries in cpu_ring */
	int user_only;
	int switch_samples;
	struct perf_event_attr attr, sw_attr;
	char note[320];
	unsigned char *bounce;
};



#endif
