/*
 * The ceilings of a job of several ranks: each host counted once.
 *
 * Ranks on one host share it: two ranks bound to the same CPUs (or
 * overlapping ones) have, together, those CPUs' FLOP/s once, and every rank
 * of a host shares its sockets' memory bandwidth. Summing the ranks' own
 * peaks claims the shared part once per rank (a job of 2 ranks on a
 * 576 GB/s socket "had" 1.15 TB/s). Per host:
 *
 *   FLOP/s     min(sum of the ranks' peaks, the peak of the union of their
 *              CPUs), the union's peak being, CPU by CPU, the highest
 *              per-CPU peak (peak / ncpu) of a rank that may use it: CPUs
 *              two ranks share count once, ranks that each hold a cgroup
 *              quota of a shared set keep their quotas.
 *   bandwidth  when one rank's CPU set contains all the others', that
 *              set's ceiling (the ranks share it); otherwise the ceilings
 *              of the distinct CPU sets summed, never above the spec
 *              bandwidth of the sockets they span (from the packages the
 *              spec bandwidth names, each counted once). Then, either
 *              way, never above the smallest bandwidth the machine
 *              profile measured on a CPU set that contains the union of
 *              the host's ranks' CPUs (a rank's peak row of scope
 *              'machine', "CPUs 0-1 ..."): ranks bound one per CPU of a
 *              VM each carry one thread's figure, measured alone, which
 *              add up to more than the CPUs reach together. Ranks without
 *              such a row (older recordings, no profile): as before.
 *
 * Each rank's part of its host's ceiling (its own peak scaled by host
 * ceiling / sum of the host's peaks) is what the job sections sum, so a
 * job's ceiling is the hosts' ceilings summed. Ranks without a host (run
 * by hand, or runs without a host name) each count as their own host.
 */
#ifndef MFU_REPORT_JOB_PEAK_H
#define MFU_REPORT_JOB_PEAK_H

#include <stddef.h>
#include <sqlite3.h>

/* A measured bandwidth of a CPU set that contains a rank's (its peak row
 * of scope 'machine'). */
struct job_peak_set {
	const char *cpus;        /* "0-1" */
	double bw;               /* bytes/s */
};

/* One rank, as job_peak_compute() reads it. Unknown numbers are <= 0,
 * unknown strings NULL. */
struct job_peak_rank {
	long long rank;
	const char *host;
	const char *cpus;        /* run.allowed_cpus */
	double ncpu;             /* run.ncpu */
	double peak_flops;       /* run.peak_flops */
	double peak_bw;          /* run.peak_bw */
	double spec_bw;          /* its spec bandwidth (peak table) */
	const char *spec_detail; /* its detail: "1 socket (package 0) x ..." */
	const struct job_peak_set *sets; /* the profile's measured bandwidths of
				  * CPU sets containing the rank's [0..nsets) */
	int nsets;
	/* out */
	double job_flops;        /* its part of the host's FLOP ceiling; <= 0 unknown */
	double job_bw;           /* its part of the host's bandwidth ceiling */
	int host_id;             /* ranks of one host share it (0, 1, ...) */
};

/* One host's ceilings. */
struct job_peak_host {
	char host[256];          /* "" for a rank without one */
	char ranks[256];         /* "0, 1" */
	char cpus[256];          /* the union of the ranks' CPU sets, "" unknown */
	double peak_flops, ranks_flops;  /* the host's, and its ranks' summed; <= 0 unknown */
	double peak_bw, ranks_bw;
	char bw_rule[400];       /* how peak_bw was counted */
};

/* Work out the hosts' ceilings of the @n ranks (fills their out fields) into
 * @hosts (room for @n). Returns the number of hosts, or -ENOMEM. */
int job_peak_compute(struct job_peak_rank *r, size_t n, struct job_peak_host *hosts);

/* Create @schema.job_host (one row per host: host, ranks, cpus,
 * peak_flops, ranks_peak_flops, peak_bw, ranks_peak_bw, bw_rule) and
 * @schema.job_rank_peak (rank, host, peak_flops, peak_bw: the rank's part
 * of its host's ceilings) from the merged database's run and peak tables.
 * @with_note: add a merge note (kind merge_host_peaks, rank NULL) naming
 * the hosts whose ranks share CPUs or memory, and what was counted once.
 * Returns 0 or -EIO / -ENOMEM (@err). */
int job_peak_tables(sqlite3 *db, const char *schema, int with_note, char *err, size_t errlen);

#endif
