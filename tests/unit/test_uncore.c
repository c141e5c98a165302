/* Memory-controller counters: units, discovery on fixture sysfs trees modelled on the kernel's uncore drivers
 * (tests/unit/fixtures/uncore/README.md), bytes from known counts, and
 * opening, reading and closing on a tree whose "uncore" PMU is really the
 * software PMU, so the system calls run on a machine without an uncore.
 * The format and alias parsing they use: test_pmu.c. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "record/counters/uncore.h"
#include "util.h"

#define FIX SRCDIR "/tests/unit/fixtures/uncore"
#define MIB_SCALE 6.103515625e-5

static void test_units(void)
{
	static const struct { int line; const char *unit; double bytes; } rows[] = {
		{ __LINE__, "MiB", 1048576.0 }, { __LINE__, "MB", 1e6 }, { __LINE__, "KiB", 1024.0 },
		{ __LINE__, "kB", 1e3 }, { __LINE__, "GiB", 1073741824.0 }, { __LINE__, "GB", 1e9 },
		{ __LINE__, "B", 1 }, { __LINE__, "Bytes", 1 }, { __LINE__, "bytes", 1 },
		{ __LINE__, "Joules", 0 }, { __LINE__, "mib", 0 }, { __LINE__, "", 0 },
		{ __LINE__, NULL, 0 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		CHECK_ROW(uncore_unit_bytes(rows[i].unit) == rows[i].bytes, rows[i].line);
	/* the kernel's scale for a CAS count: 6.103515625e-5 MiB = 64 B exactly */
	CHECK(MIB_SCALE * uncore_unit_bytes("MiB") == 64.0);
}

/* ---- discovery on the fixtures --------------------------------------- */

static struct uncore_set *set_new(void)
{
	struct uncore_set *s = calloc(1, sizeof(*s));
	if (!s)
		abort();
	return s;
}

static struct uncore_reading *reading_new(void)
{
	struct uncore_reading *r = calloc(1, sizeof(*r));
	if (!r)
		abort();
	return r;
}

static int count_dir(const struct uncore_set *s, enum uncore_dir dir, int socket)
{
	int n = 0;
	for (int i = 0; i < s->n; i++)
		if (s->ev[i].dir == dir && (socket < 0 || s->ev[i].socket == socket))
			n++;
	return n;
}

static void check_common(const struct uncore_set *s, int line)
{
	for (int i = 0; i < s->n; i++) {
		const struct uncore_event *ev = &s->ev[i];
		CHECK_ROW(ev->fd == -1, line);
		CHECK_ROW(ev->socket >= 0 && ev->socket < s->nsockets, line);
		CHECK_ROW(s->socket_cpu[ev->socket] == ev->cpu, line);
		CHECK_ROW(ev->leader >= 0 && ev->leader <= i, line);
		CHECK_ROW(s->ev[ev->leader].cpu == ev->cpu, line);
		CHECK_ROW(strcmp(s->ev[ev->leader].pmu, ev->pmu) == 0, line);
		/* every event converts its count to 64 bytes */
		CHECK_ROW(fabs(ev->scale * uncore_unit_bytes(ev->unit) - 64.0) < 1e-9, line);
		CHECK_ROW(ev->attr.size == sizeof(ev->attr), line);
	}
	for (int k = 1; k < s->nsockets; k++)
		CHECK_ROW(s->socket_cpu[k - 1] < s->socket_cpu[k], line);
}

static void test_none(void)
{
	struct uncore_set *s = set_new();
	struct uncore_reading *a = reading_new(), *b = reading_new();
	char why[256] = "x", desc[800];
	double rd = -1, wr = -1;

	CHECK_EQ_INT(uncore_discover(FIX "/none", s), 0);
	CHECK_EQ_INT(s->kind, UNCORE_KIND_NONE);
	CHECK_EQ_INT(s->n, 0);
	CHECK_EQ_INT(s->nsockets, 0);
	CHECK(strstr(s->missing, "no memory-controller PMU") != NULL);
	CHECK(strstr(s->missing, "virtual machines") != NULL);
	/* opening nothing is a clean no-op */
	CHECK_EQ_INT(uncore_open(s, why, sizeof(why)), 0);
	CHECK_STR(why, "");
	CHECK_EQ_INT(s->open, 0);
	CHECK_EQ_INT(uncore_open(s, NULL, 0), 0);
	CHECK_EQ_INT(uncore_read(s, a), 0);
	CHECK_EQ_INT(a->n, 0);
	CHECK(a->t_ns > 0);
	CHECK_EQ_INT(uncore_read(s, b), 0);
	CHECK_EQ_INT(uncore_bytes(s, a, b, &rd, &wr), -ENODEV);
	CHECK(rd == -1 && wr == -1);
	uncore_close(s);
	uncore_close(s);
	uncore_close(NULL);
	CHECK_EQ_INT(uncore_describe(s, desc, sizeof(desc)), 0);
	CHECK(strncmp(desc, "none: no memory-controller PMU", 30) == 0);
	CHECK_STR(uncore_kind_name(s->kind), "none");

	CHECK_EQ_INT(uncore_discover(FIX "/does-not-exist", s), -ENOENT);
	CHECK_EQ_INT(s->n, 0);
	CHECK(strstr(s->missing, "cannot read") != NULL);
	CHECK_EQ_INT(uncore_discover(NULL, s), -EINVAL);
	free(s);
	free(a);
	free(b);
}

