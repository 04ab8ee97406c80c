/*
 * test_attention_gpu.c - the attention family's CUDA kernels on the GPU,
 * verified by the hardware evaluator (two seeds of random inputs against
 * the float64 reference): the default, the largest and random configs of
 *   - on sm_90 the wgmma prefill kernel: bf16 and f16, D 64 and 128, causal
 *     (also with Sq < Skv) and not, GQA, one and two consumer warpgroups;
 *   - the mma.sync prefill kernel: bf16 and f16, D 64 and 128, causal (also
 *     with Sq < Skv) and not, GQA;
 *   - the simple prefill kernel: f32, shapes with remainders, D 256;
 *   - decode: paged (pages of 16 and 256) and unpaged, GQA, f32 with an odd D;
 * and decode compiled for a cache of 300 rows run for 123 of them.
 */
#include "attention_check.h"
#include "cuda_harness.h"
#include "transfer/builtin.h"

int main(void) {
    CHECK_OK(tess_register_builtin());
    tess_device dev;
    const tess_backend_ops *cuda = cuda_backend_or_skip(&dev);
    if (!cuda) return 77;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 23);
    const tess_op *pre = &tess_op_attention, *dec = &tess_op_attention_decode;
    const int64_t gqa[] = {2, 4, 128, 256, 64}, wide[] = {1, 4, 256, 256, 128}, tail[] = {1, 2, 64, 192, 128};
    if (dev.cc_major == 9) {
        const int64_t deep[] = {1, 4, 512, 1024, 128};
        check_attention_kernels(cuda, &dev, pre, TESS_BF16, gqa, "causal=1,kv_heads=2", "kernel=wgmma", 6, rng);
        check_attention_kernels(cuda, &dev, pre, TESS_F16, wide, NULL, "kernel=wgmma", 6, rng);
        check_attention_kernels(cuda, &dev, pre, TESS_BF16, tail, "causal=1", "kernel=wgmma", 4, rng);
        check_attention_kernels(cuda, &dev, pre, TESS_BF16, deep, "causal=1,kv_heads=1", "kernel=wgmma", 6, rng);
        check_attention_kernels(cuda, &dev, pre, TESS_BF16, deep, NULL, "kernel=wgmma", 4, rng);
    }
    check_attention_kernels(cuda, &dev, pre, TESS_BF16, gqa, "causal=1,kv_heads=2", "kernel=mma", 6, rng);
    check_attention_kernels(cuda, &dev, pre, TESS_F16, wide, NULL, "kernel=mma", 6, rng);
    check_attention_kernels(cuda, &dev, pre, TESS_BF16, tail, "causal=1", "kernel=mma", 4, rng);
    check_attention_kernels(cuda, &dev, pre, TESS_BF16, wide, "causal=1,kv_heads=1", "kernel=mma", 4, rng);
    const int64_t odd[] = {2, 3, 37, 45, 24}, d256[] = {1, 2, 33, 70, 256};
    check_attention_kernels(cuda, &dev, pre, TESS_F32, odd, "causal=1,kv_heads=3", NULL, 4, rng);
    check_attention_kernels(cuda, &dev, pre, TESS_BF16, gqa, "causal=1,kv_heads=2", "kernel=simple", 3, rng);
    check_attention_kernels(cuda, &dev, pre, TESS_F16, d256, "causal=1", NULL, 2, rng);
    const int64_t paged[] = {4, 8, 1000, 128}, flat[] = {2, 8, 4096, 128}, odd_d[] = {3, 6, 333, 40};
    check_attention_kernels(cuda, &dev, dec, TESS_BF16, paged, "kv_heads=2,page_size=16", NULL, 6, rng);
    check_attention_kernels(cuda, &dev, dec, TESS_F16, flat, "page_size=0", NULL, 4, rng);
    check_attention_kernels(cuda, &dev, dec, TESS_BF16, flat, "kv_heads=1,page_size=256", NULL, 4, rng);
    check_attention_kernels(cuda, &dev, dec, TESS_F32, odd_d, "kv_heads=3,page_size=32", NULL, 4, rng);
    check_decode_runtime_length(cuda, &dev, TESS_BF16, 0x1p-6);
    gsl_rng_free(rng);
    return check_finish("test_attention_gpu");
}
