/*
 * test_cuda_backend.c - the cuda backend's ops end to end on a GPU: the
 * device descriptor, memory round trips, and heat3d and sum kernels over a
 * sample of each space's configs compared with a host reference computed in
 * double. Outputs are poisoned with NaN before each run, so an unwritten
 * element fails. Also: timing with buffer rotation, and resource metrics.
 * Skipped (77) where there is no CUDA device.
 */
#include <math.h>
#include <string.h>
#include "core/timing.h"
#include "gpu/cuda_harness.h"
#include "reductions/sum.h"
#include "stencils/heat3d.h"

#define SAMPLES 6

static void check_descriptor(const tess_device *d) {
    printf("device: %s, %s, %d SMs, %.0f MHz, L2 %lld MB, %lld GB, bus %d bits\n", d->name, d->arch,
           d->units, d->clock_mhz, (long long)(d->l2_bytes >> 20), (long long)(d->mem_bytes >> 30),
           d->mem_bus_width);
    CHECK(strcmp(d->backend, "cuda") == 0);
    CHECK(d->name[0] != '\0');
    CHECK(strncmp(d->arch, "sm_", 3) == 0 && d->cc_major >= 5);
    CHECK(d->units > 0 && d->clock_mhz > 0 && d->mem_clock_mhz > 0 && d->mem_bus_width > 0);
    CHECK(d->mem_bytes > 0 && d->l2_bytes > 0);
    CHECK(d->smem_per_block > 0 && d->smem_per_block_optin >= d->smem_per_block && d->smem_per_sm > 0);
    CHECK(d->regs_per_block > 0 && d->regs_per_sm > 0);
    CHECK(d->max_threads_per_block >= 512 && d->max_threads_per_sm >= d->max_threads_per_block);
    CHECK(d->warp_size == 32);
}

static void check_round_trip(const tess_backend_ops *be, void *ctx) {
    enum { N = 1 << 20 };
    int *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    for (int i = 0; i < N; i++) a[i] = i * 7 + 1, b[i] = 0;
    void *d = NULL;
    CHECK_OK(be->alloc(ctx, N * sizeof *a, &d));
    CHECK_OK(be->upload(ctx, d, a, N * sizeof *a));
    CHECK_OK(be->download(ctx, b, d, N * sizeof *b));
    CHECK(memcmp(a, b, N * sizeof *a) == 0);
    be->release(ctx, d);
    free(a);
    free(b);
}

static void heat3d_host(const tess_task *t, const void *in, double *ref) {
    const int64_t nz = t->shape[0], ny = t->shape[1], nx = t->shape[2];
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) {
                int64_t i = (z * ny + y) * nx + x;
                double c = tess_dtype_load(in, t->dtype, i);
                if (z == 0 || y == 0 || x == 0 || z == nz - 1 || y == ny - 1 || x == nx - 1) {
                    ref[i] = c;
                    continue;
                }
                double s = 0;
                const int64_t step[3] = {1, nx, nx * ny};
                for (int k = 0; k < 3; k++)
                    s += tess_dtype_load(in, t->dtype, i - step[k]) + tess_dtype_load(in, t->dtype, i + step[k]);
                ref[i] = c + TESS_HEAT3D_ALPHA * (s - 6.0 * c);
            }
}

/* Fills a device buffer of n elements with NaN. */
static void poison(const tess_backend_ops *be, void *ctx, void *d, tess_dtype t, int64_t n) {
    size_t bytes = (size_t)n * tess_dtype_size(t);
    void *h = malloc(bytes);
    for (int64_t i = 0; i < n; i++) tess_dtype_store(h, t, i, NAN);
    CHECK_OK(be->upload(ctx, d, h, bytes));
    free(h);
}

