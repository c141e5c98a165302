/* A PMU's sysfs (pmu.h): format/ and terms parsing (table-driven), and the
 * reading of a PMU on the fixture sysfs trees of tests/unit/fixtures
 * (type, format/ fields, events/ aliases with .scale and .unit). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "record/counters/pmu.h"
#include "util.h"

#define FIX SRCDIR "/tests/unit/fixtures/uncore"

/* ---- format files --------------------------------------------------- */

static const struct {
	int line;
	const char *spec;
	int err, config;
	uint64_t mask;
} format_rows[] = {
	{ __LINE__, "config:0-7", 0, 0, 0xff },
	{ __LINE__, "config:0-7\n", 0, 0, 0xff },
	{ __LINE__, "config:18", 0, 0, 1ull << 18 },
	{ __LINE__, "config1:0-4", 0, 1, 0x1f },
	{ __LINE__, "config2:0-63", 0, 2, ~0ull },
	{ __LINE__, "config:0-7,32-35,59-60", 0, 0, 0xffull | 0xfull << 32 | 0x3ull << 59 },
	{ __LINE__, "config:8-15,24-27", 0, 0, 0xff00ull | 0xf000000ull },
	{ __LINE__, "config:8-15,32-55", 0, 0, 0xff00ull | 0xffffffull << 32 },
	{ __LINE__, "config:63", 0, 0, 1ull << 63 },
	{ __LINE__, "config3:0-7", -EINVAL, 0, 0 },
	{ __LINE__, "config:", -EINVAL, 0, 0 },
	{ __LINE__, "config", -EINVAL, 0, 0 },
	{ __LINE__, "conf:0-7", -EINVAL, 0, 0 },
	{ __LINE__, "config:7-0", -EINVAL, 0, 0 },
	{ __LINE__, "config:0-64", -EINVAL, 0, 0 },
	{ __LINE__, "config:64", -EINVAL, 0, 0 },
	{ __LINE__, "config:0-7,", -EINVAL, 0, 0 },
	{ __LINE__, "config:,0-7", -EINVAL, 0, 0 },
	{ __LINE__, "config:0--7", -EINVAL, 0, 0 },
	{ __LINE__, "config:0-", -EINVAL, 0, 0 },
	{ __LINE__, "config:a", -EINVAL, 0, 0 },
	{ __LINE__, "config:0-7;8", -EINVAL, 0, 0 },
	{ __LINE__, "config:99999999999999999999", -EINVAL, 0, 0 },
	{ __LINE__, "", -EINVAL, 0, 0 },
};

static void test_formats(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(format_rows); i++) {
		struct pmu_format f;
		int err = pmu_parse_format("umask", format_rows[i].spec, &f);
		CHECK_ROW(err == format_rows[i].err, format_rows[i].line);
		if (err == 0 && format_rows[i].err == 0) {
			CHECK_ROW(f.config == format_rows[i].config, format_rows[i].line);
			CHECK_ROW(f.mask == format_rows[i].mask, format_rows[i].line);
			CHECK_ROW(strcmp(f.name, "umask") == 0, format_rows[i].line);
		}
	}
	{
		struct pmu_format f;
		char longname[64];
		memset(longname, 'a', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = '\0';
		CHECK_EQ_INT(pmu_parse_format(longname, "config:0-7", &f), -EINVAL);
		CHECK_EQ_INT(pmu_parse_format("", "config:0-7", &f), -EINVAL);
		CHECK_EQ_INT(pmu_parse_format(NULL, "config:0-7", &f), -EINVAL);
		CHECK_EQ_INT(pmu_parse_format("x", NULL, &f), -EINVAL);
	}
}

/* ---- aliases -------------------------------------------------------- */

/* Format sets as the kernel's drivers register them. */
enum fmtset { SKX, DF_ZEN1_3, DF_ZEN4, SPR, UMC, FILTERS, NSETS };

static const char *const fmt_specs[NSETS][6][2] = {
	[SKX] = { { "event", "config:0-7" }, { "umask", "config:8-15" }, { "edge", "config:18" },
		  { "inv", "config:23" }, { "thresh", "config:24-31" } },
	[DF_ZEN1_3] = { { "event", "config:0-7,32-35,59-60" }, { "umask", "config:8-15" } },
	[DF_ZEN4] = { { "event", "config:0-7,32-37" }, { "umask", "config:8-15,24-27" } },
	[SPR] = { { "event", "config:0-7" }, { "umask", "config:8-15,32-55" } },
	[UMC] = { { "event", "config:0-7" }, { "rdwrmask", "config:8-9" } },
	[FILTERS] = { { "event", "config:0-7" }, { "filter_tid", "config1:0-4" },
		      { "mask", "config2:0-63" } },
};

