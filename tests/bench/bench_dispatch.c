/*
 * bench_dispatch.c - the cost of tess_dispatch for an exact hit after the
 * first call: batches of calls timed with the monotonic clock, median per
 * call over the batches.
 *
 *   bench_dispatch [DB]       (default: a scratch database in /tmp)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/tessera.h"
#include "core/types.h"

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    char dir[] = "/tmp/tessera-dispatch-bench-XXXXXX", db[300];
    if (argc > 1)
        snprintf(db, sizeof db, "%s", argv[1]);
    else if (mkdtemp(dir))
        snprintf(db, sizeof db, "%s/records.db", dir);
    tess_context *ctx;
    const int64_t shape[3] = {32, 32, 32};
    tess_tune_options opt = tess_tune_options_default();
    opt.budget = 3;
    tess_kernel *k, *again;
    if (tess_open(&ctx, db) || tess_tune(ctx, "heat3d", shape, 3, "f32", "cpu", &opt, NULL) ||
        tess_dispatch(ctx, "heat3d", shape, 3, "f32", "cpu", NULL, &k)) {
        fprintf(stderr, "bench_dispatch: %s\n", tess_errmsg());
        return 1;
    }
    enum { BATCHES = 101, CALLS = 10000 };
    double per_call_ns[BATCHES];
    for (int b = 0; b < BATCHES; b++) {
        double t0 = tess_now();
        for (int i = 0; i < CALLS; i++)
            if (tess_dispatch(ctx, "heat3d", shape, 3, "f32", "cpu", NULL, &again) || again != k) return 1;
        per_call_ns[b] = (tess_now() - t0) / CALLS * 1e9;
    }
    qsort(per_call_ns, BATCHES, sizeof *per_call_ns, cmp);
    printf("tess_dispatch, exact hit after the first call (%s origin, config %s)\n", tess_kernel_origin(k),
           tess_kernel_config(k));
    printf("  %d batches of %d calls: median %.1f ns per call (min %.1f, max %.1f)\n", BATCHES, CALLS,
           per_call_ns[BATCHES / 2], per_call_ns[0], per_call_ns[BATCHES - 1]);
    tess_close(ctx);
    return 0;
}
