/* pool.c - the experience pool shared by the techniques of one search run. */
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/warm.h"
#include "search/pool.h"

/* After this many random draws in a row that were proposed already, the
 * unproposed points are enumerated (when there are at most REST_LIMIT). */
#define REPEATS_BEFORE_LISTING 32
#define REST_LIMIT 5000000
/* Spaces are listed whole (for ranking every point) up to these sizes:
 * the product of the value counts walked, and the legal points kept. */
#define LIST_PRODUCT 5e6
#define LIST_LIMIT 200000
/* Past this many repeats in a row a space too large to list counts as exhausted. */
#define REPEATS_GIVE_UP 200000
/* The cost model: boosted trees, and how much slower than the slowest a failure counts (log). */
#define MODEL_TREES 60
#define MODEL_DEPTH 4
#define MODEL_RATE 0.15
#define FAIL_MARGIN 0.5
/* Priors from similar tasks steer the search only once the target has
 * confirmed them, and are dropped for the rest of the run when it
 * contradicts them; until then the run is a cold one. Two checks:
 *  - the source's best config (the fastest prior; the warm start's first
 *    config): on the source it beat every config, so a target config that
 *    beats it by more than TESS_WARM_BEATEN, or its failing on the target,
 *    says the source's optimum is not the target's (a source whose best is
 *    within TESS_WARM_BEATEN of the target's optimum is never dropped by
 *    it); measured and unbeaten among PRIOR_TRUST_AFTER successes, it
 *    confirms them. Between two recordings of heat3d4 512^3 whose optimum
 *    moved, the prior-trained model's half of the first batch, proposed
 *    before anything was measured, cost 30.5 and 34.5 evaluations to 5%
 *    against 25.5 and 25 cold (medians of 160 runs).
 *  - from PRIOR_CHECK_AFTER successes on (the first few are the default and
 *    the warm start's configs, all of them near the source's best) the rank
 *    correlation of a model of the priors alone with the measured times:
 *    below PRIOR_MIN_AGREEMENT the source ranks the target's configs no
 *    better than chance and only steers the search away from what it
 *    measures; at least that, it confirms them. */
#define PRIOR_TRUST_AFTER 4
#define PRIOR_CHECK_AFTER 8
#define PRIOR_MIN_AGREEMENT 0.2

tess_status tess_pool_create(const tess_space *s, const tess_strategy_options *o, tess_pool **out) {
    *out = NULL;
    if (!s || tess_space_nparams(s) == 0) return tess_error(TESS_ERR_ARG, "search: empty space");
    tess_pool *pool = calloc(1, sizeof *pool);
    if (!pool) return tess_error(TESS_ERR_NOMEM, "search: no memory for the pool");
    pool->space = s;
    pool->nfeat = tess_space_nfeatures(s);
    pool->best = -1;
    pool->prior_agreement = NAN;
    pool->rng = gsl_rng_alloc(gsl_rng_mt19937);
    pool->proposed = tess_config_set_create();
    if (!pool->rng || !pool->proposed) {
        tess_pool_destroy(pool);
        return tess_error(TESS_ERR_NOMEM, "search: no memory for the pool");
    }
    gsl_rng_set(pool->rng, (unsigned long)(o ? o->seed : 0));
    pool->prior_best = -1;
    pool->prior_best_ms = NAN;
    if (o && o->priors && o->npriors > 0) {
        pool->priors = malloc((size_t)o->npriors * sizeof *pool->priors);
        if (!pool->priors) {
            tess_pool_destroy(pool);
            return tess_error(TESS_ERR_NOMEM, "search: no memory for priors");
        }
        for (int i = 0; i < o->npriors; i++)
            if (tess_space_valid(s, &o->priors[i].config)) pool->priors[pool->npriors++] = o->priors[i];
        for (int i = 0; i < pool->npriors; i++)
            if (pool->prior_best < 0 || pool->priors[i].rel_log_time < pool->priors[pool->prior_best].rel_log_time)
                pool->prior_best = i;
    }
    *out = pool;
    return TESS_OK;
}

void tess_pool_destroy(tess_pool *pool) {
    if (!pool) return;
    gsl_rng_free(pool->rng);
    tess_config_set_destroy(pool->proposed);
    free(pool->configs);
    free(pool->features);
    free(pool->time_ms);
    free(pool->status);
    free(pool->priors);
    free(pool->rest);
    free(pool->all);
    tess_gbt_destroy(pool->model);
    tess_gbt_destroy(pool->prior_model);
    free(pool);
}

bool tess_pool_is_proposed(const tess_pool *pool, const tess_config *c) {
    return tess_config_set_contains(pool->proposed, c);
}

