/* cmd_db.c - `tessera db export|import|list`. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

static void help(void) {
    printf("usage: tessera db export [-o FILE] [--task KEY] [--device KEY] [--db PATH]\n"
           "       tessera db export --device KEY -o LIBRARY.json [--db PATH]\n"
           "       tessera db import FILE [--db PATH]\n"
           "       tessera db list [--db PATH]\n\n"
           "export  writes the records as JSON lines (one result per line, with its task,\n"
           "        device descriptor and config) to FILE or standard output; to a .json file\n"
           "        it writes a kernel library instead: the best config of every task tuned on\n"
           "        the device (KEY, or any unique part of it), its descriptor and the version\n"
           "import  merges a JSON-lines file or a kernel library; results already present are\n"
           "        skipped. A library's entries belong to its device: on the same hardware they\n"
           "        are exact hits, elsewhere priors for warm starts\n"
           "list    one line per task and device: evaluations, best time and config\n\n"
           "--device KEY: the device's key as db list shows it, or any unique part of it.\n"
           "list and export only read: they never create a database, and they read one that\n"
           "is read-only (an installed kernel library, say) or that a tuner is writing.\n");
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int print_task(const tess_db_task *t, void *user) {
    (void)user;
    if (isfinite(t->best_ms) && t->ok)
        printf("%-32s %-40s %6d %6d %12.4g  %s\n", t->task, t->device, t->evaluations, t->ok, t->best_ms,
               t->best_config);
    else
        printf("%-32s %-40s %6d %6d %12s\n", t->task, t->device, t->evaluations, t->ok, "-");
    return 0;
}

int cmd_db(int argc, char **argv) {
    static const struct option options[] = {
        {"db", required_argument, 0, 'd'}, {"output", required_argument, 0, 'o'},
        {"task", required_argument, 0, 't'}, {"device", required_argument, 0, 'v'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *db = NULL, *output = NULL, *task = NULL, *device = NULL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":ho:", options, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'o': output = optarg; break;
        case 't': task = optarg; break;
        case 'v': device = optarg; break;
        case 'h': help(); return EXIT_OK;
        case ':': return cli_usage_error("db", "option %s needs a value", argv[optind - 1]);
        default: return cli_usage_error("db", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc) return cli_usage_error("db", "missing action (export, import or list)");
    const char *action = argv[optind];
    int nargs = argc - optind - 1;
    bool is_import = strcmp(action, "import") == 0;
    if (strcmp(action, "export") != 0 && !is_import && strcmp(action, "list") != 0)
        return cli_usage_error("db", "unknown action '%s' (export, import or list)", action);
    if (is_import ? nargs != 1 : nargs != 0)
        return cli_usage_error("db", is_import ? "import takes one file" : "unexpected argument '%s'",
                               argv[argc - 1]);
    bool is_export = strcmp(action, "export") == 0, library = output && ends_with(output, ".json");
    if (!is_export && (output || task || device))
        return cli_usage_error("db", "%s belongs to db export", output ? "--output" : task ? "--task" : "--device");
    if (library && !device) return cli_usage_error("db", "a kernel library is per device: add --device KEY");
    if (library && task) return cli_usage_error("db", "a kernel library holds every task of its device: drop --task");
    const char *path = argv[argc - 1];
    if (is_import && access(path, R_OK) != 0) {   /* before the database is made */
        fprintf(stderr, "tessera: error: cannot open %s: %s\n", path, strerror(errno));
        return EXIT_FAIL;
    }
    /* list and export only read: the database is opened read-only and never created */
    tess_context *ctx;
    tess_status st = is_import ? tess_open(&ctx, db) : tess_open_readonly(&ctx, db);
    if (st) return cli_fail_status(st);
    int rc = EXIT_OK;
    char key[TESS_KEY_LEN];
    if (strcmp(action, "list") == 0) {
        printf("%-32s %-40s %6s %6s %12s  %s\n", "task", "device", "evals", "ok", "best ms", "best config");
        st = tess_db_list(ctx, print_task, NULL);
    } else if (is_import) {
        int count = 0;
        st = tess_db_import(ctx, path, &count);
        if (!st) fprintf(stderr, "imported %d results from %s\n", count, path);
    } else {
        if (device) st = tess_db_find_device(ctx, device, key, sizeof key);
        if (!st) rc = cli_export(ctx, output, task, device ? key : NULL, library);
    }
    if (st) rc = cli_fail_status(st);
    tess_close(ctx);
    return rc;
}
