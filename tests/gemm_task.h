/*
 * gemm_task.h - what the gemm and conv2d tests share: a task from its dtypes
 * text ("bf16,f32,bf16": the inputs, the accumulation, the output), and the
 * path a config of the family's CUDA space takes.
 */
#ifndef TESS_TEST_GEMM_TASK_H
#define TESS_TEST_GEMM_TASK_H

#include <string.h>
#include "check.h"
#include "core/op.h"
#include "core/space.h"
#include "core/task.h"

static inline tess_task gemm_test_task(const tess_op *op, const char *dtypes, const int64_t *shape, int ndim,
                                       const char *attrs) {
    tess_dtype r[TESS_ROLE_COUNT];
    tess_task t;
    memset(&t, 0, sizeof t);
    CHECK_OK(tess_task_dtypes_parse(dtypes, r));
    CHECK_OK(tess_op_make_task(op, r[0], r[1], r[2], shape, ndim, attrs, &t));
    return t;
}

/* The label of config c's path in space s ("simt", "mma", "wgmma", ...), or NULL; it lives in s. */
static inline const char *gemm_config_path(const tess_space *s, const tess_config *c) {
    const int p = tess_space_param_index(s, "path");
    return p >= 0 ? tess_space_param_label(s, p, c->v[p]) : NULL;
}

#endif
