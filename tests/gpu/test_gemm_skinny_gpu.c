/*
 * test_gemm_skinny_gpu.c - the skinny GEMM path (few rows of A, B stored
 * N x K) and K split over blocks on the GPU: skinny on tasks of 1 to 64
 * rows, both layouts of A, bf16 and f16 with f32 or 16-bit outputs, C and
 * the epilogues, columns and K with remainders, the default, the largest
 * and random configs, and pinned splits of K (one block per column tile,
 * and partial sums added across blocks); the mma path with K split over
 * blocks (kslices) on tasks of few tiles, with C and an epilogue. Each
 * config is verified by the hardware evaluator against the float64
 * reference (sampled rows and columns for the large tasks).
 */
#include "cuda_harness.h"
#include "gemm/gemm.h"
#include "rowwise_check.h"
#include "transfer/builtin.h"

static void check_pinned(const tess_backend_ops *cuda, const tess_device *dev, const char *dtypes, const int64_t *shape,
                         const char *attrs, const char *pin, int samples, gsl_rng *rng) {
    tess_dtype r[TESS_ROLE_COUNT];
    tess_task t;
    CHECK_OK(tess_task_dtypes_parse(dtypes, r));
    CHECK_OK(tess_op_make_task(&tess_op_gemm, r[0], r[1], r[2], shape, 3, attrs, &t));
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(&tess_op_gemm, &t, dev, &s));
    if (!s) return;
    CHECK_OK(tess_space_pin(s, pin));
    tess_config c[2 + ROWWISE_MAX_SAMPLES];
    const int n = some_configs(s, rng, c, samples);
    tess_space_destroy(s);
    outcomes o = evaluate(cuda, dev, &tess_op_gemm, &t, c, n);
    char key[TESS_KEY_MAX];
    tess_task_key(&t, key, sizeof key);
    CHECK_MSG(o.n[TESS_RESULT_OK] == n, "%s %s: %d of %d configs ok: %s", key, pin, o.n[TESS_RESULT_OK], n, o.message);
    printf("%s %s on %s: %d configs verified\n", key, pin, dev->name, o.n[TESS_RESULT_OK]);
}

int main(void) {
    CHECK_OK(tess_register_builtin());
    tess_device dev;
    const tess_backend_ops *cuda = cuda_backend_or_skip(&dev);
    if (!cuda) return 77;
    if (dev.cc_major < 8) {
        printf("skipped: the skinny path needs sm_80 (this GPU is sm_%d%d)\n", dev.cc_major, dev.cc_minor);
        return 77;
    }
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 31);
    const int64_t decode[3] = {16, 4096, 4096}, gemv[3] = {1, 8192, 8192}, few[3] = {5, 300, 264},
                  ragged[3] = {13, 1000, 1032}, rows40[3] = {40, 2048, 1024}, rows64[3] = {64, 520, 4096};
    check_pinned(cuda, &dev, "bf16,f32,bf16", decode, "layout=nt", "path=skinny", 2, rng);
    check_pinned(cuda, &dev, "bf16,f32,bf16", decode, "layout=nt,epilogue=gelu", "path=skinny,ksplit=1", 0, rng);
    check_pinned(cuda, &dev, "bf16,f32,bf16", decode, "layout=nt,beta=1", "path=skinny,ksplit=16,unroll=4", 0, rng);
    check_pinned(cuda, &dev, "bf16,f32,bf16", gemv, "layout=nt", "path=skinny", 1, rng);
    check_pinned(cuda, &dev, "f16,f32,f32", few, "layout=tt,beta=0.5,epilogue=bias", "path=skinny", 2, rng);
    check_pinned(cuda, &dev, "bf16,f32,bf16", ragged, "layout=nt,epilogue=gelu,alpha=0.5", "path=skinny", 2, rng);
    check_pinned(cuda, &dev, "bf16,f32,bf16", ragged, "layout=tt,epilogue=silu", "path=skinny,ksplit=4", 0, rng);
    check_pinned(cuda, &dev, "bf16,f32,bf16", rows40, "layout=nt,epilogue=silu", "path=skinny", 1, rng);
    check_pinned(cuda, &dev, "f16,f32,f16", rows64, "layout=nt,beta=2", "path=skinny,ksplit=32", 0, rng);
    const int64_t prefill[3] = {128, 2048, 4096}, split_tn[3] = {96, 1000, 2056};
    check_pinned(cuda, &dev, "bf16,f32,bf16", prefill, "layout=nt", "path=mma,kslices=4", 1, rng);
    check_pinned(cuda, &dev, "f16,f32,f32", split_tn, "layout=tn,beta=1,epilogue=gelu", "path=mma,kslices=8", 1, rng);
    gsl_rng_free(rng);
    return check_finish("test_gemm_skinny_gpu");
}
