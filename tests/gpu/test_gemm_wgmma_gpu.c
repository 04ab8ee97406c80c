/*
 * test_gemm_wgmma_gpu.c - gemm and conv2d on the sm_90a wgmma path on an
 * H200 (skipped elsewhere), each case's default, largest and random configs
 * verified by the hardware evaluator against the float64 reference:
 *   - D stored through shared memory and the TMA, in parts, clipped at the
 *     edges of ragged shapes, 16-bit and f32 outputs;
 *   - e4m3 inputs with per-tensor scales (their product as alpha), and a
 *     long K (sampled reference) whose sums move from the tensor cores'
 *     accumulator into f32 every slice;
 *   - convolutions of stride 1 read in windows of x (padding, image edges
 *     inside tiles, clusters, 3x3 and 5x5 filters) and 1x1 as a GEMM;
 *     of stride 2 in windows whose copies step over every other pixel
 *     (3x3 with padding, odd images, 1x1);
 *   - a K split of convolutions read in windows (stride 1 and 2);
 *   - two persistent blocks of one consumer per multiprocessor (ctas);
 *   - images smaller than a tile, several to a tile (7 x 7, 3 images;
 *     stride 2, clusters);
 *   - the default of a convolution, unpinned, on wgmma (ResNet-50 layers);
 *   - more tiles than blocks (each block walks several, the ring's phases
 *     running on across tiles), a tail of K, and clusters of two blocks
 *     on an odd number of tile rows;
 *   - layout nt with C and the epilogues, and a skinny task (M = 16).
 * Its K split is checked by test_gemm_skinny_gpu.
 */
#include "gemm_check.h"
#include "transfer/builtin.h"

