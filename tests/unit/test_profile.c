#include <ctype.h>
/* The machine profile: save/load round trip, identity checks (another CPU,
 * other ISA features, another CPU set give 0 rows and a reason), the default
 * path, and files that are not profiles (missing, corrupt, foreign SQLite,
 * newer format) giving an error, never a crash. */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "profile.h"

static char dir[] = "/tmp/mfu-test-profile-XXXXXX";

static const char *path(const char *name)
{
	return check_path(dir, name);
}

static void write_file(const char *p, const void *data, size_t len)
{
	FILE *f = fopen(p, "wb");
	if (!f)
		return;
	fwrite(data, 1, len, f);
	fclose(f);
}

static void sql(const char *p, const char *text)
{
	sqlite3 *db;
	if (sqlite3_open(p, &db) == SQLITE_OK)
		sqlite3_exec(db, text, NULL, NULL, NULL);
	sqlite3_close(db);
}

static struct machine spr(void)
{
	struct machine m = {
		.vendor = "GenuineIntel", .family = 6, .model = 143, .stepping = 8,
		.name = "Intel(R) Xeon(R) Processor", .uarch = "sapphire_rapids",
		.isa = MACHINE_ISA_SSE2 | MACHINE_ISA_AVX | MACHINE_ISA_FMA | MACHINE_ISA_AVX2 |
		       MACHINE_ISA_AVX512F | MACHINE_ISA_AVX512_BF16,
		.nominal_hz = 2.0e9, .nominal_hz_source = "/proc/cpuinfo cpu MHz",
		.allowed_cpus = "0-1", .ncpu_affinity = 2, .ncpu = 2, .sockets = 1,
	};
	return m;
}

static struct profile_peak peak(const char *kind, const char *dtype, const char *scope,
				const char *kernel, double value, int best)
{
	struct profile_peak p = { .value = value, .best = best, .measured_unix_s = 1700000000 };
	snprintf(p.kind, sizeof(p.kind), "%s", kind);
	snprintf(p.dtype, sizeof(p.dtype), "%s", dtype);
	snprintf(p.scope, sizeof(p.scope), "%s", scope);
	snprintf(p.kernel, sizeof(p.kernel), "%s", kernel);
	snprintf(p.detail, sizeof(p.detail), "measured: %s \"quoted\"", kernel);
	return p;
}

static const struct profile_peak *sample(int *n)
{
	static struct profile_peak p[4];
	p[0] = peak("flops", "fp64", "core", "avx512_fma", 6.72e10, 1);
	p[1] = peak("flops", "fp64", "core", "sse_mul_add", 1.28e10, 0);
	p[2] = peak("flops", "fp32", "all", "avx512_fma", 2.7e11, 1);
	p[3] = peak("bandwidth", "", "all", "triad_nt", 2.83e10, 1);
	*n = 4;
	return p;
}

