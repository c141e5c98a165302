/*
 * The machine model: cpuid identity and ISA, the CPUs this process may use,
 * and the spec peaks (FLOP/s per dtype, DRAM bandwidth) with their basis.
 *
 * The peaks are "spec" peaks: nominal frequency x physical cores x FLOPs
 * per cycle from a per-microarchitecture table (what the vendor's documents
 * say the core can do), as opposed to the peaks mfu-calibrate measures.
 * docs/machine-model.md explains the table and its sources.
 */
#include "machine_impl.h"

/* ------------------------------------------------------------------ */
/* Small helpers                                                       */
/* ------------------------------------------------------------------ */

/* Append to a NUL-terminated buffer; truncation is silent because details
 * are for people, and the caller's buffer bounds them. */
__attribute__((format(printf, 3, 4)))
void machine_append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used;
	va_list ap;

	if (!buf || len == 0)
		return;
	used = strnlen(buf, len);
	if (used >= len - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

void machine_set_str(char *buf, size_t len, const char *s)
{
	if (buf && len)
		snprintf(buf, len, "%s", s);
}

void machine_trim(char *s)
{
	size_t n = strlen(s), i = 0;

	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	while (s[i] && isspace((unsigned char)s[i]))
		i++;
	if (i)
		memmove(s, s + i, n - i + 1);
}

/* A whole file holding one unsigned number (sysfs style, newline allowed). */
int read_u64_file(const char *path, uint64_t *v)
{
	char buf[64];
	int err;

	err = read_sysfs(path, buf, sizeof(buf));
	if (err)
		return err;
	machine_trim(buf);
	return safe_atou64(buf, v);
}

/* ------------------------------------------------------------------ */
/* dtype and ISA names                                                 */
/* ------------------------------------------------------------------ */

static const char *const dtype_names[MACHINE_NDTYPES] = {
	[MACHINE_FP64] = "fp64",
	[MACHINE_FP32] = "fp32",
	[MACHINE_BF16] = "bf16",
	[MACHINE_FP16] = "fp16",
	[MACHINE_INT8] = "int8",
};

int machine_dtype_parse(const char *s)
{
	/* The spellings numpy and PyTorch users type, besides ours. */
	static const struct { const char *name; enum machine_dtype d; } alias[] = {
		{ "float64", MACHINE_FP64 }, { "double", MACHINE_FP64 },
		{ "float32", MACHINE_FP32 }, { "float", MACHINE_FP32 },
		{ "bfloat16", MACHINE_BF16 },
		{ "float16", MACHINE_FP16 }, { "half", MACHINE_FP16 },
		{ "qint8", MACHINE_INT8 }, { "i8", MACHINE_INT8 },
	};

	if (!s)
		return -EINVAL;
	for (int d = 0; d < MACHINE_NDTYPES; d++)
		if (strcmp(s, dtype_names[d]) == 0)
			return d;
	for (size_t i = 0; i < ARRAY_SIZE(alias); i++)
		if (strcmp(s, alias[i].name) == 0)
			return (int)alias[i].d;
	return -EINVAL;
}

int machine_dtype_is_integer(enum machine_dtype d)
{
	return d == MACHINE_INT8;
}

const char *machine_dtype_name(enum machine_dtype d)
{
	if ((int)d < 0 || d >= MACHINE_NDTYPES)
		return "unknown";
	return dtype_names[d];
}

/* Spelled as the kernel spells them in /proc/cpuinfo, except "hybrid". */
static const struct { unsigned bit; const char *name; } isa_names[] = {
	{ MACHINE_ISA_SSE2, "sse2" },
	{ MACHINE_ISA_AVX, "avx" },
	{ MACHINE_ISA_FMA, "fma" },
	{ MACHINE_ISA_AVX2, "avx2" },
	{ MACHINE_ISA_AVX512F, "avx512f" },
	{ MACHINE_ISA_AVX512_BF16, "avx512_bf16" },
	{ MACHINE_ISA_AVX512_FP16, "avx512_fp16" },
	{ MACHINE_ISA_AMX_BF16, "amx_bf16" },
	{ MACHINE_ISA_AMX_TILE, "amx_tile" },
	{ MACHINE_ISA_AMX_FP16, "amx_fp16" },
	{ MACHINE_ISA_AVX_VNNI, "avx_vnni" },
	{ MACHINE_ISA_AVX512_VNNI, "avx512_vnni" },
	{ MACHINE_ISA_AMX_INT8, "amx_int8" },
	{ MACHINE_ISA_HYBRID, "hybrid" },
};

void machine_isa_string(unsigned isa, char *buf, size_t len)
{
	if (!buf || len == 0)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(isa_names); i++) {
		size_t used = strlen(buf), need;

		if (!(isa & isa_names[i].bit))
			continue;
		need = strlen(isa_names[i].name) + (used ? 1 : 0);
		/* Never cut a name in half: a partial "avx5" would read as a flag. */
		if (used + need >= len)
			break;
		machine_append(buf, len, "%s%s", used ? " " : "", isa_names[i].name);
	}
}

