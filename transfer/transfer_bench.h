/*
 * transfer_bench.h - how much a warm start from one recorded space saves on
 * another (the same kernel on another GPU, another shape): evaluations to
 * get within 5% of the target's optimum with a cold search, with a warm
 * start from the source's best configs, and with only the source's best
 * config reused.
 */
#ifndef TESS_TRANSFER_BENCH_H
#define TESS_TRANSFER_BENCH_H

#include "core/tessera.h"

typedef struct tess_transfer_bench_result {
    char source[128], target[128];
    int runs, budget, nwarm, npriors;
    double cold_median;          /* evaluations to within 5%; INFINITY if most runs never got there */
    double warm_median;
    double best_only_median;     /* with only the source's best config reused, then a cold search */
    double cold_median_1pct, warm_median_1pct, best_only_median_1pct;   /* the same to within 1% */
    double best_only_ratio;      /* target optimum / time of the source's best config on the
                                    target (it is also the first warm-start config tried) */
    double target_optimum_ms;
    double random_expected;      /* uniform random sampling's exact expectation */
} tess_transfer_bench_result;

/* Runs `strategy` `repeats` times (seeds 1..repeats) in each of three
 * modes: cold; warm, starting from the top `top` configs of the source and
 * pre-training the cost model on the source's fastest measurements; and
 * starting from the source's best config alone, with no priors. */
tess_status tess_transfer_bench(const char *source_path, const char *target_path, const char *strategy,
                                int repeats, int budget, int top, tess_transfer_bench_result *out);

#endif
