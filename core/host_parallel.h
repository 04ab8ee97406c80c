/*
 * host_parallel.h - host-side loops of the families (float64 references,
 * input filling) spread over the host's cores. Tuning computes references in
 * the process that then forks the runner, and an OpenMP thread pool left in
 * a parent hangs OpenMP in its forked children, so these use plain threads,
 * joined before returning.
 */
#ifndef TESS_CORE_HOST_PARALLEL_H
#define TESS_CORE_HOST_PARALLEL_H

#include <stdint.h>
#include <gsl/gsl_rng.h>
#include "error.h"
#include "types.h"

enum { TESS_HOST_MAX_PARTS = 64 };

/* Calls fn(ctx, part, first, end) on disjoint ranges covering [0, n), in
 * parallel, part numbering them from 0 (a caller may keep a result per part
 * in an array of TESS_HOST_MAX_PARTS). Returns the number of parts. */
typedef void tess_host_range_fn(void *ctx, int part, int64_t first, int64_t end);
int tess_host_parallel(int64_t n, tess_host_range_fn *fn, void *ctx);

/* Calls fill(ctx, first, count, rng) on the chunks [k * chunk, (k+1) *
 * chunk) of [0, n), in parallel, each with a generator seeded from (seed,
 * k): the values do not depend on the number of cores. */
typedef void tess_host_fill_fn(void *ctx, int64_t first, int64_t count, gsl_rng *rng);
tess_status tess_host_fill_chunks(int64_t n, int64_t chunk, uint64_t seed, tess_host_fill_fn *fill, void *ctx);

/* Random inputs: n values of dtype d at host, uniform in [-1, 1), filled
 * by tess_host_fill_chunks in chunks of TESS_FILL_CHUNK elements. */
#define TESS_FILL_CHUNK 65536
tess_status tess_uniform_fill(void *host, tess_dtype d, int64_t n, uint64_t seed);

#endif
