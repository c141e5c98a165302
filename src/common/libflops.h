/*
 * Library-call FLOPs: what the counting library (libmfu-libflops.so, which
 * mfu-record preloads into the target) counts, and the shared memory in
 * which it counts it.
 *
 * The counting library interposes the BLAS level-3 and level-2 entry points
 * (CBLAS and Fortran) and oneDNN's GEMM calls, computes each call's FLOPs
 * from its arguments (libflops_count()) and adds them, with the call, to its
 * process's counters in a region that mfu-record created (a memfd whose
 * number is in MFU_LIBFLOPS_FD). The counters only grow, like a hardware
 * counter: libmfu reads them at every step and phase boundary into the
 * marker record (whole process, every thread), and copies the whole table
 * at step boundaries into a snapshot ring, from which the recorder makes the
 * per-step lib_call rows.
 *
 * Everything here crosses a process boundary: the region carries a magic, a
 * version and its sizes, and tests/unit/test_libflops.c pins the layout.
 */
#ifndef MFU_LIBFLOPS_H
#define MFU_LIBFLOPS_H

#include <stddef.h>
#include <stdint.h>

#define LIBFLOPS_ENV_FD "MFU_LIBFLOPS_FD"
#define LIBFLOPS_MAGIC 0x73706f6c66624c6dULL /* "mLbflops" */
#define LIBFLOPS_VERSION 1
#define LIBFLOPS_MAX_PROCS 64   /* processes of one target counted apart */
#define LIBFLOPS_NSNAP 4096     /* step-boundary snapshots in flight (power of two) */

/* Precisions, the order of the marker record's lib[] words after calls. */
enum libflops_prec {
	LIBFLOPS_FP64,
	LIBFLOPS_FP32,
	LIBFLOPS_BF16,
	LIBFLOPS_FP16,
	LIBFLOPS_INT8, /* integer operations, not FLOPs */
	LIBFLOPS_NPREC,
};

/* The operation families, each with its own count (libflops_count()). */
enum libflops_op {
	LIBFLOPS_GEMM,   /* m n k */
	LIBFLOPS_GEMMT,  /* n k: the triangle of C */
	LIBFLOPS_SYMM,   /* side m n (hemm too) */
	LIBFLOPS_SYRK,   /* n k (herk too) */
	LIBFLOPS_SYR2K,  /* n k (her2k too) */
	LIBFLOPS_TRMM,   /* side m n (trsm too) */
	LIBFLOPS_GEMV,   /* m n */
	LIBFLOPS_SYMV,   /* n (hemv too) */
	LIBFLOPS_TRMV,   /* n (trsv too) */
	LIBFLOPS_GER,    /* m n (geru, gerc too) */
};

struct libflops_func {
	const char *name;  /* the symbol: cblas_dgemm, dgemm_, dnnl_sgemm, ... */
	uint8_t op;        /* enum libflops_op */
	uint8_t prec;      /* enum libflops_prec */
	uint8_t cplx;      /* complex arithmetic: counts per libflops_count() (not "complex": <complex.h> makes that a macro) */
};

/* Every function the counting library interposes, in id order (an id is
 * the index here; the region's counters use the same order). */
extern const struct libflops_func libflops_funcs[];
extern const unsigned libflops_nfuncs;
#define LIBFLOPS_MAX_FUNCS 128

/* FLOPs of one call of operation @op: @m, @n, @k as the family needs them
 * (unused ones ignored), @left for the side of SYMM/TRMM (1: A on the
 * left). Real counts follow LAPACK Working Note 41 (2mnk for a GEMM, kn(n+1)
 * for a SYRK, nm^2 for a left TRMM/TRSM, ...); a complex call counts 6 FLOPs
 * per multiplication and 2 per addition (8mnk for a GEMM; GEMM3M counts as
 * a GEMM: the FLOPs of the operation, not of the 3M algorithm). Negative
 * dimensions (an invalid call, which the library rejects) count 0; a count
 * too large for 64 bits saturates. */
