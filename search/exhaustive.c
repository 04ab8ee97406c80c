/* exhaustive.c - every legal config in lexicographic order, streamed
 * through the product of the value lists rather than listed up front. */
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "search/pool.h"
#include "search/search.h"

typedef struct exhaustive {
    tess_pool *pool;        /* the set of proposed configs */
    tess_config cursor;     /* next point of the product to look at */
    bool done;
} exhaustive;

static tess_status exhaustive_create(const tess_space *s, const tess_strategy_options *o, void **state) {
    *state = NULL;
    exhaustive *e = calloc(1, sizeof *e);
    if (!e) return tess_error(TESS_ERR_NOMEM, "exhaustive: no memory");
    tess_status st = tess_pool_create(s, o, &e->pool);
    if (st) {
        free(e);
        return tess_error_context(st, "creating strategy 'exhaustive'");
    }
    *state = e;
    return TESS_OK;
}

/* Moves the cursor to the next point of the product; false past the last one. */
static bool advance(exhaustive *e) {
    const tess_space *s = e->pool->space;
    int p = tess_space_nparams(s) - 1;
    while (p >= 0 && ++e->cursor.v[p] == tess_space_param_size(s, p)) e->cursor.v[p--] = 0;
    return p >= 0;
}

static tess_status exhaustive_propose(void *state, tess_config *out, int max, int *n) {
    exhaustive *e = state;
    int k = 0;
    while (k < max && !e->done) {
        if (tess_pool_claim(e->pool, &e->cursor)) out[k++] = e->cursor;
        e->done = !advance(e);
    }
    *n = k;
    return TESS_OK;
}

static tess_status exhaustive_observe(void *state, const tess_config *c, tess_outcome status,
                                      double time_ms) {
    (void)state, (void)c, (void)status, (void)time_ms;
    return TESS_OK;
}

static void exhaustive_destroy(void *state) {
    exhaustive *e = state;
    if (!e) return;
    tess_pool_destroy(e->pool);
    free(e);
}

const tess_strategy_ops tess_search_exhaustive = {
    "exhaustive", "every legal config in order (small spaces, baselines)",
    exhaustive_create, exhaustive_propose, exhaustive_observe, exhaustive_destroy};
