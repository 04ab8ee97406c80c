/*
 * reference.c - what gemm and conv2d share as operators (gemm.h): their
 * buffers and inputs (uniform in [-1, 1), filled over the host's cores),
 * the float64 reference (every element, or for large tasks a sample
 * touching every row and column; rows spread over the host's cores), FLOP
 * and byte counts, the tolerance and the verification of sampled outputs.
 */
#include <math.h>
#include <stdlib.h>
#include "core/error.h"
#include "core/host_parallel.h"
#include "core/problem.h"
#include "core/result.h"
#include "gemm.h"

tess_status tess_gemm_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out) {
    tess_gemm_desc d;
    tess_status st = tess_gemm_describe(op, t, &d);
    if (st) return st;
    const int64_t a_count = d.conv ? d.batch * d.height * d.width * d.channels : d.m * d.k;
    st = tess_buffer_list_add(out, d.conv ? "x" : "A", TESS_BUF_IN, d.in, a_count);
    if (!st) st = tess_buffer_list_add(out, d.conv ? "w" : "B", TESS_BUF_IN, d.in, d.k * d.n);
    if (!st && d.buf_c >= 0) st = tess_buffer_list_add(out, "C", TESS_BUF_IN, d.out, d.m * d.n);
    if (!st && d.buf_bias >= 0) st = tess_buffer_list_add(out, "bias", TESS_BUF_IN, d.out, d.n);
    return st ? st : tess_buffer_list_add(out, d.conv ? "y" : "D", TESS_BUF_OUT, d.out, d.m * d.n);
}

/* Element (i, k) of A, the im2col view of x for a convolution (0 in the padding). */
static double a_at(const tess_gemm_desc *d, const void *a, int64_t i, int64_t k) {
    if (!d->conv) return tess_dtype_load(a, d->in, d->a_trans ? k * d->m + i : i * d->k + k);
    const int64_t img = i / (d->out_h * d->out_w), p = i / d->out_w % d->out_h, q = i % d->out_w;
    const int64_t r = k / (d->filter * d->channels), s = k / d->channels % d->filter, c = k % d->channels;
    const int64_t y = p * d->stride - d->pad + r, x = q * d->stride - d->pad + s;
    if (y < 0 || y >= d->height || x < 0 || x >= d->width) return 0;
    return tess_dtype_load(a, d->in, ((img * d->height + y) * d->width + x) * d->channels + c);
}

static double b_at(const tess_gemm_desc *d, const void *b, int64_t k, int64_t j) {
    return tess_dtype_load(b, d->in, d->b_trans ? j * d->k + k : k * d->n + j);
}

static double epilogue(const tess_gemm_desc *d, void *const *bufs, int64_t i, int64_t j, double dot) {
    double v = d->alpha * dot;
    if (d->buf_c >= 0) v += d->beta * tess_dtype_load(bufs[d->buf_c], d->out, i * d->n + j);
    switch (d->epilogue) {
    case TESS_EPI_NONE: break;
    case TESS_EPI_BIAS: v += tess_dtype_load(bufs[d->buf_bias], d->out, j); break;
    case TESS_EPI_GELU: v = 0.5 * v * (1.0 + erf(v / sqrt(2.0))); break;
    case TESS_EPI_SILU: v = v / (1.0 + exp(-v)); break;
    }
    return v;
}

/* D[i][j] from row i of A, gathered into `row`. */
static void reference_element(const tess_gemm_desc *d, void *const *bufs, const double *row, int64_t i, int64_t j) {
    double dot = 0;
    for (int64_t k = 0; k < d->k; k++) dot += row[k] * b_at(d, bufs[d->buf_b], k, j);
    tess_dtype_store(bufs[d->buf_d], d->out, i * d->n + j, epilogue(d, bufs, i, j, dot));
}

static void gather_row(const tess_gemm_desc *d, const void *a, int64_t i, double *row) {
    for (int64_t k = 0; k < d->k; k++) row[k] = a_at(d, a, i, k);
}

/* The rows of A whose reference elements a part computes: every element of rows [first, end) (full), or the
 * sample's two of each row, or its one of each column j in [first, end) (columns). */
