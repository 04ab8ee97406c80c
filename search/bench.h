/*
 * bench.h - the search-efficiency benchmark: strategies run repeatedly on
 * replayed spaces, compared with the exact expectation of uniform random
 * sampling without replacement.
 */
#ifndef TESS_SEARCH_BENCH_H
#define TESS_SEARCH_BENCH_H

#include <stdint.h>
#include "core/evaluator.h"
#include "core/strategy.h"
#include "search/replay.h"

#define TESS_BENCH_NBUDGETS 4
/* Budgets at which the mean optimum/best ratio is reported. */
extern const int tess_bench_budgets[TESS_BENCH_NBUDGETS];   /* 20, 50, 100, 200 */

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

/* Expected evaluations of uniform random sampling without replacement until
 * one of K good configs among N is drawn: (N + 1) / (K + 1). */
double tess_bench_random_expectation(size_t n, size_t k);
/* The exact median of the same count: the fewest evaluations t with
 * P(T <= t) >= 1/2, where P(T > t) = C(N-t, K) / C(N, K). It lies below the
 * expectation (the distribution has a long right tail), so a strategy that
 * merely matches random's median looks better than random against the mean.
 * INFINITY when K is 0. */
double tess_bench_random_median(size_t n, size_t k);

typedef struct tess_bench_options {
    int budget;                  /* evaluations per run */
    int repeats;                 /* runs per strategy and space, seeds seed, seed+1, ... */
    int batch;                   /* configs asked for per propose call */
    uint64_t seed;
} tess_bench_options;

tess_bench_options tess_bench_options_default(void);   /* 200, 20, 8, 1 */

/* One strategy on one space, over all repeats. */
typedef struct tess_bench_result {
    char space[128];
    char strategy[32];
    int runs;
    int budget;
    double evals_to_5pct_median; /* INFINITY when most runs never got there */
    double evals_to_1pct_median;
    int reached_5pct, reached_1pct;   /* runs that got there within the budget */
    double random_expected_5pct, random_expected_1pct;
    double random_median_5pct, random_median_1pct;
    double score_at[TESS_BENCH_NBUDGETS];   /* mean optimum/best; NAN past the budget */
    double *curve;               /* mean optimum/best after each evaluation, budget entries */
    double propose_ms_max;       /* slowest propose call seen */
    double seconds;              /* wall time of all runs */
} tess_bench_result;

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
void tess_bench_result_free(tess_bench_result *r);

/* Writes the convergence curves of the results for one space as an SVG plot. */
tess_status tess_bench_write_svg(const char *path, const char *title,
                                 const tess_bench_result *results, int n);

#endif
