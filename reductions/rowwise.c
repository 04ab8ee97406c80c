/*
 * rowwise.c - the slots the row-wise operators share (rowwise.h): tasks of
 * R rows of C elements in one storage dtype, buffers x, the per-column
 * weights, y; compulsory bytes (x read once, y written once, the weights
 * read once); tolerances of the storage plus the error budget; typical
 * inputs, one kind per row.
 */
#include <gsl/gsl_rng.h>
#include "core/error.h"
#include "accuracy.h"
#include "rowwise.h"

static const char *const weight_names[] = {"weight", "bias"};

tess_status tess_rowwise_check(const tess_op *op, const tess_task *t) {
    if (t->ndim != 2)
        return tess_error(TESS_ERR_ARG, "%s works on rows: a shape RxC (rows x row length), not %d extents", op->name,
                          t->ndim);
    tess_status st = tess_storage_check(op, t);
    if (st || tess_rowwise_of(op)->kind == TESS_ROW_SOFTMAX) return st;
    double eps = tess_rowwise_eps(t);
    if (!(eps > 0)) return tess_error(TESS_ERR_ARG, "%s: eps=%s must be above 0", op->name, tess_task_attr(t, "eps"));
    return TESS_OK;
}

double tess_rowwise_eps(const tess_task *t) {
    double eps = 0;
    return tess_task_attr_real(t, "eps", 1e-5, &eps) ? 0 : eps;
}

tess_status tess_rowwise_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out) {
    const int64_t cols = t->shape[1];
    tess_status st = tess_buffer_list_add(out, "x", TESS_BUF_IN, t->dtype, t->shape[0] * cols);
    for (int w = 0; w < tess_rowwise_of(op)->nweights && !st; w++)
        st = tess_buffer_list_add(out, weight_names[w], TESS_BUF_IN, t->dtype, cols);
    return st ? st : tess_buffer_list_add(out, "y", TESS_BUF_OUT, t->dtype, t->shape[0] * cols);
}

/* x: one kind of typical row after another; the weights uniform in [-1, 1]. */
tess_status tess_rowwise_fill_typical(const tess_op *op, const tess_task *t, int index, void *host, uint64_t seed) {
    (void)op;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng) return tess_error(TESS_ERR_NOMEM, "random number generator");
    gsl_rng_set(rng, (unsigned long)seed);
    const int64_t rows = t->shape[0], cols = t->shape[1];
    if (index == 0) {
        for (int64_t r = 0; r < rows; r++) tess_typical_fill_block(host, t->dtype, r * cols, cols, r, rng);
    } else {
        for (int64_t c = 0; c < cols; c++) tess_dtype_store(host, t->dtype, c, 2.0 * gsl_rng_uniform(rng) - 1.0);
    }
    gsl_rng_free(rng);
    return TESS_OK;
}

double tess_rowwise_flops(const tess_op *op, const tess_task *t) {
    /* per element: softmax max, subtract, exp, add, multiply; layernorm add,
     * subtract, square-add, subtract, multiply twice, add; rmsnorm square-add,
     * multiply twice */
    static const double per_element[] = {[TESS_ROW_SOFTMAX] = 5, [TESS_ROW_LAYERNORM] = 7, [TESS_ROW_RMSNORM] = 3};
    return per_element[tess_rowwise_of(op)->kind] * (double)t->shape[0] * (double)t->shape[1];
}

double tess_rowwise_bytes(const tess_op *op, const tess_task *t) {
    const double size = (double)tess_dtype_size(t->dtype), cols = (double)t->shape[1];
    return size * (2.0 * (double)t->shape[0] * cols + tess_rowwise_of(op)->nweights * cols);
}

double tess_rowwise_tolerance(const tess_op *op, const tess_task *t) {
    (void)op;
    return tess_storage_tolerance(t);
}
