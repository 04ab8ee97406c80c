/*
 * evaluator.h - turns configs into results. The hardware evaluator emits,
 * compiles (in a process pool), runs in an isolated runner, verifies and
 * times; the replay evaluator (search/replay.c) answers from a recorded
 * space. Strategies and the tuning loop see only this interface.
 */
#ifndef TESS_EVALUATOR_H
#define TESS_EVALUATOR_H

#include "backend.h"
#include "device.h"
#include "op.h"
#include "result.h"
#include "runner.h"
#include "space.h"
#include "task.h"

typedef struct tess_evaluator tess_evaluator;

/* Called once per finished candidate, in completion order. */
typedef void (*tess_result_fn)(const tess_result *r, void *user);

typedef struct tess_evaluator_ops {
    /* Evaluates n configs; every one ends as a result (failures included),
     * passed to on_result as soon as it is known. Returns an error only
     * when the evaluator itself broke (then some results may be missing). */
    tess_status (*evaluate)(tess_evaluator *ev, const tess_config *configs, int n,
                            tess_result_fn on_result, void *user);
    /* Frees impl; tess_evaluator_destroy then frees ev. */
    void (*destroy)(tess_evaluator *ev);
} tess_evaluator_ops;

struct tess_evaluator {
    const tess_evaluator_ops *ops;
    const tess_space *space;    /* borrowed from the creator, who keeps it alive longer */
    tess_task task;
    tess_device device;
    const tess_op *op;          /* NULL for replayed spaces */
    int batch;                  /* preferred batch size */
    void *impl;
};

typedef struct tess_hw_options {
    int compile_workers;        /* 0: number of cores */
    int compile_batch;          /* kernels per compiler program at most (see tess_compile_pool_set_batch); 0, 1: one */
    double compile_timeout_s;   /* a longer compile is stopped, a compile error; 0: TESS_COMPILE_TIMEOUT_S, < 0: none */
    double min_time_s;          /* total timed duration to aim for per candidate */
    int max_reps;               /* cap on timed repetitions */
    double timeout_s;           /* per candidate run; 0: derived from the default config's time */
    uint64_t seed;              /* input data */
    /* > 0: a candidate whose first few timed runs are this many times slower
     * than the best so far is not timed further (its time stays a median of
     * those runs). 0: every candidate gets the full timing. */
    double race_factor;
} tess_hw_options;

tess_hw_options tess_hw_options_default(void);

/* An evaluator of op's configs in `space` (borrowed: built by tess_op_space for
 * this task and device, pinned as the caller wishes; it must outlive the
 * evaluator). */
tess_status tess_evaluator_create_hw(const tess_op *op, const tess_task *t, const tess_space *space,
                                     const tess_backend_ops *be, const tess_device *dev,
                                     const tess_hw_options *o, tess_evaluator **out);
void tess_evaluator_destroy(tess_evaluator *ev);

/* Where a hardware evaluator's time went so far (seconds). */
typedef struct tess_hw_profile {
    tess_runner_profile runner;
    double compile_wait_s;      /* waiting for the compile pool with nothing to run */
    double report_s;            /* in on_result callbacks (records, progress) */
} tess_hw_profile;

/* TESS_ERR_ARG when ev is not a hardware evaluator. */
tess_status tess_evaluator_hw_profile(const tess_evaluator *ev, tess_hw_profile *out);

#endif
