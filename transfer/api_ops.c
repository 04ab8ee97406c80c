/*
 * api_ops.c - the public API's view of operators (tessera.h): whether one can
 * be used, its buffers for a task, its counts, the ping-pong of time levels,
 * and its float64 reference run over many steps and compared with a run.
 * A thin layer over the operator interface (core/op.h); what a family knows
 * reaches it only through the operator's buffers and reference.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "builtin.h"
#include "core/error.h"
#include "core/op.h"
#include "core/problem.h"
#include "core/task.h"
#include "request.h"

tess_status tess_op_spec_name(const char *spec, char name[TESS_OP_NAME_MAX], const char **attrs) {
    const char *colon = spec ? strchr(spec, ':') : NULL;
    size_t len = colon ? (size_t)(colon - spec) : (spec ? strlen(spec) : 0);
    if (attrs) *attrs = colon ? colon + 1 : NULL;
    if (!spec || len == 0 || len >= TESS_OP_NAME_MAX)
        return tess_error(TESS_ERR_ARG, "bad operator name '%s' (expected NAME or NAME:attr=value,...)",
                          spec ? spec : "");
    memcpy(name, spec, len);
    name[len] = '\0';
    return TESS_OK;
}

tess_status tess_op_check(const char *spec) {
    tess_status st = tess_register_builtin();
    if (st) return st;
    if (!spec) return tess_op_failure(NULL);
    char name[TESS_OP_NAME_MAX];
    if ((st = tess_op_spec_name(spec, name, NULL))) return st;
    /* a user file that defines this name failed: say so, even when a built-in has the name */
    if ((st = tess_op_failure(name))) return st;
    if (tess_op_find(name)) return TESS_OK;
    if (tess_op_failure(NULL)) {
        char why[1024];
        snprintf(why, sizeof why, "%s", tess_errmsg());
        return tess_error(TESS_ERR_ARG, "unknown operator '%s' (see `tessera ops`); %s", name, why);
    }
    return tess_error(TESS_ERR_ARG, "unknown operator '%s' (see `tessera ops`)", name);
}

tess_status tess_task_resolve(const char *spec, const int64_t *shape, int ndim, const char *dtype,
                              const tess_op **op, tess_task *t) {
    char name[TESS_OP_NAME_MAX];
    const char *attrs;
    tess_status st = tess_op_check(spec);
    if (!st) st = tess_op_spec_name(spec, name, &attrs);
    if (st) return st;
    *op = tess_op_find(name);
    tess_dtype dt[TESS_ROLE_COUNT];
    st = tess_task_dtypes_parse(dtype ? dtype : "f32", dt);
    return st ? st : tess_op_make_task(*op, dt[0], dt[1], dt[2], shape, ndim, attrs, t);
}

/* The task of an operator spec on shape, checked. */
static tess_status op_task(const char *spec, const int64_t *shape, int ndim, const char *dtype,
                           const tess_op **op, tess_task *t) {
    return tess_task_resolve(spec, shape, ndim, dtype, op, t);
}

static int role_of(tess_buffer_role r) {
    switch (r) {
    case TESS_BUF_IN: return TESS_BUFFER_INPUT;
    case TESS_BUF_OUT: return TESS_BUFFER_OUTPUT;
    case TESS_BUF_INOUT: return TESS_BUFFER_INOUT;
    default: return TESS_BUFFER_SCRATCH;
    }
}

tess_status tess_op_list_buffers(const char *name, const int64_t *shape, int ndim, const char *dtype,
                                 tess_buffer_info *out, int cap, int *n) {
    *n = 0;
    const tess_op *op;
    tess_task t;
    tess_buffer_list list = {0};
    tess_status st = op_task(name, shape, ndim, dtype, &op, &t);
    if (!st) st = tess_op_buffers(op, &t, &list);
    if (!st && list.n > cap) st = tess_error(TESS_ERR_ARG, "%s has %d buffers, room for %d given", name, list.n, cap);
    const tess_buffer_spec *spec = list.spec;
    for (int i = 0; i < list.n && !st; i++) {
        tess_buffer_info *b = &out[i];
        memset(b, 0, sizeof *b);
        snprintf(b->name, sizeof b->name, "%s", spec[i].name);
        b->role = role_of(spec[i].role);
        snprintf(b->dtype, sizeof b->dtype, "%s", tess_dtype_name(spec[i].dtype));
        b->elem_bytes = tess_dtype_size(spec[i].dtype);
        b->count = spec[i].count;
        b->rank = spec[i].rank ? spec[i].rank : ndim;
        b->advances = -1;
        bool default_range = spec[i].lo == 0 && spec[i].hi == 0;
        b->lo = default_range ? -1 : spec[i].lo;
        b->hi = default_range ? 1 : spec[i].hi;
        for (int j = 0; j < list.n && spec[i].advances[0]; j++)
            if (spec[j].role == TESS_BUF_IN && strcmp(spec[j].name, spec[i].advances) == 0) b->advances = j;
    }
    for (int i = 0; i < list.n && !st; i++)
        if (out[i].advances >= 0) out[out[i].advances].advanced = 1;
    if (!st) *n = list.n;
    tess_buffer_list_free(&list);
    return st;
}

