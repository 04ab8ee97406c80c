/*
 * test_cuda_templates.c - every CUDA template of heat3d, sum, the row-wise
 * operators (softmax, log_softmax, cross_entropy, layernorm, rmsnorm,
 * add_rmsnorm), `reduce` along an axis and the activations (gelu,
 * gelu_tanh, silu, swiglu), their shortcuts under an error budget included,
 * over a
 * sample of each space's configs (the default, then random legal points),
 * compiles with NVRTC for sm_90 through the cuda backend's compile op. NVRTC
 * needs no GPU; without it (or without the toolkit at build time) the test
 * is skipped.
 *
 * Also checked: the cubin holds each launch's entry, a broken source fails
 * with TESS_ERR_COMPILE and the compiler's log, and a second compile of the
 * same source comes from the disk cache with the same bytes; kernels
 * compiled as a batch each find their (renamed) entries in the binary, a
 * broken member fails alone, and a batch's kernels come back from the cache
 * under the same names.
 */
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "h200.h"
#include "rowwise_check.h"
#include "core/backend.h"
#include "core/error.h"
#include "reductions/activation.h"
#include "reductions/axis_reduce.h"
#include "reductions/rowwise.h"
#include "reductions/sum.h"
#include "stencils/heat3d.h"

/* Present only in builds with the CUDA toolkit. */
extern tess_status tess_cuda_register(void) __attribute__((weak));

#define SAMPLES 8

/* Compiles one config; returns false if NVRTC is missing. */
static bool compile_config(const tess_backend_ops *be, const tess_device *dev, const tess_op *op, const tess_task *t,
                           const tess_space *s, const tess_config *c, int *compiled) {
    char text[512];
    tess_config_format(s, c, text, sizeof text);
    tess_kernel_source src;
    CHECK_OK(tess_op_emit(op, t, dev, s, c, &src));
    CHECK(src.code && strstr(src.code, "#define") && strstr(src.code, "extern \"C\" __global__"));
    tess_blob bin = {0};
    char *log = NULL;
    tess_status st = be->compile(dev, &src, &bin, &log);
    if (st == TESS_ERR_UNAVAILABLE) {
        printf("skipped: %s\n", tess_errmsg());
        tess_kernel_source_free(&src);
        return false;
    }
    CHECK_MSG(st == TESS_OK, "%s %s: %s\n%s", t->op, text, tess_errmsg(), log ? log : "");
    for (int i = 0; st == TESS_OK && i < src.nlaunches; i++)
        CHECK_MSG(memmem(bin.data, bin.size, src.launch[i].entry, strlen(src.launch[i].entry)),
                  "entry %s missing from the cubin of %s", src.launch[i].entry, text);
    if (st == TESS_OK) ++*compiled;
    free(log);
    tess_blob_free(&bin);
    tess_kernel_source_free(&src);
    return true;
}

/* The default and SAMPLES random configs of one task; false if skipped. */
static bool compile_space(const tess_backend_ops *be, const tess_device *dev, const tess_op *op,
                          tess_dtype dtype, const int64_t *shape, int ndim, const char *attrs, gsl_rng *rng) {
    tess_task t;
    CHECK_OK(tess_op_make_task(op, dtype, dtype, dtype, shape, ndim, attrs, &t));
    tess_space *s = NULL;
    CHECK_OK(tess_op_space(op, &t, dev, &s));
    if (!s) return true;
    tess_config c;
    tess_space_default(s, &c);
    CHECK_MSG(tess_space_valid(s, &c), "%s default config violates %s", op->name,
              tess_space_violation(s, &c));
    int compiled = 0;
    bool ran = compile_config(be, dev, op, &t, s, &c, &compiled);
    for (int i = 0; ran && i < SAMPLES; i++) {
        CHECK_OK(tess_space_sample(s, rng, &c));
        ran = compile_config(be, dev, op, &t, s, &c, &compiled);
    }
    if (ran) printf("%s %s: %d configs compiled\n", op->name, tess_dtype_name(dtype), compiled);
    tess_space_destroy(s);
    return ran;
}

