/* Checked parsing and JSON string escaping. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "util.h"

static const struct {
	int line;
	const char *in;
	int rc;
	double out;
} si_cases[] = {
	{ __LINE__, "1.5T", 0, 1.5e12 },
	{ __LINE__, "200G", 0, 200e9 },
	{ __LINE__, "3k", 0, 3e3 },
	{ __LINE__, "2.5e12", 0, 2.5e12 },
	{ __LINE__, "7", 0, 7 },
	{ __LINE__, "0", -ERANGE, 0 },
	{ __LINE__, "-1", -ERANGE, 0 },
	{ __LINE__, "1e400", -ERANGE, 0 },
	{ __LINE__, "nan", -ERANGE, 0 },
	{ __LINE__, "inf", -ERANGE, 0 },
	{ __LINE__, "12X", -EINVAL, 0 },
	{ __LINE__, "", -EINVAL, 0 },
	{ __LINE__, "G", -EINVAL, 0 },
	{ __LINE__, " 5", -EINVAL, 0 },
	{ __LINE__, "5 ", -EINVAL, 0 },
	{ __LINE__, "1.5TT", -EINVAL, 0 },
};

static void test_parse(void)
{
	int i;
	uint64_t u;
	double d;

	for (size_t k = 0; k < sizeof(si_cases) / sizeof(si_cases[0]); k++) {
		d = 0;
		int rc = parse_si(si_cases[k].in, &d);
		CHECK_ROW(rc == si_cases[k].rc, si_cases[k].line);
		if (rc == 0)
			CHECK_ROW(d == si_cases[k].out, si_cases[k].line);
	}
	CHECK_EQ_INT(safe_atoi("42", &i), 0);
	CHECK_EQ_INT(i, 42);
	CHECK_EQ_INT(safe_atoi("-7", &i), 0);
	CHECK_EQ_INT(i, -7);
	CHECK_EQ_INT(safe_atoi("4x", &i), -EINVAL);
	CHECK_EQ_INT(safe_atoi("", &i), -EINVAL);
	CHECK_EQ_INT(safe_atoi("99999999999", &i), -ERANGE);
	CHECK_EQ_INT(safe_atou64("18446744073709551615", &u), 0);
	CHECK(u == UINT64_MAX);
	CHECK_EQ_INT(safe_atou64("18446744073709551616", &u), -ERANGE);
	CHECK_EQ_INT(safe_atou64("-1", &u), -EINVAL);
	CHECK_EQ_INT(safe_atod("0.25", &d), 0);
	CHECK(d == 0.25);
	CHECK_EQ_INT(safe_atod("0.25abc", &d), -EINVAL);
}

static void test_json_string(void)
{
	static const struct {
		int line;
		const char *in;
		size_t n;
		const char *want;
	} rows[] = {
		{ __LINE__, "plain", 5, "\"plain\"" },
		{ __LINE__, "a,\"b\"\nc", 7, "\"a,\\\"b\\\"\\nc\"" },
		{ __LINE__, "back\\", 5, "\"back\\\\\"" },
		{ __LINE__, "\x01\x1f\x7f", 3, "\"\\u0001\\u001f\\u007f\"" },
		{ __LINE__, "nul\0", 4, "\"nul\\u0000\"" },
		{ __LINE__, "bad\xff\xfe", 5, "\"bad\\ufffd\\ufffd\"" },
		{ __LINE__, "caf\xc3\xa9", 5, "\"caf\xc3\xa9\"" },
		{ __LINE__, "ls\xe2\x80\xa8", 5, "\"ls\\u2028\"" },
		/* what a terminal obeys or uses to hide text: C1 (U+009B CSI), bidi */
		{ __LINE__, "c1\xc2\x9b" "2J", 6, "\"c1\\u009b2J\"" },
		{ __LINE__, "rtl\xe2\x80\xae" "x", 7, "\"rtl\\u202ex\"" },
		{ __LINE__, "iso\xe2\x81\xa6" "x", 7, "\"iso\\u2066x\"" },
		{ __LINE__, "nbsp\xc2\xa0", 6, "\"nbsp\xc2\xa0\"" },
		{ __LINE__, "", 0, "\"\"" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *buf = NULL;
		size_t len = 0, cap = 0;
		int rc = json_append_string(&buf, &len, &cap, rows[i].in, rows[i].n);
		CHECK_ROW(rc == 0 && buf && strcmp(buf, rows[i].want) == 0, rows[i].line);
		if (!buf || strcmp(buf, rows[i].want))
			fprintf(stderr, "  got '%s' want '%s'\n", buf ? buf : "(null)", rows[i].want);
		free(buf);
	}
}