static const struct uncore_event *find_ev(const struct uncore_set *s, const char *pmu,
					  const char *name, int cpu)
{
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->ev[i].pmu, pmu) == 0 && strcmp(s->ev[i].name, name) == 0 &&
		    s->ev[i].cpu == cpu)
			return &s->ev[i];
	return NULL;
}

static const struct {
	int line;
	const char *fixture;
	enum uncore_kind kind;
	int n, nsockets, cpu0, cpu1, split;
	/* one event to look at closely */
	const char *pmu, *name;
	int cpu, socket;
	uint32_t type;
	uint64_t config;
	enum uncore_dir dir;
	const char *source;
} disc_rows[] = {
	/* 8 PMUs x 2 sockets x read/write */
	{ __LINE__, "intel-2s-8imc", UNCORE_KIND_INTEL_IMC, 32, 2, 0, 22, 1,
	  "uncore_imc_0", "cas_count_read", 0, 0, 20, 0x0304, UNCORE_DIR_READ, "sysfs alias" },
	{ __LINE__, "intel-2s-8imc", UNCORE_KIND_INTEL_IMC, 32, 2, 0, 22, 1,
	  "uncore_imc_7", "cas_count_write", 22, 1, 27, 0x0c04, UNCORE_DIR_WRITE, "sysfs alias" },
	/* free-running preferred over the 12 CAS PMUs beside them */
	{ __LINE__, "intel-free-running", UNCORE_KIND_INTEL_FREE_RUNNING, 16, 2, 0, 40, 1,
	  "uncore_imc_free_running_3", "read", 40, 1, 43, 0x20ff, UNCORE_DIR_READ, "sysfs alias" },
	{ __LINE__, "intel-free-running", UNCORE_KIND_INTEL_FREE_RUNNING, 16, 2, 0, 40, 1,
	  "uncore_imc_free_running_0", "write", 0, 0, 40, 0x21ff, UNCORE_DIR_WRITE, "sysfs alias" },
	/* SPR free-running counts no bytes: CAS counts, umask over two ranges */
	{ __LINE__, "intel-spr", UNCORE_KIND_INTEL_IMC, 32, 2, 0, 56, 1,
	  "uncore_imc_5", "cas_count_read", 56, 1, 25, 0xcf05, UNCORE_DIR_READ, "sysfs alias" },
	{ __LINE__, "intel-spr", UNCORE_KIND_INTEL_IMC, 32, 2, 0, 56, 1,
	  "uncore_imc_0", "cas_count_write", 0, 0, 20, 0xf005, UNCORE_DIR_WRITE, "sysfs alias" },
	{ __LINE__, "intel-client", UNCORE_KIND_INTEL_FREE_RUNNING, 4, 1, 0, -1, 1,
	  "uncore_imc_free_running_1", "data_read", 0, 0, 21, 0x20ff, UNCORE_DIR_READ, "sysfs alias" },
	{ __LINE__, "intel-client", UNCORE_KIND_INTEL_FREE_RUNNING, 4, 1, 0, -1, 1,
	  "uncore_imc_free_running_0", "data_write", 0, 0, 20, 0x30ff, UNCORE_DIR_WRITE, "sysfs alias" },
	/* 24 UMCs, 12 per socket, each with its own socket's CPU */
	{ __LINE__, "amd", UNCORE_KIND_AMD_UMC, 48, 2, 0, 96, 1,
	  "amd_umc_0", "umc_cas_cmd.rd", 0, 0, 20, 0x10a, UNCORE_DIR_READ, "perf event table" },
	{ __LINE__, "amd", UNCORE_KIND_AMD_UMC, 48, 2, 0, 96, 1,
	  "amd_umc_12", "umc_cas_cmd.wr", 96, 1, 32, 0x20a, UNCORE_DIR_WRITE, "perf event table" },
	{ __LINE__, "amd", UNCORE_KIND_AMD_UMC, 48, 2, 0, 96, 1,
	  "amd_umc_23", "umc_cas_cmd.rd", 96, 1, 43, 0x10a, UNCORE_DIR_READ, "perf event table" },
	/* Zen 3: 8 DRAM channel events per socket, reads and writes together */
	{ __LINE__, "amd-zen3", UNCORE_KIND_AMD_DF, 16, 2, 0, 64, 0,
	  "amd_df", "dram_channel_data_controller_0", 0, 0, 11, 0x3807, UNCORE_DIR_TOTAL,
	  "perf event table" },
	{ __LINE__, "amd-zen3", UNCORE_KIND_AMD_DF, 16, 2, 0, 64, 0,
	  "amd_df", "dram_channel_data_controller_7", 64, 1, 11, 0x1000038c7ull, UNCORE_DIR_TOTAL,
	  "perf event table" },
};

