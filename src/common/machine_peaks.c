/* Spec peaks (machine_impl.h). */
#include "machine_impl.h"

/* ------------------------------------------------------------------ */
/* Peaks                                                               */
/* ------------------------------------------------------------------ */

static int no_support(double *fpc, char *detail, size_t len, const char *why)
{
	*fpc = 0;
	machine_set_str(detail, len, why);
	return -ENOENT;
}

static bool note_is_512_only(const char *note)
{
	return note == skx_1fma_note || note == zen4_note || note == zen5_mobile_note;
}

/* The int8 dot-product rate (ops per cycle), or no_support(). */
static int int8_per_cycle(const struct uarch *u, unsigned isa, bool estimated,
			  double *fpc, bool *wide, char *detail, size_t len)
{
	/* Ops: a multiply-add of two int8 values counts 2, like a FLOP of
	 * an FMA. */
	if ((isa & MACHINE_ISA_AMX_INT8) && (isa & MACHINE_ISA_AMX_TILE) && u->amx > 0) {
		*fpc = u->amx * 2.0;
		machine_append(detail, len, "AMX TMUL, int8: TDPBSSD 16x16x64 MACs x 2 = 32768 ops per 16 cycles");
		if (estimated)
			machine_append(detail, len, " (the Sapphire Rapids TMUL rate)");
		return 0;
	}
	if ((isa & MACHINE_ISA_AVX512_VNNI) && (isa & MACHINE_ISA_AVX512F) && u->fma512 > 0) {
		/* VPDPBUSD zmm: 16 int32 lanes x 4 byte products, on the FMA
		 * pipes */
		*fpc = u->fma512 * 16.0 * 4 * 2;
		*wide = true;
		machine_append(detail, len, "%dx 512-bit VPDPBUSD/cycle, int8: %d x 16 lanes x 4 products x 2 ops",
		       u->fma512, u->fma512);
		return 0;
	}
	if ((isa & MACHINE_ISA_AVX_VNNI) && u->fma256 > 0) {
		*fpc = u->fma256 * 8.0 * 4 * 2;
		machine_append(detail, len, "%dx 256-bit VPDPBUSD (AVX-VNNI)/cycle, int8: %d x 8 lanes x 4 products x 2 ops",
		       u->fma256, u->fma256);
		return 0;
	}
	return no_support(fpc, detail, len,
			  "no int8 dot-product instructions: neither AMX-INT8, AVX512-VNNI nor AVX-VNNI");
}

/* The bf16 or fp16 rate (FLOPs per cycle), or no_support(). */
static int half_per_cycle(const struct uarch *u, unsigned isa, bool estimated,
			  enum machine_dtype dtype, double *fpc, bool *wide,
			  char *detail, size_t len)
{
	unsigned amx_bit = dtype == MACHINE_BF16 ? MACHINE_ISA_AMX_BF16 : MACHINE_ISA_AMX_FP16;
	unsigned vec_bit = dtype == MACHINE_BF16 ? MACHINE_ISA_AVX512_BF16 :
		MACHINE_ISA_AVX512_FP16;

	if ((isa & amx_bit) && (isa & MACHINE_ISA_AMX_TILE) && u->amx > 0) {
		*fpc = u->amx;
		machine_append(detail, len,
		       "AMX TMUL, %s: %s 16x16x32 MACs x 2 = 16384 FLOPs per 16 cycles",
		       machine_dtype_name(dtype),
		       dtype == MACHINE_BF16 ? "TDPBF16PS" : "TDPFP16PS");
		if (estimated)
			machine_append(detail, len, " (the Sapphire Rapids TMUL rate)");
		machine_append(detail, len, "; FP_ARITH counters do not count AMX FLOPs");
		return 0;
	}
	if ((isa & vec_bit) && (isa & MACHINE_ISA_AVX512F) && u->fma512 > 0) {
		/* VDPBF16PS: 16 fp32 lanes x 2 bf16 products, each a
		 * multiply-add; an AVX512_FP16 FMA has 32 fp16 lanes. Both
		 * issue like a 512-bit FMA. */
		*fpc = u->fma512 * 16.0 * 2 * 2;
		*wide = true;
		if (dtype == MACHINE_BF16)
			machine_append(detail, len,
			       "%dx 512-bit VDPBF16PS/cycle, bf16: %d x 16 lanes x 2 pairs x 2",
			       u->fma512, u->fma512);
		else
			machine_append(detail, len,
			       "%dx 512-bit FP16 FMA/cycle, fp16: %d x 32 lanes x 2",
			       u->fma512, u->fma512);
		return 0;
	}
	return no_support(fpc, detail, len, dtype == MACHINE_BF16 ?
			  "no bf16 arithmetic: neither AMX-BF16 nor AVX512_BF16 is usable" :
			  "no fp16 arithmetic: neither AMX-FP16 nor AVX512_FP16 is usable");
}

