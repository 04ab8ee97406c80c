/* transfer_bench.c - cold against warm searches on recorded spaces. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/tune.h"
#include "transfer_bench.h"
#include "warmstart.h"

typedef struct ranked {
    size_t point;
    double ms;
} ranked;

/* Fastest first; equal times in the recording's order. */
static int by_time(const void *a, const void *b) {
    const ranked *x = a, *y = b;
    if (x->ms != y->ms) return (x->ms > y->ms) - (x->ms < y->ms);
    return (x->point > y->point) - (x->point < y->point);
}

tess_status tess_transfer_bench_warm(const tess_bench_space *source, const tess_space *target, int top,
                                     tess_warm_start *out) {
    memset(out, 0, sizeof *out);
    size_t total = tess_replay_size(source->replay);
    ranked *r = malloc((total ? total : 1) * sizeof *r);
    int want = tess_warm_rows_wanted(top);
    tess_record_row *rows = calloc((size_t)want + 1, sizeof *rows);   /* and the default's */
    if (!r || !rows) {
        free(r), free(rows);
        return tess_error(TESS_ERR_NOMEM, "transfer benchmark");
    }
    size_t nok = 0;
    for (size_t i = 0; i < total; i++) {
        tess_outcome st;
        double ms;
        tess_replay_point(source->replay, i, NULL, &st, &ms);
        if (st == TESS_RESULT_OK && isfinite(ms)) r[nok++] = (ranked){i, ms};
    }
    qsort(r, nok, sizeof *r, by_time);
    tess_warm_input in = {.rows = rows, .source = {.similarity = 1.0, .best_ms = nok ? r[0].ms : INFINITY}};
    snprintf(in.source.task_key, sizeof in.source.task_key, "%s", source->name);
    tess_status st = TESS_OK;
    /* the fastest rows, and the first (fastest) that measures the target's default */
    tess_record_row *row = malloc(sizeof *row);
    tess_config dflt;
    tess_space_default(target, &dflt);
    if (!row) st = tess_error(TESS_ERR_NOMEM, "transfer benchmark");
    for (size_t i = 0; i < nok && (in.n < want || !in.dflt) && !st; i++) {
        tess_config c;
        tess_replay_point(source->replay, r[i].point, &c, NULL, NULL);
        st = tess_config_format(source->space, &c, row->config, sizeof row->config);
        row->status = TESS_RESULT_OK;
        row->time_ms = r[i].ms;
        if (!in.dflt && tess_warm_row_measures(target, row, &dflt)) {
            rows[want] = *row;
            in.dflt = &rows[want];
        }
        if (in.n < want) rows[in.n++] = *row;
    }
    if (!st) st = tess_warm_start_from(target, &in, nok ? 1 : 0, top, out);
    free(r);
    free(rows);
    free(row);
    return st;
}

typedef struct run_state {
    const tess_bench_space *target;
    int done;
    double *evals;
    tess_result_fn on_result;
    void *user;
} run_state;

static void count_result(const tess_result *r, void *user) {
    run_state *rs = user;
    rs->done++;
    bool ok = r->status == TESS_RESULT_OK;
    if (ok && r->time_ms <= 1.05 * rs->target->best_ms && isinf(rs->evals[0])) rs->evals[0] = rs->done;
    if (ok && r->time_ms <= 1.01 * rs->target->best_ms && isinf(rs->evals[1])) rs->evals[1] = rs->done;
    if (rs->on_result) rs->on_result(r, rs->user);
}

static bool within_1pct(const tess_result *r, void *user) {
    (void)r;
    return isfinite(((const run_state *)user)->evals[1]);
}