static void test_discovery(void)
{
	struct uncore_set *s = set_new();

	for (size_t i = 0; i < ARRAY_SIZE(disc_rows); i++) {
		char root[512];
		const struct uncore_event *ev;
		int line = disc_rows[i].line;

		strbuf(root, sizeof(root), "%s/%s", FIX, disc_rows[i].fixture);
		CHECK_ROW(uncore_discover(root, s) == 0, line);
		CHECK_ROW(s->kind == disc_rows[i].kind, line);
		CHECK_ROW(s->n == disc_rows[i].n, line);
		if (s->n != disc_rows[i].n)
			fprintf(stderr, "  n = %d (%s)\n", s->n, s->missing);
		CHECK_ROW(s->nsockets == disc_rows[i].nsockets, line);
		CHECK_ROW(s->socket_cpu[0] == disc_rows[i].cpu0, line);
		if (disc_rows[i].nsockets > 1)
			CHECK_ROW(s->socket_cpu[1] == disc_rows[i].cpu1, line);
		CHECK_ROW(s->split == disc_rows[i].split, line);
		CHECK_ROW(s->complete == 1, line);
		CHECK_ROW(s->nskipped == 0, line);
		if (s->nskipped)
			fprintf(stderr, "  skipped: %s\n", s->skipped[0]);
		CHECK_ROW(s->missing[0] == '\0', line);
		CHECK_ROW(s->open == 0, line);
		check_common(s, line);
		/* the same number of events on every socket and direction */
		for (int k = 0; k < s->nsockets; k++) {
			if (s->split) {
				CHECK_ROW(count_dir(s, UNCORE_DIR_READ, k) == s->n / s->nsockets / 2, line);
				CHECK_ROW(count_dir(s, UNCORE_DIR_WRITE, k) == s->n / s->nsockets / 2, line);
			} else {
				CHECK_ROW(count_dir(s, UNCORE_DIR_TOTAL, k) == s->n / s->nsockets, line);
			}
		}
		ev = find_ev(s, disc_rows[i].pmu, disc_rows[i].name, disc_rows[i].cpu);
		CHECK_ROW(ev != NULL, line);
		if (!ev)
			continue;
		CHECK_ROW(ev->socket == disc_rows[i].socket, line);
		CHECK_ROW(ev->attr.type == disc_rows[i].type, line);
		CHECK_ROW(ev->attr.config == disc_rows[i].config, line);
		CHECK_ROW(ev->attr.config1 == 0 && ev->attr.config2 == 0, line);
		CHECK_ROW(ev->dir == disc_rows[i].dir, line);
		CHECK_ROW(strcmp(ev->source, disc_rows[i].source) == 0, line);
		/* grouping: read and write of one PMU and CPU together, except the
		 * DF's channel events (alone, to be multiplexed one by one) */
		if (s->kind == UNCORE_KIND_AMD_DF)
			CHECK_ROW(ev->leader == ev - s->ev, line);
		else if (ev->dir == UNCORE_DIR_WRITE)
			CHECK_ROW(ev->leader == ev - s->ev - 1, line);
		else
			CHECK_ROW(ev->leader == ev - s->ev, line);
	}

	/* details the table does not show */
	CHECK_EQ_INT(uncore_discover(FIX "/intel-2s-8imc", s), 0);
	{
		char desc[800];
		CHECK_EQ_INT(uncore_describe(s, desc, sizeof(desc)), 0);
		CHECK_STR(desc, "intel_imc: 32 events on 2 sockets (CPUs 0,22), read/write");
		CHECK_EQ_INT(uncore_describe(s, desc, 10), -ENOSPC);
		/* natural order: uncore_imc_0, 0, 0, 0, uncore_imc_1, ... */
		CHECK_STR(s->ev[0].pmu, "uncore_imc_0");
		CHECK_STR(s->ev[4].pmu, "uncore_imc_1");
		CHECK_STR(s->ev[0].alias, "event=0x04,umask=0x03");
		CHECK_STR(s->ev[0].unit, "MiB");
		CHECK(s->ev[0].scale == MIB_SCALE);
		CHECK_EQ_INT(s->ev[2].cpu, 22);
		CHECK_STR(s->note, "");
	}
	CHECK_EQ_INT(uncore_discover(FIX "/intel-spr", s), 0);
	CHECK(strstr(s->note, "4 intel_imc_free_running PMUs without DRAM byte events") != NULL);
	CHECK(strstr(s->note, "no read event") != NULL);
	CHECK_EQ_INT(uncore_discover(FIX "/amd-zen3", s), 0);
	{
		char desc[800];
		CHECK_EQ_INT(uncore_describe(s, desc, sizeof(desc)), 0);
		CHECK_STR(desc, "amd_df: 16 events on 2 sockets (CPUs 0,64), reads and writes together");
		CHECK_STR(s->ev[4].name, "dram_channel_data_controller_4");
		CHECK_EQ_INT(s->ev[4].attr.config, 0x100003807ull);
		CHECK_STR(s->ev[4].alias, "event=0x107,umask=0x38");
	}
	free(s);
}