uint64_t libflops_count(unsigned op, int complex, int left, int64_t m, int64_t n, int64_t k);

/* One function's counters in one process: they only grow. */
struct libflops_counter {
	uint64_t calls;
	uint64_t flops;
};

/* A process's counters. pid is claimed with a compare-and-swap (0: free);
 * active is set by the counting library when it is loaded in that process
 * (libmfu claims the slot too, but counters nobody counts are unknown, not
 * 0: libmfu reports them only when active). */
struct libflops_proc {
	int32_t pid;
	uint32_t active;
	uint64_t nused;        /* 1 + the highest id counted so far: the markers
				* sum the counters below it only */
	struct libflops_counter f[LIBFLOPS_MAX_FUNCS];
};

/* A copy of one process's table at a step boundary. seq is the snapshot's
 * index + 1 once written, 0 while a writer fills it (a seqlock: the reader
 * checks it before and after its copy). */
struct libflops_snap {
	uint64_t seq;
	int32_t pid;
	uint32_t pad;
	struct libflops_counter f[LIBFLOPS_MAX_FUNCS];
};

struct libflops_region {
	uint64_t magic;
	uint32_t version;
	uint32_t header_size;   /* bytes before procs[] */
	uint32_t nfuncs;        /* libflops_nfuncs of the recorder: must match */
	uint32_t max_procs;
	uint32_t nsnap;
	uint32_t proc_size;     /* sizeof(struct libflops_proc) */
	uint32_t snap_size;     /* sizeof(struct libflops_snap) */
	uint32_t loaded;        /* processes in which the counting library started */
	uint64_t procs_full;    /* processes that found no free slot */
	uint8_t pad1[64 - 48];
	uint64_t snap_head;     /* next snapshot index (writers) */
	uint8_t pad2[56];
	struct libflops_proc procs[LIBFLOPS_MAX_PROCS];
	struct libflops_snap snaps[LIBFLOPS_NSNAP];
};

/* Bytes of the region. */
size_t libflops_region_size(void);

/* Initialise a zeroed region (the recorder). */
void libflops_region_init(struct libflops_region *r);

/* Check that @mem (of @size bytes) is a region this code understands.
 * Returns 0 or -EPROTO / -EINVAL. */
int libflops_region_check(const void *mem, size_t size);

/* Map the region named by MFU_LIBFLOPS_FD in the environment, read-write.
 * Returns it, or NULL (no variable, not a region, not ours). */
struct libflops_region *libflops_region_attach(void);

/* The slot of process @pid: the one it holds, else a free one claimed for
 * it, else one whose process has exited (its counters start again from
 * 0: a process's readings are only ever subtracted from its own); NULL when
 * all are held by live processes (counted in procs_full). */
struct libflops_proc *libflops_proc_for(struct libflops_region *r, int32_t pid);

/* The slot of @pid if it has one (the recorder), else NULL. */
const struct libflops_proc *libflops_proc_find(const struct libflops_region *r, int32_t pid);

/* Sums of @p's counters by precision into @out: out[0] calls, then FLOPs
 * (ops for int8) per enum libflops_prec. */
#define LIBFLOPS_WORDS (1 + LIBFLOPS_NPREC)
void libflops_sum(const struct libflops_proc *p, uint64_t out[LIBFLOPS_WORDS]);

/* Copy @p's table into the next snapshot; returns its index + 1 (0 never
 * happens). */
uint64_t libflops_snapshot(struct libflops_region *r, const struct libflops_proc *p);

/* The recorder: copy snapshot @id (as libflops_snapshot() returned it) into
 * @out. Returns 0, or -ESTALE when it was overwritten before or during the
 * copy (the recorder fell NSNAP step boundaries behind). */
int libflops_snapshot_read(const struct libflops_region *r, uint64_t id, struct libflops_snap *out);

/* Name of a precision: fp64, fp32, bf16, fp16, int8. */
const char *libflops_prec_name(unsigned prec);

#endif