static void test_round_trip(void)
{
	struct machine m = spr();
	struct profile_peak out[PROFILE_MAX_PEAKS];
	const struct profile_peak *in;
	char why[512];
	struct stat st;
	int n, nin;

	in = sample(&nin);
	/* Missing directories are created, 0700. */
	CHECK_EQ_INT(profile_save(path("a/b/profile.sqlite"), &m, in, nin, NULL, why, sizeof(why)), 0);
	CHECK_EQ_INT(stat(path("a/b"), &st), 0);
	CHECK_EQ_INT(st.st_mode & 0777, 0700);
	CHECK_EQ_INT(stat(path("a"), &st), 0);
	CHECK_EQ_INT(st.st_mode & 0777, 0700);

	CHECK_EQ_INT(profile_load(path("a/b/profile.sqlite"), &m, out, PROFILE_MAX_PEAKS, &n, why,
				  sizeof(why)), 0);
	CHECK_EQ_INT(n, nin);
	for (int i = 0; i < n && i < nin; i++) {
		CHECK_STR(out[i].kind, in[i].kind);
		CHECK_STR(out[i].dtype, in[i].dtype);
		CHECK_STR(out[i].scope, in[i].scope);
		CHECK_STR(out[i].kernel, in[i].kernel);
		CHECK_STR(out[i].detail, in[i].detail);
		CHECK(out[i].value == in[i].value);
		CHECK_EQ_INT(out[i].best, in[i].best);
		CHECK_EQ_INT(out[i].measured_unix_s, in[i].measured_unix_s);
	}

	/* The format 3 fields a caller leaves out: from the machine. */
	for (int i = 0; i < n; i++) {
		CHECK_STR(out[i].cpus, "0-1");
		CHECK_NEAR(out[i].ncpu, 2, 1e-9);
		CHECK_EQ_INT(out[i].threads, strcmp(out[i].scope, "all") == 0 ? 2 : 1);
		CHECK_EQ_INT(out[i].disturbed, 0);
		CHECK_EQ_INT(out[i].calibration, 1);
		CHECK_EQ_INT(out[i].applies, 1);
	}

	/* Saving again merges: the figure measured again replaces its own,
	 * the others stay (a calibration of fewer kernels loses nothing). */
	{
		struct profile_peak again = in[0];
		again.value = 7e10;
		again.measured_unix_s = 1700000100;
		CHECK_EQ_INT(profile_save(path("a/b/profile.sqlite"), &m, &again, 1, NULL, why, sizeof(why)), 0);
		CHECK_EQ_INT(profile_load(path("a/b/profile.sqlite"), &m, out, PROFILE_MAX_PEAKS, &n, why,
					  sizeof(why)), 0);
		CHECK_EQ_INT(n, nin);
		CHECK(out[0].value == 7e10 && out[0].calibration == 2);
		CHECK(out[2].value == in[2].value && out[2].calibration == 1);
	}

	/* Too little room: the first rows and -ENOSPC. */
	CHECK_EQ_INT(profile_save(path("a/b/profile.sqlite"), &m, in, nin, NULL, why, sizeof(why)), 0);
	CHECK_EQ_INT(profile_load(path("a/b/profile.sqlite"), &m, out, 2, &n, why, sizeof(why)), -ENOSPC);
	CHECK_EQ_INT(n, 2);

	/* No temporary file is left in the directory. */
	CHECK_EQ_INT(access(path("a/b/profile.sqlite-journal"), F_OK), -1);
	{
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "test $(ls -A %s | wc -l) -eq 1", path("a/b"));
		CHECK_EQ_INT(system(cmd), 0);
	}
}

struct identity_case {
	int line;
	struct machine m;
	const char *why;
};

static void test_identity(void)
{
	struct machine m = spr(), other;
	struct profile_peak out[PROFILE_MAX_PEAKS];
	const struct profile_peak *in;
	struct identity_case cases[8];
	char why[512];
	int n, nin, nc = 0;

	in = sample(&nin);
	CHECK_EQ_INT(profile_save(path("id.sqlite"), &m, in, nin, NULL, why, sizeof(why)), 0);

	other = m;
	other.model = 0xCF;
	cases[nc++] = (struct identity_case){ __LINE__, other, "profile is for a different CPU" };
	other = m;
	other.stepping = 6;
	cases[nc++] = (struct identity_case){ __LINE__, other, "profile is for a different CPU" };
	other = m;
	snprintf(other.vendor, sizeof(other.vendor), "AuthenticAMD");
	cases[nc++] = (struct identity_case){ __LINE__, other, "profile is for a different CPU" };
	other = m;
	snprintf(other.name, sizeof(other.name), "Intel(R) Xeon(R) Platinum 8480+");
	cases[nc++] = (struct identity_case){ __LINE__, other, "profile is for a different CPU" };
	other = m; /* a VM that hides AVX-512 */
	other.isa &= ~MACHINE_ISA_AVX512F;
	cases[nc++] = (struct identity_case){ __LINE__, other, "other ISA features" };

	for (int i = 0; i < nc; i++) {
		n = -1;
		why[0] = '\0';
		CHECK_EQ_INT(profile_load(path("id.sqlite"), &cases[i].m, out, PROFILE_MAX_PEAKS, &n, why,
					  sizeof(why)), 0);
		CHECK_ROW(n == 0, cases[i].line);
		CHECK_ROW(strstr(why, cases[i].why) != NULL, cases[i].line);
		if (!strstr(why, cases[i].why))
			fprintf(stderr, "  why: %s\n", why);
	}
	/* Another CPU set (or a quota now): the one-core figures apply, the
	 * all-CPU ones (the third and fourth sample rows) do not. */
	for (int k = 0; k < 2; k++) {
		other = m;
		if (k == 0) {
			snprintf(other.allowed_cpus, sizeof(other.allowed_cpus), "0");
			other.ncpu = 1;
		} else {
			other.ncpu = 1.5;
		}
		n = -1;
		CHECK_EQ_INT(profile_load(path("id.sqlite"), &other, out, PROFILE_MAX_PEAKS, &n, why,
					  sizeof(why)), 0);
		CHECK_EQ_INT(n, 2);
		for (int i = 0; i < n; i++)
			CHECK_STR(out[i].scope, "core");
		CHECK(strstr(why, "measured on CPUs 0-1 (2 CPUs)") != NULL);
		CHECK(strstr(why, "one-core figures apply") != NULL);
	}

	/* Another host (a home directory shared by a cluster's nodes). */
	{
		char q[600];
		CHECK_EQ_INT(profile_save(path("host.sqlite"), &m, in, nin, NULL, why, sizeof(why)), 0);
		snprintf(q, sizeof(q), "UPDATE machine SET host = 'node17'");
		sql(path("host.sqlite"), q);
		n = -1;
		CHECK_EQ_INT(profile_load(path("host.sqlite"), &m, out, PROFILE_MAX_PEAKS, &n, why,
					  sizeof(why)), 0);
		CHECK_EQ_INT(n, 0);
		CHECK(strstr(why, "profile is for host node17") != NULL);
		/* the older format, without a host: measure again */
		sql(path("host.sqlite"), "PRAGMA user_version = 1");
		CHECK_EQ_INT(profile_load(path("host.sqlite"), &m, out, PROFILE_MAX_PEAKS, &n, why,
					  sizeof(why)), 0);
		CHECK_EQ_INT(n, 0);
		CHECK(strstr(why, "older profile format 1") != NULL);
	}

	/* The kernel version and the date are not part of the identity; the
	 * uarch name follows from the CPU (a newer mfu may name it better). */
	other = m;
	snprintf(other.uarch, sizeof(other.uarch), "unknown");
	other.nominal_hz = 2.1e9;
	CHECK_EQ_INT(profile_load(path("id.sqlite"), &other, out, PROFILE_MAX_PEAKS, &n, why, sizeof(why)), 0);
	CHECK_EQ_INT(n, nin);
}