/* ---- bytes from known counts ----------------------------------------- */

static void fill(struct uncore_reading *r, const struct uncore_set *s, uint64_t rd, uint64_t wr,
		 uint64_t t)
{
	r->n = s->n;
	r->t_ns = t;
	for (int i = 0; i < s->n; i++) {
		r->value[i] = s->ev[i].dir == UNCORE_DIR_WRITE ? wr : rd;
		r->enabled[i] = r->running[i] = t;
	}
}

static void test_bytes(void)
{
	struct uncore_set *s = set_new(), *copy = set_new();
	struct uncore_reading *a = reading_new(), *b = reading_new();
	struct uncore_delta d;
	double rd, wr;

	CHECK_EQ_INT(uncore_discover(FIX "/intel-2s-8imc", s), 0);
	/* 1000 CAS reads with scale 6.103515625e-5 MiB = 64000 bytes */
	fill(a, s, 0, 0, 1000);
	fill(b, s, 0, 0, 2000);
	b->value[0] = 1000;
	CHECK_EQ_INT(uncore_bytes(s, a, b, &rd, &wr), 0);
	CHECK(rd == 64000.0);
	CHECK(wr == 0.0);
	CHECK_EQ_INT(uncore_delta(s, a, b, &d), 0);
	CHECK(d.socket_read[0] == 64000.0 && d.socket_read[1] == 0.0);
	CHECK(d.total == 64000.0);
	CHECK(d.running_fraction == 1.0);
	CHECK_EQ_INT(d.nsockets, 2);

	/* every event: 16 read events x 1000 + 16 write events x 500 */
	fill(a, s, 5000, 7000, 1000);
	fill(b, s, 6000, 7500, 2000);
	CHECK_EQ_INT(uncore_delta(s, a, b, &d), 0);
	CHECK(d.read == 16 * 1000 * 64.0);
	CHECK(d.write == 16 * 500 * 64.0);
	CHECK(d.total == d.read + d.write);
	CHECK(d.socket_read[1] == 8 * 1000 * 64.0);
	CHECK(d.socket_write[0] == 8 * 500 * 64.0);
	CHECK(d.socket_total[0] + d.socket_total[1] == d.total);

	/* a counter that wrapped still gives its delta */
	a->value[0] = UINT64_MAX - 9;
	b->value[0] = 990;
	CHECK_EQ_INT(uncore_delta(s, a, b, &d), 0);
	CHECK(d.read == 16 * 1000 * 64.0);

	/* multiplexed: counted half the time -> doubled */
	fill(a, s, 0, 0, 1000);
	fill(b, s, 0, 0, 2000);
	b->value[0] = 1000;
	b->running[0] = 1500;
	CHECK_EQ_INT(uncore_delta(s, a, b, &d), 0);
	CHECK_NEAR(d.read, 128000.0, 1e-6);
	CHECK_NEAR(d.running_fraction, 0.5, 1e-12);
	/* never counted: unknown, not 0 */
	b->running[0] = 1000;
	CHECK_EQ_INT(uncore_delta(s, a, b, &d), -ENODATA);
	CHECK_EQ_INT(uncore_bytes(s, a, b, &rd, &wr), -ENODATA);

	/* the unit decides: MB and bytes work, an unknown unit is an error */
	*copy = *s;
	fill(a, copy, 0, 0, 1000);
	fill(b, copy, 0, 0, 2000);
	b->value[0] = 1000;
	strbuf(copy->ev[0].unit, sizeof(copy->ev[0].unit), "MB");
	copy->ev[0].scale = 6.4e-5;
	CHECK_EQ_INT(uncore_bytes(copy, a, b, &rd, &wr), 0);
	CHECK_NEAR(rd, 64000.0, 1e-6);
	strbuf(copy->ev[0].unit, sizeof(copy->ev[0].unit), "B");
	copy->ev[0].scale = 64;
	CHECK_EQ_INT(uncore_bytes(copy, a, b, &rd, &wr), 0);
	CHECK(rd == 64000.0);
	strbuf(copy->ev[0].unit, sizeof(copy->ev[0].unit), "furlongs");
	rd = wr = -1;
	CHECK_EQ_INT(uncore_bytes(copy, a, b, &rd, &wr), -EINVAL);
	CHECK(rd == -1 && wr == -1);

	/* readings of another set */
	a->n = 3;
	CHECK_EQ_INT(uncore_bytes(s, a, b, &rd, &wr), -EINVAL);
	CHECK_EQ_INT(uncore_bytes(s, a, b, NULL, &wr), -EINVAL);

	/* reads and writes together: only the total */
	CHECK_EQ_INT(uncore_discover(FIX "/amd-zen3", s), 0);
	fill(a, s, 0, 0, 1000);
	fill(b, s, 100, 100, 2000);
	CHECK_EQ_INT(uncore_bytes(s, a, b, &rd, &wr), -EOPNOTSUPP);
	CHECK_EQ_INT(uncore_delta(s, a, b, &d), 0);
	CHECK(d.total == 16 * 100 * 64.0);
	CHECK(d.socket_total[1] == 8 * 100 * 64.0);
	CHECK(isnan(d.read) && isnan(d.write) && isnan(d.socket_read[0]));

	/* AMD UMC: built-in 64 B per CAS command */
	CHECK_EQ_INT(uncore_discover(FIX "/amd", s), 0);
	fill(a, s, 0, 0, 1000);
	fill(b, s, 10, 20, 2000);
	CHECK_EQ_INT(uncore_bytes(s, a, b, &rd, &wr), 0);
	CHECK(rd == 24 * 10 * 64.0 && wr == 24 * 20 * 64.0);
	free(s);
	free(copy);
	free(a);
	free(b);
}

