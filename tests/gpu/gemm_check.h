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

/* The task's default config, unpinned: on path `path` (its space's label) and verified. */
static inline void check_default(const tess_backend_ops *cuda, const tess_device *dev, const tess_op *op,
                                 const char *dtypes, const int64_t *shape, int ndim, const char *attrs, const char *path) {
    tess_dtype r[TESS_ROLE_COUNT];
    tess_task t;
    CHECK_OK(tess_task_dtypes_parse(dtypes, r));
    CHECK_OK(tess_op_make_task(op, r[0], r[1], r[2], shape, ndim, attrs, &t));
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(op, &t, dev, &s));
    if (!s) return;
    tess_config c;
    tess_space_default(s, &c);
    const int p = tess_space_param_index(s, "path");
    const char *label = p >= 0 ? tess_space_param_label(s, p, c.v[p]) : NULL;
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
