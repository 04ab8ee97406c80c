/* local.c - local search around the incumbent: the unproposed configs
 * nearest to the fastest observation, nearest first in steps of parameter
 * values (the adjacent neighbours first; a sampled space's nearest recorded
 * points stand in for missing neighbours); ties are broken at random. */
#include <stdlib.h>
#include "core/error.h"
#include "search/technique.h"

typedef struct near {
    tess_config c;
    double dist, tie;
} near;

typedef struct local {
    near *cand;
    size_t cap;
    tess_config *nb;
    int room;
} local;

static void local_destroy(void *state) {
    local *l = state;
    if (!l) return;
    free(l->cand);
    free(l->nb);
    free(l);
}

static tess_status local_create(tess_pool *pool, void **state) {
    local *l = calloc(1, sizeof *l);
    if (!l) return tess_error(TESS_ERR_NOMEM, "local: no memory");
    for (int p = 0; p < tess_space_nparams(pool->space); p++) l->room += tess_space_param_size(pool->space, p);
    l->nb = malloc((size_t)(l->room ? l->room : 1) * sizeof *l->nb);
    if (!l->nb) {
        local_destroy(l);
        return tess_error(TESS_ERR_NOMEM, "local: no memory");
    }
    *state = l;
    return TESS_OK;
}

static int by_distance(const void *a, const void *b) {
    const near *x = a, *y = b;
    if (x->dist != y->dist) return (x->dist > y->dist) - (x->dist < y->dist);
    return (x->tie > y->tie) - (x->tie < y->tie);
}

/* Steps between two configs: a numeric parameter's value moved by k places
 * is k steps, a categorical one changed is one; every parameter weighs alike. */
static double distance(const tess_pool *pool, const tess_config *from, const tess_config *c) {
    double d = 0;
    for (int p = 0; p < tess_space_nparams(pool->space); p++) {
        int k = abs((int)c->v[p] - (int)from->v[p]);
        d += tess_space_param_label(pool->space, p, 0) && k ? 1 : k;
    }
    return d;
}

static bool reserve(local *l, size_t n) {
    if (n <= l->cap) return true;
    near *grown = realloc(l->cand, n * sizeof *grown);
    if (!grown) return false;
    l->cand = grown;
    l->cap = n;
    return true;
}

static tess_status local_propose(void *state, tess_pool *pool, tess_config *out, int max, int *n) {
    local *l = state;
    *n = 0;
    if (pool->best < 0) return TESS_OK;
    const tess_config *from = &pool->configs[pool->best];
    /* every unproposed point of a listed space, else the incumbent's neighbours */
    size_t nall = 0, m = 0;
    const tess_config *all = tess_pool_space_list(pool, &nall);
    if (!all) {
        int k = 0;
        tess_space_neighbors(pool->space, from, TESS_NEIGH_HAMMING, l->nb, l->room, &k);
        all = l->nb;
        nall = (size_t)k;
    }
    if (!reserve(l, nall ? nall : 1)) return tess_error(TESS_ERR_NOMEM, "local: no memory");
    for (size_t i = 0; i < nall; i++) {
        if (tess_pool_is_proposed(pool, &all[i])) continue;
        l->cand[m++] = (near){all[i], distance(pool, from, &all[i]), gsl_rng_uniform(pool->rng)};
    }
    qsort(l->cand, m, sizeof *l->cand, by_distance);
    for (size_t i = 0; i < m && *n < max; i++)
        if (tess_pool_claim(pool, &l->cand[i].c)) out[(*n)++] = l->cand[i].c;
    return TESS_OK;
}

const tess_technique_ops tess_technique_local = {"local", local_create, local_propose, NULL, local_destroy};
