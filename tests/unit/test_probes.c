/* The probes module: spec parsing (table), function and USDT resolution in
 * the fixture programs of probes_fixture/ (checked against the kernel's own
 * mapping of the running fixture, the file's bytes, readelf and nm), the
 * loader-like library search, and, as root, live uprobes on the running
 * fixture: per-thread counts, returns, and a semaphore that is set only
 * while the probe is attached. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "record/sampling/perf_ring.h"
#include "record/probes/probes.h"

/* ---- spec parsing ---- */

static const struct {
	int line;
	const char *spec;
	int err;
	enum probe_spec_kind kind;
	const char *begin, *end; /* probes_point_format of each */
} specs[] = {
	{ __LINE__, "train_step", 0, PROBE_SPEC_CALL, "train_step", "train_step (return)" },
	{ __LINE__, "  train_step ", 0, PROBE_SPEC_CALL, "train_step", "train_step (return)" },
	{ __LINE__, "a,b", 0, PROBE_SPEC_PAIR, "a", "b" },
	{ __LINE__, "a , b", 0, PROBE_SPEC_PAIR, "a", "b" },
	{ __LINE__, "a,a", 0, PROBE_SPEC_PAIR, "a", "a" },
	{ __LINE__, "sdt:python:gc__start", 0, PROBE_SPEC_EACH, "sdt:python:gc__start",
	  "sdt:python:gc__start" },
	{ __LINE__, "sdt:python:gc__start,sdt:python:gc__done", 0, PROBE_SPEC_PAIR,
	  "sdt:python:gc__start", "sdt:python:gc__done" },
	{ __LINE__, "f,sdt:p:n", 0, PROBE_SPEC_PAIR, "f", "sdt:p:n" },
	{ __LINE__, "libm.so.6:cos", 0, PROBE_SPEC_CALL, "libm.so.6:cos", "libm.so.6:cos (return)" },
	{ __LINE__, "/opt/x/lib/libfoo.so.1:foo", 0, PROBE_SPEC_CALL, "/opt/x/lib/libfoo.so.1:foo",
	  "/opt/x/lib/libfoo.so.1:foo (return)" },
	{ __LINE__, "libpython3.11.so.1.0:sdt:python:gc__start", 0, PROBE_SPEC_EACH,
	  "libpython3.11.so.1.0:sdt:python:gc__start",
	  "libpython3.11.so.1.0:sdt:python:gc__start" },
	{ __LINE__, "ns::Cls::run", 0, PROBE_SPEC_CALL, "ns::Cls::run", "ns::Cls::run (return)" },
	{ __LINE__, "::global_fn", 0, PROBE_SPEC_CALL, "::global_fn", "::global_fn (return)" },
	{ __LINE__, "libx.so:ns::f(int, char const*)", 0, PROBE_SPEC_CALL,
	  "libx.so:ns::f(int, char const*)", "libx.so:ns::f(int, char const*) (return)" },
	{ __LINE__, "f(int, int),g(std::map<int, int>)", 0, PROBE_SPEC_PAIR, "f(int, int)",
	  "g(std::map<int, int>)" },
	{ __LINE__, "_ZN2ns3fooEi", 0, PROBE_SPEC_CALL, "_ZN2ns3fooEi", "_ZN2ns3fooEi (return)" },
	{ __LINE__, "sdt", 0, PROBE_SPEC_CALL, "sdt", "sdt (return)" },
	/* bad */
	{ __LINE__, "", -EINVAL, 0, NULL, NULL },
	{ __LINE__, "   ", -EINVAL, 0, NULL, NULL },
	{ __LINE__, ",", -EINVAL, 0, NULL, NULL },
	{ __LINE__, "a,", -EINVAL, 0, NULL, NULL },
	{ __LINE__, ",b", -EINVAL, 0, NULL, NULL },
	{ __LINE__, "a,b,c", -EINVAL, 0, NULL, NULL },
	{ __LINE__, "sdt:", -EINVAL, 0, NULL, NULL },
	{ __LINE__, "sdt:python", -EINVAL, 0, NULL, NULL },
	{ __LINE__, "sdt:python:", -EINVAL, 0, NULL, NULL },
	{ __LINE__, "sdt::gc", -EINVAL, 0, NULL, NULL },
	{ __LINE__, "sdt:p:n:x", -EINVAL, 0, NULL, NULL },
	{ __LINE__, "sdt:p-x:n", -EINVAL, 0, NULL, NULL },
	{ __LINE__, "lib.so:sdt:p", -EINVAL, 0, NULL, NULL },
	{ __LINE__, ":f", -EINVAL, 0, NULL, NULL },
	{ __LINE__, "lib.so:", -EINVAL, 0, NULL, NULL },
	{ __LINE__, "a:b:c", -EINVAL, 0, NULL, NULL },
	{ __LINE__, "f\tg", -EINVAL, 0, NULL, NULL },
	{ __LINE__, "lib.so: f", -EINVAL, 0, NULL, NULL },
	{ __LINE__, "py:module.function", -EINVAL, 0, NULL, NULL },
};

static void test_parse_table(void)
{
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct probe_spec s;
		char why[512] = "", b[1200], e[1200];
		int err = probes_parse_spec(specs[i].spec, &s, why, sizeof(why));

		CHECK_ROW(err == specs[i].err, specs[i].line);
		if (err) {
			/* one line that says something */
			CHECK_ROW(why[0] != '\0' && !strchr(why, '\n'), specs[i].line);
			continue;
		}
		CHECK_ROW(s.kind == specs[i].kind, specs[i].line);
		CHECK_ROW(probes_point_format(&s.begin, b, sizeof(b)) == 0, specs[i].line);
		CHECK_ROW(probes_point_format(&s.end, e, sizeof(e)) == 0, specs[i].line);
		CHECK_ROW(!strcmp(b, specs[i].begin), specs[i].line);
		CHECK_ROW(!strcmp(e, specs[i].end), specs[i].line);
		if (strcmp(b, specs[i].begin) || strcmp(e, specs[i].end))
			fprintf(stderr, "  got '%s' / '%s'\n", b, e);
	}
}

