/* model.c - a learned cost model chooses among candidates: the pool's shared
 * boosted trees guide a short evolutionary search that breeds them (a small
 * space's whole rest is a candidate anyway), and each slot is filled by
 * Thompson sampling, the best candidate of one member of a bootstrap ensemble
 * of trees. The batch so explores where the members disagree instead of
 * piling into the one region that the data seen so far favour. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "search/search.h"
#include "search/technique.h"

#define MIN_OK 6              /* successes before the model is trusted */
#define MEMBERS 5             /* bootstrap ensemble */
#define MEMBER_TREES 30
#define MEMBER_DEPTH 4
#define MEMBER_RATE 0.15
#define MEMBER_ROWS 200       /* bootstrap draws per member, at most */
#define NRANDOM 1024          /* random candidates (a listed space's whole rest when fewer) */
#define NTOP 8                /* observations whose neighbourhoods seed it too */
#define POPULATION 48         /* candidates kept between generations */
#define GENERATIONS 4
#define CHILDREN 96           /* per generation */
#define MAX_CANDIDATES 2048

typedef struct scored {
    tess_config c;
    double pred;
    double tie;               /* random: the trees predict whole regions alike */
} scored;

typedef struct model {
    scored *cand;
    tess_config *buf;
    tess_config_set *seen;
    tess_gbt *member[MEMBERS];
    double *mpred;            /* MEMBERS x MAX_CANDIDATES predictions */
    char *taken;              /* candidates claimed in this batch */
} model;

static void model_destroy(void *state) {
    model *m = state;
    if (!m) return;
    free(m->cand);
    free(m->buf);
    tess_config_set_destroy(m->seen);
    for (int k = 0; k < MEMBERS; k++) tess_gbt_destroy(m->member[k]);
    free(m->mpred);
    free(m->taken);
    free(m);
}

static tess_status model_create(tess_pool *pool, void **state) {
    model *m = calloc(1, sizeof *m);
    bool ok = m != NULL;
    if (ok) {
        m->cand = malloc(MAX_CANDIDATES * sizeof *m->cand);
        m->buf = malloc(MAX_CANDIDATES * sizeof *m->buf);
        m->mpred = malloc((size_t)MEMBERS * MAX_CANDIDATES * sizeof *m->mpred);
        m->taken = malloc(MAX_CANDIDATES);
        ok = m->cand && m->buf && m->mpred && m->taken;
        for (int k = 0; k < MEMBERS && ok; k++)
            ok = (m->member[k] = tess_gbt_create(pool->nfeat, MEMBER_TREES, MEMBER_DEPTH, MEMBER_RATE)) != NULL;
    }
    if (!ok) {
        model_destroy(m);
        return tess_error(TESS_ERR_NOMEM, "model: no memory");
    }
    *state = m;
    return TESS_OK;
}

static int by_prediction(const void *a, const void *b) {
    const scored *x = a, *y = b;
    if (x->pred != y->pred) return (x->pred > y->pred) - (x->pred < y->pred);
    return (x->tie > y->tie) - (x->tie < y->tie);
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
static int add(model *m, tess_pool *pool, int n, const tess_config *c) {
    if (n >= MAX_CANDIDATES || !tess_config_set_add(m->seen, c)) return n;
    m->cand[n].c = *c;
    m->cand[n].pred = tess_pool_predict(pool, c);
    m->cand[n].tie = gsl_rng_uniform(pool->rng);
    return n + 1;
}

/* Fits each member to a bootstrap resample of the training rows and
 * predicts every candidate with it. */
static tess_status sample_members(model *m, tess_pool *pool, int nc) {
    double *x = NULL, *y = NULL;
    int rows = tess_pool_training(pool, &x, &y), d = pool->nfeat;
    int draws = rows < MEMBER_ROWS ? rows : MEMBER_ROWS;
    double *bx = rows > 0 ? malloc((size_t)draws * (size_t)d * sizeof *bx) : NULL;
    double *by = rows > 0 ? malloc((size_t)draws * sizeof *by) : NULL;
    double *f = malloc((size_t)(nc ? nc : 1) * (size_t)d * sizeof *f);
    tess_status st = bx && by && f ? TESS_OK : tess_error(TESS_ERR_NOMEM, "model: no memory");
    for (int i = 0; !st && i < nc; i++) tess_space_encode(pool->space, &m->cand[i].c, f + (size_t)i * (size_t)d);
    for (int k = 0; k < MEMBERS && !st; k++) {
        for (int r = 0; r < draws; r++) {
            int pick = (int)gsl_rng_uniform_int(pool->rng, (unsigned long)rows);
            memcpy(bx + (size_t)r * (size_t)d, x + (size_t)pick * (size_t)d, (size_t)d * sizeof *bx);
            by[r] = y[pick];
        }
        st = tess_gbt_fit(m->member[k], bx, by, draws);
        double *pred = m->mpred + (size_t)k * MAX_CANDIDATES;
        for (int i = 0; !st && i < nc; i++) pred[i] = tess_gbt_predict(m->member[k], f + (size_t)i * (size_t)d);
    }
    free(x);
    free(y);
    free(bx);
    free(by);
    free(f);
    return st;
}

static tess_status model_propose(void *state, tess_pool *pool, tess_config *out, int max, int *n) {
    model *m = state;
    *n = 0;
    if (!tess_pool_model(pool, MIN_OK)) return TESS_OK;
    tess_config_set_destroy(m->seen);
    m->seen = tess_config_set_create();
    if (!m->seen) return tess_error(TESS_ERR_NOMEM, "model: no memory");

    int nc = 0, got = tess_pool_candidates(pool, NRANDOM, NTOP, m->buf, MAX_CANDIDATES);
    for (int i = 0; i < got; i++) nc = add(m, pool, nc, &m->buf[i]);
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
            if (breed(pool, a, b, &child)) nc = add(m, pool, nc, &child);
        }
    }
    tess_status st = sample_members(m, pool, nc);
    if (st) return st;
    /* slot j: the best unclaimed candidate of member j (round robin) */
    memset(m->taken, 0, (size_t)nc);
    int first = (int)gsl_rng_uniform_int(pool->rng, MEMBERS);
    for (int j = 0; *n < max; j++) {
        const double *pred = m->mpred + (size_t)((first + j) % MEMBERS) * MAX_CANDIDATES;
        int pick = -1;
        for (int i = 0; i < nc; i++)
            if (!m->taken[i] && (pick < 0 || pred[i] < pred[pick] ||
                                 (pred[i] == pred[pick] && m->cand[i].tie < m->cand[pick].tie)))
                pick = i;
        if (pick < 0) break;
        m->taken[pick] = 1;
        if (tess_pool_claim(pool, &m->cand[pick].c)) out[(*n)++] = m->cand[pick].c;
    }
    return TESS_OK;
}

const tess_technique_ops tess_technique_model = {"model", model_create, model_propose, NULL, model_destroy};

TESS_TECHNIQUE_STRATEGY(model, "learned cost model (boosted trees), Thompson sampling from a bootstrap ensemble");
