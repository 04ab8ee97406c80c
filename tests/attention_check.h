/*
 * attention_check.h - what the cpu and GPU tests of the attention family
 * share: tasks, and the default, the largest and sampled configs of a task
 * verified by a backend's hardware evaluator (rowwise_check.h's evaluate).
 */
#ifndef TESS_TEST_ATTENTION_CHECK_H
#define TESS_TEST_ATTENTION_CHECK_H

#include "attention/attention.h"
#include "core/problem.h"
#include "rowwise_check.h"

static inline tess_task attention_task(const tess_op *op, tess_dtype d, const int64_t *shape, const char *attrs) {
    tess_task t;
    memset(&t, 0, sizeof t);
    CHECK_OK(tess_op_make_task(op, d, d, d, shape, op == &tess_op_attention ? 5 : 4, attrs, &t));
    return t;
}

/* The default, the largest and `samples` random configs of a task, with
 * `pin` fixing some parameters (NULL: none), all the legal ones verified ok on be. */
static inline void check_attention_kernels(const tess_backend_ops *be, const tess_device *dev, const tess_op *op,
                                           tess_dtype d, const int64_t *shape, const char *attrs, const char *pin,
                                           int samples, gsl_rng *rng) {
    tess_task t = attention_task(op, d, shape, attrs);
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(op, &t, dev, &s));
    if (!s) return;
    if (pin) CHECK_OK(tess_space_pin(s, pin));
    tess_config c[2 + ROWWISE_MAX_SAMPLES];
    const int all = some_configs(s, rng, c, samples < ROWWISE_MAX_SAMPLES ? samples : ROWWISE_MAX_SAMPLES);
    /* A pin can make the template's default (and the largest config grown
     * from it) illegal: the default kernel's tiles need not suit the pinned
     * kernel. Those are left out; the samples are legal by construction. */
    int n = 0;
    for (int i = 0; i < all; i++)
        if (tess_space_valid(s, &c[i])) c[n++] = c[i];
    CHECK_MSG(n >= all - 2, "only %d of %d sampled configs are legal", n, all);
    tess_space_destroy(s);
    outcomes o = evaluate(be, dev, op, &t, c, n);
    char key[TESS_KEY_MAX];
    tess_task_key(&t, key, sizeof key);
    CHECK_MSG(o.n[TESS_RESULT_OK] == n, "%s %s: %d of %d configs ok: %s", key, pin ? pin : "", o.n[TESS_RESULT_OK], n,
              o.message);
    printf("%s on %s%s%s: %d configs verified\n", key, be->name, pin ? " " : "", pin ? pin : "", o.n[TESS_RESULT_OK]);
}

/* Decode compiled once for a cache of 300 rows and run on backend be for
 * 123 of them matches the reference over 123 keys within tol. */
static inline void check_decode_runtime_length(const tess_backend_ops *be, const tess_device *dev, tess_dtype dtype,
                                               double tol) {
    const int64_t shape[] = {2, 4, 300, 16};
    tess_task t = attention_task(&tess_op_attention_decode, dtype, shape, "kv_heads=2,page_size=32");
    tess_problem *p = NULL;
    tess_space *s = NULL;
    CHECK_OK(tess_problem_create(&tess_op_attention_decode, &t, 9, &p));
    CHECK_OK(tess_op_space(&tess_op_attention_decode, &t, dev, &s));
    if (!p || !s) return;
    tess_config c;
    tess_space_default(s, &c);
    tess_kernel_source src;
    memset(&src, 0, sizeof src);
    CHECK_OK(tess_op_emit(&tess_op_attention_decode, &t, dev, s, &c, &src));
    const int i = tess_kernel_source_find_scalar(&src, "Skv");
    CHECK(i >= 0);
    if (i >= 0) src.scalar[i].value.i64 = 123;
    tess_blob bin = {0};
    char *log = NULL;
    void *ctx = NULL, *module = NULL, *bufs[8] = {0};
    CHECK_OK(be->compile(dev, &src, &bin, &log));
    CHECK_OK(be->open(dev, &ctx));
    CHECK_OK(be->load(ctx, &bin, &src, &module, NULL));
    const int n = tess_problem_nbuf(p);
    for (int b = 0; b < n && module; b++) {
        const size_t bytes = tess_buffer_bytes(tess_problem_spec(p, b));
        CHECK_OK(be->alloc(ctx, bytes, &bufs[b]));
        const void *in = tess_problem_input(p, b);
        CHECK_OK(in ? be->upload(ctx, bufs[b], in, bytes) : be->poison(ctx, bufs[b], bytes));
    }
    if (module) CHECK_OK(be->run(ctx, module, bufs, n));
    const attention_dims d = attention_dims_of(&t);
    const int32_t *table = p->host[3];
    int64_t rows[123];
    double o[16], lse, scores[123], worst = 0;
    float got_lse[8];
    char got_o[8 * 16 * 4];
    if (module) CHECK_OK(be->download(ctx, got_o, bufs[4], 8 * 16 * tess_dtype_size(dtype)));
    if (module) CHECK_OK(be->download(ctx, got_lse, bufs[5], sizeof got_lse));
    for (int64_t r = 0; r < 8 && module; r++) {   /* every output, unwritten (NaN) included */
        const int64_t b = r / 4, hk = r % 4 / 2;
        for (int64_t j = 0; j < 123; j++) rows[j] = (((int64_t)table[b * 10 + j / 32] * 2 + hk) * 32 + j % 32) * 16;
        attention_reference_row(&d, dtype, p->host[0], r * 16, p->host[1], p->host[2], rows, 123, o, &lse, scores);
        for (int e = 0; e < 16; e++) worst = isnan(tess_dtype_load(got_o, dtype, r * 16 + e)) ? INFINITY
                                                               : fmax(worst, fabs(tess_dtype_load(got_o, dtype, r * 16 + e) - o[e]));
        worst = isnan(got_lse[r]) ? INFINITY : fmax(worst, fabs(got_lse[r] - lse));
    }
    CHECK_MSG(module && worst < tol, "%s: decode of 123 keys of 300: error %g", be->name, worst);
    for (int b = 0; b < n; b++)
        if (bufs[b]) be->release(ctx, bufs[b]);
    if (module) be->unload(ctx, module);
    if (ctx) be->close(ctx);
    free(log);
    tess_blob_free(&bin);
    tess_kernel_source_free(&src);
    tess_space_destroy(s);
    tess_problem_destroy(p);
}

#endif
