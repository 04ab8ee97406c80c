/* cuda_harness.h - what the GPU tests share: getting the cuda backend (or
 * the reason to skip), compiling and loading a kernel, random inputs. */
#ifndef TESS_TEST_CUDA_HARNESS_H
#define TESS_TEST_CUDA_HARNESS_H

#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include "check.h"
#include "core/backend.h"
#include "core/error.h"

/* Present only in builds with the CUDA toolkit. */
extern tess_status tess_cuda_register(void) __attribute__((weak));

/* The cuda backend and its device, or NULL after printing why the test is
 * skipped (the caller then returns 77). */
static inline const tess_backend_ops *cuda_backend_or_skip(tess_device *dev) {
    if (!tess_cuda_register) {
        printf("skipped: built without the CUDA toolkit\n");
        return NULL;
    }
    if (tess_cuda_register() != TESS_OK) {
        printf("skipped: %s\n", tess_errmsg());
        return NULL;
    }
    const tess_backend_ops *be = tess_backend_find("cuda");
    if (!be || be->probe(dev) != TESS_OK) {
        printf("skipped: no CUDA device here (%s)\n", tess_errmsg());
        return NULL;
    }
    return be;
}

/* Compiles and loads src; prints the compiler log on failure. */
static inline tess_status cuda_build(const tess_backend_ops *be, const tess_device *dev, void *ctx,
                                     const tess_kernel_source *src, void **module,
                                     tess_kernel_metrics *metrics) {
    tess_blob bin = {0};
    char *log = NULL;
    tess_status st = be->compile(dev, src, &bin, &log);
    if (st) fprintf(stderr, "compile failed: %s\n%s\n", tess_errmsg(), log ? log : "");
    free(log);
    if (!st) st = be->load(ctx, &bin, src, module, metrics);
    tess_blob_free(&bin);
    return st;
}

/* n values uniform in [-1, 1) as dtype t (f32 or f64), malloc'd. */
static inline void *random_values(gsl_rng *rng, tess_dtype t, int64_t n) {
    void *p = malloc((size_t)n * tess_dtype_size(t));
    for (int64_t i = 0; p && i < n; i++) tess_dtype_store(p, t, i, 2.0 * gsl_rng_uniform(rng) - 1.0);
    return p;
}

#endif
