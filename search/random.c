/* random.c - uniform random sampling of legal configs, without replacement. */
#include "search/search.h"
#include "search/technique.h"

static tess_status random_create(tess_pool *pool, void **state) {
    (void)pool;
    *state = NULL;
    return TESS_OK;
}

static tess_status random_propose(void *state, tess_pool *pool, tess_config *out, int max, int *n) {
    (void)state;
    int k = 0;
    while (k < max && tess_pool_random(pool, &out[k])) k++;
    *n = k;
    return TESS_OK;
}

static void random_destroy(void *state) { (void)state; }

const tess_technique_ops tess_technique_random = {"random", random_create, random_propose, NULL,
                                                  random_destroy};

TESS_TECHNIQUE_STRATEGY(random, "uniform random legal configs, never one twice");