static void test_strbuf(void)
{
	char b[4];
	CHECK_EQ_INT(strbuf(b, sizeof(b), "%s", "abc"), 0);
	CHECK_EQ_INT(strbuf(b, sizeof(b), "%s", "abcd"), -ENOSPC);
	CHECK_STR(b, "abc");
}

static void test_interp(void)
{
	CHECK(interp_linear(100, 10, 200, 20, 150) == 15);
	CHECK(interp_linear(100, 10, 200, 20, 100) == 10);
	CHECK(interp_linear(100, 10, 200, 20, 200) == 20);
	CHECK(interp_linear(100, 10, 200, 20, 50) == 5);  /* before t0: extrapolated */
	CHECK(interp_linear(100, 10, 100, 20, 100) == 20); /* one instant */
}

static void test_array_grow(void)
{
	long *v = NULL;
	size_t cap = 0;

	/* appending one at a time: capacity doubles from 16, contents kept */
	for (size_t i = 0; i < 1000; i++) {
		CHECK(array_grow(&v, &cap, i + 1, sizeof(*v)) == 0);
		v[i] = (long)i;
	}
	CHECK(cap == 1024);
	CHECK(v[999] == 999 && v[0] == 0);
	/* enough room: nothing changes */
	CHECK(array_grow(&v, &cap, 10, sizeof(*v)) == 0 && cap == 1024);
	/* a size that cannot be allocated fails and keeps the array */
	CHECK(array_grow(&v, &cap, SIZE_MAX / 2, sizeof(*v)) == -ENOMEM);
	CHECK(cap == 1024 && v[999] == 999);
	free(v);
}

/* path_lookup() finds what execvp() would run: a file in PATH that is
 * regular and executable, a name with a '/' as it is. */
static void test_path_lookup(void)
{
	char dir[] = "/tmp/mfu-path-XXXXXX", file[PATH_MAX], out[PATH_MAX], path[PATH_MAX * 2 + 8];
	const char *old = getenv("PATH");
	char *saved = old ? strdup(old) : NULL;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(file, sizeof(file), "%s/prog", dir);
	f = fopen(file, "w");
	CHECK(f != NULL);
	if (f)
		fclose(f);
	/* in PATH but not executable: not found, as execvp would say */
	snprintf(path, sizeof(path), "/nonexistent:%s", dir);
	setenv("PATH", path, 1);
	CHECK_EQ_INT(path_lookup("prog", out, sizeof(out)), -ENOENT);
	chmod(file, 0755);
	CHECK_EQ_INT(path_lookup("prog", out, sizeof(out)), 0);
	CHECK_STR(out, file);
	/* a directory of that name comes first: skipped */
	snprintf(path, sizeof(path), "%s/sub", dir);
	mkdir(path, 0755);
	CHECK_EQ_INT(path_lookup("sub", out, sizeof(out)), -ENOENT);
	/* with a '/': the name itself */
	CHECK_EQ_INT(path_lookup(file, out, sizeof(out)), 0);
	CHECK_STR(out, file);
	CHECK_EQ_INT(path_lookup("./no-such-program", out, sizeof(out)), -ENOENT);
	/* too long for @out */
	CHECK_EQ_INT(path_lookup(file, out, 4), -ENAMETOOLONG);
	rmdir(path);
	unlink(file);
	rmdir(dir);
	if (saved)
		setenv("PATH", saved, 1);
	else
		unsetenv("PATH");
	free(saved);
}

/* Binary search on a leading int64_t key, over elements of any size. */
static void test_find_by_key(void)
{
	struct row {
		int64_t key;
		char pad[13];
	} rows[7];

	for (int i = 0; i < 7; i++)
		rows[i] = (struct row){ .key = (int64_t)i * 10 - 20 };
	for (int i = 0; i < 7; i++)
		CHECK(find_by_key(rows, 7, sizeof(rows[0]), (int64_t)i * 10 - 20) == &rows[i]);
	CHECK(find_by_key(rows, 7, sizeof(rows[0]), -21) == NULL);
	CHECK(find_by_key(rows, 7, sizeof(rows[0]), 5) == NULL);
	CHECK(find_by_key(rows, 7, sizeof(rows[0]), 41) == NULL);
	CHECK(find_by_key(rows, 0, sizeof(rows[0]), 0) == NULL);
	CHECK(find_by_key(rows, 1, sizeof(rows[0]), -20) == &rows[0]);
}

int main(void)
{
	test_path_lookup();
	test_array_grow();
	test_find_by_key();
	test_interp();
	test_parse();
	test_json_string();
	{
		char *argv_json = json_argv((char *[]){ "a b", "c\"", NULL });
		CHECK(argv_json && strcmp(argv_json, "[\"a b\",\"c\\\"\"]") == 0);
		free(argv_json);
	}
	test_strbuf();
	return check_status();
}