/* The default config of a sub-space (`pin`, as --fix takes it) compiles. */
static void compile_pinned(const tess_backend_ops *be, const tess_device *dev, const tess_op *op, tess_dtype dtype,
                           const int64_t *shape, const char *pin) {
    tess_task t;
    CHECK_OK(tess_op_make_task(op, dtype, dtype, dtype, shape, 2, "error_budget=0.001", &t));
    tess_config c;
    tess_space *s = pinned_space(op, &t, dev, pin, &c);
    if (!s) return;
    int compiled = 0;
    compile_config(be, dev, op, &t, s, &c, &compiled);
    CHECK_MSG(compiled == 1, "%s %s: not compiled", op->name, pin);
    tess_space_destroy(s);
}

static void check_compile_error(const tess_backend_ops *be, const tess_device *dev) {
    tess_kernel_source src = {.code = "extern \"C\" __global__ void broken(float *p) { p[0] = q; }\n",
                              .nlaunches = 1};
    tess_blob bin = {0};
    char *log = NULL;
    CHECK(be->compile(dev, &src, &bin, &log) == TESS_ERR_COMPILE);
    CHECK_MSG(log && strstr(log, "error"), "log: %s", log ? log : "(none)");
    CHECK(bin.data == NULL);
    free(log);
}

static void check_cache(const tess_backend_ops *be, const tess_device *dev) {
    tess_kernel_source src = {.code = "extern \"C\" __global__ void twice(float *p) { p[threadIdx.x] *= 2.0f; }\n",
                              .nlaunches = 1};
    tess_blob a = {0}, b = {0};
    char *log = NULL;
    CHECK_OK(be->compile(dev, &src, &a, &log));
    free(log);
    log = NULL;
    double t0 = tess_now();
    CHECK_OK(be->compile(dev, &src, &b, &log));
    double cached_ms = 1e3 * (tess_now() - t0);
    free(log);
    CHECK(a.size == b.size && a.size > 0 && memcmp(a.data, b.data, a.size) == 0);
    CHECK_MSG(cached_ms < 20, "a cached compile took %.1f ms", cached_ms);
    /* Hopper-only code is a different binary (sm_90a). */
    strcpy(src.min_arch, "sm_90a");
    tess_blob h = {0};
    CHECK_OK(be->compile(dev, &src, &h, &log));
    free(log);
    CHECK(h.size > 0 && !(h.size == a.size && memcmp(h.data, a.data, a.size) == 0));
    tess_blob_free(&a);
    tess_blob_free(&b);
    tess_blob_free(&h);
}

/* Checks one batch result: status, and every entry (with its suffix) in the binary. */
static void check_batch_member(const tess_kernel_source *src, const tess_compile_result *r, bool renamed) {
    CHECK_MSG(r->status == TESS_OK, "batch member: %s", r->log ? r->log : "");
    CHECK(renamed == (r->symbol_suffix[0] != '\0'));
    for (int l = 0; r->status == TESS_OK && l < src->nlaunches; l++) {
        char name[96];
        snprintf(name, sizeof name, "%s%s", src->launch[l].entry, r->symbol_suffix);
        CHECK_MSG(memmem(r->binary.data, r->binary.size, name, strlen(name)), "entry %s missing", name);
    }
}

static void free_results(tess_compile_result *r, int n) {
    for (int i = 0; i < n; i++) {
        tess_blob_free(&r[i].binary);
        free(r[i].log);
    }
}