static void test_parse_fields(void)
{
	struct probe_spec s;
	char why[512], name[64];
	static char longname[PROBE_NAME_MAX + 10];

	CHECK_EQ_INT(probes_parse_spec("libx.so:ns::f(int)", &s, why, sizeof(why)), 0);
	CHECK_EQ_INT(s.begin.kind, PROBE_POINT_FUNC);
	CHECK_STR(s.begin.object, "libx.so");
	CHECK_STR(s.begin.name, "ns::f(int)");
	CHECK_EQ_INT(s.begin.at_return, 0);
	CHECK_EQ_INT(s.end.at_return, 1);

	CHECK_EQ_INT(probes_parse_spec("lib.so:sdt:prov:probe_1", &s, why, sizeof(why)), 0);
	CHECK_EQ_INT(s.begin.kind, PROBE_POINT_SDT);
	CHECK_STR(s.begin.object, "lib.so");
	CHECK_STR(s.begin.provider, "prov");
	CHECK_STR(s.begin.name, "probe_1");

	/* one clear line for the common mistakes */
	CHECK_EQ_INT(probes_parse_spec("sdt:python", &s, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "sdt:PROVIDER:NAME") != NULL);
	CHECK_EQ_INT(probes_parse_spec("a,b,c", &s, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "at most two") != NULL);

	memset(longname, 'x', sizeof(longname) - 1);
	CHECK_EQ_INT(probes_parse_spec(longname, &s, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "too long") != NULL);

	CHECK_EQ_INT(probes_parse_phase("gc=sdt:python:gc__start,sdt:python:gc__done", name,
					sizeof(name), &s, why, sizeof(why)), 0);
	CHECK_STR(name, "gc");
	CHECK_EQ_INT(s.kind, PROBE_SPEC_PAIR);
	CHECK_STR(s.end.name, "gc__done");
	CHECK_EQ_INT(probes_parse_phase("eq=operator==", name, sizeof(name), &s, why, sizeof(why)),
		     0);
	CHECK_STR(name, "eq");
	CHECK_STR(s.begin.name, "operator==");
	CHECK_EQ_INT(probes_parse_phase("=f", name, sizeof(name), &s, why, sizeof(why)), -EINVAL);
	CHECK_EQ_INT(probes_parse_phase("f", name, sizeof(name), &s, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "NAME=SPEC") != NULL);
	CHECK_EQ_INT(probes_parse_phase("ph=", name, sizeof(name), &s, why, sizeof(why)), -EINVAL);
	CHECK_EQ_INT(probes_parse_phase("abcdefgh=f", name, 4, &s, why, sizeof(why)), -EINVAL);
}

static void test_object_matches(void)
{
	static const struct {
		int line;
		const char *object, *path;
		int match;
	} rows[] = {
		{ __LINE__, "", "/anything", 1 },
		{ __LINE__, "libm", "/lib/x86_64-linux-gnu/libm.so.6", 1 },
		{ __LINE__, "libm.so", "/lib/x86_64-linux-gnu/libm.so.6", 1 },
		{ __LINE__, "libm.so.6", "/lib/x86_64-linux-gnu/libm.so.6", 1 },
		{ __LINE__, "libm", "/lib/x86_64-linux-gnu/libmvec.so.1", 0 },
		{ __LINE__, "libm.so.7", "/lib/x86_64-linux-gnu/libm.so.6", 0 },
		{ __LINE__, "python3.11", "/usr/bin/python3.11", 1 },
		{ __LINE__, "python3", "/usr/bin/python3.11", 1 },
		{ __LINE__, "/proc/self/exe", "/proc/self/exe", 1 },
		{ __LINE__, "/nonexistent/a.so", "/nonexistent/b.so", 0 },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct probe_point p;

		memset(&p, 0, sizeof(p));
		p.kind = PROBE_POINT_FUNC;
		snprintf(p.object, sizeof(p.object), "%s", rows[i].object);
		CHECK_ROW(probes_object_matches(&p, rows[i].path) == rows[i].match, rows[i].line);
	}

	/* a name that is a link beside the file the loader's search gives
	 * (Debian's libopenblas.so.0 -> libopenblasp-r0.3.21.so) */
	char dir[] = "/tmp/mfu-test-objXXXXXX", file[PATH_MAX];
	struct probe_point p;
	int fd;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(file, sizeof(file), "%s/libfoop-r1.2.so", dir);
	fd = open(file, O_CREAT | O_WRONLY, 0600);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ_INT(symlink("libfoop-r1.2.so", check_path(dir, "libfoo.so.0")), 0);
	CHECK_EQ_INT(symlink("libfoop-r1.2.so", check_path(dir, "libfoo.so")), 0);
	memset(&p, 0, sizeof(p));
	p.kind = PROBE_POINT_FUNC;
	snprintf(p.object, sizeof(p.object), "libfoo.so.0");
	CHECK_EQ_INT(probes_object_matches(&p, file), 1);
	snprintf(p.object, sizeof(p.object), "libfoo");       /* libfoo.so */
	CHECK_EQ_INT(probes_object_matches(&p, file), 1);
	snprintf(p.object, sizeof(p.object), "libfoo.so.1");  /* no such link */
	CHECK_EQ_INT(probes_object_matches(&p, file), 0);
	snprintf(p.object, sizeof(p.object), "libbar.so");
	CHECK_EQ_INT(probes_object_matches(&p, file), 0);
	unlink(check_path(dir, "libfoo.so.0"));
	unlink(check_path(dir, "libfoo.so"));
	unlink(file);
	rmdir(dir);
}