/* Runs one config; returns the largest error relative to (1 + |ref|). */
static double run_heat3d(const tess_backend_ops *be, const tess_device *dev, void *ctx, const tess_task *t,
                         const tess_space *s, const tess_config *c, void *const *dbufs, const double *ref) {
    const int64_t n = tess_shape_elements(t->shape, 3);
    tess_kernel_source src;
    CHECK_OK(tess_op_emit(&tess_op_heat3d, t, dev, s, c, &src));
    void *module = NULL;
    tess_kernel_metrics m;
    double worst = INFINITY;
    if (cuda_build(be, dev, ctx, &src, &module, &m) == TESS_OK) {
        poison(be, ctx, dbufs[1], t->dtype, n);
        CHECK_OK(be->run(ctx, module, dbufs, 2));
        void *out = malloc((size_t)n * tess_dtype_size(t->dtype));
        CHECK_OK(be->download(ctx, out, dbufs[1], (size_t)n * tess_dtype_size(t->dtype)));
        worst = 0;
        for (int64_t i = 0; i < n; i++) {
            double e = fabs(tess_dtype_load(out, t->dtype, i) - ref[i]) / (1 + fabs(ref[i]));
            if (!(e <= worst)) worst = e;   /* NaN counts as infinitely wrong */
        }
        CHECK(m.registers > 0 && m.local_bytes >= 0 && m.smem_dynamic == 0);
        CHECK(m.occupancy > 0 && m.occupancy <= 1);
        free(out);
        be->unload(ctx, module);
    } else {
        CHECK_MSG(0, "building heat3d: %s", tess_errmsg());
    }
    tess_kernel_source_free(&src);
    return worst;
}

static void check_heat3d(const tess_backend_ops *be, const tess_device *dev, void *ctx, tess_dtype dtype,
                         const int64_t *shape, gsl_rng *rng) {
    tess_task t;
    CHECK_OK(tess_task_init(&t, "heat3d", dtype, shape, 3));
    const int64_t n = tess_shape_elements(shape, 3);
    const size_t bytes = (size_t)n * tess_dtype_size(dtype);
    void *in = random_values(rng, dtype, n);
    double *ref = malloc((size_t)n * sizeof *ref);
    heat3d_host(&t, in, ref);
    void *dbufs[2] = {NULL, NULL};
    CHECK_OK(be->alloc(ctx, bytes, &dbufs[0]));
    CHECK_OK(be->alloc(ctx, bytes, &dbufs[1]));
    CHECK_OK(be->upload(ctx, dbufs[0], in, bytes));
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(&tess_op_heat3d, &t, dev, &s));
    const double tol = dtype == TESS_F64 ? 1e-12 : 1e-5;
    tess_config c;
    tess_space_default(s, &c);
    for (int i = 0; i <= SAMPLES; i++) {
        if (i > 0) CHECK_OK(tess_space_sample(s, rng, &c));
        char text[512];
        tess_config_format(s, &c, text, sizeof text);
        double err = run_heat3d(be, dev, ctx, &t, s, &c, dbufs, ref);
        CHECK_MSG(err <= tol, "heat3d %lldx%lldx%lld %s %s: error %g", (long long)shape[0],
                  (long long)shape[1], (long long)shape[2], tess_dtype_name(dtype), text, err);
    }
    tess_space_destroy(s);
    be->release(ctx, dbufs[0]);
    be->release(ctx, dbufs[1]);
    free(in);
    free(ref);
}

static void check_sum(const tess_backend_ops *be, const tess_device *dev, void *ctx, tess_dtype dtype,
                      int64_t n, gsl_rng *rng) {
    tess_task t;
    CHECK_OK(tess_task_init(&t, "sum", dtype, &n, 1));
    const size_t es = tess_dtype_size(dtype);
    void *in = random_values(rng, dtype, n);
    double ref = 0, scale = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = tess_dtype_load(in, dtype, i);
        ref += v;
        scale += fabs(v);
    }
    void *dbufs[3] = {NULL, NULL, NULL};
    CHECK_OK(be->alloc(ctx, (size_t)n * es, &dbufs[0]));
    CHECK_OK(be->alloc(ctx, es, &dbufs[1]));
    CHECK_OK(be->alloc(ctx, TESS_SUM_SCRATCH * es, &dbufs[2]));
    CHECK_OK(be->upload(ctx, dbufs[0], in, (size_t)n * es));
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(&tess_op_sum, &t, dev, &s));
    const double tol = (dtype == TESS_F64 ? 1e-13 : 2e-6) * (scale + fabs(ref));
    tess_config c;
    tess_space_default(s, &c);
    for (int i = 0; i <= SAMPLES; i++) {
        if (i > 0) CHECK_OK(tess_space_sample(s, rng, &c));
        char text[512];
        tess_config_format(s, &c, text, sizeof text);
        tess_kernel_source src;
        CHECK_OK(tess_op_emit(&tess_op_sum, &t, dev, s, &c, &src));
        void *module = NULL;
        CHECK_OK(cuda_build(be, dev, ctx, &src, &module, NULL));
        if (module) {
            poison(be, ctx, dbufs[1], dtype, 1);
            CHECK_OK(be->run(ctx, module, dbufs, 3));
            char got[8];
            CHECK_OK(be->download(ctx, got, dbufs[1], es));
            double v = tess_dtype_load(got, dtype, 0);
            CHECK_MSG(fabs(v - ref) <= tol, "sum %lld %s %s: %.17g, expected %.17g", (long long)n,
                      tess_dtype_name(dtype), text, v, ref);
            be->unload(ctx, module);
        }
        tess_kernel_source_free(&src);
    }
    tess_space_destroy(s);
    for (int b = 0; b < 3; b++) be->release(ctx, dbufs[b]);
    free(in);
}

