/* test_pool_priors.c - the experience pool keeps cost-model priors from a
 * similar task while they rank the run's own measurements as they measure,
 * and drops them when they disagree (a source whose fastest configs are the
 * target's slowest). */
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

    /* before enough measurements, priors count whatever they say */
    tess_pool *early = pool_after(s, -1, 7);
    CHECK(early && tess_pool_has_priors(early) && isnan(early->prior_agreement));
    tess_pool_destroy(early);

    /* reversed priors: rank correlation -1, dropped, the model trains on own data only */
    tess_pool *wrong = pool_after(s, -1, 8);
    CHECK(wrong && !tess_pool_has_priors(wrong));
    CHECK(wrong && wrong->prior_agreement < -0.9);
    double *x = NULL, *y = NULL;
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
    tess_space_destroy(s);
}

int main(void) {
    test_priors_checked();
    return check_finish("test_pool_priors");
}