/* The fp64 or fp32 vector rate (FLOPs per cycle), or no_support(). */
static int vector_per_cycle(const struct uarch *u, unsigned isa, bool estimated,
			    enum machine_dtype dtype, double *fpc, bool *wide,
			    char *detail, size_t len)
{
	bool fma;
	int n, bits, lanes;

	/* The widest vectors both the core and the OS-enabled ISA allow (a
	 * VM may hide the AVX-512 of an AVX-512 core). */
	if ((isa & MACHINE_ISA_AVX512F) && u->fma512 > 0) {
		n = u->fma512, bits = 512, fma = true;
	} else if ((isa & MACHINE_ISA_AVX) && (isa & MACHINE_ISA_FMA)) {
		n = u->fma256, bits = 256, fma = true;
	} else if (isa & MACHINE_ISA_AVX) {
		n = u->fma256, bits = 256, fma = false;
	} else if (isa & MACHINE_ISA_SSE2) {
		n = u->fma128, bits = 128, fma = false;
	} else {
		return no_support(fpc, detail, len, "no SSE2 or AVX usable: no vector FLOP peak");
	}
	*wide = bits == 512;
	lanes = bits / (dtype == MACHINE_FP64 ? 64 : 32);
	*fpc = (double)n * lanes * (fma ? 2 : 1);
	if (fma)
		machine_append(detail, len, "%dx %d-bit FMA/cycle, %s: %d x %d lanes x 2", n, bits,
		       machine_dtype_name(dtype), n, lanes);
	else
		machine_append(detail, len, "%dx %d-bit add or mul/cycle (no FMA), %s: %d x %d lanes",
		       n, bits, machine_dtype_name(dtype), n, lanes);
	if (estimated && *wide)
		machine_append(detail, len, "; assumed 1 FMA unit (some AVX-512 cores have 2)");
	return 0;
}

int machine_flops_per_cycle(const struct machine *m, enum machine_dtype dtype,
			    double *fpc, char *detail, size_t len)
{
	const struct uarch *u;
	bool estimated = false, wide = false;
	unsigned isa;
	int err;

	if (!m || !fpc || (int)dtype < 0 || dtype >= MACHINE_NDTYPES)
		return -EINVAL;
	*fpc = 0;
	machine_set_str(detail, len, "");
	isa = m->isa;
	u = uarch_find(m);
	if (!u) {
		if (!(isa & (MACHINE_ISA_SSE2 | MACHINE_ISA_AVX | MACHINE_ISA_AVX512F)))
			return no_support(fpc, detail, len,
					  "unknown microarchitecture and no ISA flags");
		u = &uarch_estimate;
		estimated = true;
		machine_set_str(detail, len, "estimated from ISA (unknown microarchitecture): ");
	}

	if (dtype == MACHINE_INT8)
		err = int8_per_cycle(u, isa, estimated, fpc, &wide, detail, len);
	else if (dtype == MACHINE_BF16 || dtype == MACHINE_FP16)
		err = half_per_cycle(u, isa, estimated, dtype, fpc, &wide, detail, len);
	else
		err = vector_per_cycle(u, isa, estimated, dtype, fpc, &wide, detail, len);
	if (err < 0)
		return err;
	if (u->fpu_note && (wide || !note_is_512_only(u->fpu_note)))
		machine_append(detail, len, "; %s", u->fpu_note);
	return 0;
}

/* "2 CPUs", "1 CPU", "1.5 CPUs" */
static void format_count(char *buf, size_t len, double v, const char *unit)
{
	snprintf(buf, len, "%g %s%s", v, unit, v == 1 ? "" : "s");
}

