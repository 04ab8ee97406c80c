/*
 * gemm_check.h - the GPU tests' check of one gemm or conv2d path: the
 * default, the largest and two random configs of a task's space pinned to
 * path=`path` (which may pin more: "wgmma,cluster=2"), verified by the
 * hardware evaluator against the float64 reference.
 */
#ifndef TESS_TEST_GEMM_CHECK_H
#define TESS_TEST_GEMM_CHECK_H

#include "cuda_harness.h"
#include "gemm/gemm.h"
#include "rowwise_check.h"

static inline void check_path(const tess_backend_ops *cuda, const tess_device *dev, const tess_op *op,
                              const char *dtypes, const int64_t *shape, int ndim, const char *attrs, const char *path,
                              gsl_rng *rng) {
    tess_dtype r[TESS_ROLE_COUNT];
    tess_task t;
    CHECK_OK(tess_task_dtypes_parse(dtypes, r));
    CHECK_OK(tess_op_make_task(op, r[0], r[1], r[2], shape, ndim, attrs, &t));
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(op, &t, dev, &s));
    if (!s) return;
    char pin[128], key[TESS_KEY_MAX];
    snprintf(pin, sizeof pin, "path=%s", path);
    CHECK_OK(tess_space_pin(s, pin));
    tess_config c[2 + 2];
    const int n = some_configs(s, rng, c, 2);
    tess_space_destroy(s);
    outcomes o = evaluate(cuda, dev, op, &t, c, n);
    tess_task_key(&t, key, sizeof key);
    CHECK_MSG(o.n[TESS_RESULT_OK] == n, "%s %s: %d of %d configs ok: %s", key, pin, o.n[TESS_RESULT_OK], n, o.message);
    printf("%s %s on %s: %d configs verified\n", key, pin, dev->name, o.n[TESS_RESULT_OK]);
}

#endif
