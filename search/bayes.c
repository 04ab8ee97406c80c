/* bayes.c - Bayesian optimization: a Gaussian process over encoded configs
 * (log time), expected improvement maximized over random and neighbouring
 * candidates, batches spread out by penalizing candidates correlated with
 * those already chosen. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "search/gp.h"
#include "search/search.h"
#include "search/technique.h"

#define INITIAL_RANDOM 8      /* observations before the model is trusted */
#define TRAIN_MAX 128         /* training points kept for the GP */
#define TRAIN_BEST 64         /* of which the fastest */
#define HYPER_MAX 48          /* points the hyperparameters are fitted to */
#define HYPER_BEST 16
/* Random candidates per batch: more in spaces of few parameters, where they
 * cover the space well, fewer in many dimensions, where EI over wide random
 * samples explores too much. */
#define NRANDOM_BUDGET 4000   /* divided by the number of parameters */
#define NRANDOM_MIN 300
#define NRANDOM_MAX 1000
#define NTOP 6                /* observations whose neighbourhoods are candidates */
#define NCLIMB 4              /* best candidates whose neighbours are tried too */
#define MAX_CANDIDATES 4096
#define FAIL_MARGIN 0.5       /* failures count as this much (log) slower than the slowest */
#define EI_XI 0.01

typedef struct bayes {
    tess_gp *gp;
    int hyper_n;              /* observations when the hyperparameters were last fitted */
    int *train;
    double *x, *y, *all_y;
    tess_config *cand;
    double *cx, *mean, *sd, *ei;
    int cap_obs;
} bayes;

static void bayes_destroy(void *state) {
    bayes *b = state;
    if (!b) return;
    tess_gp_destroy(b->gp);
    free(b->train);
    free(b->x);
    free(b->y);
    free(b->all_y);
    free(b->cand);
    free(b->cx);
    free(b->mean);
    free(b->sd);
    free(b->ei);
    free(b);
}

static tess_status bayes_create(tess_pool *pool, void **state) {
    bayes *b = calloc(1, sizeof *b);
    if (!b) return tess_error(TESS_ERR_NOMEM, "bayes: no memory");
    int d = pool->nfeat;
    b->gp = tess_gp_create(d);
    b->train = malloc(TRAIN_MAX * sizeof *b->train);
    b->x = malloc((size_t)TRAIN_MAX * (size_t)d * sizeof *b->x);
    b->y = malloc(TRAIN_MAX * sizeof *b->y);
    b->cand = malloc(MAX_CANDIDATES * sizeof *b->cand);
    b->cx = malloc((size_t)MAX_CANDIDATES * (size_t)d * sizeof *b->cx);
    b->mean = malloc(MAX_CANDIDATES * sizeof *b->mean);
    b->sd = malloc(MAX_CANDIDATES * sizeof *b->sd);
    b->ei = malloc(MAX_CANDIDATES * sizeof *b->ei);
    if (!b->gp || !b->train || !b->x || !b->y || !b->cand || !b->cx || !b->mean || !b->sd || !b->ei) {
        bayes_destroy(b);
        return tess_error(TESS_ERR_NOMEM, "bayes: no memory");
    }
    *state = b;
    return TESS_OK;
}

/* Chooses up to cap observations: everything while few, else the fastest
 * `nbest` and a random sample of the rest. */
static int choose_training(tess_pool *pool, int cap, int nbest, int *idx) {
    int n = pool->n;
    if (n <= cap) {
        for (int i = 0; i < n; i++) idx[i] = i;
        return n;
    }
    int m = tess_pool_top(pool, nbest, idx);
    char *taken = calloc((size_t)n, 1);
    if (!taken) return m;
    for (int i = 0; i < m; i++) taken[idx[i]] = 1;
    while (m < cap) {
        int i = (int)gsl_rng_uniform_int(pool->rng, (unsigned long)n);
        if (!taken[i]) {
            taken[i] = 1;
            idx[m++] = i;
        }
    }
    free(taken);
    return m;
}

/* Copies the chosen observations' features and targets into x, y. */
static void gather(const bayes *b, const tess_pool *pool, const int *idx, int m, double *x, double *y) {
    int d = pool->nfeat;
    for (int i = 0; i < m; i++) {
        memcpy(x + (size_t)i * (size_t)d, tess_pool_features(pool, idx[i]), (size_t)d * sizeof(double));
        y[i] = b->all_y[idx[i]];
    }
}

