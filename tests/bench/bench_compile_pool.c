/*
 * bench_compile_pool.c - compile throughput of the compile pool: distinct
 * small kernels (heat3d configs, each made unique so the disk cache cannot
 * answer) compiled by 1 worker and by N workers, in the same run.
 *
 *   bench_compile_pool BACKEND [KERNELS] [WORKERS]    (defaults: 64, the core count)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/compile_pool.h"
#include "core/error.h"
#include "core/types.h"
#include "stencils/heat3d.h"
#include "transfer/builtin.h"

/* Compiles `count` kernels with `workers` processes; returns compiles per second. */
static double throughput(const tess_backend_ops *be, const tess_device *dev, tess_space *space,
                         const tess_task *task, int count, int workers, int round, int *failed) {
    tess_compile_pool *pool;
    if (tess_compile_pool_create(be, dev, workers, &pool)) return -1;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 7);
    tess_status st = TESS_OK;
    /* Sources are generated before the clock starts: only compilation is timed. */
    tess_kernel_source *src = calloc((size_t)count, sizeof *src);
    for (int i = 0; i < count && !st; i++) {
        tess_config c;
        st = tess_space_sample(space, rng, &c);
        if (!st) st = tess_op_heat3d.emit(task, dev, space, &c, &src[i]);
        if (!st) {
            /* a unique comment defeats the disk cache */
            size_t n = strlen(src[i].code) + 64;
            char *code = malloc(n);
            snprintf(code, n, "/* round %d kernel %d pid %d */\n%s", round, i, (int)getpid(), src[i].code);
            free(src[i].code);
            src[i].code = code;
        }
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
        fprintf(stderr, "usage: bench_compile_pool BACKEND [KERNELS] [WORKERS]\n");
        return 2;
    }
    int count = argc > 2 ? atoi(argv[2]) : 64;
    int workers = argc > 3 ? atoi(argv[3]) : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (tess_register_builtin()) {
        fprintf(stderr, "%s\n", tess_errmsg());
        return 1;
    }
    const tess_backend_ops *be = tess_backend_find(argv[1]);
    tess_device dev;
    if (!be || be->probe(&dev)) {
        fprintf(stderr, "backend %s unavailable: %s\n", argv[1], tess_errmsg());
        return 1;
    }
    tess_task task;
    int64_t shape[3] = {64, 64, 64};
    tess_space *space;
    if (tess_task_init(&task, "heat3d", TESS_F32, shape, 3) || tess_op_heat3d.space(&task, &dev, &space)) {
        fprintf(stderr, "%s\n", tess_errmsg());
        return 1;
    }
    int failed1 = 0, failedn = 0;
    double one = throughput(be, &dev, space, &task, count, 1, 1, &failed1);
    double many = throughput(be, &dev, space, &task, count, workers, 2, &failedn);
    printf("compile pool, %s, %d small heat3d kernels each\n", argv[1], count);
    printf("  1 worker process   %8.1f compiles/s (%d failed)\n", one, failed1);
    printf("  %2d worker processes %7.1f compiles/s (%d failed)  speedup %.1fx\n", workers, many, failedn,
           many / one);
    tess_space_destroy(space);
    return one > 0 && many > 0 && !failed1 && !failedn ? 0 : 1;
}
