/*
 * sum.c - the sum of a vector as an operator: out[0] = sum(in).
 * Any shape is accepted and summed as a flat vector. A scratch buffer of
 * TESS_SUM_SCRATCH elements holds per-block partial sums where a generator
 * needs them.
 */
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "sum.h"

static tess_status sum_check(const tess_task *t) {
    if (t->dtype != TESS_F32 && t->dtype != TESS_F64)
        return tess_error(TESS_ERR_ARG, "sum supports f32 and f64, not %s", tess_dtype_name(t->dtype));
    return TESS_OK;
}

static tess_status sum_space(const tess_task *t, const tess_device *dev, tess_space **out) {
    if (strcmp(dev->backend, "cuda") == 0) return tess_sum_cuda_space(t, dev, out);
    return tess_sum_cpu_space(t, dev, out);
}

static tess_status sum_emit(const tess_task *t, const tess_device *dev, const tess_space *s,
                            const tess_config *c, tess_kernel_source *out) {
    if (strcmp(dev->backend, "cuda") == 0) return tess_sum_cuda_emit(t, dev, s, c, out);
    return tess_sum_cpu_emit(t, dev, s, c, out);
}

static tess_status sum_buffers(const tess_task *t, tess_buffer_spec *specs, int *n) {
    specs[0] = (tess_buffer_spec){"in", TESS_BUF_IN, t->dtype, tess_shape_elements(t->shape, t->ndim)};
    specs[1] = (tess_buffer_spec){"out", TESS_BUF_OUT, t->dtype, 1};
    specs[2] = (tess_buffer_spec){"partials", TESS_BUF_SCRATCH, t->dtype, TESS_SUM_SCRATCH};
    *n = 3;
    return TESS_OK;
}

static tess_status sum_reference(const tess_task *t, void *const *bufs) {
    int64_t n = tess_shape_elements(t->shape, t->ndim);
    /* Kahan summation in double: the reference must be better than any candidate. */
    double s = 0, comp = 0;
    for (int64_t i = 0; i < n; i++) {
        double y = tess_dtype_load(bufs[0], t->dtype, i) - comp;
        double u = s + y;
        comp = (u - s) - y;
        s = u;
    }
    tess_dtype_store(bufs[1], t->dtype, 0, s);
    return TESS_OK;
}

/* Errors are measured against the sum of magnitudes: reassociating a sum
 * changes its rounding by up to a few ulps of that, not of the result. */
static double sum_verify_scale(const tess_task *t, void *const *bufs) {
    int64_t n = tess_shape_elements(t->shape, t->ndim);
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += fabs(tess_dtype_load(bufs[0], t->dtype, i));
    return s;
}

static double sum_flops(const tess_task *t) { return (double)tess_shape_elements(t->shape, t->ndim); }

static double sum_bytes(const tess_task *t) {
    return (double)tess_shape_elements(t->shape, t->ndim) * (double)tess_dtype_size(t->dtype);
}

static double sum_tolerance(const tess_task *t) { return t->dtype == TESS_F64 ? 1e-13 : 2e-6; }

static const char *const sum_backends[] = {"cpu", "cuda", NULL};

const tess_op tess_op_sum = {
    .name = "sum",
    .family = "reductions",
    .summary = "sum of all elements (buffers: in, out[1], partials scratch)",
    .default_shape = "67108864",
    .backends = sum_backends,
    .check_task = sum_check,
    .space = sum_space,
    .buffers = sum_buffers,
    .emit = sum_emit,
    .reference = sum_reference,
    .flops = sum_flops,
    .bytes = sum_bytes,
    .tolerance = sum_tolerance,
    .verify_scale = sum_verify_scale,
};