/* ------------------------------------------------------------------ */
/* Probing                                                             */
/* ------------------------------------------------------------------ */

#if MACHINE_X86
/* XCR0 says which register state the OS saves on context switch; without
 * it the instructions fault (#UD), so a CPU flag alone does not make a peak. */
static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

#define XCR0_AVX    0x6ull       /* SSE + AVX (ymm upper halves) */
#define XCR0_AVX512 0xE6ull      /* + opmask, zmm upper halves, zmm16-31 */
#define XCR0_AMX    0x60000ull   /* XTILECFG + XTILEDATA */

/* The L3 of one socket from the deterministic cache parameters: Intel
 * leaf 4, AMD leaf 0x8000001D (same layout): ways x partitions x line size
 * x sets. A VM shows the host's cache, which is what identifies its class. */
static double l3_size(const char *vendor, unsigned max_leaf)
{
	unsigned leaf = 4, a, b, c, d;

	if (strcmp(vendor, "AuthenticAMD") == 0) {
		if (!__get_cpuid(0x80000000, &a, &b, &c, &d) || a < 0x8000001D)
			return 0;
		leaf = 0x8000001D;
	} else if (max_leaf < 4) {
		return 0;
	}
	for (unsigned sub = 0; sub < 16; sub++) {
		__cpuid_count(leaf, sub, a, b, c, d);
		if ((a & 0x1F) == 0)
			break; /* no more caches */
		if (((a >> 5) & 0x7) == 3)
			return (double)(((b >> 22) & 0x3FF) + 1) * (((b >> 12) & 0x3FF) + 1) *
			       ((b & 0xFFF) + 1) * ((double)c + 1);
	}
	return 0;
}

