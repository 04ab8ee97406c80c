/* problem.c - host inputs, reference outputs and verification. */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "problem.h"

static void fill_uniform(void *host, const tess_buffer_spec *b, uint64_t seed) {
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, (unsigned long)seed);
    for (int64_t i = 0; i < b->count; i++) tess_dtype_store(host, b->dtype, i, 2.0 * gsl_rng_uniform(rng) - 1.0);
    gsl_rng_free(rng);
}

tess_status tess_problem_fill_input(const tess_op *op, const tess_task *t, const tess_buffer_spec *b, int index,
                                    void *host, uint64_t seed) {
    if (op->fill_input) return op->fill_input(op, t, index, host, seed);
    fill_uniform(host, b, seed);
    return TESS_OK;
}

/* Allocates the per-buffer arrays and fills the inputs (typical ones with
 * `typical`). */
static tess_status fill_buffers(tess_problem *p, uint64_t seed, bool typical) {
    const tess_op *op = p->op;
    int n = p->buffers.n;
    p->host = calloc((size_t)n, sizeof *p->host);
    p->initial = calloc((size_t)n, sizeof *p->initial);
    p->tolerance = calloc((size_t)n, sizeof *p->tolerance);
    if (!p->host || !p->initial || !p->tolerance) return tess_error(TESS_ERR_NOMEM, "problem of %d buffers", n);
    for (int i = 0; i < n; i++) {
        const tess_buffer_spec *b = &p->buffers.spec[i];
        size_t bytes = tess_buffer_bytes(b);
        p->working_set += bytes;
        p->tolerance[i] = tess_op_buffer_tolerance(op, &p->task, b);
        p->host[i] = calloc(1, bytes ? bytes : 1);
        if (!p->host[i])
            return tess_error(TESS_ERR_NOMEM, "cannot allocate host buffer '%s' of %zu bytes", b->name, bytes);
        if (!tess_buffer_is_input(b)) continue;
        uint64_t s = seed * 1000003ULL + (uint64_t)i;
        tess_status st = TESS_OK;
        if (typical) st = op->fill_typical(op, &p->task, i, p->host[i], s);
        else st = tess_problem_fill_input(op, &p->task, b, i, p->host[i], s);
        if (st) return st;
        if (b->role == TESS_BUF_INOUT) {
            /* the reference updates host[i] in place; the kernel starts from this copy */
            if (!(p->initial[i] = malloc(bytes ? bytes : 1)))
                return tess_error(TESS_ERR_NOMEM, "cannot allocate host buffer '%s' of %zu bytes", b->name, bytes);
            memcpy(p->initial[i], p->host[i], bytes);
        }
    }
    return TESS_OK;
}

static tess_status problem_create(const tess_op *op, const tess_task *t, uint64_t seed, bool typical,
                                  tess_problem **out) {
    *out = NULL;
    tess_problem *p = calloc(1, sizeof *p);
    if (!p) return tess_error(TESS_ERR_NOMEM, "problem");
    p->op = op;
    p->task = *t;
    tess_status st = tess_op_buffers(op, t, &p->buffers);
    if (!st) st = fill_buffers(p, seed, typical);
    if (!st) {
        st = op->reference(op, t, p->host);
        if (st) tess_error_context(st, "reference of %s", op->name);
    }
    if (st) {
        tess_problem_destroy(p);
        return st;
    }
    p->scale = op->verify_scale ? op->verify_scale(op, t, p->host) : 1.0;
    *out = p;
    return TESS_OK;
}

tess_status tess_problem_create(const tess_op *op, const tess_task *t, uint64_t seed, tess_problem **out) {
    return problem_create(op, t, seed, false, out);
}

tess_status tess_problem_create_typical(const tess_op *op, const tess_task *t, uint64_t seed, tess_problem **out) {
    *out = NULL;
    if (!op->fill_typical) return tess_error(TESS_ERR_ARG, "operator %s has no typical inputs", op->name);
    return problem_create(op, t, seed, true, out);
}