/* Timing: one time per repetition, rotating over two buffer sets. */
static void check_timing(const tess_backend_ops *be, const tess_device *dev, void *ctx) {
    const int64_t shape[3] = {128, 128, 128};
    tess_task t;
    CHECK_OK(tess_task_init(&t, "heat3d", TESS_F32, shape, 3));
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(&tess_op_heat3d, &t, dev, &s));
    tess_config c;
    tess_space_default(s, &c);
    tess_kernel_source src;
    CHECK_OK(tess_op_emit(&tess_op_heat3d, &t, dev, s, &c, &src));
    const size_t bytes = 128 * 128 * 128 * sizeof(float);
    void *b[4] = {NULL, NULL, NULL, NULL};
    for (int i = 0; i < 4; i++) CHECK_OK(be->alloc(ctx, bytes, &b[i]));
    void *set0[2] = {b[0], b[1]}, *set1[2] = {b[2], b[3]};
    void *const *sets[2] = {set0, set1};
    void *module = NULL;
    tess_kernel_metrics m;
    CHECK_OK(cuda_build(be, dev, ctx, &src, &module, &m));
    if (module) {
        double ms[20];
        m.power_w = -1;
        CHECK_OK(be->time(ctx, module, sets, 2, 2, 20, 1, ms, &m));
        for (int r = 0; r < 20; r++) CHECK_MSG(ms[r] > 0 && ms[r] < 100, "rep %d: %g ms", r, ms[r]);
        /* Samples of 8 back-to-back launches: per launch, no slower than one
         * launch between its own events (they leave a gap), nor much faster. */
        double batched[20];
        CHECK_OK(be->time(ctx, module, sets, 2, 2, 20, 8, batched, NULL));
        tess_timing single_t, batched_t;
        tess_timing_summarize(ms, 20, &single_t);
        tess_timing_summarize(batched, 20, &batched_t);
        CHECK_MSG(batched_t.median_ms > 0.5 * single_t.median_ms && batched_t.median_ms < 1.1 * single_t.median_ms,
                  "per launch: %g ms in samples of 8, %g ms alone", batched_t.median_ms, single_t.median_ms);
        printf("heat3d 128^3 f32 default: %.4f ms (%.4f ms per launch in samples of 8), %d registers, occupancy %.2f, "
               "power %.0f W\n", single_t.median_ms, batched_t.median_ms, m.registers, m.occupancy, m.power_w);
        CHECK(m.power_w == -1 || (m.power_w > 10 && m.power_w < 2000));
        be->unload(ctx, module);
    }
    for (int i = 0; i < 4; i++) be->release(ctx, b[i]);
    tess_kernel_source_free(&src);
    tess_space_destroy(s);
}

int main(void) {
    tess_device dev;
    const tess_backend_ops *be = cuda_backend_or_skip(&dev);
    if (!be) return 77;
    check_descriptor(&dev);
    void *ctx = NULL;
    CHECK_OK(be->open(&dev, &ctx));
    if (!ctx) return check_finish("test_cuda_backend");
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 11);
    check_round_trip(be, ctx);
    const int64_t odd[3] = {35, 33, 31}, box[3] = {64, 48, 40}, deep[3] = {130, 20, 64};
    check_heat3d(be, &dev, ctx, TESS_F32, odd, rng);
    check_heat3d(be, &dev, ctx, TESS_F32, box, rng);
    check_heat3d(be, &dev, ctx, TESS_F32, deep, rng);
    check_heat3d(be, &dev, ctx, TESS_F64, box, rng);
    check_heat3d(be, &dev, ctx, TESS_F64, odd, rng);
    check_sum(be, &dev, ctx, TESS_F32, 1000003, rng);
    check_sum(be, &dev, ctx, TESS_F32, 37, rng);
    check_sum(be, &dev, ctx, TESS_F64, (1 << 22) + 5, rng);
    check_timing(be, &dev, ctx);
    gsl_rng_free(rng);
    be->close(ctx);
    return check_finish("test_cuda_backend");
}