/* ---- malformed and unusual trees, built on the fly -------------------- */

static char tmproot[256];

static void put(const char *rel, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(const char *rel, const char *fmt, ...)
{
	char path[768], dir[768];
	va_list ap;
	FILE *f;

	strbuf(path, sizeof(path), "%s/%s", tmproot, rel);
	for (char *p = path + strlen(tmproot) + 1; *p; p++) {
		if (*p != '/')
			continue;
		memcpy(dir, path, (size_t)(p - path));
		dir[p - path] = '\0';
		mkdir(dir, 0755);
	}
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		abort();
	}
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

static void rm_tree(void)
{
	char cmd[300];
	if (tmproot[0] && strbuf(cmd, sizeof(cmd), "rm -rf '%s'", tmproot) == 0 && system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmproot);
}

static void new_tree(void)
{
	rm_tree();
	strbuf(tmproot, sizeof(tmproot), "/tmp/mfu-uncore-XXXXXX");
	if (!mkdtemp(tmproot)) {
		perror("mkdtemp");
		abort();
	}
	chmod(tmproot, 0755);
}

/* An Intel IMC PMU with the SKX formats and CAS aliases. */
static void imc(const char *name, int type, const char *cpumask, const char *rd_alias,
		const char *scale, const char *unit)
{
	char rel[128];
#define P(file, ...) do { strbuf(rel, sizeof(rel), "%s/%s", name, file); put(rel, __VA_ARGS__); } while (0)
	P("type", "%d\n", type);
	if (cpumask)
		P("cpumask", "%s\n", cpumask);
	P("format/event", "config:0-7\n");
	P("format/umask", "config:8-15\n");
	P("format/edge", "config:18\n");
	P("events/clockticks", "event=0x00,umask=0x00\n");
	if (rd_alias) {
		P("events/cas_count_read", "%s\n", rd_alias);
		if (scale)
			P("events/cas_count_read.scale", "%s\n", scale);
		if (unit)
			P("events/cas_count_read.unit", "%s\n", unit);
	}
	P("events/cas_count_write", "event=0x04,umask=0x0c\n");
	P("events/cas_count_write.scale", "6.103515625e-5\n");
	P("events/cas_count_write.unit", "MiB\n");
#undef P
}

static const struct {
	int line;
	const char *rd_alias, *scale, *unit, *cpumask;
	int planned;            /* the odd PMU uncore_imc_1 has events */
	const char *reason;     /* in skipped[] when not, or in note[] when planned */
} odd_rows[] = {
	{ __LINE__, "event=0x04,umask=0x03,bogus=1", "6.103515625e-5", "MiB", "0", 0,
	  "uncore_imc_1/cas_count_read: cannot encode 'event=0x04,umask=0x03,bogus=1': a term names no format/ field" },
	{ __LINE__, "event=0x04,umask=0x1003", "6.103515625e-5", "MiB", "0", 0, "too wide" },
	{ __LINE__, "event=0x04,,umask=0x03", "6.103515625e-5", "MiB", "0", 0, "malformed" },
	{ __LINE__, "event=0x04,umask=0x03", "6.103515625e-5", "furlongs", "0", 0,
	  "uncore_imc_1/cas_count_read: unknown unit 'furlongs'" },
	{ __LINE__, "event=0x04,umask=0x03", "abc", "MiB", "0", 0, "scale 'abc' is not a positive number" },
	{ __LINE__, "event=0x04,umask=0x03", "-1", "MiB", "0", 0, "not a positive number" },
	{ __LINE__, "event=0x04,umask=0x03", "6.103515625e-5", NULL, "0", 0, "has a .scale but no .unit" },
	{ __LINE__, NULL, NULL, NULL, "0", 0, "uncore_imc_1: no read event (events/cas_count_read)" },
	{ __LINE__, "event=0x04,umask=0x03", "6.103515625e-5", "MiB", "", 0, "is empty" },
	{ __LINE__, "event=0x04,umask=0x03", "6.103515625e-5", "MiB", "x", 0, "malformed" },
	{ __LINE__, "event=0x04,umask=0x03", "6.103515625e-5", "MiB", NULL, 0, "unreadable or malformed" },
	/* Linux < 5.10 scale for ICX free-running: 4 B per count; 64 is used */
	{ __LINE__, "event=0x04,umask=0x03", "3.814697266e-6", "MiB", "0", 1,
	  "uncore_imc_1/cas_count_read: the kernel's scale 3.814697266e-06 MiB is 4 B per count, not 64: using 64" },
	/* no scale and no unit: a bare count of 64-byte lines */
	{ __LINE__, "event=0x04,umask=0x03", NULL, NULL, "0", 1, "" },
	/* a unit without a scale: scale 1 of that unit, corrected to 64 B */
	{ __LINE__, "event=0x04,umask=0x03", NULL, "B", "0", 1, "not 64: using 64" },
};

static void test_odd_trees(void)
{
	struct uncore_set *s = set_new();

	for (size_t i = 0; i < ARRAY_SIZE(odd_rows); i++) {
		int line = odd_rows[i].line, found = 0;

		new_tree();
		imc("uncore_imc_0", 20, "0", "event=0x04,umask=0x03", "6.103515625e-5", "MiB");
		imc("uncore_imc_1", 21, odd_rows[i].cpumask, odd_rows[i].rd_alias, odd_rows[i].scale,
		    odd_rows[i].unit);
		CHECK_ROW(uncore_discover(tmproot, s) == 0, line);
		CHECK_ROW(s->kind == UNCORE_KIND_INTEL_IMC, line);
		if (odd_rows[i].planned) {
			const struct uncore_event *ev = find_ev(s, "uncore_imc_1", "cas_count_read", 0);
			CHECK_ROW(s->n == 4 && s->complete && s->nskipped == 0, line);
			CHECK_ROW(ev && fabs(ev->scale * uncore_unit_bytes(ev->unit) - 64) < 1e-9, line);
			CHECK_ROW(strstr(s->note, odd_rows[i].reason) != NULL, line);
			if (!strstr(s->note, odd_rows[i].reason))
				fprintf(stderr, "  note: %s\n", s->note);
			continue;
		}
		/* the odd PMU is left out with its reason; the good one stays */
		CHECK_ROW(s->n == 2, line);
		CHECK_ROW(strcmp(s->ev[0].pmu, "uncore_imc_0") == 0, line);
		CHECK_ROW(s->complete == 0, line);
		CHECK_ROW(s->nskipped == 1, line);
		for (int k = 0; k < s->nskipped && k < UNCORE_MAX_SKIPPED; k++)
			if (strstr(s->skipped[k], odd_rows[i].reason))
				found = 1;
		CHECK_ROW(found, line);
		if (!found)
			fprintf(stderr, "  skipped: %s\n", s->nskipped ? s->skipped[0] : "(none)");
	}

	/* a malformed format file costs only the events that use it */
	new_tree();
	imc("uncore_imc_0", 20, "0", "event=0x04,umask=0x03", "6.103515625e-5", "MiB");
	put("uncore_imc_0/format/thresh", "config:zz\n");
	CHECK_EQ_INT(uncore_discover(tmproot, s), 0);
	CHECK_EQ_INT(s->n, 2);
	CHECK_EQ_INT(s->nskipped, 1);
	CHECK(strstr(s->skipped[0], "format/thresh 'config:zz' is malformed") != NULL);

	/* sockets enumerated alternately (CPU 0 on socket 0, CPU 1 on socket
	 * 1): the cpumask is a range */
	new_tree();
	imc("uncore_imc_0", 20, "0-1", "event=0x04,umask=0x03", "6.103515625e-5", "MiB");
	CHECK_EQ_INT(uncore_discover(tmproot, s), 0);
	CHECK_EQ_INT(s->nsockets, 2);
	CHECK_EQ_INT(s->socket_cpu[1], 1);
	CHECK_EQ_INT(s->n, 4);

	/* Linux 6.11+: a PMU whose box exists on one die only lists that die */
	new_tree();
	imc("uncore_imc_0", 20, "0,56", "event=0x04,umask=0x03", "6.103515625e-5", "MiB");
	imc("uncore_imc_1", 21, "56", "event=0x04,umask=0x03", "6.103515625e-5", "MiB");
	imc("uncore_imc_10", 22, "0", "event=0x04,umask=0x03", "6.103515625e-5", "MiB");
	CHECK_EQ_INT(uncore_discover(tmproot, s), 0);
	CHECK_EQ_INT(s->n, 8);
	CHECK_EQ_INT(s->nsockets, 2);
	CHECK_EQ_INT(count_dir(s, UNCORE_DIR_READ, 0), 2);
	CHECK_EQ_INT(count_dir(s, UNCORE_DIR_READ, 1), 2);
	CHECK_STR(s->ev[4].pmu, "uncore_imc_1");  /* 1 before 10 */
	CHECK_STR(s->ev[6].pmu, "uncore_imc_10");
	check_common(s, __LINE__);

	/* more sockets than a cpumask may name */
	new_tree();
	imc("uncore_imc_0", 20, "0-16", "event=0x04,umask=0x03", "6.103515625e-5", "MiB");
	CHECK_EQ_INT(uncore_discover(tmproot, s), 0);
	CHECK_EQ_INT(s->kind, UNCORE_KIND_NONE);
	CHECK(strstr(s->missing, "none has a DRAM traffic event") != NULL);

	/* names that only look like ours */
	new_tree();
	imc("uncore_imc_x", 20, "0", "event=0x04,umask=0x03", "6.103515625e-5", "MiB");
	imc("uncore_imcfoo", 21, "0", "event=0x04,umask=0x03", "6.103515625e-5", "MiB");
	imc("amd_umc", 22, "0", "event=0x04,umask=0x03", "6.103515625e-5", "MiB");
	imc("amd_df_1", 23, "0", "event=0x04,umask=0x03", "6.103515625e-5", "MiB");
	CHECK_EQ_INT(uncore_discover(tmproot, s), 0);
	CHECK_EQ_INT(s->kind, UNCORE_KIND_NONE);
	CHECK(strstr(s->missing, "no memory-controller PMU") != NULL);

	/* a bad type */
	new_tree();
	imc("uncore_imc", 20, "0", "event=0x04,umask=0x03", "6.103515625e-5", "MiB");
	put("uncore_imc/type", "twenty\n");
	CHECK_EQ_INT(uncore_discover(tmproot, s), 0);
	CHECK_EQ_INT(s->kind, UNCORE_KIND_NONE);
	CHECK(strstr(s->missing, "none has a DRAM traffic event") != NULL);

	/* a Zen 4 data fabric without UMC PMUs (Linux before 6.7) */
	new_tree();
	put("amd_df/type", "11\n");
	put("amd_df/cpumask", "0,96\n");
	put("amd_df/format/event", "config:0-7,32-37\n");
	put("amd_df/format/umask", "config:8-15,24-27\n");
	CHECK_EQ_INT(uncore_discover(tmproot, s), 0);
	CHECK_EQ_INT(s->kind, UNCORE_KIND_NONE);
	CHECK(strstr(s->missing, "amd_umc PMUs (Linux 6.7+)") != NULL);

	/* a kernel that exports a UMC alias of its own: it wins over the table */
	new_tree();
	put("amd_umc_0/type", "20\n");
	put("amd_umc_0/cpumask", "0\n");
	put("amd_umc_0/format/event", "config:0-7\n");
	put("amd_umc_0/format/rdwrmask", "config:8-9\n");
	put("amd_umc_0/events/umc_cas_cmd.rd", "event=0x0b,rdwrmask=0x1\n");
	CHECK_EQ_INT(uncore_discover(tmproot, s), 0);
	CHECK_EQ_INT(s->kind, UNCORE_KIND_AMD_UMC);
	CHECK_EQ_INT(s->n, 2);
	CHECK_EQ_INT(s->ev[0].attr.config, 0x10b);
	CHECK_STR(s->ev[0].source, "sysfs alias");
	CHECK_STR(s->ev[1].source, "perf event table");
	free(s);
}

/* ---- opening and reading, for real -----------------------------------
 * The "memory controllers" below are the software PMU (type 1): cpu-clock
 * (config 0) for reads, context-switches (config 3) for writes, opened
 * system-wide on CPUs 0 and 1 like uncore events on two sockets. */

static int software_tree(int npmus, int type)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	const char *mask = ncpu >= 2 ? "0,1" : "0";

	new_tree();
	for (int i = 0; i < npmus; i++) {
		char name[32];
		char rel[96];
		snprintf(name, sizeof(name), "uncore_imc_%d", i);
#define P(file, ...) do { strbuf(rel, sizeof(rel), "%s/%s", name, file); put(rel, __VA_ARGS__); } while (0)
		P("type", "%d\n", type);
		P("cpumask", "%s\n", mask);
		P("format/event", "config:0-7\n");
		P("events/cas_count_read", "event=0x0\n");
		P("events/cas_count_read.scale", "6.103515625e-5\n");
		P("events/cas_count_read.unit", "MiB\n");
		P("events/cas_count_write", "event=0x3\n");
		P("events/cas_count_write.scale", "6.103515625e-5\n");
		P("events/cas_count_write.unit", "MiB\n");
#undef P
	}
	return ncpu >= 2 ? 2 : 1;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void test_open_read(void)
{
	struct uncore_set *s = set_new();
	struct uncore_reading *a = reading_new(), *b = reading_new();
	struct uncore_delta d;
	char why[512];
	int nsock, err;

	/* 16 IMCs on each of 2 sockets: 32 groups of read + write */
	nsock = software_tree(16, 1);
	CHECK_EQ_INT(uncore_discover(tmproot, s), 0);
	CHECK_EQ_INT(s->n, 16 * nsock * 2);
	err = uncore_open(s, why, sizeof(why));
	if (err == -EACCES) {
		/* not root and perf_event_paranoid > 0: the message names the fix */
		CHECK(strstr(why, "perf_event_paranoid <= 0") != NULL);
		CHECK(strstr(why, "sudo sysctl kernel.perf_event_paranoid=0") != NULL);
		fprintf(stderr, "uncore_open refused (%s): live read not tested\n", why);
		goto out;
	}
	CHECK_EQ_INT(err, 0);
	CHECK_STR(why, "");
	CHECK_EQ_INT(s->open, 1);
	for (int i = 0; i < s->n; i++)
		CHECK(s->ev[i].fd >= 0);
	CHECK_EQ_INT(uncore_open(s, why, sizeof(why)), 0); /* already open: no-op */

	CHECK_EQ_INT(uncore_read(s, a), 0);
	sleep_ms(30);
	CHECK_EQ_INT(uncore_read(s, b), 0);
	CHECK_EQ_INT(a->n, s->n);
	CHECK(b->t_ns > a->t_ns);
	CHECK_EQ_INT(uncore_delta(s, a, b, &d), 0);
	/* cpu-clock counts the wall time of its CPU: per "read" event about
	 * the time between the readings, as 64-byte units */
	{
		double per_event = d.read / 64.0 / (16.0 * nsock);
		double elapsed = (double)(b->t_ns - a->t_ns);
		CHECK(per_event > 0.8 * elapsed && per_event < 1.2 * elapsed + 2e6);
		if (!(per_event > 0.8 * elapsed && per_event < 1.2 * elapsed + 2e6))
			fprintf(stderr, "  per event %.0f ns vs %.0f ns elapsed\n", per_event, elapsed);
		for (int k = 0; k < nsock; k++)
			CHECK(d.socket_read[k] > 0);
		CHECK(d.running_fraction > 0.99);
		CHECK(d.write >= 0);
	}
	/* the cost of one reading: one read() per group */
	{
		const int reps = 200;
		uint64_t t0 = now_ns();
		for (int i = 0; i < reps; i++)
			uncore_read(s, b);
		fprintf(stderr, "uncore_read of %d IMCs x %d CPUs: %d read() calls, %.1f us per reading\n",
			16, nsock, 16 * nsock, (double)(now_ns() - t0) / reps / 1e3);
	}
	uncore_close(s);
	CHECK_EQ_INT(s->open, 0);
	for (int i = 0; i < s->n; i++)
		CHECK_EQ_INT(s->ev[i].fd, -1);
	CHECK_EQ_INT(uncore_read(s, a), 0);
	CHECK_EQ_INT(a->n, 0);
	uncore_close(s);

	/* a type no PMU has: all or nothing, the event is named */
	software_tree(2, 0x7ffffff0);
	CHECK_EQ_INT(uncore_discover(tmproot, s), 0);
	err = uncore_open(s, why, sizeof(why));
	if (geteuid() == 0) {
		CHECK_EQ_INT(err, -ENOENT);
		CHECK(strstr(why, "cannot open uncore_imc_0/cas_count_read on CPU 0") != NULL);
	} else {
		CHECK(err == -ENOENT || err == -EACCES);
	}
	CHECK_EQ_INT(s->open, 0);
	for (int i = 0; i < s->n; i++)
		CHECK_EQ_INT(s->ev[i].fd, -1);

	/* refused: as nobody, with perf_event_paranoid > 0 */
	if (geteuid() == 0) {
		char text[16] = "";
		FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
		int level = 0;
		if (f) {
			if (fgets(text, sizeof(text), f))
				level = atoi(text);
			fclose(f);
		}
		if (level > 0) {
			pid_t pid;
			int status = 0;

			software_tree(2, 1);
			CHECK_EQ_INT(uncore_discover(tmproot, s), 0);
			put("paranoid", "4\n");
			pid = fork();
			if (pid == 0) {
				char path[300];
				int ok;
				strbuf(path, sizeof(path), "%s/paranoid", tmproot);
				s->paranoid_path = path;
				if (setgid(65534) != 0 || setuid(65534) != 0)
					_exit(3);
				err = uncore_open(s, why, sizeof(why));
				ok = err == -EACCES && s->open == 0 &&
				     strcmp(why, "system-wide memory-controller counters need root (or "
					    "CAP_PERFMON) or perf_event_paranoid <= 0 (it is 4): run as "
					    "root or sudo sysctl kernel.perf_event_paranoid=0") == 0;
				if (!ok)
					fprintf(stderr, "  as nobody: %d '%s'\n", err, why);
				_exit(ok ? 0 : 1);
			}
			CHECK(pid > 0);
			waitpid(pid, &status, 0);
			CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		}
	}
out:
	uncore_close(s);
	free(s);
	free(a);
	free(b);
}

int main(void)
{
	test_units();
	test_none();
	test_discovery();
	test_bytes();
	test_odd_trees();
	test_open_read();
	rm_tree();
	return check_status();
}