int main(void) {
    CHECK_OK(tess_register_builtin());
    tess_device dev;
    const tess_backend_ops *cuda = cuda_backend_or_skip(&dev);
    if (!cuda) return 77;
    if (dev.cc_major != 9) {
        printf("skipped: %s is not sm_90 (wgmma)\n", dev.name);
        return 77;
    }
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 25);
    const tess_op *gemm = &tess_op_gemm, *conv = &tess_op_conv2d;
    const int64_t ragged[3] = {1000, 1096, 200}, wide[3] = {1100, 2000, 96}, deep[3] = {384, 512, 4096};
    check_path(cuda, &dev, gemm, "f16,f32,f32", ragged, 3, "layout=nt,beta=2", "wgmma,tma_store=1,cluster=2", rng);
    check_path(cuda, &dev, gemm, "bf16,f32,bf16", ragged, 3, "layout=nt,epilogue=silu", "wgmma,tma_store=1,bn=256", rng);
    check_path(cuda, &dev, gemm, "e4m3,f32,bf16", wide, 3, "layout=nt,alpha=0.375", "wgmma,cluster=1", rng);
    check_path(cuda, &dev, gemm, "e4m3,f32,f32", wide, 3, "layout=nt,beta=0.5,epilogue=bias", "wgmma,cluster=2", rng);
    check_path(cuda, &dev, gemm, "e4m3,f32,f32", deep, 3, "layout=nt", "wgmma,promote=1", rng);

    const int64_t conv_pad[5] = {2, 14, 14, 64, 64}, conv_odd[5] = {3, 9, 11, 32, 48}, conv_valid[5] = {2, 10, 12, 64, 64},
                  pointwise[5] = {3, 7, 7, 256, 64};
    check_path(cuda, &dev, conv, "bf16,f32,bf16", conv_pad, 5, NULL, "wgmma", rng);
    check_path(cuda, &dev, conv, "bf16,f32,bf16", conv_odd, 5, "epilogue=bias", "wgmma,cluster=2", rng);
    check_path(cuda, &dev, conv, "f16,f32,f16", conv_valid, 5, "pad=0,filter=5", "wgmma,cluster=1", rng);
    check_path(cuda, &dev, conv, "bf16,f32,bf16", pointwise, 5, "filter=1,pad=0", "wgmma,tma_store=1", rng);
    check_path(cuda, &dev, conv, "bf16,f32,bf16", conv_pad, 5, "stride=2", "wgmma", rng);
    check_path(cuda, &dev, conv, "f16,f32,f16", conv_odd, 5, "stride=2,epilogue=bias", "wgmma,cluster=2", rng);
    check_path(cuda, &dev, conv, "bf16,f32,bf16", pointwise, 5, "filter=1,pad=0,stride=2", "wgmma", rng);
    /* images smaller than a tile share it (tiles of 2 or 4 images), the last one past the batch */
    const int64_t small[5] = {3, 7, 7, 64, 64}, small_s2[5] = {3, 13, 13, 32, 48};
    check_path(cuda, &dev, conv, "bf16,f32,bf16", small, 5, "epilogue=bias", "wgmma", rng);
    check_path(cuda, &dev, conv, "bf16,f32,bf16", small, 5, NULL, "wgmma,cluster=2", rng);
    check_path(cuda, &dev, conv, "f16,f32,f16", small_s2, 5, "stride=2", "wgmma", rng);
    /* K split over blocks in windows: partials by the tiles' pixels */
    check_path(cuda, &dev, conv, "bf16,f32,bf16", small, 5, "epilogue=bias", "wgmma,kslices=2", rng);
    check_path(cuda, &dev, conv, "bf16,f32,bf16", conv_pad, 5, NULL, "wgmma,kslices=4", rng);
    check_path(cuda, &dev, conv, "f16,f32,f16", small_s2, 5, "stride=2", "wgmma,kslices=2", rng);
    /* two persistent blocks per multiprocessor */
    check_path(cuda, &dev, conv, "bf16,f32,bf16", conv_pad, 5, NULL, "wgmma,bm=64,wm=1,ctas=2", rng);
    check_path(cuda, &dev, gemm, "bf16,f32,bf16", ragged, 3, "layout=nt,beta=2", "wgmma,bm=64,wm=1,ctas=2", rng);
    /* a convolution's default is on wgmma: ResNet-50's layers at a batch of 2 */
    const int64_t res_56[5] = {2, 56, 56, 64, 64}, res_1x1[5] = {2, 56, 56, 256, 64}, res_7[5] = {2, 7, 7, 512, 512},
                  res_s2[5] = {2, 112, 112, 64, 128};
    check_default(cuda, &dev, conv, "bf16,f32,bf16", res_56, 5, NULL, "wgmma");
    check_default(cuda, &dev, conv, "bf16,f32,bf16", res_1x1, 5, "filter=1,pad=0", "wgmma");
    check_default(cuda, &dev, conv, "bf16,f32,bf16", res_7, 5, NULL, "wgmma");
    check_default(cuda, &dev, conv, "bf16,f32,bf16", res_s2, 5, "stride=2", "wgmma");

    check_path(cuda, &dev, gemm, "bf16,f32,bf16", wide, 3, "layout=nt", "wgmma,cluster=1", rng);
    check_path(cuda, &dev, gemm, "bf16,f32,bf16", wide, 3, "layout=nt,epilogue=bias", "wgmma,cluster=2", rng);
    check_path(cuda, &dev, gemm, "f16,f32,f32", wide, 3, "layout=nt,beta=0.5", "wgmma,cluster=2", rng);
    const int64_t aligned[3] = {200, 136, 264}, skinny[3] = {16, 1024, 2048};
    check_path(cuda, &dev, gemm, "bf16,f32,bf16", aligned, 3, "layout=nt", "wgmma", rng);
    check_path(cuda, &dev, gemm, "f16,f32,f32", aligned, 3, "layout=nt,beta=0.5,epilogue=gelu", "wgmma", rng);
    check_path(cuda, &dev, gemm, "bf16,f32,bf16", skinny, 3, "layout=nt,epilogue=bias", "wgmma", rng);
    gsl_rng_free(rng);
    return check_finish("test_gemm_wgmma_gpu");
}
