/* cmd_bench.c - `tessera bench search`: search efficiency of the strategies
 * on recorded spaces, beside the exact expectation of random sampling. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

#define MAX_STRATEGIES 32

static void usage(FILE *f) {
    fprintf(f,
            "usage: tessera bench search SPACE... [--strategies a,b,...] [--budget N] [--repeats R]\n"
            "                            [--batch B] [--seed K] [--json] [--plot out.svg]\n"
            "       tessera bench transfer SOURCE TARGET [--strategy S] [--budget N] [--repeats R] [--top K]\n"
            "                            (tessera bench transfer --help)\n"
            "\n"
            "Runs each strategy R times (seeds K, K+1, ...) on each recorded space (Kernel Tuner\n"
            "cache file, T4 results file or tessera record export; gzip or plain) and reports the\n"
            "median evaluations to get within 5%% and 1%% of the space's optimum, the mean\n"
            "optimum/best-found ratio at 20, 50, 100 and 200 evaluations, and the exact expectation\n"
            "of uniform random sampling without replacement, (N+1)/(K+1), and its exact median (vs rnd,\n"
            "vs med: the median evaluations to 5%% over each). A tessera record export\n"
            "marks the template's default config: every run evaluates it first, as tuning does.\n"
            "\n"
            "  --strategies LIST  comma-separated strategy names (default: all but exhaustive)\n"
            "  --budget N         evaluations per run (default 200)\n"
            "  --repeats R        runs per strategy and space (default 20)\n"
            "  --batch B          configs per proposal (default 8)\n"
            "  --seed K           first seed (default 1)\n"
            "  --json             print a JSON list instead of tables\n"
            "  --plot FILE.svg    convergence curves (one file per space: FILE-<space>.svg when\n"
            "                     several spaces are given)\n"
            "\n"
            "Columns: to 5%%, to 1%%  median evaluations to a config within 5%% (1%%) of the optimum\n"
            "                       (>N: most runs never got there)\n"
            "         vs rnd        to 5%% over random sampling's expectation (below 1: better)\n"
            "         @20 ... @200  mean optimum / best found after that many evaluations (1: found)\n"
            "         max ms        the strategy's slowest proposal of a batch, in milliseconds\n");
}

static bool parse_int(const char *text, int lo, int *out) {
    char *end;
    long v = strtol(text, &end, 10);
    if (end == text || *end || v < lo || v > 1000000) return false;
    *out = (int)v;
    return true;
}

/* Whether a strategy of that name is registered. */
static bool known_strategy(const char *name) {
    tess_strategy_info info;
    for (int i = 0; tess_strategy_info_at(i, &info) == TESS_OK; i++)
        if (strcmp(info.name, name) == 0) return true;
    return false;
}

/* Splits the comma-separated list (copied into buf) into strategy names;
 * reports unknown names. Without a list: every strategy but exhaustive. */
static int pick_strategies(const char *list, char *buf, size_t len, const char **out) {
    int n = 0;
    tess_strategy_info info;
    if (!list) {
        for (int i = 0; tess_strategy_info_at(i, &info) == TESS_OK && n < MAX_STRATEGIES; i++)
            if (strcmp(info.name, "exhaustive") != 0) out[n++] = info.name;
        return n;
    }
    snprintf(buf, len, "%s", list);
    for (char *save = NULL, *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        if (!known_strategy(name)) {
            fprintf(stderr, "tessera bench: unknown strategy '%s' (known:", name);
            for (int i = 0; tess_strategy_info_at(i, &info) == TESS_OK; i++) fprintf(stderr, " %s", info.name);
            fprintf(stderr, ")\n");
            return -1;
        }
        if (n < MAX_STRATEGIES) out[n++] = name;
    }
    return n;
}

static void format_evals(double v, int budget, char *buf, size_t len) {
    if (isfinite(v)) snprintf(buf, len, "%.1f", v);
    else snprintf(buf, len, ">%d", budget);
}

