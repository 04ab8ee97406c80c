/*
 * rowwise.c - the slots the row-wise operators share (rowwise.h): tasks of
 * R rows of C elements in one storage dtype; buffers (x, a residual, the
 * per-column weights or the labels, then the outputs); compulsory bytes
 * (each input read once, each output written once); tolerances of the
 * storage plus the error budget; random and typical inputs, filled in
 * parallel chunks of their own seeds.
 */
#include <gsl/gsl_rng.h>
#include "core/error.h"
#include "accuracy.h"
#include "core/host_parallel.h"
#include "rowwise.h"

static const char *const weight_names[] = {"weight", "bias"};

/* Chunks of labels: large enough that seeding a generator is cheap beside them. */
#define FILL_CHUNK 65536

tess_status tess_rowwise_check(const tess_op *op, const tess_task *t) {
    if (t->ndim != 2)
        return tess_error(TESS_ERR_ARG, "%s works on rows: a shape RxC (rows x row length), not %d extents", op->name,
                          t->ndim);
    tess_status st = tess_storage_check(op, t);
    if (st || tess_rowwise_is_softmax(op)) return st;
    double eps = tess_rowwise_eps(t);
    if (!(eps > 0)) return tess_error(TESS_ERR_ARG, "%s: eps=%s must be above 0", op->name, tess_task_attr(t, "eps"));
    return TESS_OK;
}

double tess_rowwise_eps(const tess_task *t) {
    double eps = 0;
    return tess_task_attr_real(t, "eps", 1e-5, &eps) ? 0 : eps;
}

typedef struct row_job {
    const tess_op *op;
    const tess_task *t;
    void *const *bufs;
    tess_row_fn *fn;
} row_job;

static void rows_of(void *arg, int part, int64_t first, int64_t end) {
    (void)part;
    const row_job *j = arg;
    for (int64_t r = first; r < end; r++) j->fn(j->op, j->t, j->bufs, r);
}

void tess_rowwise_each_row(const tess_op *op, const tess_task *t, void *const *bufs, tess_row_fn *fn) {
    row_job j = {op, t, bufs, fn};
    tess_host_parallel(t->shape[0], rows_of, &j);
}

tess_status tess_rowwise_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out) {
    const tess_rowwise_kind kind = tess_rowwise_of(op)->kind;
    const int64_t rows = t->shape[0], cols = t->shape[1];
    tess_status st = tess_buffer_list_add(out, "x", TESS_BUF_IN, t->dtype, rows * cols);
    if (kind == TESS_ROW_CROSS_ENTROPY) {
        if (!st) st = tess_buffer_list_add(out, "labels", TESS_BUF_IN, TESS_I32, rows);
        if (!st) st = tess_buffer_list_add(out, "loss", TESS_BUF_OUT, TESS_F32, rows);
        return st ? st : tess_buffer_list_add(out, "lse", TESS_BUF_OUT, TESS_F32, rows);
    }
    if (!st && kind == TESS_ROW_ADD_RMSNORM) st = tess_buffer_list_add(out, "residual", TESS_BUF_IN, t->dtype, rows * cols);
    for (int w = 0; w < tess_rowwise_of(op)->nweights && !st; w++)
        st = tess_buffer_list_add(out, weight_names[w], TESS_BUF_IN, t->dtype, cols);
    if (!st) st = tess_buffer_list_add(out, "y", TESS_BUF_OUT, t->dtype, rows * cols);
    if (!st && kind == TESS_ROW_ADD_RMSNORM) st = tess_buffer_list_add(out, "h", TESS_BUF_OUT, t->dtype, rows * cols);
    return st;
}

/* What input `index` holds: the rows (x, the residual), labels, or per-column weights. */
enum input_kind { INPUT_ROWS, INPUT_LABELS, INPUT_COLUMNS };
static enum input_kind input_kind(const tess_op *op, int index) {
    if (index == 0) return INPUT_ROWS;
    const tess_rowwise_kind kind = tess_rowwise_of(op)->kind;
    if (kind == TESS_ROW_CROSS_ENTROPY) return INPUT_LABELS;
    return kind == TESS_ROW_ADD_RMSNORM && index == 1 ? INPUT_ROWS : INPUT_COLUMNS;
}