bool tess_pool_claim(tess_pool *pool, const tess_config *c) {
    if (tess_config_set_contains(pool->proposed, c) || !tess_space_valid(pool->space, c)) return false;
    return tess_config_set_add(pool->proposed, c);
}

const tess_config *tess_pool_space_list(tess_pool *pool, size_t *n) {
    if (!pool->all_built) {
        pool->all_built = true;
        if (tess_space_cardinality(pool->space) <= LIST_PRODUCT &&
            tess_space_enumerate(pool->space, LIST_LIMIT, &pool->all, &pool->nall) != TESS_OK) {
            pool->all = NULL;
            pool->nall = 0;
        }
    }
    *n = pool->nall;
    return pool->all;
}

/* Lists the legal points not proposed yet, in random order. */
static bool build_rest(tess_pool *pool) {
    tess_config *all = NULL;
    size_t n = 0;
    pool->rest_built = true;
    const tess_config *listed = tess_pool_space_list(pool, &n);
    if (listed) {
        all = malloc((n ? n : 1) * sizeof *all);
        if (!all) return false;
        memcpy(all, listed, n * sizeof *all);
    } else if (tess_space_enumerate(pool->space, REST_LIMIT, &all, &n) != TESS_OK) {
        return false;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!tess_config_set_contains(pool->proposed, &all[i])) all[m++] = all[i];
    for (size_t i = m; i > 1; i--) {   /* Fisher-Yates */
        size_t j = gsl_rng_uniform_int(pool->rng, (unsigned long)i);
        tess_config t = all[i - 1];
        all[i - 1] = all[j];
        all[j] = t;
    }
    pool->rest = all;
    pool->nrest = m;
    return true;
}

bool tess_pool_random(tess_pool *pool, tess_config *out) {
    if (pool->exhausted) return false;
    if (!pool->rest_built) {
        /* Rejection: a uniform legal draw, redrawn while already proposed,
         * is uniform over the unproposed points. */
        for (long repeats = 0;; repeats++) {
            tess_config c;
            if (tess_space_sample(pool->space, pool->rng, &c) != TESS_OK) {
                pool->exhausted = true;
                return false;
            }
            if (tess_config_set_add(pool->proposed, &c)) {
                *out = c;
                return true;
            }
            if (repeats >= REPEATS_BEFORE_LISTING && build_rest(pool)) break;
            if (repeats >= REPEATS_GIVE_UP) {
                pool->exhausted = true;
                return false;
            }
        }
    }
    /* The shuffled rest: skip points that other techniques claimed since. */
    while (pool->next_rest < pool->nrest) {
        const tess_config *c = &pool->rest[pool->next_rest++];
        if (tess_config_set_add(pool->proposed, c)) {
            *out = *c;
            return true;
        }
    }
    pool->exhausted = true;
    return false;
}

/* Fits the model of the priors alone, once. */
static bool fit_prior_model(tess_pool *pool) {
    if (pool->prior_model) return true;
    int d = pool->nfeat, m = pool->npriors;
    double *x = malloc((size_t)m * (size_t)d * sizeof *x), *y = malloc((size_t)m * sizeof *y);
    pool->prior_model = x && y ? tess_gbt_create(d, MODEL_TREES, MODEL_DEPTH, MODEL_RATE) : NULL;
    for (int i = 0; pool->prior_model && i < m; i++) {
        tess_space_encode(pool->space, &pool->priors[i].config, x + (size_t)i * (size_t)d);
        y[i] = pool->priors[i].rel_log_time;
    }
    if (pool->prior_model && tess_gbt_fit(pool->prior_model, x, y, m) != TESS_OK) {
        tess_gbt_destroy(pool->prior_model);
        pool->prior_model = NULL;
    }
    free(x);
    free(y);
    return pool->prior_model != NULL;
}

/* Compares what the priors predict for the run's successes with what it
 * measured, and drops priors that disagree (see PRIOR_MIN_AGREEMENT). */
static void check_priors(tess_pool *pool) {
    if (pool->npriors == 0 || pool->priors_dropped || pool->nok >= pool->npriors || pool->nok < PRIOR_CHECK_AFTER ||
        !fit_prior_model(pool))
        return;
    double *pred = malloc((size_t)pool->nok * sizeof *pred), *measured = malloc((size_t)pool->nok * sizeof *measured);
    double *work = malloc(2 * (size_t)pool->nok * sizeof *work);
    int m = 0;
    for (int i = 0; pred && measured && work && i < pool->n; i++) {
        if (pool->status[i] != TESS_RESULT_OK) continue;
        pred[m] = tess_gbt_predict(pool->prior_model, tess_pool_features(pool, i));
        measured[m++] = log(pool->time_ms[i]);
    }
    if (m == pool->nok) {
        double rho = gsl_stats_spearman(pred, 1, measured, 1, (size_t)m, work);
        /* predictions all alike (NaN) rank nothing: no agreement either */
        pool->prior_agreement = isfinite(rho) ? rho : 0;
        pool->priors_dropped = pool->prior_agreement < PRIOR_MIN_AGREEMENT;
    }
    free(pred);
    free(measured);
    free(work);
}

