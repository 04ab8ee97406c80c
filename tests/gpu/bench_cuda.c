/*
 * bench_cuda.c - a sweep of one operator's CUDA space on the GPU, against
 * the copy bandwidth that the backend's calibration measures in the same
 * run. Drives the cuda backend's ops directly (no records, no strategy):
 *
 *   bench_cuda sweep OP SHAPE DTYPE CONFIGS WORKERS RESULTS.jsonl
 *   bench_cuda compile OP SHAPE DTYPE CONFIGS WORKERS
 *
 * `compile` only measures compile throughput: CONFIGS random configs
 * compiled in WORKERS processes (use an empty TESSERA_CACHE).
 *
 * Round 1 times the template's default and CONFIGS random legal configs;
 * round 2 every Hamming neighbour of the five fastest. Each round compiles
 * in WORKERS forked processes (into the disk cache), then loads, runs once
 * and times each config (median of 20 runs with CUDA events). The five
 * fastest are verified against a host reference computed in double. One
 * JSON line per config goes to RESULTS.jsonl; a table goes to stdout.
 * Built and run by gpu-suite.sh; exit 77 without a CUDA device.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "gpu/cuda_harness.h"
#include "reductions/sum.h"
#include "stencils/heat3d.h"

#define REPS 20
#define TOP 5
#define MAX_NEIGHBORS 256

typedef struct candidate {
    tess_config config;
    char text[256];
    tess_status status;
    double ms;              /* median */
    double spread;          /* (max - min) / median over the repetitions */
    tess_kernel_metrics m;
    double error;           /* verified: worst error relative to the tolerance's scale; NAN if not */
} candidate;

typedef struct bench {
    const tess_backend_ops *be;
    tess_device dev;
    tess_task task;
    tess_space *space;
    bool heat3d;
    void *ctx;
    void *dbufs[3];
    int nbufs;
    int64_t n;              /* elements of the input */
    void *host_in;
    double bytes;           /* compulsory bytes per run */
    FILE *results;
} bench;

