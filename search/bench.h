/*
 * bench.h - the search-efficiency benchmark: strategies run repeatedly on
 * replayed spaces, compared with the exact expectation of uniform random
 * sampling without replacement. The options, results, random sampling's
 * expectation and median, and the plot are public (tessera.h).
 */
#ifndef TESS_SEARCH_BENCH_H
#define TESS_SEARCH_BENCH_H

#include <stdint.h>
#include "core/evaluator.h"
#include "core/strategy.h"
#include "search/replay.h"

/* A replayed space with what the benchmark needs to know about it. */
typedef struct tess_bench_space {
    char name[128];              /* file name without directories and extensions */
    tess_replay *replay;         /* the recording (owned) */
    const tess_space *space;     /* its space (the replay's) */
    tess_evaluator *ev;          /* replay evaluator (owned) */
    size_t n;                    /* recorded configs: the legal points */
    size_t nok;                  /* of which succeeded */
    double best_ms;              /* the optimum */
    size_t within_5pct, within_1pct;   /* ok configs within 5% / 1% of the optimum */
} tess_bench_space;

tess_status tess_bench_space_open(const char *path, tess_bench_space *out);
void tess_bench_space_close(tess_bench_space *bs);

/* Runs one strategy for at most `budget` evaluations through the search loop
 * (tess_tune_loop), answering from the replay evaluator: the template's
 * default first when the recording names it (as tuning does), then the
 * strategy's proposals. Records the best time after each evaluation in
 * best_ms[0..budget) (INFINITY before the first success; entries past an
 * exhausted space repeat the last), and raises *propose_ms_max (may be NULL)
 * to the slowest propose call. Fails with TESS_ERR_INTERNAL if the strategy
 * proposes a config twice, an illegal config or more than asked. */
tess_status tess_bench_run(const tess_strategy_ops *ops, const tess_bench_space *bs, uint64_t seed,
                           int budget, int batch, double *best_ms, double *propose_ms_max);

/* Runs `repeats` runs of a strategy on a space; result->curve is malloc'd
 * (tess_bench_result_free). */
tess_status tess_bench_strategy(const tess_strategy_ops *ops, const tess_bench_space *bs,
                                const tess_bench_options *o, tess_bench_result *result);

#endif