static int load_set(enum fmtset s, struct pmu_format *fmt)
{
	int n = 0;
	for (int i = 0; i < 6 && fmt_specs[s][i][0]; i++)
		if (pmu_parse_format(fmt_specs[s][i][0], fmt_specs[s][i][1], &fmt[n]) == 0)
			n++;
	return n;
}

static const struct {
	int line;
	enum fmtset set;
	const char *alias;
	int err;
	uint64_t config, config1, config2;
} alias_rows[] = {
	/* the kernel's own aliases (uncore_snbep.c, uncore_snb.c) */
	{ __LINE__, SKX, "event=0x04,umask=0x03", 0, 0x0304, 0, 0 },
	{ __LINE__, SKX, "event=0x04,umask=0x0c\n", 0, 0x0c04, 0, 0 },
	{ __LINE__, SKX, "event=0x04,umask=0x0f", 0, 0x0f04, 0, 0 },
	{ __LINE__, SKX, "event=0xff,umask=0x20", 0, 0x20ff, 0, 0 },
	{ __LINE__, SKX, "event=0x00,umask=0x00", 0, 0, 0, 0 },
	{ __LINE__, SKX, "event=4,umask=3", 0, 0x0304, 0, 0 },
	{ __LINE__, SKX, "event=0X04,umask=0XAb", 0, 0xab04, 0, 0 },
	/* a term without a value is 1 */
	{ __LINE__, SKX, "event=0x04,umask=0x03,edge", 0, 0x40304, 0, 0 },
	{ __LINE__, SKX, "event=0x04,umask=0x03,edge=1,inv=1,thresh=0x5", 0, 0x05840304, 0, 0 },
	{ __LINE__, SKX, "edge,inv", 0, 1ull << 18 | 1ull << 23, 0, 0 },
	/* raw words when no format claims their names */
	{ __LINE__, SKX, "config=0x1234", 0, 0x1234, 0, 0 },
	{ __LINE__, SKX, "config=0x1,config1=0x5,config2=0xffffffffffffffff", 0, 1, 5, ~0ull },
	/* fields split over ranges: bits fill the ranges lowest first */
	{ __LINE__, DF_ZEN1_3, "event=0x07,umask=0x38", 0, 0x3807, 0, 0 },
	{ __LINE__, DF_ZEN1_3, "event=0x107,umask=0x38", 0, 0x100003807ull, 0, 0 },
	{ __LINE__, DF_ZEN1_3, "event=0x1c7,umask=0x38", 0, 0x1000038c7ull, 0, 0 },
	{ __LINE__, DF_ZEN1_3, "event=0xfff", 0, 0xf000000ffull, 0, 0 },
	{ __LINE__, DF_ZEN1_3, "event=0x3fff", 0, 0x1800000f000000ffull, 0, 0 },
	{ __LINE__, DF_ZEN1_3, "event=0x4000", -ERANGE, 0, 0, 0 },
	{ __LINE__, DF_ZEN4, "event=0x1f,umask=0x7fe", 0, 0x0700fe1f, 0, 0 },
	{ __LINE__, DF_ZEN4, "event=0x3fff", 0, 0x3full << 32 | 0xff, 0, 0 },
	{ __LINE__, DF_ZEN4, "umask=0x1000", -ERANGE, 0, 0, 0 },
	{ __LINE__, SPR, "event=0x05,umask=0xcf", 0, 0xcf05, 0, 0 },
	{ __LINE__, SPR, "event=0x05,umask=0xf0", 0, 0xf005, 0, 0 },
	{ __LINE__, SPR, "umask=0x100", 0, 1ull << 32, 0, 0 },
	{ __LINE__, SPR, "umask=0xffffffff", 0, 0xff00ull | 0xffffffull << 32, 0, 0 },
	{ __LINE__, UMC, "event=0x0a,rdwrmask=0x1", 0, 0x10a, 0, 0 },
	{ __LINE__, UMC, "event=0x0a,rdwrmask=0x2", 0, 0x20a, 0, 0 },
	{ __LINE__, UMC, "rdwrmask=0x4", -ERANGE, 0, 0, 0 },
	{ __LINE__, FILTERS, "event=0x1,filter_tid=0x3", 0, 1, 3, 0 },
	{ __LINE__, FILTERS, "filter_tid=0x20", -ERANGE, 0, 0, 0 },
	{ __LINE__, FILTERS, "mask=0xffffffffffffffff", 0, 0, 0, ~0ull },
	/* malformed: rejected, never a crash */
	{ __LINE__, SKX, "event=0x100", -ERANGE, 0, 0, 0 },
	{ __LINE__, SKX, "event=0x10000000000000000", -ERANGE, 0, 0, 0 },
	{ __LINE__, SKX, "event=99999999999999999999", -ERANGE, 0, 0, 0 },
	{ __LINE__, SKX, "", -EINVAL, 0, 0, 0 },
	{ __LINE__, SKX, " \n", -EINVAL, 0, 0, 0 },
	{ __LINE__, SKX, "event=", -EINVAL, 0, 0, 0 },
	{ __LINE__, SKX, "event=0x", -EINVAL, 0, 0, 0 },
	{ __LINE__, SKX, "event=0xg1", -EINVAL, 0, 0, 0 },
	{ __LINE__, SKX, "event=-1", -EINVAL, 0, 0, 0 },
	{ __LINE__, SKX, "event=+1", -EINVAL, 0, 0, 0 },
	{ __LINE__, SKX, "=0x1", -EINVAL, 0, 0, 0 },
	{ __LINE__, SKX, "event=0x1,,umask=1", -EINVAL, 0, 0, 0 },
	{ __LINE__, SKX, "event=0x1,", -EINVAL, 0, 0, 0 },
	{ __LINE__, SKX, ",event=0x1", -EINVAL, 0, 0, 0 },
	{ __LINE__, SKX, "event=0x1,event=0x2", -EINVAL, 0, 0, 0 },
	{ __LINE__, SKX, "event=0x1 umask=0x2", -EINVAL, 0, 0, 0 },
	{ __LINE__, SKX, "event=0x04;umask=3", -EINVAL, 0, 0, 0 },
	{ __LINE__, SKX, "event==1", -EINVAL, 0, 0, 0 },
	{ __LINE__, SKX, "event=0x1=2", -EINVAL, 0, 0, 0 },
	{ __LINE__, SKX, "ev\xc3\xa9nt=1", -EINVAL, 0, 0, 0 },
	{ __LINE__, SKX, "foo=1", -ENOENT, 0, 0, 0 },
	{ __LINE__, SKX, "period=1000", -ENOENT, 0, 0, 0 },
	{ __LINE__, SKX, "rdwrmask=1", -ENOENT, 0, 0, 0 },
	{ __LINE__, UMC, "event=0x0a,umask=0x1", -ENOENT, 0, 0, 0 },
};

