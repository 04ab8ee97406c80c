/* test_search.c - every built-in strategy on synthetic spaces with a known
 * optimum: legal, never repeated proposals, exhaustion, reproducibility and
 * finding the optimum within a budget; the search loop's seeds, the
 * interleaving of warm-start configs, the stop condition and the guard
 * against rule-breaking strategies. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/error.h"
#include "core/space.h"
#include "core/strategy.h"
#include "core/tune.h"
#include "core/types.h"
#include "core/warm.h"
#include "search/search.h"

/* ---- a synthetic space: a smooth bowl in log space with interactions,
 * a region that fails at run time and a constraint ---------------------- */

static bool threads_at_most_1024(const double *v, void *user) {
    (void)user;
    return v[0] * v[1] <= 1024;
}

static tess_space *synthetic_space(void) {
    tess_space *s = tess_space_create();
    const double unroll[] = {1, 2, 3, 4, 6, 8};
    const char *const order[] = {"xyz", "xzy", "zyx"};
    tess_space_add_pow2(s, "block_x", 1, 512, 32);
    tess_space_add_pow2(s, "block_y", 1, 64, 4);
    tess_space_add(s, "unroll", 6, unroll, 0);
    tess_space_add_labels(s, "order", 3, order, 0);
    tess_space_add_pow2(s, "tile", 1, 16, 1);
    tess_space_add_constraint(s, threads_at_most_1024, NULL, "block_x*block_y <= 1024");
    return s;
}

/* Time of a config: minimum 1.0 at block_x=64, block_y=4, unroll=4,
 * order=zyx, tile=2; configs with tile 16 and unroll 8 fail. */
static double synthetic_time(const tess_space *s, const tess_config *c, tess_outcome *status) {
    double v[TESS_MAX_PARAMS];
    tess_space_values(s, c, v);
    double bx = log2(v[0]) - 6, by = log2(v[1]) - 2, u = log2(v[2]) - 2, t = log2(v[4]) - 1;
    double order_cost[] = {0.3, 0.15, 0};
    *status = TESS_RESULT_OK;
    if (v[4] == 16 && v[2] == 8) {
        *status = TESS_RESULT_RUNTIME_ERROR;
        return INFINITY;
    }
    return 1 + 0.08 * bx * bx + 0.1 * by * by + 0.05 * (bx + by) * (bx + by) + 0.06 * u * u +
           order_cost[(int)v[3]] + 0.07 * t * t + 0.02 * t * u;
}

typedef struct run_log {
    tess_config *proposed;
    int n;
    int evals_to_best;      /* evaluations until the optimum was seen; 0 if never */
    bool duplicate, illegal, oversized;
    int calls_after_exhaustion;
} run_log;

/* Drives one strategy for up to budget evaluations in batches of `batch`,
 * answering from synthetic_time. */
static tess_status run_strategy(const tess_strategy_ops *ops, const tess_space *s, uint64_t seed,
                                int budget, int batch, const tess_config *best, run_log *log) {
    memset(log, 0, sizeof *log);
    log->proposed = calloc((size_t)budget + 1, sizeof *log->proposed);
    tess_strategy_options o = {.seed = seed, .batch = batch, .budget = budget};
    void *state = NULL;
    tess_status st = ops->create(s, &o, &state);
    if (st) return st;
    tess_config_set *seen = tess_config_set_create();
    tess_config out[64];
    while (log->n < budget) {
        int want = budget - log->n < batch ? budget - log->n : batch, got = 0;
        st = ops->propose(state, out, want, &got);
        if (st) break;
        if (got > want) log->oversized = true;
        if (got == 0) break;
        for (int i = 0; i < got && i < want; i++) {
            if (!tess_config_set_add(seen, &out[i])) log->duplicate = true;
            if (!tess_space_valid(s, &out[i])) log->illegal = true;
            log->proposed[log->n++] = out[i];
            if (best && !log->evals_to_best && tess_config_equal(&out[i], best)) log->evals_to_best = log->n;
        }
        for (int i = 0; i < got && i < want; i++) {
            tess_outcome status;
            double t = synthetic_time(s, &out[i], &status);
            st = ops->observe(state, &out[i], status, t);
            if (st) break;
        }
        if (st) break;
    }
    ops->destroy(state);
    tess_config_set_destroy(seen);
    return st;
}

