/*
 * Library-call FLOPs: what the counting library (libmfu-libflops.so, which
 * mfu-record preloads into the target) counts, and the shared memory in
 * which it counts it.
 *
 * The counting library interposes the BLAS entry points (levels 1 to 3,
 * CBLAS and Fortran), LAPACK's (Fortran and LAPACKE), oneDNN's GEMM calls
 * and the execution of oneDNN primitives (dnnl_primitive_execute: counted
 * under the primitive's kind, propagation and data type, as if each were a
 * function of its own), computes each call's FLOPs from its arguments
 * (libflops_count()) or from the primitive's descriptor
 * (libflops_dnnl_count()) and adds them, with the call, to its process's
 * counters in a region that
 * mfu-record created (a memfd whose number is in MFU_LIBFLOPS_FD). Functions
 * whose FLOPs cannot be stated from their arguments (iterative LAPACK
 * drivers, oneDNN primitives other than convolutions, inner products and
 * matrix products: LIBFLOPS_UNKNOWN) count their calls only, and a sum that
 * includes them says how many (LIBFLOPS_W_UNKNOWN): FLOPs unknown, not 0.
 * The counters only grow, like a hardware counter: libmfu reads them at
 * every step and phase boundary into the marker record (whole process,
 * every thread), and copies the counters of the functions called so far at
 * step boundaries into a snapshot ring, from which the recorder makes the
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
#define LIBFLOPS_ENV_ID "MFU_LIBFLOPS_ID" /* the region's memfd, "DEV:INO" (handoff.h) */
#define LIBFLOPS_MAGIC 0x73706f6c66624c6dULL /* "mLbflops" */
#define LIBFLOPS_VERSION 4 /* 4: calls begun (libflops_proc.begun); 3: oneDNN primitives; 2: LAPACK and BLAS level 1, the list of functions counted, compact snapshots */
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
	/* BLAS level 1: n elements */
	LIBFLOPS_DOT,    /* n (dotu, dotc too) */
	LIBFLOPS_AXPY,   /* n */
	LIBFLOPS_SCAL,   /* n: a scalar of the vector's type */
	LIBFLOPS_RSCAL,  /* n: a real scalar times a complex vector (csscal, zdscal) */
	LIBFLOPS_NRM2,   /* n */
	LIBFLOPS_ASUM,   /* n */
	LIBFLOPS_ROT,    /* n: a plane rotation with real c, s (csrot, zdrot too) */
	/* LAPACK (LAPACK Working Note 41); nrhs is passed as k */
	LIBFLOPS_GETRF,  /* m n */
	LIBFLOPS_GETRS,  /* n nrhs */
	LIBFLOPS_GESV,   /* n nrhs: GETRF + GETRS */
	LIBFLOPS_GETRI,  /* n */
	LIBFLOPS_POTRF,  /* n */
	LIBFLOPS_POTRS,  /* n nrhs */
	LIBFLOPS_POSV,   /* n nrhs: POTRF + POTRS */
	LIBFLOPS_POTRI,  /* n */
	LIBFLOPS_GEQRF,  /* m n */
	LIBFLOPS_ORGQR,  /* m n k (ungqr too) */
	LIBFLOPS_ORMQR,  /* side m n k (unmqr too) */
	LIBFLOPS_TRTRI,  /* n */
	LIBFLOPS_TRTRS,  /* n nrhs */
	LIBFLOPS_SYTRF,  /* n (hetrf too) */
	LIBFLOPS_SYTRS,  /* n nrhs (hetrs too) */
	LIBFLOPS_SYSV,   /* n nrhs: SYTRF + SYTRS (hesv too) */
	LIBFLOPS_GELS,   /* m n nrhs: QR (or LQ) + ORMQR + TRTRS */
	/* calls counted, FLOPs unknown (iterative drivers: syevd, gesdd, ...;
	 * oneDNN primitives of other kinds: pooling, eltwise, ...) */
	LIBFLOPS_UNKNOWN,
	/* a oneDNN primitive whose FLOPs come from its descriptor's shapes
	 * (libflops_dnnl_count(), not libflops_count()) */
	LIBFLOPS_DNNL,
	/* calls counted, no arithmetic (oneDNN's reorder, concat, shuffle:
	 * data movement): 0 FLOPs, known */
	LIBFLOPS_NOARITH,
};

