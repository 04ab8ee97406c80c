/*
 * desc.c - a gemm or conv2d task as a tess_gemm_desc (gemm.h): the GEMM's
 * extents and operand layouts, its scalars and epilogue, its dtypes per role
 * and where each operand is among the task's buffers.
 */
#include <string.h>
#include "core/error.h"
#include "gemm.h"

static const char *const epilogue_names[] = {"none", "bias", "gelu", "silu"};

const char *tess_gemm_epilogue_name(tess_gemm_epilogue e) { return epilogue_names[e]; }

static tess_status read_epilogue(const tess_task *t, tess_gemm_epilogue *e) {
    const char *text = tess_task_attr(t, "epilogue");
    *e = TESS_EPI_NONE;
    for (int i = 0; text && i < (int)(sizeof epilogue_names / sizeof epilogue_names[0]); i++)
        if (strcmp(text, epilogue_names[i]) == 0) *e = (tess_gemm_epilogue)i;
    return TESS_OK;
}

static tess_status describe_gemm(const tess_task *t, tess_gemm_desc *d) {
    d->m = t->shape[0];
    d->n = t->shape[1];
    d->k = t->shape[2];
    const char *layout = tess_task_attr(t, "layout");
    d->a_trans = layout && layout[0] == 't';
    d->b_trans = layout && layout[1] == 't';
    tess_status st = tess_task_attr_real(t, "alpha", 1.0, &d->alpha);
    if (!st) st = tess_task_attr_real(t, "beta", 0.0, &d->beta);
    if (st) return st;
    int next = 0;
    d->buf_a = next++;
    d->buf_b = next++;
    d->buf_c = d->beta != 0 ? next++ : -1;
    d->buf_bias = d->epilogue == TESS_EPI_BIAS ? next++ : -1;
    d->buf_d = next;
    return TESS_OK;
}

static tess_status describe_conv(const tess_task *t, tess_gemm_desc *d) {
    int64_t filter = 0, stride = 0, pad = 0;
    tess_status st = tess_task_attr_int(t, "filter", 3, &filter);
    if (!st) st = tess_task_attr_int(t, "stride", 1, &stride);
    if (!st) st = tess_task_attr_int(t, "pad", 1, &pad);
    if (st) return st;
    d->conv = true;
    d->batch = t->shape[0];
    d->height = t->shape[1];
    d->width = t->shape[2];
    d->channels = t->shape[3];
    d->filter = (int)filter;
    d->stride = (int)stride;
    d->pad = (int)pad;
    d->out_h = stride > 0 ? (d->height + 2 * pad - filter) / stride + 1 : 0;
    d->out_w = stride > 0 ? (d->width + 2 * pad - filter) / stride + 1 : 0;
    d->m = d->batch * d->out_h * d->out_w;
    d->n = t->shape[4];
    d->k = filter * filter * d->channels;
    d->b_trans = true;   /* the filters are K x (R S C): B stored N x K */
    d->alpha = 1.0;
    d->buf_a = 0;
    d->buf_b = 1;
    d->buf_c = -1;
    d->buf_bias = d->epilogue == TESS_EPI_BIAS ? 2 : -1;
    d->buf_d = d->buf_bias >= 0 ? 3 : 2;
    return TESS_OK;
}

tess_status tess_gemm_describe(const tess_op *op, const tess_task *t, tess_gemm_desc *d) {
    memset(d, 0, sizeof *d);
    d->in = t->dtype;
    d->acc = t->acc_dtype;
    d->out = t->out_dtype;
    tess_status st = read_epilogue(t, &d->epilogue);
    if (st) return st;
    st = strcmp(op->name, "conv2d") == 0 ? describe_conv(t, d) : describe_gemm(t, d);
    return st ? tess_error_context(st, "%s task", op->name) : TESS_OK;
}

bool tess_gemm_full_reference(const tess_gemm_desc *d) {
    return (double)d->m * (double)d->n * (double)d->k <= (double)TESS_GEMM_FULL_REFERENCE;
}

tess_status tess_gemm_check_dtypes(const tess_op *op, const tess_task *t) {
    const tess_dtype in = t->dtype, acc = t->acc_dtype, out = t->out_dtype;
    const bool half = in == TESS_BF16 || in == TESS_F16;
    if (half && acc == TESS_F32 && (out == in || out == TESS_F32)) return TESS_OK;
    if ((in == TESS_F32 || in == TESS_F64) && acc == in && out == in) return TESS_OK;
    if (in == TESS_E4M3 && acc == TESS_F32 && (out == TESS_BF16 || out == TESS_F32)) return TESS_OK;
    if (in == TESS_E4M3)
        return tess_error(TESS_ERR_ARG, "%s: e4m3 inputs accumulate in f32, with a bf16 or f32 output: give the dtypes as "
                          "e4m3,f32,bf16 or e4m3,f32,f32 (input,accumulate,output)", op->name);
    if (half)
        return tess_error(TESS_ERR_ARG,
                          "%s: %s inputs accumulate in f32, with a %s or f32 output: give the dtypes as "
                          "%s,f32,%s (input,accumulate,output)",
                          op->name, tess_dtype_name(in), tess_dtype_name(in), tess_dtype_name(in), tess_dtype_name(in));
    return tess_error(TESS_ERR_ARG,
                      "%s takes bf16, f16 or e4m3 inputs accumulated in f32, or f32 or f64 throughout, not %s,%s,%s",
                      op->name, tess_dtype_name(in), tess_dtype_name(acc), tess_dtype_name(out));
}
