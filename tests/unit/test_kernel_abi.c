/* test_kernel_abi.c - kernels with scalar arguments on the cpu backend
 * (scaled.h): the runner verifies them through the hardware evaluator (an
 * out-of-place one and an in-place one, a planted wrong kernel of each
 * failing); the backend passes the scalars and changes them per run; and
 * through the public API one compiled kernel with a run-time extent runs on
 * two lengths, with the errors of unknown names and compiled-in extents. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "core/backend_cpu.h"
#include "core/error.h"
#include "core/evaluator.h"
#include "scaled.h"
#include "transfer/builtin.h"

typedef struct seen {
    tess_result r[2];
    int n;
} seen;

static void collect(const tess_result *r, void *user) {
    seen *s = user;
    if (s->n < 2) s->r[s->n++] = *r;
}

/* The good kernel passes the runner's verification, the planted wrong one fails it. */
static void check_evaluated(const tess_op *op, const tess_backend_ops *be, const tess_device *dev) {
    const int64_t shape[] = {10000};
    tess_task t;
    CHECK_OK(tess_op_make_task(op, TESS_F32, TESS_F32, TESS_F32, shape, 1, NULL, &t));
    tess_hw_options o = tess_hw_options_default();
    o.min_time_s = 0.001;
    o.timeout_s = 10;
    tess_space *space = NULL;
    CHECK_OK(tess_op_space(op, &t, dev, &space));
    if (!space) return;
    tess_evaluator *ev = NULL;
    CHECK_OK(tess_evaluator_create_hw(op, &t, space, be, dev, &o, &ev));
    if (!ev) {
        tess_space_destroy(space);
        return;
    }
    tess_config c[2];
    CHECK_OK(tess_config_parse(ev->space, "mode=good", &c[0]));
    CHECK_OK(tess_config_parse(ev->space, "mode=wrong", &c[1]));
    seen s = {0};
    CHECK_OK(ev->ops->evaluate(ev, c, 2, collect, &s));
    CHECK(s.n == 2);
    for (int i = 0; i < s.n; i++) {
        bool good = tess_config_get(ev->space, &s.r[i].config, "mode") == 0;
        tess_outcome want = good ? TESS_RESULT_OK : TESS_RESULT_WRONG_RESULT;
        CHECK_MSG(s.r[i].status == want, "%s mode %s: %s (%s)", op->name, good ? "good" : "wrong",
                  tess_outcome_name(s.r[i].status), s.r[i].message);
    }
    tess_evaluator_destroy(ev);
    tess_space_destroy(space);
}

/* Emits, compiles and loads config 0 of op for n elements. */
static void *load_kernel(const tess_backend_ops *be, const tess_device *dev, const tess_op *op, int64_t n,
                         tess_kernel_source *src) {
    tess_task t;
    tess_space *s = NULL;
    CHECK_OK(tess_op_make_task(op, TESS_F32, TESS_F32, TESS_F32, &n, 1, NULL, &t));
    CHECK_OK(tess_op_space(op, &t, dev, &s));
    if (!s) return NULL;
    tess_config c;
    tess_space_default(s, &c);
    CHECK_OK(tess_op_emit(op, &t, dev, s, &c, src));
    tess_space_destroy(s);
    tess_blob bin = {0};
    char *log = NULL;
    void *module = NULL;
    tess_status st = be->compile(dev, src, &bin, &log);
    CHECK_MSG(st == TESS_OK, "%s\n%s", tess_errmsg(), log ? log : "");
    free(log);
    if (!st) CHECK_OK(be->load(NULL, &bin, src, &module, NULL));
    tess_blob_free(&bin);
    return module;
}

/* The backend passes each scalar by pointer, and set_scalar changes it for the next runs. */
static void check_backend_scalars(const tess_backend_ops *be, const tess_device *dev) {
    enum { N = 1000 };
    tess_kernel_source src;
    void *module = load_kernel(be, dev, &scaled_axpb, N, &src);
    if (!module) return;
    float in[N], out[N];
    for (int i = 0; i < N; i++) in[i] = (float)i / N - 0.5f;
    void *bufs[] = {in, out};
    CHECK_OK(be->run(NULL, module, bufs, 2));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += out[i] != (float)(1.5f * in[i] + SCALED_B);
    CHECK_MSG(bad == 0, "%d elements differ with the emitted scalars", bad);
    tess_scalar a = src.scalar[0], b = src.scalar[1];
    a.value.f32 = -2.0f;
    b.value.f64 = 3.0;
    CHECK_OK(be->set_scalar(NULL, module, 0, &a));
    CHECK_OK(be->set_scalar(NULL, module, 1, &b));
    CHECK_OK(be->run(NULL, module, bufs, 2));
    bad = 0;
    for (int i = 0; i < N; i++) bad += out[i] != (float)(-2.0f * in[i] + 3.0);
    CHECK_MSG(bad == 0, "%d elements differ after set_scalar", bad);
    CHECK(be->set_scalar(NULL, module, 2, &a) == TESS_ERR_ARG);   /* no third scalar */
    CHECK(be->set_scalar(NULL, module, 0, &b) == TESS_ERR_ARG);   /* a is f32, not f64 */
    be->unload(NULL, module);
    tess_kernel_source_free(&src);
}

