/* test_search_replay.c - the replay evaluator (Kernel Tuner cache, T4 and
 * JSON-lines recordings) and the search-efficiency benchmark. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "core/error.h"
#include "search/bench.h"
#include "search/replay.h"
#include "search/search.h"


static int results_seen;
static tess_outcome last_status;
static double last_time;

static void keep_result(const tess_result *r, void *user) {
    (void)user;
    results_seen++;
    last_status = r->status;
    last_time = r->time_ms;
}

static char *write_temp(const char *text) {
    static char path[64];
    snprintf(path, sizeof path, "/tmp/tess_replay_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

/* tessera's own record export: one object per line, failures included,
 * another task's lines skipped, a config measured twice keeps its fastest. */
static void test_export_lines(void) {
    const char *text =
        "{\"task\": \"heat3d:f32:64x64x64\", \"device\": {\"key\": \"cpu:x\"}, \"params\": {\"tile_y\": 4, \"order\": \"zyx\"}, \"status\": \"ok\", \"time_ms\": 2.5}\n"
        "{\"task\": \"heat3d:f32:64x64x64\", \"device\": {\"key\": \"cpu:x\"}, \"params\": {\"tile_y\": 8, \"order\": \"zyx\"}, \"status\": \"ok\", \"time_ms\": 1.5}\n"
        "\n"
        "{\"task\": \"heat3d:f32:64x64x64\", \"device\": {\"key\": \"cpu:x\"}, \"params\": {\"tile_y\": 8, \"order\": \"xyz\"}, \"status\": \"compile_error\", \"time_ms\": null}\n"
        "{\"task\": \"sum:f32:1000\", \"device\": {\"key\": \"cpu:x\"}, \"params\": {\"tile_y\": 2, \"order\": \"xyz\"}, \"status\": \"ok\", \"time_ms\": 0.1}\n"
        "{\"task\": \"heat3d:f32:64x64x64\", \"device\": {\"key\": \"cpu:x\"}, \"params\": {\"tile_y\": 4, \"order\": \"zyx\"}, \"status\": \"ok\", \"time_ms\": 2.0}\n";
    char *path = write_temp(text);
    CHECK(path != NULL);
    if (!path) return;
    tess_replay *rp = NULL;
    tess_evaluator *ev = NULL;
    CHECK_OK(tess_replay_open(path, &rp));
    unlink(path);
    if (rp) CHECK_OK(tess_evaluator_create_replay(rp, &ev));
    if (!ev) {
        tess_replay_close(rp);
        return;
    }
    const tess_space *s = tess_replay_space(rp);
    CHECK(ev->space == s);
    CHECK(tess_replay_size(rp) == 3);
    CHECK(tess_space_nparams(s) == 2);
    CHECK(ev->op == NULL && strcmp(ev->device.backend, "replay") == 0);
    CHECK(strcmp(tess_replay_task(rp)->op, "heat3d") == 0 && strcmp(ev->task.op, "heat3d") == 0);
    CHECK_NEAR(tess_replay_best_time(rp), 1.5, 1e-12);
    tess_config c;
    tess_outcome status;
    double t;
    CHECK_OK(tess_config_parse(s, "tile_y=4,order=zyx", &c));
    CHECK(tess_replay_lookup(rp, &c, &status, &t) && status == TESS_RESULT_OK);
    CHECK_NEAR(t, 2.0, 1e-12);
    CHECK_OK(tess_config_parse(s, "tile_y=8,order=xyz", &c));
    results_seen = 0;
    CHECK_OK(ev->ops->evaluate(ev, &c, 1, keep_result, NULL));
    CHECK(results_seen == 1 && last_status == TESS_RESULT_COMPILE_ERROR && isinf(last_time));
    /* tile_y=4,order=xyz was never recorded: not a legal point */
    CHECK(tess_config_parse(s, "tile_y=4,order=xyz", &c) != TESS_OK);
    CHECK(!tess_replay_default(rp, &c));   /* no line is marked as the default */
    tess_evaluator_destroy(ev);
    tess_replay_close(rp);

    path = write_temp("{\"task\": \"x\", \"params\": {\"a\": 1}, \"status\": \"exploded\"}\n");
    CHECK(tess_replay_open(path, &rp) == TESS_ERR_FORMAT && !rp);
    CHECK(strstr(tess_errmsg(), "exploded") != NULL);
    unlink(path);
    path = write_temp("not json\n");
    CHECK(tess_replay_open(path, &rp) == TESS_ERR_FORMAT);
    unlink(path);
    CHECK(tess_replay_open("/nonexistent/space.json", &rp) == TESS_ERR_IO);
}

