/* device.c - the device key and the names of the ceilings. */
#include <stdio.h>
#include "device.h"
#include "error.h"

tess_status tess_device_key(const tess_device *d, char *buf, size_t len) {
    int w = snprintf(buf, len, "%s:%s:%s:%d", d->backend, d->name, d->arch, d->units);
    if (w < 0 || (size_t)w >= len) return tess_error(TESS_ERR_ARG, "device key too long");
    return TESS_OK;
}

static const struct {
    const char *name, *label;
} ceilings[TESS_CEILING_COUNT] = {
    [TESS_CEILING_COPY] = {"copy_gbps", "copy bandwidth"},
    [TESS_CEILING_READ] = {"read_gbps", "read-only bandwidth"},
    [TESS_CEILING_FMA_F32] = {"fma_f32_gflops", "fp32 FMA rate"},
    [TESS_CEILING_FMA_F64] = {"fma_f64_gflops", "fp64 FMA rate"},
    [TESS_CEILING_MMA_BF16] = {"mma_bf16_gflops", "bf16 tensor-core rate"},
    [TESS_CEILING_MMA_F16] = {"mma_f16_gflops", "f16 tensor-core rate"},
    [TESS_CEILING_MMA_FP8] = {"mma_fp8_gflops", "fp8 tensor-core rate"},
};

const char *tess_ceiling_name(tess_ceiling_kind k) {
    return (unsigned)k < TESS_CEILING_COUNT ? ceilings[k].name : "unknown";
}

const char *tess_ceiling_label(tess_ceiling_kind k) {
    return (unsigned)k < TESS_CEILING_COUNT ? ceilings[k].label : "unknown ceiling";
}

bool tess_ceiling_is_bandwidth(tess_ceiling_kind k) { return k == TESS_CEILING_COPY || k == TESS_CEILING_READ; }

bool tess_ceiling_measured(const tess_ceiling *c) { return c->value > 0 || c->calibrated_at[0]; }

bool tess_device_calibrated(const tess_device *d) {
    for (int k = 0; k < TESS_CEILING_COUNT; k++)
        if (!tess_ceiling_measured(&d->ceiling[k])) return false;
    return true;
}
