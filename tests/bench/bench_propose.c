/*
 * bench_propose.c - how long each strategy takes to propose a batch once it
 * has many observations: OBSERVATIONS evaluations (1000 unless given)
 * answered from a recorded space, then the next 10 proposals of 16 timed
 * (median and slowest), by the wall clock and by the processor time the
 * process used (the search is single-threaded: on a shared, loaded host
 * that is its own cost).
 *
 *   bench_propose SPACE.json[.gz] [OBSERVATIONS]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "core/error.h"
#include "core/types.h"
#include "search/replay.h"
#include "search/search.h"

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    char *end = NULL;
    long after = argc == 3 ? strtol(argv[2], &end, 10) : 1000;
    if ((argc != 2 && argc != 3) || (end && (*end || after < 0))) {
        fprintf(stderr, "usage: bench_propose SPACE [OBSERVATIONS]\n");
        return 2;
    }
    tess_replay *rp;
    if (tess_search_register() || tess_replay_open(argv[1], &rp)) {
        fprintf(stderr, "bench_propose: %s\n", tess_errmsg());
        return 1;
    }
    printf("proposing 16 configs after %ld observations of %s (%zu configs)\n", after, argv[1],
           tess_replay_size(rp));
    for (int i = 0; i < tess_strategy_count(); i++) {
        const tess_strategy_ops *ops = tess_strategy_at(i);
        tess_strategy_options o = {.seed = 4, .batch = 16};
        void *state;
        if (ops->create(tess_replay_space(rp), &o, &state)) continue;
        double ms[10], cpu_ms[10];
        int done = 0, timed = 0;
        while (timed < 10) {
            tess_config out[16];
            int n = 0;
            double t0 = tess_now();
            clock_t c0 = clock();
            if (ops->propose(state, out, 16, &n) || n == 0) break;
            if (done >= after) {
                cpu_ms[timed] = 1e3 * (double)(clock() - c0) / CLOCKS_PER_SEC;
                ms[timed++] = 1e3 * (tess_now() - t0);
            }
            for (int k = 0; k < n; k++) {
                tess_outcome status;
                double t;
                if (!tess_replay_lookup(rp, &out[k], &status, &t)) status = TESS_RESULT_INVALID, t = INFINITY;
                ops->observe(state, &out[k], status, status == TESS_RESULT_OK ? t : INFINITY);
            }
            done += n;
        }
        qsort(ms, (size_t)timed, sizeof *ms, cmp);
        qsort(cpu_ms, (size_t)timed, sizeof *cpu_ms, cmp);
        if (timed)
            printf("  %-10s median %6.1f ms, slowest %6.1f ms; processor time median %6.1f ms, slowest %6.1f ms\n",
                   ops->name, ms[timed / 2], ms[timed - 1], cpu_ms[timed / 2], cpu_ms[timed - 1]);
        ops->destroy(state);
    }
    tess_replay_close(rp);
    return 0;
}