static void find_optimum(const tess_space *s, tess_config *best, size_t *nlegal) {
    tess_config *all = NULL;
    CHECK_OK(tess_space_enumerate(s, 100000, &all, nlegal));
    double best_t = INFINITY;
    for (size_t i = 0; i < *nlegal; i++) {
        tess_outcome status;
        double t = synthetic_time(s, &all[i], &status);
        if (t < best_t) {
            best_t = t;
            *best = all[i];
        }
    }
    free(all);
}

/* Runs every strategy until a small space is exhausted. */
static void test_exhaustion(void) {
    const char *const kinds[] = {"a"};
    size_t nlegal = 0;
    tess_space *s = tess_space_create();
    tess_space_add_pow2(s, "block_x", 1, 512, 32);
    tess_space_add_pow2(s, "block_y", 1, 64, 4);
    tess_space_add(s, "unroll", 6, (const double[]){1, 2, 3, 4, 6, 8}, 0);
    tess_space_add_labels(s, "order", 1, kinds, 0);
    tess_space_add_pow2(s, "tile", 2, 2, 2);
    tess_space_add_constraint(s, threads_at_most_1024, NULL, "block_x*block_y <= 1024");
    CHECK_OK(tess_space_count(s, 100000, &nlegal));
    for (int i = 0; i < tess_strategy_count(); i++) {
        const tess_strategy_ops *ops = tess_strategy_at(i);
        run_log log;
        CHECK_OK(run_strategy(ops, s, 3, (int)nlegal + 5, 16, NULL, &log));
        CHECK_MSG(log.n == (int)nlegal, "%s proposed %d of %zu legal configs", ops->name, log.n, nlegal);
        CHECK_MSG(!log.duplicate, "%s proposed a config twice", ops->name);
        CHECK_MSG(!log.illegal, "%s proposed an illegal config", ops->name);
        CHECK_MSG(!log.oversized, "%s proposed more than asked", ops->name);
        free(log.proposed);
    }
    tess_space_destroy(s);
}

static void test_exhaustive_order(void) {
    tess_space *s = synthetic_space();
    tess_config *all = NULL;
    size_t n = 0;
    CHECK_OK(tess_space_enumerate(s, 100000, &all, &n));
    run_log log;
    CHECK_OK(run_strategy(&tess_search_exhaustive, s, 0, (int)n, 7, NULL, &log));
    CHECK(log.n == (int)n);
    bool same = log.n == (int)n;
    for (int i = 0; same && i < log.n; i++) same = tess_config_equal(&log.proposed[i], &all[i]);
    CHECK_MSG(same, "exhaustive does not follow the enumeration order");
    free(log.proposed);
    free(all);
    tess_space_destroy(s);
}

static void test_reproducible(void) {
    tess_space *s = synthetic_space();
    for (int i = 0; i < tess_strategy_count(); i++) {
        const tess_strategy_ops *ops = tess_strategy_at(i);
        run_log a, b, c;
        CHECK_OK(run_strategy(ops, s, 11, 120, 8, NULL, &a));
        CHECK_OK(run_strategy(ops, s, 11, 120, 8, NULL, &b));
        CHECK_OK(run_strategy(ops, s, 12, 120, 8, NULL, &c));
        bool same = a.n == b.n, differs = a.n != c.n;
        for (int j = 0; same && j < a.n; j++) same = tess_config_equal(&a.proposed[j], &b.proposed[j]);
        for (int j = 0; !differs && j < a.n; j++) differs = !tess_config_equal(&a.proposed[j], &c.proposed[j]);
        CHECK_MSG(same, "%s: the same seed gave different runs", ops->name);
        if (strcmp(ops->name, "exhaustive") != 0)
            CHECK_MSG(differs, "%s: different seeds gave the same run", ops->name);
        CHECK_MSG(!a.duplicate && !a.illegal, "%s: duplicate or illegal proposal", ops->name);
        free(a.proposed);
        free(b.proposed);
        free(c.proposed);
    }
    tess_space_destroy(s);
}