tess_status tess_op_fill_input(const char *name, const int64_t *shape, int ndim, const char *dtype, int index,
                               void *host, uint64_t seed) {
    const tess_op *op;
    tess_task t;
    tess_buffer_list list = {0};
    tess_status st = op_task(name, shape, ndim, dtype, &op, &t);
    if (!st) st = tess_op_buffers(op, &t, &list);
    if (!st && (index < 0 || index >= list.n || !tess_buffer_is_input(&list.spec[index])))
        st = tess_error(TESS_ERR_ARG, "%s: buffer %d is not one of its inputs", name, index);
    if (!st) st = tess_problem_fill_input(op, &t, &list.spec[index], index, host, seed);
    tess_buffer_list_free(&list);
    return st;
}

tess_status tess_op_extent_names(const char *name, const int64_t *shape, int ndim,
                                 char (*names)[TESS_EXTENT_NAME_MAX]) {
    const tess_op *op;
    tess_task t;
    tess_status st = op_task(name, shape, ndim, NULL, &op, &t);
    for (int i = 0; i < ndim && !st; i++) snprintf(names[i], TESS_EXTENT_NAME_MAX, "%s", t.dim[i]);
    return st;
}

tess_status tess_op_counts(const char *name, const int64_t *shape, int ndim, const char *dtype,
                           double *bytes, double *flops, double *tolerance) {
    const tess_op *op;
    tess_task t;
    tess_status st = op_task(name, shape, ndim, dtype, &op, &t);
    if (st) return st;
    if (bytes) *bytes = op->bytes(op, &t);
    if (flops) *flops = op->flops(op, &t);
    if (tolerance) *tolerance = op->tolerance(op, &t);
    return TESS_OK;
}

void tess_op_advance(const tess_buffer_info *bufs, int n, void **arrays) {
    for (int i = 0; i < n; i++) {
        int in = bufs[i].advances;
        if (in < 0 || in >= n) continue;
        void *t = arrays[in];
        arrays[in] = arrays[i];
        arrays[i] = t;
    }
}

tess_status tess_reference_steps(const char *name, const int64_t *shape, int ndim, void **arrays, int narrays,
                                 long steps, tess_step_fn progress, void *user) {
    if (narrays < 1) return tess_error(TESS_ERR_ARG, "%s: no arrays", name);
    tess_buffer_info *bufs = calloc((size_t)narrays, sizeof *bufs);
    if (!bufs) return tess_error(TESS_ERR_NOMEM, "out of memory describing %s's buffers", name);
    int n;
    const tess_op *op;
    tess_task t;
    tess_status st = tess_op_list_buffers(name, shape, ndim, "f64", bufs, narrays, &n);
    if (!st && narrays != n) st = tess_error(TESS_ERR_ARG, "%s takes %d arrays, %d given", name, n, narrays);
    if (!st) st = op_task(name, shape, ndim, "f64", &op, &t);
    double t0 = tess_now();
    for (long s = 0; s < steps && !st; s++) {
        st = op->reference(op, &t, arrays);
        tess_op_advance(bufs, n, arrays);
        if (!st && progress) progress(s + 1, steps, tess_now() - t0, user);
    }
    free(bufs);
    return st;
}

tess_status tess_reference_compare(const char *dtype, const void *got, const double *ref, int64_t n,
                                   tess_comparison *out) {
    tess_dtype dt;
    tess_status st = tess_dtype_parse(dtype, &dt);
    if (st) return st;
    memset(out, 0, sizeof *out);
    double mag = 0, err = 0;
    int64_t first_nonfinite = -1, largest = 0;
    for (int64_t i = 0; i < n; i++) {
        double r = ref[i], v = tess_dtype_load(got, dt, i);
        bool bad = !isfinite(v), ref_bad = !isfinite(r);
        out->nonfinite += bad;
        out->ref_nonfinite += ref_bad;
        if (bad || ref_bad) {
            if (first_nonfinite < 0) first_nonfinite = i;
            continue;
        }
        mag = fmax(mag, fabs(r));
        if (fabs(v - r) > err) {
            err = fabs(v - r);
            largest = i;
        }
    }
    out->worst = first_nonfinite >= 0 ? first_nonfinite : largest;
    out->max_diff = first_nonfinite >= 0 ? INFINITY : err / (1 + mag);
    return TESS_OK;
}