static void probe_cpuid(struct machine *m, unsigned *leaf16_mhz, double *tsc_hz)
{
	unsigned a, b, c, d, max_leaf, max_sub7 = 0;
	unsigned fam, mod, ext_fam, ext_mod;
	uint64_t xcr0 = 0;
	bool os_avx, os_avx512, os_amx;

	if (!__get_cpuid(0, &max_leaf, &b, &c, &d))
		return;
	memcpy(m->vendor, &b, 4);
	memcpy(m->vendor + 4, &d, 4);
	memcpy(m->vendor + 8, &c, 4);
	m->vendor[12] = '\0';

	if (!__get_cpuid(1, &a, &b, &c, &d))
		return;
	fam = (a >> 8) & 0xF;
	mod = (a >> 4) & 0xF;
	ext_fam = (a >> 20) & 0xFF;
	ext_mod = (a >> 16) & 0xF;
	m->stepping = (int)(a & 0xF);
	/* The display family/model rule of the Intel SDM (CPUID leaf 1) and
	 * the AMD APM: extended family only for family 0xF, extended model
	 * for families 6 and 0xF. */
	m->family = (int)(fam == 0xF ? fam + ext_fam : fam);
	m->model = (int)((fam == 6 || fam == 0xF) ? (ext_mod << 4) + mod : mod);

	m->hypervisor = (c >> 31) & 1;
	if (c & (1u << 27))                 /* OSXSAVE: XGETBV is usable */
		xcr0 = xgetbv0();
	os_avx = (xcr0 & XCR0_AVX) == XCR0_AVX;
	os_avx512 = (xcr0 & XCR0_AVX512) == XCR0_AVX512;
	os_amx = (xcr0 & XCR0_AMX) == XCR0_AMX;

	if (d & (1u << 26))
		m->isa |= MACHINE_ISA_SSE2;
	if (os_avx && (c & (1u << 28)))
		m->isa |= MACHINE_ISA_AVX;
	if (os_avx && (c & (1u << 12)))
		m->isa |= MACHINE_ISA_FMA;

	if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
		max_sub7 = a;
		if (os_avx && (b & (1u << 5)))
			m->isa |= MACHINE_ISA_AVX2;
		if (os_avx512 && (b & (1u << 16)))
			m->isa |= MACHINE_ISA_AVX512F;
		if (os_avx512 && (d & (1u << 23)))
			m->isa |= MACHINE_ISA_AVX512_FP16;
		if (os_amx && (d & (1u << 22)))
			m->isa |= MACHINE_ISA_AMX_BF16;
		if (os_amx && (d & (1u << 24)))
			m->isa |= MACHINE_ISA_AMX_TILE;
		if (os_amx && (d & (1u << 25)))
			m->isa |= MACHINE_ISA_AMX_INT8;
		if (os_avx512 && (c & (1u << 11)))
			m->isa |= MACHINE_ISA_AVX512_VNNI;
		if (d & (1u << 15))
			m->isa |= MACHINE_ISA_HYBRID;
	}
	if (max_sub7 >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &d)) {
		if (os_avx && (a & (1u << 4)))
			m->isa |= MACHINE_ISA_AVX_VNNI;
		if (os_avx512 && (a & (1u << 5)))
			m->isa |= MACHINE_ISA_AVX512_BF16;
		if (os_amx && (a & (1u << 21)))
			m->isa |= MACHINE_ISA_AMX_FP16;
	}

	if (__get_cpuid(0x16, &a, &b, &c, &d))
		*leaf16_mhz = a & 0xFFFF;
	/* Leaf 0x15: TSC = crystal x EBX / EAX; ECX (crystal Hz) is 0 on many
	 * parts and on VMs, and then the ratio says nothing. */
	if (__get_cpuid(0x15, &a, &b, &c, &d) && a && b && c)
		*tsc_hz = (double)c * b / a;

	m->l3_bytes = l3_size(m->vendor, max_leaf);
	if (__get_cpuid(0x80000000, &a, &b, &c, &d) && a >= 0x80000004) {
		unsigned regs[12] = { 0 };

		for (unsigned i = 0; i < 3; i++)
			__get_cpuid(0x80000002 + i, &regs[i * 4], &regs[i * 4 + 1],
				    &regs[i * 4 + 2], &regs[i * 4 + 3]);
		memcpy(m->name, regs, 48);
		m->name[48] = '\0';
		machine_trim(m->name);
	}
}
#endif

/* "... CPU @ 2.70GHz": Intel brand strings end in the nominal frequency. */
static int freq_from_brand(const char *brand, double *hz)
{
	const char *at = strrchr(brand, '@');
	char *end;
	double v;

	if (!at)
		return -ENOENT;
	at++;
	while (*at == ' ')
		at++;
	if (!isdigit((unsigned char)*at))
		return -ENOENT;
	errno = 0;
	v = strtod(at, &end);
	if (errno || !isfinite(v) || v <= 0)
		return -ENOENT;
	if (strncmp(end, "GHz", 3) == 0)
		*hz = v * 1e9;
	else if (strncmp(end, "MHz", 3) == 0)
		*hz = v * 1e6;
	else
		return -ENOENT;
	return 0;
}

/* The first "cpu MHz" line of /proc/cpuinfo. On a VM it is the TSC rate the
 * hypervisor announced; on bare metal with cpufreq it is a current clock,
 * which is why it is the last resort. */
