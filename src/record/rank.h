/*
 * Ranks of a job: mfu-record started by mpirun or srun, once per rank. The
 * launcher says which rank this is in the environment; mfu-record names the
 * database after it (-o run.%r.sqlite), stores it with the run, and, when
 * several ranks of the node run unbound on all of its CPUs, counts only this
 * rank's share of the node in its peaks (machine.h, rank_share).
 *
 * Variables, first found wins:
 *   rank        OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID
 *   world size  OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS
 *   local rank  OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID
 *   local size  OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS, SLURM_NTASKS_PER_NODE
 *   job         SLURM_JOB_ID, OMPI_MCA_ess_base_jobid, PMI_JOBID
 */
#ifndef MFU_RECORD_RANK_H
#define MFU_RECORD_RANK_H

#include <stddef.h>

struct rank_info {
	int rank, size;             /* -1: not in a job */
	int local_rank, local_size; /* -1: unknown */
	char job[64];               /* "" if unknown */
	const char *source;         /* the variable the rank came from, NULL if none */
};

/* Read the launcher's variables from the environment. */
void rank_detect(struct rank_info *r);

/* Several ranks writing one database would destroy each other's data: when
 * @r is a rank of a job of more than one (or of an unknown size) and
 * @tmpl names no %r and no %p and does not hold the rank's number (a
 * name made per rank by the shell: run.$OMPI_COMM_WORLD_RANK.sqlite), write into @out the name with ".%r" before
 * its extension (run.sqlite -> run.%r.sqlite; a name without one gets it at
 * the end) and return 1; else 0 (@out untouched), or -ENAMETOOLONG. */
int rank_own_name(const char *tmpl, const struct rank_info *r, char *out, size_t len);

/* Expand @tmpl into @out: %r the rank, %h the host name, %p the pid of
 * mfu-record, %% a %. Returns 0, or -EINVAL with @why set (%r outside a
 * job, an unknown %x), -ENAMETOOLONG. */
int rank_expand(const char *tmpl, const struct rank_info *r, char *out, size_t len, char *why, size_t whylen);

#endif
