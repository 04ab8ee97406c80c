/*
 * pool.h - the experience pool a search run keeps: what was proposed (so
 * nothing is proposed twice), what was observed (configs, encoded features,
 * times, statuses), the best so far, priors from similar tasks and the run's
 * random stream. Every technique of a run reads and feeds the same pool.
 */
#ifndef TESS_SEARCH_POOL_H
#define TESS_SEARCH_POOL_H

#include <gsl/gsl_rng.h>
#include "core/space.h"
#include "core/strategy.h"
#include "core/types.h"
#include "search/gbt.h"

typedef struct tess_pool {
    const tess_space *space;
    gsl_rng *rng;
    int nfeat;
    tess_config_set *proposed;
    /* observations, in arrival order */
    int n, cap;
    tess_config *configs;
    double *features;          /* n x nfeat */
    double *time_ms;           /* INFINITY for failures */
    tess_outcome *status;
    int best;                  /* index of the fastest ok observation, -1 if none */
    int nok;
    /* every legal point, listed once when the space is small enough to rank whole */
    tess_config *all;
    size_t nall;
    bool all_built;           /* listing attempted */
    /* remaining unproposed legal points, built once random draws mostly repeat */
    tess_config *rest;
    size_t nrest, next_rest;
    bool rest_built;
    bool exhausted;
    /* measurements of similar tasks, for the cost model while own data is scarce */
    tess_prior *priors;
    int npriors;
    /* Whether the priors agree with what this run measures (pool.c says
     * how): the rank correlation of a model of the priors alone with the
     * run's own successes, and the fastest prior's time on this target;
     * priors count once confirmed and are dropped for the rest of the run
     * when contradicted. */
    tess_gbt *prior_model;
    double prior_agreement;    /* Spearman's rho at the last check; NAN before */
    int prior_best;            /* index of the fastest prior, -1 without priors */
    double prior_best_ms;      /* its time here: NAN before measured, INFINITY if it failed */
    bool priors_dropped;
    /* the shared cost model (log time relative to the best), refitted lazily */
    tess_gbt *model;
    int model_n;             /* observations it was fitted to */
    bool model_priors;       /* whether the fit included the priors */
} tess_pool;

tess_status tess_pool_create(const tess_space *s, const tess_strategy_options *o, tess_pool **out);
/* Whether the run has priors from similar tasks that its measurements
 * confirmed and did not contradict since. */
bool tess_pool_has_priors(const tess_pool *pool);
void tess_pool_destroy(tess_pool *pool);

/* Marks c proposed if it is legal and new; returns whether it was. */
bool tess_pool_claim(tess_pool *pool, const tess_config *c);
bool tess_pool_is_proposed(const tess_pool *pool, const tess_config *c);
/* Claims a uniformly random legal config never proposed; false when none is left. */
bool tess_pool_random(tess_pool *pool, tess_config *out);
/* Records a result; returns the observation's index (-1 if out of memory). */
int tess_pool_observe(tess_pool *pool, const tess_config *c, tess_outcome status, double time_ms);

const double *tess_pool_features(const tess_pool *pool, int i);
/* Indices of the (up to) k fastest ok observations, fastest first; returns how many. */
int tess_pool_top(const tess_pool *pool, int k, int *idx);
/* Log of each observation's time, failures at the slowest ok time plus `fail_margin`
 * (information without an infinity); y has pool->n entries. False if nothing succeeded. */
bool tess_pool_log_times(const tess_pool *pool, double fail_margin, double *y);

/* The cost model fitted to every observation so far (log time relative to
 * the best, failures as slow) and, while there are fewer own successes than
 * priors, to the priors from similar tasks; NULL while fewer than `min_obs`
 * observations succeeded and there are no priors. */
const tess_gbt *tess_pool_model(tess_pool *pool, int min_obs);
/* The cost model's training rows (features n x nfeat, targets), malloc'd:
 * the observations and, while they are few, the priors. Returns how many
 * rows, -1 when out of memory. */
int tess_pool_training(tess_pool *pool, double **x, double **y);
/* The model's prediction for a config. */
double tess_pool_predict(const tess_pool *pool, const tess_config *c);

/* Every legal point (n of them) when the space has at most a few hundred
 * thousand; NULL when it is too large to list. Listed once, then kept. */
const tess_config *tess_pool_space_list(tess_pool *pool, size_t *n);
/* Candidates: up to max distinct legal configs never proposed: every Hamming
 * neighbour of the ntop best observations, then every other unproposed point
 * when the space is listed and at most nrandom are left, else nrandom random
 * draws. Nothing is claimed. Returns how many. */
int tess_pool_candidates(tess_pool *pool, int nrandom, int ntop, tess_config *out, int max);
/* Best observed time, INFINITY if nothing succeeded yet. */
double tess_pool_best_time(const tess_pool *pool);

#endif
