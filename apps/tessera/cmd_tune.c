/* cmd_tune.c - `tessera tune OP`: tune, record, print a table or JSON. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "core/error.h"
#include "core/records.h"
#include "core/strategy.h"
#include "core/types.h"
#include "transfer/request.h"

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
           "  --json       print one JSON object instead of the table\n",
           "the default strategy");
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

static void print_json(const cli_task *t, const char *strategy, const tess_tune_report *r,
                       const char *db_path) {
    static const char *const names[] = {"ok", "compile_error", "runtime_error", "wrong_result",
                                        "timeout", "invalid"};
    printf("{\"op\": \"%s\", \"shape\": \"%s\", \"dtype\": \"%s\", \"device\": \"%s\", "
           "\"strategy\": \"%s\", \"db\": \"%s\",\n",
           t->op, t->shape_text, t->dtype ? t->dtype : "f32", r->device, strategy, db_path);
    if (isfinite(r->best_ms)) {
        printf(" \"best\": {\"config\": {");
        cli_print_config_json(r->best_config);
        printf("}, \"config_text\": \"%s\", \"time_ms\": %.6g, \"gbps\": %.6g, \"gflops\": %.6g},\n",
               r->best_config, r->best_ms, r->best_gbps, r->best_gflops);
    } else {
        printf(" \"best\": null,\n");
    }
    printf(" \"ceiling_gbps\": %.6g, \"ceiling_gflops\": %.6g, \"bound\": \"%s\", \"bound_ms\": %.6g,"
           " \"fraction_of_ceiling\": %.4f,\n",
           r->ceiling_gbps, r->ceiling_gflops, r->bound, r->bound_ms, r->fraction_of_ceiling);
    printf(" \"default_ms\": %.6g, \"speedup_over_default\": %.4f,\n", r->default_ms,
           r->default_ms > 0 && isfinite(r->best_ms) ? r->default_ms / r->best_ms : 0);
    printf(" \"evaluations\": %d, \"elapsed_s\": %.3f, \"statuses\": {", r->evaluations, r->elapsed_s);
    for (int i = 0; i < 6; i++) printf("%s\"%s\": %d", i ? ", " : "", names[i], r->status_counts[i]);
    printf("}, \"stop_reason\": \"%s\", \"warm_configs\": %d, \"transfer_from\": \"%s\"}\n",
           r->stop_reason, r->warm_configs, r->transfer_from);
}

static void print_table(const cli_task *t, const char *strategy, const tess_tune_report *r,
                        const char *db_path) {
    static const char *const names[] = {"ok", "compile_error", "runtime_error", "wrong_result",
                                        "timeout", "invalid"};
    printf("tessera tune %s %s %s\n", t->op, t->dtype ? t->dtype : "f32", t->shape_text);
    printf("  device        %s\n", r->device);
    printf("  search        %s, %d evaluations in %.1f s (", strategy, r->evaluations, r->elapsed_s);
    bool first = true;
    for (int i = 0; i < 6; i++)
        if (r->status_counts[i]) {
            printf("%s%d %s", first ? "" : ", ", r->status_counts[i], names[i]);
            first = false;
        }
    printf("); %s\n", r->stop_reason);
    printf("  records       %s\n", db_path);
    if (r->warm_configs) printf("  warm start    %d configs from %s\n", r->warm_configs, r->transfer_from);
    if (!isfinite(r->best_ms)) {
        printf("  no candidate ran correctly\n");
        return;
    }
    printf("  best config   %s\n", r->best_config);
    printf("  time          %.4g ms (median)\n", r->best_ms);
    printf("  achieved      %.2f GB/s, %.2f GFLOP/s\n", r->best_gbps, r->best_gflops);
    if (r->bound[0])
        printf("  ceiling       %.1f%% of the %s (calibrated), which bounds this task at %.4g ms\n",
               100.0 * r->fraction_of_ceiling, r->bound, r->bound_ms);
    if (r->default_ms > 0)
        printf("  default       %.4g ms: tuned is %.2fx faster\n", r->default_ms, r->default_ms / r->best_ms);
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
    bool json = a.json;
    if (opt.budget == 0 && opt.seconds == 0 && opt.window == 0) opt.budget = 30;
    if (!json && isatty(2)) opt.progress = progress;
    tess_context *ctx;
    tess_status st = tess_open(&ctx, t.db);
    if (st) return cli_fail_status(st);
    tess_tune_report report;
    st = tess_tune(ctx, t.op, t.shape, t.ndim, t.dtype, t.backend, &opt, &report);
    if (opt.progress) fprintf(stderr, "\n");
    if (st) {
        tess_close(ctx);
        return cli_fail_status(st);
    }
    char db_path[4096];
    snprintf(db_path, sizeof db_path, "%s", tess_records_path(tess_context_records(ctx)));
    const char *strategy = opt.strategy ? opt.strategy : tess_strategy_default_name();
    if (json)
        print_json(&t, strategy, &report, db_path);
    else
        print_table(&t, strategy, &report, db_path);
    tess_close(ctx);
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
    if (a.opt.error_budget > 0) return cli_usage_error("record", "--error-budget belongs to tessera tune");
    if (!a.json && isatty(2)) a.opt.progress = progress;
    tess_context *ctx;
    tess_status st = tess_open(&ctx, a.t.db);
    if (st) return cli_fail_status(st);
    tess_tune_report report;
    st = tess_tune(ctx, a.t.op, a.t.shape, a.t.ndim, a.t.dtype, a.t.backend, &a.opt, &report);
    if (a.opt.progress) fprintf(stderr, "\n");
    FILE *out = NULL;
    int count = 0;
    if (!st && !(out = fopen(a.output, "w"))) st = tess_error(TESS_ERR_IO, "cannot write %s", a.output);
    if (!st) {
        char task_key[256];
        snprintf(task_key, sizeof task_key, "%s:%s:%s", a.t.op, a.t.dtype ? a.t.dtype : "f32", a.t.shape_text);
        st = tess_records_export_jsonl(tess_context_records(ctx), out, task_key, report.device, &count);
        if (fclose(out) != 0 && !st) st = tess_error(TESS_ERR_IO, "cannot write %s", a.output);
    }
    tess_close(ctx);
    if (st) return cli_fail_status(st);
    printf("recorded %d evaluations of %s %s on %s (%s); %d results exported to %s\n", report.evaluations,
           a.t.op, a.t.shape_text, report.device, report.stop_reason, count, a.output);
    return EXIT_OK;
}