/* ---- fixtures ---- */

static char fixdir[PATH_MAX], fixture[PATH_MAX], fixture_lib[PATH_MAX], fixture_cxx[PATH_MAX];

static int find_fixtures(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return 0;
	self[n] = '\0';
	snprintf(fixdir, sizeof(fixdir), "%s/probes_fixture", dirname(self));
	if (snprintf(fixture, sizeof(fixture), "%s/probes_fixture", fixdir) >= PATH_MAX ||
	    snprintf(fixture_lib, sizeof(fixture_lib), "%s/libprobes_fixture_lib.so", fixdir) >=
		    PATH_MAX ||
	    snprintf(fixture_cxx, sizeof(fixture_cxx), "%s/probes_fixture_cxx", fixdir) >= PATH_MAX)
		return 0;
	return access(fixture, X_OK) == 0 && access(fixture_lib, R_OK) == 0;
}

struct fix_offset {
	char name[64];
	uint64_t offset;
	char code[40];
};
static struct fix_offset offsets[8];
static int noffsets;

/* "probes_fixture offsets": file offsets from the kernel's mapping */
static void read_fixture_offsets(void)
{
	char cmd[PATH_MAX + 16], line[256];
	FILE *fp;

	snprintf(cmd, sizeof(cmd), "%s offsets", fixture);
	fp = popen(cmd, "r");
	CHECK(fp != NULL);
	if (!fp)
		return;
	while (noffsets < 8 && fgets(line, sizeof(line), fp)) {
		struct fix_offset *o = &offsets[noffsets];
		if (sscanf(line, "%63s %" SCNx64 " %39s", o->name, &o->offset, o->code) == 3)
			noffsets++;
	}
	CHECK_EQ_INT(pclose(fp), 0);
	CHECK_EQ_INT(noffsets, 4);
}

static const struct fix_offset *fix_offset(const char *name)
{
	for (int i = 0; i < noffsets; i++)
		if (!strcmp(offsets[i].name, name))
			return &offsets[i];
	return NULL;
}

static int file_bytes(const char *path, uint64_t off, unsigned char *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = pread(fd, buf, n, (off_t)off);
	close(fd);
	return r == (ssize_t)n ? 0 : -1;
}

static int code_matches(const char *path, uint64_t off, const char *hex)
{
	unsigned char b[16];
	char h[40];

	if (file_bytes(path, off, b, sizeof(b)))
		return 0;
	for (int i = 0; i < 16; i++)
		snprintf(h + 2 * i, 3, "%02x", b[i]);
	return !strcmp(h, hex);
}

static void test_functions(void)
{
	struct probe_site s;
	char why[1024];
	const struct fix_offset *o;

	o = fix_offset("fixture_work");
	CHECK(o != NULL);
	CHECK_EQ_INT(probes_resolve_function(fixture, "fixture_work", &s, why, sizeof(why)), 0);
	if (o) {
		CHECK_EQ_INT(s.offset, o->offset);
		/* the bytes the running fixture executes are the file's at offset */
		CHECK(code_matches(fixture, s.offset, o->code));
	}
	CHECK_STR(s.name, "fixture_work");
	CHECK_STR(s.path, fixture);
	CHECK(s.size > 0);
	CHECK_EQ_INT(s.exported, 1);
	CHECK_EQ_INT(s.ref_ctr_offset, 0);

	/* a static function: found in .symtab, not exported */
	CHECK_EQ_INT(probes_resolve_function(fixture, "fixture_impl", &s, why, sizeof(why)), 0);
	CHECK_EQ_INT(s.exported, 0);

	/* imported by the executable, defined in the library */
	CHECK_EQ_INT(probes_resolve_function(fixture, "fixture_lib_work", &s, why, sizeof(why)),
		     -ENOENT);
	CHECK(strstr(why, "only imported") != NULL);
	o = fix_offset("fixture_lib_work");
	CHECK_EQ_INT(probes_resolve_function(fixture_lib, "fixture_lib_work", &s, why, sizeof(why)),
		     0);
	if (o) {
		CHECK_EQ_INT(s.offset, o->offset);
		CHECK(code_matches(fixture_lib, s.offset, o->code));
	}

	/* two static dup_fn: ambiguous, both listed */
	CHECK_EQ_INT(probes_resolve_function(fixture, "dup_fn", &s, why, sizeof(why)), -ENOTUNIQ);
	CHECK(strstr(why, "ambiguous") != NULL);
	CHECK(strstr(why, "dup_fn") && strstr(strstr(why, "dup_fn") + 1, "'dup_fn'"));

	CHECK_EQ_INT(probes_resolve_function(fixture, "fixture_nosize", &s, why, sizeof(why)),
		     -EINVAL);
	CHECK(strstr(why, "size 0") != NULL);
	CHECK_EQ_INT(probes_resolve_function(fixture, "fixture_ifunc", &s, why, sizeof(why)),
		     -EINVAL);
	CHECK(strstr(why, "IFUNC") != NULL);
	CHECK_EQ_INT(probes_resolve_function(fixture, "fixture_sink", &s, why, sizeof(why)),
		     -EINVAL);
	CHECK(strstr(why, "not a function") != NULL);
	CHECK_EQ_INT(probes_resolve_function(fixture, "no_such_function", &s, why, sizeof(why)),
		     -ENOENT);
	CHECK(strstr(why, "no function 'no_such_function'") != NULL);
	CHECK_EQ_INT(probes_resolve_function(SRCDIR "/meson.build", "f", &s, why, sizeof(why)),
		     -ENOEXEC);
	CHECK_EQ_INT(probes_resolve_function("/nonexistent/x", "f", &s, why, sizeof(why)), -ENOENT);
}

