/*
 * rownorm.c - the row normalizations, forward, with float64 references:
 *   layernorm  y = (x - mean) / sqrt(var + eps) * weight + bias
 *   rmsnorm    y = x / sqrt(mean(x^2) + eps) * weight
 *   add_rmsnorm  h = x + residual, y = rmsnorm(h) * weight: the residual
 *              stream's update and the norm after it in one pass (h is
 *              written, rounded to the storage, and normalized as rounded)
 * over each row of C elements (mean and var of the row; weight and bias
 * per column). Errors are measured against 1 + |ref| (outputs are of order
 * one: a value near zero carries the absolute error of its row).
 */
#include <math.h>
#include "accuracy.h"
#include "rowwise.h"

/* Row r's mean and inverse standard deviation in double (rmsnorm: mean 0,
 * the root of the mean square). */
static void row_stats(const tess_task *t, const void *x, int64_t r, bool centred, double *mean, double *rstd) {
    const int64_t cols = t->shape[1], first = r * cols;
    double s = 0, q = 0;
    for (int64_t c = 0; centred && c < cols; c++) s += tess_dtype_load(x, t->dtype, first + c);
    *mean = s / (double)cols;
    for (int64_t c = 0; c < cols; c++) {
        double d = tess_dtype_load(x, t->dtype, first + c) - *mean;
        q += d * d;
    }
    *rstd = 1.0 / sqrt(q / (double)cols + tess_rowwise_eps(t));
}

static void norm_row(const tess_op *op, const tess_task *t, void *const *bufs, int64_t r) {
    const tess_rowwise_kind kind = tess_rowwise_of(op)->kind;
    const bool layer = kind == TESS_ROW_LAYERNORM, add = kind == TESS_ROW_ADD_RMSNORM;
    const int64_t cols = t->shape[1], first = r * cols;
    const void *x = bufs[0], *w = bufs[add ? 2 : 1], *bias = layer ? bufs[2] : NULL;
    void *y = bufs[layer || add ? 3 : 2];
    if (add) {
        /* the sum as stored is what the norm sees */
        for (int64_t c = first; c < first + cols; c++)
            tess_dtype_store(bufs[4], t->dtype, c, tess_dtype_load(x, t->dtype, c) + tess_dtype_load(bufs[1], t->dtype, c));
        x = bufs[4];
    }
    double mean, rstd;
    row_stats(t, x, r, layer, &mean, &rstd);
    for (int64_t c = 0; c < cols; c++) {
        double v = (tess_dtype_load(x, t->dtype, first + c) - mean) * rstd * tess_dtype_load(w, t->dtype, c);
        if (bias) v += tess_dtype_load(bias, t->dtype, c);
        tess_dtype_store(y, t->dtype, first + c, v);
    }
}

static tess_status norm_reference(const tess_op *op, const tess_task *t, void *const *bufs) {
    tess_rowwise_each_row(op, t, bufs, norm_row);
    return TESS_OK;
}

static const tess_attr_spec norm_attrs[] = {
    TESS_ERROR_BUDGET_ATTR,
    {.name = "eps", .type = TESS_ATTR_REAL, .dflt = "1e-5", .help = "added to the variance before the square root"},
};
static const tess_op_backend norm_impl[] = {
    {.backend = "cpu", .space = tess_rowwise_cpu_space, .emit = tess_rowwise_cpu_emit},
    {.backend = "cuda", .min_arch = "sm_80", .space = tess_rowwise_cuda_space, .emit = tess_rowwise_cuda_emit},
};

#define NORM_OP(NAME, INFO, SUMMARY)                                   \
    {                                                                  \
        .name = NAME, .family = "reductions", .summary = SUMMARY,      \
        .default_shape = "32768x8192", .extents = "R,C",               \
        .attrs = norm_attrs, .nattrs = 2, .data = &INFO,               \
        .impl = norm_impl, .nimpl = 2,                                 \
        .check_task = tess_rowwise_check,                              \
        .buffers = tess_rowwise_buffers,                               \
        .fill_input = tess_rowwise_fill_input,                         \
        .fill_typical = tess_rowwise_fill_typical,                     \
        .reference = norm_reference, .flops = tess_rowwise_flops,      \
        .bytes = tess_rowwise_bytes, .tolerance = tess_rowwise_tolerance, \
    }

static const tess_rowwise_info layernorm_info = {.kind = TESS_ROW_LAYERNORM, .macro = "OP_LAYERNORM", .nweights = 2};
static const tess_rowwise_info rmsnorm_info = {.kind = TESS_ROW_RMSNORM, .macro = "OP_RMSNORM", .nweights = 1};
static const tess_rowwise_info add_rmsnorm_info = {.kind = TESS_ROW_ADD_RMSNORM, .macro = "OP_ADD_RMSNORM",
                                                   .nweights = 1};

const tess_op tess_op_layernorm =
    NORM_OP("layernorm", layernorm_info,
            "layer normalization of each row, forward (buffers: x, weight[C], bias[C], y; f32, bf16, f16)");
const tess_op tess_op_rmsnorm =
    NORM_OP("rmsnorm", rmsnorm_info, "RMS normalization of each row, forward (buffers: x, weight[C], y; f32, bf16, f16)");
const tess_op tess_op_add_rmsnorm =
    NORM_OP("add_rmsnorm", add_rmsnorm_info,
            "residual add and RMS normalization of each row, forward (buffers: x, residual, weight[C], y, h = x + "
            "residual; f32, bf16, f16)");
