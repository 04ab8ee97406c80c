/*
 * softmax.c - softmax and log_softmax over the rows of a 2D task:
 *   softmax      y = exp(x - max) / sum exp(x - max)
 *   log_softmax  y = x - max - log sum exp(x - max)
 * each row of C elements on its own. The references work in double.
 * Softmax's errors are measured as the operator defines them, relative to
 * the row: |y - ref| <= tolerance * (1/C + |ref|), and 1/C is at most the
 * row's largest probability, so this is at least as strict as the maximum
 * error relative to each row's largest output. log_softmax's are relative
 * to 1 + |ref|.
 */
#include <math.h>
#include "accuracy.h"
#include "rowwise.h"

void tess_row_max_sum(const tess_task *t, const void *x, int64_t r, double *max, double *sum) {
    const int64_t cols = t->shape[1], first = r * cols;
    double m = -INFINITY, s = 0;
    for (int64_t c = 0; c < cols; c++) m = fmax(m, tess_dtype_load(x, t->dtype, first + c));
    for (int64_t c = 0; c < cols; c++) s += exp(tess_dtype_load(x, t->dtype, first + c) - m);
    *max = m, *sum = s;
}

static void softmax_row(const tess_op *op, const tess_task *t, void *const *bufs, int64_t r) {
    const bool log_form = tess_rowwise_of(op)->kind == TESS_ROW_LOG_SOFTMAX;
    const int64_t cols = t->shape[1], first = r * cols;
    double m, s;
    tess_row_max_sum(t, bufs[0], r, &m, &s);
    const double log_s = log(s);
    for (int64_t c = 0; c < cols; c++) {
        const double d = tess_dtype_load(bufs[0], t->dtype, first + c) - m;
        tess_dtype_store(bufs[1], t->dtype, first + c, log_form ? d - log_s : exp(d) / s);
    }
}

static tess_status softmax_reference(const tess_op *op, const tess_task *t, void *const *bufs) {
    tess_rowwise_each_row(op, t, bufs, softmax_row);
    return TESS_OK;
}

static double softmax_verify_scale(const tess_op *op, const tess_task *t, void *const *bufs) {
    (void)op, (void)bufs;
    return 1.0 / (double)t->shape[1];
}

static const tess_attr_spec softmax_attrs[] = {TESS_ERROR_BUDGET_ATTR};
static const tess_op_backend softmax_impl[] = {
    {.backend = "cpu", .space = tess_rowwise_cpu_space, .emit = tess_rowwise_cpu_emit},
    {.backend = "cuda", .min_arch = "sm_80", .space = tess_rowwise_cuda_space, .emit = tess_rowwise_cuda_emit},
};

#define SOFTMAX_OP(NAME, INFO, SUMMARY, SCALE)                         \
    {                                                                  \
        .name = NAME, .family = "reductions", .summary = SUMMARY,      \
        .default_shape = "32768x8192", .extents = "R,C",               \
        .attrs = softmax_attrs, .nattrs = 1, .data = &INFO,            \
        .impl = softmax_impl, .nimpl = 2,                              \
        .check_task = tess_rowwise_check,                              \
        .buffers = tess_rowwise_buffers,                               \
        .fill_input = tess_rowwise_fill_input,                         \
        .fill_typical = tess_rowwise_fill_typical,                     \
        .reference = softmax_reference, .flops = tess_rowwise_flops,   \
        .bytes = tess_rowwise_bytes, .tolerance = tess_rowwise_tolerance, \
        .verify_scale = SCALE,                                         \
    }

static const tess_rowwise_info softmax_info = {.kind = TESS_ROW_SOFTMAX, .macro = "OP_SOFTMAX", .nweights = 0};
static const tess_rowwise_info log_softmax_info = {.kind = TESS_ROW_LOG_SOFTMAX, .macro = "OP_LOG_SOFTMAX",
                                                   .nweights = 0};

const tess_op tess_op_softmax = SOFTMAX_OP("softmax", softmax_info,
                                           "softmax of each row, forward (buffers: x, y; f32, bf16, f16 accumulated in f32)",
                                           softmax_verify_scale);
const tess_op tess_op_log_softmax =
    SOFTMAX_OP("log_softmax", log_softmax_info,
               "log-softmax of each row, forward (buffers: x, y; f32, bf16, f16 accumulated in f32)", NULL);