static void test_bench_math(void) {
    /* one good config among N: (N+1)/2; all good: 1 */
    CHECK_NEAR(tess_bench_random_expectation(99, 1), 50, 1e-12);
    CHECK_NEAR(tess_bench_random_expectation(10, 10), 1, 1e-12);
    CHECK_NEAR(tess_bench_random_expectation(4092, 33), 4093.0 / 34.0, 1e-12);
    /* the median: one of 3 uniform, T in {1,2,3} -> 2; two of 5: P(T=1) = 0.4,
     * P(T<=2) = 0.4 + 0.6*0.5 = 0.7 -> 2; all good -> 1; none -> never */
    CHECK_NEAR(tess_bench_random_median(3, 1), 2, 0);
    CHECK_NEAR(tess_bench_random_median(5, 2), 2, 0);
    CHECK_NEAR(tess_bench_random_median(10, 10), 1, 0);
    CHECK(isinf(tess_bench_random_median(10, 0)));
    /* one of 99: T uniform on 1..99, median 50; the recorded spaces' counts,
     * the smallest t with 2 C(N-t, K) <= C(N, K) in exact integers */
    CHECK_NEAR(tess_bench_random_median(99, 1), 50, 0);
    CHECK_NEAR(tess_bench_random_median(4092, 33), 85, 0);     /* pnpoly */
    CHECK_NEAR(tess_bench_random_median(17956, 6), 1959, 0);   /* gemm */
    CHECK_NEAR(tess_bench_random_median(11130, 1449), 5, 0);   /* dedispersion A4000 */
    CHECK(tess_bench_random_median(4092, 33) < tess_bench_random_expectation(4092, 33));
}

/* A strategy that breaks the rules is caught by the benchmark's run loop. */
static tess_status twice_create(const tess_space *s, const tess_strategy_options *o, void **state) {
    (void)o;
    *state = (void *)s;
    return TESS_OK;
}
static tess_status twice_propose(void *state, tess_config *out, int max, int *n) {
    for (int i = 0; i < max; i++) tess_space_default(state, &out[i]);
    *n = max;
    return TESS_OK;
}
static tess_status twice_observe(void *state, const tess_config *c, tess_outcome st, double t) {
    (void)state, (void)c, (void)st, (void)t;
    return TESS_OK;
}
static void twice_destroy(void *state) { (void)state; }

static void test_rule_breaker(void) {
    const char *text = "{\"params\": {\"a\": 1}, \"status\": \"ok\", \"time_ms\": 1}\n"
                       "{\"params\": {\"a\": 2}, \"status\": \"ok\", \"time_ms\": 2}\n";
    char *path = write_temp(text);
    tess_bench_space bs;
    CHECK_OK(tess_bench_space_open(path, &bs));
    unlink(path);
    if (!bs.ev) return;
    const tess_strategy_ops twice = {"twice", "proposes the default config every time", twice_create,
                                     twice_propose, twice_observe, twice_destroy};
    double best[4];
    CHECK(tess_bench_run(&twice, &bs, 1, 4, 2, best, NULL) == TESS_ERR_INTERNAL);
    CHECK_MSG(strstr(tess_errmsg(), "'twice' proposed a config twice") != NULL, "%s", tess_errmsg());
    CHECK(tess_bench_run(&tess_search_exhaustive, &bs, 1, 4, 2, best, NULL) == TESS_OK);
    CHECK_NEAR(best[0], 1, 0);
    CHECK_NEAR(best[3], 1, 0);   /* exhausted after two: the trace repeats the last */
    tess_bench_space_close(&bs);
}

/* A record export names the template's default; the benchmark evaluates it
 * first, as tuning does, and the strategy never proposes it again. */
static void test_recorded_default(void) {
    const char *text =
        "{\"task\": \"t\", \"params\": {\"a\": 1, \"b\": 4}, \"status\": \"ok\", \"time_ms\": 1, \"strategy\": \"random\"}\n"
        "{\"task\": \"t\", \"params\": {\"a\": 2, \"b\": 8}, \"status\": \"ok\", \"time_ms\": 3, \"strategy\": \"default\"}\n"
        "{\"task\": \"t\", \"params\": {\"a\": 2, \"b\": 4}, \"status\": \"ok\", \"time_ms\": 2, \"strategy\": \"random\"}\n";
    char *path = write_temp(text);
    tess_bench_space bs;
    CHECK_OK(tess_bench_space_open(path, &bs));
    unlink(path);
    if (!bs.ev) return;
    tess_config c, d, expect;
    CHECK(tess_replay_default(bs.replay, &c));
    CHECK_OK(tess_config_parse(bs.space, "a=2,b=8", &expect));
    CHECK(tess_config_equal(&c, &expect));
    tess_space_default(bs.space, &d);
    CHECK(tess_config_equal(&d, &expect));
    double best[3];
    CHECK_OK(tess_bench_run(&tess_search_random, &bs, 1, 3, 8, best, NULL));
    CHECK_NEAR(best[0], 3, 0);   /* evaluation 1: the default */
    CHECK_NEAR(best[2], 1, 0);   /* then the two others, each once */
    tess_bench_space_close(&bs);
}

int main(void) {
    CHECK_OK(tess_search_register());
    test_export_lines();
    test_bench_math();
    test_rule_breaker();
    test_recorded_default();
    return check_finish("test_search_replay");
}
