/* problem.c - host inputs, reference outputs and verification. */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "problem.h"

size_t tess_buffer_bytes(const tess_buffer_spec *b) { return (size_t)b->count * tess_dtype_size(b->dtype); }

static void fill_uniform(void *host, const tess_buffer_spec *b, uint64_t seed) {
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, (unsigned long)seed);
    for (int64_t i = 0; i < b->count; i++) tess_dtype_store(host, b->dtype, i, 2.0 * gsl_rng_uniform(rng) - 1.0);
    gsl_rng_free(rng);
}

tess_status tess_problem_create(const tess_op *op, const tess_task *t, uint64_t seed, tess_problem **out) {
    tess_problem *p = calloc(1, sizeof *p);
    if (!p) return tess_error(TESS_ERR_NOMEM, "problem");
    tess_status st = op->buffers(t, p->spec, &p->nbuf);
    for (int i = 0; i < p->nbuf && !st; i++) {
        size_t bytes = tess_buffer_bytes(&p->spec[i]);
        p->working_set += bytes;
        p->host[i] = calloc(1, bytes ? bytes : 1);
        if (!p->host[i]) {
            st = tess_error(TESS_ERR_NOMEM, "cannot allocate host buffer '%s' of %zu bytes", p->spec[i].name, bytes);
        } else if (p->spec[i].role == TESS_BUF_IN) {
            uint64_t s = seed * 1000003ULL + (uint64_t)i;
            if (op->fill_input)
                st = op->fill_input(t, i, p->host[i], s);
            else
                fill_uniform(p->host[i], &p->spec[i], s);
        }
    }
    if (!st) {
        st = op->reference(t, p->host);
        if (st) tess_error_context(st, "reference of %s", op->name);
    }
    if (st) {
        tess_problem_destroy(p);
        return st;
    }
    p->tolerance = op->tolerance(t);
    p->scale = op->verify_scale ? op->verify_scale(t, p->host) : 1.0;
    *out = p;
    return TESS_OK;
}

void tess_problem_destroy(tess_problem *p) {
    if (!p) return;
    for (int i = 0; i < p->nbuf; i++) free(p->host[i]);
    free(p);
}

/* Counts unwritten (NaN where the reference is not) and wrong elements, and
 * the first index of each: the parallel pass that every candidate pays. */
typedef struct check_counts {
    int64_t unwritten, first_unwritten, wrong, first_wrong;
} check_counts;

#define COUNT_MISMATCHES(T)                                                               \
    do {                                                                                  \
        const T *g_ = got_v, *w_ = want_v;                                                \
        _Pragma("omp parallel for reduction(+ : unwritten, wrong) reduction(min : first_unwritten, first_wrong)") \
        for (int64_t i = 0; i < n; i++) {                                                 \
            double g = g_[i], w = w_[i];                                                  \
            if (isnan(g) && !isnan(w)) {                                                  \
                unwritten++;                                                              \
                if (i < first_unwritten) first_unwritten = i;                             \
            } else if (!(fabs(g - w) <= tol * (scale + fabs(w)))) {                       \
                wrong++;                                                                  \
                if (i < first_wrong) first_wrong = i;                                     \
            }                                                                             \
        }                                                                                 \
    } while (0)

static check_counts count_mismatches(const void *got_v, const void *want_v, tess_dtype t, int64_t n,
                                     double tol, double scale) {
    int64_t unwritten = 0, wrong = 0, first_unwritten = INT64_MAX, first_wrong = INT64_MAX;
    if (t == TESS_F32) {
        COUNT_MISMATCHES(float);
    } else if (t == TESS_F64) {
        COUNT_MISMATCHES(double);
    } else {
        for (int64_t i = 0; i < n; i++) {
            double g = tess_dtype_load(got_v, t, i), w = tess_dtype_load(want_v, t, i);
            if (isnan(g) && !isnan(w)) {
                unwritten++;
                if (i < first_unwritten) first_unwritten = i;
            } else if (!(fabs(g - w) <= tol * (scale + fabs(w)))) {
                wrong++;
                if (i < first_wrong) first_wrong = i;
            }
        }
    }
    return (check_counts){unwritten, first_unwritten, wrong, first_wrong};
}

bool tess_problem_verify(const tess_problem *p, int b, const void *got, tess_result *res) {
    const tess_buffer_spec *spec = &p->spec[b];
    check_counts k = count_mismatches(got, p->host[b], spec->dtype, spec->count, p->tolerance, p->scale);
    if (k.unwritten) {
        tess_result_fail(res, TESS_RESULT_WRONG_RESULT,
                         "%lld of %lld elements of '%s' were not written (first at index %lld)",
                         (long long)k.unwritten, (long long)spec->count, spec->name,
                         (long long)k.first_unwritten);
        return false;
    }
    if (!k.wrong) return true;
    /* The rare failing case: find the worst element serially. */
    int64_t worst = k.first_wrong;
    double worst_excess = 0;
    for (int64_t i = k.first_wrong; i < spec->count; i++) {
        double g = tess_dtype_load(got, spec->dtype, i), w = tess_dtype_load(p->host[b], spec->dtype, i);
        double err = fabs(g - w), allowed = p->tolerance * (p->scale + fabs(w));
        double excess = isfinite(err) ? err / allowed : INFINITY;
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
                     p->tolerance);
    return false;
}