struct libflops_func {
	const char *name;  /* the symbol: cblas_dgemm, dgemm_, dnnl_sgemm, ...; for a oneDNN
			    * primitive "dnnl_primitive_execute:convolution_forward:f32", ... */
	uint8_t op;        /* enum libflops_op */
	uint8_t prec;      /* enum libflops_prec */
	uint8_t cplx;      /* complex arithmetic: counts per libflops_count() (not "complex": <complex.h> makes that a macro) */
};

/* Every function the counting library interposes, in id order (an id is
 * the index here; the region's counters use the same order). */
extern const struct libflops_func libflops_funcs[];
extern const unsigned libflops_nfuncs;
#define LIBFLOPS_MAX_FUNCS 512  /* ids fit in 16 bits */
#define LIBFLOPS_SNAP_FUNCS 128 /* functions a snapshot holds: those a process called first */

/* FLOPs of one call of operation @op: @m, @n, @k as the family needs them
 * (unused ones ignored; LAPACK's nrhs is @k), @left for the side of
 * SYMM/TRMM/ORMQR (1: A or Q on the left). Real counts follow LAPACK Working
 * Note 41, multiplications plus additions (2mnk for a GEMM, kn(n+1) for a
 * SYRK, nm^2 for a left TRMM/TRSM, 2n for a DOT, about 2n^3/3 for a square
 * GETRF, ...); a complex call counts 6 FLOPs per multiplication and 2 per
 * addition (8mnk for a GEMM; GEMM3M counts as a GEMM: the FLOPs of the
 * operation, not of the 3M algorithm); a level-1 routine that applies real
 * arithmetic to a complex vector (scnrm2, csscal, csrot) counts that real
 * arithmetic on its 2n numbers. docs/flops.md has every formula. Negative
 * dimensions (an invalid call, which the library rejects) count 0, as does
 * LIBFLOPS_UNKNOWN (whose count is not 0 but unknown: the caller knows);
 * a count too large for 64 bits saturates. */
uint64_t libflops_count(unsigned op, int complex, int left, int64_t m, int64_t n, int64_t k);

/* oneDNN primitives counted from their shapes (libflops_dnnl_count()). */
enum libflops_dnnl_kind {
	LIBFLOPS_DNNL_CONV,    /* convolution, any propagation */
	LIBFLOPS_DNNL_DECONV,  /* deconvolution (transposed convolution) */
	LIBFLOPS_DNNL_IP,      /* inner product */
	LIBFLOPS_DNNL_MATMUL,  /* matrix product, batched or broadcast */
};

#define LIBFLOPS_DNNL_MAX_DIMS 12 /* DNNL_MAX_NDIMS */

/* The logical dimensions of a primitive's tensor, oneDNN's order: data
 * N, C, spatial...; weights [G,] O, I, spatial...; matmul ..., rows,
 * columns. */
struct libflops_dims {
	int n;
	int64_t d[LIBFLOPS_DNNL_MAX_DIMS];
};

/* FLOPs of one execution of a oneDNN primitive of kind @kind (enum
 * libflops_dnnl_kind), from the dimensions of its source, weights and
 * destination (their gradients for a backward propagation: diff_src
 * for backward data, diff_weights for backward weights, diff_dst), into
 * @flops. Each multiply-add is 2 FLOPs, bias additions and post-ops are
 * not counted (as for a GEMM's beta C), and padding counts as data (the
 * output's shape, which strides, dilation and padding made, is what is
 * computed): a convolution 2 x prod(weights) x N x prod(dst spatial) (2 N
 * OC OH OW (IC / G) KH KW, whatever the propagation: backward data and
 * backward weights do the same products), a deconvolution 2 x
 * prod(weights) x N x prod(src spatial), an inner product 2 x
 * prod(weights) x N, a matmul 2 x prod(dst) x K (K, the source's last
 * dimension). Saturates at UINT64_MAX. Returns 0, or -EINVAL for
 * dimensions no such primitive has (a rank out of range, a negative
 * dimension: a run-time one), @flops then untouched. */
int libflops_dnnl_count(unsigned kind, const struct libflops_dims *src, const struct libflops_dims *wei,
			const struct libflops_dims *dst, uint64_t *flops);

/* One function's counters in one process: they only grow. */
struct libflops_counter {
	uint64_t calls;
	uint64_t flops;
};

/* A process's counters. pid is claimed with a compare-and-swap (0: free);
 * active is set by the counting library when it is loaded in that process
 * (libmfu claims the slot too, but counters nobody counts are unknown, not
 * 0: libmfu reports them only when active). A program calls a few of the
 * functions: the ones it has called are listed, in the order of their first
 * call, and the markers and snapshots read those only. */
