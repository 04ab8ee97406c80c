/*
 * technique.h - a search technique: one way of choosing the next configs
 * from a shared experience pool. A strategy runs one technique (anneal,
 * genetic, bayes, model, random) or several at once (agent); techniques
 * never see each other, only the pool.
 */
#ifndef TESS_SEARCH_TECHNIQUE_H
#define TESS_SEARCH_TECHNIQUE_H

#include "search/pool.h"

typedef struct tess_technique_ops {
    const char *name;
    tess_status (*create)(tess_pool *pool, void **state);
    /* Claims up to max configs in the pool (tess_pool_claim) and writes them
     * to out; *n may be less than max, even 0, when the technique has no
     * further candidate this time. */
    tess_status (*propose)(void *state, tess_pool *pool, tess_config *out, int max, int *n);
    /* The pool has just recorded observation `index`. */
    void (*observe)(void *state, tess_pool *pool, int index);
    void (*destroy)(void *state);
} tess_technique_ops;

extern const tess_technique_ops tess_technique_random;
extern const tess_technique_ops tess_technique_anneal;
extern const tess_technique_ops tess_technique_genetic;
extern const tess_technique_ops tess_technique_bayes;
extern const tess_technique_ops tess_technique_model;
extern const tess_technique_ops tess_technique_local;

/* Strategy functions that run one technique on its own pool: the
 * technique's proposals, topped up with random unproposed configs so a batch
 * is full until the space is exhausted. */
tess_status tess_technique_run_create(const tess_technique_ops *t, const tess_space *s,
                                      const tess_strategy_options *o, void **state);
tess_status tess_technique_run_propose(void *state, tess_config *out, int max, int *n);
tess_status tess_technique_run_observe(void *state, const tess_config *c, tess_outcome status,
                                       double time_ms);
void tess_technique_run_destroy(void *state);

/* Defines the strategy ops `tess_search_<NAME>` for a technique. */
#define TESS_TECHNIQUE_STRATEGY(NAME, SUMMARY)                                                  \
    static tess_status NAME##_strategy_create(const tess_space *s, const tess_strategy_options *o, \
                                              void **state) {                                   \
        return tess_technique_run_create(&tess_technique_##NAME, s, o, state);                  \
    }                                                                                           \
    const tess_strategy_ops tess_search_##NAME = {#NAME, SUMMARY, NAME##_strategy_create,        \
                                                  tess_technique_run_propose,                   \
                                                  tess_technique_run_observe,                   \
                                                  tess_technique_run_destroy}

#endif
