/*
 * test_gemm.c - the GEMM family on the cpu:
 *   - the float64 references of gemm (each layout, alpha, beta, the
 *     epilogues) and conv2d (padding, stride) against values worked out by
 *     hand;
 *   - tasks: keys, buffers (C only when beta is not 0, bias only for its
 *     epilogue), the tolerance growing with K, refused shapes, dtypes and
 *     filters with a message; e4m3 inputs for gemm only, not on the cpu;
 *   - the e4m3 dtype: rounding to nearest even, subnormals, saturation at
 *     448, and every finite byte stored back unchanged;
 *   - large tasks: the reference samples two elements of every row and one
 *     of every column and leaves the others NaN; verification accepts the
 *     sample's values, rejects one sampled element off by 100x its
 *     tolerance and an unsampled element left unwritten;
 *   - the C/OpenMP kernel: the default, the largest and a random config of
 *     gemm in f32, f64, bf16 and f16 inputs over every layout with C and the
 *     epilogues, and of conv2d (3x3 with stride 2, 1x1), on small shapes with
 *     remainders, verified by the hardware evaluator.
 */
#include <math.h>
#include <stdlib.h>
#include "core/problem.h"
#include "gemm/gemm.h"
#include "gemm_task.h"
#include "rowwise_check.h"
#include "transfer/builtin.h"

static const tess_backend_ops *cpu;
static tess_device cpu_dev;

/* ---- references ------------------------------------------------------------------ */

static void check_gemm_reference(void) {
    /* A = [1 2; 3 4], B = [5 6; 7 8]: AB = [19 22; 43 50], A^T B = [26 30; 38 44] */
    const int64_t shape[3] = {2, 2, 2};
    double a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4] = {1, 1, 1, -1}, d[4], bias[2] = {10, 20};
    tess_task t = gemm_test_task(&tess_op_gemm, "f64", shape, 3, "alpha=2,beta=3");
    void *bufs[4] = {a, b, c, d};
    CHECK_OK(tess_gemm_reference(&tess_op_gemm, &t, bufs));
    const double ab[4] = {19, 22, 43, 50};
    for (int i = 0; i < 4; i++) CHECK_NEAR(d[i], 2 * ab[i] + 3 * c[i], 0);
    t = gemm_test_task(&tess_op_gemm, "f64", shape, 3, "layout=tn,epilogue=bias");
    void *bufs_bias[4] = {a, b, bias, d};
    CHECK_OK(tess_gemm_reference(&tess_op_gemm, &t, bufs_bias));
    const double atb[4] = {26, 30, 38, 44};
    for (int i = 0; i < 4; i++) CHECK_NEAR(d[i], atb[i] + bias[i % 2], 0);
    /* layout nt: B given as stored transposed (N x K), the same product */
    double bt[4] = {5, 7, 6, 8};
    t = gemm_test_task(&tess_op_gemm, "f64", shape, 3, "layout=nt");
    void *bufs_nt[3] = {a, bt, d};
    CHECK_OK(tess_gemm_reference(&tess_op_gemm, &t, bufs_nt));
    for (int i = 0; i < 4; i++) CHECK_NEAR(d[i], ab[i], 0);
    /* gelu(x) = x Phi(x), silu(x) = x / (1 + e^-x) of the 1x1x1 product 1 * 0.5 */
    const int64_t one[3] = {1, 1, 1};
    double x = 1, y = 0.5, out = 0;
    void *bufs1[3] = {&x, &y, &out};
    t = gemm_test_task(&tess_op_gemm, "f64", one, 3, "epilogue=gelu");
    CHECK_OK(tess_gemm_reference(&tess_op_gemm, &t, bufs1));
    CHECK_NEAR(out, 0.5 * 0.5 * (1 + erf(0.5 / sqrt(2.0))), 1e-15);
    t = gemm_test_task(&tess_op_gemm, "f64", one, 3, "epilogue=silu");
    CHECK_OK(tess_gemm_reference(&tess_op_gemm, &t, bufs1));
    CHECK_NEAR(out, 0.5 / (1 + exp(-0.5)), 1e-15);
}

