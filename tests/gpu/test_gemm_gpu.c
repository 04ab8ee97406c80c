/*
 * test_gemm_gpu.c - gemm and conv2d's CUDA kernels on the GPU, each path
 * (simt; mma where the operands allow it) on its own: the default, the
 * largest and random configs of f32 and f64 gemm (simt), bf16 and f16 gemm
 * over the four layouts with C and the epilogues on shapes with remainders
 * and on a skinny task (M = 16), and bf16 convolutions (3x3, 3x3 with
 * stride 2, 1x1), verified by the hardware evaluator against the float64
 * reference. The wgmma path has its own test (test_gemm_wgmma_gpu.c).
 */
#include "cuda_harness.h"
#include "gemm/gemm.h"
#include "gemm_check.h"
#include "transfer/builtin.h"


int main(void) {
    CHECK_OK(tess_register_builtin());
    tess_device dev;
    const tess_backend_ops *cuda = cuda_backend_or_skip(&dev);
    if (!cuda) return 77;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 25);
    const int64_t odd[3] = {77, 45, 100}, aligned[3] = {200, 136, 264}, skinny[3] = {16, 1024, 2048};
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
