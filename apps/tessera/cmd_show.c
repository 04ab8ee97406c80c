/* cmd_show.c - `tessera show OP`: the best recorded (or a given) config and
 * the exact source tessera generates for it. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"

static void help(void) {
    printf("usage: tessera show OP [--shape ZxYxX] [--dtype T] [--backend B] [--config TEXT]\n"
           "                       [--arch sm_XX] [--db PATH]\n\n"
           "Prints the config tessera would run for the task (the best recorded on this device,\n"
           "else the template's default, or the one given with --config \"name=value,...\")\n"
           "and the exact generated source for it. The records are only read: a missing\n"
           "database is not created.\n\n"
           "  --arch sm_XX  CUDA code for a typical GPU of that architecture (sm_70, sm_75,\n"
           "                sm_80, sm_86, sm_89, sm_90), compiled with NVRTC to check it: no\n"
           "                GPU is needed\n");
}

static void print_source(const tess_source *src) {
    printf("// task    %s\n// device  %s\n// config  %s (%s)\n", src->task, src->device, src->config,
           src->origin);
    for (int i = 0; i < src->nlaunches; i++) {
        if (strcmp(src->backend, "cuda") == 0)
            printf("// launch  %s grid (%u,%u,%u) block (%u,%u,%u) shared %u bytes\n", src->launch[i].entry,
                   src->launch[i].grid[0], src->launch[i].grid[1], src->launch[i].grid[2],
                   src->launch[i].block[0], src->launch[i].block[1], src->launch[i].block[2],
                   src->launch[i].shared_bytes);
        else
            printf("// entry   %s\n", src->launch[i].entry);
    }
    if (src->options[0]) printf("// options %s\n", src->options);
    printf("\n%s", src->code);
}

int cmd_show(int argc, char **argv) {
    static const struct option options[] = {
        {"shape", required_argument, 0, 's'}, {"dtype", required_argument, 0, 't'},
        {"backend", required_argument, 0, 'b'}, {"config", required_argument, 0, 'c'},
        {"arch", required_argument, 0, 'a'}, {"db", required_argument, 0, 'd'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    cli_task t = {0};
    tess_source_options so = {0};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (c) {
        case 's': t.shape_text = optarg; break;
        case 't': t.dtype = optarg; break;
        case 'b': t.backend = optarg; break;
        case 'c': so.config = optarg; break;
        case 'a': so.arch = optarg; break;
        case 'd': t.db = optarg; break;
        case 'h': help(); return EXIT_OK;
        case ':': return cli_usage_error("show", "option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error("show", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error("show", optind == argc ? "missing operator" : "expected one operator");
    t.op = argv[optind];
    int rc = cli_task_shape("show", &t);
    if (rc) return rc;
    so.compile = so.arch != NULL;
    /* Only reads the records; without a database the default config is shown. */
    tess_context *ctx = NULL;
    tess_status st = tess_open_readonly(&ctx, t.db);
    if (st && st != TESS_ERR_NOTFOUND) return cli_fail_status(st);
    tess_source src;
    st = tess_source_get(ctx, t.op, t.shape, t.ndim, t.dtype, t.backend, &so, &src);
    tess_close(ctx);
    if (st) {
        rc = cli_fail_status(st);
        if (st == TESS_ERR_UNAVAILABLE && !so.arch && t.backend && strcmp(t.backend, "cuda") == 0)
            fprintf(stderr, "tessera show: --arch sm_XX shows the CUDA code for a typical GPU without one\n");
        return rc;
    }
    print_source(&src);
    if (so.compile && src.compiled)
        printf("\n// compiled for %s with NVRTC\n", so.arch);
    else if (so.compile)
        fprintf(stderr, "tessera: error: the source does not compile for %s:\n%s\n", so.arch,
                src.compile_log ? src.compile_log : "");
    rc = so.compile && !src.compiled ? EXIT_FAIL : EXIT_OK;
    tess_source_free(&src);
    return rc;
}
