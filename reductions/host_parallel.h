/*
 * host_parallel.h - the family's host-side loops (float64 references, input
 * filling) spread over the host's cores. Tuning computes references in the
 * process that then forks the runner, and an OpenMP thread pool left in a
 * parent hangs OpenMP in its forked children, so these use plain threads,
 * joined before returning (as the stencils' interpreter does).
 */
#ifndef TESS_REDUCTIONS_HOST_PARALLEL_H
#define TESS_REDUCTIONS_HOST_PARALLEL_H

#include <stdint.h>
#include <gsl/gsl_rng.h>
#include "core/error.h"

/* Calls fn(ctx, first, end) on disjoint ranges covering [0, n), in parallel. */
typedef void tess_host_range_fn(void *ctx, int64_t first, int64_t end);
void tess_host_parallel(int64_t n, tess_host_range_fn *fn, void *ctx);

/* Calls fill(ctx, first, count, rng) on the chunks [k * chunk, (k+1) *
 * chunk) of [0, n), in parallel, each with a generator seeded from (seed,
 * k): the values do not depend on the number of cores. */
typedef void tess_host_fill_fn(void *ctx, int64_t first, int64_t count, gsl_rng *rng);
tess_status tess_host_fill_chunks(int64_t n, int64_t chunk, uint64_t seed, tess_host_fill_fn *fill, void *ctx);

#endif
