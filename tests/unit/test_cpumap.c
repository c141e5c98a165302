/* cpumap: the one CPU-list parser and writer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpumap.h"

static void test_parse(void)
{
	static const struct {
		int line;
		const char *list;
		int err;
		const char *back; /* cpumap_format of the result */
	} rows[] = {
		{ __LINE__, "0", 0, "0" },
		{ __LINE__, "0-3,8,10-11\n", 0, "0-3,8,10-11" },
		{ __LINE__, "4,0-3,2", 0, "0-4" },      /* unordered, overlapping */
		{ __LINE__, "0,56", 0, "0,56" },
		{ __LINE__, "", 0, "" },                /* an empty cpumask */
		{ __LINE__, "\n", 0, "" },
		{ __LINE__, "65535", 0, "65535" },
		{ __LINE__, "65536", -EINVAL, NULL },
		{ __LINE__, "1,", -EINVAL, NULL },
		{ __LINE__, ",1", -EINVAL, NULL },
		{ __LINE__, "1,,2", -EINVAL, NULL },
		{ __LINE__, "3-1", -EINVAL, NULL },
		{ __LINE__, "1-", -EINVAL, NULL },
		{ __LINE__, " 1", -EINVAL, NULL },
		{ __LINE__, "0x1", -EINVAL, NULL },
		{ __LINE__, "99999999999999999999999", -EINVAL, NULL },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct cpumap m;
		char buf[64];
		int err = cpumap_parse(&m, rows[i].list);

		CHECK_ROW(err == rows[i].err, rows[i].line);
		if (err || !rows[i].back) {
			CHECK_ROW(m.n == 0 && m.cpu == NULL, rows[i].line);
			continue;
		}
		CHECK_ROW(cpumap_format(m.cpu, m.n, buf, sizeof(buf)) == 0, rows[i].line);
		CHECK_ROW(strcmp(buf, rows[i].back) == 0, rows[i].line);
		for (int k = 1; k < m.n; k++)
			CHECK_ROW(m.cpu[k - 1] < m.cpu[k], rows[i].line);
		cpumap_fini(&m);
	}
	CHECK(cpumap_parse(&(struct cpumap){ 0 }, NULL) == -EINVAL);
}

static void test_format_overflow(void)
{
	int cpu[100];
	char buf[16];

	for (int i = 0; i < 100; i++)
		cpu[i] = 2 * i; /* no ranges: "0,2,4,..." */
	CHECK(cpumap_format(cpu, 100, buf, sizeof(buf)) == -ENOSPC);
	CHECK(strlen(buf) < sizeof(buf) && strstr(buf, "...") != NULL);
	CHECK(strncmp(buf, "0,2,4", 5) == 0);
	cpumap_fini(NULL);
}

int main(void)
{
	test_parse();
	test_format_overflow();
	return check_status();
}
