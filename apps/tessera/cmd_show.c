/* cmd_show.c - `tessera show OP`: the best recorded (or a given) config and
 * the exact source tessera generates for it. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "core/error.h"
#include "core/records.h"
#include "transfer/request.h"

static void help(void) {
    printf("usage: tessera show OP [--shape ZxYxX] [--dtype T] [--backend B] [--config TEXT] [--db PATH]\n\n"
           "Prints the config tessera would run for the task (the best recorded on this device,\n"
           "else the template's default, or the one given with --config \"name=value,...\")\n"
           "and the exact generated source for it.\n");
}

int cmd_show(int argc, char **argv) {
    static const struct option options[] = {
        {"shape", required_argument, 0, 's'}, {"dtype", required_argument, 0, 't'},
        {"backend", required_argument, 0, 'b'}, {"config", required_argument, 0, 'c'},
        {"db", required_argument, 0, 'd'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    cli_task t = {0};
    const char *config_text = NULL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (c) {
        case 's': t.shape_text = optarg; break;
        case 't': t.dtype = optarg; break;
        case 'b': t.backend = optarg; break;
        case 'c': config_text = optarg; break;
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
    tess_context *ctx;
    tess_status st = tess_open(&ctx, t.db);
    if (st) return cli_fail_status(st);
    tess_request s;
    tess_space *space = NULL;
    tess_kernel_source src = {0};
    tess_config cfg;
    char origin[64] = "the template's default";
    st = tess_request_resolve(t.op, t.shape, t.ndim, t.dtype, t.backend, &s);
    if (!st) st = tess_op_space(s.op, &s.task, &s.device, &space);
    if (!st && config_text) {
        st = tess_config_parse(space, config_text, &cfg);
        if (!st && !tess_space_valid(space, &cfg))
            st = tess_error(TESS_ERR_ARG, "config violates %s", tess_space_violation(space, &cfg));
        snprintf(origin, sizeof origin, "given with --config");
    } else if (!st) {
        tess_record_row best;
        tess_status found = tess_records_best(tess_context_records(ctx), s.task_key, s.device_key, &best);
        if (found == TESS_OK && tess_config_parse(space, best.config, &cfg) == TESS_OK)
            snprintf(origin, sizeof origin, "best recorded, %.4g ms", best.time_ms);
        else if (found == TESS_OK || found == TESS_ERR_NOTFOUND)
            tess_space_default(space, &cfg);
        else
            st = found;
    }
    if (!st) st = tess_op_emit(s.op, &s.task, &s.device, space, &cfg, &src);
    if (!st) {
        char text[1024];
        tess_config_format(space, &cfg, text, sizeof text);
        printf("// task    %s\n// device  %s\n// config  %s (%s)\n", s.task_key, s.device_key, text, origin);
        for (int i = 0; i < src.nlaunches; i++) {
            const tess_launch *l = &src.launch[i];
            if (strcmp(s.be->name, "cuda") == 0)
                printf("// launch  %s grid (%u,%u,%u) block (%u,%u,%u) shared %u bytes\n", l->entry,
                       l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2],
                       l->shared_bytes);
            else
                printf("// entry   %s\n", l->entry);
        }
        if (src.options[0]) printf("// options %s\n", src.options);
        printf("\n%s", src.code);
    }
    tess_kernel_source_free(&src);
    tess_space_destroy(space);
    tess_close(ctx);
    return st ? cli_fail_status(st) : EXIT_OK;
}