static void check_batch(const tess_backend_ops *be, const tess_device *dev, gsl_rng *rng) {
    enum { N = 4 };
    const int64_t cube[] = {64, 48, 40}, n[] = {1 << 20};
    tess_task heat, sum;
    tess_space *hs = NULL, *ss = NULL;
    CHECK_OK(tess_op_make_task(&tess_op_heat3d, TESS_F32, TESS_F32, TESS_F32, cube, 3, NULL, &heat));
    CHECK_OK(tess_op_make_task(&tess_op_sum, TESS_F32, TESS_F32, TESS_F32, n, 1, NULL, &sum));
    CHECK_OK(tess_op_space(&tess_op_heat3d, &heat, dev, &hs));
    CHECK_OK(tess_op_space(&tess_op_sum, &sum, dev, &ss));
    if (!hs || !ss) return;
    tess_kernel_source src[N];
    tess_config c;
    for (int i = 0; i < N - 1; i++) {
        CHECK_OK(tess_space_sample(hs, rng, &c));
        CHECK_OK(tess_op_emit(&tess_op_heat3d, &heat, dev, hs, &c, &src[i]));
    }
    tess_space_default(ss, &c);
    CHECK_OK(tess_op_emit(&tess_op_sum, &sum, dev, ss, &c, &src[N - 1]));   /* two launches, other macros */
    tess_compile_result r[N];
    be->compile_batch(dev, src, N, r);
    for (int i = 0; i < N; i++) check_batch_member(&src[i], &r[i], true);
    tess_compile_result again[N];
    be->compile_batch(dev, src, N, again);
    for (int i = 0; i < N; i++) {
        check_batch_member(&src[i], &again[i], true);
        CHECK(strcmp(r[i].symbol_suffix, again[i].symbol_suffix) == 0);
    }
    free_results(r, N);
    free_results(again, N);
    /* A broken member: it fails with its log, the others still compile. */
    char *keep = src[1].code;
    src[1].code = "extern \"C\" __global__ void heat3d(float *p) { p[0] = undefined_name; }\n";
    be->compile_batch(dev, src, N, r);
    CHECK(r[1].status == TESS_ERR_COMPILE && r[1].log && strstr(r[1].log, "undefined_name"));
    for (int i = 0; i < N; i++)
        if (i != 1) check_batch_member(&src[i], &r[i], r[i].symbol_suffix[0] != '\0');
    free_results(r, N);
    src[1].code = keep;
    for (int i = 0; i < N; i++) tess_kernel_source_free(&src[i]);
    tess_space_destroy(hs);
    tess_space_destroy(ss);
}