/* Drops the priors when the target measures the source's best config
 * failing, or beaten by more than TESS_WARM_BEATEN. */
static void check_prior_best(tess_pool *pool, int i) {
    if (pool->priors_dropped || pool->prior_best < 0) return;
    if (isnan(pool->prior_best_ms) && tess_config_equal(&pool->configs[i], &pool->priors[pool->prior_best].config))
        pool->prior_best_ms = pool->time_ms[i];   /* INFINITY when it failed */
    if (!isnan(pool->prior_best_ms) && tess_pool_best_time(pool) * (1 + TESS_WARM_BEATEN) < pool->prior_best_ms)
        pool->priors_dropped = true;
}

int tess_pool_observe(tess_pool *pool, const tess_config *c, tess_outcome status, double time_ms) {
    if (pool->n == pool->cap) {
        int cap = pool->cap ? 2 * pool->cap : 256;
        tess_config *configs = realloc(pool->configs, (size_t)cap * sizeof *configs);
        if (configs) pool->configs = configs;
        double *features = realloc(pool->features, (size_t)cap * (size_t)pool->nfeat * sizeof *features);
        if (features) pool->features = features;
        double *times = realloc(pool->time_ms, (size_t)cap * sizeof *times);
        if (times) pool->time_ms = times;
        tess_outcome *status_ = realloc(pool->status, (size_t)cap * sizeof *status_);
        if (status_) pool->status = status_;
        if (!configs || !features || !times || !status_) return -1;
        pool->cap = cap;
    }
    int i = pool->n++;
    pool->configs[i] = *c;
    tess_space_encode(pool->space, c, pool->features + (size_t)i * (size_t)pool->nfeat);
    bool ok = status == TESS_RESULT_OK && isfinite(time_ms);
    pool->time_ms[i] = ok ? time_ms : INFINITY;
    pool->status[i] = ok ? TESS_RESULT_OK : (status == TESS_RESULT_OK ? TESS_RESULT_RUNTIME_ERROR : status);
    if (ok) {
        pool->nok++;
        if (pool->best < 0 || time_ms < pool->time_ms[pool->best]) pool->best = i;
    }
    /* An observed config counts as proposed, whoever proposed it. */
    tess_config_set_add(pool->proposed, c);
    check_prior_best(pool, i);
    if (ok) check_priors(pool);
    return i;
}

const double *tess_pool_features(const tess_pool *pool, int i) {
    return pool->features + (size_t)i * (size_t)pool->nfeat;
}

double tess_pool_best_time(const tess_pool *pool) {
    return pool->best >= 0 ? pool->time_ms[pool->best] : INFINITY;
}

int tess_pool_top(const tess_pool *pool, int k, int *idx) {
    int m = 0;
    for (int i = 0; i < pool->n; i++) {
        if (pool->status[i] != TESS_RESULT_OK) continue;
        /* insertion into the sorted top list */
        int pos = m < k ? m : k;
        while (pos > 0 && pool->time_ms[idx[pos - 1]] > pool->time_ms[i]) {
            if (pos < k) idx[pos] = idx[pos - 1];
            pos--;
        }
        if (pos < k) {
            idx[pos] = i;
            if (m < k) m++;
        }
    }
    return m;
}

bool tess_pool_log_times(const tess_pool *pool, double fail_margin, double *y) {
    double worst = -INFINITY;
    for (int i = 0; i < pool->n; i++)
        if (pool->status[i] == TESS_RESULT_OK) worst = fmax(worst, log(pool->time_ms[i]));
    if (!isfinite(worst)) return false;
    for (int i = 0; i < pool->n; i++)
        y[i] = pool->status[i] == TESS_RESULT_OK ? log(pool->time_ms[i]) : worst + fail_margin;
    return true;
}

