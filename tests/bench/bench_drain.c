/*
 * bench_drain: what the recorder spends on one marker record, part by part,
 * with no target: a ring of the default size (32,768 records) is filled
 * here with the records one thread marking phases writes (begin and end
 * of "tick", the 4-event software group read, library counts), then read
 * back through the recorder's own consumer, pairing and writer into a
 * database made by db_create() (the recording's schema, WAL), in the
 * configurations below, alternating, each round a ring-full of records:
 *
 *   read     the consumer only: each record copied out and its slot freed
 *   pair     + the markers: begin and end paired into phase rows (sinks
 *              that take the row and do nothing)
 *   insert   + the writer: each row inserted (commits every 0.25 s of
 *              draining, as the recorder's loop does)
 *
 * and prints, per record, the median over rounds of each, the differences
 * (the parts), and the records per second one CPU drains: what a single
 * marking thread must not outrun (bench_marker's boundary), or the ring
 * fills and records are lost.
 *
 * usage: bench_drain [--rounds N] [--steps] [--dir DIR]
 *   --steps: the thread marks steps, not phases (step rows)
 */
#include "record/markers/markers.h"
#include "record/db/writer.h"
#include "db.h"
#include "marker_ring.h"
#include "libflops.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bench_clock.h"

#define NSLOTS 32768

/* The four software counters of group 0, as counters_plan() lays them out. */
static void software_counters(struct counters *cs)
{
	static const char *const names[] = { "task-clock", "context-switches", "cpu-migrations", "page-faults" };
	static const enum counter_col cols[] = { COL_CPU_NS, COL_CTX_SWITCHES, COL_CPU_MIGRATIONS, COL_PAGE_FAULTS };

	memset(cs, 0, sizeof(*cs));
	cs->n = 4;
	cs->ngroups = 1;
	for (int i = 0; i < 4; i++) {
		snprintf(cs->c[i].name, sizeof(cs->c[i].name), "%s", names[i]);
		cs->c[i].kind = "software";
		cs->c[i].unit = i == 0 ? "ns" : "count";
		cs->c[i].col = cols[i];
		cs->c[i].opened = 1;
		cs->c[i].group = 0;
		cs->c[i].word = 3 + i;
		cs->c[i].fd = -1;
		snprintf(cs->c[i].encoding, sizeof(cs->c[i].encoding), "1:%d", i);
	}
	for (int g = 0; g < MRING_MAX_GROUPS; g++)
		cs->leader[g] = -1;
	cs->leader[0] = 0;
	cs->group_nr[0] = 4;
	cs->group_offset[0] = 0;
}

/* Fill the ring with one thread's boundaries, as libmfu writes them. */
static uint64_t t_ns = 1000000000ull, cpu_ns;

static void produce(void *ring, int steps, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		uint64_t pos;
		struct mring_record *r = mring_claim(ring, &pos);
		if (!r) {
			fprintf(stderr, "bench_drain: the ring is full\n");
			exit(1);
		}
		int begin = (i & 1) == 0;
		r->pid = 4242;
		r->tid = 4242;
		r->kind = steps ? (begin ? MRING_STEP_BEGIN : MRING_STEP_END)
				: (begin ? MRING_PHASE_BEGIN : MRING_PHASE_END);
		r->flags = MRING_F_LIB;
		r->ngroups = 1;
		r->lost = 0;
		t_ns += 800;
		cpu_ns += 790;
		r->time_ns = t_ns;
		r->a = r->b = 0;
		r->data[0] = 4;
		r->data[1] = r->data[2] = t_ns;
		r->data[3] = cpu_ns;
		r->data[4] = i / 5000;
		r->data[5] = 0;
		r->data[6] = 100 + i / 100000;
		memset(r->lib, 0, sizeof(r->lib));
		r->lib_snap = 0;
		r->name_len = steps ? 0 : 4;
		memcpy(r->name, steps ? "" : "tick", steps ? 1 : 5);
		mring_publish(ring, r, pos);
	}
}

static int null_row(void *ctx, const struct interval_row *row)
{
	(void)ctx;
	(void)row;
	return 0;
}

static int null_anomaly(void *ctx, const struct anomaly_row *row)
{
	(void)ctx;
	(void)row;
	return 0;
}

enum { READ, PAIR, INSERT, NCONF };
static const char *const conf_name[NCONF] = { "read", "pair", "insert" };

