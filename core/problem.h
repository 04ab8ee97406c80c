/*
 * problem.h - one instance of a task on the host: its buffers with inputs
 * filled (random, seeded) and the reference outputs computed, and the check
 * of a candidate's output against them. The runner verifies every candidate
 * with it (on a second instance, of another seed, too, so a kernel that
 * fits one set of inputs does not pass, and on typical inputs where the
 * operator has them); dispatch verifies a kernel's first use in a process
 * with it.
 */
#ifndef TESS_PROBLEM_H
#define TESS_PROBLEM_H

#include <math.h>
#include "op.h"
#include "result.h"

typedef struct tess_problem {
    const tess_op *op;              /* borrowed */
    tess_task task;
    tess_buffer_list buffers;
    /* Per buffer: the inputs for IN, the reference outputs for OUT and
     * INOUT, zeros for SCRATCH. */
    void **host;
    /* Per buffer: the inputs of INOUT buffers (what is uploaded before a
     * run); NULL for the others. */
    void **initial;
    double *tolerance;              /* per buffer, outputs: the accepted error */
    double scale;
    size_t working_set;             /* bytes of all buffers */
} tess_problem;

tess_status tess_problem_create(const tess_op *op, const tess_task *t, uint64_t seed, tess_problem **out);
/* The same on the operator's typical inputs (op->fill_typical, which it must have). */
tess_status tess_problem_create_typical(const tess_op *op, const tess_task *t, uint64_t seed, tess_problem **out);
void tess_problem_destroy(tess_problem *p);
/* Fills input buffer `index` (spec b) of task t as verification does: the
 * operator's own inputs, or uniform random in [-1, 1]. */
tess_status tess_problem_fill_input(const tess_op *op, const tess_task *t, const tess_buffer_spec *b, int index,
                                    void *host, uint64_t seed);
/* Number of buffers and buffer b's declaration. */
static inline int tess_problem_nbuf(const tess_problem *p) { return p->buffers.n; }
static inline const tess_buffer_spec *tess_problem_spec(const tess_problem *p, int b) { return &p->buffers.spec[b]; }
/* What to upload into buffer b before a run (NULL for OUT and SCRATCH). */
const void *tess_problem_input(const tess_problem *p, int b);

/* Checks output buffer b: every element written (the output was poisoned
 * with NaN before the run), NaN and Inf only where the reference has them,
 * and within tolerance * (scale + |ref|), or by the operator's verify hook.
 * On a mismatch fails res with TESS_RESULT_WRONG_RESULT and a message naming
 * the worst element, and returns false; on a match raises
 * res->metrics.max_error to the output's largest error (elementwise checks). */
bool tess_problem_verify(const tess_problem *p, int b, const void *got, tess_result *res);

/* Uploads the problem's inputs (IN and INOUT buffers) into bufs, one device
 * buffer per task buffer. */
tess_status tess_problem_upload(const tess_problem *p, const tess_backend_ops *be, void *ctx, void *const *bufs);

/* Bytes of the largest output buffer: the host buffer an output is
 * downloaded into for tess_problem_run_check. */
size_t tess_problem_largest_output(const tess_problem *p);

/* One verified run of a loaded kernel on bufs (one per buffer, inputs
 * uploaded): the in-place buffers restored from the problem's inputs, the
 * outputs poisoned, the kernel run once, then every output compared with
 * the reference: on the device where refs[b] holds a device copy of it and
 * the backend compares that dtype (an entry it cannot compare is released
 * and set to NULL, and the host checks it from then on), else downloaded
 * into check (tess_problem_largest_output bytes) and checked on the host.
 * refs may be NULL. Returns an error, with res failed as a runtime error,
 * when the backend failed (its context may be unusable); else TESS_OK with
 * *ok telling whether every output matched (res failed as a wrong result,
 * with the message, when not). */
tess_status tess_problem_run_check(const tess_problem *p, const tess_backend_ops *be, void *ctx, void *module,
                                   void *const *bufs, void **refs, void *check, tess_result *res, bool *ok);

/* The elementwise test of tess_problem_verify, for one pair of values:
 * 0 correct, 1 unwritten (NaN where the reference is not), 2 wrong. Shared
 * with the backends' device comparisons, which implement the same rule. */
static inline int tess_verify_element(double got, double want, double tol, double scale) {
    if (got != got) return want != want ? 0 : 1;
    if (want != want) return 2;
    if (got - got != 0 || want - want != 0) return got == want ? 0 : 2;   /* an Inf on either side */
    double d = got > want ? got - want : want - got;
    return d <= tol * (scale + (want < 0 ? -want : want)) ? 0 : 2;
}

/* The error of one element in the tolerance's unit, |got - want| / (scale +
 * |want|): 0 where both are NaN or the same infinity, infinite where only
 * one is not finite. What tess_kernel_metrics.max_error collects; the
 * backends' device comparisons measure it the same way. */
static inline double tess_problem_error(double got, double want, double scale) {
    if (got != got || want != want) return got != got && want != want ? 0 : INFINITY;
    if (got - got != 0 || want - want != 0) return got == want ? 0 : INFINITY;
    double d = got > want ? got - want : want - got, unit = scale + (want < 0 ? -want : want);
    return d == 0 ? 0 : unit > 0 ? d / unit : INFINITY;
}

#endif