/* ---- the search loop on the synthetic space --------------------------- */

static tess_status synthetic_evaluate(tess_evaluator *ev, const tess_config *configs, int n,
                                      tess_result_fn on_result, void *user) {
    for (int i = 0; i < n; i++) {
        tess_result r;
        tess_result_init(&r, &configs[i]);
        r.time_ms = synthetic_time(ev->space, &configs[i], &r.status);
        on_result(&r, user);
    }
    return TESS_OK;
}

static const tess_evaluator_ops synthetic_ops = {.evaluate = synthetic_evaluate};

typedef struct evaluated {
    tess_config c[64];
    int n;
    double stop_below;      /* stop once a time below this is seen; 0: never */
} evaluated;

static void keep_config(const tess_result *r, void *user) {
    evaluated *e = user;
    if (e->n < 64) e->c[e->n++] = r->config;
}

static bool fast_enough(const tess_result *r, void *user) {
    const evaluated *e = user;
    return r->status == TESS_RESULT_OK && r->time_ms < e->stop_below;
}

/* Seeds take one path for every strategy: the loop evaluates them first,
 * in order, and the strategy (told of them) never proposes them again; the
 * strict loop would fail if it did. */
static void test_seeds_first(void) {
    tess_space *s = synthetic_space();
    tess_evaluator ev = {.ops = &synthetic_ops, .space = s, .batch = 4};
    tess_config warm[2];
    CHECK_OK(tess_config_parse(s, "block_x=64,block_y=4,unroll=4,order=zyx,tile=2", &warm[0]));
    CHECK_OK(tess_config_parse(s, "block_x=32,block_y=4,unroll=4,order=zyx,tile=2", &warm[1]));
    for (int i = 0; i < tess_strategy_count(); i++) {
        const tess_strategy_ops *ops = tess_strategy_at(i);
        evaluated e = {.n = 0};
        tess_tune_loop_options lo = {.strategy = ops, .budget = 12, .seed = 1, .batch = 4, .seeds = warm,
                                     .nseeds = 2, .strict = true, .on_result = keep_config, .user = &e};
        tess_tune_outcome out;
        CHECK_MSG(tess_tune_loop(&ev, &lo, &out) == TESS_OK, "%s: %s", ops->name, tess_errmsg());
        CHECK_MSG(out.evaluations == 12 && e.n == 12, "%s: %d evaluations", ops->name, out.evaluations);
        CHECK_MSG(tess_config_equal(&e.c[0], &warm[0]) && tess_config_equal(&e.c[1], &warm[1]),
                  "%s does not start from the warm-start configs", ops->name);
        CHECK(out.found && out.best.time_ms == 1.0 && out.skipped == 0);
    }
    /* the caller's stop condition ends the loop after the batch in flight */
    evaluated e = {.stop_below = 1.5};
    tess_tune_loop_options lo = {.strategy = tess_strategy_find("random"), .budget = 100, .seed = 1, .batch = 4,
                                 .seeds = &warm[1], .nseeds = 1, .on_result = keep_config, .stop = fast_enough,
                                 .user = &e};
    tess_tune_outcome out;
    CHECK_OK(tess_tune_loop(&ev, &lo, &out));
    CHECK_MSG(out.evaluations == 1 && strstr(out.stop_reason, "stop condition"), "%d: %s", out.evaluations,
              out.stop_reason);
    tess_space_destroy(s);
}

