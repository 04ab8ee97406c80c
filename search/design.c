/* design.c - a space-filling batch: each slot takes, among random
 * unproposed candidates, the one farthest (L1 over the encoded features)
 * from every observation and every config already chosen (greedy maximin),
 * so a batch proposed with little or nothing known covers the space. */
#include <math.h>
#include <stdlib.h>
#include "core/error.h"
#include "search/technique.h"

#define CANDIDATES 256        /* random candidates per batch */

typedef struct design {
    tess_config *cand;
    double *f;                /* CANDIDATES x nfeat */
    double *gap;              /* distance to the nearest chosen or observed config */
} design;

static void design_destroy(void *state) {
    design *d = state;
    if (!d) return;
    free(d->cand);
    free(d->f);
    free(d->gap);
    free(d);
}

static tess_status design_create(tess_pool *pool, void **state) {
    design *d = calloc(1, sizeof *d);
    if (d) {
        d->cand = malloc(CANDIDATES * sizeof *d->cand);
        d->f = malloc((size_t)CANDIDATES * (size_t)pool->nfeat * sizeof *d->f);
        d->gap = malloc(CANDIDATES * sizeof *d->gap);
    }
    if (!d || !d->cand || !d->f || !d->gap) {
        design_destroy(d);
        return tess_error(TESS_ERR_NOMEM, "design: no memory");
    }
    *state = d;
    return TESS_OK;
}

static double l1(const double *a, const double *b, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += fabs(a[i] - b[i]);
    return s;
}

/* Lowers each candidate's gap to its distance from x. */
static void shrink(design *d, int nc, int nfeat, const double *x) {
    for (int i = 0; i < nc; i++) d->gap[i] = fmin(d->gap[i], l1(d->f + (size_t)i * (size_t)nfeat, x, nfeat));
}

static tess_status design_propose(void *state, tess_pool *pool, tess_config *out, int max, int *n) {
    design *d = state;
    int nfeat = pool->nfeat;
    *n = 0;
    int nc = tess_pool_candidates(pool, CANDIDATES, 0, d->cand, CANDIDATES);
    for (int i = 0; i < nc; i++) {
        tess_space_encode(pool->space, &d->cand[i], d->f + (size_t)i * (size_t)nfeat);
        d->gap[i] = INFINITY;
    }
    for (int j = 0; j < pool->n; j++) shrink(d, nc, nfeat, tess_pool_features(pool, j));
    while (*n < max) {
        /* the first pick of an empty pool is the first (random) candidate */
        int pick = -1;
        for (int i = 0; i < nc; i++)
            if (d->gap[i] >= 0 && (pick < 0 || d->gap[i] > d->gap[pick])) pick = i;
        if (pick < 0) break;
        d->gap[pick] = -1;
        if (!tess_pool_claim(pool, &d->cand[pick])) continue;
        out[(*n)++] = d->cand[pick];
        shrink(d, nc, nfeat, d->f + (size_t)pick * (size_t)nfeat);
    }
    return TESS_OK;
}

const tess_technique_ops tess_technique_design = {"design", design_create, design_propose, NULL, design_destroy};
