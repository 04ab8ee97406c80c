/*
 * test_gemm_templates.c - every CUDA path of gemm and conv2d compiles with
 * NVRTC for the architectures it claims, through the cuda backend's compile
 * op: on an H200 (sm_90) the default of each path (simt for f32 and f64;
 * simt and mma for bf16 and f16; wgmma as well for layout nt, e4m3 and convolutions of stride 1) and,
 * for most tasks, a sampled config,
 * over the four layouts, the epilogues, C and convolutions; on an A100
 * (sm_80) the defaults of two tensor-core tasks; the skinny path (few rows,
 * B stored N x K) on both, sampled over its splits, and the mma path with K
 * split over blocks (and on the wgmma path, convolutions in windows
 * included), two blocks per multiprocessor
 * (wgmma, and skinny's register cap); the path of a convolution's
 * default on each (wgmma on sm_90 where it applies) and its tiles of
 * several small images. Each cubin holds its
 * launch's entry; tasks whose operands cannot be read in 16-byte chunks
 * offer no mma path. Prints the compile rate. NVRTC needs no GPU; without
 * it (or without the toolkit at build time) the test is skipped.
 */
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "a100.h"
#include "check.h"
#include "core/backend.h"
#include "core/error.h"
#include "gemm/gemm.h"
#include "gemm_task.h"

extern tess_status tess_cuda_register(void) __attribute__((weak));

static int compiled;
static double compile_seconds;

/* Compiles one config; false when NVRTC is missing. */
static bool compile_config(const tess_backend_ops *be, const tess_device *dev, const tess_op *op, const tess_task *t,
                           const tess_space *s, const tess_config *c) {
    char text[512];
    tess_config_format(s, c, text, sizeof text);
    tess_kernel_source src;
    CHECK_OK(tess_op_emit(op, t, dev, s, c, &src));
    tess_blob bin = {0};
    char *log = NULL;
    const double t0 = tess_now();
    tess_status st = be->compile(dev, &src, &bin, &log);
    if (st == TESS_ERR_UNAVAILABLE) {
        printf("skipped: %s\n", tess_errmsg());
        tess_kernel_source_free(&src);
        return false;
    }
    compile_seconds += tess_now() - t0;
    CHECK_MSG(st == TESS_OK, "%s %s on %s: %s\n%s", t->op, text, dev->arch, tess_errmsg(), log ? log : "");
    if (st == TESS_OK) {
        compiled++;
        CHECK_MSG(memmem(bin.data, bin.size, src.launch[0].entry, strlen(src.launch[0].entry)),
                  "entry %s missing from the cubin of %s", src.launch[0].entry, text);
    }
    free(log);
    tess_blob_free(&bin);
    tess_kernel_source_free(&src);
    return true;
}

enum { SIMT = 1, MMA = 2, WGMMA = 4 };

/* The default and `samples` random configs of each path of a task (`offered`:
 * the paths, of SIMT, MMA and WGMMA, its space offers); false if skipped. */
static bool compile_task(const tess_backend_ops *be, const tess_device *dev, const tess_op *op, const char *dtypes,
                         const int64_t *shape, int ndim, const char *attrs, int offered_paths, int samples,
                         gsl_rng *rng) {
    tess_task t = gemm_test_task(op, dtypes, shape, ndim, attrs);
    const char *paths[] = {"simt", "mma", "wgmma"};
    for (int p = 0; p < 3; p++) {
        tess_space *s = NULL;
        CHECK_OK(tess_op_space(op, &t, dev, &s));
        if (!s) return true;
        char pin[32];
        snprintf(pin, sizeof pin, "path=%s", paths[p]);
        const bool offered = tess_space_pin(s, pin) == TESS_OK;
        CHECK_MSG(offered == ((offered_paths >> p & 1) != 0), "%s %s %s: %s offered %d", op->name, dtypes, attrs ? attrs : "",
                  paths[p], offered);
        if (!offered) {
            tess_space_destroy(s);
            continue;
        }
        tess_config c;
        tess_space_default(s, &c);
        CHECK_MSG(tess_space_valid(s, &c), "%s %s default violates %s", op->name, pin, tess_space_violation(s, &c));
        bool ran = compile_config(be, dev, op, &t, s, &c);
        for (int i = 0; ran && i < samples; i++) {
            CHECK_OK(tess_space_sample(s, rng, &c));
            ran = compile_config(be, dev, op, &t, s, &c);
        }
        tess_space_destroy(s);
        if (!ran) return false;
    }
    return true;
}

