/*
 * The machine model: what CPU this is (cpuid), which CPUs the target may use
 * (affinity, capped by a cgroup CPU quota), and the spec peak FLOP/s per
 * dtype and peak memory bandwidth, each with its source.
 */
#ifndef MFU_MACHINE_H
#define MFU_MACHINE_H

#include <stddef.h>
#include <sys/types.h>

/* ISA features that change the peak (bit flags of machine.isa). */
#define MACHINE_ISA_SSE2        (1u << 0)
#define MACHINE_ISA_AVX         (1u << 1)
#define MACHINE_ISA_FMA         (1u << 2)
#define MACHINE_ISA_AVX2        (1u << 3)
#define MACHINE_ISA_AVX512F     (1u << 4)
#define MACHINE_ISA_AVX512_BF16 (1u << 5)
#define MACHINE_ISA_AVX512_FP16 (1u << 6)
#define MACHINE_ISA_AMX_BF16    (1u << 7)
#define MACHINE_ISA_AMX_TILE    (1u << 8)
#define MACHINE_ISA_AVX_VNNI    (1u << 9)
#define MACHINE_ISA_HYBRID      (1u << 10) /* Intel hybrid (P+E cores) */
#define MACHINE_ISA_AMX_FP16    (1u << 11) /* AMX FP16 tiles (Granite Rapids) */
#define MACHINE_ISA_AMX_INT8    (1u << 12) /* AMX int8 tiles (TDPBSSD...) */
#define MACHINE_ISA_AVX512_VNNI (1u << 13) /* VPDPBUSD on zmm */

enum machine_dtype {
	MACHINE_FP64 = 0,
	MACHINE_FP32,
	MACHINE_BF16,
	MACHINE_FP16,
	MACHINE_INT8,           /* integer ops (a multiply-add counts 2), not FLOPs */
	MACHINE_NDTYPES,
};

struct machine {
	char vendor[16];        /* "GenuineIntel", "AuthenticAMD", ... */
	int family;             /* display family (base + extended) */
	int model;              /* display model (base + extended << 4) */
	int stepping;
	char name[64];          /* brand string, trimmed */
	char uarch[32];         /* e.g. "sapphire_rapids", "zen4"; "unknown" */
	unsigned isa;           /* MACHINE_ISA_* */
	int hypervisor;         /* cpuid says it runs under a hypervisor */
	double l3_bytes;        /* the L3 one core shares, in bytes (Intel: the
				 * socket's; AMD: its CCX's), 0 if unknown;
				 * evidence for machine_identify() */
	int uarch_from_isa;     /* the model number's row was distrusted: uarch
				 * is the class the ISA shows (ident_note says why) */
	char ident_note[512];   /* why the model's row was distrusted, else "" (room for the longest: test_identify) */
	double nominal_hz;      /* nominal (base) frequency in Hz, 0 if unknown */
	char nominal_hz_source[64]; /* "cpuid leaf 0x16", "brand string", "tsc", ... */
	char allowed_cpus[256]; /* CPU list, e.g. "0-3,8" */
	int ncpu_affinity;      /* CPUs in the affinity mask */
	double cpu_quota;       /* cgroup CPU quota in CPUs, 0 if none */
	double ncpu;            /* min(ncpu_affinity, cpu_quota if set) */
	int sockets;            /* sockets the allowed CPUs span (>= 1) */
	char packages[64];      /* their physical_package_id list ("0", "0-1"); ""
				 * when the topology cannot be read */
	int socket_cpus;        /* online CPUs of those sockets (this OS's view: a
				 * VM's vCPUs), 0 if unknown; more than
				 * ncpu_affinity: the CPU set is part of them */
	int ncores_affinity;    /* physical cores among the allowed CPUs (SMT
				 * siblings once); the CPU count when the
				 * topology cannot be read */
	double ncores;          /* min(ncores_affinity, cpu_quota if set): what
				 * FLOP peaks count, as siblings share a core's
				 * FMA units */
	double clock_hz;        /* a measured core clock (mfu-calibrate), 0 if
				 * unknown; spec peaks use nominal_hz and only
				 * mention it */
	int rank_share;         /* input: ranks of a job on this node (0, 1: none);
				 * when they run unbound, on every CPU, each
				 * counts 1/rank_share of ncpu and ncores */
	int rank_shared;        /* output: machine_probe_cpus() divided them */
	char clock_hz_source[64];
};

/* Fill @m for this host and this process's affinity mask and cgroup.
 * Returns 0 or -errno. Unknown parts are left 0 / "unknown", never guessed. */
int machine_probe(struct machine *m);

/* Parse "fp64", "fp32", "bf16", "fp16", "int8"; returns the dtype or -EINVAL. */
int machine_dtype_parse(const char *s);
const char *machine_dtype_name(enum machine_dtype d);
/* 1 for integer dtypes (int8), whose peaks and counts are ops, not FLOPs. */
int machine_dtype_is_integer(enum machine_dtype d);

/* Choose the microarchitecture row for @m from its identity (vendor,
 * family, model, stepping, brand string) and check it against what the CPU
 * reports (isa, l3_bytes, hypervisor): a row the CPU contradicts (a client
 * row on a CPU with AMX or AVX512-FP16, or a "Xeon" with a server-sized
 * L3; a pre-Zen 4 row with AVX-512: a hypervisor masking the model number)
 * is distrusted, the core class is taken from the ISA (its memory from
 * that class's server platform), and ident_note says why. Sets uarch,
 * uarch_from_isa and ident_note; vendor, family, model, stepping, name,
 * isa, hypervisor and l3_bytes are its input, the rest of @m is untouched.
 * machine_probe() calls it; tests call it on described CPUs. */