static void test_aliases(void)
{
	struct pmu_format fmt[PMU_MAX_FORMATS];
	struct perf_event_attr attr;
	char big[400];

	for (size_t i = 0; i < ARRAY_SIZE(alias_rows); i++) {
		int n = load_set(alias_rows[i].set, fmt), err;

		memset(&attr, 0, sizeof(attr));
		attr.config = attr.config1 = attr.config2 = 0xdeadull;
		attr.type = 77;
		err = pmu_parse_terms(alias_rows[i].alias, fmt, n, &attr);
		CHECK_ROW(err == alias_rows[i].err, alias_rows[i].line);
		if (err != alias_rows[i].err)
			fprintf(stderr, "  '%s': %d\n", alias_rows[i].alias, err);
		CHECK_ROW(attr.type == 77, alias_rows[i].line);
		if (alias_rows[i].err == 0 && err == 0) {
			CHECK_ROW(attr.config == alias_rows[i].config, alias_rows[i].line);
			CHECK_ROW(attr.config1 == alias_rows[i].config1, alias_rows[i].line);
			CHECK_ROW(attr.config2 == alias_rows[i].config2, alias_rows[i].line);
			if (attr.config != alias_rows[i].config)
				fprintf(stderr, "  config %#llx\n", (unsigned long long)attr.config);
		} else {
			/* nothing is touched on failure */
			CHECK_ROW(attr.config == 0xdead && attr.config1 == 0xdead &&
				  attr.config2 == 0xdead, alias_rows[i].line);
		}
	}
	/* too long, and a long run of terms */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK_EQ_INT(pmu_parse_terms(big, fmt, 0, &attr), -EINVAL);
	for (size_t i = 0; i + 2 < sizeof(big); i += 2) {
		big[i] = 'e';
		big[i + 1] = ',';
	}
	big[200] = '\0';
	CHECK_EQ_INT(pmu_parse_terms(big, fmt, 0, &attr), -ENOENT);
	CHECK_EQ_INT(pmu_parse_terms(NULL, fmt, 0, &attr), -EINVAL);
	CHECK_EQ_INT(pmu_parse_terms("event=1", NULL, 2, &attr), -EINVAL);
	CHECK_EQ_INT(pmu_parse_terms("event=1", fmt, -1, &attr), -EINVAL);
	CHECK_EQ_INT(pmu_parse_terms("event=1", fmt, 0, NULL), -EINVAL);
}

