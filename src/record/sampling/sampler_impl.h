/*
 * The sampler's private half: sampler.c opens the sampling events and
 * stores their records while the target runs; sampler_finish.c derives,
 * resolves and classifies when the recording ends.
 */
#ifndef MFU_SAMPLER_IMPL_H
#define MFU_SAMPLER_IMPL_H

#include "sampler.h"
#include "code_class.h"
#include "embedded.h"
#include "record/procmaps.h"
#include "perf_ring.h"
#include "record/symbols/symbols.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>

#define MAX_FRAMES 128

struct stack_entry {
	uint64_t hash;
	int64_t id;   /* 0: empty */
	uint32_t pid;
	uint16_t n, nkernel;
	uint64_t *ips;
};
struct sampler {
	sqlite3 *db;
	struct perf_sampler *ps;
	pid_t target;
	unsigned freq;
	sqlite3_stmt *ins_sample, *ins_switch, *ins_mapping, *ins_thread, *upd_exit, *upd_comm,
		*ins_exec, *ins_stack, *ins_frame, *upd_fork;
	struct stack_entry *stacks;
	size_t nstacks, cap;
	int64_t next_stack;
	struct code_classes *cc;
	uint64_t samples, switches;
	int error;          /* first error while draining */
	void (*on_task)(void *ctx, pid_t pid, pid_t tid, int exited);
	void (*on_exec_map)(void *ctx, pid_t pid, const char *path);
	void *cb_ctx;
	char note[512];
	char why[256];
};
struct existing_maps {
	struct sampler *s;
	pid_t pid;
	uint64_t time_ns;
};

int step_stmt(struct sampler *s, sqlite3_stmt *st);

#endif
