/*
 * bench_compile_pool.c - compile throughput of the compile pool: distinct
 * kernels (configs of an operator, each made unique so the disk cache cannot
 * answer) compiled by 1 worker and by N workers, one kernel per program, then
 * by N workers compiling batches, in the same run.
 *
 *   bench_compile_pool BACKEND [KERNELS] [WORKERS] [OP]   (defaults: 64, the core count, heat3d)
 *
 * OP "small" (cuda) compiles small kernels instead of an operator's configs:
 * an elementwise a*x+b with distinct constants, a few lines of CUDA, which
 * measures the compiler's fixed cost per kernel. Every worker has compiled
 * one kernel before timing starts (the compiler's one-time start-up).
 *
 * NVRTC needs no GPU: without one, the cuda backend compiles for an sm_90
 * descriptor (an H200's), so compile throughput can be measured anywhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <unistd.h>
#include "core/compile_pool.h"
#include "core/error.h"
#include "tests/h200.h"
#include "core/types.h"
#include "transfer/builtin.h"

/* A small CUDA kernel, distinct for each i. */
static tess_status small_kernel(int i, tess_kernel_source *src) {
    memset(src, 0, sizeof *src);
    src->code = malloc(512);
    if (!src->code) return tess_error(TESS_ERR_NOMEM, "kernel source");
    snprintf(src->code, 512,
             "// small kernel %d\n"
             "extern \"C\" __global__ void axpb(const float *x, float *y, int n)\n"
             "{\n"
             "    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
             "    if (i < n) y[i] = %d.5f * x[i] + %d.25f;\n"
             "}\n",
             i, i % 97 + 1, i / 97);
    snprintf(src->options, sizeof src->options, "--minimal");
    src->nlaunches = 1;
    return TESS_OK;
}

/* Compiles `count` kernels with `workers` processes, each taking up to
 * `batch` jobs at once; returns compiles per second. */
static double throughput(const tess_backend_ops *be, const tess_device *dev, const tess_op *op,
                         tess_space *space, const tess_task *task, int count, int workers, int batch,
                         int round, int *failed) {
    tess_compile_pool *pool;
    if (tess_compile_pool_create(be, dev, workers, &pool)) return -1;
    tess_compile_pool_set_batch(pool, batch);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 7);
    tess_status st = TESS_OK;
    /* Sources are generated before the clock starts: only compilation is timed. */
    tess_kernel_source *src = calloc((size_t)count, sizeof *src);
    for (int i = 0; i < count && !st; i++) {
        tess_config c;
        if (!op) {
            st = small_kernel(i, &src[i]);
        } else {
            st = tess_space_sample(space, rng, &c);
            if (!st) st = tess_op_emit(op, task, dev, space, &c, &src[i]);
        }
        if (!st) {
            /* a unique comment defeats the disk cache */
            size_t n = strlen(src[i].code) + 64;
            char *code = malloc(n);
            snprintf(code, n, "/* round %d kernel %d pid %d */\n%s", round, i, (int)getpid(), src[i].code);
            free(src[i].code);
            src[i].code = code;
        }
    }
    /* Each worker loads and initializes the compiler on its first job (a
     * fixed cost, paid once per tuning run): one small kernel per worker
     * before the clock starts, so the rate is the steady state's. */
    for (int w = 0; w < workers && !st; w++) {
        tess_kernel_source warm;
        st = small_kernel(-1 - w - 1000 * round, &warm);
        if (!st) st = tess_compile_pool_submit(pool, &warm, -1);
        tess_kernel_source_free(&warm);
    }
    for (int w = 0; w < workers && !st; w++) {
        tess_compiled c;
        st = tess_compile_pool_next(pool, &c);
        tess_compiled_free(&c);
    }
    double t0 = tess_now();
    for (int i = 0; i < count && !st; i++) st = tess_compile_pool_submit(pool, &src[i], i);
    *failed = 0;
    for (int i = 0; i < count && !st; i++) {
        tess_compiled c;
        st = tess_compile_pool_next(pool, &c);
        if (!st && c.status) (*failed)++;
        tess_compiled_free(&c);
    }
    double rate = st ? -1 : count / (tess_now() - t0);
    for (int i = 0; i < count; i++) tess_kernel_source_free(&src[i]);
    free(src);
    gsl_rng_free(rng);
    tess_compile_pool_destroy(pool);
    return rate;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_compile_pool BACKEND [KERNELS] [WORKERS] [OP]\n");
        return 2;
    }
    int count = argc > 2 ? atoi(argv[2]) : 64;
    int workers = argc > 3 ? atoi(argv[3]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (tess_register_builtin()) {
        fprintf(stderr, "%s\n", tess_errmsg());
        return 1;
    }
    const char *op_name = argc > 4 ? argv[4] : "heat3d";
    const tess_backend_ops *be = tess_backend_find(argv[1]);
    const tess_op *op = tess_op_find(op_name);
    tess_device dev;
    bool offline = false;
    if (be && strcmp(be->name, "cuda") == 0 && be->probe(&dev) != TESS_OK) {
        /* no GPU here: an H200's descriptor is enough for NVRTC */
        dev = tess_test_h200("NVIDIA H200 (descriptor only)");
        offline = true;
    } else if (!be || be->probe(&dev)) {
        fprintf(stderr, "backend %s unavailable: %s\n", argv[1], tess_errmsg());
        return 1;
    }
    bool small = strcmp(op_name, "small") == 0;
    if (small && strcmp(be->name, "cuda") != 0) {
        fprintf(stderr, "small kernels are CUDA source: use the cuda backend\n");
        return 2;
    }
    if (!op && !small) {
        fprintf(stderr, "unknown operator %s\n", op_name);
        return 1;
    }
    tess_task task;
    tess_space *space = NULL;
    int64_t shape[4];
    int ndim;
    if (!small && (tess_shape_parse(op->default_shape, shape, &ndim) || tess_task_init(&task, op_name, TESS_F32, shape, ndim) ||
        tess_op_space(op, &task, &dev, &space))) {
        fprintf(stderr, "%s\n", tess_errmsg());
        return 1;
    }
    /* One process, then one per worker, then the same with batches (where the
     * backend compiles batches): each round from its own unique sources. */
    int failed[3] = {0};
    double one = throughput(be, &dev, op, space, &task, count, 1, 1, 1, &failed[0]);
    double many = throughput(be, &dev, op, space, &task, count, workers, 1, 2, &failed[1]);
    double batched = be->compile_batch
                         ? throughput(be, &dev, op, space, &task, count, workers, TESS_COMPILE_BATCH_MAX, 3,
                                      &failed[2])
                         : 0;
    printf("compile pool, %s%s, %d %s kernels each\n", argv[1], offline ? " (no GPU: sm_90 descriptor)" : "",
           count, op_name);
    printf("  1 worker process   %8.1f compiles/s (%d failed)\n", one, failed[0]);
    printf("  %2d worker processes %7.1f compiles/s (%d failed)  speedup %.1fx\n", workers, many, failed[1],
           many / one);
    if (be->compile_batch)
        printf("  %2d workers, batches of up to %d kernels per program %7.1f compiles/s (%d failed)  speedup %.1fx\n",
               workers, TESS_COMPILE_BATCH_MAX, batched, failed[2], batched / one);
    tess_space_destroy(space);
    bool ok = one > 0 && many > 0 && (!be->compile_batch || batched > 0);
    return ok && !failed[0] && !failed[1] && !failed[2] ? 0 : 1;
}
