/* main.c - the tessera command-line tool: a table of subcommands. */
#include <stdio.h>
#include <string.h>
#include "cli.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"tune", cmd_tune, "tune an operator on a shape and record every result"},
    {"tune-all", cmd_tune_all, "tune every task of a list file, resumably, and write the kernel library"},
    {"record", cmd_record, "measure a whole space (or a large sample) and export it for replay"},
    {"run", cmd_run, "run a stencil for N time steps with its tuned kernel (netCDF in and out)"},
    {"show", cmd_show, "print the best (or a given) config and its generated source"},
    {"ops", cmd_ops, "list the operators"},
    {"strategies", cmd_strategies, "list the search strategies"},
    {"devices", cmd_devices, "list the backends' devices and their calibrated ceilings"},
    {"calibrate", cmd_calibrate, "measure and store a device's copy bandwidth and FMA rate"},
    {"db", cmd_db, "export, import or list the records database"},
    {"cache", cmd_cache, "the compiled-kernel cache: its size, and cleaning it"},
    {"bench", tess_cmd_bench, "benchmarks of tessera itself (bench search: strategies on recorded spaces)"},
};

static void usage(FILE *f) {
    fprintf(f,
            "usage: tessera COMMAND [options]   (tessera COMMAND --help for its options)\n\n"
            "tessera auto-tunes tiled kernels: it generates, compiles, verifies and times\n"
            "candidate configs on the real hardware and keeps every result in a records\n"
            "database ($TESSERA_DB, or --db). Stencils of your own: NAME.stencil files in\n"
            "the directories of $TESSERA_STENCIL_PATH (separated by ':').\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nexit status: 0 success, 1 failure, 2 usage error, 130 tune or record stopped by Ctrl-C\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("tessera %s\n", TESSERA_VERSION);
        return EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "tessera: error: unknown command '%s' (see tessera --help)\n", argv[1]);
    return EXIT_USAGE;
}
