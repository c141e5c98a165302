/* procmaps: the one /proc/PID/maps reader. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "record/procmaps.h"

static void test_lines(void)
{
	static const struct {
		int line;
		const char *text;
		int err, exec;
		unsigned long long start, end, pgoff;
		const char *path;
	} rows[] = {
		{ __LINE__, "55d0c4a00000-55d0c4a21000 r-xp 00002000 fd:01 1234   /usr/bin/app\n", 0, 1,
		  0x55d0c4a00000ull, 0x55d0c4a21000ull, 0x2000, "/usr/bin/app" },
		{ __LINE__, "7f00-8f00 rw-p 00000000 00:00 0 \n", 0, 0, 0x7f00, 0x8f00, 0, "" },
		{ __LINE__, "7ffd1000-7ffd3000 r-xp 00000000 00:00 0                  [vdso]\n", 0, 1,
		  0x7ffd1000, 0x7ffd3000, 0, "[vdso]" },
		{ __LINE__, "1000-2000 r-xp 00001000 08:02 77 /tmp/a b (deleted)\n", 0, 1, 0x1000, 0x2000, 0x1000,
		  "/tmp/a b (deleted)" },
		{ __LINE__, "1000-2000 r-xp 00001000 08:02 77", 0, 1, 0x1000, 0x2000, 0x1000, "" },
		{ __LINE__, "2000-1000 r-xp 0 08:02 77 /x\n", -EINVAL, 0, 0, 0, 0, NULL },
		{ __LINE__, "1000 r-xp 0 08:02 77 /x\n", -EINVAL, 0, 0, 0, 0, NULL },
		{ __LINE__, "1000-2000 r-x 0 08:02 77 /x\n", -EINVAL, 0, 0, 0, 0, NULL },
		{ __LINE__, "", -EINVAL, 0, 0, 0, 0, NULL },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char buf[256];
		struct procmaps_entry e;
		int err;

		strcpy(buf, rows[i].text);
		err = procmaps_parse_line(buf, &e);
		CHECK_ROW(err == rows[i].err, rows[i].line);
		if (err || rows[i].err)
			continue;
		CHECK_ROW(e.start == rows[i].start && e.end == rows[i].end && e.pgoff == rows[i].pgoff, rows[i].line);
		CHECK_ROW(e.exec == rows[i].exec, rows[i].line);
		CHECK_ROW(strcmp(e.path, rows[i].path) == 0, rows[i].line);
	}
}

static int find_self(void *ctx, const struct procmaps_entry *e)
{
	int *found = ctx;

	*found += e->exec && strstr(e->path, "test_procmaps") != NULL;
	return 0;
}

static int stop_at_first(void *ctx, const struct procmaps_entry *e)
{
	(void)e;
	++*(int *)ctx;
	return 42;
}

static void test_self(void)
{
	int found = 0, calls = 0;

	CHECK(procmaps_each(getpid(), find_self, &found) == 0);
	CHECK(found >= 1);
	CHECK(procmaps_each(getpid(), stop_at_first, &calls) == 42 && calls == 1);
	CHECK(procmaps_each(0x7ffffff0, find_self, &found) == -ESRCH);
}

int main(void)
{
	test_lines();
	test_self();
	return check_status();
}
