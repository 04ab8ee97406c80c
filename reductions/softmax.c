/*
 * softmax.c - softmax over the rows of a 2D task: y = exp(x - max) / sum
 * exp(x - max), each row of C elements on its own. The reference works in
 * double. Errors are measured as the operator defines them, relative to
 * the row: |y - ref| <= tolerance * (1/C + |ref|), and 1/C is at most the
 * row's largest probability, so this is at least as strict as the maximum
 * error relative to each row's largest output.
 */
#include <math.h>
#include "accuracy.h"
#include "rowwise.h"

static tess_status softmax_reference(const tess_op *op, const tess_task *t, void *const *bufs) {
    (void)op;
    const int64_t rows = t->shape[0], cols = t->shape[1];
    for (int64_t r = 0; r < rows; r++) {
        const int64_t first = r * cols;
        double m = -INFINITY, s = 0;
        for (int64_t c = 0; c < cols; c++) m = fmax(m, tess_dtype_load(bufs[0], t->dtype, first + c));
        for (int64_t c = 0; c < cols; c++) s += exp(tess_dtype_load(bufs[0], t->dtype, first + c) - m);
        for (int64_t c = 0; c < cols; c++)
            tess_dtype_store(bufs[1], t->dtype, first + c, exp(tess_dtype_load(bufs[0], t->dtype, first + c) - m) / s);
    }
    return TESS_OK;
}

static double softmax_verify_scale(const tess_op *op, const tess_task *t, void *const *bufs) {
    (void)op, (void)bufs;
    return 1.0 / (double)t->shape[1];
}

static const tess_rowwise_info softmax_info = {.kind = TESS_ROW_SOFTMAX, .macro = "OP_SOFTMAX", .nweights = 0};
static const tess_attr_spec softmax_attrs[] = {TESS_ERROR_BUDGET_ATTR};
static const tess_op_backend softmax_impl[] = {
    {.backend = "cpu", .space = tess_rowwise_cpu_space, .emit = tess_rowwise_cpu_emit},
    {.backend = "cuda", .min_arch = "sm_80", .space = tess_rowwise_cuda_space, .emit = tess_rowwise_cuda_emit},
};

const tess_op tess_op_softmax = {
    .name = "softmax",
    .family = "reductions",
    .summary = "softmax of each row, forward (buffers: x, y; f32, bf16, f16 accumulated in f32)",
    .default_shape = "32768x8192",
    .extents = "R,C",
    .attrs = softmax_attrs,
    .nattrs = 1,
    .data = &softmax_info,
    .impl = softmax_impl,
    .nimpl = 2,
    .check_task = tess_rowwise_check,
    .buffers = tess_rowwise_buffers,
    .fill_typical = tess_rowwise_fill_typical,
    .reference = softmax_reference,
    .flops = tess_rowwise_flops,
    .bytes = tess_rowwise_bytes,
    .tolerance = tess_rowwise_tolerance,
    .verify_scale = softmax_verify_scale,
};
