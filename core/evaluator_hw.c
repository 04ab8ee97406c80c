/*
 * evaluator_hw.c - the hardware evaluator: emit, compile in a process pool,
 * run, verify and time in an isolated runner, and turn every outcome into a
 * result. A time below the floor the device's ceilings allow for the task
 * (roofline.h) is not credible: the result is invalid, never a best.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compile_pool.h"
#include "error.h"
#include "evaluator.h"
#include "roofline.h"
#include "runner.h"

typedef struct hw_impl {
    const tess_backend_ops *be;
    tess_hw_options opt;
    tess_runner *runner;
    tess_compile_pool *pool;        /* started at the first evaluation */
    double typical_ms;              /* first successful run time: sets the watchdog */
    double best_ms;                 /* best fully timed candidate so far */
    double compile_wait_s, report_s;
} hw_impl;

tess_hw_options tess_hw_options_default(void) {
    return (tess_hw_options){.compile_workers = 0, .min_time_s = 0.01, .max_reps = 100, .race_factor = 1.2,
                             .timeout_s = 0, .seed = 1};
}

/* A kernel may run 50x slower than the first good one before the watchdog
 * kills it; until one has run, allow two minutes. */
static double watchdog_s(const hw_impl *h) {
    if (h->opt.timeout_s > 0) return h->opt.timeout_s;
    if (h->typical_ms <= 0) return 120.0;
    return 5.0 + 4.0 * h->opt.min_time_s + 50.0 * h->typical_ms * 1e-3 * 10;
}

static void finish(tess_evaluator *ev, hw_impl *h, const tess_blob *bin, const tess_kernel_source *src,
                   tess_result *res, tess_status *fatal) {
    double cutoff_ms = h->opt.race_factor > 0 && h->best_ms > 0 ? h->opt.race_factor * h->best_ms : 0;
    tess_status st = tess_runner_measure(h->runner, bin, src, watchdog_s(h), cutoff_ms, res);
    if (st) {
        *fatal = st;
        tess_result_fail(res, TESS_RESULT_RUNTIME_ERROR, "%s", tess_errmsg());
        return;
    }
    char why[sizeof res->message];
    if (res->status == TESS_RESULT_OK &&
        !tess_time_credible(ev->op, &ev->task, &ev->device, res->time_ms, why, sizeof why))
        tess_result_fail(res, TESS_RESULT_INVALID, "%s", why);
    if (res->status == TESS_RESULT_OK) {
        if (h->typical_ms <= 0) h->typical_ms = res->time_ms;
        if (h->best_ms <= 0 || res->time_ms < h->best_ms) h->best_ms = res->time_ms;
        double s = res->time_ms * 1e-3;
        res->gbps = ev->op->bytes(ev->op, &ev->task) / s / 1e9;
        res->gflops = ev->op->flops(ev->op, &ev->task) / s / 1e9;
    }
}

static void compile_failed(tess_result *res, const tess_compiled *c) {
    const char *log = c->log && *c->log ? c->log : tess_status_name(c->status);
    /* The first lines of a compiler log name the first error. */
    tess_result_fail(res, TESS_RESULT_COMPILE_ERROR, "%.480s", log);
}

static void report(hw_impl *h, tess_result_fn on_result, const tess_result *res, void *user) {
    double t0 = tess_now();
    on_result(res, user);
    h->report_s += tess_now() - t0;
}

