/* transfer_bench.c - cold against warm searches on recorded spaces. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "search/bench.h"
#include "search/replay.h"
#include "transfer_bench.h"
#include "warmstart.h"

typedef struct ranked {
    tess_config c;
    double ms;
} ranked;

static int by_time(const void *a, const void *b) {
    double x = ((const ranked *)a)->ms, y = ((const ranked *)b)->ms;
    return (x > y) - (x < y);
}

#define MAX_PRIORS 512

/* The source's `top` fastest configs, mapped into the target's space, and
 * its fastest MAX_PRIORS measurements as cost-model priors. */
static tess_status warm_configs(const tess_evaluator *src, const tess_space *dst, int top,
                                tess_config *out, int *n, tess_prior *priors, int *npriors) {
    size_t total = tess_replay_size(src);
    ranked *r = malloc((total ? total : 1) * sizeof *r);
    if (!r) return tess_error(TESS_ERR_NOMEM, "transfer benchmark");
    size_t nok = 0;
    for (size_t i = 0; i < total; i++) {
        tess_outcome st;
        double ms;
        tess_replay_point(src, i, &r[nok].c, &st, &ms);
        if (st == TESS_RESULT_OK && isfinite(ms)) r[nok++].ms = ms;
    }
    qsort(r, nok, sizeof *r, by_time);
    tess_config_set *seen = tess_config_set_create();
    *n = 0;
    *npriors = 0;
    for (size_t i = 0; i < nok && *npriors < MAX_PRIORS; i++) {
        char text[1024];
        tess_config c;
        if (tess_config_format(src->space, &r[i].c, text, sizeof text) != TESS_OK ||
            tess_config_map(dst, text, &c) != TESS_OK || !tess_config_set_add(seen, &c))
            continue;
        if (*n < top) out[(*n)++] = c;
        priors[(*npriors)++] = (tess_prior){c, log(r[i].ms / r[0].ms), 1.0};
    }
    tess_config_set_destroy(seen);
    free(r);
    return TESS_OK;
}

/* Evaluations until a config within 5% and within 1% of the optimum; INFINITY if never. */
static tess_status one_run(const tess_strategy_ops *ops, const tess_bench_space *bs, uint64_t seed,
                           int budget, const tess_config *warm, int nwarm, const tess_prior *priors,
                           int npriors, double evals[2]) {
    tess_strategy_options o = {.seed = seed, .batch = 8, .budget = budget, .warm = warm, .nwarm = nwarm,
                               .priors = priors, .npriors = npriors};
    void *state;
    tess_status st = ops->create(bs->ev->space, &o, &state);
    if (st) return st;
    evals[0] = evals[1] = INFINITY;
    int done = 0;
    tess_config batch[8];
    while (!st && done < budget && isinf(evals[1])) {
        int n = 0;
        st = ops->propose(state, batch, budget - done < 8 ? budget - done : 8, &n);
        if (st || n == 0) break;
        for (int i = 0; i < n && !st; i++) {
            tess_outcome status;
            double ms;
            if (!tess_replay_lookup(bs->ev, &batch[i], &status, &ms)) status = TESS_RESULT_INVALID, ms = INFINITY;
            done++;
            if (status == TESS_RESULT_OK && ms <= 1.05 * bs->best_ms && isinf(evals[0])) evals[0] = done;
            if (status == TESS_RESULT_OK && ms <= 1.01 * bs->best_ms && isinf(evals[1])) evals[1] = done;
            st = ops->observe(state, &batch[i], status, status == TESS_RESULT_OK ? ms : INFINITY);
        }
    }
    ops->destroy(state);
    return st;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double ratio_of(const tess_bench_space *bs, const tess_config *c) {
    tess_outcome status;
    double ms;
    if (!tess_replay_lookup(bs->ev, c, &status, &ms) || status != TESS_RESULT_OK) return 0;
    return bs->best_ms / ms;
}

tess_status tess_transfer_bench(const char *source_path, const char *target_path, const char *strategy,
                                int repeats, int budget, int top, tess_transfer_bench_result *out) {
    memset(out, 0, sizeof *out);
    const tess_strategy_ops *ops = tess_strategy_find(strategy);
    if (!ops) return tess_error(TESS_ERR_ARG, "unknown strategy '%s'", strategy);
    if (repeats < 1 || budget < 1 || top < 1) return tess_error(TESS_ERR_ARG, "repeats, budget and top must be positive");
    tess_bench_space src = {0}, dst = {0};
    tess_status st = tess_bench_space_open(source_path, &src);
    if (!st) st = tess_bench_space_open(target_path, &dst);
    tess_config *warm = malloc((size_t)top * sizeof *warm);
    tess_prior *priors = malloc(MAX_PRIORS * sizeof *priors);
    int npriors = 0;
    /* evaluations to within 5% and 1% per run: cold, warm, best only */
    double *cold = malloc((size_t)repeats * 6 * sizeof *cold);
    double *hot = cold ? cold + 2 * repeats : NULL, *one = cold ? cold + 4 * repeats : NULL;
    if (!st && (!warm || !cold || !priors)) st = tess_error(TESS_ERR_NOMEM, "transfer benchmark");
    if (!st) st = warm_configs(src.ev, dst.ev->space, top, warm, &out->nwarm, priors, &npriors);
    for (int r = 0; r < repeats && !st; r++) {
        double c[2] = {INFINITY, INFINITY}, h[2] = {INFINITY, INFINITY}, b[2] = {INFINITY, INFINITY};
        st = one_run(ops, &dst, (uint64_t)r + 1, budget, NULL, 0, NULL, 0, c);
        if (!st) st = one_run(ops, &dst, (uint64_t)r + 1, budget, warm, out->nwarm, priors, npriors, h);
        if (!st) st = one_run(ops, &dst, (uint64_t)r + 1, budget, warm, out->nwarm ? 1 : 0, NULL, 0, b);
        cold[r] = c[0], cold[repeats + r] = c[1], hot[r] = h[0], hot[repeats + r] = h[1];
        one[r] = b[0], one[repeats + r] = b[1];
    }
    out->npriors = npriors;
    if (!st) {
        snprintf(out->source, sizeof out->source, "%s", src.name);
        snprintf(out->target, sizeof out->target, "%s", dst.name);
        out->runs = repeats;
        out->budget = budget;
        out->cold_median = median(cold, repeats);
        out->warm_median = median(hot, repeats);
        out->cold_median_1pct = median(cold + repeats, repeats);
        out->warm_median_1pct = median(hot + repeats, repeats);
        out->best_only_median = median(one, repeats);
        out->best_only_median_1pct = median(one + repeats, repeats);
        out->target_optimum_ms = dst.best_ms;
        out->random_expected = tess_bench_random_expectation(dst.n, dst.within_5pct);
        out->best_only_ratio = out->nwarm ? ratio_of(&dst, &warm[0]) : 0;
    }
    free(warm), free(cold), free(priors);
    if (src.ev) tess_bench_space_close(&src);
    if (dst.ev) tess_bench_space_close(&dst);
    return st;
}