static void check_conv_reference(void) {
    /* one 3x3 image of ones, one channel, a 3x3 filter of ones, pad 1: the
     * output counts the pixels under the filter (4 at corners, 6 at edges, 9 in the middle) */
    const int64_t shape[5] = {1, 3, 3, 1, 1};
    double x[9], w[9], y[9];
    for (int i = 0; i < 9; i++) x[i] = w[i] = 1;
    tess_task t = gemm_test_task(&tess_op_conv2d, "f64", shape, 5, NULL);
    void *bufs[3] = {x, w, y};
    CHECK_OK(tess_gemm_reference(&tess_op_conv2d, &t, bufs));
    const double count[9] = {4, 6, 4, 6, 9, 6, 4, 6, 4};
    for (int i = 0; i < 9; i++) CHECK_NEAR(y[i], count[i], 0);
    /* stride 2: the output is 2x2, its pixels at (0,0), (0,2), (2,0), (2,2) */
    t = gemm_test_task(&tess_op_conv2d, "f64", shape, 5, "stride=2");
    CHECK_OK(tess_gemm_reference(&tess_op_conv2d, &t, bufs));
    for (int i = 0; i < 4; i++) CHECK_NEAR(y[i], 4, 0);
    /* two channels, a 1x1 filter (3, -1): y = 3 x0 - x1 per pixel */
    const int64_t pointwise[5] = {1, 1, 2, 2, 1};
    double x2[4] = {1, 2, 5, 7}, w2[2] = {3, -1};
    t = gemm_test_task(&tess_op_conv2d, "f64", pointwise, 5, "filter=1,pad=0");
    void *bufs2[3] = {x2, w2, y};
    CHECK_OK(tess_gemm_reference(&tess_op_conv2d, &t, bufs2));
    CHECK_NEAR(y[0], 1, 0);
    CHECK_NEAR(y[1], 8, 0);
}

/* ---- tasks ------------------------------------------------------------------------ */

static void check_tasks(void) {
    const int64_t shape[3] = {64, 32, 256};
    tess_task t = gemm_test_task(&tess_op_gemm, "bf16,f32,bf16", shape, 3, "layout=tn");
    char key[TESS_KEY_MAX];
    CHECK_OK(tess_task_key(&t, key, sizeof key));
    CHECK_MSG(strcmp(key, "gemm:bf16,f32,bf16:64x32x256:alpha=1,beta=0,epilogue=none,layout=tn") == 0, "key %s", key);
    tess_buffer_list l = {0};
    CHECK_OK(tess_gemm_buffers(&tess_op_gemm, &t, &l));
    CHECK(l.n == 3 && strcmp(l.spec[2].name, "D") == 0 && l.spec[0].count == 64 * 256 && l.spec[1].count == 256 * 32);
    tess_buffer_list_free(&l);
    CHECK_NEAR(tess_gemm_bytes(&tess_op_gemm, &t), 2.0 * (64 * 256 + 256 * 32 + 64 * 32), 0);
    CHECK_NEAR(tess_gemm_flops(&tess_op_gemm, &t), 2.0 * 64 * 32 * 256, 0);
    /* bf16 output: one unit in its last place, plus 4 sqrt(K) of f32's */
    CHECK_NEAR(tess_gemm_tolerance(&tess_op_gemm, &t), 0x1p-7 + 4 * 16 * 0x1p-23, 1e-15);
    const int64_t deeper[3] = {64, 32, 1024};
    tess_task deep = gemm_test_task(&tess_op_gemm, "f32", deeper, 3, NULL);
    tess_task shallow = gemm_test_task(&tess_op_gemm, "f32", shape, 3, NULL);
    CHECK(tess_gemm_tolerance(&tess_op_gemm, &deep) > tess_gemm_tolerance(&tess_op_gemm, &shallow));
    CHECK(tess_gemm_compute_unit(&tess_op_gemm, &t) == TESS_CEILING_MMA_BF16);
    t = gemm_test_task(&tess_op_gemm, "f32", shape, 3, "beta=0.5,epilogue=bias");
    CHECK_OK(tess_gemm_buffers(&tess_op_gemm, &t, &l));
    CHECK(l.n == 5 && strcmp(l.spec[2].name, "C") == 0 && strcmp(l.spec[3].name, "bias") == 0 && l.spec[3].count == 32);
    tess_buffer_list_free(&l);

    tess_task bad;
    CHECK(tess_op_make_task(&tess_op_gemm, TESS_BF16, TESS_BF16, TESS_BF16, shape, 3, NULL, &bad) == TESS_ERR_ARG &&
          strstr(tess_errmsg(), "bf16,f32,bf16"));
    CHECK(tess_op_make_task(&tess_op_gemm, TESS_F32, TESS_F32, TESS_F32, shape, 2, NULL, &bad) == TESS_ERR_ARG &&
          strstr(tess_errmsg(), "MxNxK"));
    CHECK(tess_op_make_task(&tess_op_gemm, TESS_F32, TESS_F64, TESS_F32, shape, 3, NULL, &bad) == TESS_ERR_ARG);
    CHECK(tess_op_make_task(&tess_op_gemm, TESS_F32, TESS_F32, TESS_F32, shape, 3, "layout=nx", &bad) == TESS_ERR_ARG);
    const int64_t image[5] = {2, 8, 8, 16, 32};
    CHECK(tess_op_make_task(&tess_op_conv2d, TESS_F32, TESS_F32, TESS_F32, image, 5, "filter=2", &bad) == TESS_ERR_ARG &&
          strstr(tess_errmsg(), "odd"));
    CHECK(tess_op_make_task(&tess_op_conv2d, TESS_F32, TESS_F32, TESS_F32, image, 5, "filter=3,pad=3", &bad) ==
          TESS_ERR_ARG && strstr(tess_errmsg(), "pad"));
    tess_task conv = gemm_test_task(&tess_op_conv2d, "bf16,f32,bf16", image, 5, "stride=2");
    tess_gemm_desc d;
    CHECK_OK(tess_gemm_describe(&tess_op_conv2d, &conv, &d));
    CHECK(d.m == 2 * 4 * 4 && d.n == 32 && d.k == 9 * 16 && d.b_trans && d.out_h == 4 && d.out_w == 4);
}

