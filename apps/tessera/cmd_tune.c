/* cmd_tune.c - `tessera tune OP` and `tessera record OP`: tune, record,
 * print a table or JSON; Ctrl-C stops after the candidates in flight. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

/* An interquartile spread above this fraction of the median makes a time
 * noisy: a speedup or bandwidth from it is shown with a warning. */
#define NOISY_SPREAD 0.10
/* A speedup within the spread (at least this) is no speedup. */
#define MIN_NOISE 0.02

static const char *default_strategy(void) {
    tess_strategy_info si;
    for (int i = 0; tess_strategy_info_at(i, &si) == TESS_OK; i++)
        if (si.is_default) return si.name;
    return "none";
}

static void help(void) {
    printf("usage: tessera tune OP [--shape ZxYxX] [--dtype f32|f64|bf16|f16] [--backend cpu|cuda]\n"
           "                       [--strategy NAME] [--budget N] [--seconds S] [--window W]\n"
           "                       [--batch N] [--seed K] [--transfer off|auto|PATH] [--fix NAME=VALUE,...]\n"
           "                       [--compile-timeout S] [--error-budget E] [--db PATH] [--json]\n\n"
           "Tunes operator OP on a shape: each candidate config is generated, compiled,\n"
           "verified against the reference and timed; every result is committed to the\n"
           "records database as it arrives. The template's default config is measured\n"
           "first, so the speedup printed refers to the same run.\n\n"
           "  --shape      extents, slowest first (default: the operator's default shape)\n"
           "  --dtype      element type (default f32)\n"
           "  --backend    cpu or cuda (default: the best present)\n"
           "  --strategy   search strategy (default: %s; see tessera strategies)\n"
           "  --budget     evaluations (default 30 unless --seconds or --window is given)\n"
           "  --seconds    wall-clock limit\n"
           "  --window     stop after W evaluations without a 1%% improvement\n"
           "  --batch      candidates compiled per batch (default: the backend's)\n"
           "  --seed       seed of the search and of the input data (default 1)\n"
           "  --transfer   warm start from similar tuned tasks: auto (this database, the\n"
           "               default), off, or another records database or exported .jsonl\n"
           "  --fix        search only configs with these values (for example time_block=4)\n"
           "  --compile-timeout  seconds a kernel may compile before it counts as a compile\n"
           "               error (default 60; 0: no limit)\n"
           "  --error-budget  extra error relative to the float64 reference that results may\n"
           "               have; above 0 the search adds the operator's shortcuts (fast\n"
           "               intrinsics, approximations), each kept only when it passes on\n"
           "               random and typical inputs (operators with an error_budget attribute)\n"
           "  --db         records database (default $TESSERA_DB or\n"
           "               $XDG_DATA_HOME/tessera/records.db)\n"
           "  --json       print one JSON object instead of the table\n\n"
           "Ctrl-C stops the search after the candidates in flight (again: at once); their\n"
           "results are recorded, the run ends as \"interrupted\" and the summary covers what\n"
           "was measured (exit status 130). Times with a large spread, and bandwidths of a\n"
           "working set that fits in the last-level cache, are marked as such.\n",
           default_strategy());
}

/* A progress line on a terminal, nothing otherwise. */
static void progress(int done, int budget, double best_ms, double elapsed_s, void *user) {
    (void)user;
    char left[32] = "";
    if (budget > 0) snprintf(left, sizeof left, ", %d left", budget - done);
    fprintf(stderr, "\r  [%d evaluated%s] best %s%.4g ms, %.1f s elapsed   ", done, left,
            isfinite(best_ms) ? "" : "none ", isfinite(best_ms) ? best_ms : 0.0, elapsed_s);
    fflush(stderr);
}

static bool fits_in_cache(const tess_tune_report *r) {
    return r->cache_bytes > 0 && r->working_set_bytes > 0 && r->working_set_bytes <= r->cache_bytes;
}

/* The larger spread of the two times a speedup compares. */
static double speedup_noise(const tess_tune_report *r) {
    double n = r->best_spread > r->default_spread ? r->best_spread : r->default_spread;
    return isfinite(n) && n > MIN_NOISE ? n : MIN_NOISE;
}

