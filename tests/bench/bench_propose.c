/*
 * bench_propose.c - how long each strategy takes to propose a batch once it
 * has many observations: 500 evaluations answered from a recorded space,
 * then the next 10 proposals of 16 timed (median and slowest).
 *
 *   bench_propose SPACE.json[.gz]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "core/error.h"
#include "core/types.h"
#include "search/replay.h"
#include "search/search.h"

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    tess_replay *rp;
    if (argc != 2 || tess_search_register() || tess_replay_open(argv[1], &rp)) {
        fprintf(stderr, argc != 2 ? "usage: bench_propose SPACE\n" : "bench_propose: %s\n", tess_errmsg());
        return argc != 2 ? 2 : 1;
    }
    printf("proposing 16 configs after 500 observations of %s (%zu configs)\n", argv[1], tess_replay_size(rp));
    for (int i = 0; i < tess_strategy_count(); i++) {
        const tess_strategy_ops *ops = tess_strategy_at(i);
        tess_strategy_options o = {.seed = 4, .batch = 16};
        void *state;
        if (ops->create(tess_replay_space(rp), &o, &state)) continue;
        double ms[10];
        int done = 0, timed = 0;
        while (timed < 10) {
            tess_config out[16];
            int n = 0;
            double t0 = tess_now();
            if (ops->propose(state, out, 16, &n) || n == 0) break;
            if (done >= 500) ms[timed++] = 1e3 * (tess_now() - t0);
            for (int k = 0; k < n; k++) {
                tess_outcome status;
                double t;
                if (!tess_replay_lookup(rp, &out[k], &status, &t)) status = TESS_RESULT_INVALID, t = INFINITY;
                ops->observe(state, &out[k], status, status == TESS_RESULT_OK ? t : INFINITY);
            }
            done += n;
        }
        qsort(ms, (size_t)timed, sizeof *ms, cmp);
        if (timed)
            printf("  %-10s median %6.1f ms, slowest %6.1f ms\n", ops->name, ms[timed / 2], ms[timed - 1]);
        ops->destroy(state);
    }
    tess_replay_close(rp);
    return 0;
}