/* A stripped copy of the library: .dynsym only, same offsets. */
static void test_dynsym_only(void)
{
	char tmp[] = "/tmp/mfu-probes-XXXXXX", copy[PATH_MAX], cmd[3 * PATH_MAX];
	struct probe_site a, b;
	char why[512];
	int fd = mkstemp(tmp);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	snprintf(copy, sizeof(copy), "%s", tmp);
	snprintf(cmd, sizeof(cmd), "strip -s -o '%s' '%s' 2>/dev/null", copy, fixture_lib);
	if (system(cmd) != 0) {
		fprintf(stderr, "SKIP: strip unavailable, .dynsym-only case not tested\n");
		unlink(copy);
		return;
	}
	snprintf(cmd, sizeof(cmd), "readelf -S '%s' | grep -q '\\.symtab'", copy);
	CHECK(system(cmd) != 0); /* really stripped */
	CHECK_EQ_INT(probes_resolve_function(fixture_lib, "fixture_lib_work", &a, why, sizeof(why)),
		     0);
	CHECK_EQ_INT(probes_resolve_function(copy, "fixture_lib_work", &b, why, sizeof(why)), 0);
	CHECK_EQ_INT(a.offset, b.offset);
	CHECK_EQ_INT(a.size, b.size);
	unlink(copy);
}

/* nm's address of a symbol, or 0 */
static uint64_t nm_addr(const char *path, const char *sym)
{
	char cmd[PATH_MAX + 32], line[1024], name[900], type[4];
	uint64_t addr, found = 0;
	FILE *fp;

	snprintf(cmd, sizeof(cmd), "nm '%s'", path);
	fp = popen(cmd, "r");
	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "%" SCNx64 " %3s %899s", &addr, type, name) == 3 &&
		    !strcmp(name, sym))
			found = addr;
	pclose(fp);
	return found;
}

static void test_cxx(void)
{
	static const struct {
		int line;
		const char *query;
		int err;
		const char *mangled; /* the symbol it must resolve to */
	} rows[] = {
		{ __LINE__, "fixture::only_once", 0, "_ZN7fixture9only_onceEl" },
		{ __LINE__, "fixture::only_once(long)", 0, "_ZN7fixture9only_onceEl" },
		{ __LINE__, "_ZN7fixture9only_onceEl", 0, "_ZN7fixture9only_onceEl" },
		{ __LINE__, "fixture::scale", -ENOTUNIQ, NULL },
		{ __LINE__, "fixture::scale(int)", 0, "_ZN7fixture5scaleEi" },
		{ __LINE__, "fixture::scale(double)", 0, "_ZN7fixture5scaleEd" },
		{ __LINE__, "fixture::twice<int>", 0, "_ZN7fixture5twiceIiEET_S1_" },
		{ __LINE__, "fixture::twice<int>(int)", 0, "_ZN7fixture5twiceIiEET_S1_" },
		{ __LINE__, "fixture::Worker::step", 0, "_ZNK7fixture6Worker4stepEi" },
		{ __LINE__, "fixture::Worker::step(int) const", 0, "_ZNK7fixture6Worker4stepEi" },
		{ __LINE__, "only_once", -ENOENT, NULL },
		{ __LINE__, "fixture::scale(float)", -ENOENT, NULL },
	};

	if (access(fixture_cxx, X_OK) != 0) {
		fprintf(stderr, "SKIP: no C++ fixture (no C++ compiler?)\n");
		return;
	}
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct probe_site s;
		char why[1024];
		int err = probes_resolve_function(fixture_cxx, rows[i].query, &s, why, sizeof(why));

		CHECK_ROW(err == rows[i].err, rows[i].line);
		if (err != rows[i].err)
			fprintf(stderr, "  %s: %d %s\n", rows[i].query, err, why);
		if (err == -ENOTUNIQ)
			CHECK_ROW(strstr(why, "scale(int)") && strstr(why, "scale(double)"),
				  rows[i].line);
		if (err || !rows[i].mangled)
			continue;
		CHECK_ROW(s.vaddr == nm_addr(fixture_cxx, rows[i].mangled), rows[i].line);
		CHECK_ROW(s.vaddr != 0 && s.size > 0, rows[i].line);
	}
}

/* ---- USDT ---- */

struct note_seen {
	char pn[128];
	uint64_t pc, base, sem, offset, ref_ctr;
};

struct notes {
	struct note_seen n[32];
	int count;
};

static int note_cb(void *ctx, const struct probe_usdt *u)
{
	struct notes *ns = ctx;

	if (ns->count < 32) {
		struct note_seen *s = &ns->n[ns->count];
		snprintf(s->pn, sizeof(s->pn), "%s:%s", u->provider, u->name);
		s->pc = u->pc;
		s->base = u->base;
		s->sem = u->semaphore;
		s->offset = u->offset;
		s->ref_ctr = u->ref_ctr_offset;
	}
	ns->count++;
	return 0;
}

/* Every note of `readelf -n` must be one probes_list_usdt gives, same raw
 * fields, same order. */
static void check_against_readelf(const char *path)
{
	struct notes ns;
	char cmd[PATH_MAX + 32], line[512], prov[128] = "", name[128] = "", why[256];
	FILE *fp;
	int k = 0;

	memset(&ns, 0, sizeof(ns));
	CHECK_EQ_INT(probes_list_usdt(path, note_cb, &ns, why, sizeof(why)), 0);
	snprintf(cmd, sizeof(cmd), "readelf -nW '%s'", path);
	fp = popen(cmd, "r");
	CHECK(fp != NULL);
	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		uint64_t pc, base, sem;
		char *s = line + strspn(line, " \t");

		char *pv = strstr(s, "Provider: ");

		/* "stapsdt 0x.. NT_STAPSDT (...)\t    Provider: p" on one line */
		if (pv && sscanf(pv, "Provider: %127s", prov) == 1)
			continue;
		if (sscanf(s, "Name: %127s", name) == 1)
			continue;
		if (sscanf(s, "Location: %" SCNx64 ", Base: %" SCNx64 ", Semaphore: %" SCNx64, &pc,
			   &base, &sem) == 3) {
			char pn[300];

			snprintf(pn, sizeof(pn), "%s:%s", prov, name);
			CHECK(k < ns.count);
			if (k < ns.count && k < 32) {
				CHECK_STR(ns.n[k].pn, pn);
				CHECK_EQ_INT(ns.n[k].pc, pc);
				CHECK_EQ_INT(ns.n[k].base, base);
				CHECK_EQ_INT(ns.n[k].sem, sem);
			}
			k++;
		}
	}
	pclose(fp);
	CHECK(k > 0);
	CHECK_EQ_INT(k, ns.count);
}

