/*
 * sum.c - the sum of a vector as an operator: out[0] = sum(in).
 * Any shape is accepted and summed as a flat vector. A scratch buffer of
 * TESS_SUM_SCRATCH elements holds per-block partial sums where a generator
 * needs them.
 */
#include <math.h>
#include "core/error.h"
#include "accuracy.h"
#include "core/host_parallel.h"
#include "sum.h"

/* The reference and the scale sum SUM_PIECES fixed pieces of the vector on
 * the host's cores and add the pieces' sums in order: the result does not
 * depend on the number of cores. */
#define SUM_PIECES 256

typedef struct sum_job {
    const void *in;
    tess_dtype dtype;
    int64_t n;
    int magnitudes;                      /* sum |x| instead of x */
    double sum[SUM_PIECES], comp[SUM_PIECES];
} sum_job;

/* Kahan summation in double: the reference must be better than any candidate. */
static void sum_pieces(void *arg, int part, int64_t first, int64_t end) {
    (void)part;
    sum_job *j = arg;
    for (int64_t k = first; k < end; k++) {
        double s = 0, comp = 0;
        for (int64_t i = j->n * k / SUM_PIECES; i < j->n * (k + 1) / SUM_PIECES; i++) {
            const double x = tess_dtype_load(j->in, j->dtype, i);
            const double y = (j->magnitudes ? fabs(x) : x) - comp;
            const double u = s + y;
            comp = (u - s) - y;
            s = u;
        }
        j->sum[k] = s;
        j->comp[k] = comp;
    }
}

static double sum_of(const tess_task *t, const void *in, int magnitudes) {
    sum_job j = {.in = in, .dtype = t->dtype, .n = tess_shape_elements(t->shape, t->ndim), .magnitudes = magnitudes};
    tess_host_parallel(SUM_PIECES, sum_pieces, &j);
    double s = 0, comp = 0;
    for (int k = 0; k < SUM_PIECES; k++) {
        const double y = (j.sum[k] - j.comp[k]) - comp;
        const double u = s + y;
        comp = (u - s) - y;
        s = u;
    }
    return s;
}

static tess_status sum_check(const tess_op *op, const tess_task *t) {
    (void)op;
    if (t->dtype != TESS_F32 && t->dtype != TESS_F64)
        return tess_error(TESS_ERR_ARG, "sum supports f32 and f64, not %s", tess_dtype_name(t->dtype));
    return TESS_OK;
}

static tess_status sum_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out) {
    (void)op;
    tess_status st = tess_buffer_list_add(out, "in", TESS_BUF_IN, t->dtype, tess_shape_elements(t->shape, t->ndim));
    if (!st) st = tess_buffer_list_add(out, "out", TESS_BUF_OUT, t->dtype, 1);
    return st ? st : tess_buffer_list_add(out, "partials", TESS_BUF_SCRATCH, t->dtype, TESS_SUM_SCRATCH);
}

/* Uniform in [-1, 1], filled in parallel. */
static tess_status sum_fill_input(const tess_op *op, const tess_task *t, int index, void *host, uint64_t seed) {
    (void)op, (void)index;
    return tess_uniform_fill(host, t->dtype, tess_shape_elements(t->shape, t->ndim), seed);
}

static tess_status sum_reference(const tess_op *op, const tess_task *t, void *const *bufs) {
    (void)op;
    tess_dtype_store(bufs[1], t->dtype, 0, sum_of(t, bufs[0], 0));
    return TESS_OK;
}

/* Errors are measured against the sum of magnitudes: reassociating a sum
 * changes its rounding by up to a few ulps of that, not of the result. */
static double sum_verify_scale(const tess_op *op, const tess_task *t, void *const *bufs) {
    (void)op;
    return sum_of(t, bufs[0], 1);
}

static double sum_flops(const tess_op *op, const tess_task *t) {
    (void)op;
    return (double)tess_shape_elements(t->shape, t->ndim);
}

static double sum_bytes(const tess_op *op, const tess_task *t) {
    (void)op;
    return (double)tess_shape_elements(t->shape, t->ndim) * (double)tess_dtype_size(t->dtype);
}

static double sum_tolerance(const tess_op *op, const tess_task *t) {
    (void)op;
    return t->dtype == TESS_F64 ? 1e-13 : 2e-6;
}

static const tess_op_backend sum_impl[] = {
    {.backend = "cpu", .space = tess_sum_cpu_space, .emit = tess_sum_cpu_emit},
    {.backend = "cuda", .space = tess_sum_cuda_space, .emit = tess_sum_cuda_emit},
};

const tess_op tess_op_sum = {
    .name = "sum",
    .family = "reductions",
    .summary = "sum of all elements (buffers: in, out[1], partials scratch)",
    .default_shape = "67108864",
    .extents = "s,t,u,v,w,z,y,x",   /* any rank, summed as one vector */
    .impl = sum_impl,
    .nimpl = 2,
    .check_task = sum_check,
    .buffers = sum_buffers,
    .fill_input = sum_fill_input,
    .reference = sum_reference,
    .flops = sum_flops,
    .bytes = sum_bytes,
    .tolerance = sum_tolerance,
    .verify_scale = sum_verify_scale,
};