int tess_pool_candidates(tess_pool *pool, int nrandom, int ntop, tess_config *out, int max) {
    tess_config_set *seen = tess_config_set_create();
    if (!seen) return 0;
    int n = 0;
    int top[64];
    ntop = tess_pool_top(pool, ntop < 64 ? ntop : 64, top);
    int nparams = tess_space_nparams(pool->space), room = 0;
    for (int p = 0; p < nparams; p++) room += tess_space_param_size(pool->space, p);
    tess_config *nb = malloc((size_t)(room ? room : 1) * sizeof *nb);
    for (int t = 0; nb && t < ntop && n < max; t++) {
        int k = 0;
        tess_space_neighbors(pool->space, &pool->configs[top[t]], TESS_NEIGH_HAMMING, nb, room, &k);
        for (int j = 0; j < k && n < max; j++)
            if (!tess_pool_is_proposed(pool, &nb[j]) && tess_config_set_add(seen, &nb[j])) out[n++] = nb[j];
    }
    free(nb);
    /* the whole rest of a listed space when it fits */
    size_t nall = 0;
    const tess_config *all = tess_pool_space_list(pool, &nall);
    int before = n;
    /* at least nall - |proposed| points remain: skip the scan when they cannot fit */
    int space_room = max - n < nrandom ? max - n : nrandom;
    bool fits = all && nall <= tess_config_set_size(pool->proposed) + (size_t)space_room;
    for (size_t i = 0; fits && i < nall; i++) {
        if (tess_pool_is_proposed(pool, &all[i]) || tess_config_set_contains(seen, &all[i])) continue;
        if (n - before == space_room) fits = false;
        else out[n++] = all[i];
    }
    if (all && fits) {
        tess_config_set_destroy(seen);
        return n;
    }
    n = before;
    /* random draws; a space nearly used up yields fewer */
    for (int got = 0, draws = 0; got < nrandom && n < max && draws < 5 * nrandom; draws++) {
        tess_config c;
        if (tess_space_sample(pool->space, pool->rng, &c) != TESS_OK) break;
        if (!tess_pool_is_proposed(pool, &c) && tess_config_set_add(seen, &c)) {
            out[n++] = c;
            got++;
        }
    }
    tess_config_set_destroy(seen);
    return n;
}

bool tess_pool_has_priors(const tess_pool *pool) {
    bool confirmed = (isfinite(pool->prior_best_ms) && pool->nok >= PRIOR_TRUST_AFTER) ||
                     pool->prior_agreement >= PRIOR_MIN_AGREEMENT;
    return pool->npriors > 0 && !pool->priors_dropped && confirmed;
}

/* Whether the cost model's training data includes the priors: while they
 * agree with the run's measurements, until it has as many successes. */
static bool use_priors(const tess_pool *pool) { return tess_pool_has_priors(pool) && pool->nok < pool->npriors; }

int tess_pool_training(tess_pool *pool, double **xo, double **yo) {
    bool priors = use_priors(pool);
    int rows = (pool->nok > 0 ? pool->n : 0) + (priors ? pool->npriors : 0);
    double *x = malloc((size_t)(rows ? rows : 1) * (size_t)pool->nfeat * sizeof *x);
    double *y = malloc((size_t)(rows ? rows : 1) * sizeof *y);
    bool ok = x && y;
    int m = 0;
    if (ok && pool->nok > 0) {
        /* own observations, as log time relative to the best: comparable with the priors */
        ok = tess_pool_log_times(pool, FAIL_MARGIN, y);
        double base = log(tess_pool_best_time(pool));
        for (int i = 0; i < pool->n; i++) y[i] -= base;
        memcpy(x, pool->features, (size_t)pool->n * (size_t)pool->nfeat * sizeof *x);
        m = pool->n;
    }
    for (int i = 0; ok && priors && i < pool->npriors; i++, m++) {
        tess_space_encode(pool->space, &pool->priors[i].config, x + (size_t)m * (size_t)pool->nfeat);
        y[m] = pool->priors[i].rel_log_time;
    }
    if (!ok) {
        free(x);
        free(y);
        return -1;
    }
    *xo = x;
    *yo = y;
    return m;
}

const tess_gbt *tess_pool_model(tess_pool *pool, int min_obs) {
    bool priors = use_priors(pool);
    if (!priors && (pool->nok < min_obs || pool->nok == 0)) return NULL;
    if (pool->model && pool->model_n == pool->n && pool->model_priors == priors) return pool->model;
    if (!pool->model) pool->model = tess_gbt_create(pool->nfeat, MODEL_TREES, MODEL_DEPTH, MODEL_RATE);
    double *x = NULL, *y = NULL;
    int m = pool->model ? tess_pool_training(pool, &x, &y) : -1;
    bool ok = m > 0 && tess_gbt_fit(pool->model, x, y, m) == TESS_OK;
    free(x);
    free(y);
    if (!ok) return NULL;
    pool->model_n = pool->n;
    pool->model_priors = priors;
    return pool->model;
}

double tess_pool_predict(const tess_pool *pool, const tess_config *c) {
    double f[TESS_MAX_PARAMS];
    tess_space_encode(pool->space, c, f);
    return tess_gbt_predict(pool->model, f);
}
