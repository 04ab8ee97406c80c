/*
 * test_gemm_gpu.c - gemm and conv2d's CUDA kernels on the GPU, each path
 * (simt; mma where the operands allow it) on its own: the default, the
 * largest and random configs of f32 and f64 gemm (simt), bf16 and f16 gemm
 * over the four layouts with C and the epilogues on shapes with remainders
 * and on a skinny task (M = 16), on an H200 the wgmma path (layout nt;
 * first, with clusters of one and two blocks, on more tiles than SMs,
 * storing D from registers or through the TMA, in bf16, f16 and e4m3; convolutions of stride 1 with 1x1, 3x3 and 5x5
 * filters),
 * and bf16 convolutions (3x3, 3x3 with stride
 * 2, 1x1), verified by the hardware evaluator against the float64
 * reference.
 */
#include "cuda_harness.h"
#include "gemm/gemm.h"
#include "rowwise_check.h"
#include "transfer/builtin.h"

static void check_path(const tess_backend_ops *cuda, const tess_device *dev, const tess_op *op, const char *dtypes,
                       const int64_t *shape, int ndim, const char *attrs, const char *path, gsl_rng *rng) {
    tess_dtype r[TESS_ROLE_COUNT];
    tess_task t;
    CHECK_OK(tess_task_dtypes_parse(dtypes, r));
    CHECK_OK(tess_op_make_task(op, r[0], r[1], r[2], shape, ndim, attrs, &t));
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(op, &t, dev, &s));
    if (!s) return;
    char pin[32], key[TESS_KEY_MAX];
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

int main(void) {
    CHECK_OK(tess_register_builtin());
    tess_device dev;
    const tess_backend_ops *cuda = cuda_backend_or_skip(&dev);
    if (!cuda) return 77;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 25);
    const int64_t odd[3] = {77, 45, 100}, aligned[3] = {200, 136, 264}, skinny[3] = {16, 1024, 2048};
    if (dev.cc_major == 9) {   /* wgmma: A and B K-major (layout nt) */
        /* more tiles than blocks (each block walks several; the ring's phases run on across tiles), a tail of K
         * and, in clusters of two, an odd number of tile rows */
        const int64_t wide[3] = {1100, 2000, 96};
        check_path(cuda, &dev, &tess_op_gemm, "bf16,f32,bf16", wide, 3, "layout=nt", "wgmma,cluster=1", rng);
        check_path(cuda, &dev, &tess_op_gemm, "bf16,f32,bf16", wide, 3, "layout=nt,epilogue=bias", "wgmma,cluster=2", rng);
        check_path(cuda, &dev, &tess_op_gemm, "f16,f32,f32", wide, 3, "layout=nt,beta=0.5", "wgmma,cluster=2", rng);
        /* D through shared memory and the TMA: tiles clipped at D's edges, f32 and 16-bit outputs */
        const int64_t ragged[3] = {1000, 1096, 200};
        check_path(cuda, &dev, &tess_op_gemm, "bf16,f32,bf16", ragged, 3, "layout=nt,epilogue=silu", "wgmma,tma_store=1", rng);
        check_path(cuda, &dev, &tess_op_gemm, "f16,f32,f32", ragged, 3, "layout=nt,beta=2", "wgmma,tma_store=1,cluster=2", rng);
        /* e4m3 with per-tensor scales (their product as alpha), k32 MMAs; a long K, sampled, whose sums the
         * kernel moves from the tensor cores' accumulator into f32 every slice */
        const int64_t deep[3] = {384, 512, 4096};
        check_path(cuda, &dev, &tess_op_gemm, "e4m3,f32,bf16", wide, 3, "layout=nt,alpha=0.375", "wgmma,cluster=1", rng);
        check_path(cuda, &dev, &tess_op_gemm, "e4m3,f32,f32", wide, 3, "layout=nt,beta=0.5,epilogue=bias", "wgmma,cluster=2", rng);
        check_path(cuda, &dev, &tess_op_gemm, "e4m3,f32,f32", deep, 3, "layout=nt", "wgmma,promote=1", rng);
        /* convolutions: windows of x (padding, image edges inside tiles, clusters), and 1x1 as a GEMM */
        const int64_t conv_pad[5] = {2, 14, 14, 64, 64}, conv_odd[5] = {3, 9, 11, 32, 48}, conv_valid[5] = {2, 10, 12, 64, 64},
                      pointwise[5] = {3, 7, 7, 256, 64};
        check_path(cuda, &dev, &tess_op_conv2d, "bf16,f32,bf16", conv_pad, 5, NULL, "wgmma", rng);
        check_path(cuda, &dev, &tess_op_conv2d, "bf16,f32,bf16", conv_odd, 5, "epilogue=bias", "wgmma,cluster=2", rng);
        check_path(cuda, &dev, &tess_op_conv2d, "f16,f32,f16", conv_valid, 5, "pad=0,filter=5", "wgmma,cluster=1", rng);
        check_path(cuda, &dev, &tess_op_conv2d, "bf16,f32,bf16", pointwise, 5, "filter=1,pad=0", "wgmma", rng);
        check_path(cuda, &dev, &tess_op_gemm, "bf16,f32,bf16", aligned, 3, "layout=nt", "wgmma", rng);
        check_path(cuda, &dev, &tess_op_gemm, "f16,f32,f32", aligned, 3, "layout=nt,beta=0.5,epilogue=gelu", "wgmma", rng);
        check_path(cuda, &dev, &tess_op_gemm, "bf16,f32,bf16", skinny, 3, "layout=nt,epilogue=bias", "wgmma", rng);
    }
    check_path(cuda, &dev, &tess_op_gemm, "f32", odd, 3, "layout=tn,beta=0.5", "simt", rng);
    check_path(cuda, &dev, &tess_op_gemm, "f64", odd, 3, "epilogue=gelu", "simt", rng);
    check_path(cuda, &dev, &tess_op_gemm, "bf16,f32,bf16", odd, 3, "layout=nt", "simt", rng);
    static const char *const layouts[] = {"layout=nn", "layout=nt,epilogue=bias", "layout=tn,beta=2",
                                          "layout=tt,epilogue=silu"};
    for (int l = 0; l < 4; l++) {
        check_path(cuda, &dev, &tess_op_gemm, "bf16,f32,bf16", aligned, 3, layouts[l], "mma", rng);
        check_path(cuda, &dev, &tess_op_gemm, "f16,f32,f32", aligned, 3, layouts[l], "mma", rng);
    }
    check_path(cuda, &dev, &tess_op_gemm, "bf16,f32,bf16", skinny, 3, "layout=nt", "mma", rng);
    const int64_t conv3[5] = {2, 14, 14, 64, 64}, conv_s2[5] = {2, 15, 15, 32, 48}, conv1[5] = {3, 7, 7, 256, 64};
    check_path(cuda, &dev, &tess_op_conv2d, "bf16,f32,bf16", conv3, 5, NULL, "mma", rng);
    check_path(cuda, &dev, &tess_op_conv2d, "bf16,f32,bf16", conv_s2, 5, "stride=2,epilogue=bias", "mma", rng);
    check_path(cuda, &dev, &tess_op_conv2d, "bf16,f32,bf16", conv1, 5, "filter=1,pad=0", "mma", rng);
    check_path(cuda, &dev, &tess_op_conv2d, "f32", conv_s2, 5, "stride=2", "simt", rng);
    gsl_rng_free(rng);
    return check_finish("test_gemm_gpu");
}
