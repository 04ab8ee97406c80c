/*
 * axis_reduce.c - the `reduce` operator (axis_reduce.h): buffers x and y
 * (x's shape without the reduced axis), a float64 reference on the host's
 * cores, compulsory bytes (x read, y written). Errors of a sum are measured
 * against the sum of the magnitudes of its n terms (uniform inputs: n / 2),
 * those of a max or a mean against 1 + |ref|.
 */
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "accuracy.h"
#include "axis_reduce.h"
#include "core/host_parallel.h"

static const char *const kind_names[] = {"sum", "max", "mean"};

tess_reduce_view tess_reduce_view_of(const tess_task *t) {
    tess_reduce_view v = {TESS_REDUCE_SUM, 1, 1, 1};
    const char *kind = tess_task_attr(t, "kind");
    for (int k = 0; k < 3; k++)
        if (kind && strcmp(kind, kind_names[k]) == 0) v.kind = (tess_reduce_kind)k;
    int64_t axis = 2;
    tess_task_attr_int(t, "axis", 2, &axis);
    for (int a = 0; a < t->ndim; a++) {
        if (a < axis) v.outer *= t->shape[a];
        else if (a == axis) v.n = t->shape[a];
        else v.inner *= t->shape[a];
    }
    return v;
}

static tess_status reduce_check(const tess_op *op, const tess_task *t) {
    if (t->ndim != 3)
        return tess_error(TESS_ERR_ARG, "%s works on 3D tasks (a shape ZxYxX), not %d extents", op->name, t->ndim);
    int64_t axis = 0;
    tess_status st = tess_task_attr_int(t, "axis", 2, &axis);
    if (st) return st;
    if (axis < 0 || axis > 2) return tess_error(TESS_ERR_ARG, "%s: axis=%lld must be 0, 1 or 2", op->name, (long long)axis);
    return tess_storage_check(op, t);
}

static tess_status reduce_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out) {
    (void)op;
    const tess_reduce_view v = tess_reduce_view_of(t);
    tess_status st = tess_buffer_list_add(out, "x", TESS_BUF_IN, t->dtype, v.outer * v.n * v.inner);
    return st ? st : tess_buffer_list_add(out, "y", TESS_BUF_OUT, t->dtype, v.outer * v.inner);
}

typedef struct reduce_job {
    const tess_task *t;
    tess_reduce_view v;
    void *const *bufs;
} reduce_job;

/* Outputs [first, end) of the flattened (outer, inner) index, in runs of
 * at most REF_RUN consecutive inner positions: each reduced element k is
 * read along a run, so the reads are contiguous for any axis, and every
 * output adds its terms in the order of k. */
#define REF_RUN 256
static void reduce_outputs(void *arg, int part, int64_t first, int64_t end) {
    (void)part;
    const reduce_job *j = arg;
    const tess_reduce_view v = j->v;
    double acc[REF_RUN];
    for (int64_t at = first; at < end;) {
        const int64_t o = at / v.inner, i0 = at % v.inner;
        int64_t m = v.inner - i0 < REF_RUN ? v.inner - i0 : REF_RUN;
        if (m > end - at) m = end - at;
        for (int64_t q = 0; q < m; q++) acc[q] = v.kind == TESS_REDUCE_MAX ? -INFINITY : 0;
        for (int64_t k = 0; k < v.n; k++) {
            const int64_t base = (o * v.n + k) * v.inner + i0;
            for (int64_t q = 0; q < m; q++) {
                const double x = tess_dtype_load(j->bufs[0], j->t->dtype, base + q);
                acc[q] = v.kind == TESS_REDUCE_MAX ? fmax(acc[q], x) : acc[q] + x;
            }
        }
        for (int64_t q = 0; q < m; q++)
            tess_dtype_store(j->bufs[1], j->t->dtype, at + q, v.kind == TESS_REDUCE_MEAN ? acc[q] / (double)v.n : acc[q]);
        at += m;
    }
}

static tess_status reduce_reference(const tess_op *op, const tess_task *t, void *const *bufs) {
    (void)op;
    reduce_job j = {t, tess_reduce_view_of(t), bufs};
    tess_host_parallel(j.v.outer * j.v.inner, reduce_outputs, &j);
    return TESS_OK;
}

/* Uniform in [-1, 1], filled in parallel. */
static tess_status reduce_fill_input(const tess_op *op, const tess_task *t, int index, void *host, uint64_t seed) {
    (void)op, (void)index;
    const tess_reduce_view v = tess_reduce_view_of(t);
    return tess_uniform_fill(host, t->dtype, v.outer * v.n * v.inner, seed);
}

static double reduce_verify_scale(const tess_op *op, const tess_task *t, void *const *bufs) {
    (void)op, (void)bufs;
    const tess_reduce_view v = tess_reduce_view_of(t);
    return v.kind == TESS_REDUCE_SUM ? 0.5 * (double)v.n : 1.0;
}

static double reduce_flops(const tess_op *op, const tess_task *t) {
    (void)op;
    return (double)tess_shape_elements(t->shape, t->ndim);
}

static double reduce_bytes(const tess_op *op, const tess_task *t) {
    (void)op;
    const tess_reduce_view v = tess_reduce_view_of(t);
    return (double)tess_dtype_size(t->dtype) * (double)(v.outer * v.inner) * (double)(v.n + 1);
}

static double reduce_tolerance(const tess_op *op, const tess_task *t) {
    (void)op;
    return tess_storage_tolerance(t);
}

static const tess_attr_spec reduce_attrs[] = {
    {.name = "kind", .type = TESS_ATTR_WORD, .dflt = "sum", .choices = "sum,max,mean", .help = "how the axis is combined"},
    {.name = "axis", .type = TESS_ATTR_INT, .dflt = "2", .help = "the reduced axis: 0 (z), 1 (y) or 2 (x)"},
};
static const tess_op_backend reduce_impl[] = {
    {.backend = "cpu", .space = tess_reduce_cpu_space, .emit = tess_reduce_cpu_emit},
    {.backend = "cuda", .min_arch = "sm_80", .space = tess_reduce_cuda_space, .emit = tess_reduce_cuda_emit},
};

const tess_op tess_op_reduce = {
    .name = "reduce",
    .family = "reductions",
    .summary = "sum, max or mean of a 3D array along one axis (buffers: x, y; f32, bf16, f16 accumulated in f32)",
    .default_shape = "64x512x1024",
    .extents = "z,y,x",
    .attrs = reduce_attrs,
    .nattrs = 2,
    .impl = reduce_impl,
    .nimpl = 2,
    .check_task = reduce_check,
    .buffers = reduce_buffers,
    .fill_input = reduce_fill_input,
    .reference = reduce_reference,
    .flops = reduce_flops,
    .bytes = reduce_bytes,
    .tolerance = reduce_tolerance,
    .verify_scale = reduce_verify_scale,
};