static void test_usdt(void)
{
	struct probe_site *s = NULL;
	size_t n = 0;
	char why[1024];
	unsigned char b;
	const struct fix_offset *sem = fix_offset("fixture_guarded_semaphore");

	check_against_readelf(fixture);
	check_against_readelf(fixture_lib);

	CHECK_EQ_INT(probes_resolve_usdt(fixture, "fixture", "tick", &s, &n, why, sizeof(why)), 0);
	CHECK_EQ_INT(n, 1);
	if (n == 1) {
		/* a USDT site is a nop (0x90 on x86) */
		CHECK(file_bytes(fixture, s[0].offset, &b, 1) == 0 && b == 0x90);
		CHECK_EQ_INT(s[0].ref_ctr_offset, 0);
		CHECK_STR(s[0].name, "fixture:tick");
	}
	free(s);

	/* inlined twice: two sites */
	CHECK_EQ_INT(probes_resolve_usdt(fixture, "fixture", "multi", &s, &n, why, sizeof(why)), 0);
	CHECK_EQ_INT(n, 2);
	if (n == 2) {
		CHECK(s[0].offset != s[1].offset);
		for (size_t i = 0; i < n; i++)
			CHECK(file_bytes(fixture, s[i].offset, &b, 1) == 0 && b == 0x90);
	}
	free(s);

	/* the semaphore: its file offset is where the running fixture has it */
	CHECK_EQ_INT(probes_resolve_usdt(fixture, "fixture", "guarded", &s, &n, why, sizeof(why)),
		     0);
	CHECK_EQ_INT(n, 1);
	if (n == 1) {
		CHECK(s[0].ref_ctr_offset != 0);
		CHECK(s[0].sem_vaddr != 0);
		CHECK(sem != NULL);
		if (sem)
			CHECK_EQ_INT(s[0].ref_ctr_offset, sem->offset);
		CHECK(file_bytes(fixture, s[0].offset, &b, 1) == 0 && b == 0x90);
	}
	free(s);

	CHECK_EQ_INT(probes_resolve_usdt(fixture_lib, "fixturelib", "libtick", &s, &n, why,
					 sizeof(why)), 0);
	CHECK_EQ_INT(n, 1);
	if (n == 1)
		CHECK(file_bytes(fixture_lib, s[0].offset, &b, 1) == 0 && b == 0x90);
	free(s);

	CHECK_EQ_INT(probes_resolve_usdt(fixture, "fixture", "nope", &s, &n, why, sizeof(why)),
		     -ENOENT);
	CHECK(s == NULL && n == 0);
	CHECK(strstr(why, "fixture:tick") != NULL); /* lists what is there */
	CHECK_EQ_INT(probes_resolve_usdt(SRCDIR "/meson.build", "p", "n", &s, &n, why, sizeof(why)),
		     -ENOEXEC);
}

/* ---- which object ---- */

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

static void point(struct probe_point *p, const char *spec)
{
	struct probe_spec s;
	char why[256];

	CHECK_EQ_INT(probes_parse_spec(spec, &s, why, sizeof(why)), 0);
	*p = s.begin;
}

/* The loader itself (ldd: ld.so in trace mode) lists the same libraries
 * in the same order. */
static void check_against_ldd(char **paths, size_t n)
{
	char cmd[PATH_MAX + 32], line[PATH_MAX + 128], real[PATH_MAX];
	size_t k = 1;
	FILE *fp;

	snprintf(cmd, sizeof(cmd), "ldd '%s' 2>/dev/null", fixture);
	fp = popen(cmd, "r");
	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		char *arrow = strstr(line, "=> "), *path = arrow ? arrow + 3 : line;

		path += strspn(path, " \t");
		if (path[0] != '/')
			continue; /* linux-vdso.so.1 */
		path[strcspn(path, " \n")] = '\0';
		if (!realpath(path, real))
			continue;
		CHECK(k < n);
		if (k < n && strcmp(paths[k], real))
			fprintf(stderr, "ldd order differs at %zu: %s vs %s\n", k, paths[k], real);
		CHECK(k < n && !strcmp(paths[k], real));
		k++;
	}
	pclose(fp);
	CHECK_EQ_INT(k, n);
}

