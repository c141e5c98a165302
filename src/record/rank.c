/* Ranks of a job (rank.h). */
#include "rank.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The first of @names set to a whole number >= 0: its value, and which in
 * *@from; -1 when none is. */
static int first_int(const char *const *names, const char **from)
{
	for (; *names; names++) {
		const char *v = getenv(*names);
		int n;

		if (v && *v && safe_atoi(v, &n) == 0 && n >= 0) {
			if (from)
				*from = *names;
			return n;
		}
	}
	return -1;
}

void rank_detect(struct rank_info *r)
{
	static const char *const rank[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", NULL };
	static const char *const size[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", NULL };
	static const char *const lrank[] = { "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", NULL };
	static const char *const lsize[] = { "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE",
					     NULL };
	static const char *const job[] = { "SLURM_JOB_ID", "OMPI_MCA_ess_base_jobid", "PMI_JOBID", NULL };

	memset(r, 0, sizeof(*r));
	r->rank = first_int(rank, &r->source);
	r->size = r->rank >= 0 ? first_int(size, NULL) : -1;
	r->local_rank = r->rank >= 0 ? first_int(lrank, NULL) : -1;
	r->local_size = r->rank >= 0 ? first_int(lsize, NULL) : -1;
	for (size_t i = 0; r->rank >= 0 && job[i]; i++) {
		const char *v = getenv(job[i]);
		if (v && *v) {
			strbuf(r->job, sizeof(r->job), "%s", v);
			break;
		}
	}
}

/* Does @tmpl name @c (%c, not %%c)? */
static int names(const char *tmpl, char c)
{
	for (const char *p = tmpl; *p; p++)
		if (*p == '%' && p[1]) {
			if (p[1] == c)
				return 1;
			p++;
		}
	return 0;
}

/* Does @s hold @n as a number of its own (no digit on either side)? */
static int holds_number(const char *s, int n)
{
	char num[16];
	size_t k = (size_t)snprintf(num, sizeof(num), "%d", n);

	for (const char *p = strstr(s, num); p; p = strstr(p + 1, num))
		if ((p == s || !isdigit((unsigned char)p[-1])) && !isdigit((unsigned char)p[k]))
			return 1;
	return 0;
}

int rank_own_name(const char *tmpl, const struct rank_info *r, char *out, size_t len)
{
	const char *base = strrchr(tmpl, '/'), *dot;
	size_t at;

	/* a name that holds the rank's number was made per rank (-o
	 * run.$OMPI_COMM_WORLD_RANK.sqlite, by the shell) */
	if (r->rank < 0 || r->size == 1 || names(tmpl, 'r') || names(tmpl, 'p') || holds_number(tmpl, r->rank))
		return 0;
	base = base ? base + 1 : tmpl;
	dot = strrchr(base, '.');
	at = dot && dot != base ? (size_t)(dot - tmpl) : strlen(tmpl);
	if (strlen(tmpl) + 3 >= len)
		return -ENAMETOOLONG;
	memmove(out, tmpl, at);
	memcpy(out + at, ".%r", 3);
	strcpy(out + at + 3, tmpl + at);
	return 1;
}

int rank_expand(const char *tmpl, const struct rank_info *r, char *out, size_t len, char *why, size_t whylen)
{
	size_t n = 0;

	for (const char *p = tmpl; *p; p++) {
		char piece[300];

		if (*p != '%') {
			piece[0] = *p;
			piece[1] = '\0';
		} else if (p[1] == '%') {
			strcpy(piece, "%");
			p++;
		} else if (p[1] == 'r') {
			if (r->rank < 0) {
				strbuf(why, whylen, "'%s': %%r is the rank of an MPI or Slurm job, and none is set "
				       "(OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID): start mfu-record with mpirun "
				       "or srun", tmpl);
				return -EINVAL;
			}
			strbuf(piece, sizeof(piece), "%d", r->rank);
			p++;
		} else if (p[1] == 'h') {
			if (gethostname(piece, sizeof(piece) - 1) != 0)
				strcpy(piece, "unknown");
			piece[sizeof(piece) - 1] = '\0';
			p++;
		} else if (p[1] == 'p') {
			strbuf(piece, sizeof(piece), "%d", (int)getpid());
			p++;
		} else {
			strbuf(why, whylen, "'%s': unknown %%%c (%%r rank, %%h host, %%p pid, %%%% a %%)", tmpl,
			       p[1] ? p[1] : ' ');
			return -EINVAL;
		}
		size_t k = strlen(piece);
		if (n + k + 1 > len) {
			strbuf(why, whylen, "'%s': the name is too long", tmpl);
			return -ENAMETOOLONG;
		}
		memcpy(out + n, piece, k);
		n += k;
	}
	out[n] = '\0';
	return 0;
}
