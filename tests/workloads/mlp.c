/*
 * mlp.c: the demo workload. A multilayer perceptron trained with plain SGD
 * in plain C, marked for mfu-record: every training step is a step, with
 * phases data, forward, backward and optimizer, and declares its model FLOPs
 * and bytes (per step and per phase) so that mfu-report can print MFU.
 *
 *   256 inputs -> 512 ReLU -> 512 ReLU -> 10 logits, softmax cross-entropy,
 *   batch 64, fp32, no biases.
 *
 * The data are synthetic and deterministic (fixed-seed PRNG): a pool of
 * Gaussian inputs labelled by the argmax of a random linear "teacher", so the
 * task is learnable and the loss goes down. See docs/demo.md for the FLOP
 * accounting; `--count-flops` checks it against an instrumented scalar step.
 */
#define _POSIX_C_SOURCE 200809L /* pthread barriers */

#include <mfu.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#define N_IN 256
#define N_H1 512
#define N_H2 512
#define N_OUT 10
#define BATCH 64
#define POOL 4096 /* training examples; batches are drawn from them */
#define LR 0.05f
#define MAX_THREADS 64
#define SEED 0x6d6675ull /* "mfu" */

/* Weight matrices are stored row-major as [fan_in][fan_out], all three in one
 * parameter array so that the optimizer is a single loop. */
#define P1 ((long)N_IN * N_H1)
#define P2 ((long)N_H1 * N_H2)
#define P3 ((long)N_H2 * N_OUT)
#define NPARAM (P1 + P2 + P3)

/*
 * Model FLOPs: the multiplies and adds the training algorithm performs, as
 * counted by `--count-flops` (see count_step()). A matmul C[MxN] = A[MxK] B[KxN]
 * is M*N*K multiplies and M*N*K adds = 2*M*N*K, with M = BATCH here.
 *   forward:   one matmul per layer: 2*B*P, P = parameters (no biases).
 *   backward:  per layer the weight gradient dW = A^T dZ (2*B*P_l) and the
 *              gradient of the layer's input dA = dZ W^T (2*B*P_l), except
 *              layer 1, whose input is the data: nothing needs dL/dX, so it is
 *              not computed and not counted. 2*B*P + 2*B*(P2 + P3).
 *   optimizer: w -= lr * g, one multiply and one subtract per parameter: 2*P.
 * Not counted, by the usual MFU convention ("6 x parameters x tokens"): ReLU
 * (a compare and select) and the softmax/cross-entropy head (B * 10 exp and
 * 3200 multiplies/adds/divides, under 0.003% of the total); --count-flops
 * reports the head's arithmetic separately.
 */
#define FWD_FLOPS (2.0 * BATCH * NPARAM)
#define BWD_FLOPS (2.0 * BATCH * NPARAM + 2.0 * BATCH * (P2 + P3))
#define OPT_FLOPS (2.0 * NPARAM)
#define STEP_FLOPS (FWD_FLOPS + BWD_FLOPS + OPT_FLOPS)

/*
 * Model bytes: the step's compulsory traffic, every fp32 parameter read once
 * and written once (8 bytes per parameter). The read is attributed to forward,
 * which touches the weights first; the write to the optimizer, the only phase
 * that changes them. Backward reads the weights again and writes gradients,
 * but none of that is compulsory (a cache as big as the model would absorb
 * it), so backward declares 0 bytes. The phases add up to the step exactly.
 */
#define FWD_BYTES (4.0 * NPARAM)
#define BWD_BYTES 0.0
#define OPT_BYTES (4.0 * NPARAM)
#define STEP_BYTES (FWD_BYTES + BWD_BYTES + OPT_BYTES)

struct net {
	float *w;  /* NPARAM: W1 | W2 | W3 */
	float *g;  /* NPARAM: their gradients */
	float *x;  /* BATCH x N_IN: the batch */
	int *y;    /* BATCH: its labels */
	float *h1; /* BATCH x N_H1: ReLU(x W1) */
	float *h2; /* BATCH x N_H2: ReLU(h1 W2) */
	float *p;  /* BATCH x N_OUT: softmax(h2 W3) */
	float *dz; /* BATCH x max width: gradient wrt the current layer's output */
	float *dzt; /* max width x BATCH: dz transposed */
	float *dat; /* max width x BATCH: gradient wrt the layer's input, transposed */
	float *da; /* BATCH x max width: the same, untransposed */
};

