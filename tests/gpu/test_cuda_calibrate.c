/*
 * test_cuda_calibrate.c - the cuda backend's calibration measures every
 * ceiling: positive for each unit the device has (the tensor cores from
 * sm_80, fp8 from sm_89), 0 for the others, and plausible: copy bandwidth
 * between 100 GB/s and 20 TB/s, fp32 FMA between 1 and 500 TFLOP/s, the
 * copy figure within 15% when measured twice. On an H200 every ceiling is
 * below its datasheet peak (HBM 4.8 TB/s; dense fp32 67, fp64 34, bf16 and
 * f16 989, fp8 1979 TFLOP/s). Skipped (77) where there is no CUDA device.
 */
#include <math.h>
#include <string.h>
#include "gpu/cuda_harness.h"

/* H200 datasheet peaks (dense), in GB/s or GFLOP/s, by tess_ceiling_kind. */
static const double h200_peak[TESS_CEILING_COUNT] = {
    [TESS_CEILING_COPY] = 4800, [TESS_CEILING_READ] = 4800, [TESS_CEILING_FMA_F32] = 67000,
    [TESS_CEILING_FMA_F64] = 34000, [TESS_CEILING_MMA_BF16] = 989000, [TESS_CEILING_MMA_F16] = 989000,
    [TESS_CEILING_MMA_FP8] = 1979000,
};

int main(void) {
    tess_device dev;
    const tess_backend_ops *be = cuda_backend_or_skip(&dev);
    if (!be) return 77;
    void *ctx = NULL;
    CHECK_OK(be->open(&dev, &ctx));
    if (!ctx) return check_finish("test_cuda_calibrate");
    double rates[TESS_CEILING_COUNT], again[TESS_CEILING_COUNT];
    CHECK_OK(be->calibrate(ctx, rates));
    CHECK_OK(be->calibrate(ctx, again));
    const int cc = 10 * dev.cc_major + dev.cc_minor;
    const bool h200 = strstr(dev.name, "H200") != NULL;
    for (int k = 0; k < TESS_CEILING_COUNT; k++) {
        bool present = k < TESS_CEILING_MMA_BF16 || (cc >= 80 && (k != TESS_CEILING_MMA_FP8 || cc >= 89));
        const char *unit = tess_ceiling_is_bandwidth((tess_ceiling_kind)k) ? "GB/s" : "GFLOP/s";
        printf("%s: %-22s %10.0f %s, then %10.0f", dev.name, tess_ceiling_label((tess_ceiling_kind)k), rates[k],
               unit, again[k]);
        if (h200) printf(" (%.1f%% of the datasheet's %.0f)", 100 * rates[k] / h200_peak[k], h200_peak[k]);
        printf("\n");
        if (present)
            CHECK_MSG(rates[k] > 0 && again[k] > 0, "%s: %g, then %g %s", tess_ceiling_name((tess_ceiling_kind)k),
                      rates[k], again[k], unit);
        else
            CHECK_MSG(rates[k] == 0, "%s: %g %s on sm_%d, which lacks the unit",
                      tess_ceiling_name((tess_ceiling_kind)k), rates[k], unit, cc);
        if (h200)
            CHECK_MSG(rates[k] < h200_peak[k] && again[k] < h200_peak[k],
                      "%s: %.0f, then %.0f %s, above the H200's datasheet peak of %.0f",
                      tess_ceiling_name((tess_ceiling_kind)k), rates[k], again[k], unit, h200_peak[k]);
    }
    double gbps = rates[TESS_CEILING_COPY], gflops = rates[TESS_CEILING_FMA_F32];
    CHECK_MSG(gbps > 100 && gbps < 20000, "copy %.0f GB/s", gbps);
    CHECK_MSG(gflops > 1000 && gflops < 500000, "fma %.0f GFLOP/s", gflops);
    CHECK_MSG(fabs(again[TESS_CEILING_COPY] - gbps) < 0.15 * gbps, "copy %.0f then %.0f GB/s", gbps,
              again[TESS_CEILING_COPY]);
    be->close(ctx);
    return check_finish("test_cuda_calibrate");
}