int machine_peak_flops(const struct machine *m, enum machine_dtype dtype, double ncores,
		       double *flops, char *detail, size_t len)
{
	const struct uarch *u;
	char basis[256], cores[64];
	double fpc;
	int err;

	if (!m || !flops || !(ncores > 0) || !isfinite(ncores))
		return -EINVAL;
	*flops = 0;
	machine_set_str(detail, len, "");
	err = machine_flops_per_cycle(m, dtype, &fpc, basis, sizeof(basis));
	if (err) {
		machine_set_str(detail, len, basis);
		return err;
	}
	if (!(m->nominal_hz > 0)) {
		machine_set_str(detail, len, "no spec peak: the nominal frequency is unknown");
		return -ENOENT;
	}
	*flops = ncores * m->nominal_hz * fpc;
	u = uarch_find(m);
	format_count(cores, sizeof(cores), ncores, "core");
	/* SMT siblings share their core's FMA units: when the CPU set has
	 * more CPUs than cores, say that the count is of cores (not for the
	 * one-core figure, which is about no CPU set) */
	if (ncores > 1 && m->ncores_affinity > 0 && m->ncpu_affinity > m->ncores_affinity) {
		if (m->ncpu_affinity % m->ncores_affinity == 0)
			machine_append(cores, sizeof(cores), " (%d CPUs, %d threads per core)", m->ncpu_affinity,
			       m->ncpu_affinity / m->ncores_affinity);
		else
			machine_append(cores, sizeof(cores), " (%d CPUs on %d cores)", m->ncpu_affinity,
			       m->ncores_affinity);
	}
	snprintf(detail, len, "spec: %.2f GHz nominal (%s) x %s x %g %s/cycle (%s) [%s]",
		 m->nominal_hz / 1e9, m->nominal_hz_source[0] ? m->nominal_hz_source : "given",
		 cores, fpc, machine_dtype_is_integer(dtype) ? "op" : "FLOP", basis, u ? u->name : "unknown");
	if (m->clock_hz > 0 && fabs(m->clock_hz / m->nominal_hz - 1) > 0.05)
		machine_append(detail, len, "; the core clock measured %.2f GHz (%s)", m->clock_hz / 1e9,
		       m->clock_hz_source[0] ? m->clock_hz_source : "mfu-calibrate");
	if (m->ident_note[0])
		machine_append(detail, len, "; %s", m->ident_note);
	return 0;
}

int machine_peak_bw(const struct machine *m, double *bytes_per_s, char *detail, size_t len)
{
	const struct uarch *u;
	char sockets[32];
	int ns;

	if (!m || !bytes_per_s)
		return -EINVAL;
	*bytes_per_s = 0;
	machine_set_str(detail, len, "");
	u = uarch_find(m);
	if (!u || u->channels == 0) {
		snprintf(detail, len,
			 "no spec bandwidth for microarchitecture '%s'%s; measure it with "
			 "mfu-calibrate or pass --peak-bw",
			 m->uarch[0] ? m->uarch : "unknown", u ? " on this platform" : "");
		/* the model's own row names a platform, but it was distrusted */
		if (m->uarch_from_isa)
			machine_append(detail, len, " (the platform of CPUID model %d is not used: %s)", m->model,
			       m->ident_note);
		return -ENOENT;
	}
	/* The spec figure: every channel populated at the rated speed. On a VM
	 * only a share of the host's channels serves us; mfu-calibrate measures
	 * what is really reachable. */
	ns = m->sockets > 0 ? m->sockets : 1;
	*bytes_per_s = (double)ns * u->channels * u->mts * 1e6 * 8;
	format_count(sockets, sizeof(sockets), ns, "socket");
	/* which ones: ranks of a job on one host share them (merge.c) */
	if (m->packages[0])
		machine_append(sockets, sizeof(sockets), " (package%s %s)", ns == 1 ? "" : "s", m->packages);
	snprintf(detail, len, "spec: %s x %d channels x %d MT/s x 8 B [%s, %s, %s]", sockets,
		 u->channels, u->mts, u->name, u->dram, u->platform);
	if (m->ident_note[0])
		machine_append(detail, len, "; %s", m->ident_note);
	return 0;
}

int machine_bw_slice(const struct machine *m, char *why, size_t len)
{
	if (!m)
		return -EINVAL;
	machine_set_str(why, len, "");
	if (m->cpu_quota > 0 && m->ncpu_affinity > 0 && m->cpu_quota < m->ncpu_affinity) {
		snprintf(why, len, "a cgroup CPU quota of %g CPUs on its %d CPUs", m->cpu_quota, m->ncpu_affinity);
		return 1;
	}
	if (m->socket_cpus > m->ncpu_affinity && m->ncpu_affinity > 0) {
		snprintf(why, len, "CPU%s %s %s %d of the %d CPUs of socket%s %s (an affinity mask, taskset or a "
			 "cpuset)", m->ncpu_affinity == 1 ? "" : "s", m->allowed_cpus, m->ncpu_affinity == 1 ? "is" : "are",
			 m->ncpu_affinity, m->socket_cpus, strchr(m->packages, '-') || strchr(m->packages, ',') ? "s" : "",
			 m->packages);
		return 1;
	}
	if (m->hypervisor) {
		snprintf(why, len, "a virtual machine (cpuid hypervisor bit): its %d vCPU%s get a share of the "
			 "host socket whose channels the spec counts", m->ncpu_affinity,
			 m->ncpu_affinity == 1 ? "" : "s");
		return 1;
	}
	return 0;
}
