/*
 * test_cuda_compare.c - the cuda backend's comparison on the device, for
 * f32, f64, bf16 and f16 outputs, by the rule of tess_problem_verify
 * (tess_verify_element): an element is unwritten when it is NaN where the
 * reference is not, wrong when beyond tol * (scale + |ref|), and NaN or Inf
 * are right only where the reference has them. Each case is checked against
 * the counts and first indices the host's rule gives and the ones expected,
 * and the largest error (tess_problem_error) against the host's. Skipped
 * (77) where there is no CUDA device.
 */
#include <math.h>
#include <stdint.h>
#include "core/problem.h"
#include "gpu/cuda_harness.h"

#define N 100003

/* The host's rule (problem.c), for the expected counts and largest error. */
static void host_counts(const void *got, const void *want, tess_dtype t, double tol, double scale,
                        int64_t k[4], double *max_error) {
    k[0] = k[2] = 0;
    k[1] = k[3] = INT64_MAX;
    *max_error = 0;
    for (int64_t i = 0; i < N; i++) {
        const double g = tess_dtype_load(got, t, i), w = tess_dtype_load(want, t, i), e = tess_problem_error(g, w, scale);
        int v = tess_verify_element(g, w, tol, scale);
        if (v == 1 && !k[0]++) k[1] = i;
        if (v == 2 && !k[2]++) k[3] = i;
        if (e > *max_error) *max_error = e;
    }
}

static void check_case(const tess_backend_ops *be, void *ctx, tess_dtype t, const void *got, const void *want,
                       double tol, const char *what, const int64_t expect[4]) {
    size_t bytes = (size_t)N * tess_dtype_size(t);
    void *dgot = NULL, *dwant = NULL;
    CHECK_OK(be->alloc(ctx, bytes, &dgot));
    CHECK_OK(be->alloc(ctx, bytes, &dwant));
    CHECK_OK(be->upload(ctx, dgot, got, bytes));
    CHECK_OK(be->upload(ctx, dwant, want, bytes));
    int64_t k[4] = {-1, -1, -1, -1}, host[4];
    double max_error = -1, host_error = -1;
    CHECK_OK(be->compare(ctx, dgot, dwant, t, N, tol, 1.0, k, &max_error));
    host_counts(got, want, t, tol, 1.0, host, &host_error);
    for (int i = 0; i < 4; i++)
        CHECK_MSG(k[i] == host[i] && k[i] == expect[i], "%s %s: counts[%d] %lld on the device, %lld on the host, %lld expected",
                  tess_dtype_name(t), what, i, (long long)k[i], (long long)host[i], (long long)expect[i]);
    CHECK_MSG(max_error == host_error, "%s %s: largest error %.17g on the device, %.17g on the host",
              tess_dtype_name(t), what, max_error, host_error);
    be->release(ctx, dgot);
    be->release(ctx, dwant);
}

int main(void) {
    tess_device dev;
    const tess_backend_ops *be = cuda_backend_or_skip(&dev);
    if (!be) return 77;
    void *ctx = NULL;
    CHECK_OK(be->open(&dev, &ctx));
    if (!ctx) return check_finish("test_cuda_compare");
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 11);
    const tess_dtype types[] = {TESS_F32, TESS_F64, TESS_BF16, TESS_F16};
    for (size_t d = 0; d < sizeof types / sizeof types[0]; d++) {
        tess_dtype t = types[d];
        size_t bytes = (size_t)N * tess_dtype_size(t);
        void *want = malloc(bytes), *got = malloc(bytes);
        for (int64_t i = 0; i < N; i++) tess_dtype_store(want, t, i, 2.0 * gsl_rng_uniform(rng) - 1.0);
        const double tol = t == TESS_BF16 ? 1e-2 : t == TESS_F16 ? 1e-3 : 1e-6;

        memcpy(got, want, bytes);
        const int64_t none[4] = {0, INT64_MAX, 0, INT64_MAX};
        check_case(be, ctx, t, got, want, tol, "equal", none);

        /* Unwritten (the poison: all bits set, NaN in every float type), off by
         * more than the tolerance, Inf and NaN where the reference is finite,
         * and a value within tolerance. */
        memset((char *)got + 7 * tess_dtype_size(t), 0xff, tess_dtype_size(t));
        memset((char *)got + 90000 * tess_dtype_size(t), 0xff, tess_dtype_size(t));
        tess_dtype_store(got, t, 20, tess_dtype_load(want, t, 20) + 0.5);
        tess_dtype_store(got, t, 30, INFINITY);
        tess_dtype_store(got, t, 40, -INFINITY);
        tess_dtype_store(got, t, 50, tess_dtype_load(want, t, 50) * (1 + 0.25 * tol));
        const int64_t planted[4] = {2, 7, 3, 20};
        check_case(be, ctx, t, got, want, tol, "planted", planted);

        /* NaN and Inf where the reference has them are right; a finite value
         * or the other infinity there is wrong. */
        memcpy(got, want, bytes);
        tess_dtype_store(want, t, 60, NAN);
        tess_dtype_store(got, t, 60, NAN);
        tess_dtype_store(want, t, 61, INFINITY);
        tess_dtype_store(got, t, 61, INFINITY);
        tess_dtype_store(want, t, 62, NAN);
        tess_dtype_store(want, t, 63, INFINITY);
        tess_dtype_store(got, t, 64, -INFINITY);
        tess_dtype_store(want, t, 64, INFINITY);
        const int64_t special[4] = {0, INT64_MAX, 3, 62};
        check_case(be, ctx, t, got, want, tol, "NaN and Inf in the reference", special);
        free(want);
        free(got);
    }
    gsl_rng_free(rng);
    be->close(ctx);
    return check_finish("test_cuda_compare");
}