static void test_needed(void)
{
	char **paths = NULL, why[1024], real_lib[PATH_MAX];
	size_t n = 0;
	int have_libc = 0, have_lib = 0;
	struct probe_site *s = NULL;
	struct probe_point p;

	CHECK(realpath(fixture_lib, real_lib) != NULL);
	CHECK_EQ_INT(probes_needed_objects(fixture, NULL, &paths, &n, why, sizeof(why)), 0);
	CHECK(n >= 3);
	for (size_t i = 0; i < n; i++) {
		const char *base = strrchr(paths[i], '/');
		base = base ? base + 1 : paths[i];
		have_libc |= !strcmp(base, "libc.so.6");
		have_lib |= !strcmp(paths[i], real_lib);
	}
	CHECK(have_libc);
	CHECK(have_lib); /* found through the fixture's DT_RUNPATH */
	check_against_ldd(paths, n);
	probes_paths_free(paths, n);

	point(&p, "fixture_lib_work");
	CHECK_EQ_INT(probes_find_in_needed(fixture, NULL, &p, &s, &n, why, sizeof(why)), 0);
	CHECK_EQ_INT(n, 1);
	if (n == 1)
		CHECK_STR(s[0].path, real_lib);
	free(s);

	/* the executable defines fixture_work: it wins */
	point(&p, "fixture_work");
	CHECK_EQ_INT(probes_find_in_needed(fixture, NULL, &p, &s, &n, why, sizeof(why)), 0);
	if (n == 1)
		CHECK(ends_with(s[0].path, "/probes_fixture"));
	free(s);

	point(&p, "libprobes_fixture_lib:sdt:fixturelib:libtick");
	CHECK_EQ_INT(probes_find_in_needed(fixture, NULL, &p, &s, &n, why, sizeof(why)), 0);
	CHECK_EQ_INT(n, 1);
	free(s);

	point(&p, "libc.so.6:getpid");
	CHECK_EQ_INT(probes_find_in_needed(fixture, NULL, &p, &s, &n, why, sizeof(why)), 0);
	if (n == 1)
		CHECK(ends_with(s[0].path, "/libc.so.6"));
	free(s);

	point(&p, "libnothere.so:f");
	CHECK_EQ_INT(probes_find_in_needed(fixture, NULL, &p, &s, &n, why, sizeof(why)), -ENOENT);
	CHECK(strstr(why, "no object named 'libnothere.so'") != NULL);

	point(&p, "no_such_function_anywhere");
	CHECK_EQ_INT(probes_find_in_needed(fixture, NULL, &p, &s, &n, why, sizeof(why)), -ENOENT);
	CHECK(strstr(why, "not found") != NULL);
}

/* ---- a running fixture ---- */

struct child {
	pid_t pid;
	FILE *in, *out;
	int tids[16];
	int ntids;
};