typedef struct reference_job {
    const tess_gemm_desc *d;
    void *const *bufs;
    bool full, columns;
    int failed;   /* a part could not allocate its row */
} reference_job;

static void reference_range(void *ctx, int part, int64_t first, int64_t end) {
    (void)part;
    reference_job *r = ctx;
    const tess_gemm_desc *d = r->d;
    double *row = malloc((size_t)d->k * sizeof *row);
    if (!row) {
        __atomic_store_n(&r->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    const void *a = r->bufs[d->buf_a];
    for (int64_t x = first; x < end; x++) {
        if (r->columns) {   /* one element of column x */
            const int64_t i = (x * 137 + 11) % d->m;
            gather_row(d, a, i, row);
            reference_element(d, r->bufs, row, i, x);
            continue;
        }
        gather_row(d, a, x, row);
        if (r->full) {
            for (int64_t j = 0; j < d->n; j++) reference_element(d, r->bufs, row, x, j);
        } else {   /* two elements of row x, half the width apart */
            const int64_t j = (x * 131 + 7) % d->n;
            reference_element(d, r->bufs, row, x, j);
            reference_element(d, r->bufs, row, x, (j + d->n / 2) % d->n);
        }
    }
    free(row);
}

tess_status tess_gemm_reference(const tess_op *op, const tess_task *t, void *const *bufs) {
    tess_gemm_desc d;
    tess_status st = tess_gemm_describe(op, t, &d);
    if (st) return st;
    reference_job r = {.d = &d, .bufs = bufs, .full = tess_gemm_full_reference(&d)};
    if (!r.full)
        for (int64_t e = 0; e < d.m * d.n; e++) tess_dtype_store(bufs[d.buf_d], d.out, e, NAN);
    tess_host_parallel(d.m, reference_range, &r);
    if (!r.full) {   /* after the rows: an element in both samples is computed twice, the same way */
        r.columns = true;
        tess_host_parallel(d.n, reference_range, &r);
    }
    if (r.failed) return tess_error(TESS_ERR_NOMEM, "%s reference: a row of %lld values", op->name, (long long)d.k);
    return TESS_OK;
}

/* Inputs uniform in [-1, 1), filled in parallel chunks (tess_uniform_fill). */
tess_status tess_gemm_fill_input(const tess_op *op, const tess_task *t, int index, void *host, uint64_t seed) {
    tess_buffer_list l = {0};
    tess_status st = tess_gemm_buffers(op, t, &l);
    if (st) return st;
    if (index < 0 || index >= l.n) {
        tess_buffer_list_free(&l);
        return tess_error(TESS_ERR_ARG, "%s: no input buffer %d", op->name, index);
    }
    const tess_dtype dtype = l.spec[index].dtype;
    const int64_t count = l.spec[index].count;
    tess_buffer_list_free(&l);
    return tess_uniform_fill(host, dtype, count, seed);
}

double tess_gemm_flops(const tess_op *op, const tess_task *t) {
    tess_gemm_desc d;
    if (tess_gemm_describe(op, t, &d)) return 0;
    return 2.0 * (double)d.m * (double)d.n * (double)d.k;
}

double tess_gemm_bytes(const tess_op *op, const tess_task *t) {
    tess_buffer_list l = {0};
    double bytes = 0;
    if (tess_gemm_buffers(op, t, &l) == TESS_OK)
        for (int b = 0; b < l.n; b++) bytes += (double)tess_buffer_bytes(&l.spec[b]);
    tess_buffer_list_free(&l);
    return bytes;
}

/* One unit in the last place of a value stored in dtype dt, relative. */
static double ulp(tess_dtype dt) {
    switch (dt) {
    case TESS_BF16: return 0x1p-7;
    case TESS_F16: return 0x1p-10;
    case TESS_F64: return 0x1p-52;
    default: return 0x1p-23;
    }
}

double tess_gemm_tolerance(const tess_op *op, const tess_task *t) {
    tess_gemm_desc d;
    if (tess_gemm_describe(op, t, &d)) return 0;
    /* The tensor cores add e4m3 products in a sum that keeps 13 bits of mantissa, truncated after every k32
     * step; kernels move it into f32 registers every few steps: allow 16 truncations' worth. */
    const double fp8_sums = d.in == TESS_E4M3 ? 16 * 0x1p-13 : 0;
    return ulp(d.out) + 4.0 * sqrt((double)d.k) * ulp(d.acc) + fp8_sums;
}

/* The root mean square of the finite reference elements (1 when there are none). */
static double rms_of(const void *ref, tess_dtype dt, int64_t n) {
    double sum = 0;
    int64_t count = 0;
    for (int64_t e = 0; e < n; e++) {
        const double v = tess_dtype_load(ref, dt, e);
        if (isfinite(v)) {
            sum += v * v;
            count++;
        }
    }
    return count && sum > 0 ? sqrt(sum / (double)count) : 1.0;
}

double tess_gemm_scale(const tess_op *op, const tess_task *t, void *const *bufs) {
    tess_gemm_desc d;
    if (tess_gemm_describe(op, t, &d)) return 1.0;
    return rms_of(bufs[d.buf_d], d.out, d.m * d.n);
}

bool tess_gemm_verify(const tess_op *op, const tess_task *t, int b, const void *got, const void *want,
                      tess_result *res) {
    tess_gemm_desc d;
    if (tess_gemm_describe(op, t, &d)) {
        tess_result_fail(res, TESS_RESULT_WRONG_RESULT, "%s", tess_errmsg());
        return false;
    }
    const int64_t n = d.m * d.n;
    const double tol = tess_gemm_tolerance(op, t), scale = rms_of(want, d.out, n);
    int64_t unwritten = 0, wrong = 0, first_unwritten = -1, worst = -1;
    double worst_excess = 0;
    for (int64_t e = 0; e < n; e++) {
        const double g = tess_dtype_load(got, d.out, e), w = tess_dtype_load(want, d.out, e);
        /* an element the sample leaves out must still be written, and finite */
        const int kind = isnan(w) ? (isfinite(g) ? 0 : 1) : tess_verify_element(g, w, tol, scale);
        if (kind == 1 && unwritten++ == 0) first_unwritten = e;
        if (kind != 2) continue;
        wrong++;
        const double excess = isfinite(g) ? fabs(g - w) / (tol * (scale + fabs(w))) : INFINITY;
        if (worst < 0 || excess > worst_excess) {
            worst = e;
            worst_excess = excess;
        }
    }
    const char *name = d.conv ? "y" : "D";
    (void)b;
    if (unwritten) {
        tess_result_fail(res, TESS_RESULT_WRONG_RESULT,
                         "%lld of %lld elements of '%s' were not written or are not finite (first at row %lld, "
                         "column %lld)",
                         (long long)unwritten, (long long)n, name, (long long)(first_unwritten / d.n),
                         (long long)(first_unwritten % d.n));
        return false;
    }
    if (!wrong) return true;
    tess_result_fail(res, TESS_RESULT_WRONG_RESULT,
                     "%lld of the %s elements of '%s' checked are wrong; worst at row %lld, column %lld: %.9g, "
                     "expected %.9g (tolerance %.3g relative to %.3g + |expected|)",
                     (long long)wrong, tess_gemm_full_reference(&d) ? "all" : "sampled", name,
                     (long long)(worst / d.n), (long long)(worst % d.n), tess_dtype_load(got, d.out, worst),
                     tess_dtype_load(want, d.out, worst), tol, scale);
    return false;
}

tess_ceiling_kind tess_gemm_compute_unit(const tess_op *op, const tess_task *t) {
    (void)op;
    switch (t->dtype) {
    case TESS_BF16: return TESS_CEILING_MMA_BF16;
    case TESS_F16: return TESS_CEILING_MMA_F16;
    case TESS_E4M3: return TESS_CEILING_MMA_FP8;
    case TESS_F64: return TESS_CEILING_FMA_F64;
    default: return TESS_CEILING_FMA_F32;
    }
}