static int freq_from_cpuinfo(double *hz)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f;
	int err = -ENOENT;

	f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *colon;
		double mhz;

		if (strncmp(line, "cpu MHz", 7) != 0)
			continue;
		colon = strchr(line, ':');
		if (!colon)
			continue;
		colon++;
		machine_trim(colon);
		if (safe_atod(colon, &mhz) == 0 && mhz > 0) {
			*hz = mhz * 1e6;
			err = 0;
		}
		break;
	}
	free(line);
	fclose(f);
	return err;
}

static void probe_frequency(struct machine *m, unsigned leaf16_mhz, double tsc_hz)
{
	uint64_t khz;
	double hz = 0;

	if (leaf16_mhz) {
		m->nominal_hz = leaf16_mhz * 1e6;
		machine_set_str(m->nominal_hz_source, sizeof(m->nominal_hz_source), "cpuid leaf 0x16");
	} else if (freq_from_brand(m->name, &hz) == 0) {
		m->nominal_hz = hz;
		machine_set_str(m->nominal_hz_source, sizeof(m->nominal_hz_source), "brand string");
	} else if (read_u64_file("/sys/devices/system/cpu/cpu0/cpufreq/base_frequency", &khz) == 0 &&
		   khz > 0) {
		/* intel_pstate's base (non-turbo) frequency, in kHz. */
		m->nominal_hz = (double)khz * 1e3;
		machine_set_str(m->nominal_hz_source, sizeof(m->nominal_hz_source), "cpufreq base_frequency");
	} else if (read_u64_file("/sys/devices/system/cpu/cpu0/cpufreq/amd_pstate_nominal_freq",
				 &khz) == 0 && khz > 0) {
		/* AMD parts have neither leaf 0x16 nor a frequency in the brand
		 * string; amd-pstate publishes the nominal one, in kHz. */
		m->nominal_hz = (double)khz * 1e3;
		machine_set_str(m->nominal_hz_source, sizeof(m->nominal_hz_source),
			"cpufreq amd_pstate_nominal_freq");
	} else if (tsc_hz > 0) {
		m->nominal_hz = tsc_hz;
		machine_set_str(m->nominal_hz_source, sizeof(m->nominal_hz_source), "cpuid leaf 0x15 (TSC)");
	} else if (freq_from_cpuinfo(&hz) == 0) {
		m->nominal_hz = hz;
		machine_set_str(m->nominal_hz_source, sizeof(m->nominal_hz_source), "/proc/cpuinfo cpu MHz");
	}
}

/* An int from a small sysfs file, -ENOENT or -EINVAL. */
static int read_int_file(const char *path, int *v)
{
	char buf[32];

	if (read_sysfs(path, buf, sizeof(buf)))
		return -ENOENT;
	machine_trim(buf);
	return safe_atoi(buf, v);
}

/* A sysfs cache size: "32768K" (the kernel writes KiB with a K), also
 * accepting M and a bare byte count. */
