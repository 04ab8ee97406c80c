/*
 * test_attention.c - the attention family on the cpu:
 *   - the float64 references against values worked out by hand (softmax
 *     weights 1/3 and 2/3, the causal mask, the log-sum-exp), the GQA
 *     mapping (query heads 0,1 read K/V head 0, heads 2,3 head 1) and the
 *     paged decode reference against the prefill reference of the same
 *     data laid out contiguously;
 *   - tasks: keys with every attribute, FLOPs halved (exactly) by the
 *     causal mask, refusals with a message (kv_heads not dividing H, causal
 *     Sq > Skv, page_size 24, D above 256, f64, the wrong rank);
 *   - verification of large tasks: the reference samples rows, and the hook
 *     still catches an unwritten element in a row it did not compute and a
 *     wrong one in a row it did;
 *   - the cpu kernels: the default, largest and sampled configs of prefill
 *     (f32, bf16, f16; causal, GQA, shapes with remainders) and of decode
 *     (paged and unpaged, GQA) verified by the hardware evaluator;
 *   - decode's run-time KV length: one binary, run with Skv shorter than
 *     the cache, matches the reference over that many keys.
 */
#include <math.h>
#include <stdlib.h>
#include "attention_check.h"
#include "transfer/builtin.h"

static const tess_backend_ops *cpu;
static tess_device cpu_dev;

/* ---- references ------------------------------------------------------------------ */

static void check_reference_by_hand(void) {
    /* D=1, scale 1: scores (0, ln 2) give weights 1/3, 2/3 of v = (1, 4): o = 3, lse = ln 3;
     * causal, row 0 sees key 0 alone: o = 1, lse = 0 */
    const int64_t shape[] = {1, 1, 2, 2, 1};
    tess_task t = attention_task(&tess_op_attention, TESS_F32, shape, "causal=1,scale=1");
    float q[2] = {1, 1}, k[2] = {0, (float)log(2.0)}, v[2] = {1, 4}, o[2], lse[2];
    void *bufs[5] = {q, k, v, o, lse};
    CHECK_OK(tess_op_attention.reference(&tess_op_attention, &t, bufs));
    CHECK_NEAR(o[0], 1, 1e-6);
    CHECK_NEAR(lse[0], 0, 1e-6);
    CHECK_NEAR(o[1], 3, 1e-6);
    CHECK_NEAR(lse[1], log(3.0), 1e-6);
}

/* Four query heads on two K/V heads whose values are 1 and 2 everywhere. */
static void check_gqa_mapping(void) {
    const int64_t shape[] = {1, 4, 3, 5, 2};
    tess_task t = attention_task(&tess_op_attention, TESS_F32, shape, "kv_heads=2");
    float q[4 * 3 * 2], k[2 * 5 * 2], v[2 * 5 * 2], o[4 * 3 * 2], lse[12];
    for (int i = 0; i < 24; i++) q[i] = (float)(i % 5) * 0.1f;
    for (int i = 0; i < 20; i++) {
        k[i] = (float)(i % 7) * 0.2f;
        v[i] = i < 10 ? 1.0f : 2.0f;
    }
    void *bufs[5] = {q, k, v, o, lse};
    CHECK_OK(tess_op_attention.reference(&tess_op_attention, &t, bufs));
    for (int i = 0; i < 24; i++) CHECK_NEAR(o[i], i < 12 ? 1 : 2, 1e-6);
}