static void print_space_header(const tess_recording_info *bs, const tess_bench_options *o) {
    printf("\n%s: %zu configs (%zu ok), optimum %.4g ms, %zu within 5%%, %zu within 1%%\n", bs->name,
           bs->configs, bs->ok, bs->best_ms, bs->within_5pct, bs->within_1pct);
    printf("random sampling expects %.1f evaluations to 5%% (median %.0f), %.1f to 1%% (median %.0f);"
           " %d runs of %d evaluations\n",
           tess_bench_random_expectation(bs->configs, bs->within_5pct),
           tess_bench_random_median(bs->configs, bs->within_5pct),
           tess_bench_random_expectation(bs->configs, bs->within_1pct),
           tess_bench_random_median(bs->configs, bs->within_1pct),
           o->repeats, o->budget);
    printf("(vs rnd, vs med: evaluations to 5%% over random sampling's expectation and median; @N: optimum/best\n"
           " found after N evaluations; max ms: slowest proposal; see tessera bench --help)\n");
    printf("  %-12s %10s %10s %8s %8s %8s %8s %8s %8s %10s\n", "strategy", "to 5%", "to 1%", "vs rnd",
           "vs med", "@20", "@50", "@100", "@200", "max ms");
}

static void print_row(const tess_bench_result *r) {
    char e5[32], e1[32], ratio[32], ratio_median[32], at[TESS_BENCH_NBUDGETS][16];
    format_evals(r->evals_to_5pct_median, r->budget, e5, sizeof e5);
    format_evals(r->evals_to_1pct_median, r->budget, e1, sizeof e1);
    /* against random's expectation and against its median (the fairer of the two) */
    if (isfinite(r->evals_to_5pct_median)) {
        snprintf(ratio, sizeof ratio, "%.2f", r->evals_to_5pct_median / r->random_expected_5pct);
        snprintf(ratio_median, sizeof ratio_median, "%.2f", r->evals_to_5pct_median / r->random_median_5pct);
    } else {
        snprintf(ratio, sizeof ratio, "-");
        snprintf(ratio_median, sizeof ratio_median, "-");
    }
    for (int b = 0; b < TESS_BENCH_NBUDGETS; b++) {
        if (isnan(r->score_at[b])) snprintf(at[b], sizeof at[b], "-");
        else snprintf(at[b], sizeof at[b], "%.3f", r->score_at[b]);
    }
    printf("  %-12s %10s %10s %8s %8s %8s %8s %8s %8s %10.2f\n", r->strategy, e5, e1, ratio, ratio_median,
           at[0], at[1], at[2], at[3], r->propose_ms_max);
    fflush(stdout);
}

static json_t *result_json(const tess_bench_result *r, const tess_recording_info *bs) {
    json_t *score = json_object();
    for (int b = 0; b < TESS_BENCH_NBUDGETS; b++) {
        char key[16];
        snprintf(key, sizeof key, "%d", tess_bench_budgets[b]);
        json_object_set_new(score, key, isnan(r->score_at[b]) ? json_null() : json_real(r->score_at[b]));
    }
    json_t *o = json_object();
    json_object_set_new(o, "space", json_string(r->space));
    json_object_set_new(o, "strategy", json_string(r->strategy));
    json_object_set_new(o, "configs", json_integer((json_int_t)bs->configs));
    json_object_set_new(o, "optimum_ms", json_real(bs->best_ms));
    json_object_set_new(o, "runs", json_integer(r->runs));
    json_object_set_new(o, "budget", json_integer(r->budget));
    /* a median past the budget is null: most runs never got there */
    json_object_set_new(o, "evals_to_5pct_median",
                        isfinite(r->evals_to_5pct_median) ? json_real(r->evals_to_5pct_median) : json_null());
    json_object_set_new(o, "evals_to_1pct_median",
                        isfinite(r->evals_to_1pct_median) ? json_real(r->evals_to_1pct_median) : json_null());
    json_object_set_new(o, "reached_5pct", json_integer(r->reached_5pct));
    json_object_set_new(o, "reached_1pct", json_integer(r->reached_1pct));
    json_object_set_new(o, "random_expected_5pct", json_real(r->random_expected_5pct));
    json_object_set_new(o, "random_expected_1pct", json_real(r->random_expected_1pct));
    json_object_set_new(o, "random_median_5pct", json_real(r->random_median_5pct));
    json_object_set_new(o, "random_median_1pct", json_real(r->random_median_1pct));
    json_object_set_new(o, "score_at", score);
    json_object_set_new(o, "propose_ms_max", json_real(r->propose_ms_max));
    return o;
}