/* The default and `samples` random configs of a task's sub-space `pin`; false if skipped. */
static bool compile_pinned(const tess_backend_ops *be, const tess_device *dev, const tess_op *op, int ndim,
                           const char *dtypes, const int64_t *shape, const char *attrs, const char *pin, int samples,
                           gsl_rng *rng) {
    tess_task t = gemm_test_task(op, dtypes, shape, ndim, attrs);
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(op, &t, dev, &s));
    if (!s) return true;
    CHECK_OK(tess_space_pin(s, pin));
    tess_config c;
    tess_space_default(s, &c);
    CHECK_MSG(tess_space_valid(s, &c), "%s %s %s: default violates %s", op->name, attrs, pin, tess_space_violation(s, &c));
    bool ran = compile_config(be, dev, op, &t, s, &c);
    for (int i = 0; ran && i < samples; i++) {
        const tess_status st = tess_space_sample(s, rng, &c);
        CHECK_MSG(st == TESS_OK, "%s %s %s: no sample: %s", op->name, attrs, pin, tess_errmsg());
        if (st) break;
        ran = compile_config(be, dev, op, &t, s, &c);
    }
    tess_space_destroy(s);
    return ran;
}

/* Whether the default config of a task, unpinned, is on path `want`. */
static void check_default_path(const tess_device *dev, const tess_op *op, const char *dtypes, const int64_t *shape,
                               int ndim, const char *attrs, const char *want) {
    tess_task t = gemm_test_task(op, dtypes, shape, ndim, attrs);
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(op, &t, dev, &s));
    if (!s) return;
    tess_config c;
    tess_space_default(s, &c);
    const char *label = gemm_config_path(s, &c);
    CHECK_MSG(label && strcmp(label, want) == 0, "%s %s on %s: default path %s, not %s", op->name, attrs ? attrs : "",
              dev->arch, label ? label : "(none)", want);
    CHECK_MSG(tess_space_valid(s, &c), "%s %s on %s: default violates %s", op->name, attrs ? attrs : "", dev->arch,
              tess_space_violation(s, &c));
    tess_space_destroy(s);
}

/* Whether the default config of a conv2d task on dev emits `text`, and compiles; false if skipped. */
static bool check_conv_emits(const tess_backend_ops *be, const tess_device *dev, const int64_t *shape, const char *attrs,
                             const char *text) {
    tess_task t;
    CHECK_OK(tess_op_make_task(&tess_op_conv2d, TESS_BF16, TESS_F32, TESS_BF16, shape, 5, attrs, &t));
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(&tess_op_conv2d, &t, dev, &s));
    if (!s) return true;
    tess_config c;
    tess_space_default(s, &c);
    tess_kernel_source src;
    CHECK_OK(tess_op_emit(&tess_op_conv2d, &t, dev, s, &c, &src));
    CHECK_MSG(src.code && strstr(src.code, text), "conv2d %s: no '%s' in its default's source", attrs ? attrs : "", text);
    tess_kernel_source_free(&src);
    const bool ran = compile_config(be, dev, &tess_op_conv2d, &t, s, &c);
    tess_space_destroy(s);
    return ran;
}

/* On an A100, the defaults of the tensor-core tasks. */
static bool compile_sm80(const tess_backend_ops *be, const tess_device *dev, gsl_rng *rng) {
    const int64_t square[] = {256, 256, 256}, conv3[] = {2, 14, 14, 64, 64};
    const int64_t gemv[] = {1, 1000, 1032};
    check_default_path(dev, &tess_op_conv2d, "bf16,f32,bf16", conv3, 5, NULL, "mma");
    bool ran = compile_task(be, dev, &tess_op_gemm, "bf16,f32,bf16", square, 3, "layout=nt", SIMT | MMA, 0, rng);
    ran = ran && compile_pinned(be, dev, &tess_op_gemm, 3, "f16,f32,f16", gemv, "layout=nt", "path=skinny", 0, rng);
    return ran && compile_task(be, dev, &tess_op_conv2d, "f16,f32,f16", conv3, 5, NULL, SIMT | MMA, 0, rng);
}

