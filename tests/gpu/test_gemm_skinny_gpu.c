/*
 * test_gemm_skinny_gpu.c - the skinny GEMM path (few rows of A, B stored
 * N x K) and K split over blocks on the GPU: skinny on tasks of 1 to 64
 * rows, both layouts of A, bf16 and f16 with f32 or 16-bit outputs, C and
 * the epilogues, columns and K with remainders, the default, the largest
 * and random configs, and pinned splits of K (one block per column tile,
 * and partial sums added across blocks: from L2 by a tile's last block, or
 * on sm_90 for up to 8 slices within a cluster), registers capped (ctas=2);
 * the mma path with K split over
 * blocks (kslices) on tasks of few tiles, with C and an epilogue; on sm_90
 * the wgmma path with K split over its (tile, slice) units. Each
 * config is verified by the hardware evaluator against the float64
 * reference (sampled rows and columns for the large tasks). Without a GPU
 * it checks only that every pinned sub-space holds its default on an H200.
 */
#include "cuda_harness.h"
#include "gemm/gemm.h"
#include "gemm_task.h"
#include "h200.h"
#include "rowwise_check.h"
#include "transfer/builtin.h"

/* A task, the sub-space pinned, the random configs verified beside its default and largest, and the
 * compute capability it needs (0: 8). */
typedef struct skinny_case {
    const char *dtypes;
    int64_t shape[3];
    const char *attrs, *pin;
    int samples, cc_major;
} skinny_case;

static const skinny_case cases[] = {
    {"bf16,f32,bf16", {16, 4096, 4096}, "layout=nt", "path=skinny", 2},
    {"bf16,f32,bf16", {16, 4096, 4096}, "layout=nt,epilogue=gelu", "path=skinny,ksplit=1", 0},
    {"bf16,f32,bf16", {16, 4096, 4096}, "layout=nt,beta=1", "path=skinny,ksplit=16,unroll=2", 0},
    {"bf16,f32,bf16", {16, 4096, 4096}, "layout=nt", "path=skinny,ctas=2", 1},
    {"bf16,f32,bf16", {1, 8192, 8192}, "layout=nt", "path=skinny", 1},
    {"f16,f32,f32", {5, 300, 264}, "layout=tt,beta=0.5,epilogue=bias", "path=skinny", 2},
    {"bf16,f32,bf16", {13, 1000, 1032}, "layout=nt,epilogue=gelu,alpha=0.5", "path=skinny", 2},
    {"bf16,f32,bf16", {13, 1000, 1032}, "layout=tt,epilogue=silu", "path=skinny,ksplit=4,unroll=1", 0},
    {"bf16,f32,bf16", {40, 2048, 1024}, "layout=nt,epilogue=silu", "path=skinny", 1},
    {"f16,f32,f16", {64, 520, 4096}, "layout=nt,beta=2", "path=skinny,ksplit=32", 0},
    {"f16,f32,f16", {64, 520, 4096}, "layout=nt,beta=2", "path=skinny,ksplit=8", 0},
    {"bf16,f32,bf16", {128, 2048, 4096}, "layout=nt", "path=mma,kslices=4", 1},
    {"f16,f32,f32", {96, 1000, 2056}, "layout=tn,beta=1,epilogue=gelu", "path=mma,kslices=8", 1},
    {"bf16,f32,bf16", {128, 1000, 2056}, "layout=nt,beta=0.5,epilogue=gelu", "path=wgmma,kslices=4,bk=64", 1, 9},
    {"f16,f32,f32", {128, 1000, 2056}, "layout=nt", "path=wgmma,kslices=2", 1, 9},
    {"bf16,f32,bf16", {128, 2048, 1024}, "layout=nt", "path=wgmma,kslices=8,bm=64,wm=1,bn=64", 1, 9},
    {"bf16,f32,bf16", {128, 8192, 8192}, "layout=nt", "path=wgmma,kslices=2,bk=64", 0, 9},
};
enum { NCASES = sizeof cases / sizeof cases[0] };

static tess_task case_task(const skinny_case *k) {
    return gemm_test_task(&tess_op_gemm, k->dtypes, k->shape, 3, k->attrs);
}

/* The case's sub-space on dev, NULL (with a failed check) when its pinned default is not legal there. */
static tess_space *case_space(const skinny_case *k, const tess_task *t, const tess_device *dev) {
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(&tess_op_gemm, t, dev, &s));
    if (!s) return NULL;
    CHECK_OK(tess_space_pin(s, k->pin));
    tess_config c;
    tess_space_default(s, &c);
    const bool legal = tess_space_valid(s, &c);
    CHECK_MSG(legal, "gemm %s %s on %s: the pinned default violates %s", k->attrs, k->pin, dev->name,
              tess_space_violation(s, &c));
    if (!legal) tess_space_destroy(s);
    return legal ? s : NULL;
}

static void check_case(const tess_backend_ops *cuda, const tess_device *dev, const skinny_case *k, gsl_rng *rng) {
    if (dev->cc_major < (k->cc_major ? k->cc_major : 8)) {
        printf("gemm %s %s: skipped, it needs sm_%d0\n", k->attrs, k->pin, k->cc_major);
        return;
    }
    tess_task t = case_task(k);
    tess_space *s = case_space(k, &t, dev);
    if (!s) return;
    tess_config c[2 + ROWWISE_MAX_SAMPLES];
    const int n = some_configs(s, rng, c, k->samples);
    tess_space_destroy(s);
    outcomes o = evaluate(cuda, dev, &tess_op_gemm, &t, c, n);
    char key[TESS_KEY_MAX];
    tess_task_key(&t, key, sizeof key);
    CHECK_MSG(o.n[TESS_RESULT_OK] == n, "%s %s: %d of %d configs ok: %s", key, k->pin, o.n[TESS_RESULT_OK], n, o.message);
    printf("%s %s on %s: %d configs verified\n", key, k->pin, dev->name, o.n[TESS_RESULT_OK]);
}

int main(void) {
    CHECK_OK(tess_register_builtin());
    /* every case's sub-space holds its default on an H200, so a GPU run never finds one empty */
    const tess_device h200 = tess_test_h200("NVIDIA H200");
    for (int i = 0; i < NCASES; i++) {
        tess_task t = case_task(&cases[i]);
        tess_space_destroy(case_space(&cases[i], &t, &h200));
    }
    if (check_failures_) return check_finish("test_gemm_skinny_gpu");
    tess_device dev;
    const tess_backend_ops *cuda = cuda_backend_or_skip(&dev);
    if (!cuda) return 77;
    if (dev.cc_major < 8) {
        printf("skipped: the skinny path needs sm_80 (this GPU is sm_%d%d)\n", dev.cc_major, dev.cc_minor);
        return 77;
    }
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 31);
    for (int i = 0; i < NCASES; i++) check_case(cuda, &dev, &cases[i], rng);
    gsl_rng_free(rng);
    return check_finish("test_gemm_skinny_gpu");
}
