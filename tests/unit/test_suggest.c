/* suggest: the edit distance (against a plain full-matrix implementation
 * here), which names are close enough to suggest, and the "did you mean"
 * text. */
#include "check.h"
#include "suggest.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Optimal string alignment distance, the textbook way: a full matrix. */
static int reference_distance(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	int d[24][24];

	for (size_t i = 0; i <= na; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= nb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= na; i++)
		for (size_t j = 1; j <= nb; j++) {
			int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			int v = d[i - 1][j - 1] + cost;
			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[na][nb];
}

static void test_distance(void)
{
	static const struct {
		int line;
		const char *a, *b;
		int d;
	} rows[] = {
		{ __LINE__, "", "", 0 },
		{ __LINE__, "abc", "", 3 },
		{ __LINE__, "", "abc", 3 },
		{ __LINE__, "kitten", "sitting", 3 },
		{ __LINE__, "ab", "ba", 1 },            /* a swap is one edit */
		{ __LINE__, "abc", "ACB", 1 },          /* case is ignored */
		{ __LINE__, "ca", "abc", 3 },           /* OSA: no edit of a swapped pair */
		{ __LINE__, "FP_ARITH_INST_RETIRD:SCALAR_DOUBLE", "FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", 1 },
		{ __LINE__, "FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", "FP_ARITH_INST_RETIRED:SCALAR_SINGLE", 4 },
		{ __LINE__, "INST_RETIRED:ANY", "inst_retired:any", 0 },
		{ __LINE__, "cas_count_raed", "cas_count_read", 1 },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		CHECK_ROW(suggest_distance(rows[i].a, rows[i].b) == rows[i].d, rows[i].line);
		CHECK_ROW(suggest_distance(rows[i].b, rows[i].a) == rows[i].d, rows[i].line);
	}

	/* random short strings over a small alphabet (many repeats and swaps):
	 * the same as the full matrix */
	srand(7);
	for (int k = 0; k < 20000; k++) {
		char a[12], b[12];
		size_t na = (size_t)rand() % 11, nb = (size_t)rand() % 11;

		for (size_t i = 0; i < na; i++)
			a[i] = "abcAB_"[rand() % 6];
		for (size_t i = 0; i < nb; i++)
			b[i] = "abcAB_"[rand() % 6];
		a[na] = b[nb] = '\0';
		int got = suggest_distance(a, b), want = reference_distance(a, b);
		CHECK(got == want);
		if (got != want) {
			fprintf(stderr, "  '%s' '%s': %d, want %d\n", a, b, got, want);
			break;
		}
	}

	/* names longer than SUGGEST_NAME_MAX are compared on their start */
	char x[400], y[400];
	memset(x, 'x', sizeof(x) - 1);
	x[sizeof(x) - 1] = '\0';
	memcpy(y, x, sizeof(y));
	y[sizeof(y) - 2] = 'y';
	CHECK_EQ_INT(suggest_distance(x, y), 0);
	y[5] = 'y';
	CHECK_EQ_INT(suggest_distance(x, y), 1);
}

static const char *const events[] = {
	"FP_ARITH_INST_RETIRED:SCALAR_DOUBLE", "FP_ARITH_INST_RETIRED:SCALAR_SINGLE",
	"FP_ARITH_INST_RETIRED:SCALAR", "FP_ARITH_INST_RETIRED:128B_PACKED_DOUBLE",
	"FP_ARITH_INST_RETIRED", "INST_RETIRED", "INST_RETIRED:ANY", "INST_RETIRED:ANY_P",
	"INST_RETIRED:PREC_DIST", "INST_RETIRED:ANYP", "INST_RETIRED:ANY_PP", "BR_INST_RETIRED:ALL_BRANCHES", "CPU_CLK_UNHALTED:THREAD",
	"CPU_CLK_UNHALTED:REF_TSC", "MEM_LOAD_RETIRED:L1_HIT",
};

/* The suggestions for @query over the event names, fed in @order (a
 * permutation seed: 0 is the table's order). */
static int suggestions(const char *query, unsigned order, char *buf, size_t len)
{
	struct suggest s;
	size_t n = sizeof(events) / sizeof(events[0]), idx[32];

	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	srand(order);
	for (size_t i = n - 1; order && i > 0; i--) {
		size_t j = (size_t)rand() % (i + 1), t = idx[i];
		idx[i] = idx[j];
		idx[j] = t;
	}
	suggest_init(&s, query);
	for (size_t i = 0; i < n; i++)
		suggest_add(&s, events[idx[i]]);
	return suggest_format(&s, buf, len);
}

static void test_suggest(void)
{
	static const struct {
		int line;
		const char *query, *want;
	} rows[] = {
		/* a typo gets its fix, not the fix's neighbours (SCALAR_SINGLE is 5 away) */
		{ __LINE__, "FP_ARITH_INST_RETIRD:SCALAR_DOUBLE", "FP_ARITH_INST_RETIRED:SCALAR_DOUBLE" },
		{ __LINE__, "fp_arith_inst_retired:scalar_dubble", "FP_ARITH_INST_RETIRED:SCALAR_DOUBLE" },
		/* one edit from three, two from a fourth: the closest first, ties
		 * by name, at most 3 */
		{ __LINE__, "INST_RETIRED:ANY_", "INST_RETIRED:ANY, INST_RETIRED:ANYP or INST_RETIRED:ANY_P" },
		/* one edit from ANY_P, two from ANY, ANYP and ANY_PP: the closest
		 * first, then the others by name, at most 3 */
		{ __LINE__, "INST_RETIRED:ANY_X", "INST_RETIRED:ANY_P, INST_RETIRED:ANY or INST_RETIRED:ANYP" },
		/* one edit from ANY, two from ANYP, three from ANY_P: not that one */
		{ __LINE__, "INST_RETIRED:AN", "INST_RETIRED:ANY or INST_RETIRED:ANYP" },
		{ __LINE__, "INST_RETIRD", "INST_RETIRED" },
		{ __LINE__, "CPU_CLK_UNHALTED:THRED", "CPU_CLK_UNHALTED:THREAD" },
		/* nothing close: no suggestion rather than a wild one */
		{ __LINE__, "NO_SUCH_EVENT", "" },
		{ __LINE__, "cycles", "" },
		{ __LINE__, "", "" },
	};
	char buf[256], again[256];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int n = suggestions(rows[i].query, 0, buf, sizeof(buf));
		char want[256];

		snprintf(want, sizeof(want), rows[i].want[0] ? "did you mean %s?" : "%s", rows[i].want);
		CHECK_ROW(strcmp(buf, want) == 0, rows[i].line);
		if (strcmp(buf, want) != 0)
			fprintf(stderr, "  '%s': '%s'\n", rows[i].query, buf);
		CHECK_ROW(n == (rows[i].want[0] ? 1 + (int)(strchr(rows[i].want, ',') != NULL) +
						  (int)(strstr(rows[i].want, " or ") != NULL)
					: 0),
			  rows[i].line);
		/* the order the names come in changes nothing */
		for (unsigned order = 1; order < 20; order++) {
			suggestions(rows[i].query, order, again, sizeof(again));
			CHECK_ROW(strcmp(again, buf) == 0, rows[i].line);
		}
	}

	/* the same name twice (in another case) is suggested once */
	struct suggest s;
	suggest_init(&s, "INST_RETIRD");
	suggest_add(&s, "INST_RETIRED");
	suggest_add(&s, "inst_retired");
	CHECK_EQ_INT(suggest_format(&s, buf, sizeof(buf)), 1);
	CHECK_STR(buf, "did you mean INST_RETIRED?");

	/* a buffer too small: cut, terminated, -ENOSPC */
	CHECK_EQ_INT(suggestions("INST_RETIRED:ANY_", 0, buf, 40), -ENOSPC);
	CHECK(strlen(buf) < 40);
	CHECK_EQ_INT(suggestions("INST_RETIRED:ANY_", 0, buf, 0), -ENOSPC);

	/* a short name allows one edit: two are not close */
	suggest_init(&s, "tsc");
	suggest_add(&s, "tscx");
	suggest_add(&s, "aperf");
	suggest_add(&s, "t");
	CHECK_EQ_INT(suggest_format(&s, buf, sizeof(buf)), 1);
	CHECK_STR(buf, "did you mean tscx?");
}

int main(void)
{
	test_distance();
	test_suggest();
	return check_failures ? 1 : 0;
}