/* A fresh figure replaces the earlier one of the same thing unless it is
 * disturbed and the earlier one is not; the best row of each group is the
 * fastest undisturbed one. Fake measurements: a quiet calibration, then
 * one beside a CPU-bound job on both CPUs (the VM: 259 G one core,
 * 269 G "all" at 52%). */
static void test_merge_keeps_undisturbed(void)
{
	struct profile_peak quiet[4], busy[4], out[16];
	int n = -1, kept = -1;

	quiet[0] = peak("flops", "fp32", "core", "avx512_fma", 2.6e11, 1);
	quiet[1] = peak("flops", "fp32", "all", "avx512_fma", 5.2e11, 1);
	quiet[2] = peak("bandwidth", "", "all", "triad_nt", 6.0e10, 1);
	quiet[3] = peak("flops", "fp32", "all", "avx2_fma", 2.6e11, 0);
	for (int i = 0; i < 4; i++) {
		snprintf(quiet[i].cpus, sizeof(quiet[i].cpus), "0-1");
		quiet[i].ncpu = 2;
		quiet[i].threads = strcmp(quiet[i].scope, "all") == 0 ? 2 : 1;
		quiet[i].cpu_share = 0.99;
		quiet[i].calibration = 1;
		busy[i] = quiet[i];
		busy[i].calibration = 2;
		busy[i].measured_unix_s += 3600;
	}
	busy[0].value = 2.59e11;                               /* undisturbed: replaces */
	busy[1].value = 2.69e11, busy[1].disturbed = 1, busy[1].cpu_share = 0.52;
	busy[2].value = 3.0e10, busy[2].disturbed = 1, busy[2].cpu_share = 0.5;
	snprintf(busy[2].kernel, sizeof(busy[2].kernel), "triad"); /* the plain stores won this time */
	busy[3].value = 2.65e11, busy[3].disturbed = 1, busy[3].cpu_share = 0.55;

	CHECK_EQ_INT(profile_merge(quiet, 4, busy, 4, out, 16, &n, &kept), 0);
	CHECK_EQ_INT(n, 4);
	CHECK_EQ_INT(kept, 3);
	CHECK(out[0].value == 2.59e11 && out[0].calibration == 2);
	CHECK(out[1].value == 5.2e11 && out[1].calibration == 1 && !out[1].disturbed);
	CHECK(out[2].value == 6.0e10 && !out[2].disturbed); /* triad and triad_nt are one figure */
	CHECK_STR(out[2].kernel, "triad_nt");
	CHECK(out[3].value == 2.6e11 && !out[3].disturbed);
	CHECK(out[1].best && !out[3].best && out[2].best && out[0].best);

	/* nothing earlier: the disturbed figure is kept, flagged; an
	 * undisturbed slower kernel is the best of its group */
	CHECK_EQ_INT(profile_merge(NULL, 0, busy, 4, out, 16, &n, &kept), 0);
	CHECK_EQ_INT(kept, 0);
	CHECK(out[1].disturbed && out[3].disturbed);
	CHECK(out[1].best && !out[3].best); /* both disturbed: the fastest */
	busy[3].disturbed = 0;
	CHECK_EQ_INT(profile_merge(NULL, 0, busy, 4, out, 16, &n, &kept), 0);
	CHECK(!out[1].best && out[3].best);
	busy[3].disturbed = 1;

	/* another CPU set's all-CPU figures stay beside this one's; one
	 * core's figure is one core's on any set */
	for (int i = 0; i < 4; i++) {
		snprintf(busy[i].cpus, sizeof(busy[i].cpus), "0");
		busy[i].ncpu = 1;
		busy[i].threads = 1;
		busy[i].disturbed = 0;
	}
	CHECK_EQ_INT(profile_merge(quiet, 4, busy, 4, out, 16, &n, &kept), 0);
	CHECK_EQ_INT(n, 7); /* 4 fresh + the other set's 3 all-CPU rows */
	CHECK_EQ_INT(kept, 0);
	CHECK_EQ_INT(profile_merge(quiet, 4, busy, 4, out, 5, &n, &kept), 0); /* room for 5 */
	CHECK_EQ_INT(n, 5);
	CHECK_EQ_INT(profile_merge(quiet, 4, busy, 4, NULL, 5, &n, &kept), -EINVAL);
}

