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
    double cold_median_1pct, warm_median_1pct;   /* the same to within 1% */
    double best_only_ratio;      /* target optimum / time of the source's best config on the
                                    target (it is also the first warm-start config tried) */
    double target_optimum_ms;
    double random_expected;      /* uniform random sampling's exact expectation */
} tess_transfer_bench_result;

/* Runs `strategy` `repeats` times cold and warm (seeds 1..repeats): warm
 * runs start from the top `top` configs of the source and pre-train the cost
 * model on the source's fastest measurements. */
tess_status tess_transfer_bench(const char *source_path, const char *target_path, const char *strategy,
                                int repeats, int budget, int top, tess_transfer_bench_result *out);

#endif
