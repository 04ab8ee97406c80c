/* planted_suite.h - the evaluator and the search loop on planted kernels:
 * each failure must end as a result with its status, and the evaluator must
 * go on after each. Shared by the cpu unit test and the GPU test. */
#ifndef TESS_TEST_PLANTED_SUITE_H
#define TESS_TEST_PLANTED_SUITE_H

#include <math.h>
#include "check.h"
#include "core/error.h"
#include "core/evaluator.h"
#include "core/tune.h"
#include "planted.h"
#include "search/search.h"

typedef struct seen {
    tess_result r[16];
    int n;
} seen;

static void collect(const tess_result *r, void *user) {
    seen *s = user;
    if (s->n < 16) s->r[s->n++] = *r;
}

static const tess_result *find_mode(const seen *s, const tess_space *sp, int mode) {
    for (int i = 0; i < s->n; i++)
        if ((int)tess_config_get(sp, &s->r[i].config, "mode") == mode) return &s->r[i];
    return NULL;
}

/* Runs every planted mode through the evaluator and the search loop on a
 * backend whose device is already probed. */
static int planted_suite(const tess_backend_ops *be, const tess_device *dev, const char *name) {
    CHECK_OK(tess_search_register());
    tess_task task;
    int64_t shape[] = {1 << 20};
    CHECK_OK(tess_task_init(&task, "planted", TESS_F32, shape, 1));
    tess_hw_options o = tess_hw_options_default();
    o.timeout_s = 5;   /* covers starting the runner (a GPU context) */
    o.min_time_s = 0.001;
    tess_space *space = NULL;
    CHECK_OK(tess_op_space(&planted, &task, dev, &space));
    tess_evaluator *ev = NULL;
    if (space) CHECK_OK(tess_evaluator_create_hw(&planted, &task, space, be, dev, &o, &ev));
    if (!ev) {
        tess_space_destroy(space);
        return check_finish(name);
    }

    /* every mode once, in one batch */
    tess_config configs[6];
    for (int m = 0; m < 6; m++) {
        char text[64];
        snprintf(text, sizeof text, "mode=%s,unroll=1", planted_modes[m]);
        CHECK_OK(tess_config_parse(ev->space, text, &configs[m]));
    }
    seen s = {0};
    CHECK_OK(ev->ops->evaluate(ev, configs, 6, collect, &s));
    CHECK(s.n == 6);
    const tess_outcome expect[] = {TESS_RESULT_OK, TESS_RESULT_COMPILE_ERROR, TESS_RESULT_WRONG_RESULT,
                                   TESS_RESULT_WRONG_RESULT, TESS_RESULT_RUNTIME_ERROR, TESS_RESULT_TIMEOUT};
    for (int m = 0; m < 6; m++) {
        const tess_result *r = find_mode(&s, ev->space, m);
        CHECK_MSG(r && r->status == expect[m], "mode %s: got %s (%s)", planted_modes[m],
                  r ? tess_outcome_name(r->status) : "nothing", r ? r->message : "");
        if (r && m > 0) CHECK(isinf(r->time_ms) && r->message[0]);
    }
    const tess_result *good = find_mode(&s, ev->space, 0);
    if (good) CHECK(good->time_ms > 0 && good->min_ms <= good->time_ms && good->time_ms <= good->max_ms &&
                    good->reps >= 5 && good->gbps > 0);
    const tess_result *partial = find_mode(&s, ev->space, 3);
    if (partial) CHECK_MSG(strstr(partial->message, "not written") != NULL, "%s", partial->message);
    const tess_result *wrong = find_mode(&s, ev->space, 2);
    if (wrong) CHECK_MSG(strstr(wrong->message, "index 7") != NULL, "%s", wrong->message);
    const tess_result *crash = find_mode(&s, ev->space, 4);
    /* on the cpu the runner process dies; on a GPU the driver reports the fault */
    if (crash)
        CHECK_MSG(strstr(crash->message, "crashed the runner") || strstr(crash->message, "ILLEGAL"), "%s",
                  crash->message);

    /* the evaluator still works after a crash and a hang */
    seen again = {0};
    CHECK_OK(ev->ops->evaluate(ev, &configs[0], 1, collect, &again));
    CHECK(again.n == 1 && again.r[0].status == TESS_RESULT_OK);

    /* the search loop: exhaustive over all 12 configs; the default first */
    tess_config dflt;
    tess_space_default(ev->space, &dflt);
    tess_tune_loop_options lo = {.strategy = tess_strategy_find("exhaustive"), .budget = 100,
                                 .seed = 3, .seeds = &dflt, .nseeds = 1};
    tess_tune_outcome out;
    CHECK_OK(tess_tune_loop(ev, &lo, &out));
    CHECK_MSG(out.evaluations == 12, "evaluations %d", out.evaluations);
    CHECK(out.found && (int)tess_config_get(ev->space, &out.best.config, "mode") == 0);
    CHECK(out.counts[TESS_RESULT_OK] == 2 && out.counts[TESS_RESULT_TIMEOUT] == 2);
    CHECK_MSG(strstr(out.stop_reason, "exhausted") != NULL, "%s", out.stop_reason);

    /* more seed configs than a batch holds: all evaluated first, in order */
    tess_config three[3];
    CHECK_OK(tess_config_parse(ev->space, "mode=good,unroll=2", &three[0]));
    CHECK_OK(tess_config_parse(ev->space, "mode=wrong,unroll=2", &three[1]));
    CHECK_OK(tess_config_parse(ev->space, "mode=good,unroll=1", &three[2]));
    seen seeded = {0};
    tess_tune_loop_options lo3 = {.strategy = tess_strategy_find("random"), .budget = 3, .batch = 1,
                                  .seeds = three, .nseeds = 3, .on_result = collect, .user = &seeded};
    CHECK_OK(tess_tune_loop(ev, &lo3, &out));
    CHECK(out.evaluations == 3 && seeded.n == 3);
    for (int i = 0; i < seeded.n && i < 3; i++) CHECK(tess_config_equal(&seeded.r[i].config, &three[i]));
    tess_evaluator_destroy(ev);
    tess_space_destroy(space);
    return check_finish(name);
}

#endif