static json_t *number_or_null(bool known, double v) { return known && isfinite(v) ? json_real(v) : json_null(); }

static int print_json(const cli_task *t, const char *strategy, const tess_tune_report *r, const char *db_path) {
    bool found = isfinite(r->best_ms), has_default = found && r->default_ms > 0;
    json_t *doc = json_object();
    json_object_set_new(doc, "op", json_string(t->op));
    json_object_set_new(doc, "shape", json_string(t->shape_text));
    json_object_set_new(doc, "dtype", json_string(t->dtype ? t->dtype : "f32"));
    json_object_set_new(doc, "device", json_string(r->device));
    json_object_set_new(doc, "strategy", json_string(strategy));
    json_object_set_new(doc, "db", json_string(db_path));
    json_t *best = json_null();
    if (found) {
        best = json_object();
        json_object_set_new(best, "config", cli_config_json(r->best_config));
        json_object_set_new(best, "config_text", json_string(r->best_config));
        json_object_set_new(best, "time_ms", json_real(r->best_ms));
        json_object_set_new(best, "spread", number_or_null(true, r->best_spread));
        json_object_set_new(best, "gbps", json_real(r->best_gbps));
        json_object_set_new(best, "gflops", json_real(r->best_gflops));
        json_object_set_new(best, "error", number_or_null(r->best_error >= 0, r->best_error));
    }
    json_object_set_new(doc, "best", best);
    json_t *exact = json_null();
    if (isfinite(r->best_exact_ms)) {
        exact = json_object();
        json_object_set_new(exact, "config", cli_config_json(r->best_exact_config));
        json_object_set_new(exact, "config_text", json_string(r->best_exact_config));
        json_object_set_new(exact, "time_ms", json_real(r->best_exact_ms));
        json_object_set_new(exact, "error", number_or_null(r->best_exact_error >= 0, r->best_exact_error));
    }
    json_object_set_new(doc, "best_exact", exact);
    json_object_set_new(doc, "ceiling_gbps", json_real(r->ceiling_gbps));
    json_object_set_new(doc, "ceiling_gflops", json_real(r->ceiling_gflops));
    json_object_set_new(doc, "bound", json_string(r->bound));
    json_object_set_new(doc, "bound_ms", json_real(r->bound_ms));
    json_object_set_new(doc, "fraction_of_ceiling", number_or_null(r->fraction_of_ceiling > 0, r->fraction_of_ceiling));
    json_object_set_new(doc, "working_set_bytes", json_integer((json_int_t)r->working_set_bytes));
    json_object_set_new(doc, "cache_bytes", json_integer((json_int_t)r->cache_bytes));
    json_object_set_new(doc, "fits_in_cache", json_boolean(fits_in_cache(r)));
    json_object_set_new(doc, "default_ms", number_or_null(has_default, r->default_ms));
    json_object_set_new(doc, "default_spread", number_or_null(has_default, r->default_spread));
    json_object_set_new(doc, "speedup_over_default", number_or_null(has_default, r->default_ms / r->best_ms));
    json_object_set_new(doc, "noisy", json_boolean(found && speedup_noise(r) > NOISY_SPREAD));
    json_object_set_new(doc, "evaluations", json_integer(r->evaluations));
    json_object_set_new(doc, "elapsed_s", json_real(r->elapsed_s));
    json_t *statuses = json_object();
    for (int i = 0; tess_outcome_label(i); i++)
        json_object_set_new(statuses, tess_outcome_label(i), json_integer(r->status_counts[i]));
    json_object_set_new(doc, "statuses", statuses);
    json_object_set_new(doc, "stop_reason", json_string(r->stop_reason));
    json_object_set_new(doc, "warm_configs", json_integer(r->warm_configs));
    json_object_set_new(doc, "transfer_from", json_string(r->transfer_from));
    return cli_print_json(doc);
}