/* ---- a PMU on the fixtures ------------------------------------------ */

static void record_malformed(void *ctx, const char *field, const char *text)
{
	(void)text;
	strbuf(ctx, 64, "%s", field);
}

static void test_sysfs(void)
{
	struct pmu_format fmt[PMU_MAX_FORMATS], f;
	struct pmu_alias a;
	struct perf_event_attr attr = { 0 };
	char bad[64] = "", text[64];
	int type = -1, n = -1;

	/* type */
	CHECK_EQ_INT(pmu_type(FIX "/intel-spr", "uncore_imc_0", &type), 0);
	CHECK_EQ_INT(type, 20);
	CHECK_EQ_INT(pmu_type(FIX "/intel-spr", "uprobe", &type), 0);
	CHECK_EQ_INT(type, 7);
	CHECK_EQ_INT(pmu_type(FIX "/intel-spr", "no_such_pmu", &type), -ENOENT);

	/* format/: every field, and one by name */
	CHECK_EQ_INT(pmu_formats(FIX "/intel-spr", "uncore_imc_0", fmt, &n, record_malformed, bad), 0);
	CHECK_EQ_INT(n, 5);
	CHECK(bad[0] == '\0');
	CHECK_EQ_INT(pmu_formats(FIX "/intel-spr", "breakpoint", fmt, &n, NULL, NULL), -ENOENT);
	CHECK_EQ_INT(n, 0);
	CHECK_EQ_INT(pmu_format(FIX "/intel-spr", "uprobe", "retprobe", &f), 0);
	CHECK(f.config == 0 && f.mask == 1);
	CHECK_EQ_INT(pmu_format(FIX "/intel-spr", "uprobe", "ref_ctr_offset", &f), 0);
	CHECK(f.config == 0 && f.mask == 0xffffffff00000000ull);
	CHECK_EQ_INT(pmu_format(FIX "/intel-spr", "uprobe", "no_such_field", &f), -ENOENT);

	/* events/: an alias with its .scale and .unit (a CAS count is 64 B),
	 * one with neither, none at all */
	CHECK_EQ_INT(pmu_alias(FIX "/intel-spr", "uncore_imc_0", "cas_count_read", &a), 0);
	CHECK(strcmp(a.terms, "event=0x05,umask=0xcf") == 0);
	CHECK(a.has_scale && a.has_unit && strcmp(a.unit, "MiB") == 0);
	CHECK(fabs(a.scale * 1048576.0 - 64.0) < 1e-9);
	CHECK_EQ_INT(pmu_alias(FIX "/intel-spr", "uncore_imc_0", "clockticks", &a), 0);
	CHECK(!a.has_scale && !a.has_unit && a.unit[0] == '\0');
	CHECK_EQ_INT(pmu_alias(FIX "/intel-spr", "uncore_imc_0", "no_such_event", &a), -ENOENT);

	/* and the alias encoded with the fields: umask 0xcf in bits 8-15 */
	CHECK_EQ_INT(pmu_formats(FIX "/intel-spr", "uncore_imc_0", fmt, &n, NULL, NULL), 0);
	CHECK_EQ_INT(pmu_alias(FIX "/intel-spr", "uncore_imc_0", "cas_count_read", &a), 0);
	CHECK_EQ_INT(pmu_parse_terms(a.terms, fmt, n, &attr), 0);
	CHECK(attr.config == 0xcf05);

	/* a file read whole, trailing newline cut */
	CHECK_EQ_INT(pmu_read(FIX "/intel-spr", "uncore_imc_0", "events/cas_count_read.unit", text, sizeof(text)), 0);
	CHECK(strcmp(text, "MiB") == 0);
}

int main(void)
{
	test_formats();
	test_aliases();
	test_sysfs();
	return check_status();
}