/* x = a * x + b on the first n of `len` elements; the rest must stay as they were. */
static void check_inplace_run(tess_kernel *k, int64_t n, int64_t len, double a, double b) {
    float *x = malloc((size_t)len * sizeof *x), *x0 = malloc((size_t)len * sizeof *x0);
    for (int64_t i = 0; i < len; i++) x[i] = x0[i] = (float)(i % 97) / 97.0f - 0.5f;
    void *arrays[] = {x};
    CHECK_OK(tess_kernel_set_extent(k, "n", n));
    CHECK_OK(tess_kernel_run(k, arrays, 1));
    int64_t bad = 0;
    for (int64_t i = 0; i < len; i++) bad += x[i] != (i < n ? (float)((float)a * x0[i] + b) : x0[i]);
    CHECK_MSG(bad == 0, "n = %lld of %lld: %lld elements differ", (long long)n, (long long)len, (long long)bad);
    free(x);
    free(x0);
}

static void check_public_api(const char *db) {
    tess_context *ctx = NULL;
    CHECK_OK(tess_open(&ctx, db));
    if (!ctx) return;
    const int64_t shape[] = {4096};
    tess_kernel *k = NULL;
    CHECK_OK(tess_kernel_get(ctx, "axpb_inplace", shape, 1, "f32", "cpu", &k));
    if (k) {
        check_inplace_run(k, 1000, 1001, SCALED_A, SCALED_B);
        check_inplace_run(k, 4096, 4096, SCALED_A, SCALED_B);
        CHECK_OK(tess_kernel_set_scalar(k, "a", 0.5));
        CHECK_OK(tess_kernel_set_scalar(k, "b", 2.0));
        check_inplace_run(k, 3000, 4096, 0.5, 2.0);
        CHECK(tess_kernel_set_scalar(k, "c", 1.0) == TESS_ERR_ARG);
        CHECK_MSG(strstr(tess_errmsg(), "'c'") && strstr(tess_errmsg(), "a, b, n"), "%s", tess_errmsg());
        CHECK(tess_kernel_set_scalar(k, "n", 2.5) == TESS_ERR_ARG);   /* an integer argument */
        CHECK(tess_kernel_set_extent(k, "m", 10) == TESS_ERR_ARG);
        CHECK_MSG(strstr(tess_errmsg(), "'m'") != NULL, "%s", tess_errmsg());
        CHECK(tess_kernel_set_extent(k, "n", 0) == TESS_ERR_ARG);
        CHECK(tess_kernel_set_extent(k, "n", 4097) == TESS_ERR_ARG);   /* beyond the task's 4096 */
        CHECK_MSG(strstr(tess_errmsg(), "1..4096") != NULL, "%s", tess_errmsg());
        /* the cpu runs synchronously: no stream, and without one the same as a run */
        float x[4096];
        for (int i = 0; i < 4096; i++) x[i] = 1.0f;
        void *arrays[] = {x};
        CHECK(tess_kernel_run_on_stream(k, arrays, 1, (void *)x) == TESS_ERR_ARG);
        CHECK_MSG(strstr(tess_errmsg(), "NULL") != NULL, "%s", tess_errmsg());
        CHECK_OK(tess_kernel_run_on_stream(k, arrays, 1, NULL));
        CHECK(x[0] == 0.5f * 1.0f + 2.0f && x[2999] == x[0] && x[3000] == 1.0f);
        tess_kernel_destroy(k);
    }
    /* axpb compiles n in */
    k = NULL;
    CHECK_OK(tess_kernel_get(ctx, "axpb", shape, 1, "f32", "cpu", &k));
    if (k) {
        CHECK(tess_kernel_set_extent(k, "n", 100) == TESS_ERR_ARG);
        CHECK_MSG(strstr(tess_errmsg(), "compiled into the kernel") != NULL, "%s", tess_errmsg());
        tess_kernel_destroy(k);
    }
    tess_close(ctx);
}

int main(void) {
    CHECK_OK(tess_register_builtin());
    CHECK_OK(tess_op_register(&scaled_axpb));
    CHECK_OK(tess_op_register(&scaled_axpb_inplace));
    const tess_backend_ops *cpu = tess_backend_find("cpu");
    tess_device dev;
    CHECK_OK(cpu->probe(&dev));
    /* the evaluator forks: it runs before any kernel runs in this process */
    check_evaluated(&scaled_axpb, cpu, &dev);
    check_evaluated(&scaled_axpb_inplace, cpu, &dev);
    check_backend_scalars(cpu, &dev);

    char dir[] = "/tmp/tessera-abi-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char db[256];
    snprintf(db, sizeof db, "%s/records.db", dir);
    check_public_api(db);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    return check_finish("test_kernel_abi");
}
