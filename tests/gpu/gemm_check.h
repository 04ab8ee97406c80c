/*
 * gemm_check.h - the GPU tests' check of one gemm or conv2d path: the
 * default, the largest and two random configs of a task's space pinned to
 * path=`path` (which may pin more: "wgmma,cluster=2"), verified by the
 * hardware evaluator against the float64 reference; and a task's default
 * config, unpinned, on the path it should take.
 */
#ifndef TESS_TEST_GEMM_CHECK_H
#define TESS_TEST_GEMM_CHECK_H

#include "cuda_harness.h"
#include "gemm/gemm.h"
#include "gemm_task.h"
#include "rowwise_check.h"

static inline void check_path(const tess_backend_ops *cuda, const tess_device *dev, const tess_op *op,
                              const char *dtypes, const int64_t *shape, int ndim, const char *attrs, const char *path,
                              gsl_rng *rng) {
    tess_task t = gemm_test_task(op, dtypes, shape, ndim, attrs);
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

/* The task's default config, unpinned: on path `path` (its space's label) and verified. */
static inline void check_default(const tess_backend_ops *cuda, const tess_device *dev, const tess_op *op,
                                 const char *dtypes, const int64_t *shape, int ndim, const char *attrs, const char *path) {
    tess_task t = gemm_test_task(op, dtypes, shape, ndim, attrs);
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(op, &t, dev, &s));
    if (!s) return;
    tess_config c;
    tess_space_default(s, &c);
    const char *label = gemm_config_path(s, &c);
    const bool on_path = label && strcmp(label, path) == 0;   /* the label lives in the space */
    char key[TESS_KEY_MAX], text[512];
    tess_task_key(&t, key, sizeof key);
    tess_config_format(s, &c, text, sizeof text);
    tess_space_destroy(s);
    CHECK_MSG(on_path, "%s: the default %s is not on path %s", key, text, path);
    outcomes o = evaluate(cuda, dev, op, &t, &c, 1);
    CHECK_MSG(o.n[TESS_RESULT_OK] == 1, "%s: the default %s: %s", key, text, o.message);
    printf("%s default %s on %s: verified\n", key, text, dev->name);
}

#endif