static int parse_cache_size(const char *s, double *bytes)
{
	char num[32];
	size_t n = strspn(s, "0123456789");
	uint64_t v;
	double unit = 1;

	if (n == 0 || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = '\0';
	if (safe_atou64(num, &v))
		return -EINVAL;
	if (s[n] == 'K')
		unit = 1024, n++;
	else if (s[n] == 'M')
		unit = MIB, n++;
	if (s[n] != '\0')
		return -EINVAL;
	*bytes = (double)v * unit;
	return 0;
}

int machine_l3_from_sysfs(const char *sysfs_cpu, int cpu, double *bytes)
{
	if (!sysfs_cpu || cpu < 0 || !bytes)
		return -EINVAL;
	*bytes = 0;
	/* indexN are numbered by the kernel's cache walk, not by level: look
	 * for the one whose level is 3 */
	for (int i = 0; i < 16; i++) {
		char path[PATH_MAX], buf[32];
		int level;

		if (strbuf(path, sizeof(path), "%s/cpu%d/cache/index%d/level", sysfs_cpu, cpu, i))
			return -ENAMETOOLONG;
		if (read_int_file(path, &level))
			break;
		if (level != 3)
			continue;
		if (strbuf(path, sizeof(path), "%s/cpu%d/cache/index%d/size", sysfs_cpu, cpu, i))
			return -ENAMETOOLONG;
		if (read_sysfs(path, buf, sizeof(buf)))
			return -ENOENT;
		machine_trim(buf);
		return parse_cache_size(buf, bytes);
	}
	return -ENOENT;
}

/* Physical cores (distinct package and core id) and sockets of the CPUs
 * in @set: SMT siblings share a core's FMA units, so FLOP peaks count
 * cores. */
static int topology_of(const cpu_set_t *set, size_t setsize, unsigned ncpus, const char *sysfs_cpu,
		       int *cores, int *sockets)
{
	/* (package, core) pairs seen; a VM has few, a big host a few hundred */
	struct pair { int pkg, core; } *seen = NULL;
	int npairs = 0, pkgs[256], npkgs = 0, lone = 0;
	size_t cap = 0;

	for (unsigned c = 0; c < ncpus; c++) {
		char path[PATH_MAX];
		int pkg, core, k;

		if (!CPU_ISSET_S(c, setsize, set))
			continue;
		snprintf(path, sizeof(path), "%s/cpu%u/topology/physical_package_id", sysfs_cpu, c);
		if (read_int_file(path, &pkg))
			pkg = 0;
		snprintf(path, sizeof(path), "%s/cpu%u/topology/core_id", sysfs_cpu, c);
		if (read_int_file(path, &core)) {
			lone++; /* no topology: a core of its own */
		} else {
			for (k = 0; k < npairs && (seen[k].pkg != pkg || seen[k].core != core); k++)
				;
			if (k == npairs) {
				if (array_grow(&seen, &cap, (size_t)npairs + 1, sizeof(*seen))) {
					free(seen);
					return -ENOMEM;
				}
				seen[npairs].pkg = pkg;
				seen[npairs].core = core;
				npairs++;
			}
		}
		for (k = 0; k < npkgs && pkgs[k] != pkg; k++)
			;
		if (k == npkgs && npkgs < (int)ARRAY_SIZE(pkgs))
			pkgs[npkgs++] = pkg;
	}
	free(seen);
	*cores = npairs + lone;
	*sockets = npkgs ? npkgs : 1;
	return 0;
}

int machine_topology_count(const char *cpulist, const char *sysfs_cpu, int *cores, int *sockets)
{
	cpu_set_t *set;
	size_t setsize = CPU_ALLOC_SIZE(MAX_CPUS);
	int err;

	if (!cpulist || !sysfs_cpu || !cores || !sockets)
		return -EINVAL;
	set = CPU_ALLOC(MAX_CPUS);
	if (!set)
		return -ENOMEM;
	err = cpulist_parse(cpulist, set, setsize, MAX_CPUS);
	if (!err)
		err = topology_of(set, setsize, MAX_CPUS, sysfs_cpu, cores, sockets);
	CPU_FREE(set);
	return err;
}

/* The package of CPU @cpu, or -1 when its topology cannot be read. */
static int package_of(const char *sysfs_cpu, int cpu)
{
	char path[PATH_MAX];
	int pkg;

	if (strbuf(path, sizeof(path), "%s/cpu%d/topology/physical_package_id", sysfs_cpu, cpu) ||
	    read_int_file(path, &pkg) || pkg < 0)
		return -1;
	return pkg;
}

/* The online CPUs under @sysfs_cpu: its "online" list, else its cpuN
 * directories (a fixture tree, a kernel without CPU hotplug). */
static int online_cpus(const char *sysfs_cpu, struct cpumap *on)
{
	char path[PATH_MAX], buf[4096];
	DIR *d;
	struct dirent *e;
	int *cpu = NULL, n = 0, err;
	size_t cap = 0;

	memset(on, 0, sizeof(*on));
	if (!strbuf(path, sizeof(path), "%s/online", sysfs_cpu) && read_sysfs(path, buf, sizeof(buf)) == 0)
		return cpumap_parse(on, buf);
	d = opendir(sysfs_cpu);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		int c;
		if (strncmp(e->d_name, "cpu", 3) || safe_atoi(e->d_name + 3, &c) || c < 0)
			continue;
		if (array_grow(&cpu, &cap, (size_t)n + 1, sizeof(*cpu))) {
			closedir(d);
			free(cpu);
			return -ENOMEM;
		}
		cpu[n++] = c;
	}
	closedir(d);
	/* ascending, as a cpumap is */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && cpu[j - 1] > cpu[j]; j--) {
			int t = cpu[j];
			cpu[j] = cpu[j - 1];
			cpu[j - 1] = t;
		}
	on->cpu = cpu;
	on->n = n;
	err = 0;
	return err;
}

