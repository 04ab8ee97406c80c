/*
 * attention_check.h - what the cpu and GPU tests of the attention family
 * share: tasks, and the default, the largest and sampled configs of a task
 * verified by a backend's hardware evaluator (rowwise_check.h's evaluate).
 */
#ifndef TESS_TEST_ATTENTION_CHECK_H
#define TESS_TEST_ATTENTION_CHECK_H

#include "attention/attention.h"
#include "rowwise_check.h"

static inline tess_task attention_task(const tess_op *op, tess_dtype d, const int64_t *shape, const char *attrs) {
    tess_task t;
    memset(&t, 0, sizeof t);
    CHECK_OK(tess_op_make_task(op, d, d, d, shape, op == &tess_op_attention ? 5 : 4, attrs, &t));
    return t;
}

/* The default, the largest and `samples` random configs of a task, with
 * `pin` fixing some parameters (NULL: none), all verified ok on be. */
static inline void check_attention_kernels(const tess_backend_ops *be, const tess_device *dev, const tess_op *op,
                                           tess_dtype d, const int64_t *shape, const char *attrs, const char *pin,
                                           int samples, gsl_rng *rng) {
    tess_task t = attention_task(op, d, shape, attrs);
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(op, &t, dev, &s));
    if (!s) return;
    if (pin) CHECK_OK(tess_space_pin(s, pin));
    tess_config c[2 + ROWWISE_MAX_SAMPLES];
    const int n = some_configs(s, rng, c, samples < ROWWISE_MAX_SAMPLES ? samples : ROWWISE_MAX_SAMPLES);
    tess_space_destroy(s);
    outcomes o = evaluate(be, dev, op, &t, c, n);
    char key[TESS_KEY_MAX];
    tess_task_key(&t, key, sizeof key);
    CHECK_MSG(o.n[TESS_RESULT_OK] == n, "%s %s: %d of %d configs ok: %s", key, pin ? pin : "", o.n[TESS_RESULT_OK], n,
              o.message);
    printf("%s on %s%s%s: %d configs verified\n", key, be->name, pin ? " " : "", pin ? pin : "", o.n[TESS_RESULT_OK]);
}

#endif
