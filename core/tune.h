/*
 * tune.h - the search loop: the strategy proposes batches, the evaluator
 * measures them, every result goes to the caller (the records store, a
 * benchmark's trace) and back to the strategy, until a budget, a time limit,
 * convergence, the caller's stop condition or the end of the space. Tuning,
 * the replay benchmark and the transfer benchmark all run this loop; the
 * replay evaluator is just another evaluator.
 */
#ifndef TESS_TUNE_H
#define TESS_TUNE_H

#include <signal.h>
#include "evaluator.h"
#include "strategy.h"

typedef struct tess_tune_loop_options {
    const tess_strategy_ops *strategy;
    int budget;                 /* evaluations; 0: none */
    double seconds;             /* wall clock; 0: none */
    int window;                 /* converged after this many evaluations without a 1% gain; 0: never */
    uint64_t seed;
    int batch;                  /* 0: the evaluator's preferred batch */
    /* Evaluated first, in order, before the strategy proposes (the template's
     * default); duplicates and illegal ones are skipped. */
    const tess_config *seeds;
    int nseeds;
    /* The warm start's configs, most promising first: interleaved with the
     * strategy's proposals (tess_warm_plan: after its first batch when seeds
     * were measured, at once otherwise), each skipped when it was evaluated
     * already or is illegal. Once one measures no faster than the best so
     * far the source does not fit the target, and the rest are dropped. */
    const tess_config *warm;
    int nwarm;
    /* Measurements of similar tasks that pre-train the strategy's cost model. */
    const tess_prior *priors;
    int npriors;
    /* false: a proposal repeated or illegal is skipped and counted (tuning
     * goes on); true: it is a strategy bug and the loop fails with
     * TESS_ERR_INTERNAL, as does a batch larger than asked (benchmarks). */
    bool strict;
    tess_result_fn on_result;   /* every result, as it arrives; may be NULL */
    /* Called after each result (after on_result); true stops the loop once
     * the batch in flight is done. May be NULL. */
    bool (*stop)(const tess_result *r, void *user);
    void *user;                 /* passed to on_result and stop */
    /* Set non-zero (by a signal handler, say) to stop after the batch in
     * flight, with stop reason "interrupted"; may be NULL. */
    const volatile sig_atomic_t *cancel;
} tess_tune_loop_options;

typedef struct tess_tune_outcome {
    bool found;                 /* some candidate succeeded */
    tess_result best;
    int evaluations;
    int counts[TESS_OUTCOME_COUNT];
    int skipped;                /* proposals skipped as repeated or illegal */
    double propose_ms_max;      /* the slowest propose call */
    char stop_reason[96];
    double elapsed_s;
} tess_tune_outcome;

tess_status tess_tune_loop(tess_evaluator *ev, const tess_tune_loop_options *o, tess_tune_outcome *out);

#endif