static void print_size(double bytes, char *buf, size_t len) {
    if (bytes >= 1 << 30) snprintf(buf, len, "%.1f GiB", bytes / (1 << 30));
    else if (bytes >= 1 << 20) snprintf(buf, len, "%.1f MiB", bytes / (1 << 20));
    else snprintf(buf, len, "%.0f KiB", bytes / 1024);
}

static void print_table(const cli_task *t, const char *strategy, const tess_tune_report *r,
                        const char *db_path) {
    printf("tessera tune %s %s %s\n", t->op, t->dtype ? t->dtype : "f32", t->shape_text);
    printf("  device        %s\n", r->device);
    printf("  search        %s, %d %s in %.1f s (", strategy, r->evaluations,
           cli_plural(r->evaluations, "evaluation", "evaluations"), r->elapsed_s);
    bool first = true;
    for (int i = 0; tess_outcome_label(i); i++)
        if (r->status_counts[i]) {
            printf("%s%d %s", first ? "" : ", ", r->status_counts[i], tess_outcome_label(i));
            first = false;
        }
    printf("); %s\n", r->stop_reason);
    printf("  records       %s\n", db_path);
    if (r->warm_configs)
        printf("  warm start    %d %s from %s\n", r->warm_configs, cli_plural(r->warm_configs, "config", "configs"),
               r->transfer_from);
    if (!isfinite(r->best_ms)) {
        printf("  no candidate ran correctly\n");
        return;
    }
    char set[32], cache[32];
    print_size(r->working_set_bytes, set, sizeof set);
    print_size(r->cache_bytes, cache, sizeof cache);
    bool fits = fits_in_cache(r);
    printf("  best config   %s\n", r->best_config);
    printf("  time          %.4g ms (median, spread %.0f%%%s)\n", r->best_ms, 100 * r->best_spread,
           r->best_spread > NOISY_SPREAD ? ": noisy, the time may be off" : "");
    printf("  achieved      %.2f GB/s, %.2f GFLOP/s\n", r->best_gbps, r->best_gflops);
    if (r->best_error >= 0)
        printf("  error         %.3g at most, relative to the reference (|out - ref| / (scale + |ref|))\n",
               r->best_error);
    if (isfinite(r->best_exact_ms) && strcmp(r->best_exact_config, r->best_config) != 0) {
        printf("  no shortcut   %s\n                %.4g ms", r->best_exact_config, r->best_exact_ms);
        if (r->best_exact_error >= 0) printf(", error %.3g", r->best_exact_error);
        printf(": the shortcuts are %.2fx as fast\n", r->best_exact_ms / r->best_ms);
    } else if (!isfinite(r->best_exact_ms)) {
        printf("  no shortcut   no config without shortcuts ran correctly\n");
    }
    if (r->bound[0] && fits)
        printf("  ceiling       the %s (calibrated) bounds this task at %.4g ms, but its working set\n"
               "                (%s) fits in the %s of cache, so it runs from the cache: no fraction of it\n",
               r->bound, r->bound_ms, set, cache);
    else if (r->bound[0])
        printf("  ceiling       %.1f%% of the %s (calibrated), which bounds this task at %.4g ms%s\n",
               100.0 * r->fraction_of_ceiling, r->bound, r->bound_ms,
               r->fraction_of_ceiling > 1.05 ? "\n                above it: a task that mostly reads can pass the copy bandwidth; otherwise the\n"
                                               "                ceiling was calibrated on a busy host (`tessera calibrate` on a quiet one)" : "");
    if (r->default_ms <= 0) return;
    double speedup = r->default_ms / r->best_ms, noise = speedup_noise(r);
    printf("  default       %.4g ms: ", r->default_ms);
    if (speedup <= 1 + noise)
        printf("tuned is no faster (within the timing spread of %.0f%%)\n", 100 * noise);
    else if (noise > NOISY_SPREAD || fits)
        printf("tuned is %.2fx faster, but %s\n", speedup,
               noise > NOISY_SPREAD ? "the timings are noisy: measure again before trusting it"
                                    : "timed with the working set in cache");
    else
        printf("tuned is %.2fx faster\n", speedup);
}

