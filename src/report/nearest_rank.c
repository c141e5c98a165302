/* Selection for the nearest-rank percentile (nearest_rank.h). */
#include "nearest_rank.h"

/* The k-th smallest (0-based) of @v[0..n): Hoare's selection with the
 * middle element as pivot (step times come nearly sorted, or all equal). */
int64_t nearest_rank_select(int64_t *v, size_t n, size_t k)
{
	long lo = 0, hi = (long)n - 1, kk = (long)k;

	while (lo < hi) {
		int64_t pivot = v[lo + (hi - lo) / 2];
		long i = lo - 1, j = hi + 1;

		for (;;) {
			do
				i++;
			while (v[i] < pivot);
			do
				j--;
			while (v[j] > pivot);
			if (i >= j)
				break;
			int64_t t = v[i];
			v[i] = v[j];
			v[j] = t;
		}
		/* v[lo..j] <= pivot <= v[j+1..hi] */
		if (kk <= j)
			hi = j;
		else
			lo = j + 1;
	}
	return v[kk];
}