/* Saved through the file: what the latest calibration did is recorded,
 * and a reader gets the disturbed rows flagged. */
static void test_save_disturbed(void)
{
	struct machine m = spr();
	struct profile_peak in[3], out[PROFILE_MAX_PEAKS];
	struct profile_calibration saved;
	struct profile_status st;
	char why[512];
	int n;

	in[0] = peak("flops", "fp32", "core", "avx512_fma", 2.6e11, 1);
	in[1] = peak("flops", "fp32", "all", "avx512_fma", 5.2e11, 1);
	in[2] = peak("bandwidth", "", "all", "triad", 6.0e10, 1);
	for (int i = 0; i < 3; i++)
		in[i].cpu_share = 0.99, in[i].loadavg = 0.1;
	CHECK_EQ_INT(profile_save(path("dist.sqlite"), &m, in, 3, &saved, why, sizeof(why)), 0);
	CHECK_EQ_INT(saved.id, 1);
	CHECK_EQ_INT(saved.measurements, 3);
	CHECK_EQ_INT(saved.disturbed, 0);
	in[1].value = 2.69e11, in[1].cpu_share = 0.52, in[1].loadavg = 2.5, in[1].measured_unix_s += 60;
	in[2].value = 2.0e10, in[2].cpu_share = 0.4, in[2].loadavg = 2.5;
	CHECK_EQ_INT(profile_save(path("dist.sqlite"), &m, in, 3, &saved, why, sizeof(why)), 0);
	CHECK_EQ_INT(saved.id, 2);
	CHECK_EQ_INT(saved.disturbed, 2);
	CHECK_EQ_INT(saved.kept, 2);
	CHECK_EQ_INT(saved.kept_since, 1700000000);
	CHECK_NEAR(saved.lowest_share, 0.4, 1e-9);
	CHECK_NEAR(saved.loadavg, 2.5, 1e-9);
	CHECK_EQ_INT(profile_read(path("dist.sqlite"), &m, out, PROFILE_MAX_PEAKS, &n, &st, why, sizeof(why)), 0);
	CHECK_EQ_INT(st.format, 3);
	CHECK_EQ_INT(st.last.id, 2);
	CHECK_EQ_INT(st.last.kept, 2);
	CHECK_EQ_INT(n, 3);
	CHECK(out[1].value == 5.2e11 && !out[1].disturbed && out[1].calibration == 1);
	CHECK(out[2].value == 6.0e10 && !out[2].disturbed);
	CHECK_NEAR(out[1].cpu_share, 0.99, 1e-9);
	CHECK_NEAR(out[1].loadavg, 0.1, 1e-9);
	/* a profile that never had an undisturbed all-CPU figure keeps the
	 * disturbed one, flagged */
	CHECK_EQ_INT(profile_save(path("dist2.sqlite"), &m, in, 3, &saved, why, sizeof(why)), 0);
	CHECK_EQ_INT(saved.kept, 0);
	CHECK_EQ_INT(profile_load(path("dist2.sqlite"), &m, out, PROFILE_MAX_PEAKS, &n, why, sizeof(why)), 0);
	CHECK(out[1].disturbed && out[1].best && out[1].value == 2.69e11);
	CHECK_NEAR(out[1].cpu_share, 0.52, 1e-9);
}

