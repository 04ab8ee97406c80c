/* model.c - a learned cost model (boosted trees over encoded configs, the
 * pool's shared model) ranks candidates bred by a short evolutionary search;
 * epsilon-greedy exploration keeps some slots random. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "search/search.h"
#include "search/technique.h"

#define MIN_OK 6              /* successes before the model is trusted */
#define EPSILON 0.1           /* share of random slots */
#define NRANDOM 256           /* random candidates seeding the population */
#define NTOP 8                /* observations whose neighbourhoods seed it too */
#define POPULATION 48         /* candidates kept between generations */
#define GENERATIONS 4
#define CHILDREN 96           /* per generation */
#define MAX_CANDIDATES 2048

typedef struct scored {
    tess_config c;
    double pred;
} scored;

typedef struct model {
    scored *cand;
    tess_config *buf;
    tess_config_set *seen;
} model;

static void model_destroy(void *state) {
    model *m = state;
    if (!m) return;
    free(m->cand);
    free(m->buf);
    tess_config_set_destroy(m->seen);
    free(m);
}

static tess_status model_create(tess_pool *pool, void **state) {
    (void)pool;
    model *m = calloc(1, sizeof *m);
    if (m) {
        m->cand = malloc(MAX_CANDIDATES * sizeof *m->cand);
        m->buf = malloc(MAX_CANDIDATES * sizeof *m->buf);
    }
    if (!m || !m->cand || !m->buf) {
        model_destroy(m);
        return tess_error(TESS_ERR_NOMEM, "model: no memory");
    }
    *state = m;
    return TESS_OK;
}

static int by_prediction(const void *a, const void *b) {
    double x = ((const scored *)a)->pred, y = ((const scored *)b)->pred;
    return (x > y) - (x < y);
}

/* A child of two candidates: each parameter from either parent, then one
 * random parameter changed with probability 1/2. NULL b: mutation only. */
static bool breed(tess_pool *pool, const tess_config *a, const tess_config *b, tess_config *child) {
    const tess_space *s = pool->space;
    int np = tess_space_nparams(s);
    *child = *a;
    if (b)
        for (int p = 0; p < np; p++)
            if (gsl_rng_uniform(pool->rng) < 0.5) child->v[p] = b->v[p];
    if (!b || gsl_rng_uniform(pool->rng) < 0.5) {
        int p = (int)gsl_rng_uniform_int(pool->rng, (unsigned long)np);
        int size = tess_space_param_size(s, p);
        if (size > 1) {
            int step = gsl_rng_uniform(pool->rng) < 0.5 ? 1 : 1 + (int)gsl_rng_uniform_int(pool->rng, (unsigned long)(size - 1));
            int v = child->v[p] + (gsl_rng_uniform(pool->rng) < 0.5 ? step : -step);
            child->v[p] = (uint16_t)(((v % size) + size) % size);
        }
    }
    return tess_space_valid(s, child) && !tess_pool_is_proposed(pool, child);
}

/* Keeps candidates unique across the search. */
static int add(model *m, int n, const tess_config *c, double pred) {
    if (n >= MAX_CANDIDATES || !tess_config_set_add(m->seen, c)) return n;
    m->cand[n].c = *c;
    m->cand[n].pred = pred;
    return n + 1;
}

static tess_status model_propose(void *state, tess_pool *pool, tess_config *out, int max, int *n) {
    model *m = state;
    *n = 0;
    if (!tess_pool_model(pool, MIN_OK)) return TESS_OK;
    tess_config_set_destroy(m->seen);
    m->seen = tess_config_set_create();
    if (!m->seen) return tess_error(TESS_ERR_NOMEM, "model: no memory");

    int nc = 0, got = tess_pool_candidates(pool, NRANDOM, NTOP, m->buf, MAX_CANDIDATES);
    for (int i = 0; i < got; i++) nc = add(m, nc, &m->buf[i], tess_pool_predict(pool, &m->buf[i]));
    /* the observed best breed too, though they are not candidates themselves */
    int top[NTOP], ntop = tess_pool_top(pool, NTOP, top);
    for (int g = 0; g < GENERATIONS; g++) {
        qsort(m->cand, (size_t)nc, sizeof *m->cand, by_prediction);
        int parents = nc < POPULATION ? nc : POPULATION;
        if (parents == 0) break;
        for (int k = 0; k < CHILDREN; k++) {
            const tess_config *a = &m->cand[gsl_rng_uniform_int(pool->rng, (unsigned long)parents)].c;
            if (ntop && gsl_rng_uniform(pool->rng) < 0.25)
                a = &pool->configs[top[gsl_rng_uniform_int(pool->rng, (unsigned long)ntop)]];
            const tess_config *b = gsl_rng_uniform(pool->rng) < 0.5
                                       ? &m->cand[gsl_rng_uniform_int(pool->rng, (unsigned long)parents)].c
                                       : NULL;
            tess_config child;
            if (breed(pool, a, b, &child)) nc = add(m, nc, &child, tess_pool_predict(pool, &child));
        }
    }
    qsort(m->cand, (size_t)nc, sizeof *m->cand, by_prediction);
    int next = 0;
    while (*n < max) {
        if (gsl_rng_uniform(pool->rng) < EPSILON) {
            if (!tess_pool_random(pool, &out[*n])) break;
            (*n)++;
            continue;
        }
        if (next >= nc) break;
        if (tess_pool_claim(pool, &m->cand[next].c)) out[(*n)++] = m->cand[next].c;
        next++;
    }
    return TESS_OK;
}

const tess_technique_ops tess_technique_model = {"model", model_create, model_propose, NULL, model_destroy};

TESS_TECHNIQUE_STRATEGY(model, "learned cost model (boosted trees) ranking evolved candidates, epsilon-greedy");
