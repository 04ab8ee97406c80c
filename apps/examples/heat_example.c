/*
 * heat_example.c - a simulation code using tessera through its public API:
 * it tunes the 3D heat stencil for its grid with a small budget, then runs
 * 50 time steps with the tuned kernel on its own arrays (ping-pong) and
 * reports the heat left in the domain.
 *
 *   heat_example [N]      grid of N^3 points (default 96)
 *
 * Build against an installed tessera with
 *   cc heat_example.c $(pkg-config --cflags --libs tessera) -lm
 * or find_package(tessera) and target_link_libraries(app tessera::tessera).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <tessera.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 96;
    if (n < 3 || n > 1024) {
        fprintf(stderr, "usage: heat_example [N]  (3 <= N <= 1024)\n");
        return 2;
    }
    const int64_t shape[3] = {n, n, n};
    size_t points = (size_t)n * n * n;
    float *a = malloc(points * sizeof *a), *b = malloc(points * sizeof *b);
    if (!a || !b) {
        fprintf(stderr, "heat_example: out of memory\n");
        return 1;
    }
    /* A hot cube in the middle of a cold domain. */
    for (long z = 0; z < n; z++)
        for (long y = 0; y < n; y++)
            for (long x = 0; x < n; x++) {
                bool hot = labs(z - n / 2) < n / 8 && labs(y - n / 2) < n / 8 && labs(x - n / 2) < n / 8;
                a[(z * n + y) * n + x] = hot ? 1.0f : 0.0f;
            }

    tess_context *ctx;
    if (tess_open(&ctx, NULL) != TESS_OK) {
        fprintf(stderr, "heat_example: %s\n", tess_errmsg());
        return 1;
    }
    tess_tune_options opt = tess_tune_options_default();
    opt.budget = 12;
    tess_tune_report report;
    tess_kernel *k = NULL;
    if (tess_tune(ctx, "heat3d", shape, 3, "f32", "cpu", &opt, &report) != TESS_OK ||
        tess_kernel_get(ctx, "heat3d", shape, 3, "f32", "cpu", &k) != TESS_OK) {
        fprintf(stderr, "heat_example: %s\n", tess_errmsg());
        tess_close(ctx);
        return 1;
    }
    printf("tuned in %d evaluations: %s (%.3f ms, default %.3f ms)\n", report.evaluations,
           report.best_config, report.best_ms, report.default_ms);
    printf("running %s config: %s\n", tess_kernel_origin(k), tess_kernel_config(k));

    double before = 0;
    for (size_t i = 0; i < points; i++) before += a[i];
    for (int step = 0; step < 50; step++) {
        void *arrays[2] = {a, b};
        if (tess_kernel_run(k, arrays, 2) != TESS_OK) {
            fprintf(stderr, "heat_example: %s\n", tess_errmsg());
            return 1;
        }
        float *t = a;
        a = b;
        b = t;
    }
    double after = 0, peak = 0;
    for (size_t i = 0; i < points; i++) {
        after += a[i];
        peak = fmax(peak, a[i]);
    }
    /* Diffusion far from the boundary conserves heat and lowers the peak. */
    printf("heat before %.4f, after 50 steps %.4f; peak %.4f\n", before, after, peak);
    tess_kernel_destroy(k);
    tess_close(ctx);
    free(a);
    free(b);
    return fabs(after - before) < 1e-3 * before && peak < 1.0 ? 0 : 1;
}