/* Where the loop puts a warm start's configs among the strategy's own
 * proposals: one a batch, the k-th after first + 2^k - 1 of them. */
static void test_warm_plan(void) {
    bool w[4];
    CHECK(tess_warm_plan(0, 0, 3, 0, 4, w) == 1 && w[0] && !w[1] && !w[2] && !w[3]);
    CHECK(tess_warm_plan(3, 1, 3, 0, 4, w) == 1 && w[0] && !w[1]);   /* due after 1 */
    CHECK(tess_warm_plan(1, 2, 3, 0, 4, w) == 1 && !w[0] && !w[1] && w[2] && !w[3]);   /* due after 3 */
    CHECK(tess_warm_plan(9, 3, 3, 0, 4, w) == 0 && !w[0] && !w[3]);   /* none left */
    /* after a first batch of four of the strategy's own */
    CHECK(tess_warm_plan(0, 0, 3, 4, 4, w) == 0);
    CHECK(tess_warm_plan(2, 0, 3, 4, 4, w) == 1 && !w[0] && !w[1] && w[2] && !w[3]);
    CHECK(tess_warm_plan(4, 0, 3, 4, 4, w) == 1 && w[0]);
}

/* The first batch goes before the source's best unless the source measured
 * the default more than 10% slower than its best. */
static void test_warm_first(void) {
    tess_space *s = synthetic_space();
    tess_config dflt, other;
    tess_space_default(s, &dflt);
    CHECK_OK(tess_config_parse(s, "block_x=64,block_y=4,unroll=4,order=zyx,tile=2", &other));
    tess_prior priors[2] = {{.config = other, .rel_log_time = 0}, {.config = dflt, .rel_log_time = log(1.2)}};
    CHECK(tess_warm_first(NULL, priors, 2, 8) == 0);        /* no measured default */
    CHECK(tess_warm_first(&dflt, priors, 1, 8) == 8);       /* the source did not measure it */
    CHECK(tess_warm_first(&dflt, priors, 2, 8) == 0);       /* 1.2x its best there */
    priors[1].rel_log_time = log(1.05);
    CHECK(tess_warm_first(&dflt, priors, 2, 8) == 8);
    tess_space_destroy(s);
}

/* A strategy that proposes the configs of `listed` in order. */
static const tess_config *listed;
static int nlisted;
static tess_status listed_create(const tess_space *s, const tess_strategy_options *o, void **state) {
    (void)s, (void)o;
    *state = calloc(1, sizeof(int));
    return *state ? TESS_OK : TESS_ERR_NOMEM;
}
static tess_status listed_propose(void *state, tess_config *out, int max, int *n) {
    int *next = state;
    for (*n = 0; *n < max && *next < nlisted; (*n)++) out[*n] = listed[(*next)++];
    return TESS_OK;
}
static tess_status listed_observe(void *state, const tess_config *c, tess_outcome st, double t) {
    (void)state, (void)c, (void)st, (void)t;
    return TESS_OK;
}
static void listed_destroy(void *state) { free(state); }

/* A warm config that the strategy proposes in the same batch keeps its warm
 * slot: the source's best first, not the next warm config. */
