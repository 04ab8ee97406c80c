/* cmd_list.c - `tessera ops`, `strategies`, `devices` and `calibrate`. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"

/* Commands without options but --help. */
static int no_options(const char *cmd, int argc, char **argv, const char *usage) {
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("%s", usage);
        return -1;
    }
    if (argc > 1) return cli_usage_error(cmd, "unexpected argument '%s'", argv[1]);
    tess_status st = tess_init();
    return st ? cli_fail_status(st) : EXIT_OK;
}

int cmd_ops(int argc, char **argv) {
    int rc = no_options("ops", argc, argv,
                        "usage: tessera ops\n\nLists the operators: family, backends, default shape, summary (with the\n"
                        "buffers), the names of the extents a shape gives and the attributes with their defaults.\n");
    if (rc) return rc < 0 ? EXIT_OK : rc;
    tess_status st = tess_op_check(NULL);   /* a user stencil file that failed */
    if (st) return cli_fail_status(st);
    /* Columns as wide as their longest entry, so every operator's name lines up. */
    int w[4] = {(int)strlen("operator"), (int)strlen("family"), (int)strlen("backends"),
                (int)strlen("default shape")};
    tess_op_info op;
    for (int i = 0; tess_op_info_at(i, &op) == TESS_OK; i++) {
        const char *col[4] = {op.name, op.family, op.backends, op.default_shape};
        for (int c = 0; c < 4; c++)
            if ((int)strlen(col[c]) > w[c]) w[c] = (int)strlen(col[c]);
    }
    printf("%-*s %-*s %-*s %-*s %s\n", w[0], "operator", w[1], "family", w[2], "backends", w[3], "default shape",
           "summary");
    for (int i = 0; tess_op_info_at(i, &op) == TESS_OK; i++) {
        printf("%-*s %-*s %-*s %-*s %s\n", w[0], op.name, w[1], op.family, w[2], op.backends, w[3],
               op.default_shape, op.summary);
        printf("%-*s extents %s%s%s\n", w[0], "", op.extents, op.attrs[0] ? "; attributes " : "", op.attrs);
    }
    return EXIT_OK;
}

int cmd_strategies(int argc, char **argv) {
    int rc = no_options("strategies", argc, argv, "usage: tessera strategies\n\nLists the search strategies.\n");
    if (rc) return rc < 0 ? EXIT_OK : rc;
    tess_strategy_info si;
    for (int i = 0; tess_strategy_info_at(i, &si) == TESS_OK; i++)
        printf("%-11s %s%s\n", si.name, si.summary, si.is_default ? " (default)" : "");
    return EXIT_OK;
}

/* One line per ceiling: its value and when it was measured, "not present"
 * for a unit the device lacks, or "not calibrated". */
static void print_ceilings(const tess_device_info *d) {
    for (int k = 0; k < TESS_DEVICE_CEILINGS; k++) {
        printf("  %-22s ", d->ceiling[k].label);
        if (d->ceiling[k].value > 0)
            printf("%10.1f %-7s%s%s\n", d->ceiling[k].value, d->ceiling[k].unit,
                   d->ceiling[k].calibrated_at[0] ? " calibrated " : "", d->ceiling[k].calibrated_at);
        else if (d->ceiling[k].measured)
            printf("not present\n");
        else
            printf("not calibrated (tessera calibrate --backend %s)\n", d->backend);
    }
}

static void print_device(const tess_device_info *d) {
    bool cpu = strcmp(d->backend, "cpu") == 0;
    printf("%s\n  name %s, arch %s, %d %s", d->key, d->name, d->arch, d->units, cpu ? "cores" : "SMs");
    if (d->cc_major) printf(", compute capability %d.%d", d->cc_major, d->cc_minor);
    printf("\n");
    if (d->clock_mhz > 0)
        printf("  clock %.0f MHz, memory clock %.0f MHz, bus %d bits\n", d->clock_mhz, d->mem_clock_mhz,
               d->mem_bus_width);
    printf("  memory %.1f GiB, %s %.1f MiB\n", (double)d->mem_bytes / (1 << 30), cpu ? "caches of level 2 and up" : "L2",
           (double)d->cache_bytes / (1 << 20));
    if (d->smem_per_block > 0)
        printf("  shared memory %lld B/block (%lld opt-in), %lld B/SM; registers %d/block, %d/SM; "
               "threads %d/block, %d/SM; warp %d\n",
               (long long)d->smem_per_block, (long long)d->smem_per_block_optin, (long long)d->smem_per_sm,
               d->regs_per_block, d->regs_per_sm, d->max_threads_per_block, d->max_threads_per_sm,
               d->warp_size);
    print_ceilings(d);
}

static int parse_db_backend(const char *cmd, int argc, char **argv, const char **db, const char **backend,
                            void (*help)(void)) {
    static const struct option options[] = {{"db", required_argument, 0, 'd'},
                                            {"backend", required_argument, 0, 'b'},
                                            {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        switch (c) {
        case 'd': *db = optarg; break;
        case 'b': *backend = optarg; break;
        case 'h': help(); return -1;
        case ':': return cli_usage_error(cmd, "option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    return EXIT_OK;
}

static void devices_help(void) {
    printf("usage: tessera devices [--backend cpu|cuda] [--db PATH]\n\n"
           "Lists each backend's device with its descriptor and calibrated ceilings,\n"
           "or why the backend is unavailable here.\n");
}

int cmd_devices(int argc, char **argv) {
    const char *db = NULL, *backend = NULL;
    int rc = parse_db_backend("devices", argc, argv, &db, &backend, devices_help);
    if (rc) return rc < 0 ? EXIT_OK : rc;
    /* Only reads the ceilings; without a database none are calibrated. */
    tess_context *ctx = NULL;
    tess_status st = tess_open_readonly(&ctx, db);
    if (st && st != TESS_ERR_NOTFOUND) return cli_fail_status(st);
    bool known = !backend;
    tess_device_info d;
    for (int i = 0; (st = tess_device_info_at(ctx, i, &d)) == TESS_OK; i++) {
        if (backend && strcmp(backend, d.backend) != 0) continue;
        known = true;
        if (d.available)
            print_device(&d);
        else
            printf("%s: unavailable: %s\n", d.backend, d.why);
    }
    tess_close(ctx);
    if (st != TESS_ERR_NOTFOUND) return cli_fail_status(st);
    return known ? EXIT_OK : cli_usage_error("devices", "unknown backend '%s' (cpu, cuda)", backend);
}

static void calibrate_help(void) {
    printf("usage: tessera calibrate [--backend cpu|cuda] [--db PATH]\n\n"
           "Measures the device's ceilings with tessera's own kernels and stores them:\n"
           "copy bandwidth (bytes read + written), read-only bandwidth, fp32 and fp64 FMA\n"
           "rates, and the tensor-core rates for bf16, f16 and fp8 where the device has them.\n");
}

int cmd_calibrate(int argc, char **argv) {
    const char *db = NULL, *backend = NULL;
    int rc = parse_db_backend("calibrate", argc, argv, &db, &backend, calibrate_help);
    if (rc) return rc < 0 ? EXIT_OK : rc;
    tess_context *ctx;
    tess_status st = tess_open(&ctx, db);
    if (st) return cli_fail_status(st);
    tess_device_info d;
    st = tess_device_calibrate(ctx, backend, &d);
    if (!st) {
        printf("%s\n", d.key);
        print_ceilings(&d);
    }
    tess_close(ctx);
    return st ? cli_fail_status(st) : EXIT_OK;
}