struct libflops_proc {
	int32_t pid;
	uint32_t active;
	uint32_t nlist;        /* entries of list[] taken (some may still be 0) */
	uint32_t pad;
	uint16_t list[LIBFLOPS_MAX_FUNCS];  /* id + 1 of each function counted;
					     * 0 while its entry is written */
	uint8_t listed[LIBFLOPS_MAX_FUNCS]; /* 1 once the function has an entry */
	struct libflops_counter f[LIBFLOPS_MAX_FUNCS];
	/* Version 4: the outermost calls begun (added at their entry), less
	 * those that returned without being counted (rejected, a workspace
	 * query, a failed execution): begun minus the sum of f[].calls is the
	 * calls running now, which the recorder stores with each interval's
	 * reading (lib_reading.lib_calls_begun), since a call's FLOPs are
	 * added when it returns. */
	uint64_t begun;
};

/* A copy of one process's counters at a step boundary: those of the first
 * n functions of its list. seq is the snapshot's index + 1 once written, 0
 * while a writer fills it (a seqlock: the reader checks it before and after
 * its copy). */
struct libflops_snap {
	uint64_t seq;
	int32_t pid;
	uint32_t n;            /* entries below */
	uint32_t nlist;        /* n, or the process's list length when its
				* functions did not fit (the copy is incomplete) */
	uint32_t pad;
	uint16_t id[LIBFLOPS_SNAP_FUNCS];
	struct libflops_counter f[LIBFLOPS_SNAP_FUNCS];
};

/* A snapshot as the recorder reads it: every function's counters (0 for
 * those not called yet). */
struct libflops_table {
	uint64_t seq;
	int32_t pid;
	struct libflops_counter f[LIBFLOPS_MAX_FUNCS];
};

/* A line of text from the program for the run's notes:
 * mfu.step(flops="count") says where its declaration came from, and what it
 * could not count (mfu_libflops_note(), exported by the counting library).
 * seq is the note's index + 1 once written, 0 before. The recorder
 * reads the text as untrusted: up to the first NUL or the end of the
 * field, printable ASCII only (libflops_note_read()). */