static int plot_space(const char *plot, int nspaces, const tess_recording_info *bs,
                      const tess_bench_result *results, int n) {
    char path[1024], title[256];
    if (nspaces == 1) {
        snprintf(path, sizeof path, "%s", plot);
    } else {
        const char *dot = strrchr(plot, '.');
        int stem = dot ? (int)(dot - plot) : (int)strlen(plot);
        snprintf(path, sizeof path, "%.*s-%s%s", stem, plot, bs->name, dot ? dot : ".svg");
    }
    snprintf(title, sizeof title, "%s: %zu configs, mean optimum/best over %d runs", bs->name, bs->configs,
             results[0].runs);
    if (tess_bench_write_svg(path, title, results, n) != TESS_OK) {
        fprintf(stderr, "tessera bench: %s\n", tess_errmsg());
        return 1;
    }
    return 0;
}

static int bench_search(int argc, char **argv) {
    tess_bench_options o = tess_bench_options_default();
    const char *list = NULL, *plot = NULL;
    bool json = false;
    const char *spaces[64];
    int nspaces = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--json") == 0) {
            json = true;
        } else if (strcmp(a, "--strategies") == 0 && has_value) {
            list = argv[++i];
        } else if (strcmp(a, "--plot") == 0 && has_value) {
            plot = argv[++i];
        } else if (strcmp(a, "--budget") == 0 && has_value) {
            if (!parse_int(argv[++i], 1, &o.budget)) goto bad_value;
        } else if (strcmp(a, "--repeats") == 0 && has_value) {
            if (!parse_int(argv[++i], 1, &o.repeats)) goto bad_value;
        } else if (strcmp(a, "--batch") == 0 && has_value) {
            if (!parse_int(argv[++i], 1, &o.batch)) goto bad_value;
        } else if (strcmp(a, "--seed") == 0 && has_value) {
            int seed;
            if (!parse_int(argv[++i], 0, &seed)) goto bad_value;
            o.seed = (uint64_t)seed;
        } else if (a[0] == '-') {
            fprintf(stderr, "tessera bench search: unknown option or missing value: %s\n", a);
            usage(stderr);
            return 2;
        } else if (nspaces < 64) {
            spaces[nspaces++] = a;
        }
        continue;
    bad_value:
        fprintf(stderr, "tessera bench search: bad value '%s' for %s\n", argv[i], a);
        return 2;
    }
    if (nspaces == 0) {
        fprintf(stderr, "tessera bench search: no space given\n");
        usage(stderr);
        return 2;
    }
    const char *strategies[MAX_STRATEGIES];
    char names[1024];
    int nstrategies = pick_strategies(list, names, sizeof names, strategies);
    if (nstrategies < 0) return 2;
    if (nstrategies == 0) {
        fprintf(stderr, "tessera bench search: no strategy to run\n");
        return 2;
    }

    int rc = 0;
    json_t *all = json ? json_array() : NULL;
    for (int s = 0; s < nspaces && rc == 0; s++) {
        tess_recording *rec;
        if (tess_recording_open(spaces[s], &rec) != TESS_OK) {
            fprintf(stderr, "tessera bench: %s\n", tess_errmsg());
            rc = 1;
            break;
        }
        tess_recording_info bs;
        tess_recording_info_get(rec, &bs);
        if (!json) print_space_header(&bs, &o);
        tess_bench_result results[MAX_STRATEGIES];
        int done = 0;
        for (int k = 0; k < nstrategies; k++) {
            if (tess_bench_recording(rec, strategies[k], &o, &results[done]) != TESS_OK) {
                fprintf(stderr, "tessera bench: %s\n", tess_errmsg());
                rc = 1;
                break;
            }
            if (json) json_array_append_new(all, result_json(&results[done], &bs));
            else print_row(&results[done]);
            done++;
        }
        if (rc == 0 && plot) rc = plot_space(plot, nspaces, &bs, results, done);
        for (int k = 0; k < done; k++) tess_bench_result_free(&results[k]);
        tess_recording_close(rec);
    }
    if (json) {
        if (rc == 0) {
            char *text = json_dumps(all, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
            if (text) puts(text);
            free(text);
        }
        json_decref(all);
    }
    return rc;
}

int tess_cmd_bench(int argc, char **argv) {
    if (tess_init() != TESS_OK) {
        fprintf(stderr, "tessera bench: %s\n", tess_errmsg());
        return 1;
    }
    /* argv[0] is "bench" */
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "transfer") == 0) return tess_cmd_bench_transfer(argc - 1, argv + 1);
    if (strcmp(argv[1], "search") != 0) {
        fprintf(stderr, "tessera bench: unknown benchmark '%s' (known: search, transfer)\n", argv[1]);
        return 2;
    }
    return bench_search(argc - 2, argv + 2);
}
