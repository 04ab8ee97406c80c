/*
 * session.h - a tuning session: a task on a device becomes a space (with the
 * caller's fixed parameters pinned), an evaluator and a strategy's search
 * through the search loop (tune.h). The template's default is measured
 * first, then the warm start's configs; every result is committed to the
 * records as it arrives, with where its config came from ("default",
 * "transfer:K" for the K-th warm-start config, else the strategy's name),
 * inside a run row begun before the search and ended after it.
 *
 * Warm starts come from above core (transfer/ reads the records of similar
 * tasks): the session asks the caller's provider for one as soon as its
 * space exists, and takes its configs and priors as they are.
 */
#ifndef TESS_SESSION_H
#define TESS_SESSION_H

#include "evaluator.h"
#include "records.h"
#include "tessera.h"
#include "warm.h"

/* Fills *out with a warm start for `space` (the session's, pinned), or
 * leaves it empty for a cold start; the session frees it. */
typedef tess_status (*tess_warm_fn)(const tess_space *space, void *user, tess_warm_start *out);

typedef struct tess_session {
    tess_records *db;                  /* borrowed */
    const tess_op *op;                 /* NULL only for tess_session_search on a replay */
    const tess_backend_ops *be;
    tess_task task;
    tess_device device;                /* with its calibrated ceilings (0: not calibrated) */
    tess_warm_fn warm_start;           /* NULL: a cold start */
    void *warm_user;
} tess_session;

/* The strategy opt names (the default when none); TESS_ERR_ARG with the
 * name when it is unknown. */
tess_status tess_session_strategy(const tess_tune_options *opt, const tess_strategy_ops **out);

/* Tunes s->task with opt (tessera.h; budget, strategy, seed, fixed
 * parameters, hardware options); report may be NULL. Fails with
 * TESS_ERR_ARG for an unknown strategy or a bad `fix`, before anything is
 * recorded. */
tess_status tess_session_tune(const tess_session *s, const tess_tune_options *opt, tess_tune_report *report);

/* The search of a session on an evaluator the caller made for `space`
 * (tess_session_tune makes the hardware one; a replay evaluator serves
 * tests): the run row, the default and the warm start's configs first, the
 * records, the report. warm may be NULL. */
tess_status tess_session_search(const tess_session *s, const tess_space *space, tess_evaluator *ev,
                                const tess_warm_start *warm, const tess_tune_options *opt,
                                tess_tune_report *report);

#endif
