/* host_parallel.c - host loops on plain threads (host_parallel.h). */
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>
#include "host_parallel.h"

typedef struct range_part {
    tess_host_range_fn *fn;
    void *ctx;
    int part;
    int64_t first, end;
} range_part;

static void *run_part(void *arg) {
    range_part *p = arg;
    if (p->first < p->end) p->fn(p->ctx, p->part, p->first, p->end);
    return NULL;
}

int tess_host_parallel(int64_t n, tess_host_range_fn *fn, void *ctx) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int64_t parts = cores < 1 ? 1 : cores > TESS_HOST_MAX_PARTS ? TESS_HOST_MAX_PARTS : cores;
    if (parts > n) parts = n > 0 ? n : 1;
    range_part part[TESS_HOST_MAX_PARTS];
    pthread_t tid[TESS_HOST_MAX_PARTS];
    bool started[TESS_HOST_MAX_PARTS] = {false};
    for (int64_t i = 0; i < parts; i++) {
        part[i] = (range_part){fn, ctx, (int)i, n * i / parts, n * (i + 1) / parts};
        if (i > 0) started[i] = pthread_create(&tid[i], NULL, run_part, &part[i]) == 0;
    }
    run_part(&part[0]);
    for (int64_t i = 1; i < parts; i++) {
        if (started[i]) pthread_join(tid[i], NULL);
        else run_part(&part[i]);   /* no thread: its share is done here */
    }
    return (int)parts;
}

typedef struct fill_job {
    int64_t n, chunk;
    uint64_t seed;
    tess_host_fill_fn *fill;
    void *ctx;
    int failed;   /* a generator could not be allocated */
} fill_job;

static void fill_range(void *arg, int part, int64_t first, int64_t end) {
    (void)part;
    fill_job *j = arg;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    for (int64_t k = first; k < end; k++) {
        gsl_rng_set(rng, (unsigned long)(j->seed * 0x9e3779b97f4a7c15ULL + (uint64_t)k));
        const int64_t at = k * j->chunk, count = j->n - at < j->chunk ? j->n - at : j->chunk;
        j->fill(j->ctx, at, count, rng);
    }
    gsl_rng_free(rng);
}

tess_status tess_host_fill_chunks(int64_t n, int64_t chunk, uint64_t seed, tess_host_fill_fn *fill, void *ctx) {
    if (chunk < 1) chunk = 1;
    fill_job j = {n, chunk, seed, fill, ctx, 0};
    tess_host_parallel((n + chunk - 1) / chunk, fill_range, &j);
    return j.failed ? tess_error(TESS_ERR_NOMEM, "random number generator") : TESS_OK;
}

typedef struct uniform_fill {
    void *host;
    tess_dtype dtype;
} uniform_fill;

static void fill_uniform_chunk(void *arg, int64_t first, int64_t count, gsl_rng *rng) {
    const uniform_fill *f = arg;
    for (int64_t i = first; i < first + count; i++) tess_dtype_store(f->host, f->dtype, i, 2.0 * gsl_rng_uniform(rng) - 1.0);
}

tess_status tess_uniform_fill(void *host, tess_dtype d, int64_t n, uint64_t seed) {
    uniform_fill f = {host, d};
    return tess_host_fill_chunks(n, TESS_FILL_CHUNK, seed, fill_uniform_chunk, &f);
}
