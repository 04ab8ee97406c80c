/* test_shared_spaces.c - strategies and the replay evaluator on spaces
 * recorded by other labs (Kernel Tuner cache and T4 files). The files are
 * not part of the tree: TESSERA_SPACES names their folder, and without them
 * the test is skipped (exit 77), not passed. */
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

/* Recordings from other labs: counts, statuses, T4 and cache files agree, and a
 * benchmark run of every strategy is legal and reproducible. */
static void test_shared_spaces(const char *pnpoly, const char *dd_cache, const char *dd_t4) {
    tess_bench_space pn, cache, t4;
    CHECK_OK(tess_bench_space_open(pnpoly, &pn));
    CHECK(pn.n == 4092 && pn.nok == 3774);
    CHECK(pn.within_5pct == 33 && pn.within_1pct == 9);
    CHECK(strcmp(pn.name, "pnpoly_RTX_3090") == 0);
    CHECK(tess_space_nparams(pn.space) == 4 && pn.ev->space == pn.space);
    int failed = 0;
    for (size_t i = 0; i < pn.n; i++) {
        tess_outcome status;
        tess_replay_point(pn.replay, i, NULL, &status, NULL);
        failed += status == TESS_RESULT_RUNTIME_ERROR;
    }
    CHECK(failed == 318);

    CHECK_OK(tess_bench_space_open(dd_cache, &cache));
    CHECK_OK(tess_bench_space_open(dd_t4, &t4));
    CHECK(cache.n == 11130 && t4.n == 11130);
    CHECK_NEAR(cache.best_ms, t4.best_ms, 1e-9);
    CHECK(cache.within_1pct == t4.within_1pct && cache.within_1pct == 277);
    /* the same config reads the same time from both files */
    tess_config c;
    CHECK_OK(tess_config_parse(cache.space,
                               "block_size_x=1,block_size_y=32,block_size_z=1,tile_size_x=1,tile_size_y=1,"
                               "tile_stride_x=0,tile_stride_y=0,loop_unroll_factor_channel=0", &c));
    double a = 0, b = 0;
    tess_config d;
    CHECK_OK(tess_config_parse(t4.space,
                               "block_size_x=1,block_size_y=32,block_size_z=1,tile_size_x=1,tile_size_y=1,"
                               "tile_stride_x=0,tile_stride_y=0,loop_unroll_factor_channel=0", &d));
    CHECK(tess_replay_lookup(cache.replay, &c, NULL, &a) && tess_replay_lookup(t4.replay, &d, NULL, &b));
    CHECK_NEAR(a, 73.55395197868347, 1e-9);
    CHECK_NEAR(b, a, 1e-9);
    tess_bench_space_close(&cache);
    tess_bench_space_close(&t4);

    /* every strategy runs legally on a replayed space, reproducibly */
    tess_bench_options o = {.budget = 60, .repeats = 3, .batch = 8, .seed = 5};
    tess_bench_result results[16];
    int n = 0;
    for (int i = 0; i < tess_strategy_count() && n < 16; i++) {
        tess_bench_result again;
        CHECK_OK(tess_bench_strategy(tess_strategy_at(i), &pn, &o, &results[n]));
        CHECK_OK(tess_bench_strategy(tess_strategy_at(i), &pn, &o, &again));
        CHECK(results[n].curve && again.curve && memcmp(results[n].curve, again.curve, 60 * sizeof(double)) == 0);
        CHECK(results[n].curve[59] > 0 && results[n].curve[59] <= 1);
        CHECK(isnan(results[n].score_at[2]) && results[n].score_at[1] > 0);   /* 100 is past the budget */
        CHECK_NEAR(results[n].random_expected_5pct, 4093.0 / 34.0, 1e-9);
        CHECK_NEAR(results[n].random_median_5pct, tess_bench_random_median(4092, 33), 0);
        tess_bench_result_free(&again);
        n++;
    }
    char svg[] = "/tmp/tess_plot_XXXXXX";
    int fd = mkstemp(svg);
    if (fd >= 0) close(fd);
    CHECK_OK(tess_bench_write_svg(svg, "pnpoly <test>", results, n));
    FILE *f = fopen(svg, "r");
    char text[4096] = "";
    size_t len = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[len] = '\0';
    if (f) fclose(f);
    CHECK(strstr(text, "<svg") != NULL && strstr(text, "pnpoly &lt;test&gt;") != NULL);
    unlink(svg);
    for (int i = 0; i < n; i++) tess_bench_result_free(&results[i]);
    tess_bench_space_close(&pn);
}

int main(void) {
    const char *dir = getenv("TESSERA_SPACES");
    char pnpoly[1024], dd_cache[1024], dd_t4[1024];
    snprintf(pnpoly, sizeof pnpoly, "%s/pnpoly_RTX_3090.json.gz", dir ? dir : "");
    snprintf(dd_cache, sizeof dd_cache, "%s/dedispersion_A100.json.gz", dir ? dir : "");
    snprintf(dd_t4, sizeof dd_t4, "%s/dedispersion_A100_T4.json.gz", dir ? dir : "");
    if (!dir || !*dir || access(pnpoly, R_OK) != 0 || access(dd_cache, R_OK) != 0 || access(dd_t4, R_OK) != 0) {
        printf("recorded spaces not found (set TESSERA_SPACES to their folder): skipped\n");
        return 77;
    }
    CHECK_OK(tess_search_register());
    test_shared_spaces(pnpoly, dd_cache, dd_t4);
    return check_finish("test_shared_spaces");
}