static void check_e4m3_tasks(void) {
    const int64_t shape[3] = {64, 32, 256};
    tess_task t = gemm_test_task(&tess_op_gemm, "fp8,f32,bf16", shape, 3, "layout=nt");
    CHECK(t.dtype == TESS_E4M3 && tess_gemm_compute_unit(&tess_op_gemm, &t) == TESS_CEILING_MMA_FP8);
    /* bf16's unit, f32's 4 sqrt(K), and 16 of the tensor cores' fp8 sums (13 bits) */
    CHECK_NEAR(tess_gemm_tolerance(&tess_op_gemm, &t), 0x1p-7 + 4 * 16 * 0x1p-23 + 16 * 0x1p-13, 1e-15);
    tess_buffer_list l = {0};
    CHECK_OK(tess_gemm_buffers(&tess_op_gemm, &t, &l));
    CHECK(l.n == 3 && tess_buffer_bytes(&l.spec[0]) == 64 * 256 && tess_buffer_bytes(&l.spec[2]) == 64 * 32 * 2);
    tess_buffer_list_free(&l);
    tess_space *s = NULL;
    CHECK(tess_op_space(&tess_op_gemm, &t, &cpu_dev, &s) == TESS_ERR_UNAVAILABLE && strstr(tess_errmsg(), "cuda"));
    tess_task bad;
    CHECK(tess_op_make_task(&tess_op_gemm, TESS_E4M3, TESS_F32, TESS_F16, shape, 3, NULL, &bad) == TESS_ERR_ARG &&
          strstr(tess_errmsg(), "e4m3,f32,bf16"));
    const int64_t image[5] = {2, 8, 8, 16, 32};
    CHECK(tess_op_make_task(&tess_op_conv2d, TESS_E4M3, TESS_F32, TESS_BF16, image, 5, NULL, &bad) == TESS_ERR_ARG &&
          strstr(tess_errmsg(), "gemm only"));
}

static void check_e4m3_values(void) {
    /* value stored -> value read: nearest even, subnormals in steps of 2^-9, saturation */
    static const double cases[][2] = {
        {448, 448},       {500, 448},     {-1e9, -448}, {0.3, 0.3125},      {1.0625, 1.0},     {1.1875, 1.25},
        {248, 256},       {0x1p-9, 0x1p-9}, {3 * 0x1p-10, 0x1p-8}, {0x1p-11, 0}, {-2.5, -2.5}, {0x1p-6, 0x1p-6},
    };
    uint8_t byte;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tess_dtype_store(&byte, TESS_E4M3, 0, cases[i][0]);
        CHECK_MSG(tess_dtype_load(&byte, TESS_E4M3, 0) == cases[i][1], "e4m3 of %g reads %g, not %g", cases[i][0],
                  tess_dtype_load(&byte, TESS_E4M3, 0), cases[i][1]);
    }
    int finite = 0;
    for (int b = 0; b < 256; b++) {
        const uint8_t v = (uint8_t)b;
        const double x = tess_dtype_load(&v, TESS_E4M3, 0);
        CHECK_MSG(isnan(x) == ((b & 0x7f) == 0x7f), "e4m3 byte 0x%02x reads %g", b, x);
        if (isnan(x)) continue;
        finite++;
        tess_dtype_store(&byte, TESS_E4M3, 0, x);
        CHECK_MSG(byte == v || (x == 0 && (byte & 0x7f) == 0), "e4m3 byte 0x%02x (%g) stores as 0x%02x", b, x, byte);
    }
    CHECK(finite == 254 && tess_dtype_size(TESS_E4M3) == 1 && strcmp(tess_dtype_name(TESS_E4M3), "e4m3") == 0);
}

/* ---- sampled references of large tasks ------------------------------------------ */

