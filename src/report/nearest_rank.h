/* mfu_nearest_rank(X, P): an SQL aggregate, the nearest-rank P-th
 * percentile of the non-null X (the value at rank ceil(P/100 x n) in
 * ascending order, as the summary and phases define their p50 and p95),
 * found by selection in O(n) instead of a sort. Integers only (times in
 * ns); NULL over no rows. mfu-report registers it for the @computed
 * blocks of the analyses (analysis.h), whose plain SQL ranks with a
 * window instead. */
#ifndef MFU_REPORT_NEAREST_RANK_H
#define MFU_REPORT_NEAREST_RANK_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* The k-th smallest (0-based, k < n) of @v[0..n), which it reorders. */
int64_t nearest_rank_select(int64_t *v, size_t n, size_t k);

/* Register mfu_nearest_rank on @db. Returns an SQLite result code. */
int nearest_rank_register(sqlite3 *db);

#endif
