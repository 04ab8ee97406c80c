/* test_pool_priors.c - the experience pool counts cost-model priors from a
 * similar task once the run's own measurements confirm them (the source's
 * best measured and not beaten by far, or a model of the priors ranking
 * what the run measures), and drops them when the measurements contradict
 * them (a source whose fastest configs are the target's slowest, a source
 * whose best the target beats by more than TESS_WARM_BEATEN or fails). */
#include <math.h>
#include <stdlib.h>
#include "check.h"
#include "core/space.h"
#include "search/pool.h"

/* One parameter of 16 values; the target's time grows with the value. */
static double target_time(int v) { return 1.0 + 0.25 * v; }

/* A pool with a prior for every value, fastest where `slope` says (+1: as
 * the target, -1: reversed), after observing values 0, 2, 4, ... n of them. */
static tess_pool *pool_after(const tess_space *s, double slope, int n) {
    tess_prior priors[16];
    for (int v = 0; v < 16; v++) {
        priors[v].config = (tess_config){{(uint16_t)v}};
        priors[v].rel_log_time = log(slope > 0 ? target_time(v) : target_time(15 - v)) - log(target_time(slope > 0 ? 0 : 15));
        priors[v].weight = 1;
    }
    tess_strategy_options o = {.seed = 3, .priors = priors, .npriors = 16};
    tess_pool *pool = NULL;
    CHECK_OK(tess_pool_create(s, &o, &pool));
    for (int i = 0; pool && i < n; i++) {
        tess_config c = {{(uint16_t)((2 * i) % 16 + (2 * i) / 16)}};
        CHECK(tess_pool_observe(pool, &c, TESS_RESULT_OK, target_time(c.v[0])) == i);
    }
    return pool;
}

static void test_priors_checked(void) {
    tess_space *s = tess_space_create();
    double values[16];
    for (int v = 0; v < 16; v++) values[v] = v;
    tess_space_add(s, "p", 16, values, 0);

    /* before anything confirms them (the source's best, value 15, not
     * measured; too few successes for the rank check) priors do not count */
    tess_pool *early = pool_after(s, -1, 7);
    CHECK(early && !tess_pool_has_priors(early) && !early->priors_dropped && isnan(early->prior_agreement));
    double *x = NULL, *y = NULL;
    CHECK(early && tess_pool_training(early, &x, &y) == 7);
    free(x);
    free(y);
    tess_pool_destroy(early);

    /* reversed priors: rank correlation -1, dropped, the model trains on own data only */
    tess_pool *wrong = pool_after(s, -1, 8);
    CHECK(wrong && !tess_pool_has_priors(wrong));
    CHECK(wrong && wrong->prior_agreement < -0.9);
    x = y = NULL;
    CHECK(wrong && tess_pool_training(wrong, &x, &y) == 8);
    free(x);
    free(y);
    /* and stay dropped as the run goes on */
    tess_config c = {{15}};
    if (wrong) tess_pool_observe(wrong, &c, TESS_RESULT_OK, target_time(15));
    CHECK(wrong && !tess_pool_has_priors(wrong));
    tess_pool_destroy(wrong);

    /* agreeing priors: kept, 8 own rows and 16 priors */
    tess_pool *right = pool_after(s, +1, 8);
    CHECK(right && tess_pool_has_priors(right) && right->prior_agreement > 0.9);
    x = y = NULL;
    CHECK(right && tess_pool_training(right, &x, &y) == 24);
    free(x);
    free(y);
    tess_pool_destroy(right);

    /* agreeing priors confirmed early: the source's best (value 0) measured
     * first and unbeaten among 4 successes */
    tess_pool *soon = pool_after(s, +1, 3);
    CHECK(soon && !tess_pool_has_priors(soon));
    tess_pool_destroy(soon);
    soon = pool_after(s, +1, 4);
    CHECK(soon && tess_pool_has_priors(soon) && isnan(soon->prior_agreement));
    tess_pool_destroy(soon);
    tess_space_destroy(s);
}

/* The source's best against the target's measurements, on a space where
 * the priors say value 0 is fastest and the target's times are given. */
static tess_pool *measured(const tess_space *s, const double *ms, const tess_outcome *st, int n) {
    tess_prior priors[16];
    for (int v = 0; v < 16; v++)
        priors[v] = (tess_prior){.config = {{(uint16_t)v}}, .rel_log_time = log(target_time(v) / target_time(0)), .weight = 1};
    tess_strategy_options o = {.seed = 3, .priors = priors, .npriors = 16};
    tess_pool *pool = NULL;
    CHECK_OK(tess_pool_create(s, &o, &pool));
    for (int i = 0; pool && i < n; i++) {
        tess_config c = {{(uint16_t)i}};
        CHECK(tess_pool_observe(pool, &c, st ? st[i] : TESS_RESULT_OK, ms[i]) == i);
    }
    return pool;
}

static void test_source_best_checked(void) {
    tess_space *s = tess_space_create();
    double values[16];
    for (int v = 0; v < 16; v++) values[v] = v;
    tess_space_add(s, "p", 16, values, 0);
    /* value 0 (the source's best) at 1.0 ms, one config 5% faster: within
     * TESS_WARM_BEATEN, confirmed */
    const double close[4] = {1.0, 1.3, 0.95, 1.2};
    tess_pool *pool = measured(s, close, NULL, 4);
    CHECK(pool && tess_pool_has_priors(pool));
    tess_pool_destroy(pool);
    /* one 20% faster: the source's optimum is not the target's, dropped at
     * once and for good, the model training on the run's own rows */
    const double beaten[5] = {1.0, 1.3, 0.8, 1.2, 1.0};
    pool = measured(s, beaten, NULL, 3);
    CHECK(pool && pool->priors_dropped && !tess_pool_has_priors(pool));
    tess_pool_destroy(pool);
    pool = measured(s, beaten, NULL, 5);
    CHECK(pool && !tess_pool_has_priors(pool));
    double *x = NULL, *y = NULL;
    CHECK(pool && tess_pool_training(pool, &x, &y) == 5);
    free(x);
    free(y);
    tess_pool_destroy(pool);
    /* the source's best failing on the target: dropped once anything succeeds */
    const double failed[3] = {INFINITY, 1.3, 1.2};
    const tess_outcome st[3] = {TESS_RESULT_RUNTIME_ERROR, TESS_RESULT_OK, TESS_RESULT_OK};
    pool = measured(s, failed, st, 1);
    CHECK(pool && !pool->priors_dropped);
    tess_pool_destroy(pool);
    pool = measured(s, failed, st, 3);
    CHECK(pool && pool->priors_dropped);
    tess_pool_destroy(pool);
    tess_space_destroy(s);
}

int main(void) {
    test_priors_checked();
    test_source_best_checked();
    return check_finish("test_pool_priors");
}