int main(int argc, char **argv)
{
	int rounds = 9, steps = 0;
	const char *dir = NULL;
	char path[4096], err[512], tmpl[] = "/tmp/bench_drain.XXXXXX";
	struct counters cs;
	struct writer *w = NULL;
	sqlite3 *db = NULL;
	struct mring_consumer c;
	double ns[NCONF][64];
	uint64_t last_commit;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--steps"))
			steps = 1;
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else {
			fprintf(stderr, "usage: bench_drain [--rounds N] [--steps] [--dir DIR]\n");
			return 2;
		}
	}
	/* as mfu-record's main() does */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	if (rounds < 1 || rounds > 64)
		rounds = 9;
	if (!dir) {
		dir = mkdtemp(tmpl);
		if (!dir) {
			perror("bench_drain: mkdtemp");
			return 1;
		}
	}
	snprintf(path, sizeof(path), "%s/drain.sqlite", dir);
	unlink(path);
	software_counters(&cs);
	if (db_create(path, &db, NULL, 0, err, sizeof(err)) != 0 || writer_open(&w, db, err, sizeof(err)) != 0 ||
	    writer_counters(w, &cs) != 0) {
		fprintf(stderr, "bench_drain: %s: %s\n", path, err);
		return 1;
	}
	size_t size = mring_size(NSLOTS);
	void *ring = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
	if (!ring) {
		perror("bench_drain");
		return 1;
	}
	memset(ring, 0, size);
	uint8_t nr[1] = { 4 };
	if (mring_init(ring, NSLOTS, 1, nr) != 0 || mring_consumer_init(&c, ring, size, NSLOTS) != 0) {
		fprintf(stderr, "bench_drain: cannot make the ring\n");
		return 1;
	}
	struct markers_sink null_sink = { .ctx = NULL, .step = null_row, .phase = null_row, .anomaly = null_anomaly };
	struct markers_sink db_sink = { .ctx = w, .step = writer_step, .phase = writer_phase, .anomaly = writer_anomaly };
	struct markers *pair = markers_new(&cs, &null_sink), *ins = markers_new(&cs, &db_sink);
	if (!pair || !ins) {
		fprintf(stderr, "bench_drain: out of memory\n");
		return 1;
	}
	last_commit = now();
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < NCONF; k++) {
			int conf = (r + k) % NCONF;
			struct markers_drained out;
			produce(ring, steps, NSLOTS);
			uint64_t t0 = cpu_now();
			markers_drain(conf == READ ? NULL : conf == PAIR ? pair : ins, &c, UINT64_MAX, UINT64_MAX, &out);
			if (conf == INSERT && now() - last_commit >= 250000000ull) {
				if (writer_commit(w) != 0) {
					fprintf(stderr, "bench_drain: commit: %s\n", writer_error(w));
					return 1;
				}
				last_commit = now();
			}
			ns[conf][r] = (double)(cpu_now() - t0) / (double)NSLOTS;
			if (out.read != NSLOTS || out.err) {
				fprintf(stderr, "bench_drain: drained %llu records of %d (error %d)\n",
					(unsigned long long)out.read, NSLOTS, out.err);
				return 1;
			}
		}
	}
	writer_close(w);
	sqlite3_close(db);
	double med[NCONF], lo[NCONF], hi[NCONF];
	for (int k = 0; k < NCONF; k++) {
		qsort(ns[k], (size_t)rounds, sizeof(double), cmp_double);
		med[k] = ns[k][rounds / 2];
		lo[k] = ns[k][0];
		hi[k] = ns[k][rounds - 1];
	}
	printf("drain per record (%s, %d rounds of %d records, median [min-max] ns):", steps ? "steps" : "phases",
	       rounds, NSLOTS);
	for (int k = 0; k < NCONF; k++)
		printf(" %s=%.0f [%.0f-%.0f]", conf_name[k], med[k], lo[k], hi[k]);
	printf("; parts: consumer %.0f, pairing %.0f, insert %.0f; one CPU drains %.0f records/s\n", med[READ],
	       med[PAIR] - med[READ], med[INSERT] - med[PAIR], 1e9 / med[INSERT]);
	unlink(path);
	for (const char *sfx = "-wal"; sfx; sfx = strcmp(sfx, "-wal") == 0 ? "-shm" : NULL) {
		char side[4200];
		snprintf(side, sizeof(side), "%s%s", path, sfx);
		unlink(side);
	}
	if (dir == tmpl)
		rmdir(dir);
	return 0;
}
