/*
 * strategy.h - search strategies behind one interface. A strategy sees a
 * space and encoded configs with measured times, never kernels, so the same
 * strategy tunes a stencil, a GEMM or a replayed space.
 *
 * The objective is minimized (time in ms). Failed candidates are observed
 * with their status and time INFINITY: they are information too.
 */
#ifndef TESS_STRATEGY_H
#define TESS_STRATEGY_H

#include <stdint.h>
#include "space.h"
#include "types.h"

/* A measurement of a similar task (another shape, operator or device)
 * mapped into this space: prior knowledge for cost models. */
typedef struct tess_prior {
    tess_config config;
    double rel_log_time;          /* log(time / that task's best time), >= 0 */
    double weight;                /* how similar that task is, 0..1 */
} tess_prior;

typedef struct tess_strategy_options {
    uint64_t seed;
    int batch;                    /* preferred batch size */
    int budget;                   /* evaluations the run may take (0: unknown) */
    const tess_prior *priors;     /* cost-model priors from similar tasks (borrowed); may be NULL */
    int npriors;
} tess_strategy_options;

typedef struct tess_strategy_ops {
    const char *name;
    const char *summary;
    tess_status (*create)(const tess_space *s, const tess_strategy_options *o, void **state);
    /* Writes up to max legal configs never proposed before. *n == 0 means the
     * strategy has nothing left to propose (the space is exhausted). */
    tess_status (*propose)(void *state, tess_config *out, int max, int *n);
    /* A measured config. The search loop also reports configs the strategy
     * did not propose (the template's default, which the loop evaluates
     * first, and warm starts, which it interleaves with the strategy's own
     * proposals): they count as known and must not be proposed again. */
    tess_status (*observe)(void *state, const tess_config *c, tess_outcome status, double time_ms);
    void (*destroy)(void *state);
} tess_strategy_ops;

tess_status tess_strategy_register(const tess_strategy_ops *ops);
const tess_strategy_ops *tess_strategy_find(const char *name);
int tess_strategy_count(void);
const tess_strategy_ops *tess_strategy_at(int i);
/* The strategy used when none is named. */
const char *tess_strategy_default_name(void);

#endif
