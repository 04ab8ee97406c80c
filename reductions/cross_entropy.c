/*
 * cross_entropy.c - cross-entropy over the rows of logits, forward: for row
 * r with label k, lse = log sum exp x and loss = lse - x[k], both f32 (the
 * loss a training step averages, and the log-sum-exp its backward pass
 * reuses). The labels are int32 in [0, C). The reference works in double;
 * errors are measured against the root mean square of the logits plus
 * one: lse inherits the logits' magnitude, and the loss is the difference
 * of two numbers of that size.
 */
#include <math.h>
#include "core/error.h"
#include "accuracy.h"
#include "rowwise.h"

static void cross_entropy_row(const tess_op *op, const tess_task *t, void *const *bufs, int64_t r) {
    (void)op;
    double m, s;
    tess_row_max_sum(t, bufs[0], r, &m, &s);
    const double lse = m + log(s);
    const int32_t label = ((const int32_t *)bufs[1])[r];
    ((float *)bufs[2])[r] = (float)(lse - tess_dtype_load(bufs[0], t->dtype, r * t->shape[1] + label));
    ((float *)bufs[3])[r] = (float)lse;
}

static tess_status cross_entropy_reference(const tess_op *op, const tess_task *t, void *const *bufs) {
    const int32_t *labels = bufs[1];
    for (int64_t r = 0; r < t->shape[0]; r++)
        if (labels[r] < 0 || labels[r] >= t->shape[1])
            return tess_error(TESS_ERR_ARG, "cross_entropy: label %d of row %lld is outside [0, %lld)", labels[r],
                              (long long)r, (long long)t->shape[1]);
    tess_rowwise_each_row(op, t, bufs, cross_entropy_row);
    return TESS_OK;
}

static double cross_entropy_verify_scale(const tess_op *op, const tess_task *t, void *const *bufs) {
    (void)op;
    const int64_t n = t->shape[0] * t->shape[1];
    double q = 0;
    for (int64_t i = 0; i < n; i++) {
        const double v = tess_dtype_load(bufs[0], t->dtype, i);
        q += v * v;
    }
    return 1.0 + sqrt(q / (double)n);
}

static const tess_attr_spec cross_entropy_attrs[] = {TESS_ERROR_BUDGET_ATTR};
static const tess_op_backend cross_entropy_impl[] = {
    {.backend = "cpu", .space = tess_rowwise_cpu_space, .emit = tess_rowwise_cpu_emit},
    {.backend = "cuda", .min_arch = "sm_80", .space = tess_rowwise_cuda_space, .emit = tess_rowwise_cuda_emit},
};
static const tess_rowwise_info cross_entropy_info = {.kind = TESS_ROW_CROSS_ENTROPY, .macro = "OP_CROSS_ENTROPY",
                                                     .nweights = 0};

const tess_op tess_op_cross_entropy = {
    .name = "cross_entropy",
    .family = "reductions",
    .summary = "cross-entropy of each row of logits with its label, forward (buffers: x, labels[R] i32, loss[R] f32, "
               "lse[R] f32; logits f32, bf16, f16)",
    .default_shape = "32768x8192",
    .extents = "R,C",
    .attrs = cross_entropy_attrs,
    .nattrs = 1,
    .data = &cross_entropy_info,
    .impl = cross_entropy_impl,
    .nimpl = 2,
    .check_task = tess_rowwise_check,
    .buffers = tess_rowwise_buffers,
    .fill_input = tess_rowwise_fill_input,
    .fill_typical = tess_rowwise_fill_typical,
    .reference = cross_entropy_reference,
    .flops = tess_rowwise_flops,
    .bytes = tess_rowwise_bytes,
    .tolerance = tess_rowwise_tolerance,
    .verify_scale = cross_entropy_verify_scale,
};
