/*
 * rowwise.h - operators that work on the rows of a 2D task (extents R, C):
 * softmax, log_softmax, layernorm, rmsnorm, the fused residual add and
 * rmsnorm, and cross-entropy from logits and labels, forward. Each row of C
 * elements is read once and written once (cross-entropy writes two numbers
 * per row); 16-bit storage (bf16, f16) is accumulated in f32.
 *
 * The operators share their task checks, buffers, counts and tolerances
 * (rowwise.c), one C/OpenMP generator (rowwise_cpu.c) and one CUDA template
 * (templates/rowwise.cu, rowwise_cuda.c); what differs is the kind below
 * and the float64 reference (softmax.c, rownorm.c, cross_entropy.c).
 *
 * Attributes: error_budget (real, default 0): the extra error relative to
 * the float64 reference that the task accepts; above 0 the spaces gain
 * shortcut parameters (accuracy.h). eps (real, the norms only).
 */
#ifndef TESS_ROWWISE_H
#define TESS_ROWWISE_H

#include "core/op.h"

typedef enum tess_rowwise_kind {
    TESS_ROW_SOFTMAX,     /* y = exp(x - max) / sum exp(x - max) */
    TESS_ROW_LAYERNORM,   /* y = (x - mean) / sqrt(var + eps) * weight + bias */
    TESS_ROW_RMSNORM,     /* y = x / sqrt(mean(x^2) + eps) * weight */
    TESS_ROW_LOG_SOFTMAX, /* y = x - max - log sum exp(x - max) */
    TESS_ROW_ADD_RMSNORM, /* h = x + residual (stored), y = rmsnorm(h) * weight */
    TESS_ROW_CROSS_ENTROPY /* lse = log sum exp x, loss = lse - x[label], per row (f32) */
} tess_rowwise_kind;

/* What a rowwise operator's op->data points to. */
typedef struct tess_rowwise_info {
    tess_rowwise_kind kind;
    const char *macro;    /* the template's OP_ macro: "OP_SOFTMAX" */
    int nweights;         /* per-column inputs after x: 0, 1 (weight) or 2 (weight, bias) */
} tess_rowwise_info;

static inline const tess_rowwise_info *tess_rowwise_of(const tess_op *op) { return op->data; }
/* The kinds built on the row's max and sum of exponentials. */
static inline bool tess_rowwise_is_softmax(const tess_op *op) {
    const tess_rowwise_kind k = tess_rowwise_of(op)->kind;
    return k == TESS_ROW_SOFTMAX || k == TESS_ROW_LOG_SOFTMAX || k == TESS_ROW_CROSS_ENTROPY;
}

/* The shared slots (rowwise.c). */
tess_status tess_rowwise_check(const tess_op *op, const tess_task *t);
tess_status tess_rowwise_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out);
tess_status tess_rowwise_fill_input(const tess_op *op, const tess_task *t, int index, void *host, uint64_t seed);
tess_status tess_rowwise_fill_typical(const tess_op *op, const tess_task *t, int index, void *host, uint64_t seed);
double tess_rowwise_flops(const tess_op *op, const tess_task *t);
double tess_rowwise_bytes(const tess_op *op, const tess_task *t);
double tess_rowwise_tolerance(const tess_op *op, const tess_task *t);
/* eps of a norm's task (its attribute). */
double tess_rowwise_eps(const tess_task *t);
/* Calls fn(ctx, t, bufs, r) for every row r, in parallel on the host. */
typedef void tess_row_fn(const tess_op *op, const tess_task *t, void *const *bufs, int64_t r);
void tess_rowwise_each_row(const tess_op *op, const tess_task *t, void *const *bufs, tess_row_fn *fn);
/* Row r of x: its max and the sum of exp(x - max), in double (softmax.c). */
void tess_row_max_sum(const tess_task *t, const void *x, int64_t r, double *max, double *sum);

tess_status tess_rowwise_cpu_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
tess_status tess_rowwise_cpu_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                  const tess_config *c, tess_kernel_source *out);
tess_status tess_rowwise_cuda_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
tess_status tess_rowwise_cuda_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                                   const tess_config *c, tess_kernel_source *out);

extern const tess_op tess_op_softmax, tess_op_log_softmax, tess_op_layernorm, tess_op_rmsnorm, tess_op_add_rmsnorm,
    tess_op_cross_entropy;

#endif