int main(void) {
    if (!tess_cuda_register) {
        printf("skipped: built without the CUDA toolkit\n");
        return 77;
    }
    CHECK_OK(tess_cuda_register());
    const tess_backend_ops *be = tess_backend_find("cuda");
    CHECK(be != NULL);
    if (!be) return check_finish("test_cuda_templates");
    tess_device dev = tess_test_h200("NVIDIA H200");
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 7);

    const int64_t cube[] = {64, 48, 40}, odd[] = {35, 33, 31}, small[] = {3, 5, 4}, flat[] = {4, 8, 256};
    const int64_t n_odd[] = {1000003}, n_pow2[] = {1 << 20};
    bool ran = compile_space(be, &dev, &tess_op_heat3d, TESS_F32, cube, 3, NULL, rng);
    if (ran) {
        compile_space(be, &dev, &tess_op_heat3d, TESS_F32, odd, 3, NULL, rng);
        compile_space(be, &dev, &tess_op_heat3d, TESS_F64, cube, 3, NULL, rng);
        compile_space(be, &dev, &tess_op_heat3d, TESS_F32, small, 3, NULL, rng);
        compile_space(be, &dev, &tess_op_heat3d, TESS_F64, flat, 3, NULL, rng);
        compile_space(be, &dev, &tess_op_sum, TESS_F32, n_odd, 1, NULL, rng);
        compile_space(be, &dev, &tess_op_sum, TESS_F64, n_pow2, 1, NULL, rng);
        const int64_t rows_odd[] = {17, 19}, rows_mid[] = {32768, 8192}, rows_long[] = {4096, 65536},
                      rows_short[] = {65536, 1024};
        compile_space(be, &dev, &tess_op_softmax, TESS_BF16, rows_mid, 2, "error_budget=0.001", rng);
        compile_space(be, &dev, &tess_op_softmax, TESS_F32, rows_odd, 2, NULL, rng);
        compile_space(be, &dev, &tess_op_layernorm, TESS_F16, rows_long, 2, NULL, rng);
        compile_space(be, &dev, &tess_op_layernorm, TESS_BF16, rows_short, 2, "error_budget=0.001", rng);
        compile_space(be, &dev, &tess_op_rmsnorm, TESS_BF16, rows_long, 2, "error_budget=0.001", rng);
        compile_space(be, &dev, &tess_op_rmsnorm, TESS_F32, rows_short, 2, NULL, rng);
        compile_space(be, &dev, &tess_op_log_softmax, TESS_BF16, rows_mid, 2, "error_budget=0.001", rng);
        compile_space(be, &dev, &tess_op_cross_entropy, TESS_BF16, rows_long, 2, "error_budget=0.001", rng);
        compile_space(be, &dev, &tess_op_add_rmsnorm, TESS_F16, rows_odd, 2, "error_budget=0.001", rng);
        /* rows split over a cluster, every row-wise kind, the row kept each way, online or not */
        static const char *const cluster_pins[] = {
            "cluster=4,threads_per_row=256,rows_per_block=1,cache=registers,unroll=1,online=0",
            "cluster=8,threads_per_row=128,rows_per_block=2,cache=shared,online=0",
            "cluster=2,threads_per_row=32,rows_per_block=4,cache=global,online=1,fast_exp=1"};
        const tess_op *const row_ops[] = {&tess_op_softmax, &tess_op_log_softmax, &tess_op_cross_entropy,
                                          &tess_op_layernorm, &tess_op_rmsnorm, &tess_op_add_rmsnorm};
        for (int o = 0; o < 6; o++)
            for (int p = 0; p < 3; p++) {
                char pin[160];
                snprintf(pin, sizeof pin, "%s", cluster_pins[p]);
                if (o >= 3) *strstr(pin, ",online") = '\0';   /* the norms have neither online nor fast_exp */
                /* softmax keeps its exponentials by default, beside a row in registers only */
                if (o == 0 && !strstr(pin, "registers")) strcat(pin, ",keep_exp=0");
                compile_pinned(be, &dev, row_ops[o], TESS_BF16, rows_long, pin);
            }
        /* the planted unsafe shortcut of test_rowwise_gpu, and its safe twin */
        const int64_t rows_planted[] = {8, 256};
        compile_pinned(be, &dev, &tess_op_softmax, TESS_BF16, rows_planted, ROWWISE_CUDA_PLANTED_PIN ",max_sub=0");
        compile_pinned(be, &dev, &tess_op_softmax, TESS_BF16, rows_planted, ROWWISE_CUDA_PLANTED_PIN ",max_sub=1");
        /* softmax keeping its exponentials, alone and in a cluster */
        compile_pinned(be, &dev, &tess_op_softmax, TESS_BF16, rows_mid,
                       "keep_exp=1,cache=registers,online=0,vec=4,threads_per_row=256,rows_per_block=1,unroll=1");
        compile_pinned(be, &dev, &tess_op_softmax, TESS_F32, rows_long,
                       "keep_exp=1,cluster=8,cache=registers,online=0,vec=4,threads_per_row=256,rows_per_block=1,unroll=1");
        /* kept exponentials and held weights beside a row in shared memory or read again */
        compile_pinned(be, &dev, &tess_op_softmax, TESS_BF16, rows_long,
                       "keep_exp=1,bulk=1,cache=shared,online=0,cluster=2,vec=8,threads_per_row=512,rows_per_block=1,unroll=1");
        compile_pinned(be, &dev, &tess_op_softmax, TESS_F16, rows_mid,
                       "keep_exp=1,cache=global,online=0,vec=8,threads_per_row=256,rows_per_block=1,unroll=1");
        compile_pinned(be, &dev, &tess_op_softmax, TESS_BF16, rows_long,
                       "keep_exp=1,bulk=1,cache=shared,online=1,cluster=4,row_loop=2,vec=8,threads_per_row=512,rows_per_block=1,unroll=1");
        compile_pinned(be, &dev, &tess_op_softmax, TESS_F32, rows_mid,
                       "keep_exp=1,cache=registers,online=1,vec=4,threads_per_row=256,rows_per_block=1,unroll=1");
        static const char *const hold_pins[] = {
            "hold_weights=1,bulk=1,bulk_store=1,row_loop=2,cache=shared,cluster=4,vec=8,threads_per_row=512,rows_per_block=1,unroll=1",
            "hold_weights=1,cache=registers,cluster=8,vec=8,threads_per_row=256,rows_per_block=1,unroll=1",
            "hold_weights=1,cache=global,cluster=1,vec=4,threads_per_row=128,rows_per_block=2,unroll=1",
            "hold_weights=2,bulk=1,row_loop=2,cache=shared,cluster=8,vec=8,threads_per_row=256,rows_per_block=1,unroll=2",
            "hold_weights=2,cache=registers,cluster=4,vec=8,threads_per_row=512,rows_per_block=1,unroll=1"};
        for (int o = 3; o < 6; o++)
            for (int p = 0; p < 5; p++)
                if (o < 5 || (p > 0 && p != 3)) compile_pinned(be, &dev, row_ops[o], TESS_BF16, p == 2 ? rows_mid : rows_long, hold_pins[p]);
        /* row groups one after another, the next one's slice loaded early, with and without a cluster */
        static const char *const loop_pins[] = {
            "row_loop=4,cluster=8,cache=registers,vec=8,threads_per_row=256,rows_per_block=1,unroll=1",
            "row_loop=2,cluster=1,cache=registers,vec=4,threads_per_row=256,rows_per_block=2,unroll=1"};
        const tess_op *const loop_ops[] = {&tess_op_softmax, &tess_op_log_softmax, &tess_op_layernorm, &tess_op_rmsnorm};
        for (int o = 0; o < 4; o++)
            for (int p = 0; p < 2; p++) compile_pinned(be, &dev, loop_ops[o], TESS_BF16, p ? rows_mid : rows_long, loop_pins[p]);
        /* slices copied into shared memory by bulk copies, one buffer or two (row groups one after another), the
         * outputs copied out by bulk copies too or not */
        static const char *const bulk_pins[] = {
            "bulk=1,row_loop=1,cluster=2,cache=shared,vec=8,threads_per_row=512,rows_per_block=1,unroll=2",
            "bulk=1,row_loop=4,cluster=4,cache=shared,vec=8,threads_per_row=256,rows_per_block=1,unroll=4",
            "bulk=1,row_loop=2,cluster=1,cache=shared,vec=4,threads_per_row=128,rows_per_block=2,unroll=1",
            "bulk=1,bulk_store=1,row_loop=1,cluster=2,cache=shared,vec=8,threads_per_row=512,rows_per_block=1,unroll=2",
            "bulk=1,bulk_store=1,row_loop=2,cluster=1,cache=shared,vec=4,threads_per_row=128,rows_per_block=2,unroll=1"};
        for (int o = 0; o < 5; o++)
            for (int p = 0; p < 5; p++) {
                if (o == 2 && p > 0) continue;   /* cross-entropy takes no row loop, stores no rows */
                char pin[160];
                snprintf(pin, sizeof pin, "%s%s", bulk_pins[p], o == 0 ? ",keep_exp=0" : "");
                if (o < 3) strcat(pin, ",online=0");
                compile_pinned(be, &dev, row_ops[o], p % 2 == 0 && p > 0 ? TESS_F32 : TESS_BF16,
                               p % 2 == 0 && p > 0 ? rows_mid : rows_long, pin);
            }
        compile_space(be, &dev, &tess_op_reduce, TESS_BF16, odd, 3, "kind=max,axis=1", rng);
        compile_space(be, &dev, &tess_op_reduce, TESS_F32, cube, 3, "kind=mean,axis=2", rng);
        compile_space(be, &dev, &tess_op_reduce, TESS_BF16, cube, 3, "kind=sum,axis=0", rng);
        const int64_t big[] = {1 << 28}, odd_n[] = {1000003};
        compile_space(be, &dev, &tess_op_gelu, TESS_BF16, big, 1, "error_budget=0.001", rng);
        compile_space(be, &dev, &tess_op_gelu_tanh, TESS_F16, odd_n, 1, "error_budget=0.001", rng);
        compile_space(be, &dev, &tess_op_silu, TESS_F32, odd_n, 1, "error_budget=0.001", rng);
        compile_space(be, &dev, &tess_op_swiglu, TESS_BF16, odd_n, 1, NULL, rng);
        check_compile_error(be, &dev);
        check_cache(be, &dev);
        check_batch(be, &dev, rng);
    }
    gsl_rng_free(rng);
    if (!ran) return 77;
    return check_finish("test_cuda_templates");
}
