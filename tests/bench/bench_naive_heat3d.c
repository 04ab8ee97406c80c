/*
 * bench_naive_heat3d.c - the reference a tuned heat3d is compared with: a
 * hand-written naive CUDA kernel (one thread per point, a 3D grid of
 * blocks, no reuse beyond the caches), timed for several block shapes on
 * the same device, best shape reported in GB/s (one read and one write of
 * the grid per sweep).
 *
 *   bench_naive_heat3d [N]        grid N^3, f32 (default 512)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/backend.h"
#include "core/error.h"
#include "core/timing.h"
#include "transfer/builtin.h"

static const char naive_source[] =
    "#define ALPHA 0.1f\n"
    "extern \"C\" __global__ void naive_heat3d(const float *__restrict__ in, float *__restrict__ out) {\n"
    "    int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    int y = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "    int z = blockIdx.z * blockDim.z + threadIdx.z;\n"
    "    if (x >= N || y >= N || z >= N) return;\n"
    "    long i = ((long)z * N + y) * N + x;\n"
    "    if (x == 0 || y == 0 || z == 0 || x == N - 1 || y == N - 1 || z == N - 1) { out[i] = in[i]; return; }\n"
    "    out[i] = in[i] + ALPHA * (in[i - 1] + in[i + 1] + in[i - N] + in[i + N]\n"
    "                              + in[i - (long)N * N] + in[i + (long)N * N] - 6 * in[i]);\n"
    "}\n";

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 512;
    const tess_backend_ops *be;
    tess_device dev;
    void *ctx = NULL, *buf[2] = {NULL, NULL};
    size_t bytes = (size_t)n * n * n * sizeof(float);
    if (tess_register_builtin() || !(be = tess_backend_find("cuda")) || be->probe(&dev) ||
        be->open(&dev, &ctx) || be->alloc(ctx, bytes, &buf[0]) || be->alloc(ctx, bytes, &buf[1])) {
        printf("skipped: %s\n", tess_errmsg());
        return 77;
    }
    float *host = malloc(bytes);
    for (size_t i = 0; i < bytes / sizeof(float); i++) host[i] = (float)((i * 2654435761u) % 1000) / 1000.0f;
    be->upload(ctx, buf[0], host, bytes);
    static const unsigned shapes[][3] = {{32, 4, 1}, {32, 8, 1}, {64, 4, 1}, {128, 2, 1}, {256, 1, 1},
                                         {32, 4, 2}, {32, 2, 4}, {16, 8, 4}, {64, 2, 2}, {128, 4, 1}};
    double best = 0;
    const unsigned *best_shape = shapes[0];
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        char code[2048];
        snprintf(code, sizeof code, "#define N %d\n%s", n, naive_source);
        tess_kernel_source src = {.code = code, .nlaunches = 1};
        strcpy(src.launch[0].entry, "naive_heat3d");
        for (int a = 0; a < 3; a++) {
            src.launch[0].block[a] = shapes[s][a];
            src.launch[0].grid[a] = (unsigned)((n + shapes[s][a] - 1) / shapes[s][a]);
        }
        tess_blob bin = {0};
        char *log = NULL;
        void *module;
        tess_kernel_metrics m;
        tess_timing t;
        tess_timing_options o = {.min_time_s = 0.05, .min_reps = 10, .max_reps = 50};
        void *const *sets[1] = {buf};
        if (be->compile(&dev, &src, &bin, &log) || be->load(ctx, &bin, &src, &module, &m) ||
            tess_time_kernel(be, ctx, module, sets, 1, 2, &o, &t, &m)) {
            fprintf(stderr, "block %ux%ux%u: %s %s\n", shapes[s][0], shapes[s][1], shapes[s][2], tess_errmsg(),
                    log ? log : "");
            free(log);
            tess_blob_free(&bin);
            continue;
        }
        double gbps = 2.0 * (double)bytes / (t.median_ms * 1e-3) / 1e9;
        printf("  naive heat3d %d^3 block %3ux%ux%u: %.4f ms, %.0f GB/s\n", n, shapes[s][0], shapes[s][1],
               shapes[s][2], t.median_ms, gbps);
        if (gbps > best) best = gbps, best_shape = shapes[s];
        be->unload(ctx, module);
        tess_blob_free(&bin);
        free(log);
    }
    printf("NAIVE heat3d %d^3 f32: best %.0f GB/s with block %ux%ux%u\n", n, best, best_shape[0], best_shape[1],
           best_shape[2]);
    free(host);
    be->release(ctx, buf[0]);
    be->release(ctx, buf[1]);
    be->close(ctx);
    return best > 0 ? 0 : 1;
}