/* Decode over a shuffled paged cache equals prefill (Sq = 1) over the same rows in order. */
static void check_paged_reference(void) {
    enum { B = 2, H = 4, Hkv = 2, S = 40, D = 8, P = 16, pps = 3 };
    const int64_t dshape[] = {B, H, S, D}, pshape[] = {B, H, 1, S, D};
    tess_task dt = attention_task(&tess_op_attention_decode, TESS_F32, dshape, "kv_heads=2,page_size=16");
    tess_task pt = attention_task(&tess_op_attention, TESS_F32, pshape, "kv_heads=2");
    tess_problem *p = NULL;
    CHECK_OK(tess_problem_create(&tess_op_attention_decode, &dt, 5, &p));
    if (!p) return;
    const float *kc = p->host[1], *vc = p->host[2];
    const int32_t *table = p->host[3];
    float *k = calloc((size_t)(B * Hkv * S * D), sizeof *k), *v = calloc((size_t)(B * Hkv * S * D), sizeof *v);
    float o[B * H * D], lse[B * H];
    bool permutation = true;
    int seen[B * pps] = {0};
    for (int64_t i = 0; i < B * pps; i++) permutation &= table[i] >= 0 && table[i] < B * pps && !seen[table[i]]++;
    CHECK_MSG(permutation, "the block table is a permutation of the pages");
    for (int64_t b = 0; b < B && permutation; b++)
        for (int64_t h = 0; h < Hkv; h++)
            for (int64_t j = 0; j < S; j++)
                for (int64_t e = 0; e < D; e++) {
                    const int64_t from = ((table[b * pps + j / P] * Hkv + h) * P + j % P) * D + e,
                                  to = ((b * Hkv + h) * S + j) * D + e;
                    k[to] = kc[from];
                    v[to] = vc[from];
                }
    void *bufs[5] = {p->host[0], k, v, o, lse};
    CHECK_OK(tess_op_attention.reference(&tess_op_attention, &pt, bufs));
    const float *want_o = p->host[4], *want_lse = p->host[5];
    for (int64_t i = 0; i < B * H * D; i++) CHECK_NEAR(want_o[i], o[i], 1e-6);
    for (int64_t i = 0; i < B * H; i++) CHECK_NEAR(want_lse[i], lse[i], 1e-6);
    free(k);
    free(v);
    tess_problem_destroy(p);
}

/* ---- tasks ------------------------------------------------------------------------- */

static void expect_refused(const tess_op *op, const int64_t *shape, int ndim, tess_dtype d, const char *attrs,
                           const char *words) {
    tess_task t;
    tess_status st = tess_op_make_task(op, d, d, d, shape, ndim, attrs, &t);
    CHECK_MSG(st == TESS_ERR_ARG && strstr(tess_errmsg(), words), "%s %s: status %d, '%s'", op->name,
              attrs ? attrs : "", st, tess_errmsg());
}

static void check_tasks(void) {
    const int64_t shape[] = {4, 16, 4096, 4096, 128}, dec[] = {8, 32, 32768, 128};
    tess_task t = attention_task(&tess_op_attention, TESS_BF16, shape, "causal=1");
    char key[TESS_KEY_MAX];
    CHECK_OK(tess_task_key(&t, key, sizeof key));
    CHECK_MSG(strcmp(key, "attention:bf16:4x16x4096x4096x128:causal=1,kv_heads=0,scale=0") == 0, "key %s", key);
    const double full = 4.0 * 4 * 16 * 4096.0 * 4096 * 128;
    CHECK_NEAR(tess_op_attention.flops(&tess_op_attention, &t) / full, 4097.0 / 8192, 1e-12);
    t = attention_task(&tess_op_attention_decode, TESS_BF16, dec, "kv_heads=8");
    CHECK_OK(tess_task_key(&t, key, sizeof key));
    CHECK_MSG(strcmp(key, "attention_decode:bf16:8x32x32768x128:kv_heads=8,page_size=16,scale=0") == 0, "key %s", key);
    /* bytes: K and V once (8 K/V heads), q, o, lse, the block table */
    const double bytes = 2.0 * (2 * 8 * 32 * 128 + 2.0 * 8 * 8 * 32768 * 128) + 4 * 8 * 32 + 4 * 8 * 2048;
    CHECK_NEAR(tess_op_attention_decode.bytes(&tess_op_attention_decode, &t), bytes, 0);

    const int64_t small[] = {1, 6, 8, 4, 16};
    expect_refused(&tess_op_attention, small, 5, TESS_BF16, "kv_heads=4", "must divide H=6");
    expect_refused(&tess_op_attention, small, 5, TESS_BF16, "causal=1", "Sq <= Skv");
    expect_refused(&tess_op_attention, small, 5, TESS_F64, NULL, "not f64");
    expect_refused(&tess_op_attention, small, 4, TESS_BF16, NULL, "BxHxSqxSkvxD");
    const int64_t wide[] = {1, 2, 8, 8, 512};
    expect_refused(&tess_op_attention, wide, 5, TESS_BF16, NULL, "above 256");
    const int64_t dsmall[] = {1, 2, 64, 16};
    expect_refused(&tess_op_attention_decode, dsmall, 4, TESS_BF16, "page_size=24", "page_size=24");
}

