/*
 * transfer_bench.h - how much a warm start from one recorded space saves on
 * another (the same kernel on another GPU, another shape): evaluations to
 * get within 5% of the target's optimum with a cold search, with a warm
 * start from the source's best configs, and with only the source's best
 * config reused. Its runs take the path tuning takes: the warm start is
 * built by tess_warm_start_from, and the search loop (tess_tune_loop)
 * evaluates the template's default (when the recording names it) and the
 * warm start's configs first, the priors pre-training the strategy.
 */
#ifndef TESS_TRANSFER_BENCH_H
#define TESS_TRANSFER_BENCH_H

#include "core/evaluator.h"
#include "core/tessera.h"
#include "core/warm.h"
#include "search/bench.h"

/* The warm start a replayed source gives a target space: the source's
 * fastest ok measurements through tess_warm_start_from (one source,
 * similarity 1, up to `top` configs). Free with tess_warm_start_free. */
tess_status tess_transfer_bench_warm(const tess_bench_space *source, const tess_space *target, int top,
                                     tess_warm_start *out);

typedef enum tess_transfer_mode {
    TESS_TRANSFER_COLD,          /* no warm start */
    TESS_TRANSFER_WARM,          /* its configs and priors */
    TESS_TRANSFER_BEST_ONLY      /* its first config alone, no priors */
} tess_transfer_mode;

/* One run on the target: stops once a config within 1% of the optimum is
 * found or after `budget` evaluations; evals[0], evals[1]: evaluations to
 * within 5% and 1% (INFINITY if never). on_result (may be NULL) sees every
 * result. Fails with TESS_ERR_INTERNAL on a strategy that proposes a config
 * twice or an illegal one. */
tess_status tess_transfer_bench_run(const tess_strategy_ops *ops, const tess_bench_space *target,
                                    const tess_warm_start *warm, tess_transfer_mode mode, uint64_t seed,
                                    int budget, tess_result_fn on_result, void *user, double evals[2]);

#endif