static bool compile_all(const tess_backend_ops *be, const tess_device *dev, int samples, gsl_rng *rng) {
    const int64_t odd[] = {33, 17, 40}, square[] = {256, 256, 256}, skinny[] = {16, 4096, 4096};
    const int64_t conv3[] = {2, 14, 14, 64, 64}, conv1[] = {2, 7, 7, 256, 64}, conv_odd[] = {1, 9, 9, 3, 8};
    /* a convolution's default is on wgmma where it applies, on mma where not (stride 3) */
    const int64_t conv_s2[] = {2, 112, 112, 64, 128};
    check_default_path(dev, &tess_op_conv2d, "bf16,f32,bf16", conv3, 5, NULL, "wgmma");
    check_default_path(dev, &tess_op_conv2d, "bf16,f32,bf16", conv1, 5, "filter=1,pad=0", "wgmma");
    check_default_path(dev, &tess_op_conv2d, "bf16,f32,bf16", conv_s2, 5, "stride=2", "wgmma");
    check_default_path(dev, &tess_op_conv2d, "bf16,f32,bf16", conv_s2, 5, "stride=3", "mma");
    /* tiles of 128 pixels: 7 x 7 images as 16 rows of 8 pixels (one wave of 56 tiles, 1792 pixels against 4096
     * in 8 x 16 tiles of one image); 56 x 56 as 8 x 8 pixels of two images (784 tiles, 6 waves against 7) */
    const int64_t res_7[] = {32, 7, 7, 512, 512}, res_56[] = {32, 56, 56, 64, 64};
    bool ran = check_conv_emits(be, dev, res_7, NULL, "#define TILE_W 8\n#define TILE_H 1\n#define TILE_N 16\n") &&
               check_conv_emits(be, dev, res_56, NULL, "#define TILE_W 8\n#define TILE_H 8\n#define TILE_N 2\n");
    ran = ran && compile_task(be, dev, &tess_op_gemm, "f32", odd, 3, "layout=tt,beta=1", SIMT, samples, rng);
    ran = ran && compile_task(be, dev, &tess_op_gemm, "f64", square, 3, "epilogue=gelu", SIMT, samples, rng);
    ran = ran && compile_task(be, dev, &tess_op_gemm, "bf16,f32,bf16", square, 3, NULL, SIMT | MMA, 0, rng);
    const int64_t llm[] = {4096, 14336, 4096}, decode[] = {16, 4096, 4096};
    ran = ran && compile_task(be, dev, &tess_op_gemm, "bf16,f32,bf16", llm, 3, "layout=nt", SIMT | MMA | WGMMA, samples, rng);
    ran = ran && compile_task(be, dev, &tess_op_gemm, "bf16,f32,bf16", decode, 3, "layout=nt,epilogue=gelu", SIMT | MMA | WGMMA, 0, rng);
    ran = ran && compile_task(be, dev, &tess_op_gemm, "bf16,f32,bf16", square, 3, "layout=tn,epilogue=bias", SIMT | MMA, 0, rng);
    ran = ran && compile_task(be, dev, &tess_op_gemm, "f16,f32,f32", square, 3, "layout=nt,epilogue=silu", SIMT | MMA | WGMMA, samples, rng);
    ran = ran && compile_task(be, dev, &tess_op_gemm, "e4m3,f32,bf16", llm, 3, "layout=nt", WGMMA, samples, rng);
    ran = ran && compile_task(be, dev, &tess_op_gemm, "bf16,f32,bf16", skinny, 3, "layout=tt,beta=0.5", SIMT | MMA, 0, rng);
    ran = ran && compile_task(be, dev, &tess_op_gemm, "bf16,f32,bf16", odd, 3, NULL, SIMT, samples, rng);   /* K = 40, N = 17 */
    ran = ran && compile_task(be, dev, &tess_op_conv2d, "bf16,f32,bf16", conv3, 5, NULL, SIMT | MMA | WGMMA, samples, rng);
    ran = ran && compile_task(be, dev, &tess_op_conv2d, "f16,f32,f16", conv1, 5, "filter=1,pad=0", SIMT | MMA | WGMMA, samples, rng);
    ran = ran && compile_task(be, dev, &tess_op_conv2d, "bf16,f32,bf16", conv1, 5, "filter=1,pad=0,stride=2", SIMT | MMA | WGMMA, samples, rng);
    ran = ran && compile_task(be, dev, &tess_op_conv2d, "bf16,f32,bf16", conv3, 5, "stride=2", SIMT | MMA | WGMMA, samples, rng);
    ran = ran && compile_task(be, dev, &tess_op_conv2d, "f32", conv_odd, 5, "epilogue=bias", SIMT, samples, rng);
    const int64_t gemv[] = {1, 8192, 8192}, few[] = {5, 300, 264}, wide[] = {40, 2048, 1024};
    ran = ran && compile_pinned(be, dev, &tess_op_gemm, 3, "bf16,f32,bf16", decode, "layout=nt,epilogue=gelu", "path=skinny", 3 * samples, rng);
    ran = ran && compile_pinned(be, dev, &tess_op_gemm, 3, "bf16,f32,bf16", gemv, "layout=nt", "path=skinny", samples, rng);
    ran = ran && compile_pinned(be, dev, &tess_op_gemm, 3, "f16,f32,f32", few, "layout=tt,beta=0.5,epilogue=bias", "path=skinny", 2 * samples, rng);
    ran = ran && compile_pinned(be, dev, &tess_op_gemm, 3, "bf16,f32,bf16", wide, "layout=nt,epilogue=silu", "path=skinny", samples, rng);
    const int64_t prefill[] = {128, 8192, 8192}, split_tn[] = {96, 1000, 2056};
    ran = ran && compile_pinned(be, dev, &tess_op_gemm, 3, "bf16,f32,bf16", prefill, "layout=nt", "path=mma,kslices=4", samples, rng);
    ran = ran && compile_pinned(be, dev, &tess_op_gemm, 3, "f16,f32,f32", split_tn, "layout=tn,beta=1,epilogue=gelu", "path=mma,kslices=8", 0, rng);
    ran = ran && compile_pinned(be, dev, &tess_op_gemm, 3, "bf16,f32,bf16", prefill, "layout=nt", "path=wgmma,cluster=2,tma_store=1", samples, rng);
    ran = ran && compile_pinned(be, dev, &tess_op_gemm, 3, "bf16,f32,bf16", prefill, "layout=nt", "path=wgmma,kslices=2", samples, rng);
    ran = ran && compile_pinned(be, dev, &tess_op_gemm, 3, "f16,f32,f32", split_tn, "layout=nt,beta=1,epilogue=gelu", "path=wgmma,kslices=8", 0, rng);
    ran = ran && compile_pinned(be, dev, &tess_op_gemm, 3, "bf16,f32,bf16", prefill, "layout=nt", "path=wgmma,bm=64,wm=1,ctas=2", samples, rng);
    ran = ran && compile_pinned(be, dev, &tess_op_gemm, 3, "bf16,f32,bf16", decode, "layout=nt", "path=skinny,ctas=2", samples, rng);
    const int64_t res_s2[] = {32, 112, 112, 64, 128};
    ran = ran && compile_pinned(be, dev, &tess_op_conv2d, 5, "bf16,f32,bf16", res_7, NULL, "path=wgmma,kslices=4", samples, rng);
    ran = ran && compile_pinned(be, dev, &tess_op_conv2d, 5, "bf16,f32,bf16", res_s2, "stride=2", "path=wgmma,ctas=2,wm=1,bm=64",
                                samples, rng);
    return ran;
}

int main(void) {
    if (!tess_cuda_register) {
        printf("skipped: built without the CUDA toolkit\n");
        return 77;
    }
    CHECK_OK(tess_cuda_register());
    CHECK_OK(tess_op_register(&tess_op_gemm));
    CHECK_OK(tess_op_register(&tess_op_conv2d));
    const tess_backend_ops *be = tess_backend_find("cuda");
    CHECK(be != NULL);
    if (!be) return check_finish("test_gemm_templates");
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 25);
    tess_device h200 = tess_test_h200("NVIDIA H200"), a100 = tess_test_a100("NVIDIA A100");
    bool ran = compile_all(be, &h200, 1, rng) && compile_sm80(be, &a100, rng);
    gsl_rng_free(rng);
    if (!ran) return 77;
    printf("%d gemm and conv2d kernels compiled, %.2f per second (cached ones included)\n", compiled,
           compile_seconds > 0 ? compiled / compile_seconds : 0);
    return check_finish("test_gemm_templates");
}
