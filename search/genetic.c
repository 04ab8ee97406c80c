/* genetic.c - a genetic algorithm over the observed configs: tournament
 * selection among the fastest, uniform crossover, mutation, and a repair
 * step that keeps children legal under the space's constraints. */
#include <stdlib.h>
#include "core/error.h"
#include "search/search.h"
#include "search/technique.h"

#define MIN_PARENTS 4         /* successes before breeding starts */
#define POPULATION 24         /* the fastest observations that may breed */
#define TOURNAMENT 3
#define ATTEMPTS 64           /* tries per child before giving up on a slot */

static tess_status genetic_create(tess_pool *pool, void **state) {
    (void)pool;
    *state = NULL;
    return TESS_OK;
}

static int tournament(tess_pool *pool, int n) {
    int best = (int)gsl_rng_uniform_int(pool->rng, (unsigned long)n);
    for (int k = 1; k < TOURNAMENT; k++) {
        int c = (int)gsl_rng_uniform_int(pool->rng, (unsigned long)n);
        if (c < best) best = c;   /* the population is sorted fastest first */
    }
    return best;
}

/* Mutation: each parameter changes with probability 1/np, to a neighbouring
 * value or (less often) to any value. */
static void mutate(tess_pool *pool, tess_config *c) {
    const tess_space *s = pool->space;
    int np = tess_space_nparams(s);
    for (int p = 0; p < np; p++) {
        int size = tess_space_param_size(s, p);
        if (size < 2 || gsl_rng_uniform(pool->rng) * np >= 1) continue;
        if (gsl_rng_uniform(pool->rng) < 0.7) {
            int v = c->v[p] + (gsl_rng_uniform(pool->rng) < 0.5 ? -1 : 1);
            c->v[p] = (uint16_t)(v < 0 ? 1 : v >= size ? size - 2 : v);
        } else {
            c->v[p] = (uint16_t)gsl_rng_uniform_int(pool->rng, (unsigned long)size);
        }
    }
}

/* Repair: while the child breaks a constraint, take back genes from the
 * parent, one randomly chosen parameter at a time. */
static bool repair(tess_pool *pool, tess_config *child, const tess_config *parent) {
    int np = tess_space_nparams(pool->space);
    for (int tries = 0; tries < np && !tess_space_valid(pool->space, child); tries++) {
        int p = (int)gsl_rng_uniform_int(pool->rng, (unsigned long)np);
        child->v[p] = parent->v[p];
    }
    return tess_space_valid(pool->space, child);
}

static tess_status genetic_propose(void *state, tess_pool *pool, tess_config *out, int max, int *n) {
    (void)state;
    *n = 0;
    int pop[POPULATION], npop = tess_pool_top(pool, POPULATION, pop);
    if (npop < MIN_PARENTS) return TESS_OK;
    int np = tess_space_nparams(pool->space);
    while (*n < max) {
        bool found = false;
        for (int attempt = 0; attempt < ATTEMPTS && !found; attempt++) {
            const tess_config *a = &pool->configs[pop[tournament(pool, npop)]];
            const tess_config *b = &pool->configs[pop[tournament(pool, npop)]];
            tess_config child = *a;
            for (int p = 0; p < np; p++)
                if (gsl_rng_uniform(pool->rng) < 0.5) child.v[p] = b->v[p];
            mutate(pool, &child);
            if (!repair(pool, &child, a)) continue;
            if (tess_pool_claim(pool, &child)) {
                out[(*n)++] = child;
                found = true;
            }
        }
        if (!found) break;
    }
    return TESS_OK;
}

static void genetic_destroy(void *state) { (void)state; }

const tess_technique_ops tess_technique_genetic = {"genetic", genetic_create, genetic_propose, NULL,
                                                   genetic_destroy};

TESS_TECHNIQUE_STRATEGY(genetic, "genetic algorithm: tournament selection, crossover, mutation, repair");