#define MAXW N_H1 /* the widest layer */
_Static_assert(MAXW >= N_IN && MAXW >= N_H2 && MAXW >= N_OUT, "MAXW is the widest layer");

static float *W1(const struct net *n) { return n->w; }
static float *W2(const struct net *n) { return n->w + P1; }
static float *W3(const struct net *n) { return n->w + P1 + P2; }

/* ---- deterministic random numbers (splitmix64) ---- */

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in (0, 1). */
static double rng_unit(uint64_t *s)
{
	return ((double)(rng_next(s) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double rng_gauss(uint64_t *s)
{
	double u = rng_unit(s), v = rng_unit(s);
	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* ---- the fast kernels ---- */

/*
 * y[0..n) += a * x[0..n). The inner loop has a constant trip count so that
 * gcc -O2 (whose "very cheap" vectorizer cost model refuses loops needing a
 * scalar epilogue) turns it into SSE; restrict rules out the alias check.
 */
static inline void axpy(int n, float a, const float *restrict x, float *restrict y)
{
	int j = 0;

	for (; j + 16 <= n; j += 16)
		for (int l = 0; l < 16; l++)
			y[j + l] += a * x[j + l];
	for (; j < n; j++)
		y[j] += a * x[j];
}

/*
 * y[0..n) += a0 x0 + a1 x1 + a2 x2 + a3 x3, added in that order (so exactly
 * four axpy() calls, FLOP for FLOP and bit for bit), but loading and storing
 * y once instead of four times: the single axpy is bound by loads and stores.
 */
static inline void axpy4(int n, const float a[4], const float *restrict x0,
			 const float *restrict x1, const float *restrict x2,
			 const float *restrict x3, float *restrict y)
{
	int j = 0;

	for (; j + 16 <= n; j += 16)
		for (int l = 0; l < 16; l++)
			y[j + l] = (((y[j + l] + a[0] * x0[j + l]) + a[1] * x1[j + l]) +
				    a[2] * x2[j + l]) + a[3] * x3[j + l];
	for (; j < n; j++)
		y[j] = (((y[j] + a[0] * x0[j]) + a[1] * x1[j]) + a[2] * x2[j]) + a[3] * x3[j];
}

/* C[m0..m1) x n = A[m0..m1) x k . B[k x n], where A's element (i, p) is at
 * a[i * ai + p * ap] (so A may be stored transposed). i-k-j order: row i of C
 * stays in L1 while rows of B stream past it, and the inner loop is an axpy
 * over contiguous rows of B and C. */
static void gemm(int m0, int m1, int n, int k, const float *restrict a, long ai, long ap,
		 const float *restrict b, float *restrict c)
{
	for (int i = m0; i < m1; i++) {
		float *ci = c + (long)i * n;
		const float *arow = a + (long)i * ai;
		int p = 0;

		memset(ci, 0, sizeof(float) * (size_t)n);
		for (; p + 4 <= k; p += 4) {
			const float a4[4] = { arow[p * ap], arow[(p + 1) * ap], arow[(p + 2) * ap],
					      arow[(p + 3) * ap] };
			const float *bp = b + (long)p * n;
			axpy4(n, a4, bp, bp + n, bp + 2L * n, bp + 3L * n, ci);
		}
		for (; p < k; p++)
			axpy(n, arow[p * ap], b + (long)p * n, ci);
	}
}

static void transpose(int rows, int cols, const float *restrict a, float *restrict t)
{
	for (int i = 0; i < rows; i++)
		for (int j = 0; j < cols; j++)
			t[(long)j * rows + i] = a[(long)i * cols + j];
}

/* ---- optional worker threads: a barrier-driven pool ---- */

/* One piece of matmul work, split by rows of its output over the threads. */
struct job {
	int kind; /* JOB_NN or JOB_TN */
	int rows, m, n, k;
	const float *a, *b;
	float *c;
};

enum { JOB_NN, JOB_TN, JOB_EXIT };

static struct {
	int n;
	pthread_t tid[MAX_THREADS];
	pthread_barrier_t start, done;
	struct job job;
} pool = { .n = 1 };

static void job_run(const struct job *j, int part, int nparts)
{
	int r0 = (int)((long)j->rows * part / nparts);
	int r1 = (int)((long)j->rows * (part + 1) / nparts);

	if (j->kind == JOB_NN) /* A is m x k */
		gemm(r0, r1, j->n, j->k, j->a, j->k, 1, j->b, j->c);
	else /* A is stored k x m */
		gemm(r0, r1, j->n, j->k, j->a, 1, j->m, j->b, j->c);
}

static void *worker(void *arg)
{
	int part = (int)(intptr_t)arg;

	for (;;) {
		pthread_barrier_wait(&pool.start);
		if (pool.job.kind == JOB_EXIT)
			return NULL;
		job_run(&pool.job, part, pool.n);
		pthread_barrier_wait(&pool.done);
	}
}

/* Run @j on all threads (the caller does part 0). Splitting the output rows,
 * never the reduction, keeps the FLOPs identical to the single-thread path. */
static void job_exec(const struct job *j)
{
	if (pool.n == 1) {
		job_run(j, 0, 1);
		return;
	}
	pool.job = *j;
	pthread_barrier_wait(&pool.start);
	job_run(j, 0, pool.n);
	pthread_barrier_wait(&pool.done);
}

static int pool_start(int n)
{
	int err;

	if (n <= 1)
		return 0;
	if ((err = pthread_barrier_init(&pool.start, NULL, (unsigned)n)) ||
	    (err = pthread_barrier_init(&pool.done, NULL, (unsigned)n)))
		return -err;
	for (int i = 1; i < n; i++) {
		/* On failure the threads already started stay parked on the start
		 * barrier; the caller exits, which ends them. */
		if ((err = pthread_create(&pool.tid[i], NULL, worker, (void *)(intptr_t)i)))
			return -err;
	}
	pool.n = n;
	return 0;
}

static void pool_stop(void)
{
	if (pool.n == 1)
		return;
	pool.job.kind = JOB_EXIT;
	pthread_barrier_wait(&pool.start);
	for (int i = 1; i < pool.n; i++)
		pthread_join(pool.tid[i], NULL);
	pthread_barrier_destroy(&pool.start);
	pthread_barrier_destroy(&pool.done);
	pool.n = 1;
}

/* ---- the network ---- */

static float *falloc(long n)
{
	size_t sz = ((size_t)n * sizeof(float) + 63) & ~(size_t)63;
	float *p = aligned_alloc(64, sz);

	if (p)
		memset(p, 0, sz);
	return p;
}

static void net_free(struct net *n)
{
	free(n->w);
	free(n->g);
	free(n->x);
	free(n->y);
	free(n->h1);
	free(n->h2);
	free(n->p);
	free(n->dz);
	free(n->dzt);
	free(n->dat);
	free(n->da);
	memset(n, 0, sizeof(*n));
}

/* He-initialised weights from @seed. 0 or -ENOMEM. */
static int net_init(struct net *n, uint64_t seed)
{
	memset(n, 0, sizeof(*n));
	n->w = falloc(NPARAM);
	n->g = falloc(NPARAM);
	n->x = falloc((long)BATCH * N_IN);
	n->y = calloc(BATCH, sizeof(int));
	n->h1 = falloc((long)BATCH * N_H1);
	n->h2 = falloc((long)BATCH * N_H2);
	n->p = falloc((long)BATCH * N_OUT);
	n->dz = falloc((long)BATCH * MAXW);
	n->dzt = falloc((long)BATCH * MAXW);
	n->dat = falloc((long)BATCH * MAXW);
	n->da = falloc((long)BATCH * MAXW);
	if (!n->w || !n->g || !n->x || !n->y || !n->h1 || !n->h2 || !n->p || !n->dz ||
	    !n->dzt || !n->dat || !n->da) {
		net_free(n);
		return -ENOMEM;
	}
	static const struct { long off, count; int fan_in; } layer[] = {
		{ 0, P1, N_IN }, { P1, P2, N_H1 }, { P1 + P2, P3, N_H2 },
	};
	for (int l = 0; l < 3; l++) {
		double sd = sqrt(2.0 / layer[l].fan_in);
		for (long i = 0; i < layer[l].count; i++)
			n->w[layer[l].off + i] = (float)(sd * rng_gauss(&seed));
	}
	return 0;
}

struct data {
	float *x; /* POOL x N_IN */
	int *y;   /* POOL */
};

/* The pool: Gaussian inputs, labels from a random linear teacher. */
static int data_init(struct data *d, uint64_t seed)
{
	float *teacher = falloc((long)N_IN * N_OUT);

	d->x = falloc((long)POOL * N_IN);
	d->y = calloc(POOL, sizeof(int));
	if (!teacher || !d->x || !d->y) {
		free(teacher);
		free(d->x);
		free(d->y);
		return -ENOMEM;
	}
	for (long i = 0; i < (long)N_IN * N_OUT; i++)
		teacher[i] = (float)rng_gauss(&seed);
	for (long s = 0; s < POOL; s++) {
		float *x = d->x + s * N_IN;
		double best = -INFINITY;
		for (int i = 0; i < N_IN; i++)
			x[i] = (float)rng_gauss(&seed);
		for (int c = 0; c < N_OUT; c++) {
			double v = 0;
			for (int i = 0; i < N_IN; i++)
				v += (double)x[i] * teacher[(long)i * N_OUT + c];
			if (v > best) {
				best = v;
				d->y[s] = c;
			}
		}
	}
	free(teacher);
	return 0;
}

static void data_free(struct data *d)
{
	free(d->x);
	free(d->y);
}

/* The data phase: copy BATCH examples drawn at random from the pool. */
static void load_batch(struct net *n, const struct data *d, uint64_t *rng)
{
	for (int b = 0; b < BATCH; b++) {
		long s = (long)(rng_next(rng) % POOL);
		memcpy(n->x + (long)b * N_IN, d->x + s * N_IN, sizeof(float) * N_IN);
		n->y[b] = d->y[s];
	}
}

static void relu(float *a, long count)
{
	for (long i = 0; i < count; i++)
		a[i] = a[i] > 0 ? a[i] : 0;
}

/* Turn logits into probabilities in place; return the mean cross-entropy. */
static double softmax_xent(float *p, const int *y)
{
	double loss = 0;

	for (int b = 0; b < BATCH; b++) {
		float *r = p + (long)b * N_OUT, mx = r[0], sum = 0;
		for (int c = 1; c < N_OUT; c++)
			mx = r[c] > mx ? r[c] : mx;
		for (int c = 0; c < N_OUT; c++) {
			r[c] = expf(r[c] - mx);
			sum += r[c];
		}
		for (int c = 0; c < N_OUT; c++)
			r[c] /= sum;
		loss -= log(r[y[b]] > 1e-30f ? r[y[b]] : 1e-30f);
	}
	return loss / BATCH;
}

static double forward(struct net *n)
{
	job_exec(&(struct job){ JOB_NN, BATCH, BATCH, N_H1, N_IN, n->x, W1(n), n->h1 });
	relu(n->h1, (long)BATCH * N_H1);
	job_exec(&(struct job){ JOB_NN, BATCH, BATCH, N_H2, N_H1, n->h1, W2(n), n->h2 });
	relu(n->h2, (long)BATCH * N_H2);
	job_exec(&(struct job){ JOB_NN, BATCH, BATCH, N_OUT, N_H2, n->h2, W3(n), n->p });
	return softmax_xent(n->p, n->y);
}

/* dz <- the gradient of the mean loss wrt the logits: (p - onehot(y)) / B. */
static void loss_grad(const float *p, const int *y, float *dz)
{
	for (int b = 0; b < BATCH; b++)
		for (int c = 0; c < N_OUT; c++)
			dz[b * N_OUT + c] = (p[b * N_OUT + c] - (c == y[b])) * (1.0f / BATCH);
}

/*
 * One layer's backward: n->dz (BATCH x nout) holds the gradient wrt the
 * layer's output, @a (BATCH x nin) is its input, @w (nin x nout) its weights.
 * Writes the weight gradient to @gw. With @need_input_grad (a hidden layer:
 * @a is the previous layer's ReLU output), leaves the gradient wrt the
 * previous layer's pre-activation in n->dz (BATCH x nin).
 */
static void backward_layer(struct net *n, int nin, int nout, const float *a, const float *w,
			   float *gw, int need_input_grad)
{
	job_exec(&(struct job){ JOB_TN, nin, nin, nout, BATCH, a, n->dz, gw });
	if (!need_input_grad)
		return;
	/* dA = dZ W^T as dA^T = W dZ^T, so that the inner loop runs along the
	 * batch (contiguous) instead of being a dot-product reduction, which
	 * gcc will not vectorize without -ffast-math. */
	transpose(BATCH, nout, n->dz, n->dzt);
	job_exec(&(struct job){ JOB_NN, nin, nin, BATCH, nout, w, n->dzt, n->dat });
	transpose(nin, BATCH, n->dat, n->da);
	/* Through the ReLU: a > 0 exactly where the pre-activation was > 0. */
	for (long i = 0; i < (long)BATCH * nin; i++)
		n->dz[i] = a[i] > 0 ? n->da[i] : 0;
}

static void backward(struct net *n)
{
	float *g = n->g;

	loss_grad(n->p, n->y, n->dz);
	backward_layer(n, N_H2, N_OUT, n->h2, W3(n), g + P1 + P2, 1);
	backward_layer(n, N_H1, N_H2, n->h1, W2(n), g + P1, 1);
	backward_layer(n, N_IN, N_H1, n->x, W1(n), g, 0);
}

static void optimizer(struct net *n)
{
	axpy((int)NPARAM, -LR, n->g, n->w);
}

/* ---- --count-flops: the same step, scalar and instrumented ---- */

/* Every multiply and add of the reference step goes through these, which
 * count into *g_bucket. */
static uint64_t *g_bucket;

static float cmul(float a, float b) { ++*g_bucket; return a * b; }
static float cadd(float a, float b) { ++*g_bucket; return a + b; }
static float csub(float a, float b) { ++*g_bucket; return a - b; }
static float cdiv(float a, float b) { ++*g_bucket; return a / b; }

/* C = A B, A m x k, B k x n, the textbook triple loop. */
static void ref_matmul(int m, int n, int k, const float *a, long as_i, long as_p,
		       const float *b, long bs_p, long bs_j, float *c)
{
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++) {
			float s = 0;
			for (int p = 0; p < k; p++)
				s = cadd(s, cmul(a[i * as_i + p * as_p], b[p * bs_p + j * bs_j]));
			c[(long)i * n + j] = s;
		}
}

/*
 * One training step in scalar code that counts each multiply and add: model
 * work (matmuls, SGD) into @model, the loss head into @head. Follows the fast
 * path's summation order, so the results should agree bit for bit on x86-64.
 */
static void count_step(struct net *n, uint64_t *model, uint64_t *head)
{
	float *dz = n->dz, *da = n->da;
	const struct { int nin, nout; float *a, *w, *g; } L[3] = {
		{ N_IN, N_H1, n->x, W1(n), n->g },
		{ N_H1, N_H2, n->h1, W2(n), n->g + P1 },
		{ N_H2, N_OUT, n->h2, W3(n), n->g + P1 + P2 },
	};

	g_bucket = model;
	ref_matmul(BATCH, N_H1, N_IN, n->x, N_IN, 1, W1(n), N_H1, 1, n->h1);
	relu(n->h1, (long)BATCH * N_H1);
	ref_matmul(BATCH, N_H2, N_H1, n->h1, N_H1, 1, W2(n), N_H2, 1, n->h2);
	relu(n->h2, (long)BATCH * N_H2);
	ref_matmul(BATCH, N_OUT, N_H2, n->h2, N_H2, 1, W3(n), N_OUT, 1, n->p);

	g_bucket = head;
	for (int b = 0; b < BATCH; b++) {
		float *r = n->p + (long)b * N_OUT, mx = r[0], sum = 0;
		for (int c = 1; c < N_OUT; c++)
			mx = r[c] > mx ? r[c] : mx;
		for (int c = 0; c < N_OUT; c++) {
			r[c] = expf(csub(r[c], mx));
			sum = cadd(sum, r[c]);
		}
		for (int c = 0; c < N_OUT; c++)
			r[c] = cdiv(r[c], sum);
	}
	for (int b = 0; b < BATCH; b++)
		for (int c = 0; c < N_OUT; c++)
			dz[b * N_OUT + c] = cmul(csub(n->p[b * N_OUT + c], (float)(c == n->y[b])),
						 1.0f / BATCH);

	g_bucket = model;
	for (int l = 2; l >= 0; l--) {
		/* dW = A^T dZ */
		ref_matmul(L[l].nin, L[l].nout, BATCH, L[l].a, 1, L[l].nin, dz, L[l].nout, 1,
			   L[l].g);
		if (l == 0)
			break; /* dL/dX is not needed */
		/* dA = dZ W^T, then through the ReLU (a select, no FLOPs) */
		ref_matmul(BATCH, L[l].nin, L[l].nout, dz, L[l].nout, 1, L[l].w, 1, L[l].nout, da);
		for (long i = 0; i < (long)BATCH * L[l].nin; i++)
			dz[i] = L[l].a[i] > 0 ? da[i] : 0;
	}
	for (long i = 0; i < NPARAM; i++)
		n->w[i] = csub(n->w[i], cmul(LR, n->g[i]));
}

static int count_flops(const struct data *d)
{
	struct net fast, ref;
	uint64_t model = 0, head = 0, rng = SEED ^ 1;
	double maxdiff = 0, maxw = 0;
	int err;

	if ((err = net_init(&fast, SEED)) || (err = net_init(&ref, SEED))) {
		net_free(&fast);
		fprintf(stderr, "mlp: %s\n", strerror(-err));
		return 1;
	}
	load_batch(&fast, d, &rng);
	memcpy(ref.x, fast.x, sizeof(float) * BATCH * N_IN);
	memcpy(ref.y, fast.y, sizeof(int) * BATCH);

	forward(&fast);
	backward(&fast);
	optimizer(&fast);
	count_step(&ref, &model, &head);

	for (long i = 0; i < NPARAM; i++) {
		double diff = fabs((double)fast.w[i] - ref.w[i]);
		maxdiff = diff > maxdiff ? diff : maxdiff;
		maxw = fabs(ref.w[i]) > maxw ? fabs(ref.w[i]) : maxw;
	}
	printf("counted_flops=%llu declared_flops=%.0f\n", (unsigned long long)model, STEP_FLOPS);
	printf("declared_phase_flops forward=%.0f backward=%.0f optimizer=%.0f\n", FWD_FLOPS,
	       BWD_FLOPS, OPT_FLOPS);
	printf("loss_head_flops=%llu (softmax/cross-entropy multiplies, adds, divides; "
	       "not model FLOPs)\n", (unsigned long long)head);
	printf("max_weight_diff=%g max_weight=%g\n", maxdiff, maxw);
	net_free(&fast);
	net_free(&ref);
	if ((double)model != STEP_FLOPS) {
		fprintf(stderr, "mlp: counted %llu FLOPs, declared %.0f\n",
			(unsigned long long)model, STEP_FLOPS);
		return 1;
	}
	if (maxdiff > 1e-5 * (maxw > 1 ? maxw : 1)) {
		fprintf(stderr, "mlp: the fast and the counted step disagree (%g)\n", maxdiff);
		return 1;
	}
	return 0;
}

/* ---- main ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: wl_mlp [--steps N] [--threads N] [--quiet] [--print-losses]\n"
		"       wl_mlp --count-flops\n"
		"Train a %d-%d-%d-%d MLP (batch %d, fp32, SGD) on synthetic data, marking\n"
		"each step and its phases for mfu-record.\n"
		"  --steps N        training steps (default 200)\n"
		"  --threads N      threads for the matmuls of forward and backward\n"
		"                   (default 1, at most %d)\n"
		"  --quiet          no loss lines on stderr (the closing summary line stays)\n"
		"  --print-losses   print \"step loss\" for every step to stdout\n"
		"  --count-flops    run one instrumented scalar step, print counted and\n"
		"                   declared FLOPs per step, exit 1 if they differ\n",
		N_IN, N_H1, N_H2, N_OUT, BATCH, MAX_THREADS);
}

/* Parse @s as an integer in [lo, hi] into *out; 0 or -EINVAL/-ERANGE. */
static int parse_int(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno == ERANGE || v < lo || v > hi)
		return -ERANGE;
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	long steps = 200, threads = 1;
	int quiet = 0, print_losses = 0, count = 0, err = 0;
	struct net net;
	struct data data;
	uint64_t rng = SEED ^ 1;
	double loss = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		long *target = NULL, lo = 1, hi = 0;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			quiet = 1;
		} else if (!strcmp(a, "--print-losses")) {
			print_losses = 1;
		} else if (!strcmp(a, "--count-flops")) {
			count = 1;
		} else if (!strcmp(a, "--steps")) {
			target = &steps;
			hi = 1000000000L;
		} else if (!strcmp(a, "--threads")) {
			target = &threads;
			hi = MAX_THREADS;
		} else {
			fprintf(stderr, "mlp: unknown option '%s'\n", a);
			usage(stderr);
			return 2;
		}
		if (target) {
			if (i + 1 >= argc) {
				fprintf(stderr, "mlp: %s needs a value\n", a);
				return 2;
			}
			if (parse_int(argv[++i], lo, hi, target) < 0) {
				fprintf(stderr, "mlp: %s '%s': expected an integer from %ld to %ld\n",
					a, argv[i], lo, hi);
				return 2;
			}
		}
	}

	if ((err = data_init(&data, SEED)) < 0) {
		fprintf(stderr, "mlp: cannot allocate the data: %s\n", strerror(-err));
		return 1;
	}
	if (count) {
		err = count_flops(&data);
		data_free(&data);
		return err;
	}
	if ((err = net_init(&net, SEED)) < 0) {
		fprintf(stderr, "mlp: cannot allocate the network: %s\n", strerror(-err));
		data_free(&data);
		return 1;
	}
	if ((err = pool_start((int)threads)) < 0) {
		fprintf(stderr, "mlp: cannot start threads: %s\n", strerror(-err));
		net_free(&net);
		data_free(&data);
		return 1;
	}

	struct timespec t_start, t_end;
	clock_gettime(CLOCK_MONOTONIC, &t_start);
	for (long s = 1; s <= steps; s++) {
		mfu_step_begin();
		mfu_step_model(STEP_FLOPS, STEP_BYTES);

		mfu_phase_begin("data");
		load_batch(&net, &data, &rng);
		mfu_phase_end("data");

		mfu_phase_begin("forward");
		mfu_phase_model(FWD_FLOPS, FWD_BYTES);
		loss = forward(&net);
		mfu_phase_end("forward");

		mfu_phase_begin("backward");
		mfu_phase_model(BWD_FLOPS, BWD_BYTES);
		backward(&net);
		mfu_phase_end("backward");

		mfu_phase_begin("optimizer");
		mfu_phase_model(OPT_FLOPS, OPT_BYTES);
		optimizer(&net);
		mfu_phase_end("optimizer");

		mfu_step_end();

		/* Logging happens between steps, as in real training loops. */
		if (print_losses)
			printf("%ld %.6f\n", s, loss);
		if (!quiet && (s == 1 || s % 50 == 0 || s == steps))
			fprintf(stderr, "mlp: step %ld loss %.4f\n", s, loss);
	}
	if (!isfinite(loss)) {
		fprintf(stderr, "mlp: the loss diverged\n");
		err = 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t_end);
	/* train_s: the training loop's own time (for overhead benchmarks) */
	fprintf(stderr, "mlp: steps=%ld model_flops_per_step=%.0f model_bytes_per_step=%.0f train_s=%.6f\n",
		steps, STEP_FLOPS, STEP_BYTES,
		(double)(t_end.tv_sec - t_start.tv_sec) + (double)(t_end.tv_nsec - t_start.tv_nsec) / 1e9);
	pool_stop();
	net_free(&net);
	data_free(&data);
	return err;
}
