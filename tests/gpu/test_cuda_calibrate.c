/*
 * test_cuda_calibrate.c - the cuda backend's calibration returns plausible
 * ceilings: copy bandwidth between 100 GB/s and 20 TB/s, an fp32 FMA rate
 * between 1 and 500 TFLOP/s, and the same copy figure within 15% when
 * measured twice. Skipped (77) where there is no CUDA device.
 */
#include <math.h>
#include "gpu/cuda_harness.h"

int main(void) {
    tess_device dev;
    const tess_backend_ops *be = cuda_backend_or_skip(&dev);
    if (!be) return 77;
    void *ctx = NULL;
    CHECK_OK(be->open(&dev, &ctx));
    if (!ctx) return check_finish("test_cuda_calibrate");
    double gbps = 0, gflops = 0, gbps2 = 0, gflops2 = 0;
    CHECK_OK(be->calibrate(ctx, &gbps, &gflops));
    CHECK_OK(be->calibrate(ctx, &gbps2, &gflops2));
    printf("%s: copy %.0f GB/s, %.0f GB/s; fp32 FMA %.1f TFLOP/s, %.1f TFLOP/s\n", dev.name, gbps, gbps2,
           gflops / 1e3, gflops2 / 1e3);
    CHECK_MSG(gbps > 100 && gbps < 20000, "copy %.0f GB/s", gbps);
    CHECK_MSG(gflops > 1000 && gflops < 500000, "fma %.0f GFLOP/s", gflops);
    CHECK_MSG(fabs(gbps2 - gbps) < 0.15 * gbps, "copy %.0f then %.0f GB/s", gbps, gbps2);
    be->close(ctx);
    return check_finish("test_cuda_calibrate");
}
