/* cmd_list.c - `tessera ops`, `strategies`, `devices` and `calibrate`. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "core/error.h"
#include "core/backend.h"
#include "core/records.h"
#include "core/runner.h"
#include "core/strategy.h"
#include "transfer/builtin.h"
#include "transfer/request.h"

/* Commands without options but --help. */
static int no_options(const char *cmd, int argc, char **argv, const char *usage) {
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("%s", usage);
        return -1;
    }
    if (argc > 1) return cli_usage_error(cmd, "unexpected argument '%s'", argv[1]);
    tess_status st = tess_register_builtin();
    return st ? cli_fail_status(st) : EXIT_OK;
}

int cmd_ops(int argc, char **argv) {
    int rc = no_options("ops", argc, argv, "usage: tessera ops\n\nLists the operators, their family, backends, default shape and buffers.\n");
    if (rc) return rc < 0 ? EXIT_OK : rc;
    tess_status st = tess_op_check(NULL);   /* a user stencil file that failed */
    if (st) return cli_fail_status(st);
    printf("%-12s %-11s %-10s %-14s %s\n", "operator", "family", "backends", "default shape", "summary");
    for (int i = 0; i < tess_op_count(); i++) {
        const tess_op *op = tess_op_at(i);
        char backends[64] = "";
        for (int b = 0; b < op->nimpl; b++)
            snprintf(backends + strlen(backends), sizeof backends - strlen(backends), "%s%s",
                     backends[0] ? "," : "", op->impl[b].backend);
        printf("%-12s %-11s %-10s %-14s %s\n", op->name, op->family, backends, op->default_shape, op->summary);
    }
    return EXIT_OK;
}

int cmd_strategies(int argc, char **argv) {
    int rc = no_options("strategies", argc, argv, "usage: tessera strategies\n\nLists the search strategies.\n");
    if (rc) return rc < 0 ? EXIT_OK : rc;
    const char *dflt = tess_strategy_default_name();
    for (int i = 0; i < tess_strategy_count(); i++) {
        const tess_strategy_ops *s = tess_strategy_at(i);
        printf("%-11s %s%s\n", s->name, s->summary, strcmp(s->name, dflt) == 0 ? " (default)" : "");
    }
    return EXIT_OK;
}

/* One line per ceiling: its value and when it was measured, "not present"
 * for a unit the device lacks, or "not calibrated". */
static void print_ceilings(const tess_device *d) {
    for (int k = 0; k < TESS_CEILING_COUNT; k++) {
        const tess_ceiling *c = &d->ceiling[k];
        printf("  %-22s ", tess_ceiling_label((tess_ceiling_kind)k));
        if (c->value > 0)
            printf("%10.1f %-7s%s%s\n", c->value, tess_ceiling_is_bandwidth((tess_ceiling_kind)k) ? "GB/s" : "GFLOP/s",
                   c->calibrated_at[0] ? " calibrated " : "", c->calibrated_at);
        else if (tess_ceiling_measured(c))
            printf("not present\n");
        else
            printf("not calibrated (tessera calibrate --backend %s)\n", d->backend);
    }
}

static void print_device(const tess_device *d, const char *key) {
    printf("%s\n  name %s, arch %s, %d %s", key, d->name, d->arch, d->units,
           strcmp(d->backend, "cpu") == 0 ? "cores" : "SMs");
    if (d->cc_major) printf(", compute capability %d.%d", d->cc_major, d->cc_minor);
    printf("\n");
    if (d->clock_mhz > 0) printf("  clock %.0f MHz, memory clock %.0f MHz, bus %d bits\n", d->clock_mhz, d->mem_clock_mhz, d->mem_bus_width);
    printf("  memory %.1f GiB, %s %.1f MiB\n", (double)d->mem_bytes / (1 << 30),
           strcmp(d->backend, "cpu") == 0 ? "caches of level 2 and up" : "L2", (double)d->l2_bytes / (1 << 20));
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
    printf("usage: tessera devices [--db PATH]\n\n"
           "Lists each backend's device with its descriptor and calibrated ceilings,\n"
           "or why the backend is unavailable here.\n");
}

int cmd_devices(int argc, char **argv) {
    const char *db = NULL, *backend = NULL;
    int rc = parse_db_backend("devices", argc, argv, &db, &backend, devices_help);
    if (rc) return rc < 0 ? EXIT_OK : rc;
    tess_context *ctx;
    tess_status st = tess_open(&ctx, db);
    if (st) return cli_fail_status(st);
    for (int i = 0; i < tess_backend_count(); i++) {
        const tess_backend_ops *be = tess_backend_at(i);
        if (backend && strcmp(backend, be->name) != 0) continue;
        tess_device d;
        char key[TESS_KEY_MAX];
        if (be->probe(&d) != TESS_OK) {
            printf("%s: unavailable: %s\n", be->name, tess_errmsg());
            continue;
        }
        tess_device_key(&d, key, sizeof key);
        tess_records_load_ceilings(tess_context_records(ctx), &d);
        print_device(&d, key);
    }
    tess_close(ctx);
    return EXIT_OK;
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
    const tess_backend_ops *be = NULL;
    tess_device d;
    if (backend) {
        be = tess_backend_find(backend);
        if (!be) {
            tess_close(ctx);
            return cli_usage_error("calibrate", "unknown backend '%s'", backend);
        }
        st = be->probe(&d);
    } else {
        st = tess_error(TESS_ERR_UNAVAILABLE, "no backend available");
        for (int i = tess_backend_count() - 1; i >= 0 && st; i--) {
            be = tess_backend_at(i);
            st = be->probe(&d);
        }
    }
    double rates[TESS_CEILING_COUNT];
    if (!st) st = tess_backend_calibrate_isolated(be, &d, rates);
    if (!st) st = tess_records_set_ceilings(tess_context_records(ctx), &d, rates);
    if (!st) {
        char key[TESS_KEY_MAX];
        tess_device_key(&d, key, sizeof key);
        printf("%s\n", key);
        print_ceilings(&d);
    }
    tess_close(ctx);
    return st ? cli_fail_status(st) : EXIT_OK;
}