tess_status tess_transfer_bench_run(const tess_strategy_ops *ops, const tess_bench_space *target,
                                    const tess_warm_start *warm, tess_transfer_mode mode, uint64_t seed,
                                    int budget, tess_result_fn on_result, void *user, double evals[2]) {
    evals[0] = evals[1] = INFINITY;
    tess_warm_start use = {0};
    if (warm && mode != TESS_TRANSFER_COLD) use = *warm;
    if (mode == TESS_TRANSFER_BEST_ONLY) {
        use.n = use.n ? 1 : 0;
        use.npriors = 0;
    }
    tess_config dflt;
    bool has_default = tess_replay_default(target->replay, &dflt);
    run_state rs = {.target = target, .evals = evals, .on_result = on_result, .user = user};
    tess_tune_loop_options lo = {.strategy = ops, .budget = budget, .seed = seed, .batch = 8,
                                 .seeds = &dflt, .nseeds = has_default, .warm = use.configs, .nwarm = use.n,
                                 .priors = use.priors, .npriors = use.npriors, .strict = true,
                                 .on_result = count_result, .stop = within_1pct, .user = &rs};
    tess_tune_outcome out;
    return tess_tune_loop(target->ev, &lo, &out);
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
    if (!tess_replay_lookup(bs->replay, c, &status, &ms) || status != TESS_RESULT_OK) return 0;
    return bs->best_ms / ms;
}

tess_status tess_transfer_bench(const char *source_path, const char *target_path, const char *strategy,
                                int repeats, int budget, int top, tess_transfer_bench_result *out) {
    memset(out, 0, sizeof *out);
    const tess_strategy_ops *ops = tess_strategy_find(strategy);
    if (!ops) return tess_error(TESS_ERR_ARG, "unknown strategy '%s'", strategy);
    if (repeats < 1 || budget < 1 || top < 1)
        return tess_error(TESS_ERR_ARG, "repeats, budget and top must be positive");
    tess_bench_space src = {0}, dst = {0};
    tess_warm_start warm = {0};
    tess_status st = tess_bench_space_open(source_path, &src);
    if (!st) st = tess_bench_space_open(target_path, &dst);
    /* evaluations to within 5% and 1% per run: cold, warm, best only */
    double *cold = malloc((size_t)repeats * 6 * sizeof *cold);
    double *hot = cold ? cold + 2 * repeats : NULL, *one = cold ? cold + 4 * repeats : NULL;
    if (!st && !cold) st = tess_error(TESS_ERR_NOMEM, "transfer benchmark");
    if (!st) st = tess_transfer_bench_warm(&src, dst.space, top, &warm);
    for (int r = 0; r < repeats && !st; r++) {
        double c[2], h[2], b[2];
        uint64_t seed = (uint64_t)r + 1;
        st = tess_transfer_bench_run(ops, &dst, &warm, TESS_TRANSFER_COLD, seed, budget, NULL, NULL, c);
        if (!st) st = tess_transfer_bench_run(ops, &dst, &warm, TESS_TRANSFER_WARM, seed, budget, NULL, NULL, h);
        if (!st)
            st = tess_transfer_bench_run(ops, &dst, &warm, TESS_TRANSFER_BEST_ONLY, seed, budget, NULL, NULL, b);
        cold[r] = c[0], cold[repeats + r] = c[1], hot[r] = h[0], hot[repeats + r] = h[1];
        one[r] = b[0], one[repeats + r] = b[1];
    }
    if (!st) {
        snprintf(out->source, sizeof out->source, "%s", src.name);
        snprintf(out->target, sizeof out->target, "%s", dst.name);
        out->runs = repeats;
        out->budget = budget;
        out->nwarm = warm.n;
        out->npriors = warm.npriors;
        out->cold_median = median(cold, repeats);
        out->warm_median = median(hot, repeats);
        out->cold_median_1pct = median(cold + repeats, repeats);
        out->warm_median_1pct = median(hot + repeats, repeats);
        out->best_only_median = median(one, repeats);
        out->best_only_median_1pct = median(one + repeats, repeats);
        out->target_optimum_ms = dst.best_ms;
        out->random_expected = tess_bench_random_expectation(dst.n, dst.within_5pct);
        out->best_only_ratio = warm.n ? ratio_of(&dst, &warm.configs[0]) : 0;
    }
    free(cold);
    tess_warm_start_free(&warm);
    tess_bench_space_close(&src);
    tess_bench_space_close(&dst);
    return st;
}