void tess_problem_destroy(tess_problem *p) {
    if (!p) return;
    for (int i = 0; i < p->buffers.n; i++) {
        if (p->host) free(p->host[i]);
        if (p->initial) free(p->initial[i]);
    }
    free(p->host);
    free(p->initial);
    free(p->tolerance);
    tess_buffer_list_free(&p->buffers);
    free(p);
}

const void *tess_problem_input(const tess_problem *p, int b) {
    const tess_buffer_spec *s = &p->buffers.spec[b];
    if (s->role == TESS_BUF_IN) return p->host[b];
    return s->role == TESS_BUF_INOUT ? p->initial[b] : NULL;
}

/* Counts unwritten (NaN where the reference is not) and wrong elements, and
 * the first index of each: the parallel pass that every candidate pays. */
typedef struct check_counts {
    int64_t unwritten, first_unwritten, wrong, first_wrong;
    double max_error;   /* tess_problem_error's largest */
} check_counts;

#define COUNT_MISMATCHES(LOAD)                                                            \
    do {                                                                                  \
        _Pragma("omp parallel for reduction(+ : unwritten, wrong) reduction(min : first_unwritten, first_wrong) reduction(max : max_error)") \
        for (int64_t i = 0; i < n; i++) {                                                 \
            const double g = LOAD(got_v, i), w = LOAD(want_v, i), e = tess_problem_error(g, w, scale); \
            int k = tess_verify_element(g, w, tol, scale);                                \
            if (e > max_error) max_error = e;                                             \
            if (k == 1) {                                                                 \
                unwritten++;                                                              \
                if (i < first_unwritten) first_unwritten = i;                             \
            } else if (k == 2) {                                                          \
                wrong++;                                                                  \
                if (i < first_wrong) first_wrong = i;                                     \
            }                                                                             \
        }                                                                                 \
    } while (0)

#define LOAD_F32(p, i) ((double)((const float *)(p))[i])
#define LOAD_F64(p, i) (((const double *)(p))[i])
#define LOAD_ANY(p, i) tess_dtype_load(p, t, i)

static check_counts count_mismatches(const void *got_v, const void *want_v, tess_dtype t, int64_t n,
                                     double tol, double scale) {
    int64_t unwritten = 0, wrong = 0, first_unwritten = INT64_MAX, first_wrong = INT64_MAX;
    double max_error = 0;
    if (t == TESS_F32) COUNT_MISMATCHES(LOAD_F32);
    else if (t == TESS_F64) COUNT_MISMATCHES(LOAD_F64);
    else COUNT_MISMATCHES(LOAD_ANY);
    return (check_counts){unwritten, first_unwritten, wrong, first_wrong, max_error};
}

bool tess_problem_verify(const tess_problem *p, int b, const void *got, tess_result *res) {
    const tess_buffer_spec *spec = &p->buffers.spec[b];
    if (p->op->verify) return p->op->verify(p->op, &p->task, b, got, p->host[b], res);
    double tol = p->tolerance[b];
    check_counts k = count_mismatches(got, p->host[b], spec->dtype, spec->count, tol, p->scale);
    if (k.unwritten) {
        tess_result_fail(res, TESS_RESULT_WRONG_RESULT,
                         "%lld of %lld elements of '%s' were not written or are NaN (first at index %lld)",
                         (long long)k.unwritten, (long long)spec->count, spec->name,
                         (long long)k.first_unwritten);
        return false;
    }
    if (!k.wrong) {
        if (k.max_error > res->metrics.max_error) res->metrics.max_error = k.max_error;
        return true;
    }
    /* The rare failing case: find the worst element serially. */
    int64_t worst = k.first_wrong;
    double worst_excess = 0;
    for (int64_t i = k.first_wrong; i < spec->count; i++) {
        double g = tess_dtype_load(got, spec->dtype, i), w = tess_dtype_load(p->host[b], spec->dtype, i);
        double err = fabs(g - w), allowed = tol * (p->scale + fabs(w));
        double excess = tess_verify_element(g, w, tol, p->scale) == 0 ? 0 : isfinite(err) ? err / allowed : INFINITY;
        if (excess > worst_excess) {
            worst = i;
            worst_excess = excess;
        }
    }
    tess_result_fail(res, TESS_RESULT_WRONG_RESULT,
                     "%lld of %lld elements of '%s' are wrong; worst at index %lld: %.9g, "
                     "expected %.9g (tolerance %.3g relative)",
                     (long long)k.wrong, (long long)spec->count, spec->name, (long long)worst,
                     tess_dtype_load(got, spec->dtype, worst), tess_dtype_load(p->host[b], spec->dtype, worst),
                     tol);
    return false;
}