/* A format 2 profile (mfu before issue 24) is read: its rows take the
 * machine row's CPU set, and a detail that says "disturbed" flags its
 * row; the next save rewrites it as format 3, keeping its undisturbed
 * figures where the new ones are disturbed. */
static void test_format_2(void)
{
	struct machine m = spr();
	struct profile_peak out[PROFILE_MAX_PEAKS], in;
	struct profile_status st;
	char why[512], host[256], q[2048];
	int n;

	CHECK_EQ_INT(gethostname(host, sizeof(host)), 0);
	snprintf(q, sizeof(q),
		 "PRAGMA application_id = 1835431280; PRAGMA user_version = 2;"
		 "CREATE TABLE machine (id INTEGER PRIMARY KEY, vendor, family, model, stepping, cpu_name, uarch,"
		 " isa, allowed_cpus, ncpu, nominal_hz, kernel, date, mfu_version, host);"
		 "CREATE TABLE measurement (kind, dtype, scope, kernel, value, best, detail, measured_unix_s);"
		 "INSERT INTO machine VALUES (1, 'GenuineIntel', 6, 143, 8, 'Intel(R) Xeon(R) Processor',"
		 " 'sapphire_rapids', 'sse2 avx fma avx2 avx512f avx512_bf16', '0-1', 2, 2e9, '6.1',"
		 " '2026-01-02T03:04:05Z', '0.1', '%s');"
		 "INSERT INTO measurement VALUES ('flops', 'fp32', 'core', 'avx512_fma', 2.59e11, 1,"
		 " 'measured: avx512_fma, 1 thread on CPU 0, best of 3 x 10 ms', 1767323045);"
		 "INSERT INTO measurement VALUES ('flops', 'fp32', 'all', 'avx512_fma', 2.69e11, 1,"
		 " 'measured: avx512_fma, 2 threads on CPUs 0-1, best of 6 x 10 ms (disturbed: the threads ran"
		 " 52%% of the time)', 1767323045);"
		 "INSERT INTO measurement VALUES ('flops', 'fp32', 'all', 'avx2_fma', 2.5e11, 0,"
		 " 'measured: avx2_fma, 2 threads on CPUs 0-1', 1767323045);",
		 host);
	sql(path("v2.sqlite"), q);
	CHECK_EQ_INT(profile_read(path("v2.sqlite"), &m, out, PROFILE_MAX_PEAKS, &n, &st, why, sizeof(why)), 0);
	CHECK_EQ_INT(st.format, 2);
	CHECK_EQ_INT(st.last.disturbed, 1);
	CHECK_STR(st.last.cpus, "0-1");
	CHECK_EQ_INT(n, 3);
	CHECK(!out[0].disturbed && out[0].threads == 1);
	CHECK(out[1].disturbed && out[1].threads == 2);
	CHECK_NEAR(out[1].cpu_share, 0.52, 1e-9);
	CHECK_STR(out[1].cpus, "0-1");
	/* the best all-CPU fp32 figure is now the undisturbed one */
	CHECK(!out[1].best && out[2].best);

	/* rewritten as format 3 by the next save */
	in = peak("flops", "fp32", "all", "avx2_fma", 1.0e11, 1);
	in.cpu_share = 0.3;
	CHECK_EQ_INT(profile_save(path("v2.sqlite"), &m, &in, 1, NULL, why, sizeof(why)), 0);
	CHECK_EQ_INT(profile_read(path("v2.sqlite"), &m, out, PROFILE_MAX_PEAKS, &n, &st, why, sizeof(why)), 0);
	CHECK_EQ_INT(st.format, 3);
	CHECK_EQ_INT(st.last.kept, 1);
	CHECK_EQ_INT(n, 3);
	for (int i = 0; i < n; i++)
		if (!strcmp(out[i].kernel, "avx2_fma"))
			CHECK(out[i].value == 2.5e11 && !out[i].disturbed);
}

