/* test_evaluator.c - the hardware evaluator on the cpu backend, with planted
 * bad kernels: each must end as a result with the right status, and the
 * evaluator must go on after each. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "core/backend_cpu.h"
#include "core/error.h"
#include "core/evaluator.h"
#include "core/tune.h"
#include "search/search.h"

/* A planted operator: out[i] = 2 * in[i], with a `mode` parameter choosing
 * a correct kernel or one of the failures. */
static const char *const modes[] = {"good", "nocompile", "wrong", "partial", "crash", "hang"};

static tess_status planted_check(const tess_task *t) { (void)t; return TESS_OK; }

static tess_status planted_space(const tess_task *t, const tess_device *d, tess_space **out) {
    (void)t, (void)d;
    *out = tess_space_create();
    const double unroll[] = {1, 2};
    tess_status st = tess_space_add_labels(*out, "mode", 6, modes, 0);
    if (!st) st = tess_space_add(*out, "unroll", 2, unroll, 0);
    return st;
}

static tess_status planted_buffers(const tess_task *t, tess_buffer_spec *s, int *n) {
    s[0] = (tess_buffer_spec){"in", TESS_BUF_IN, TESS_F32, t->shape[0]};
    s[1] = (tess_buffer_spec){"out", TESS_BUF_OUT, TESS_F32, t->shape[0]};
    *n = 2;
    return TESS_OK;
}

static tess_status planted_emit(const tess_task *t, const tess_device *d, const tess_space *s,
                                const tess_config *c, tess_kernel_source *out) {
    (void)d;
    int mode = (int)tess_config_get(s, c, "mode");
    int unroll = (int)tess_config_get(s, c, "unroll");
    const char *body[] = {
        "for (long i = 0; i < N; i++) o[i] = 2 * x[i];",
        "for (long i = 0; i < N; i++) o[i] = 2 * x[i]   /* missing semicolon */",
        "for (long i = 0; i < N; i++) o[i] = 2 * x[i] + (i == 7 ? 1.0f : 0.0f);",
        "for (long i = 0; i < N - 3; i++) o[i] = 2 * x[i];",
        "volatile float *p = 0; p[1 << 20] = 1; (void)x; (void)o;",
        "volatile int spin = 1; while (spin) {} (void)x; (void)o;",
    };
    char code[1024];
    snprintf(code, sizeof code,
             "#define N %lld\n/* unroll %d */\nvoid planted(void *const *b) {\n"
             "    const float *x = b[0]; float *o = b[1];\n    %s\n}\n",
             (long long)t->shape[0], unroll, body[mode]);
    memset(out, 0, sizeof *out);
    out->code = strdup(code);
    out->nlaunches = 1;
    strcpy(out->launch[0].entry, "planted");
    return TESS_OK;
}

static tess_status planted_reference(const tess_task *t, void *const *b) {
    const float *x = b[0];
    float *o = b[1];
    for (int64_t i = 0; i < t->shape[0]; i++) o[i] = 2 * x[i];
    return TESS_OK;
}

static double planted_count(const tess_task *t) { return (double)t->shape[0]; }
static double planted_tol(const tess_task *t) { (void)t; return 1e-6; }
static const char *const cpu_only[] = {"cpu", NULL};

static const tess_op planted = {
    .name = "planted", .family = "tests", .summary = "planted kernels", .default_shape = "4096",
    .backends = cpu_only, .check_task = planted_check, .space = planted_space,
    .buffers = planted_buffers, .emit = planted_emit, .reference = planted_reference,
    .flops = planted_count, .bytes = planted_count, .tolerance = planted_tol,
};

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

int main(void) {
    CHECK_OK(tess_cpu_register());
    CHECK_OK(tess_search_register_builtin());
    const tess_backend_ops *cpu = tess_backend_find("cpu");
    tess_device dev;
    CHECK_OK(cpu->probe(&dev));
    tess_task task;
    int64_t shape[] = {4096};
    CHECK_OK(tess_task_init(&task, "planted", TESS_F32, shape, 1));
    tess_hw_options o = tess_hw_options_default();
    o.timeout_s = 3;
    o.min_time_s = 0.001;
    tess_evaluator *ev = NULL;
    CHECK_OK(tess_evaluator_create_hw(&planted, &task, cpu, &dev, &o, &ev));
    if (!ev) return check_finish("test_evaluator");

    /* every mode once, in one batch */
    tess_config configs[6];
    for (int m = 0; m < 6; m++) {
        char text[64];
        snprintf(text, sizeof text, "mode=%s,unroll=1", modes[m]);
        CHECK_OK(tess_config_parse(ev->space, text, &configs[m]));
    }
    seen s = {0};
    CHECK_OK(ev->ops->evaluate(ev, configs, 6, collect, &s));
    CHECK(s.n == 6);
    const tess_outcome expect[] = {TESS_RESULT_OK, TESS_RESULT_COMPILE_ERROR, TESS_RESULT_WRONG_RESULT,
                                   TESS_RESULT_WRONG_RESULT, TESS_RESULT_RUNTIME_ERROR, TESS_RESULT_TIMEOUT};
    for (int m = 0; m < 6; m++) {
        const tess_result *r = find_mode(&s, ev->space, m);
        CHECK_MSG(r && r->status == expect[m], "mode %s: got %s (%s)", modes[m],
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
    if (crash) CHECK_MSG(strstr(crash->message, "crashed the runner") != NULL, "%s", crash->message);

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
    o.timeout_s = 1;
    CHECK_OK(tess_tune_loop(ev, &lo, &out));
    CHECK_MSG(out.evaluations == 12, "evaluations %d", out.evaluations);
    CHECK(out.found && (int)tess_config_get(ev->space, &out.best.config, "mode") == 0);
    CHECK(out.counts[TESS_RESULT_OK] == 2 && out.counts[TESS_RESULT_TIMEOUT] == 2);
    CHECK_MSG(strstr(out.stop_reason, "exhausted") != NULL, "%s", out.stop_reason);
    tess_evaluator_destroy(ev);
    return check_finish("test_evaluator");
}