static tess_status fit(bayes *b, tess_pool *pool) {
    if (pool->n > b->cap_obs) {
        double *all = realloc(b->all_y, (size_t)pool->cap * sizeof *all);
        if (!all) return tess_error(TESS_ERR_NOMEM, "bayes: no memory");
        b->all_y = all;
        b->cap_obs = pool->cap;
    }
    if (!tess_pool_log_times(pool, FAIL_MARGIN, b->all_y)) return TESS_ERR_NOTFOUND;
    /* hyperparameters again whenever the data grew by a quarter */
    if (b->hyper_n == 0 || pool->n >= b->hyper_n + b->hyper_n / 4) {
        int m = choose_training(pool, HYPER_MAX, HYPER_BEST, b->train);
        gather(b, pool, b->train, m, b->x, b->y);
        tess_gp_optimize(b->gp, b->x, b->y, m);
        b->hyper_n = pool->n;
    }
    int m = choose_training(pool, TRAIN_MAX, TRAIN_BEST, b->train);
    gather(b, pool, b->train, m, b->x, b->y);
    return tess_gp_fit(b->gp, b->x, b->y, m);
}

static void score(bayes *b, tess_pool *pool, int from, int to, double best) {
    int d = pool->nfeat;
    for (int i = from; i < to; i++) tess_space_encode(pool->space, &b->cand[i], b->cx + (size_t)i * (size_t)d);
    tess_gp_predict(b->gp, b->cx + (size_t)from * (size_t)d, to - from, b->mean + from, b->sd + from);
    for (int i = from; i < to; i++) b->ei[i] = tess_gp_expected_improvement(b->mean[i], b->sd[i], best, EI_XI);
}

/* Adds the unproposed neighbours of the best-scored candidates (one hill-climbing step). */
static int climb(bayes *b, tess_pool *pool, int n) {
    int best[NCLIMB], nb = 0;
    for (int i = 0; i < n; i++) {
        int pos = nb < NCLIMB ? nb++ : NCLIMB;
        while (pos > 0 && b->ei[best[pos - 1]] < b->ei[i]) {
            if (pos < NCLIMB) best[pos] = best[pos - 1];
            pos--;
        }
        if (pos < NCLIMB) best[pos] = i;
    }
    tess_config_set *seen = tess_config_set_create();
    if (!seen) return n;
    for (int i = 0; i < n; i++) tess_config_set_add(seen, &b->cand[i]);
    tess_config nbr[512];
    int total = n;
    for (int k = 0; k < nb; k++) {
        int got = 0;
        tess_space_neighbors(pool->space, &b->cand[best[k]], TESS_NEIGH_HAMMING, nbr, 512, &got);
        for (int j = 0; j < got && total < MAX_CANDIDATES; j++)
            if (!tess_pool_is_proposed(pool, &nbr[j]) && tess_config_set_add(seen, &nbr[j])) b->cand[total++] = nbr[j];
    }
    tess_config_set_destroy(seen);
    return total;
}

static tess_status bayes_propose(void *state, tess_pool *pool, tess_config *out, int max, int *n) {
    bayes *b = state;
    *n = 0;
    if (pool->n < INITIAL_RANDOM || pool->nok == 0) return TESS_OK;
    tess_status st = fit(b, pool);
    if (st) return st == TESS_ERR_NOTFOUND ? TESS_OK : st;
    double best = log(tess_pool_best_time(pool));
    int nrandom = NRANDOM_BUDGET / pool->nfeat;
    nrandom = nrandom < NRANDOM_MIN ? NRANDOM_MIN : nrandom > NRANDOM_MAX ? NRANDOM_MAX : nrandom;
    int nc = tess_pool_candidates(pool, nrandom, NTOP, b->cand, MAX_CANDIDATES);
    score(b, pool, 0, nc, best);
    int total = climb(b, pool, nc);
    score(b, pool, nc, total, best);

    /* greedy batch: the best EI, then EI damped by correlation with the chosen */
    int d = pool->nfeat;
    while (*n < max) {
        int pick = -1;
        for (int i = 0; i < total; i++)
            if (b->ei[i] >= 0 && (pick < 0 || b->ei[i] > b->ei[pick])) pick = i;
        if (pick < 0) break;
        const double *px = b->cx + (size_t)pick * (size_t)d;
        b->ei[pick] = -1;
        if (!tess_pool_claim(pool, &b->cand[pick])) continue;
        out[(*n)++] = b->cand[pick];
        for (int i = 0; i < total; i++)
            if (b->ei[i] > 0) b->ei[i] *= 1 - tess_gp_correlation(b->gp, b->cx + (size_t)i * (size_t)d, px);
    }
    return TESS_OK;
}

const tess_technique_ops tess_technique_bayes = {"bayes", bayes_create, bayes_propose, NULL, bayes_destroy};

TESS_TECHNIQUE_STRATEGY(bayes, "Bayesian optimization: Matern-5/2 Gaussian process, expected improvement");