typedef struct fill_ctx {
    const tess_task *t;
    void *host;
} fill_ctx;

static void fill_labels(void *arg, int64_t first, int64_t count, gsl_rng *rng) {
    const fill_ctx *f = arg;
    int32_t *labels = f->host;
    for (int64_t i = first; i < first + count; i++)
        labels[i] = (int32_t)gsl_rng_uniform_int(rng, (unsigned long)f->t->shape[1]);
}

/* One row (first is a multiple of C) of the kind its index gives. */
static void fill_typical_row(void *arg, int64_t first, int64_t count, gsl_rng *rng) {
    const fill_ctx *f = arg;
    tess_typical_fill_block(f->host, f->t->dtype, first, count, first / f->t->shape[1], rng);
}

static tess_status fill(const tess_op *op, const tess_task *t, int index, void *host, uint64_t seed, bool typical) {
    fill_ctx f = {t, host};
    const int64_t rows = t->shape[0], cols = t->shape[1];
    switch (input_kind(op, index)) {
    case INPUT_LABELS: return tess_host_fill_chunks(rows, FILL_CHUNK, seed, fill_labels, &f);
    case INPUT_COLUMNS: return tess_uniform_fill(host, t->dtype, cols, seed);
    case INPUT_ROWS: break;
    }
    if (typical && index == 0) return tess_host_fill_chunks(rows * cols, cols, seed, fill_typical_row, &f);
    return tess_uniform_fill(host, t->dtype, rows * cols, seed);
}

/* Uniform in [-1, 1]; labels uniform in [0, C). */
tess_status tess_rowwise_fill_input(const tess_op *op, const tess_task *t, int index, void *host, uint64_t seed) {
    return fill(op, t, index, host, seed, false);
}

/* x: one kind of typical row after another; the rest as random inputs. */
tess_status tess_rowwise_fill_typical(const tess_op *op, const tess_task *t, int index, void *host, uint64_t seed) {
    return fill(op, t, index, host, seed, true);
}

double tess_rowwise_flops(const tess_op *op, const tess_task *t) {
    /* per element: softmax max, subtract, exp, add, multiply (log_softmax
     * and cross-entropy: subtract instead of multiply, or nothing); layernorm
     * add, subtract, square-add, subtract, multiply twice, add; rmsnorm
     * square-add, multiply twice (and the residual add) */
    static const double per_element[] = {[TESS_ROW_SOFTMAX] = 5,     [TESS_ROW_LAYERNORM] = 7,
                                         [TESS_ROW_RMSNORM] = 3,     [TESS_ROW_LOG_SOFTMAX] = 5,
                                         [TESS_ROW_ADD_RMSNORM] = 4, [TESS_ROW_CROSS_ENTROPY] = 4};
    return per_element[tess_rowwise_of(op)->kind] * (double)t->shape[0] * (double)t->shape[1];
}

double tess_rowwise_bytes(const tess_op *op, const tess_task *t) {
    const double size = (double)tess_dtype_size(t->dtype), rows = (double)t->shape[0], cols = (double)t->shape[1];
    switch (tess_rowwise_of(op)->kind) {
    case TESS_ROW_CROSS_ENTROPY: return size * rows * cols + 3 * 4 * rows;   /* labels in, loss and lse out */
    case TESS_ROW_ADD_RMSNORM: return size * (4 * rows * cols + cols);       /* x, residual in; y, h out */
    default: return size * (2 * rows * cols + tess_rowwise_of(op)->nweights * cols);
    }
}

double tess_rowwise_tolerance(const tess_op *op, const tess_task *t) {
    /* cross-entropy's outputs are f32: only the arithmetic's error */
    if (tess_rowwise_of(op)->kind == TESS_ROW_CROSS_ENTROPY) return 1e-4 + tess_error_budget(t);
    return tess_storage_tolerance(t);
}