int machine_socket_cpus(const char *cpulist, const char *sysfs_cpu, int *socket_cpus, char *packages,
			size_t len)
{
	struct cpumap mine = { 0 }, on = { 0 };
	int pkgs[256], npkgs = 0, err, count = 0;

	if (!cpulist || !sysfs_cpu || !socket_cpus || !packages || !len)
		return -EINVAL;
	*socket_cpus = 0;
	packages[0] = '\0';
	err = cpumap_parse(&mine, cpulist);
	if (err)
		return err;
	for (int i = 0; i < mine.n; i++) {
		int pkg = package_of(sysfs_cpu, mine.cpu[i]), k;
		if (pkg < 0) {
			err = -ENOENT; /* a CPU of unknown socket: no claim either way */
			goto out;
		}
		for (k = 0; k < npkgs && pkgs[k] != pkg; k++)
			;
		if (k == npkgs) {
			if (npkgs == (int)ARRAY_SIZE(pkgs)) {
				err = -ENOENT;
				goto out;
			}
			/* kept ascending for the list */
			for (k = npkgs++; k > 0 && pkgs[k - 1] > pkg; k--)
				pkgs[k] = pkgs[k - 1];
			pkgs[k] = pkg;
		}
	}
	if (npkgs == 0) {
		err = -EINVAL;
		goto out;
	}
	err = online_cpus(sysfs_cpu, &on);
	if (err)
		goto out;
	for (int i = 0; i < on.n; i++) {
		int pkg = package_of(sysfs_cpu, on.cpu[i]);
		for (int k = 0; k < npkgs; k++)
			count += pkg == pkgs[k];
	}
	*socket_cpus = count;
	cpumap_format(pkgs, npkgs, packages, len);
out:
	cpumap_fini(&mine);
	cpumap_fini(&on);
	return err;
}

/* The affinity mask of @tid into @set (grown until the kernel accepts its
 * size: its nr_cpu_ids rounded up). */
static int get_affinity(pid_t tid, cpu_set_t **set, size_t *setsize, unsigned *ncpus)
{
	for (;;) {
		if (!*set) {
			*set = CPU_ALLOC(*ncpus);
			if (!*set)
				return -ENOMEM;
			*setsize = CPU_ALLOC_SIZE(*ncpus);
		}
		CPU_ZERO_S(*setsize, *set);
		if (sched_getaffinity(tid, *setsize, *set) == 0)
			return 0;
		if (errno != EINVAL || *ncpus >= MAX_CPUS)
			return -errno;
		CPU_FREE(*set);
		*set = NULL;
		*ncpus *= 2;
	}
}

/* The union of the affinity masks of @pid's threads: a runtime may pin
 * its main thread to one CPU (OpenMP's OMP_PROC_BIND does) and its workers
 * to the others, and the process may use them all. */
static int process_affinity(pid_t pid, cpu_set_t **set, size_t *setsize, unsigned *ncpus)
{
	char dir[64];
	DIR *d;
	struct dirent *e;
	cpu_set_t *one = NULL;
	size_t onesize = 0;
	int err;

	err = get_affinity(pid, set, setsize, ncpus);
	if (err || pid == 0)
		return err;
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	d = opendir(dir);
	if (!d)
		return 0; /* the main thread's mask stands */
	while ((e = readdir(d))) {
		int tid;
		unsigned n = *ncpus;

		if (safe_atoi(e->d_name, &tid) || tid <= 0 || tid == pid)
			continue;
		if (get_affinity(tid, &one, &onesize, &n))
			continue; /* a thread that just exited */
		if (n != *ncpus)
			continue; /* cannot happen: one kernel, one size */
		CPU_OR_S(*setsize, *set, *set, one);
	}
	closedir(d);
	CPU_FREE(one);
	return 0;
}

