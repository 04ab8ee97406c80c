/*
 * compile_pool.h - a pool of worker processes that compile kernels.
 *
 * NVRTC serializes inside one process, and a compiler can crash: so each
 * worker is a forked process calling the backend's compile op. Jobs are
 * submitted without blocking and collected in completion order; a worker
 * that dies turns its jobs into compile errors and is replaced. With
 * tess_compile_pool_set_batch, when the backend compiles batches and more
 * jobs wait than workers are idle, a worker takes several jobs at once.
 */
#ifndef TESS_COMPILE_POOL_H
#define TESS_COMPILE_POOL_H

#include "backend.h"

#define TESS_COMPILE_BATCH_MAX 4
/* A compile running longer is stopped and becomes a compile error: a search
 * waits for its batch, and one generated kernel can keep a compiler busy for
 * a long time (a star3d25 config without streaming, 32 points per thread:
 * 25 s and 490 MB in ptxas). */
#define TESS_COMPILE_TIMEOUT_S 60.0

typedef struct tess_compile_pool tess_compile_pool;

typedef struct tess_compiled {
    int tag;                /* as given to submit */
    tess_status status;     /* TESS_OK, TESS_ERR_COMPILE, ... */
    tess_blob binary;       /* owned by the caller when status is TESS_OK */
    char *log;              /* compiler output (malloc'd, may be NULL) */
    double compile_ms;      /* a batch's time is shared by its jobs */
    char symbol_suffix[16]; /* add to the source's entry names (see tess_compile_result) */
} tess_compiled;

void tess_compiled_free(tess_compiled *c);
/* Adds a compiled job's symbol suffix to the source's entry names, so the
 * source finds its kernels in the binary. */
void tess_compiled_rename(const tess_compiled *c, tess_kernel_source *src);

/* workers <= 0: one per online core. */
tess_status tess_compile_pool_create(const tess_backend_ops *be, const tess_device *dev,
                                     int workers, tess_compile_pool **out);
void tess_compile_pool_destroy(tess_compile_pool *p);
int tess_compile_pool_workers(const tess_compile_pool *p);
/* Most jobs a worker takes at once (1..TESS_COMPILE_BATCH_MAX; default 1). */
void tess_compile_pool_set_batch(tess_compile_pool *p, int max_jobs);
/* Seconds a job may compile (a batch: that many per job); 0: no limit.
 * Default TESS_COMPILE_TIMEOUT_S. */
void tess_compile_pool_set_timeout(tess_compile_pool *p, double seconds);
/* Queues a job (the source is copied). */
tess_status tess_compile_pool_submit(tess_compile_pool *p, const tess_kernel_source *src, int tag);
/* Jobs submitted and not yet collected. */
int tess_compile_pool_pending(const tess_compile_pool *p);
/* Waits for the next finished job; TESS_ERR_NOTFOUND when none is pending. */
tess_status tess_compile_pool_next(tess_compile_pool *p, tess_compiled *out);

#endif