static void check_sampled(void) {
    const int64_t shape[3] = {2048, 1024, 160};   /* above the full reference's size */
    tess_task t = gemm_test_task(&tess_op_gemm, "f32", shape, 3, NULL);
    tess_problem *p = NULL;
    CHECK_OK(tess_problem_create(&tess_op_gemm, &t, 3, &p));
    if (!p) return;
    const float *want = p->host[2];
    const int64_t m = shape[0], n = shape[1];
    int64_t *per_row = calloc((size_t)m, sizeof *per_row), *per_col = calloc((size_t)n, sizeof *per_col), sampled = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            if (!isnan(want[i * n + j])) {
                per_row[i]++;
                per_col[j]++;
                sampled++;
            }
    bool every_row = true, every_col = true;
    for (int64_t i = 0; i < m; i++) every_row &= per_row[i] >= 1;
    for (int64_t j = 0; j < n; j++) every_col &= per_col[j] >= 1;
    CHECK(every_row && every_col && sampled <= 2 * m + n);
    /* a sampled element is the product's */
    const float *a = p->host[0], *b = p->host[1];
    int64_t i0 = 0, j0 = 0;
    while (isnan(want[j0])) j0++;
    double dot = 0;
    for (int64_t k = 0; k < shape[2]; k++) dot += (double)a[i0 * shape[2] + k] * b[k * n + j0];
    CHECK_NEAR(want[j0], dot, 1e-5 * (1 + fabs(dot)));
    float *got = malloc((size_t)(m * n) * sizeof *got);
    for (int64_t e = 0; e < m * n; e++) got[e] = isnan(want[e]) ? 0.0f : want[e];
    tess_result res;
    tess_result_init(&res, NULL);
    CHECK_MSG(tess_problem_verify(p, 2, got, &res), "the sample's own values: %s", res.message);
    got[j0] += 100 * (float)(p->tolerance[2] * (p->scale + fabs(want[j0])));
    tess_result_init(&res, NULL);
    CHECK(!tess_problem_verify(p, 2, got, &res) && strstr(res.message, "sampled"));
    got[j0] = want[j0];
    int64_t unsampled = 0;
    while (!isnan(want[unsampled])) unsampled++;
    got[unsampled] = NAN;
    tess_result_init(&res, NULL);
    CHECK(!tess_problem_verify(p, 2, got, &res) && strstr(res.message, "not written"));
    free(got);
    free(per_row);
    free(per_col);
    tess_problem_destroy(p);
}

/* ---- cpu kernels ------------------------------------------------------------------ */

static void check_cpu(const tess_op *op, const char *dtypes, const int64_t *shape, int ndim, const char *attrs,
                      gsl_rng *rng) {
    tess_task t = gemm_test_task(op, dtypes, shape, ndim, attrs);
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(op, &t, &cpu_dev, &s));
    if (!s) return;
    tess_config c[3];
    const int n = some_configs(s, rng, c, 1);
    tess_space_destroy(s);
    outcomes o = evaluate(cpu, &cpu_dev, op, &t, c, n);
    char key[TESS_KEY_MAX];
    tess_task_key(&t, key, sizeof key);
    CHECK_MSG(o.n[TESS_RESULT_OK] == n, "%s: %d of %d configs ok: %s", key, o.n[TESS_RESULT_OK], n, o.message);
    printf("%s on cpu: %d configs verified\n", key, o.n[TESS_RESULT_OK]);
}

int main(void) {
    CHECK_OK(tess_register_builtin());
    cpu = tess_backend_find("cpu");
    CHECK(cpu != NULL);
    if (!cpu) return check_finish("test_gemm");
    CHECK_OK(cpu->probe(&cpu_dev));
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 25);
    check_gemm_reference();
    check_conv_reference();
    check_tasks();
    check_e4m3_tasks();
    check_e4m3_values();
    check_sampled();
    const int64_t odd[3] = {37, 29, 45}, deep[3] = {5, 70, 300};
    check_cpu(&tess_op_gemm, "f32", odd, 3, NULL, rng);
    check_cpu(&tess_op_gemm, "f32", odd, 3, "layout=tt,alpha=-0.5,beta=2", rng);
    check_cpu(&tess_op_gemm, "f64", deep, 3, "layout=tn,epilogue=gelu", rng);
    check_cpu(&tess_op_gemm, "bf16,f32,bf16", odd, 3, "layout=nt,epilogue=bias", rng);
    check_cpu(&tess_op_gemm, "f16,f32,f32", deep, 3, "epilogue=silu", rng);
    const int64_t image[5] = {2, 9, 7, 5, 6}, pointwise[5] = {1, 6, 6, 16, 8};
    check_cpu(&tess_op_conv2d, "f32", image, 5, "stride=2", rng);
    check_cpu(&tess_op_conv2d, "bf16,f32,bf16", pointwise, 5, "filter=1,pad=0,epilogue=bias", rng);
    gsl_rng_free(rng);
    return check_finish("test_gemm");
}
