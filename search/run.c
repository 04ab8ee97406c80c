/* run.c - a strategy that runs one technique on its own pool. */
#include <stdlib.h>
#include "core/error.h"
#include "search/technique.h"

typedef struct technique_run {
    const tess_technique_ops *t;
    void *state;
    tess_pool *pool;
} technique_run;

tess_status tess_technique_run_create(const tess_technique_ops *t, const tess_space *s,
                                      const tess_strategy_options *o, void **state) {
    *state = NULL;
    technique_run *r = calloc(1, sizeof *r);
    if (!r) return tess_error(TESS_ERR_NOMEM, "%s: no memory", t->name);
    r->t = t;
    tess_status st = tess_pool_create(s, o, &r->pool);
    if (!st) st = t->create(r->pool, &r->state);
    if (st) {
        tess_pool_destroy(r->pool);
        free(r);
        return tess_error_context(st, "creating strategy '%s'", t->name);
    }
    *state = r;
    return TESS_OK;
}

tess_status tess_technique_run_propose(void *state, tess_config *out, int max, int *n) {
    technique_run *r = state;
    int k = 0;
    tess_status st = r->t->propose(r->state, r->pool, out, max, &k);
    if (st) return st;
    while (k < max && tess_pool_random(r->pool, &out[k])) k++;
    *n = k;
    return TESS_OK;
}

tess_status tess_technique_run_observe(void *state, const tess_config *c, tess_outcome status,
                                       double time_ms) {
    technique_run *r = state;
    int i = tess_pool_observe(r->pool, c, status, time_ms);
    if (i < 0) return tess_error(TESS_ERR_NOMEM, "%s: no memory for an observation", r->t->name);
    if (r->t->observe) r->t->observe(r->state, r->pool, i);
    return TESS_OK;
}

void tess_technique_run_destroy(void *state) {
    technique_run *r = state;
    if (!r) return;
    if (r->state) r->t->destroy(r->state);
    tess_pool_destroy(r->pool);
    free(r);
}
