/* The nearest-rank percentile by selection: the value at rank
 * ceil(p/100 x n) in ascending order (how the summary and the phases
 * define their p50 and p95), found in O(n) without sorting the values
 * (mfu_step_totals, step_totals.h, selects the summary's p50 and p95 of a
 * million step times this way). */
#ifndef MFU_REPORT_NEAREST_RANK_H
#define MFU_REPORT_NEAREST_RANK_H

#include <stddef.h>
#include <stdint.h>

/* The k-th smallest (0-based, k < n) of @v[0..n), which it reorders. */
int64_t nearest_rank_select(int64_t *v, size_t n, size_t k);

#endif
