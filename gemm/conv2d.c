/*
 * conv2d.c - the conv2d operator, forward: y = epilogue(conv(x, w)) with x
 * N x H x W x C (channels last), w K x R x S x C (R = S = filter), y
 * N x P x Q x K, computed as an implicit GEMM (gemm.h: M = N P Q, the
 * output channels K, a sum over R S C) on the gemm generators. Attributes:
 * filter, stride, pad, epilogue.
 */
#include "core/error.h"
#include "gemm.h"

static tess_status conv_check(const tess_op *op, const tess_task *t) {
    if (t->ndim != 5)
        return tess_error(TESS_ERR_ARG, "%s: a shape NxHxWxCxK (images, height, width, input and output channels), "
                          "not %d extents", op->name, t->ndim);
    int64_t filter = 0, stride = 0, pad = 0;
    tess_status st = tess_task_attr_int(t, "filter", 3, &filter);
    if (!st) st = tess_task_attr_int(t, "stride", 1, &stride);
    if (!st) st = tess_task_attr_int(t, "pad", 1, &pad);
    if (st) return st;
    if (filter < 1 || filter > 7 || filter % 2 == 0)
        return tess_error(TESS_ERR_ARG, "%s: filter=%lld must be odd, 1 to 7", op->name, (long long)filter);
    if (stride < 1 || stride > 4)
        return tess_error(TESS_ERR_ARG, "%s: stride=%lld must be 1 to 4", op->name, (long long)stride);
    if (pad < 0 || pad >= filter)
        return tess_error(TESS_ERR_ARG, "%s: pad=%lld must be 0 to filter-1 (%lld)", op->name, (long long)pad,
                          (long long)filter - 1);
    if (t->shape[1] + 2 * pad < filter || t->shape[2] + 2 * pad < filter)
        return tess_error(TESS_ERR_ARG, "%s: the padded image %lldx%lld is smaller than the filter", op->name,
                          (long long)(t->shape[1] + 2 * pad), (long long)(t->shape[2] + 2 * pad));
    if (t->dtype == TESS_E4M3) return tess_error(TESS_ERR_ARG, "%s: e4m3 inputs are for gemm only", op->name);
    return tess_gemm_check_dtypes(op, t);
}

static const tess_attr_spec conv_attrs[] = {
    {.name = "epilogue", .type = TESS_ATTR_WORD, .dflt = "none", .choices = "none,bias,gelu,silu",
     .help = "fused after the sum: + bias[k], gelu (erf form) or silu"},
    {.name = "filter", .type = TESS_ATTR_INT, .dflt = "3", .help = "filter height and width (odd)"},
    {.name = "pad", .type = TESS_ATTR_INT, .dflt = "1", .help = "zero padding on each side"},
    {.name = "stride", .type = TESS_ATTR_INT, .dflt = "1", .help = "step between output pixels"},
};

const tess_op tess_op_conv2d = {
    .name = "conv2d",
    .family = "gemm",
    .summary = "2D convolution, NHWC, as an implicit GEMM, fused epilogue (buffers: x, w, [bias], y)",
    .default_shape = "32x56x56x64x64",
    .extents = "N,H,W,C,K",
    .dtype_roles = true,
    .attrs = conv_attrs,
    .nattrs = sizeof conv_attrs / sizeof conv_attrs[0],
    .impl = tess_gemm_impl,
    .nimpl = TESS_GEMM_NIMPL,
    .check_task = conv_check,
    .buffers = tess_gemm_buffers,
    .fill_input = tess_gemm_fill_input,
    .reference = tess_gemm_reference,
    .flops = tess_gemm_flops,
    .bytes = tess_gemm_bytes,
    .tolerance = tess_gemm_tolerance,
    .verify_scale = tess_gemm_scale,
    .verify = tess_gemm_verify,
    .compute_unit = tess_gemm_compute_unit,
};