static void test_warm_also_proposed(void) {
    tess_space *s = synthetic_space();
    tess_evaluator ev = {.ops = &synthetic_ops, .space = s, .batch = 2};
    tess_config warm[2], own[2];
    CHECK_OK(tess_config_parse(s, "block_x=64,block_y=4,unroll=4,order=zyx,tile=2", &warm[0]));
    CHECK_OK(tess_config_parse(s, "block_x=64,block_y=4,unroll=8,order=zyx,tile=16", &warm[1]));
    own[0] = warm[0];
    CHECK_OK(tess_config_parse(s, "block_x=32,block_y=4,unroll=4,order=zyx,tile=2", &own[1]));
    listed = own, nlisted = 2;
    const tess_strategy_ops echo = {"listed", "proposes a fixed list", listed_create, listed_propose,
                                    listed_observe, listed_destroy};
    evaluated e = {.n = 0};
    tess_tune_loop_options lo = {.strategy = &echo, .budget = 2, .seed = 1, .batch = 2, .warm = warm, .nwarm = 2,
                                 .strict = true, .on_result = keep_config, .user = &e};
    tess_tune_outcome out;
    CHECK_OK(tess_tune_loop(&ev, &lo, &out));
    CHECK_MSG(e.n == 2 && tess_config_equal(&e.c[0], &warm[0]) && tess_config_equal(&e.c[1], &own[1]),
              "%d evaluations, the first %s the source's best", e.n,
              e.n && tess_config_equal(&e.c[0], &warm[0]) ? "is" : "is not");
    tess_space_destroy(s);
}

/* The loop interleaves warm configs: after the strategy's first batch when
 * the default was measured, at once without one; a warm config slower than
 * the best so far (here one that fails) drops the rest. */
static void test_warm_interleaved(void) {
    tess_space *s = synthetic_space();
    tess_evaluator ev = {.ops = &synthetic_ops, .space = s, .batch = 4};
    tess_config dflt, fit[2], misfit[2];
    tess_space_default(s, &dflt);
    CHECK_OK(tess_config_parse(s, "block_x=64,block_y=4,unroll=4,order=zyx,tile=2", &fit[0]));   /* the optimum */
    CHECK_OK(tess_config_parse(s, "block_x=32,block_y=4,unroll=4,order=zyx,tile=2", &fit[1]));
    CHECK_OK(tess_config_parse(s, "block_x=64,block_y=4,unroll=8,order=zyx,tile=16", &misfit[0]));
    misfit[1] = fit[0];
    const tess_strategy_ops *random = tess_strategy_find("random");
    evaluated e = {.n = 0};
    tess_tune_loop_options lo = {.strategy = random, .budget = 12, .seed = 1, .batch = 4, .seeds = &dflt,
                                 .nseeds = 1, .warm = fit, .nwarm = 2, .strict = true,
                                 .on_result = keep_config, .user = &e};
    tess_tune_outcome out;
    CHECK_OK(tess_tune_loop(&ev, &lo, &out));
    /* the default, four of the strategy's, the optimum, three more, the second */
    CHECK_MSG(e.n == 12 && tess_config_equal(&e.c[0], &dflt), "%d evaluations", e.n);
    for (int i = 1; i < e.n; i++)
        CHECK_MSG(tess_config_equal(&e.c[i], &fit[0]) == (i == 5) && tess_config_equal(&e.c[i], &fit[1]) == (i == 9),
                  "evaluation %d", i + 1);
    /* without a measured default the source's best goes first, the next a batch later */
    e.n = 0;
    lo.nseeds = 0;
    CHECK_OK(tess_tune_loop(&ev, &lo, &out));
    CHECK(e.n == 12 && tess_config_equal(&e.c[0], &fit[0]) && tess_config_equal(&e.c[4], &fit[1]));
    /* a misfit first: the optimum behind it is never tried from the warm start */
    e.n = 0;
    lo.warm = misfit;
    CHECK_OK(tess_tune_loop(&ev, &lo, &out));
    CHECK(e.n == 12 && tess_config_equal(&e.c[0], &misfit[0]));
    for (int i = 1; i < e.n; i++) CHECK_MSG(!tess_config_equal(&e.c[i], &fit[0]), "evaluation %d", i + 1);
    tess_space_destroy(s);
}

/* Without a measured default the source's best goes first, so nothing
 * measured before it can show a misfit: beaten afterwards by more than
 * TESS_WARM_BEATEN, it drops the rest of the warm configs; a source's best
 * within that goes on to the next. */
