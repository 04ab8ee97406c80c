/* cmd_bench_transfer.c - `tessera bench transfer SOURCE TARGET`: a cold
 * search against one warm-started from another recorded space. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"

static void help(void) {
    printf("usage: tessera bench transfer SOURCE TARGET [--strategy S] [--budget N] [--repeats R] [--top K]\n\n"
           "Replays TARGET (a recorded space: Kernel Tuner cache, T4 file or tessera record export)\n"
           "with the strategy (default agent) R times (default 20) in each of three modes: cold;\n"
           "warm-started from up to K (default 8) of SOURCE's fastest configs (none over 1.25x its\n"
           "best) mapped into TARGET's space, with SOURCE's fastest measurements as cost-model\n"
           "priors; and from SOURCE's best config alone, then a cold search (best only). The warm\n"
           "start is built and searched as `tessera tune` does: the template's default first when\n"
           "TARGET marks it, then the warm-start configs. Reports the median evaluations to get\n"
           "within 5%% and 1%% of TARGET's optimum, and how good SOURCE's best config alone is on\n"
           "TARGET.\n");
}

static void evals(double v) {
    if (isfinite(v)) printf("%8.1f", v);
    else printf("%8s", "never");
}

/* cold / warm evaluations; 0 when either never got there */
static double gain(double cold, double warm) { return isfinite(cold) && isfinite(warm) ? cold / warm : 0; }

int tess_cmd_bench_transfer(int argc, char **argv) {
    static const struct option options[] = {
        {"strategy", required_argument, 0, 'S'}, {"budget", required_argument, 0, 'n'},
        {"repeats", required_argument, 0, 'r'}, {"top", required_argument, 0, 'k'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *strategy = "agent";
    long budget = 200, repeats = 20, top = 8;
    optind = 1;   /* argv[0] is "transfer" */
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (c) {
        case 'S': strategy = optarg; break;
        case 'n': if (!cli_parse_int("bench transfer", "--budget", optarg, 1, 100000, &budget)) return EXIT_USAGE; break;
        case 'r': if (!cli_parse_int("bench transfer", "--repeats", optarg, 1, 10000, &repeats)) return EXIT_USAGE; break;
        case 'k': if (!cli_parse_int("bench transfer", "--top", optarg, 1, 1000, &top)) return EXIT_USAGE; break;
        case 'h': help(); return EXIT_OK;
        case ':': return cli_usage_error("bench transfer", "option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error("bench transfer", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 2) return cli_usage_error("bench transfer", "expected SOURCE and TARGET");
    tess_transfer_bench_result r;
    tess_status st = tess_transfer_bench(argv[optind], argv[optind + 1], strategy, (int)repeats, (int)budget,
                                         (int)top, &r);
    if (st) return cli_fail_status(st);
    printf("transfer %s -> %s, strategy %s, %d runs of %d evaluations, warm start of %d configs"
           " and %d cost-model priors\n", r.source, r.target, strategy, r.runs, r.budget, r.nwarm, r.npriors);
    printf("  target optimum %.4g ms; random sampling expects %.1f evaluations to get within 5%%\n",
           r.target_optimum_ms, r.random_expected);
    printf("  evaluations to within 5%% (median):  cold");
    evals(r.cold_median);
    printf("   warm");
    evals(r.warm_median);
    printf("   best only");
    evals(r.best_only_median);
    printf("   gain %.1fx\n", gain(r.cold_median, r.warm_median));
    printf("  evaluations to within 1%% (median):  cold");
    evals(r.cold_median_1pct);
    printf("   warm");
    evals(r.warm_median_1pct);
    printf("   best only");
    evals(r.best_only_median_1pct);
    printf("   gain %.1fx\n", gain(r.cold_median_1pct, r.warm_median_1pct));
    printf("  the source's best config alone reaches %.1f%% of the target's optimum (%s)\n",
           100 * r.best_only_ratio, r.best_only_ratio >= 1 / 1.05 ? "within 5%: 1 evaluation" : "not within 5%");
    return EXIT_OK;
}
