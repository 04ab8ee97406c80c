/*
 * bench_decode_dispatch.c - what one attention_decode call costs beyond its
 * kernels, on a GPU: the task's kernel from tess_dispatch (its best record in
 * the database, else the default; verified on first use), its buffers in
 * device memory (uniform [-1, 1] inputs, every physical page once in the
 * block table), then, as medians over batches of calls:
 *   lookup   tess_dispatch again (a hit in the context's cache)
 *   enqueue  tess_kernel_set_extent(Skv) and tess_kernel_run_on_stream, the
 *            host's share of an asynchronous call
 *   stream   calls queued back to back, per call (the kernels' own time
 *            when the host keeps ahead: the two launches and their gap)
 *   call     tess_kernel_set_extent and tess_kernel_run, which waits: the
 *            latency a synchronous caller sees
 * and the overhead per call, call - stream.
 *
 *   bench_decode_dispatch [--shape BxHxSkvxD] [--page-size P] [--db DB]
 *   (default 8x32x32768x128, pages of 16, $TESSERA_DB or a scratch database)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/tessera.h"
#include "core/types.h"

enum { BATCHES = 21, CALLS = 50, LOOKUPS = 10000 };

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

static uint64_t next(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return *s;
}

/* Uploads `bytes` of bf16 values uniform in [-1, 1] (a host block of them repeated), or for the block
 * table a permutation of its `count` pages. */
static tess_status fill(tess_kernel *k, void *dev, const tess_buffer_info *b, uint64_t *seed) {
    const size_t bytes = b->elem_bytes * (size_t)b->count, block = bytes < (64u << 20) ? bytes : 64u << 20;
    unsigned char *host = malloc(block);
    if (!host) return TESS_ERR_NOMEM;
    if (strcmp(b->dtype, "i32") == 0) {
        int32_t *t = (int32_t *)host;
        for (int64_t i = 0; i < b->count; i++) t[i] = (int32_t)i;
        for (int64_t i = b->count - 1; i > 0; i--) {
            const int64_t j = (int64_t)(next(seed) % (uint64_t)(i + 1));
            const int32_t x = t[i];
            t[i] = t[j], t[j] = x;
        }
    } else {
        uint16_t *h = (uint16_t *)host;
        for (size_t i = 0; i < block / 2; i++) {
            const float f = (float)((double)(next(seed) >> 11) * 0x1p-52 - 1.0);
            uint32_t bits;
            memcpy(&bits, &f, 4);
            h[i] = (uint16_t)(bits >> 16);
        }
    }
    tess_status st = TESS_OK;
    for (size_t at = 0; at < bytes && !st; at += block)
        st = tess_kernel_upload(k, (unsigned char *)dev + at, host, bytes - at < block ? bytes - at : block);
    free(host);
    return st;
}

int main(int argc, char **argv) {
    int64_t shape[4] = {8, 32, 32768, 128};
    int page = 16;
    const char *db = getenv("TESSERA_DB");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--shape") == 0 && i + 1 < argc) {
            long long v[4];
            if (sscanf(argv[++i], "%lldx%lldx%lldx%lld", &v[0], &v[1], &v[2], &v[3]) != 4) {
                fprintf(stderr, "bench_decode_dispatch: error: --shape %s is not BxHxSkvxD\n", argv[i]);
                return 2;
            }
            for (int d = 0; d < 4; d++) shape[d] = v[d];
        } else if (strcmp(argv[i], "--page-size") == 0 && i + 1 < argc) {
            page = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc) {
            db = argv[++i];
        } else {
            fprintf(stderr, "usage: bench_decode_dispatch [--shape BxHxSkvxD] [--page-size P] [--db DB]\n");
            return 2;
        }
    }
    char op[64];
    snprintf(op, sizeof op, "attention_decode:page_size=%d", page);
    tess_context *ctx;
    tess_kernel *k, *again;
    enum { MAXBUF = 16 };
    tess_buffer_info bufs[MAXBUF];
    void *arrays[MAXBUF] = {0};
    int n = 0;
    if (tess_open(&ctx, db) || tess_op_list_buffers(op, shape, 4, "bf16", bufs, MAXBUF, &n) ||
        tess_dispatch(ctx, op, shape, 4, "bf16", "cuda", NULL, &k)) {
        fprintf(stderr, "bench_decode_dispatch: error: %s\n", tess_errmsg());
        return 1;
    }
    uint64_t seed = 0x9e3779b97f4a7c15u;
    tess_status st = TESS_OK;
    for (int i = 0; i < n && !st; i++) {
        st = tess_kernel_alloc(k, bufs[i].elem_bytes * (size_t)bufs[i].count, &arrays[i]);
        if (!st && bufs[i].role == TESS_BUFFER_INPUT) st = fill(k, arrays[i], &bufs[i], &seed);
    }
    double lookup[BATCHES], enqueue[BATCHES], stream[BATCHES], call[BATCHES];
    for (int b = 0; b < BATCHES && !st; b++) {
        double t0 = tess_now();
        for (int i = 0; i < LOOKUPS && !st; i++) {
            st = tess_dispatch(ctx, op, shape, 4, "bf16", "cuda", NULL, &again);
            if (!st && again != k) st = TESS_ERR_RUNTIME;
        }
        lookup[b] = (tess_now() - t0) / LOOKUPS;
        /* queued back to back on the default stream; the waiting run after them drains it */
        double enq = 0;
        t0 = tess_now();
        for (int i = 0; i < CALLS && !st; i++) {
            const double e0 = tess_now();
            st = tess_kernel_set_extent(k, "Skv", shape[2]);
            if (!st) st = tess_kernel_run_on_stream(k, arrays, n, NULL);
            enq += tess_now() - e0;
        }
        if (!st) st = tess_kernel_run(k, arrays, n);
        stream[b] = (tess_now() - t0) / (CALLS + 1);
        enqueue[b] = enq / CALLS;
        t0 = tess_now();
        for (int i = 0; i < CALLS && !st; i++) {
            st = tess_kernel_set_extent(k, "Skv", shape[2]);
            if (!st) st = tess_kernel_run(k, arrays, n);
        }
        call[b] = (tess_now() - t0) / CALLS;
    }
    for (int i = 0; i < n; i++)
        if (arrays[i]) tess_kernel_free(k, arrays[i]);
    if (st) {
        fprintf(stderr, "bench_decode_dispatch: error: %s\n", tess_errmsg());
        tess_close(ctx);
        return 1;
    }
    const double ms = median(stream, BATCHES) * 1e3, us_call = median(call, BATCHES) * 1e6;
    printf("{\"op\": \"%s\", \"shape\": \"%lldx%lldx%lldx%lld\", \"config\": \"%s\", \"origin\": \"%s\", "
           "\"lookup_ns\": %.1f, \"enqueue_us\": %.2f, \"stream_ms\": %.4f, \"call_ms\": %.4f, "
           "\"overhead_us\": %.2f}\n",
           op, (long long)shape[0], (long long)shape[1], (long long)shape[2], (long long)shape[3],
           tess_kernel_config(k), tess_kernel_origin(k), median(lookup, BATCHES) * 1e9,
           median(enqueue, BATCHES) * 1e6, ms, us_call / 1e3, us_call - ms * 1e3);
    tess_close(ctx);
    return 0;
}