tess_status tess_problem_upload(const tess_problem *p, const tess_backend_ops *be, void *ctx, void *const *bufs) {
    for (int b = 0; b < p->buffers.n; b++) {
        const void *in = tess_problem_input(p, b);
        if (!in) continue;
        tess_status st = be->upload(ctx, bufs[b], in, tess_buffer_bytes(&p->buffers.spec[b]));
        if (st) return tess_error_context(st, "uploading buffer '%s'", p->buffers.spec[b].name);
    }
    return TESS_OK;
}

size_t tess_problem_largest_output(const tess_problem *p) {
    size_t largest = 0;
    for (int b = 0; b < p->buffers.n; b++)
        if (tess_buffer_is_output(&p->buffers.spec[b]) && tess_buffer_bytes(&p->buffers.spec[b]) > largest)
            largest = tess_buffer_bytes(&p->buffers.spec[b]);
    return largest;
}

/* Output b compared on the device: 1 correct (res's max_error raised to its
 * largest error), 0 the host must look (a mismatch, whose message the host
 * check writes, or a dtype the backend does not compare), -1 the backend
 * failed. */
static int compare_on_device(const tess_problem *p, const tess_backend_ops *be, void *ctx, void *const *bufs,
                             void **refs, int b, tess_result *res) {
    if (!refs || !refs[b] || !be->compare) return 0;
    const tess_buffer_spec *spec = &p->buffers.spec[b];
    int64_t k[4];
    double max_error = -1;
    tess_status st = be->compare(ctx, bufs[b], refs[b], spec->dtype, spec->count, p->tolerance[b], p->scale, k,
                                 &max_error);
    if (st == TESS_ERR_ARG) {   /* not comparable there: the host checks from now on */
        be->release(ctx, refs[b]);
        refs[b] = NULL;
        return 0;
    }
    if (st) return -1;
    if (k[0] != 0 || k[2] != 0) return 0;
    if (max_error > res->metrics.max_error) res->metrics.max_error = max_error;
    return 1;
}

tess_status tess_problem_run_check(const tess_problem *p, const tess_backend_ops *be, void *ctx, void *module,
                                   void *const *bufs, void **refs, void *check, tess_result *res, bool *ok) {
    *ok = false;
    tess_status st = TESS_OK;
    for (int b = 0; b < p->buffers.n && !st; b++) {
        const tess_buffer_spec *spec = &p->buffers.spec[b];
        if (spec->role == TESS_BUF_INOUT) st = be->upload(ctx, bufs[b], p->initial[b], tess_buffer_bytes(spec));
        else if (spec->role == TESS_BUF_OUT) st = be->poison(ctx, bufs[b], tess_buffer_bytes(spec));
    }
    if (!st) st = be->run(ctx, module, bufs, p->buffers.n);
    if (st) {
        tess_result_fail(res, TESS_RESULT_RUNTIME_ERROR, "%s", tess_errmsg());
        return st;
    }
    for (int b = 0; b < p->buffers.n; b++) {
        const tess_buffer_spec *spec = &p->buffers.spec[b];
        if (!tess_buffer_is_output(spec)) continue;
        int on_device = compare_on_device(p, be, ctx, bufs, refs, b, res);
        if (on_device == 1) continue;
        if (on_device < 0) {
            tess_result_fail(res, TESS_RESULT_RUNTIME_ERROR, "verification: %s", tess_errmsg());
            return TESS_ERR_RUNTIME;
        }
        if ((st = be->download(ctx, check, bufs[b], tess_buffer_bytes(spec)))) {
            tess_result_fail(res, TESS_RESULT_RUNTIME_ERROR, "download: %s", tess_errmsg());
            return st;
        }
        if (!tess_problem_verify(p, b, check, res)) return TESS_OK;
    }
    *ok = true;
    return TESS_OK;
}