void machine_identify(struct machine *m);

/* (Re)read the CPU set process @pid may run on (0: this process): the union
 * of its threads' affinity masks, its cgroup CPU quota, the sockets and
 * physical cores they span. Updates allowed_cpus, ncpu_affinity,
 * cpu_quota, ncpu, sockets, ncores_affinity and ncores, and rank_shared:
 * with rank_share > 1 and an affinity of every online CPU (ranks not
 * bound to their own cores), ncpu and ncores are this rank's share.
 * Returns 0 or -errno (-ESRCH: no such process). */
int machine_probe_cpus(struct machine *m, pid_t pid);

/* machine_probe_cpus() with the topology read under @sysfs_cpu (normally
 * "/sys/devices/system/cpu") and the cgroup quota under @cgroup_root
 * (normally "/sys/fs/cgroup"), so tests can use fixture trees; the
 * affinity and /proc/PID/cgroup are always the real process's. */
int machine_probe_cpus_at(struct machine *m, pid_t pid, const char *sysfs_cpu,
			  const char *cgroup_root);

/* The L3 size in bytes of CPU @cpu from the kernel's cache attributes under
 * @sysfs_cpu (cpuN/cache/indexM with level 3; "32768K"). machine_probe()
 * uses it when cpuid gives no L3. Returns 0, -ENOENT (no L3 listed) or
 * -EINVAL (a size it cannot parse). */
int machine_l3_from_sysfs(const char *sysfs_cpu, int cpu, double *bytes);

/* Physical cores and sockets of the CPUs in @cpulist, from the topology
 * files under @sysfs_cpu (normally "/sys/devices/system/cpu"): distinct
 * (physical_package_id, core_id) pairs. A CPU whose files cannot be read
 * counts as a core (and socket 0) of its own. Returns 0 or -EINVAL. */
int machine_topology_count(const char *cpulist, const char *sysfs_cpu, int *cores, int *sockets);

/* ISA features as a space-separated list ("avx2 fma avx512f ..."). */
void machine_isa_string(unsigned isa, char *buf, size_t len);

/* Spec FLOPs per cycle per core for @dtype on this microarchitecture and ISA,
 * with a short description of the basis (e.g. "2x AVX-512 FMA units: 2 x 8
 * lanes x 2"). Returns 0, or -ENOENT when the dtype has no hardware support
 * or the microarchitecture is unknown (then *fpc is 0). */
int machine_flops_per_cycle(const struct machine *m, enum machine_dtype dtype,
			    double *fpc, char *detail, size_t len);

/* Spec peak FLOP/s (ops/s for int8) for @dtype over @ncores physical cores
 * (ncores x nominal_hz x FLOPs per cycle per core; pass m->ncores for the
 * CPUs @m may use, 1 for one core; not m->ncpu, which counts SMT siblings
 * that share a core's units). Returns 0 or -ENOENT (unknown frequency,
 * uarch or dtype); @detail receives the formula with its numbers (and "(4
 * CPUs, 2 threads per core)" when the CPU set has SMT siblings), the
 * measured clock when it differs from the nominal one by more than 5%, and
 * ident_note. */
int machine_peak_flops(const struct machine *m, enum machine_dtype dtype, double ncores,
		       double *flops, char *detail, size_t len);

/* Spec peak DRAM bandwidth in bytes/s for the sockets the allowed CPUs span
 * (channels x transfer rate x 8 bytes per socket, from the uarch table).
 * Returns 0 or -ENOENT; @detail receives the basis, or why there is none,
 * and ident_note. */
int machine_peak_bw(const struct machine *m, double *bytes_per_s, char *detail, size_t len);

/* Is @m's CPU set a slice of the sockets whose memory channels the spec
 * bandwidth counts? Memory bandwidth is the socket's, shared by its cores:
 * a slice reaches only part of it. 1 (with the reason in @why) when:
 * a cgroup CPU quota caps it below its CPUs; its CPUs are fewer than the
 * online CPUs of the sockets they span (an affinity mask, taskset, a
 * cpuset); or it runs under a hypervisor (its vCPUs are a share of a
 * host socket the guest cannot see whole). 0 otherwise (bare metal, whole
 * sockets), with @why "". */
int machine_bw_slice(const struct machine *m, char *why, size_t len);

/* The online CPUs of the sockets the CPUs in @cpulist span, and those
 * sockets' package ids as a list ("0", "0-1"), from the topology under
 * @sysfs_cpu (its "online" list, else its cpuN directories). Returns 0,
 * or -EINVAL / -ENOENT (no topology: *socket_cpus 0, @packages ""). */
int machine_socket_cpus(const char *cpulist, const char *sysfs_cpu, int *socket_cpus, char *packages,
			size_t len);

/* Parse a CPU list ("0-3,8,10-11") into the number of CPUs; -EINVAL if bad.
 * Exposed for tests. */
int machine_cpulist_count(const char *list);

/* Read the cgroup CPU quota (in CPUs) for the cgroup of this process, looking
 * at cgroup v2 cpu.max and v1 cpu.cfs_quota_us/cpu.cfs_period_us under
 * @root (normally "/sys/fs/cgroup") and /proc/self/cgroup. The smallest quota
 * on the path to the root wins. Returns 0 with *cpus = 0 when there is none,
 * or -errno. @proc_cgroup is the path of the cgroup file (normally
 * "/proc/self/cgroup"); both parameters exist so tests can use fixtures. */
int machine_cgroup_quota(const char *root, const char *proc_cgroup, double *cpus);

#endif