static tess_status emit(const bench *b, const tess_config *c, tess_kernel_source *src) {
    return b->heat3d ? tess_op_emit(&tess_op_heat3d, &b->task, &b->dev, b->space, c, src)
                     : tess_op_emit(&tess_op_sum, &b->task, &b->dev, b->space, c, src);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_candidate(const void *a, const void *b) {
    const candidate *x = a, *y = b;
    double tx = x->status ? INFINITY : x->ms, ty = y->status ? INFINITY : y->ms;
    return (tx > ty) - (tx < ty);
}

/* Compiles every candidate into the disk cache in `workers` processes;
 * returns compiles per second. */
static double compile_all(const bench *b, const candidate *c, int n, int workers) {
    double t0 = tess_now();
    fflush(stdout);
    for (int w = 0; w < workers; w++) {
        pid_t pid = fork();
        if (pid != 0) continue;
        for (int i = w; i < n; i += workers) {
            tess_kernel_source src;
            if (emit(b, &c[i].config, &src)) continue;
            tess_blob bin = {0};
            char *log = NULL;
            b->be->compile(&b->dev, &src, &bin, &log);
            free(log);
            tess_blob_free(&bin);
            tess_kernel_source_free(&src);
        }
        _exit(0);
    }
    while (wait(NULL) > 0) {}
    return n / (tess_now() - t0);
}

static void measure(bench *b, candidate *c) {
    tess_kernel_source src;
    void *module = NULL;
    c->error = NAN;
    c->status = emit(b, &c->config, &src);
    if (c->status) return;
    c->status = cuda_build(b->be, &b->dev, b->ctx, &src, &module, &c->m);
    tess_kernel_source_free(&src);
    if (c->status) return;
    double ms[REPS];
    void *const *sets[1] = {b->dbufs};
    c->status = b->be->run(b->ctx, module, b->dbufs, b->nbufs);   /* warm-up */
    if (!c->status) c->status = b->be->time(b->ctx, module, sets, 1, b->nbufs, REPS, 1, ms, &c->m);
    if (!c->status) {
        qsort(ms, REPS, sizeof *ms, cmp_double);
        c->ms = ms[REPS / 2];
        c->spread = (ms[REPS - 1] - ms[0]) / c->ms;
    } else {
        fprintf(stderr, "%s: %s\n", c->text, tess_errmsg());
    }
    b->be->unload(b->ctx, module);
}

/* Runs the candidate on poisoned outputs and compares with ref (heat3d: one
 * value per point; sum: ref[0], with ref[1] the sum of magnitudes). */
static void verify(bench *b, candidate *c, const double *ref) {
    tess_kernel_source src;
    void *module = NULL;
    if (emit(b, &c->config, &src)) return;
    if (cuda_build(b->be, &b->dev, b->ctx, &src, &module, NULL) == TESS_OK) {
        size_t es = tess_dtype_size(b->task.dtype), nout = b->heat3d ? (size_t)b->n : 1;
        void *out = malloc(nout * es);
        for (size_t i = 0; i < nout; i++) tess_dtype_store(out, b->task.dtype, (int64_t)i, NAN);
        if (b->be->upload(b->ctx, b->dbufs[1], out, nout * es) == TESS_OK &&
            b->be->run(b->ctx, module, b->dbufs, b->nbufs) == TESS_OK &&
            b->be->download(b->ctx, out, b->dbufs[1], nout * es) == TESS_OK) {
            double worst = 0;
            if (b->heat3d) {
#pragma omp parallel for reduction(max : worst)
                for (int64_t i = 0; i < b->n; i++) {
                    double e = fabs(tess_dtype_load(out, b->task.dtype, i) - ref[i]) / (1 + fabs(ref[i]));
                    worst = e <= worst ? worst : (isnan(e) ? INFINITY : e);
                }
            } else {
                worst = fabs(tess_dtype_load(out, b->task.dtype, 0) - ref[0]) / (ref[1] + fabs(ref[0]));
                if (isnan(worst)) worst = INFINITY;
            }
            c->error = worst;
        }
        free(out);
        b->be->unload(b->ctx, module);
    }
    tess_kernel_source_free(&src);
}

static double *reference(const bench *b) {
    const tess_dtype t = b->task.dtype;
    if (!b->heat3d) {
        double *r = calloc(2, sizeof *r), s = 0, a = 0;
#pragma omp parallel for reduction(+ : s, a)
        for (int64_t i = 0; i < b->n; i++) {
            double v = tess_dtype_load(b->host_in, t, i);
            s += v;
            a += fabs(v);
        }
        r[0] = s;
        r[1] = a;
        return r;
    }
    const int64_t nz = b->task.shape[0], ny = b->task.shape[1], nx = b->task.shape[2];
    double *r = malloc((size_t)b->n * sizeof *r);
#pragma omp parallel for collapse(2)
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) {
                int64_t i = (z * ny + y) * nx + x;
                double c = tess_dtype_load(b->host_in, t, i);
                if (z == 0 || y == 0 || x == 0 || z == nz - 1 || y == ny - 1 || x == nx - 1) {
                    r[i] = c;
                    continue;
                }
                double s = 0;
                const int64_t step[3] = {1, nx, nx * ny};
                for (int k = 0; k < 3; k++)
                    s += tess_dtype_load(b->host_in, t, i - step[k]) + tess_dtype_load(b->host_in, t, i + step[k]);
                r[i] = c + TESS_HEAT3D_ALPHA * (s - 6.0 * c);
            }
    return r;
}

static void record(const bench *b, const candidate *c, int round, double copy_gbps) {
    double gbps = c->status ? 0 : b->bytes / (c->ms * 1e-3) / 1e9;
    fprintf(b->results,
            "{\"op\":\"%s\",\"dtype\":\"%s\",\"n\":%lld,\"round\":%d,\"config\":\"%s\",\"status\":\"%s\","
            "\"time_ms\":%.6f,\"spread\":%.4f,\"gbps\":%.2f,\"copy_gbps\":%.2f,\"registers\":%d,"
            "\"local_bytes\":%d,\"occupancy\":%.3f,\"power_w\":%.1f}\n",
            b->task.op, tess_dtype_name(b->task.dtype), (long long)b->n, round, c->text,
            c->status ? tess_status_name(c->status) : "ok", c->status ? 0 : c->ms,
            c->status ? 0 : c->spread, gbps, copy_gbps, c->m.registers, c->m.local_bytes, c->m.occupancy,
            c->m.power_w);
}