static tess_status hw_evaluate(tess_evaluator *ev, const tess_config *configs, int n,
                               tess_result_fn on_result, void *user) {
    hw_impl *h = ev->impl;
    tess_status fatal = TESS_OK;
    if (!h->pool) {
        tess_status st = tess_compile_pool_create(h->be, &ev->device, h->opt.compile_workers, &h->pool);
        if (st) return st;
        if (h->opt.compile_batch > 1) tess_compile_pool_set_batch(h->pool, h->opt.compile_batch);
        if (h->opt.compile_timeout_s != 0) tess_compile_pool_set_timeout(h->pool, h->opt.compile_timeout_s);
    }
    tess_result *res = calloc((size_t)n, sizeof *res);
    tess_kernel_source *src = calloc((size_t)n, sizeof *src);
    tess_compiled *done = calloc((size_t)n, sizeof *done);
    if (!res || !src || !done) {
        free(res), free(src), free(done);
        return tess_error(TESS_ERR_NOMEM, "evaluating a batch");
    }
    int submitted = 0;
    for (int i = 0; i < n; i++) {
        tess_result_init(&res[i], &configs[i]);
        const char *why = tess_space_violation(ev->space, &configs[i]);
        tess_status st = TESS_OK;
        if (why) {
            tess_result_fail(&res[i], TESS_RESULT_INVALID, "violates %s", why);
        } else if ((st = tess_op_emit(ev->op, &ev->task, &ev->device, ev->space, &configs[i], &src[i]))) {
            tess_result_fail(&res[i], TESS_RESULT_INVALID, "cannot generate: %s", tess_errmsg());
        } else if ((st = tess_compile_pool_submit(h->pool, &src[i], i))) {
            fatal = st;
            break;
        } else {
            submitted++;
            continue;
        }
        report(h, on_result, &res[i], user);
    }
    /* On the cpu, compiling while timing would disturb the timings: collect
     * every binary first. Elsewhere, run each as soon as it is compiled. */
    int collected = 0;
    int order[n > 0 ? n : 1];
    while (!fatal && collected < submitted) {
        tess_compiled c;
        double t0 = tess_now();
        tess_status st = tess_compile_pool_next(h->pool, &c);
        h->compile_wait_s += tess_now() - t0;
        if (st) {
            fatal = st;
            break;
        }
        done[c.tag] = c;
        tess_compiled_rename(&c, &src[c.tag]);
        order[collected++] = c.tag;
        res[c.tag].compile_ms = c.compile_ms;
        if (h->be->exclusive_timing) continue;
        if (c.status)
            compile_failed(&res[c.tag], &c);
        else
            finish(ev, h, &c.binary, &src[c.tag], &res[c.tag], &fatal);
        report(h, on_result, &res[c.tag], user);
    }
    if (h->be->exclusive_timing)
        for (int k = 0; k < collected && !fatal; k++) {
            int i = order[k];
            if (done[i].status)
                compile_failed(&res[i], &done[i]);
            else
                finish(ev, h, &done[i].binary, &src[i], &res[i], &fatal);
            report(h, on_result, &res[i], user);
        }
    for (int i = 0; i < n; i++) {
        tess_kernel_source_free(&src[i]);
        tess_compiled_free(&done[i]);
    }
    free(res), free(src), free(done);
    return fatal;
}

static void hw_destroy(tess_evaluator *ev) {
    hw_impl *h = ev->impl;
    tess_compile_pool_destroy(h->pool);
    tess_runner_destroy(h->runner);
    free(h);
}

static const tess_evaluator_ops hw_ops = {.evaluate = hw_evaluate, .destroy = hw_destroy};

tess_status tess_evaluator_hw_profile(const tess_evaluator *ev, tess_hw_profile *out) {
    if (ev->ops != &hw_ops) return tess_error(TESS_ERR_ARG, "not a hardware evaluator");
    const hw_impl *h = ev->impl;
    tess_runner_profile_get(h->runner, &out->runner);
    out->compile_wait_s = h->compile_wait_s;
    out->report_s = h->report_s;
    return TESS_OK;
}

tess_status tess_evaluator_create_hw(const tess_op *op, const tess_task *t, const tess_space *space,
                                     const tess_backend_ops *be, const tess_device *dev,
                                     const tess_hw_options *o, tess_evaluator **out) {
    if (!tess_op_supports_backend(op, be->name))
        return tess_error(TESS_ERR_ARG, "operator %s has no code generator for the %s backend", op->name,
                          be->name);
    tess_status st = op->check_task(op, t);
    if (st) return st;
    tess_evaluator *ev = calloc(1, sizeof *ev);
    hw_impl *h = calloc(1, sizeof *h);
    if (!ev || !h) {
        free(ev), free(h);
        return tess_error(TESS_ERR_NOMEM, "evaluator");
    }
    ev->ops = &hw_ops;
    ev->space = space;
    ev->task = *t;
    ev->device = *dev;
    ev->op = op;
    ev->batch = be->default_batch;
    ev->impl = h;
    h->be = be;
    h->opt = o ? *o : tess_hw_options_default();
    tess_runner_options ro = {.min_time_s = h->opt.min_time_s, .min_reps = 5,
                              .max_reps = h->opt.max_reps, .seed = h->opt.seed};
    st = tess_runner_create(op, &ev->task, be, dev, &ro, &h->runner);
    if (st) {
        tess_evaluator_destroy(ev);
        return st;
    }
    *out = ev;
    return TESS_OK;
}

void tess_evaluator_destroy(tess_evaluator *ev) {
    if (!ev) return;
    if (ev->ops && ev->ops->destroy) ev->ops->destroy(ev);
    free(ev);
}