/* Figures of two CPU sets: each set gets its own all-CPU rows, one
 * core's apply to both; a set without any says which sets have them. */
static void test_cpu_sets(void)
{
	struct machine m = spr(), one = spr();
	struct profile_peak in[2], out[PROFILE_MAX_PEAKS];
	char why[512];
	int n;

	in[0] = peak("flops", "fp32", "core", "avx512_fma", 2.6e11, 1);
	in[1] = peak("bandwidth", "", "all", "triad", 6.0e10, 1);
	CHECK_EQ_INT(profile_save(path("sets.sqlite"), &m, in, 2, NULL, why, sizeof(why)), 0);
	snprintf(one.allowed_cpus, sizeof(one.allowed_cpus), "1");
	one.ncpu = 1, one.ncpu_affinity = 1;
	in[1].value = 3.1e10;
	CHECK_EQ_INT(profile_save(path("sets.sqlite"), &one, in + 1, 1, NULL, why, sizeof(why)), 0);
	CHECK_EQ_INT(profile_load(path("sets.sqlite"), &m, out, PROFILE_MAX_PEAKS, &n, why, sizeof(why)), 0);
	CHECK_EQ_INT(n, 2);
	for (int i = 0; i < n; i++)
		if (!strcmp(out[i].scope, "all"))
			CHECK(out[i].value == 6.0e10 && out[i].threads == 2);
	CHECK_EQ_INT(profile_load(path("sets.sqlite"), &one, out, PROFILE_MAX_PEAKS, &n, why, sizeof(why)), 0);
	CHECK_EQ_INT(n, 2);
	for (int i = 0; i < n; i++)
		if (!strcmp(out[i].scope, "all"))
			CHECK(out[i].value == 3.1e10 && out[i].threads == 1);
	one.ncpu = 0.5; /* a quota now */
	CHECK_EQ_INT(profile_load(path("sets.sqlite"), &one, out, PROFILE_MAX_PEAKS, &n, why, sizeof(why)), 0);
	CHECK_EQ_INT(n, 1);
	CHECK(strstr(why, "0-1 (2 CPUs)") != NULL && strstr(why, "CPUs 1 (1 CPUs)") != NULL);
	CHECK(strstr(why, "taskset -c 1 mfu-calibrate") != NULL);
	/* the CPU sets holding the target's: the whole machine's figure
	 * for CPU 1, apart from its own, which stay as they were */
	{
		struct profile_peak sup[4];
		int nsup = -1;

		one.ncpu = 1;
		CHECK_EQ_INT(profile_read_sets(path("sets.sqlite"), &one, out, PROFILE_MAX_PEAKS, &n, NULL, sup, 4,
					       &nsup, why, sizeof(why)), 0);
		CHECK_EQ_INT(n, 2);
		for (int i = 0; i < n; i++)
			if (!strcmp(out[i].scope, "all"))
				CHECK(out[i].value == 3.1e10 && out[i].threads == 1);
		CHECK_EQ_INT(nsup, 1);
		CHECK(sup[0].value == 6.0e10 && !strcmp(sup[0].cpus, m.allowed_cpus) && !sup[0].applies &&
		      sup[0].threads == 2 && sup[0].best);
		/* its own set: nothing holds more */
		CHECK_EQ_INT(profile_read_sets(path("sets.sqlite"), &m, out, PROFILE_MAX_PEAKS, &n, NULL, sup, 4,
					       &nsup, why, sizeof(why)), 0);
		CHECK_EQ_INT(nsup, 0);
		/* a CPU outside the measured sets: none */
		snprintf(one.allowed_cpus, sizeof(one.allowed_cpus), "5");
		CHECK_EQ_INT(profile_read_sets(path("sets.sqlite"), &one, out, PROFILE_MAX_PEAKS, &n, NULL, sup, 4,
					       &nsup, why, sizeof(why)), 0);
		CHECK_EQ_INT(nsup, 0);
	}
}