static void test_warm_first_beaten(void) {
    tess_space *s = synthetic_space();
    tess_evaluator ev = {.ops = &synthetic_ops, .space = s, .batch = 2};
    tess_config warm[2], own[3];
    CHECK_OK(tess_config_parse(s, "block_x=64,block_y=4,unroll=4,order=xyz,tile=2", &warm[0]));   /* 1.3 */
    CHECK_OK(tess_config_parse(s, "block_x=64,block_y=4,unroll=4,order=zyx,tile=2", &warm[1]));   /* the optimum */
    CHECK_OK(tess_config_parse(s, "block_x=64,block_y=4,unroll=4,order=zyx,tile=1", &own[0]));    /* 1.07 */
    CHECK_OK(tess_config_parse(s, "block_x=32,block_y=4,unroll=4,order=zyx,tile=1", &own[1]));
    CHECK_OK(tess_config_parse(s, "block_x=16,block_y=4,unroll=4,order=zyx,tile=1", &own[2]));
    listed = own, nlisted = 3;
    const tess_strategy_ops echo = {"listed", "proposes a fixed list", listed_create, listed_propose,
                                    listed_observe, listed_destroy};
    evaluated e = {.n = 0};
    tess_tune_loop_options lo = {.strategy = &echo, .budget = 4, .seed = 1, .batch = 2, .warm = warm, .nwarm = 2,
                                 .strict = true, .on_result = keep_config, .user = &e};
    tess_tune_outcome out;
    CHECK_OK(tess_tune_loop(&ev, &lo, &out));
    CHECK(e.n == 4 && tess_config_equal(&e.c[0], &warm[0]) && tess_config_equal(&e.c[1], &own[0]));
    for (int i = 1; i < e.n; i++) CHECK_MSG(!tess_config_equal(&e.c[i], &warm[1]), "evaluation %d", i + 1);
    /* 1.15, beaten by 7%: the second warm config opens the next batch */
    CHECK_OK(tess_config_parse(s, "block_x=64,block_y=4,unroll=4,order=xzy,tile=2", &warm[0]));
    e.n = 0;
    CHECK_OK(tess_tune_loop(&ev, &lo, &out));
    CHECK(e.n == 4 && tess_config_equal(&e.c[0], &warm[0]) && tess_config_equal(&e.c[2], &warm[1]));
    tess_space_destroy(s);
}

/* A strategy that proposes the default every time: tuning skips and counts
 * the repeats, a benchmark's strict loop fails naming the strategy. */
static tess_status repeat_create(const tess_space *s, const tess_strategy_options *o, void **state) {
    (void)o;
    *state = (void *)s;
    return TESS_OK;
}
static tess_status repeat_propose(void *state, tess_config *out, int max, int *n) {
    for (int i = 0; i < max; i++) tess_space_default(state, &out[i]);
    *n = max;
    return TESS_OK;
}
static tess_status repeat_observe(void *state, const tess_config *c, tess_outcome st, double t) {
    (void)state, (void)c, (void)st, (void)t;
    return TESS_OK;
}
static void repeat_destroy(void *state) { (void)state; }

static void test_rule_breaker(void) {
    tess_space *s = synthetic_space();
    tess_evaluator ev = {.ops = &synthetic_ops, .space = s, .batch = 4};
    const tess_strategy_ops repeat = {"repeat", "proposes the default every time", repeat_create,
                                      repeat_propose, repeat_observe, repeat_destroy};
    tess_tune_loop_options lo = {.strategy = &repeat, .budget = 20, .seed = 1, .batch = 4};
    tess_tune_outcome out;
    CHECK_OK(tess_tune_loop(&ev, &lo, &out));
    /* the first batch: one evaluation, three repeats; then three batches of repeats */
    CHECK_MSG(out.evaluations == 1 && out.skipped == 3 + 3 * 4, "%d evaluations, %d skipped", out.evaluations,
              out.skipped);
    CHECK_MSG(strstr(out.stop_reason, "nothing new") != NULL, "%s", out.stop_reason);
    lo.strict = true;
    CHECK(tess_tune_loop(&ev, &lo, &out) == TESS_ERR_INTERNAL);
    CHECK_MSG(strstr(tess_errmsg(), "'repeat' proposed a config twice") != NULL, "%s", tess_errmsg());
    tess_space_destroy(s);
}