int machine_probe_cpus(struct machine *m, pid_t pid)
{
	return machine_probe_cpus_at(m, pid, "/sys/devices/system/cpu", "/sys/fs/cgroup");
}

int machine_probe_cpus_at(struct machine *m, pid_t pid, const char *sysfs_cpu,
			  const char *cgroup_root)
{
	unsigned ncpus = 1024;
	cpu_set_t *set = NULL;
	size_t setsize = 0;
	char cg[64];
	double quota = 0;
	int err, cores = 0, sockets = 1;

	if (!m || pid < 0 || !sysfs_cpu || !cgroup_root)
		return -EINVAL;
	err = process_affinity(pid, &set, &setsize, &ncpus);
	if (err)
		goto out;
	m->ncpu_affinity = CPU_COUNT_S(setsize, set);
	cpulist_format(set, setsize, ncpus, m->allowed_cpus, sizeof(m->allowed_cpus));
	err = topology_of(set, setsize, ncpus, sysfs_cpu, &cores, &sockets);
	if (err)
		goto out;
	m->sockets = sockets;
	m->ncores_affinity = cores > 0 ? cores : m->ncpu_affinity;
	/* whether the set is all of its sockets: what their memory bandwidth
	 * is shared with (machine_bw_slice()) */
	if (machine_socket_cpus(m->allowed_cpus, sysfs_cpu, &m->socket_cpus, m->packages, sizeof(m->packages)))
		m->socket_cpus = 0;

	/* A quota we cannot read is left unknown (0): the affinity still
	 * bounds the CPUs, and a probe should not fail over it. */
	if (pid)
		snprintf(cg, sizeof(cg), "/proc/%d/cgroup", (int)pid);
	else
		snprintf(cg, sizeof(cg), "/proc/self/cgroup");
	m->cpu_quota = 0;
	if (machine_cgroup_quota(cgroup_root, cg, &quota) == 0)
		m->cpu_quota = quota;
	m->ncpu = m->ncpu_affinity;
	if (m->cpu_quota > 0 && m->cpu_quota < m->ncpu)
		m->ncpu = m->cpu_quota;
	/* a quota of 1.5 CPUs lets 1.5 cores' worth of threads run at once */
	m->ncores = m->ncores_affinity;
	if (m->cpu_quota > 0 && m->cpu_quota < m->ncores)
		m->ncores = m->cpu_quota;
	/* several ranks of a job on a node, none bound to its own cores:
	 * each may use all of them, but they share them; counting the whole
	 * node for each would claim it once per rank */
	m->rank_shared = 0;
	if (m->rank_share > 1) {
		long online = sysconf(_SC_NPROCESSORS_ONLN);
		if (online > 0 && m->ncpu_affinity >= online) {
			m->ncpu /= m->rank_share;
			m->ncores /= m->rank_share;
			m->rank_shared = 1;
		}
	}
out:
	CPU_FREE(set);
	return err;
}

int machine_probe(struct machine *m)
{
	unsigned leaf16_mhz = 0;
	double tsc_hz = 0;

	if (!m)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	machine_set_str(m->vendor, sizeof(m->vendor), "unknown");
	machine_set_str(m->uarch, sizeof(m->uarch), "unknown");
#if MACHINE_X86
	probe_cpuid(m, &leaf16_mhz, &tsc_hz);
#endif
	/* cpuid leaves 4 / 0x8000001D may be absent (older AMD, other
	 * architectures) or zeroed by a hypervisor; the kernel's cache
	 * attributes may still know. Only a hint for identification. */
	if (!(m->l3_bytes > 0)) {
		double l3;

		if (machine_l3_from_sysfs("/sys/devices/system/cpu", 0, &l3) == 0)
			m->l3_bytes = l3;
	}
	machine_identify(m);
	probe_frequency(m, leaf16_mhz, tsc_hz);
	return machine_probe_cpus(m, 0);
}

