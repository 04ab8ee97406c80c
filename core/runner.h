/*
 * runner.h - isolated execution: a forked process that owns the backend
 * context and the task's buffers, and runs, verifies and times candidates.
 *
 * The parent prepares the inputs and the reference outputs once. The child
 * uploads them, then for each candidate: loads the binary, poisons the
 * outputs (NaN), runs once, checks that every output element was written
 * and matches the reference within the operator's tolerance, then times
 * warm runs until the median is stable. A candidate that crashes the child
 * or outlives its watchdog becomes a runtime_error or timeout result; the
 * child is restarted for the next candidate.
 */
#ifndef TESS_RUNNER_H
#define TESS_RUNNER_H

#include "backend.h"
#include "op.h"
#include "result.h"

typedef struct tess_runner tess_runner;

typedef struct tess_runner_options {
    double min_time_s;      /* aim for at least this much timed work per candidate */
    int min_reps, max_reps;
    uint64_t seed;          /* input data */
} tess_runner_options;

tess_status tess_runner_create(const tess_op *op, const tess_task *t, const tess_backend_ops *be,
                               const tess_device *dev, const tess_runner_options *o,
                               tess_runner **out);
void tess_runner_destroy(tess_runner *r);

/* Runs one compiled candidate; always fills res (status, message, times).
 * cutoff_ms > 0 stops timing after a few repetitions when the candidate's
 * median is above it (see tess_timing_options). Returns an error only if
 * the runner itself cannot go on. */
tess_status tess_runner_measure(tess_runner *r, const tess_blob *bin, const tess_kernel_source *src,
                                double timeout_s, double cutoff_ms, tess_result *res);

/* Where the runner's time went, summed over candidates (seconds). */
typedef struct tess_runner_profile {
    int candidates;         /* measured (every outcome) */
    int answered;           /* of those, answered by the child (not crashed or killed) */
    int child_starts;       /* runner processes started */
    int cut;                /* timings stopped at the cutoff */
    double wall_s;          /* in tess_runner_measure, seen from the parent */
    double load_s;          /* child: loading binaries */
    double check_s;         /* child: poison, first run, verification */
    double time_s;          /* child: timed repetitions */
} tess_runner_profile;

void tess_runner_profile_get(const tess_runner *r, tess_runner_profile *out);

/* Measures the backend's ceilings in an isolated child process: rates[k]
 * for each tess_ceiling_kind k (see the backend's calibrate). */
tess_status tess_backend_calibrate_isolated(const tess_backend_ops *be, const tess_device *dev,
                                            double rates[TESS_CEILING_COUNT]);

/* Records that this process now runs kernels itself (an OpenMP thread pool
 * or a GPU context exists). Children forked from such a process can
 * deadlock (OpenMP) or fail (CUDA), so runners and calibration are refused
 * from then on, with a message saying what to do instead. */
void tess_note_in_process_kernels(void);

#endif