static void test_missing_and_bad_files(void)
{
	struct machine m = spr();
	struct profile_peak out[PROFILE_MAX_PEAKS];
	char why[512];
	int n;
	static const char garbage[] = "this is not an SQLite database, just some bytes......"
		"........................................................................";

	/* Missing: not an error, 0 rows, and what to do. */
	n = -1;
	CHECK_EQ_INT(profile_load(path("none.sqlite"), &m, out, PROFILE_MAX_PEAKS, &n, why, sizeof(why)), 0);
	CHECK_EQ_INT(n, 0);
	CHECK(strstr(why, "no profile") && strstr(why, "run mfu-calibrate"));

	/* Garbage. */
	write_file(path("garbage.sqlite"), garbage, sizeof(garbage));
	n = -1;
	CHECK_EQ_INT(profile_load(path("garbage.sqlite"), &m, out, PROFILE_MAX_PEAKS, &n, why,
				  sizeof(why)), -EPROTO);
	CHECK_EQ_INT(n, 0);
	CHECK(strstr(why, "not an mfu profile") != NULL);

	/* Empty file (a valid, empty SQLite database). */
	write_file(path("empty.sqlite"), "", 0);
	CHECK_EQ_INT(profile_load(path("empty.sqlite"), &m, out, PROFILE_MAX_PEAKS, &n, why,
				  sizeof(why)), -EPROTO);
	CHECK(strstr(why, "not an mfu profile") != NULL);

	/* Another program's SQLite file (a run database, say). */
	sql(path("foreign.sqlite"), "CREATE TABLE run (id INTEGER); CREATE TABLE machine (x);");
	CHECK_EQ_INT(profile_load(path("foreign.sqlite"), &m, out, PROFILE_MAX_PEAKS, &n, why,
				  sizeof(why)), -EPROTO);
	CHECK(strstr(why, "not an mfu profile") != NULL);

	/* Our id but missing tables / rows. */
	sql(path("hollow.sqlite"), "PRAGMA application_id = 1835431280; PRAGMA user_version = 2; "
				   "CREATE TABLE t (x);");
	CHECK_EQ_INT(profile_load(path("hollow.sqlite"), &m, out, PROFILE_MAX_PEAKS, &n, why,
				  sizeof(why)), -EPROTO);
	CHECK(strstr(why, "damaged") != NULL);

	/* A newer format. */
	sql(path("newer.sqlite"), "PRAGMA application_id = 1835431280; PRAGMA user_version = 99;");
	CHECK_EQ_INT(profile_load(path("newer.sqlite"), &m, out, PROFILE_MAX_PEAKS, &n, why,
				  sizeof(why)), -ENOTSUP);
	CHECK(strstr(why, "newer") != NULL);

	/* A real profile cut in half. */
	{
		int nin;
		const struct profile_peak *in = sample(&nin);
		struct stat st;
		CHECK_EQ_INT(profile_save(path("cut.sqlite"), &m, in, nin, NULL, why, sizeof(why)), 0);
		CHECK_EQ_INT(stat(path("cut.sqlite"), &st), 0);
		CHECK_EQ_INT(truncate(path("cut.sqlite"), st.st_size / 2), 0);
		n = -1;
		int rc = profile_load(path("cut.sqlite"), &m, out, PROFILE_MAX_PEAKS, &n, why, sizeof(why));
		CHECK(rc == -EPROTO || (rc == 0 && n == 0));
		CHECK(why[0] != '\0');
	}

	/* A directory where the profile should be. */
	CHECK_EQ_INT(mkdir(path("dir.sqlite"), 0700), 0);
	CHECK(profile_load(path("dir.sqlite"), &m, out, PROFILE_MAX_PEAKS, &n, why, sizeof(why)) < 0);

	/* Saving where a file blocks the directory fails cleanly. */
	write_file(path("blocker"), "x", 1);
	CHECK(profile_save(path("blocker/profile.sqlite"), &m, out, 0, NULL, why, sizeof(why)) < 0);
	CHECK(why[0] != '\0');

	/* Bad arguments. */
	CHECK_EQ_INT(profile_load(path("none.sqlite"), NULL, out, PROFILE_MAX_PEAKS, &n, why, sizeof(why)),
		     -EINVAL);
	CHECK_EQ_INT(profile_load("", &m, out, PROFILE_MAX_PEAKS, &n, why, sizeof(why)), -EINVAL);
}

