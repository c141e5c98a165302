/* A minimal test harness: CHECK() records a failure with its line and goes on;
 * the test's main returns check_status(). */
#ifndef MFU_CHECK_H
#define MFU_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                                 \
	do {                                                                        \
		check_count++;                                                      \
		if (!(cond)) {                                                      \
			check_failures++;                                           \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                   \
	} while (0)

/* A check inside a table-driven loop: names the table row's source line. */
#define CHECK_ROW(cond, row_line)                                                   \
	do {                                                                        \
		check_count++;                                                      \
		if (!(cond)) {                                                      \
			check_failures++;                                           \
			fprintf(stderr, "%s:%d (row at line %d): check failed: %s\n", \
				__FILE__, __LINE__, (int)(row_line), #cond);        \
		}                                                                   \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                          \
	do {                                                                        \
		long long _a = (long long)(a), _b = (long long)(b);                 \
		check_count++;                                                      \
		if (_a != _b) {                                                     \
			check_failures++;                                           \
			fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n",   \
				__FILE__, __LINE__, #a, #b, _a, _b);                \
		}                                                                   \
	} while (0)

#define CHECK_STR(a, b)                                                             \
	do {                                                                        \
		const char *_a = (a), *_b = (b);                                    \
		check_count++;                                                      \
		if (!_a || !_b || strcmp(_a, _b) != 0) {                            \
			check_failures++;                                           \
			fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", \
				__FILE__, __LINE__, #a, #b, _a ? _a : "(null)",     \
				_b ? _b : "(null)");                                \
		}                                                                   \
	} while (0)

#define CHECK_NEAR(a, b, tol)                                                       \
	do {                                                                        \
		double _a = (a), _b = (b);                                          \
		check_count++;                                                      \
		if (!(fabs(_a - _b) <= (tol))) {                                    \
			check_failures++;                                           \
			fprintf(stderr, "%s:%d: %s ~= %s failed: %.17g vs %.17g (tol %g)\n", \
				__FILE__, __LINE__, #a, #b, _a, _b, (double)(tol)); \
		}                                                                   \
	} while (0)

static inline int check_status(void)
{
	fprintf(stderr, "%d checks, %d failed\n", check_count, check_failures);
	return check_failures ? 1 : 0;
}

/* "@dir/@name" in one of four rotating buffers: up to four at once in one
 * call's arguments (a test's temporary directory and the files in it). */
static inline const char *check_path(const char *dir, const char *name)
{
	static char buf[4][512];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

#endif
