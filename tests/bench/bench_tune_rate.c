/*
 * bench_tune_rate.c - end-to-end evaluation rate: candidates compiled,
 * verified and timed per second once the compile pool is warm (the first
 * batch is excluded), with a fresh kernel cache, and where the time went.
 *
 *   bench_tune_rate BACKEND OP SHAPE [EVALUATIONS] [COMPILE_BATCH]
 */
#include <stdio.h>
#include <stdlib.h>
#include "core/error.h"
#include "core/evaluator.h"
#include "core/tune.h"
#include "transfer/builtin.h"

typedef struct clock_state {
    int n, first_batch;
    double t_after_first_batch, t_last;
    int ok;
} clock_state;

static void on_result(const tess_result *r, void *user) {
    clock_state *c = user;
    c->n++;
    c->ok += r->status == TESS_RESULT_OK;
    c->t_last = tess_now();
    if (c->n == c->first_batch) c->t_after_first_batch = c->t_last;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: bench_tune_rate BACKEND OP SHAPE [EVALUATIONS] [COMPILE_BATCH]\n");
        return 2;
    }
    int budget = argc > 4 ? atoi(argv[4]) : 200;
    tess_hw_options hw = tess_hw_options_default();
    hw.compile_batch = argc > 5 ? atoi(argv[5]) : 1;
    int64_t shape[4];
    int ndim;
    tess_task task;
    tess_device dev;
    tess_space *space = NULL;
    tess_evaluator *ev;
    const tess_backend_ops *be;
    const tess_op *op;
    if (tess_register_builtin() || !(be = tess_backend_find(argv[1])) || be->probe(&dev) ||
        !(op = tess_op_find(argv[2])) || tess_shape_parse(argv[3], shape, &ndim) ||
        tess_task_init(&task, argv[2], TESS_F32, shape, ndim) ||
        tess_op_space(op, &task, &dev, &space) || tess_evaluator_create_hw(op, &task, space, be, &dev, &hw, &ev)) {
        fprintf(stderr, "bench_tune_rate: %s\n", tess_errmsg());
        return 1;
    }
    clock_state c = {.first_batch = ev->batch};
    tess_tune_loop_options lo = {.strategy = tess_strategy_find("random"), .budget = budget, .seed = 11,
                                 .on_result = on_result, .user = &c};
    tess_tune_outcome out;
    double t0 = tess_now();
    tess_status st = tess_tune_loop(ev, &lo, &out);
    if (st) {
        fprintf(stderr, "bench_tune_rate: %s\n", tess_errmsg());
        return 1;
    }
    int batch = be->compile_batch && hw.compile_batch > 1 ? hw.compile_batch : 1;
    double warm = (c.n - c.first_batch) / (c.t_last - c.t_after_first_batch);
    printf("end-to-end rate, %s %s %s, up to %d kernel%s per compiler program: %d candidates (%d ok) in %.2f s\n",
           argv[1], argv[2], argv[3], batch, batch > 1 ? "s" : "",
           c.n, c.ok, tess_now() - t0);
    printf("  first batch of %d: %.2f s; after it: %.1f candidates/s\n", c.first_batch,
           c.t_after_first_batch - t0, warm);
    tess_hw_profile p;
    if (!tess_evaluator_hw_profile(ev, &p) && p.runner.candidates > 0) {
        double n = p.runner.candidates, a = p.runner.answered > 0 ? p.runner.answered : 1;
        printf("  per candidate (ms): runner %.2f [load %.2f, poison+run+verify %.2f, timing %.2f], "
               "waiting for the compiler %.2f, recording %.2f; runner processes started: %d; "
               "timings stopped early (clearly slower than the best): %d\n",
               1e3 * p.runner.wall_s / n, 1e3 * p.runner.load_s / a, 1e3 * p.runner.check_s / a,
               1e3 * p.runner.time_s / a, 1e3 * p.compile_wait_s / n, 1e3 * p.report_s / n,
               p.runner.child_starts, p.runner.cut);
    }
    tess_evaluator_destroy(ev);
    tess_space_destroy(space);
    return 0;
}