/* A task too large to compute every row of: the hook checks the sampled
 * rows and that every element was written. */
static void check_sampled_verification(void) {
    const int64_t shape[] = {1, 2, 1024, 4096, 128};
    tess_task t = attention_task(&tess_op_attention, TESS_F32, shape, NULL);
    const attention_dims d = attention_dims_of(&t);
    const int64_t stride = attention_reference_stride(&d);
    CHECK_MSG(stride > 1 && stride % 2 == 1, "stride %lld", (long long)stride);
    const int64_t n = 2 * 1024 * 128;
    float *want = calloc((size_t)n, sizeof *want), *got = calloc((size_t)n, sizeof *got);
    tess_result res;
    tess_result_init(&res, NULL);
    CHECK(tess_op_attention.verify(&tess_op_attention, &t, 3, got, want, &res));
    got[(stride + 1) * 128] = NAN;   /* a row the reference skipped */
    tess_result_init(&res, NULL);
    CHECK(!tess_op_attention.verify(&tess_op_attention, &t, 3, got, want, &res) && strstr(res.message, "not written"));
    got[(stride + 1) * 128] = 0;
    got[stride * 128 + 5] = 0.5f;   /* a row it computed */
    tess_result_init(&res, NULL);
    CHECK(!tess_op_attention.verify(&tess_op_attention, &t, 3, got, want, &res) && strstr(res.message, "wrong"));
    free(want);
    free(got);
}

/* ---- kernels ------------------------------------------------------------------------ */

int main(void) {
    CHECK_OK(tess_register_builtin());
    cpu = tess_backend_find("cpu");
    CHECK(cpu != NULL);
    if (!cpu) return check_finish("test_attention");
    CHECK_OK(cpu->probe(&cpu_dev));
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 11);
    check_reference_by_hand();
    check_gqa_mapping();
    check_paged_reference();
    check_tasks();
    check_sampled_verification();
    const int64_t odd[] = {2, 4, 37, 45, 24}, square[] = {1, 2, 64, 64, 32}, tall[] = {1, 3, 70, 19, 8};
    check_attention_kernels(cpu, &cpu_dev, &tess_op_attention, TESS_F32, odd, "causal=1,kv_heads=2", NULL, 2, rng);
    check_attention_kernels(cpu, &cpu_dev, &tess_op_attention, TESS_BF16, square, "causal=1", NULL, 2, rng);
    check_attention_kernels(cpu, &cpu_dev, &tess_op_attention, TESS_F16, tall, "kv_heads=1,scale=0.5", NULL, 1, rng);
    const int64_t dec[] = {3, 8, 333, 32}, dec_flat[] = {2, 4, 100, 20};
    check_attention_kernels(cpu, &cpu_dev, &tess_op_attention_decode, TESS_BF16, dec, "kv_heads=2,page_size=16", NULL,
                            2, rng);
    check_attention_kernels(cpu, &cpu_dev, &tess_op_attention_decode, TESS_F32, dec_flat, "page_size=0", NULL, 1, rng);
    check_attention_kernels(cpu, &cpu_dev, &tess_op_attention_decode, TESS_F16, dec, "kv_heads=8,page_size=64",
                            "splits=64", 0, rng);
    check_decode_runtime_length(cpu, &cpu_dev, TESS_F32, 1e-5);
    gsl_rng_free(rng);
    return check_finish("test_attention");
}