static int child_start(struct child *c, int calls, int threads)
{
	int to[2], from[2];
	char a1[16], a2[16], line[512];
	char *tok, *save = NULL;

	memset(c, 0, sizeof(*c));
	if (pipe(to) || pipe(from))
		return -1;
	snprintf(a1, sizeof(a1), "%d", calls);
	snprintf(a2, sizeof(a2), "%d", threads);
	c->pid = fork();
	if (c->pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[1]);
		close(from[0]);
		execl(fixture, fixture, "run", a1, a2, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	c->in = fdopen(to[1], "w");
	c->out = fdopen(from[0], "r");
	if (c->pid < 0 || !c->in || !c->out || !fgets(line, sizeof(line), c->out))
		return -1;
	tok = strtok_r(line, " \n", &save);
	if (!tok || strcmp(tok, "ready") || !strtok_r(NULL, " \n", &save))
		return -1;
	while ((tok = strtok_r(NULL, " \n", &save)) && c->ntids < 16)
		c->tids[c->ntids++] = (int)strtol(tok, NULL, 10);
	return c->ntids == threads ? 0 : -1;
}

/* Start a round and read every thread's "round R thread TID calls N guarded
 * K" line; @guarded gets the sum of K. */
static int child_round(struct child *c, int round, int *guarded)
{
	char line[256];

	*guarded = 0;
	fputs("go\n", c->in);
	fflush(c->in);
	for (int t = 0; t < c->ntids; t++) {
		int r, tid, calls, g;

		if (!fgets(line, sizeof(line), c->out) ||
		    sscanf(line, "round %d thread %d calls %d guarded %d", &r, &tid, &calls, &g) != 4 ||
		    r != round)
			return -1;
		*guarded += g;
	}
	return 0;
}

static int child_wait(struct child *c)
{
	int status = -1;

	if (c->in)
		fclose(c->in);
	if (c->out)
		fclose(c->out);
	c->in = c->out = NULL;
	if (c->pid <= 0 || waitpid(c->pid, &status, 0) != c->pid)
		return -1;
	c->pid = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void test_find_in_maps(void)
{
	struct child c;
	struct probe_site *s = NULL;
	size_t n = 0;
	char why[1024], real_lib[PATH_MAX];
	struct probe_point p;
	int g;

	CHECK(realpath(fixture_lib, real_lib) != NULL);
	CHECK_EQ_INT(child_start(&c, 1, 1), 0);

	point(&p, "fixture_lib_work");
	CHECK_EQ_INT(probes_find_in_maps(c.pid, &p, &s, &n, why, sizeof(why)), 0);
	if (n == 1) {
		const struct fix_offset *o = fix_offset("fixture_lib_work");
		CHECK_STR(s[0].path, real_lib);
		CHECK(o && s[0].offset == o->offset);
	}
	free(s);

	point(&p, "fixture_work");
	CHECK_EQ_INT(probes_find_in_maps(c.pid, &p, &s, &n, why, sizeof(why)), 0);
	if (n == 1)
		CHECK(ends_with(s[0].path, "/probes_fixture"));
	free(s);

	point(&p, "sdt:fixture:multi");
	CHECK_EQ_INT(probes_find_in_maps(c.pid, &p, &s, &n, why, sizeof(why)), 0);
	CHECK_EQ_INT(n, 2);
	free(s);

	point(&p, "sdt:fixturelib:libtick");
	CHECK_EQ_INT(probes_find_in_maps(c.pid, &p, &s, &n, why, sizeof(why)), 0);
	CHECK_EQ_INT(n, 1);
	if (n == 1)
		CHECK_STR(s[0].path, real_lib);
	free(s);

	/* getpid is in libc only (the executable imports it; malloc would be
	 * in libasan too in a sanitizer build) */
	point(&p, "getpid");
	CHECK_EQ_INT(probes_find_in_maps(c.pid, &p, &s, &n, why, sizeof(why)), 0);
	if (n == 1)
		CHECK(ends_with(s[0].path, "/libc.so.6"));
	free(s);

	point(&p, "sdt:fixture:nowhere");
	CHECK_EQ_INT(probes_find_in_maps(c.pid, &p, &s, &n, why, sizeof(why)), -ENOENT);
	CHECK(strstr(why, "process") != NULL);

	CHECK_EQ_INT(child_round(&c, 1, &g), 0);
	CHECK_EQ_INT(child_round(&c, 2, &g), 0);
	CHECK_EQ_INT(child_wait(&c), 0);

	CHECK_EQ_INT(probes_find_in_maps(999999999, &p, &s, &n, why, sizeof(why)), -ESRCH);
}

static void test_parse_hit(void)
{
	uint64_t body[5] = { 77, 0x401000, ((uint64_t)12 << 32) | 10, 123456789, 0 };
	struct {
		struct perf_event_header h;
		uint64_t b[5];
	} rec;
	struct probe_hit hit;

	/* IDENTIFIER, IP, TID (pid, tid), TIME */
	rec.h.type = PERF_RECORD_SAMPLE;
	rec.h.misc = PERF_RECORD_MISC_USER;
	rec.h.size = sizeof(rec.h) + 4 * 8;
	memcpy(rec.b, body, sizeof(body));
	CHECK_EQ_INT(probes_parse_hit(&rec.h, rec.b, 4 * 8, &hit), 0);
	CHECK_EQ_INT(hit.id, 77);
	CHECK_EQ_INT(hit.ip, 0x401000);
	CHECK_EQ_INT(hit.pid, 10);
	CHECK_EQ_INT(hit.tid, 12);
	CHECK_EQ_INT(hit.time, 123456789);
	rec.h.size = sizeof(rec.h) + 3 * 8; /* truncated */
	CHECK_EQ_INT(probes_parse_hit(&rec.h, rec.b, 3 * 8, &hit), -EPROTO);
	rec.h.type = PERF_RECORD_LOST;
	CHECK_EQ_INT(probes_parse_hit(&rec.h, rec.b, 3 * 8, &hit), -ENOMSG);
}

/* ---- live uprobes (root) ---- */

enum { EV_WORK, EV_WORK_RET, EV_LIB, EV_TICK, EV_GUARDED, EV_MULTI, NKINDS };
static const char *const kind_names[NKINDS] = { "fixture_work", "fixture_work (return)",
						 "fixture_lib_work", "sdt:fixture:tick",
						 "sdt:fixture:guarded", "sdt:fixture:multi" };

struct live_ev {
	int fd;
	uint64_t id;
	int thread; /* index in the child's tids */
	int kind;
};

struct live {
	struct live_ev ev[256];
	int nev;
	int count[16][NKINDS];
	int wrong_tid, unknown, bad, disorder, depth[16];
	uint64_t last_time[16];
	const struct child *c;
};

static int live_cb(void *ctx, const struct perf_event_header *hdr, const void *rec, int ring)
{
	struct live *L = ctx;
	struct probe_hit h;
	int err = probes_parse_hit(hdr, rec, hdr->size - sizeof(*hdr), &h);

	if (err == -ENOMSG)
		return 0;
	if (err) {
		L->bad++;
		return 0;
	}
	for (int i = 0; i < L->nev; i++) {
		const struct live_ev *e = &L->ev[i];
		int t = e->thread;

		if (e->id != h.id)
			continue;
		/* the ring is the thread's: the hit must be that thread's */
		if ((int)h.tid != L->c->tids[t] || ring != t)
			L->wrong_tid++;
		L->count[t][e->kind]++;
		if (h.time < L->last_time[t])
			L->disorder++;
		L->last_time[t] = h.time;
		if (e->kind == EV_WORK)
			L->depth[t]++;
		if (e->kind == EV_WORK_RET && --L->depth[t] < 0)
			L->disorder++;
		return 0;
	}
	L->unknown++;
	return 0;
}

static int live_open(struct live *L, const struct probe_site *site, int thread, int kind,
		     int retprobe, pid_t tid)
{
	struct live_ev *e = &L->ev[L->nev];
	char why[512];
	int err = probes_open(site, tid, retprobe, &e->fd, why, sizeof(why));

	if (err) {
		fprintf(stderr, "probes_open %s: %s\n", kind_names[kind], why);
		return err;
	}
	e->thread = thread;
	e->kind = kind;
	err = probes_event_id(e->fd, &e->id);
	if (!err)
		L->nev++;
	return err;
}

static void test_live(void)
{
	enum { CALLS = 200, THREADS = 3 };
	static struct live L;
	struct child a, b;
	struct probe_point p;
	struct probe_site *work = NULL, *lib = NULL, *tick = NULL, *guarded = NULL, *multi = NULL;
	size_t nwork = 0, nlib = 0, ntick = 0, nguarded = 0, nmulti = 0;
	void *maps[THREADS] = { 0 };
	size_t maplen = 0;
	int rings[THREADS], ga = -1, gb = -1, err;
	struct perf_sampler *ps = NULL;
	char why[1024];

	memset(&L, 0, sizeof(L));
	CHECK_EQ_INT(child_start(&a, CALLS, THREADS), 0);
	CHECK_EQ_INT(child_start(&b, CALLS, 1), 0);
	L.c = &a;

	point(&p, "fixture_work");
	CHECK_EQ_INT(probes_find_in_maps(a.pid, &p, &work, &nwork, why, sizeof(why)), 0);
	point(&p, "fixture_lib_work");
	CHECK_EQ_INT(probes_find_in_maps(a.pid, &p, &lib, &nlib, why, sizeof(why)), 0);
	point(&p, "sdt:fixture:tick");
	CHECK_EQ_INT(probes_find_in_maps(a.pid, &p, &tick, &ntick, why, sizeof(why)), 0);
	point(&p, "sdt:fixture:guarded");
	CHECK_EQ_INT(probes_find_in_maps(a.pid, &p, &guarded, &nguarded, why, sizeof(why)), 0);
	point(&p, "sdt:fixture:multi");
	CHECK_EQ_INT(probes_find_in_maps(a.pid, &p, &multi, &nmulti, why, sizeof(why)), 0);
	if (!nwork || !nlib || !ntick || !nguarded || nmulti != 2)
		goto out;

	/* per thread: one ring, every event of the thread sharing it */
	for (int t = 0; t < a.ntids; t++) {
		int first = L.nev;
		pid_t tid = a.tids[t];

		err = live_open(&L, &work[0], t, EV_WORK, 0, tid);
		err = err ? err : live_open(&L, &work[0], t, EV_WORK_RET, 1, tid);
		err = err ? err : live_open(&L, &lib[0], t, EV_LIB, 0, tid);
		err = err ? err : live_open(&L, &tick[0], t, EV_TICK, 0, tid);
		err = err ? err : live_open(&L, &guarded[0], t, EV_GUARDED, 0, tid);
		for (size_t k = 0; k < nmulti && !err; k++)
			err = live_open(&L, &multi[k], t, EV_MULTI, 0, tid);
		CHECK_EQ_INT(err, 0);
		if (err)
			goto out;
		CHECK_EQ_INT(probes_map_ring(L.ev[first].fd, 64, &maps[t], &maplen), 0);
		for (int i = first + 1; i < L.nev; i++)
			CHECK_EQ_INT(probes_share_ring(L.ev[i].fd, L.ev[first].fd), 0);
		rings[t] = t;
	}
	/* another thread's ring is refused: rings are per thread */
	CHECK(probes_share_ring(L.ev[L.nev - 1].fd, L.ev[0].fd) != 0);

	/* round 1 attached: every hit, the semaphore set in a only */
	CHECK_EQ_INT(child_round(&a, 1, &ga), 0);
	CHECK_EQ_INT(child_round(&b, 1, &gb), 0);
	CHECK_EQ_INT(ga, CALLS * THREADS);
	CHECK_EQ_INT(gb, 0);

	CHECK_EQ_INT(perf_ring_open_maps(&ps, maps, rings, a.ntids, maplen), 0);
	if (ps)
		CHECK(perf_ring_drain(ps, live_cb, &L) >= 0);
	for (int t = 0; t < a.ntids; t++) {
		CHECK_EQ_INT(L.count[t][EV_WORK], CALLS);
		CHECK_EQ_INT(L.count[t][EV_WORK_RET], CALLS);
		CHECK_EQ_INT(L.count[t][EV_LIB], CALLS);
		CHECK_EQ_INT(L.count[t][EV_TICK], CALLS);
		CHECK_EQ_INT(L.count[t][EV_GUARDED], CALLS);
		CHECK_EQ_INT(L.count[t][EV_MULTI], CALLS);
		CHECK_EQ_INT(L.depth[t], 0);
	}
	CHECK_EQ_INT(L.wrong_tid, 0);
	CHECK_EQ_INT(L.unknown, 0);
	CHECK_EQ_INT(L.bad, 0);
	CHECK_EQ_INT(L.disorder, 0);
	CHECK_EQ_INT(perf_ring_lost(ps, -1), 0);

	/* round 2 detached: the kernel has put the semaphore back to 0 */
	perf_ring_close(ps);
	ps = NULL;
	for (int t = 0; t < THREADS; t++) {
		probes_unmap_ring(maps[t], maplen);
		maps[t] = NULL;
	}
	for (int i = 0; i < L.nev; i++)
		close(L.ev[i].fd);
	L.nev = 0;
	CHECK_EQ_INT(child_round(&a, 2, &ga), 0);
	CHECK_EQ_INT(child_round(&b, 2, &gb), 0);
	CHECK_EQ_INT(ga, 0);
	CHECK_EQ_INT(gb, 0);
	/* and both carry on to a normal exit */
	CHECK_EQ_INT(child_wait(&a), 0);
	CHECK_EQ_INT(child_wait(&b), 0);
out:
	perf_ring_close(ps);
	for (int t = 0; t < THREADS; t++)
		probes_unmap_ring(maps[t], maplen);
	for (int i = 0; i < L.nev; i++)
		close(L.ev[i].fd);
	/* a failure above: do not leave the fixtures waiting */
	if (a.pid > 0) {
		kill(a.pid, SIGKILL);
		child_wait(&a);
	}
	if (b.pid > 0) {
		kill(b.pid, SIGKILL);
		child_wait(&b);
	}
	free(work);
	free(lib);
	free(tick);
	free(guarded);
	free(multi);
}

static void test_not_root(void)
{
	struct probe_site s;
	char why[512];
	int fd = -1;

	CHECK_EQ_INT(probes_resolve_function(fixture, "fixture_work", &s, why, sizeof(why)), 0);
	CHECK_EQ_INT(probes_open(&s, getpid(), 0, &fd, why, sizeof(why)), -EPERM);
	CHECK_STR(why, "uprobes need CAP_SYS_ADMIN (run mfu-record as root, or with sudo)");
	CHECK_EQ_INT(fd, -1);
}

int main(void)
{
	test_parse_table();
	test_parse_fields();
	test_object_matches();
	test_parse_hit();
	if (!find_fixtures()) {
		fprintf(stderr, "SKIP: fixture programs not built (%s); add subdir('probes_fixture') "
			"to tests/unit/meson.build\n", fixture);
		return check_status();
	}
	read_fixture_offsets();
	test_functions();
	test_dynsym_only();
	test_cxx();
	test_usdt();
	test_needed();
	test_find_in_maps();
	if (geteuid() == 0) {
		test_live();
	} else {
		fprintf(stderr, "SKIP: live uprobe test needs root (CAP_SYS_ADMIN); checking "
			"the refusal instead\n");
		test_not_root();
	}
	return check_status();
}