static void test_default_path(void)
{
	struct machine m = spr();
	struct profile_peak out[PROFILE_MAX_PEAKS];
	const struct profile_peak *in;
	char buf[512], why[512];
	int n, nin;

	char host[256], name[300], want[600];

	/* one profile per host: the name, with anything odd for a file as '_' */
	CHECK_EQ_INT(gethostname(host, sizeof(host)), 0);
	for (char *c = host; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '.' && *c != '_' && *c != '-')
			*c = '_';
	snprintf(name, sizeof(name), "profile-%s.sqlite", host);

	setenv("XDG_CACHE_HOME", path("xdg"), 1);
	CHECK_EQ_INT(profile_default_path(buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "%s/%s", path("xdg/mfu"), name);
	CHECK_STR(buf, want);

	/* A relative XDG_CACHE_HOME is ignored (XDG base directory spec). */
	setenv("XDG_CACHE_HOME", "relative", 1);
	setenv("HOME", path("home"), 1);
	CHECK_EQ_INT(profile_default_path(buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "%s/%s", path("home/.cache/mfu"), name);
	CHECK_STR(buf, want);
	unsetenv("XDG_CACHE_HOME");
	CHECK_EQ_INT(profile_default_path(buf, sizeof(buf)), 0);
	CHECK_STR(buf, want);

	/* NULL path = the default, both ways. */
	in = sample(&nin);
	setenv("XDG_CACHE_HOME", path("xdg"), 1);
	CHECK_EQ_INT(profile_save(NULL, &m, in, nin, NULL, why, sizeof(why)), 0);
	snprintf(want, sizeof(want), "%s/%s", path("xdg/mfu"), name);
	CHECK_EQ_INT(access(want, R_OK), 0);
	CHECK_EQ_INT(profile_load(NULL, &m, out, PROFILE_MAX_PEAKS, &n, why, sizeof(why)), 0);
	CHECK_EQ_INT(n, nin);

	/* Too small a buffer. */
	CHECK_EQ_INT(profile_default_path(buf, 8), -ENAMETOOLONG);
}

/* The profile of the user a root process acts for (sudo): their XDG cache
 * or HOME when it is a directory of theirs, else their home directory from
 * the password database; for root, root's own home whatever HOME says. */
static void test_user_path(void)
{
	char buf[600], want[600], host[256], name[300];
	struct passwd *root = getpwuid(0);
	uid_t uid = 4242;

	CHECK_EQ_INT(gethostname(host, sizeof(host)), 0);
	for (char *c = host; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '.' && *c != '_' && *c != '-')
			*c = '_';
	snprintf(name, sizeof(name), "profile-%s.sqlite", host);
	mkdir(path("uhome"), 0755);
	mkdir(path("uxdg"), 0755);
	if (geteuid() == 0) {
		CHECK_EQ_INT(chown(path("uhome"), uid, uid), 0);
		CHECK_EQ_INT(chown(path("uxdg"), uid, uid), 0);
		setenv("XDG_CACHE_HOME", path("uxdg"), 1);
		setenv("HOME", path("uhome"), 1);
		CHECK_EQ_INT(profile_user_path(uid, buf, sizeof(buf)), 0);
		snprintf(want, sizeof(want), "%s/mfu/%s", path("uxdg"), name);
		CHECK_STR(buf, want);
		unsetenv("XDG_CACHE_HOME");
		CHECK_EQ_INT(profile_user_path(uid, buf, sizeof(buf)), 0);
		snprintf(want, sizeof(want), "%s/.cache/mfu/%s", path("uhome"), name);
		CHECK_STR(buf, want);
	}
	/* HOME not theirs (plain sudo sets root's): not used; a uid without
	 * an entry in the password database has no profile path */
	setenv("HOME", dir, 1);
	CHECK_EQ_INT(profile_user_path(uid, buf, sizeof(buf)), getpwuid(uid) ? 0 : -ENOENT);
	/* root: its own home, whatever HOME (the user's, kept by sudo -E) says */
	if (root && root->pw_dir[0] == '/') {
		setenv("HOME", path("uhome"), 1);
		CHECK_EQ_INT(profile_user_path(0, buf, sizeof(buf)), 0);
		snprintf(want, sizeof(want), "%s/.cache/mfu/%s", root->pw_dir, name);
		CHECK_STR(buf, want);
	}
	unsetenv("HOME");
}

int main(void)
{
	char cmd[256];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_round_trip();
	test_identity();
	test_merge_keeps_undisturbed();
	test_save_disturbed();
	test_format_2();
	test_cpu_sets();
	test_missing_and_bad_files();
	test_default_path();
	test_user_path();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return check_status();
}