/* Steps between two configs of the synthetic space: numeric parameters by
 * value places, the categorical order by one when it differs. */
static int steps(const tess_config *a, const tess_config *b) {
    int d = 0;
    for (int p = 0; p < 5; p++) {
        int k = abs((int)a->v[p] - (int)b->v[p]);
        d += p == 3 ? k != 0 : k;
    }
    return d;
}

/* After the template's default is measured, the agent's first batch is its
 * one-step neighbours: block_x, block_y one place down or up, unroll and tile
 * one up, order to either other label (eight, all legal). */
static void test_agent_starts_near_default(void) {
    tess_space *s = synthetic_space();
    tess_config dflt;
    tess_space_default(s, &dflt);
    tess_strategy_options o = {.seed = 4, .batch = 8};
    void *state = NULL;
    CHECK_OK(tess_search_agent.create(s, &o, &state));
    tess_outcome status;
    CHECK_OK(tess_search_agent.observe(state, &dflt, TESS_RESULT_OK, synthetic_time(s, &dflt, &status)));
    tess_config out[8];
    int n = 0, near = 0;
    CHECK_OK(tess_search_agent.propose(state, out, 8, &n));
    CHECK(n == 8);
    for (int i = 0; i < n; i++) {
        int d = steps(&out[i], &dflt);
        CHECK_MSG(d == 1, "proposal %d is %d steps from the default", i, d);
        near += d == 1;
    }
    CHECK(near == 8);
    tess_search_agent.destroy(state);
    tess_space_destroy(s);
}

/* The learning strategies find the optimum of the synthetic space (one
 * config among some 5000) within a budget in at least 8 of 10 seeds; the
 * agent within a tighter one. */
static void test_finds_optimum(void) {
    tess_space *s = synthetic_space();
    tess_config best;
    size_t nlegal = 0;
    find_optimum(s, &best, &nlegal);
    CHECK(nlegal > 4000);
    for (int i = 0; i < tess_strategy_count(); i++) {
        const tess_strategy_ops *ops = tess_strategy_at(i);
        if (strcmp(ops->name, "random") == 0 || strcmp(ops->name, "exhaustive") == 0) continue;
        int budget = strcmp(ops->name, "agent") == 0 ? 100 : 250, found = 0;
        char evals[256] = "";
        for (int seed = 0; seed < 10; seed++) {
            run_log log;
            CHECK_OK(run_strategy(ops, s, (uint64_t)seed, budget, 8, &best, &log));
            found += log.evals_to_best > 0;
            snprintf(evals + strlen(evals), sizeof evals - strlen(evals), " %d", log.evals_to_best);
            free(log.proposed);
        }
        CHECK_MSG(found >= 8, "%s found the optimum in %d of 10 runs of %d evaluations (evaluations:%s)",
                  ops->name, found, budget, evals);
    }
    tess_space_destroy(s);
}

int main(void) {
    CHECK_OK(tess_search_register());
    CHECK(tess_strategy_find("exhaustive") && tess_strategy_find("random"));
    test_exhaustion();
    test_exhaustive_order();
    test_reproducible();
    test_seeds_first();
    test_warm_plan();
    test_warm_first();
    test_warm_also_proposed();
    test_warm_interleaved();
    test_warm_first_beaten();
    test_rule_breaker();
    test_agent_starts_near_default();
    test_finds_optimum();
    return check_finish("test_search");
}