/* Options of tune and record. */
typedef struct tune_args {
    cli_task t;
    tess_tune_options opt;
    bool json;
    const char *output;      /* record: the JSON-lines file written */
} tune_args;

static int parse_args(const char *cmd, int argc, char **argv, tune_args *a, void (*usage)(void)) {
    static const struct option options[] = {
        {"shape", required_argument, 0, 's'},   {"dtype", required_argument, 0, 't'},
        {"backend", required_argument, 0, 'b'}, {"strategy", required_argument, 0, 'S'},
        {"budget", required_argument, 0, 'n'},  {"seconds", required_argument, 0, 'T'},
        {"window", required_argument, 0, 'w'},  {"batch", required_argument, 0, 'B'},
        {"seed", required_argument, 0, 'k'},    {"db", required_argument, 0, 'd'},
        {"json", no_argument, 0, 'j'},          {"help", no_argument, 0, 'h'},
        {"transfer", required_argument, 0, 'x'}, {"output", required_argument, 0, 'o'},
        {"fix", required_argument, 0, 'f'},     {"compile-timeout", required_argument, 0, 'C'},
        {"error-budget", required_argument, 0, 'E'},
        {0, 0, 0, 0}};
    long v;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":ho:", options, NULL)) != -1) {
        switch (c) {
        case 's': a->t.shape_text = optarg; break;
        case 't': a->t.dtype = optarg; break;
        case 'b': a->t.backend = optarg; break;
        case 'S': a->opt.strategy = optarg; break;
        case 'd': a->t.db = optarg; break;
        case 'j': a->json = true; break;
        case 'x': a->opt.transfer = optarg; break;
        case 'o': a->output = optarg; break;
        case 'f': a->opt.fix = optarg; break;
        case 'n':
            if (!cli_parse_int(cmd, "--budget", optarg, 1, 100000000, &v)) return EXIT_USAGE;
            a->opt.budget = (int)v;
            break;
        case 'w':
            if (!cli_parse_int(cmd, "--window", optarg, 1, 100000000, &v)) return EXIT_USAGE;
            a->opt.window = (int)v;
            break;
        case 'B':
            if (!cli_parse_int(cmd, "--batch", optarg, 1, 4096, &v)) return EXIT_USAGE;
            a->opt.batch = (int)v;
            break;
        case 'k':
            if (!cli_parse_int(cmd, "--seed", optarg, 0, 2147483647, &v)) return EXIT_USAGE;
            a->opt.seed = (uint64_t)v;
            break;
        case 'T':
            if (!cli_parse_double(cmd, "--seconds", optarg, 0.001, &a->opt.seconds)) return EXIT_USAGE;
            break;
        case 'C': {
            double s;
            if (!cli_parse_double(cmd, "--compile-timeout", optarg, 0, &s)) return EXIT_USAGE;
            a->opt.compile_timeout_s = s > 0 ? s : -1;   /* the option's 0 is "no limit" */
            break;
        }
        case 'E':
            if (!cli_parse_double(cmd, "--error-budget", optarg, 0, &a->opt.error_budget)) return EXIT_USAGE;
            break;
        case 'h': usage(); return -1;
        case ':': return cli_usage_error(cmd, "option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error(cmd, optind == argc ? "missing operator" : "expected one operator");
    a->t.op = argv[optind];
    return cli_task_shape(cmd, &a->t);
}

int cmd_tune(int argc, char **argv) {
    tune_args a = {.opt = tess_tune_options_default()};
    a.opt.budget = 0;
    int rc = parse_args("tune", argc, argv, &a, help);
    if (rc) return rc < 0 ? EXIT_OK : rc;
    if (a.output) return cli_usage_error("tune", "--output belongs to tessera record");
    cli_task t = a.t;
    tess_tune_options opt = a.opt;
    if (opt.budget == 0 && opt.seconds == 0 && opt.window == 0) opt.budget = 30;
    if (!a.json && isatty(2)) opt.progress = progress;
    tess_context *ctx;
    tess_status st = tess_open(&ctx, t.db);
    if (st) return cli_fail_status(st);
    cli_catch_interrupt(&opt);
    tess_tune_report report;
    st = tess_tune(ctx, t.op, t.shape, t.ndim, t.dtype, t.backend, &opt, &report);
    signal(SIGINT, SIG_DFL);
    if (opt.progress) fprintf(stderr, "\n");
    if (st) {
        tess_close(ctx);
        return cli_fail_status(st);
    }
    const char *strategy = opt.strategy ? opt.strategy : default_strategy();
    if (a.json)
        rc = print_json(&t, strategy, &report, tess_db_path(ctx));
    else
        print_table(&t, strategy, &report, tess_db_path(ctx));
    tess_close(ctx);
    if (rc) return rc;
    if (cli_interrupted()) return EXIT_INTERRUPTED;
    return isfinite(report.best_ms) ? EXIT_OK : EXIT_FAIL;
}

static void record_help(void) {
    printf("usage: tessera record OP --output FILE.jsonl [--shape S] [--dtype T] [--backend B]\n"
           "                         [--budget N] [--seed K] [--fix NAME=VALUE,...] [--compile-timeout S]\n"
           "                         [--db PATH]\n\n"
           "Measures a whole space (or, when it has more than N legal configs, a uniform random\n"
           "sample of N, default 2000) on this machine's hardware, records every result, and\n"
           "exports the task's records as JSON lines, which `tessera bench search` replays.\n"
           "--fix measures only the configs with the given values; --compile-timeout is the\n"
           "seconds a kernel may compile before it counts as a compile error (default 60, 0: none).\n");
}

int cmd_record(int argc, char **argv) {
    tune_args a = {.opt = tess_tune_options_default()};
    a.opt.budget = 2000;
    a.opt.strategy = "random";
    a.opt.transfer = "off";
    a.opt.full_timing = 1;   /* replayed spaces need every time at full precision */
    int rc = parse_args("record", argc, argv, &a, record_help);
    if (rc) return rc < 0 ? EXIT_OK : rc;
    if (!a.output) return cli_usage_error("record", "missing --output FILE.jsonl");
    if (a.json) return cli_usage_error("record", "--json belongs to tessera tune");
    if (a.opt.error_budget > 0) return cli_usage_error("record", "--error-budget belongs to tessera tune");
    if (!a.json && isatty(2)) a.opt.progress = progress;
    tess_context *ctx;
    tess_status st = tess_open(&ctx, a.t.db);
    if (st) return cli_fail_status(st);
    cli_catch_interrupt(&a.opt);
    tess_tune_report report;
    st = tess_tune(ctx, a.t.op, a.t.shape, a.t.ndim, a.t.dtype, a.t.backend, &a.opt, &report);
    signal(SIGINT, SIG_DFL);
    if (a.opt.progress) fprintf(stderr, "\n");
    FILE *out = NULL;
    int count = 0;
    if (!st && !(out = fopen(a.output, "w"))) {
        fprintf(stderr, "tessera: error: cannot write %s: %s\n", a.output, strerror(errno));
        tess_close(ctx);
        return EXIT_FAIL;
    }
    if (!st) {
        char task_key[TESS_KEY_LEN];
        snprintf(task_key, sizeof task_key, "%s:%s:%s", a.t.op, a.t.dtype ? a.t.dtype : "f32", a.t.shape_text);
        st = tess_db_export(ctx, out, task_key, report.device, &count);
        if (fclose(out) != 0 && !st) {
            fprintf(stderr, "tessera: error: cannot write %s\n", a.output);
            tess_close(ctx);
            return EXIT_FAIL;
        }
    }
    tess_close(ctx);
    if (st) return cli_fail_status(st);
    printf("recorded %d %s of %s %s on %s (%s); %d results exported to %s\n", report.evaluations,
           cli_plural(report.evaluations, "evaluation", "evaluations"), a.t.op, a.t.shape_text, report.device,
           report.stop_reason, count, a.output);
    return cli_interrupted() ? EXIT_INTERRUPTED : EXIT_OK;
}