#define LIBFLOPS_NNOTES 16
#define LIBFLOPS_NOTE_LEN 504
#define LIBFLOPS_NOTE_MISSING 1 /* the note explains FLOPs not counted or not declared */
struct libflops_note {
	uint32_t seq;
	int32_t pid;
	uint32_t flags;         /* LIBFLOPS_NOTE_MISSING */
	uint32_t pad;
	char text[LIBFLOPS_NOTE_LEN];
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
	uint32_t nnotes;        /* LIBFLOPS_NNOTES */
	uint32_t note_size;     /* sizeof(struct libflops_note) */
	uint8_t pad1[64 - 56];
	uint64_t snap_head;     /* next snapshot index (writers) */
	uint8_t pad2[56];
	struct libflops_proc procs[LIBFLOPS_MAX_PROCS];
	struct libflops_snap snaps[LIBFLOPS_NSNAP];
	uint64_t note_head;     /* notes claimed; beyond LIBFLOPS_NNOTES, dropped */
	uint8_t pad3[56];
	struct libflops_note notes[LIBFLOPS_NNOTES];
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

/* How many entries of @p's function list are taken (some may still be
 * being written), and entry @i as a function id, or -1 while it is written.
 * The list only grows while its process holds the slot, in the order of
 * first calls. */
uint32_t libflops_list_len(const struct libflops_proc *p);
int libflops_list_id(const struct libflops_proc *p, uint32_t i);

/* Zero @p's counters and list for a new owner (who set its pid first). */
void libflops_proc_clear(struct libflops_proc *p);

/* The slot of @pid if it has one (the recorder), else NULL. */
const struct libflops_proc *libflops_proc_find(const struct libflops_region *r, int32_t pid);

/* Sums of @p's counters into @out: out[LIBFLOPS_W_CALLS] all calls, then
 * FLOPs (ops for int8) per enum libflops_prec from LIBFLOPS_W_FLOPS, then
 * out[LIBFLOPS_W_UNKNOWN] the calls among them whose FLOPs are unknown (the
 * FLOP words then leave out part of the work). */
#define LIBFLOPS_W_CALLS 0
#define LIBFLOPS_W_FLOPS 1
#define LIBFLOPS_W_UNKNOWN (1 + LIBFLOPS_NPREC)
#define LIBFLOPS_WORDS (2 + LIBFLOPS_NPREC)
void libflops_sum(const struct libflops_proc *p, uint64_t out[LIBFLOPS_WORDS]);

/* List function @id (< LIBFLOPS_NIDS) in @p, once: its first count. The
 * entry is written after the counts (release): a reader that sees it sees
 * them. Inline in libflops_add(), for the counting library's wrappers (see
 * count() in libflops_shim.c). */
static inline __attribute__((always_inline)) void libflops_list(struct libflops_proc *p, unsigned id)
{
	uint8_t zero = 0;
	if (__atomic_compare_exchange_n(&p->listed[id], &zero, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
		uint32_t i = __atomic_fetch_add(&p->nlist, 1, __ATOMIC_RELAXED);
		if (i < LIBFLOPS_MAX_FUNCS)
			__atomic_store_n(&p->list[i], (uint16_t)(id + 1), __ATOMIC_RELEASE);
	}
}

/* The same for any @id (one out of the table is ignored). */
void libflops_list_add(struct libflops_proc *p, unsigned id);

/* Add one call of function @id (< LIBFLOPS_NIDS) and its @flops to @p:
 * what the counting library does after each call it counts, so inline (two
 * atomic additions; listing the function happens once). */
static inline __attribute__((always_inline)) void libflops_add(struct libflops_proc *p, unsigned id,
								   uint64_t flops)
{
	__atomic_fetch_add(&p->f[id].calls, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&p->f[id].flops, flops, __ATOMIC_RELAXED);
	if (__builtin_expect(!__atomic_load_n(&p->listed[id], __ATOMIC_RELAXED), 0))
		libflops_list(p, id);
}

/* An outermost call of a counted function begins in @p (the counting
 * library's wrappers, before the real call: one relaxed addition). */
static inline __attribute__((always_inline)) void libflops_begin(struct libflops_proc *p)
{
	__atomic_fetch_add(&p->begun, 1, __ATOMIC_RELAXED);
}

/* The call begun in @p returned without being counted (libflops_add() not
 * called for it): no longer running. */
static inline __attribute__((always_inline)) void libflops_unbegin(struct libflops_proc *p)
{
	__atomic_fetch_sub(&p->begun, 1, __ATOMIC_RELAXED);
}

/* The calls of @p running now: begun minus the counted calls of the
 * functions listed, or 0. Read the calls first (libflops_sum() or the
 * reader's own copy) and pass their sum as @calls: every call counted then
 * had begun before, so a later read of begun is not below it (counting
 * adds a call after its begin; a region the target wrote otherwise, or a
 * call begun before the counting library had the slot, reads 0). */
uint64_t libflops_running(const struct libflops_proc *p, uint64_t calls);

/* Copy the counters of @p's listed functions into the next snapshot;
 * returns its index + 1 (0 never happens). */
uint64_t libflops_snapshot(struct libflops_region *r, const struct libflops_proc *p);

/* The recorder: copy snapshot @id (as libflops_snapshot() returned it) into
 * @out. Returns 0; -ESTALE when it was overwritten before or during the
 * copy (the recorder fell NSNAP step boundaries behind); -ENOSPC when the
 * process had called more than LIBFLOPS_SNAP_FUNCS functions (the copy
 * holds the first ones only); -EPROTO when it is not one this code wrote
 * (the region is shared with the target). */
int libflops_snapshot_read(const struct libflops_region *r, uint64_t id, struct libflops_table *out);

/* Add a note from process @pid to @r: @text (truncated to
 * LIBFLOPS_NOTE_LEN - 1 bytes), @flags (LIBFLOPS_NOTE_MISSING). Returns 0,
 * or -ENOSPC once LIBFLOPS_NNOTES notes were added (the note is
 * dropped, and counted). */
int libflops_note_add(struct libflops_region *r, int32_t pid, unsigned flags, const char *text);

/* The recorder: note @i (< LIBFLOPS_NNOTES) into @buf (@len bytes, NUL
 * terminated; bytes that are not printable ASCII become '?') and its
 * flags into @flags. Returns 0, or -ENOENT when it was not written (yet). */
int libflops_note_read(const struct libflops_region *r, unsigned i, char *buf, size_t len, unsigned *flags);

/* Name of a precision: fp64, fp32, bf16, fp16, int8. */
const char *libflops_prec_name(unsigned prec);

#endif
