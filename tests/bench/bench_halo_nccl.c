/* bench_halo_nccl.c - the time of one halo exchange between two GPUs through
 * the NCCL transport, as a two-slab split of a grid of NY x NX planes makes
 * it each application: DEPTH planes each way, in CHUNKS messages. Checks the
 * delivered values once, then prints one line per setting: the median of
 * REPS exchanges (after warm-up) and the bandwidth both ways together.
 *
 *   bench_halo_nccl NY NX DEPTHS CHUNKS [REPS]   (DEPTHS, CHUNKS: "1,4", "1,2,4")
 *
 * Exit 77 with fewer than two GPUs or without NCCL. */
#include <time.h>
#include "gpu/nccl_pair.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Fills GPU r's send buffer with r + 1 and checks that the other GPU's
 * receive buffer holds it after one exchange. */
static int check_delivery(nccl_pair *p, int chunks) {
    size_t n = p->bytes / sizeof(float);
    float *h = malloc(p->bytes);
    int bad = !h;
    for (int r = 0; r < 2 && !bad; r++) {
        for (size_t i = 0; i < n; i++) h[i] = (float)(r + 1);
        p->drv->cuCtxSetCurrent(p->ctx[r]);
        bad = p->drv->cuMemcpyHtoDAsync(p->send[r], h, p->bytes, p->stream[r]) ||
              p->drv->cuStreamSynchronize(p->stream[r]);
    }
    if (!bad) bad = nccl_pair_exchange(p, chunks) != TESS_OK;
    for (int r = 0; r < 2 && !bad; r++) {
        p->drv->cuCtxSetCurrent(p->ctx[r]);
        bad = p->drv->cuMemcpyDtoHAsync(h, p->recv[r], p->bytes, p->stream[r]) ||
              p->drv->cuStreamSynchronize(p->stream[r]);
        for (size_t i = 0; i < n && !bad; i++) bad = h[i] != (float)(2 - r);
    }
    free(h);
    if (bad) fprintf(stderr, "bench_halo_nccl: halos arrived wrong (%d chunks): %s\n", chunks, tess_errmsg());
    return bad;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: bench_halo_nccl NY NX DEPTHS CHUNKS [REPS]\n");
        return 2;
    }
    long ny = atol(argv[1]), nx = atol(argv[2]), reps = argc > 5 ? atol(argv[5]) : 50;
    if (ny < 1 || nx < 1 || reps < 1 || reps > 10000) {
        fprintf(stderr, "bench_halo_nccl: bad NY, NX or REPS\n");
        return 2;
    }
    int rc = 0;
    char depths[256];
    snprintf(depths, sizeof depths, "%s", argv[3]);
    for (char *d = strtok(depths, ","); d && !rc; d = strtok(NULL, ",")) {
        long depth = atol(d);
        if (depth < 1 || depth > 64) {
            fprintf(stderr, "bench_halo_nccl: depth '%s' is not 1 to 64\n", d);
            return 2;
        }
        nccl_pair p;
        rc = nccl_pair_open(&p, (size_t)depth * (size_t)ny * (size_t)nx * sizeof(float));
        char chunks[256];
        snprintf(chunks, sizeof chunks, "%s", argv[4]);
        char *save = NULL;
        for (char *c = rc ? NULL : strtok_r(chunks, ",", &save); c && !rc; c = strtok_r(NULL, ",", &save)) {
            int k = atoi(c);
            if (k < 1 || k > 64) {
                fprintf(stderr, "bench_halo_nccl: chunks '%s' is not 1 to 64\n", c);
                rc = 2;
                break;
            }
            if ((rc = check_delivery(&p, k))) break;
            double *t = malloc((size_t)reps * sizeof *t);
            for (int w = 0; w < 5 && !rc; w++) rc = nccl_pair_exchange(&p, k) != TESS_OK;
            for (long i = 0; i < reps && !rc && t; i++) {
                double t0 = now_s();
                rc = nccl_pair_exchange(&p, k) != TESS_OK;
                t[i] = now_s() - t0;
            }
            if (!rc && t) {
                qsort(t, (size_t)reps, sizeof *t, cmp_double);
                double med = t[reps / 2];
                printf("halo %ldx%ld depth %ld chunks %d bytes %zu: median %.1f us, %.1f GB/s both ways\n", ny, nx,
                       depth, k, p.bytes, 1e6 * med, 2.0 * (double)p.bytes / med / 1e9);
            }
            free(t);
        }
        nccl_pair_close(&p);
    }
    return rc;
}
