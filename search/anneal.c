/* anneal.c - simulated annealing over the space's neighbourhoods: the walk
 * moves to a measured neighbour if it is faster, or if slower with the
 * Metropolis probability exp(-(log t_new - log t_cur) / T); T cools
 * geometrically and the walk restarts from the best when it stalls. */
#include <math.h>
#include <stdlib.h>
#include "core/error.h"
#include "search/search.h"
#include "search/technique.h"

#define T_START 0.3           /* in units of log time: 0.3 accepts 35% slower with p = 1/e */
#define T_MIN 0.01
#define COOLING 0.97          /* per observation */
#define STALL 40              /* observations without a new best before a restart */

typedef struct anneal {
    int current;              /* observation index of the walk's position, -1 before the first */
    double temperature;
    int since_best;
    tess_config *nb;
    int room;
} anneal;

static tess_status anneal_create(tess_pool *pool, void **state) {
    anneal *a = calloc(1, sizeof *a);
    if (!a) return tess_error(TESS_ERR_NOMEM, "anneal: no memory");
    for (int p = 0; p < tess_space_nparams(pool->space); p++) a->room += tess_space_param_size(pool->space, p);
    a->nb = malloc((size_t)a->room * sizeof *a->nb);
    if (!a->nb) {
        free(a);
        return tess_error(TESS_ERR_NOMEM, "anneal: no memory");
    }
    a->current = -1;
    a->temperature = T_START;
    *state = a;
    return TESS_OK;
}

/* A random unproposed neighbour of c: adjacent values first, any value otherwise. */
static bool pick_neighbor(anneal *a, tess_pool *pool, const tess_config *c, tess_config *out) {
    for (int kind = 0; kind < 2; kind++) {
        int k = 0;
        tess_space_neighbors(pool->space, c, kind == 0 && gsl_rng_uniform(pool->rng) < 0.7 ? TESS_NEIGH_ADJACENT : TESS_NEIGH_HAMMING,
                             a->nb, a->room, &k);
        int fresh = 0;
        for (int j = 0; j < k; j++)
            if (!tess_pool_is_proposed(pool, &a->nb[j])) a->nb[fresh++] = a->nb[j];
        if (fresh) {
            *out = a->nb[gsl_rng_uniform_int(pool->rng, (unsigned long)fresh)];
            return tess_pool_claim(pool, out);
        }
    }
    return false;
}

static tess_status anneal_propose(void *state, tess_pool *pool, tess_config *out, int max, int *n) {
    anneal *a = state;
    *n = 0;
    if (a->current < 0) return TESS_OK;
    /* a batch explores the current point's neighbourhood; past it, the best's */
    while (*n < max && pick_neighbor(a, pool, &pool->configs[a->current], &out[*n])) (*n)++;
    while (*n < max && pool->best >= 0 && pick_neighbor(a, pool, &pool->configs[pool->best], &out[*n])) (*n)++;
    return TESS_OK;
}

static void anneal_observe(void *state, tess_pool *pool, int i) {
    anneal *a = state;
    if (pool->status[i] != TESS_RESULT_OK) return;
    a->since_best = pool->best == i ? 0 : a->since_best + 1;
    if (a->current < 0) {
        a->current = i;
        return;
    }
    double delta = log(pool->time_ms[i]) - log(pool->time_ms[a->current]);
    if (delta < 0 || gsl_rng_uniform(pool->rng) < exp(-delta / a->temperature)) a->current = i;
    a->temperature = fmax(T_MIN, a->temperature * COOLING);
    if (a->since_best >= STALL) {   /* reheat at the best */
        a->current = pool->best;
        a->temperature = T_START;
        a->since_best = 0;
    }
}

static void anneal_destroy(void *state) {
    anneal *a = state;
    if (!a) return;
    free(a->nb);
    free(a);
}

const tess_technique_ops tess_technique_anneal = {"anneal", anneal_create, anneal_propose, anneal_observe,
                                                  anneal_destroy};

TESS_TECHNIQUE_STRATEGY(anneal, "simulated annealing over neighbourhoods, restarts when stalled");
