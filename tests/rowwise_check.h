/*
 * rowwise_check.h - what the cpu and GPU tests of the row-wise operators and
 * the activations share: configs of a task (two extents) through the
 * hardware evaluator of a backend, and the planted unsafe shortcut (softmax
 * without max-subtraction) that must pass uniform inputs and fail on
 * typical ones.
 */
#ifndef TESS_TEST_ROWWISE_CHECK_H
#define TESS_TEST_ROWWISE_CHECK_H

#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <string.h>
#include "check.h"
#include "core/backend.h"
#include "core/error.h"
#include "core/evaluator.h"

#define ROWWISE_MAX_SAMPLES 8


typedef struct outcomes {
    int n[TESS_OUTCOME_COUNT];
    char message[512];   /* the first failure's */
} outcomes;

static inline void count_outcome(const tess_result *r, void *user) {
    outcomes *o = user;
    if (r->status != TESS_RESULT_OK && !o->message[0]) snprintf(o->message, sizeof o->message, "%s", r->message);
    o->n[r->status]++;
}

/* Configs c of t through the hardware evaluator of backend be. */
static inline outcomes evaluate(const tess_backend_ops *be, const tess_device *dev, const tess_op *op,
                                const tess_task *t, const tess_config *c, int n) {
    outcomes out = {{0}, ""};
    tess_hw_options o = tess_hw_options_default();
    o.timeout_s = 30;
    o.min_time_s = 0.001;
    tess_space *space = NULL;
    tess_evaluator *ev = NULL;
    CHECK_OK(tess_op_space(op, t, dev, &space));
    if (space) CHECK_OK(tess_evaluator_create_hw(op, t, space, be, dev, &o, &ev));
    if (ev) {
        CHECK_OK(ev->ops->evaluate(ev, c, n, count_outcome, &out));
        tess_evaluator_destroy(ev);
    }
    tess_space_destroy(space);
    return out;
}

/* The default, every parameter at its last legal value, and random configs. */
static inline int some_configs(const tess_space *s, gsl_rng *rng, tess_config *c, int nsamples) {
    tess_space_default(s, &c[0]);
    c[1] = c[0];
    for (int p = 0; p < tess_space_nparams(s); p++) {
        int keep = c[1].v[p], i = tess_space_param_size(s, p) - 1;
        for (; i > keep; i--) {
            c[1].v[p] = i;
            if (tess_space_valid(s, &c[1])) break;
        }
        c[1].v[p] = i;
    }
    for (int i = 0; i < nsamples; i++) CHECK_OK(tess_space_sample(s, rng, &c[2 + i]));
    return 2 + nsamples;
}

static inline tess_task rowwise_task(const char *op_name, tess_dtype d, int64_t rows, int64_t cols, const char *attrs) {
    tess_task t;
    memset(&t, 0, sizeof t);
    const int64_t shape[2] = {rows, cols};
    CHECK_OK(tess_op_make_task(tess_op_find(op_name), d, d, d, shape, 2, attrs, &t));
    return t;
}

/* The default, the largest and `samples` random configs of task t verified
 * on backend be (the unsafe shortcut max_sub=0 replaced by max_sub=1). */
static inline void check_task_kernels(const tess_backend_ops *be, const tess_device *dev, const tess_op *op,
                                      const tess_task *t, int samples, gsl_rng *rng) {
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(op, t, dev, &s));
    if (!s) return;
    tess_config c[2 + ROWWISE_MAX_SAMPLES];
    int n = some_configs(s, rng, c, samples < ROWWISE_MAX_SAMPLES ? samples : ROWWISE_MAX_SAMPLES);
    /* the unsafe shortcut fails typical inputs by design (check_planted_shortcut) */
    int max_sub = tess_space_param_index(s, "max_sub");
    for (int i = 0; i < n && max_sub >= 0; i++) c[i].v[max_sub] = (uint16_t)tess_space_value_index(s, max_sub, 1);
    tess_space_destroy(s);
    outcomes o = evaluate(be, dev, op, t, c, n);
    char key[TESS_KEY_MAX];
    tess_task_key(t, key, sizeof key);
    CHECK_MSG(o.n[TESS_RESULT_OK] == n, "%s: %d of %d configs ok: %s", key, o.n[TESS_RESULT_OK], n, o.message);
    printf("%s on %s: %d configs verified\n", key, be->name, o.n[TESS_RESULT_OK]);
}