/* Compiles, measures and records candidates [from, n). */
static void run_round(bench *b, candidate *c, int from, int n, int workers, int round, double copy_gbps) {
    double rate = compile_all(b, c + from, n - from, workers);
    printf("round %d: %d configs compiled at %.0f/s with %d processes\n", round, n - from, rate, workers);
    for (int i = from; i < n; i++) {
        measure(b, &c[i]);
        record(b, &c[i], round, copy_gbps);
    }
}

static bool add_candidate(candidate *c, int *n, tess_config_set *seen, const tess_space *s,
                          const tess_config *cfg) {
    if (!tess_config_set_add(seen, cfg)) return false;
    memset(&c[*n], 0, sizeof c[*n]);
    c[*n].config = *cfg;
    tess_config_format(s, cfg, c[*n].text, sizeof c[*n].text);
    ++*n;
    return true;
}

int main(int argc, char **argv) {
    const bool sweep = argc == 8 && strcmp(argv[1], "sweep") == 0;
    if (!sweep && !(argc == 7 && strcmp(argv[1], "compile") == 0)) {
        fprintf(stderr, "usage: bench_cuda sweep heat3d|sum SHAPE DTYPE CONFIGS WORKERS RESULTS.jsonl\n"
                        "       bench_cuda compile heat3d|sum SHAPE DTYPE CONFIGS WORKERS\n");
        return 2;
    }
    argv++;   /* the operator is argv[1] from here on */
    bench b = {0};
    b.be = cuda_backend_or_skip(&b.dev);
    if (!b.be) return 77;
    int64_t shape[TESS_MAX_DIMS];
    int ndim;
    tess_dtype dtype;
    if (tess_shape_parse(argv[2], shape, &ndim) || tess_dtype_parse(argv[3], &dtype) ||
        tess_task_init(&b.task, argv[1], dtype, shape, ndim)) {
        fprintf(stderr, "bench_cuda: %s\n", tess_errmsg());
        return 2;
    }
    b.heat3d = strcmp(argv[1], "heat3d") == 0;
    const int nrandom = atoi(argv[4]), workers = atoi(argv[5]);
    b.results = sweep ? fopen(argv[6], "a") : NULL;
    if ((sweep && !b.results) || (b.heat3d && ndim != 3) || nrandom < 0 || workers < 1) {
        fprintf(stderr, "bench_cuda: bad arguments\n");
        return 2;
    }
    if (b.heat3d ? tess_op_space(&tess_op_heat3d, &b.task, &b.dev, &b.space)
                 : tess_op_space(&tess_op_sum, &b.task, &b.dev, &b.space)) {
        fprintf(stderr, "bench_cuda: %s\n", tess_errmsg());
        return 1;
    }
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 2026);

    /* Round 1's candidates: the default, then random legal configs. */
    const int cap = nrandom + 1 + TOP * MAX_NEIGHBORS;
    candidate *c = calloc((size_t)cap, sizeof *c);
    tess_config_set *seen = tess_config_set_create();
    int n = 0;
    tess_config cfg;
    tess_space_default(b.space, &cfg);
    add_candidate(c, &n, seen, b.space, &cfg);
    size_t legal = 0;
    tess_space_count(b.space, 10000000, &legal);
    for (int tries = 0; n < nrandom + 1 && (size_t)n < legal && tries < 100 * (nrandom + 1); tries++)
        if (tess_space_sample(b.space, rng, &cfg) == TESS_OK) add_candidate(c, &n, seen, b.space, &cfg);

    if (!sweep) {
        double rate = compile_all(&b, c, n, workers);
        printf("COMPILE %s %s %s: %d configs in %d processes: %.1f compiles/s\n", b.task.op, argv[2],
               argv[3], n, workers, rate);
        free(c);
        tess_config_set_destroy(seen);
        tess_space_destroy(b.space);
        gsl_rng_free(rng);
        return 0;
    }

    /* The compile workers are forked after this process has initialized the
     * driver; that is safe because they only use NVRTC. */
    b.n = tess_shape_elements(shape, ndim);
    const size_t es = tess_dtype_size(dtype);
    b.host_in = random_values(rng, dtype, b.n);
    b.bytes = b.heat3d ? 2.0 * (double)b.n * es : (double)b.n * es;
    tess_status st = b.be->open(&b.dev, &b.ctx);
    double rates[TESS_CEILING_COUNT] = {0};
    if (!st) st = b.be->calibrate(b.ctx, rates);
    const double copy_gbps = rates[TESS_CEILING_COPY], gflops = rates[TESS_CEILING_FMA_F32];
    b.nbufs = b.heat3d ? 2 : 3;
    if (!st) st = b.be->alloc(b.ctx, (size_t)b.n * es, &b.dbufs[0]);
    if (!st) st = b.be->alloc(b.ctx, b.heat3d ? (size_t)b.n * es : es, &b.dbufs[1]);
    if (!st && !b.heat3d) st = b.be->alloc(b.ctx, TESS_SUM_SCRATCH * es, &b.dbufs[2]);
    if (!st) st = b.be->upload(b.ctx, b.dbufs[0], b.host_in, (size_t)b.n * es);
    if (st) {
        fprintf(stderr, "bench_cuda: %s\n", tess_errmsg());
        return 1;
    }
    printf("%s %s %s on %s: %zu legal configs; calibrated copy %.0f GB/s, fp32 FMA %.1f TFLOP/s\n",
           b.task.op, argv[2], argv[3], b.dev.name, legal, copy_gbps, gflops / 1e3);

    run_round(&b, c, 0, n, workers, 1, copy_gbps);
    const double default_ms = c[0].status ? NAN : c[0].ms;
    qsort(c, (size_t)n, sizeof *c, cmp_candidate);
    int round1 = n;
    for (int t = 0; t < TOP && t < round1; t++) {
        tess_config nb[MAX_NEIGHBORS];
        int k = 0;
        tess_space_neighbors(b.space, &c[t].config, TESS_NEIGH_HAMMING, nb, MAX_NEIGHBORS, &k);
        for (int i = 0; i < k && n < cap; i++) add_candidate(c, &n, seen, b.space, &nb[i]);
    }
    run_round(&b, c, round1, n, workers, 2, copy_gbps);
    qsort(c, (size_t)n, sizeof *c, cmp_candidate);

    double *ref = reference(&b);
    const double tol = b.heat3d ? (dtype == TESS_F64 ? 1e-12 : 1e-5) : (dtype == TESS_F64 ? 1e-13 : 2e-6);
    int failed = 0, ok = 0;
    for (int i = 0; i < n; i++) ok += c[i].status == TESS_OK;
    printf("\n%-100s %9s %8s %6s %5s %5s %7s\n", "config (fastest first)", "ms", "GB/s", "%copy", "regs",
           "occ", "error");
    for (int i = 0; i < n && i < 12; i++) {
        if (i < TOP) verify(&b, &c[i], ref);
        bool bad = i < TOP && !(c[i].error <= tol);
        failed += bad;
        double gbps = b.bytes / (c[i].ms * 1e-3) / 1e9;
        printf("%-100s %9.4f %8.0f %5.1f%% %5d %5.2f %7.1e%s\n", c[i].text, c[i].ms, gbps,
               100 * gbps / copy_gbps, c[i].m.registers, c[i].m.occupancy, c[i].error, bad ? " WRONG" : "");
    }
    double best_gbps = b.bytes / (c[0].ms * 1e-3) / 1e9;
    printf("\nSUMMARY %s %s %s: copy %.0f GB/s | best %.0f GB/s = %.1f%% of copy (%.4f ms) | default %.4f ms"
           " | %d/%d configs ran | power %.0f W | best verified: %s\n",
           b.task.op, argv[2], argv[3], copy_gbps, best_gbps, 100 * best_gbps / copy_gbps, c[0].ms,
           default_ms, ok, n, c[0].m.power_w, failed ? "NO" : "yes");
    fclose(b.results);
    free(ref);
    for (int i = 0; i < b.nbufs; i++) b.be->release(b.ctx, b.dbufs[i]);
    b.be->close(b.ctx);
    free(b.host_in);
    free(c);
    tess_config_set_destroy(seen);
    tess_space_destroy(b.space);
    gsl_rng_free(rng);
    return failed ? 1 : 0;
}
