/*
 * problem.h - one instance of a task on the host: its buffers with inputs
 * filled (random, seeded) and the reference outputs computed, and the check
 * of a candidate's output against them. The runner verifies every candidate
 * with it; dispatch verifies a kernel's first use in a process with it.
 */
#ifndef TESS_PROBLEM_H
#define TESS_PROBLEM_H

#include "op.h"
#include "result.h"

typedef struct tess_problem {
    tess_buffer_spec spec[TESS_MAX_BUFFERS];
    int nbuf;
    void *host[TESS_MAX_BUFFERS];   /* inputs for IN buffers, reference outputs for OUT, zeros otherwise */
    double tolerance, scale;
    size_t working_set;             /* bytes of all buffers */
} tess_problem;

tess_status tess_problem_create(const tess_op *op, const tess_task *t, uint64_t seed, tess_problem **out);
void tess_problem_destroy(tess_problem *p);
size_t tess_buffer_bytes(const tess_buffer_spec *b);

/* Checks output buffer b: every element written (the output was poisoned
 * with NaN before the run) and within tolerance * (scale + |ref|). On a
 * mismatch fails res with TESS_RESULT_WRONG_RESULT and a message naming the
 * worst element, and returns false. */
bool tess_problem_verify(const tess_problem *p, int b, const void *got, tess_result *res);

#endif
