/*
 * Memory bandwidth, the STREAM way: read (a sum), copy and triad
 * (a = b + s*c) over a buffer several times the size of the last-level
 * cache, each with ordinary and with non-temporal stores, run on the
 * workers of a team. Bytes are counted as STREAM counts them: 8 per
 * element of each array named in the kernel (copy 2, triad 3); the extra
 * read for ownership of the destination lines (write-allocate) is not.
 */
#ifndef MFU_CALIBRATE_STREAM_H
#define MFU_CALIBRATE_STREAM_H

#include <stddef.h>

#include "kernels.h"
#include "team.h"

#define STREAM_MIN_BYTES (256u << 20)

enum stream_kind { STREAM_READ, STREAM_COPY, STREAM_TRIAD, STREAM_NKINDS };

struct stream_result {
	const char *kernel;      /* "read"; "copy" or "copy_nt"; "triad" or "triad_nt": the faster */
	double bytes_per_s;      /* all workers' bytes / wall time of the slowest */
	double seconds;          /* the wall time of the best repetition */
	double cpu_share;        /* and its team_timing.cpu_share */
	int reps;                /* repetitions run */
	const char *other;       /* the slower store variant, NULL for read */
	double other_bytes_per_s;
};

/* The widest usable kernel set for the ISA features @isa (machine.isa). */
const struct stream_kernels *stream_kernels_for(unsigned isa);

/* How many bytes to sweep on the CPUs @cpus: 4x their last-level caches
 * (the distinct instances in sysfs), at least STREAM_MIN_BYTES, at most half
 * the memory available (MemAvailable, a cgroup v2 memory.max), and at most
 * @cap bytes when @cap is not 0 (--quick). @detail says how the size came
 * about. Returns 0 or -errno. */
int stream_size(const int *cpus, int n, uint64_t cap, size_t *bytes, char *detail, size_t len);

/* Sweep @bytes in total, split between the workers of @t (each first
 * touches its own share, so on a NUMA machine it lives on the worker's
 * node), with each kernel @reps times; @out receives the best of each.
 * Every kernel sweeps the whole buffer once per repetition: read all of
 * it, copy its second half to its first, triad over its three thirds.
 * A kernel whose best repetition was disturbed (another task shared a CPU)
 * gets up to @reps more. Returns 0, -ENOMEM, or -EIO if a result is wrong. */
int stream_measure(const struct stream_kernels *k, struct team *t, size_t bytes, int reps,
		   struct stream_result out[STREAM_NKINDS]);

#endif