/* The same for a task of two extents. */
static inline void check_kernels(const tess_backend_ops *be, const tess_device *dev, const char *op_name, tess_dtype d,
                          int64_t rows, int64_t cols, const char *attrs, int samples, gsl_rng *rng) {
    tess_task t = rowwise_task(op_name, d, rows, cols, attrs);
    check_task_kernels(be, dev, tess_op_find(op_name), &t, samples, rng);
}

/* The space of task t on dev with `pin` fixed (as --fix takes it) and its
 * default config in *c. NULL when the operator has no space there, or (a
 * failed check naming the violation) when that config is illegal; destroy
 * the space after use. */
static inline tess_space *pinned_space(const tess_op *op, const tess_task *t, const tess_device *dev, const char *pin,
                                       tess_config *c) {
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(op, t, dev, &s));
    if (!s) return NULL;
    CHECK_OK(tess_space_pin(s, pin));
    tess_space_default(s, c);
    const bool legal = tess_space_valid(s, c);
    CHECK_MSG(legal, "%s %s: the default violates %s", op->name, pin, tess_space_violation(s, c));
    if (legal) return s;
    tess_space_destroy(s);
    return NULL;
}

/* ---- shortcuts ------------------------------------------------------------------------- */

static inline bool has_param(const tess_device *dev, const tess_op *op, const tess_task *t, const char *name) {
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(op, t, dev, &s));
    bool has = s && tess_space_param_index(s, name) >= 0;
    tess_space_destroy(s);
    return has;
}

/* The CUDA kernels' pin for check_planted_shortcut (test_rowwise_gpu); CI
 * compiles it with max_sub=0 and 1 (test_cuda_templates), so a change of the
 * space that makes it illegal shows without a GPU. */
#define ROWWISE_CUDA_PLANTED_PIN \
    "vec=8,threads_per_row=32,rows_per_block=4,cache=registers,unroll=1,online=0,fast_exp=0,keep_exp=0"

/* Softmax without max-subtraction, under a budget: on uniform [-1, 1]
 * inputs only (the operator without typical inputs) it passes; with typical
 * inputs (rows of logits up to 100: exp overflows) it is wrong_result, and
 * the same config with the max subtracted passes. `pin` fixes the other
 * parameters ("threads=1,simd=1,online=0,fast_math=0"). */
static inline void check_planted_shortcut(const tess_backend_ops *be, const tess_device *dev, const char *pin) {
    const tess_op *sm = tess_op_find("softmax");
    tess_task exact = rowwise_task("softmax", TESS_BF16, 8, 256, NULL);
    tess_task budget = rowwise_task("softmax", TESS_BF16, 8, 256, "error_budget=0.01");
    CHECK(!has_param(dev, sm, &exact, "max_sub") && has_param(dev, sm, &budget, "max_sub"));
    char text[512];
    tess_config unsafe, safe;
    snprintf(text, sizeof text, "%s,max_sub=0", pin);
    tess_space *s = pinned_space(sm, &budget, dev, text, &unsafe);
    if (!s) return;
    tess_space_destroy(s);
    snprintf(text, sizeof text, "%s,max_sub=1", pin);
    if (!(s = pinned_space(sm, &budget, dev, text, &safe))) return;
    tess_space_destroy(s);

    tess_op uniform_only = *sm;
    uniform_only.fill_typical = NULL;
    outcomes o = evaluate(be, dev, &uniform_only, &budget, &unsafe, 1);
    CHECK_MSG(o.n[TESS_RESULT_OK] == 1, "%s: max_sub=0 on uniform inputs: %s", be->name, o.message);
    o = evaluate(be, dev, sm, &budget, &unsafe, 1);
    CHECK_MSG(o.n[TESS_RESULT_WRONG_RESULT] == 1 && strstr(o.message, "typical inputs"),
              "%s: max_sub=0 on typical inputs: '%s'", be->name, o.message);
    o = evaluate(be, dev, sm, &budget, &safe, 1);
    CHECK_MSG(o.n[TESS_RESULT_OK] == 1, "%s: max_sub=1 on typical inputs: %s", be->name, o.message);
    printf("softmax without max-subtraction on %s: passes uniform inputs, rejected on typical inputs\n", be->name);
}

#endif
