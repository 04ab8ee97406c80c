/* cmd_db.c - `tessera db export|import|list`. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "core/error.h"
#include "core/records.h"
#include "transfer/library.h"
#include "transfer/request.h"

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
           "list    one line per task and device: evaluations, best time and config\n");
}

/* Device keys in the records that contain `text` (an exact key wins). */
typedef struct device_match {
    const char *text;
    char key[TESS_KEY_MAX];
    int matches;
    bool exact;
} device_match;

static int match_device(const tess_task_summary *s, void *user) {
    device_match *m = user;
    if (m->exact || !strstr(s->device_key, m->text) || strcmp(s->device_key, m->key) == 0) return 0;
    m->exact = strcmp(s->device_key, m->text) == 0;
    if (m->exact) m->matches = 0;
    snprintf(m->key, sizeof m->key, "%s", s->device_key);
    m->matches++;
    return 0;
}

static tess_status resolve_device(tess_records *r, const char *text, char *key, size_t len) {
    device_match m = {.text = text};
    tess_status st = tess_records_list(r, match_device, &m);
    if (st) return st;
    if (m.matches == 0) return tess_error(TESS_ERR_NOTFOUND, "no device in the records matches '%s'", text);
    if (m.matches > 1) return tess_error(TESS_ERR_ARG, "'%s' matches several devices; give more of the key", text);
    snprintf(key, len, "%s", m.key);
    return TESS_OK;
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int print_summary(const tess_task_summary *s, void *user) {
    (void)user;
    if (isfinite(s->best_ms) && s->ok)
        printf("%-32s %-40s %6d %6d %12.4g  %s\n", s->task_key, s->device_key, s->evaluations, s->ok,
               s->best_ms, s->best_config);
    else
        printf("%-32s %-40s %6d %6d %12s\n", s->task_key, s->device_key, s->evaluations, s->ok, "-");
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
    tess_context *ctx;
    tess_status st = tess_open(&ctx, db);
    if (st) return cli_fail_status(st);
    tess_records *r = tess_context_records(ctx);
    int count = 0;
    if (strcmp(action, "list") == 0) {
        printf("%-32s %-40s %6s %6s %12s  %s\n", "task", "device", "evals", "ok", "best ms", "best config");
        st = tess_records_list(r, print_summary, NULL);
    } else if (is_import) {
        const char *path = argv[argc - 1];
        FILE *in = fopen(path, "r");
        if (!in) {
            st = tess_error(TESS_ERR_IO, "cannot open %s: %s", path, strerror(errno));
        } else {
            char head[4096] = "";
            size_t got = fread(head, 1, sizeof head - 1, in);
            head[got] = '\0';
            rewind(in);
            st = tess_library_detect(head) ? tess_library_import(r, in, path, &count)
                                           : tess_records_import_jsonl(r, in, path, &count);
            fclose(in);
            if (!st) fprintf(stderr, "imported %d results from %s\n", count, path);
        }
    } else if (output && ends_with(output, ".json")) {
        char key[TESS_KEY_MAX];
        st = device ? resolve_device(r, device, key, sizeof key)
                    : tess_error(TESS_ERR_ARG, "a kernel library is per device: add --device KEY");
        FILE *out = st ? NULL : fopen(output, "w");
        if (!st && !out) st = tess_error(TESS_ERR_IO, "cannot write %s: %s", output, strerror(errno));
        if (out) {
            st = tess_library_export(r, key, out, &count);
            if (fclose(out) != 0 && !st) st = tess_error(TESS_ERR_IO, "cannot write %s", output);
            if (!st) fprintf(stderr, "exported a library of %d kernels for %s to %s\n", count, key, output);
        }
    } else {
        FILE *out = output ? fopen(output, "w") : stdout;
        if (!out) {
            st = tess_error(TESS_ERR_IO, "cannot write %s: %s", output, strerror(errno));
        } else {
            st = tess_records_export_jsonl(r, out, task, device, &count);
            if (output && fclose(out) != 0 && !st) st = tess_error(TESS_ERR_IO, "cannot write %s", output);
            if (!st && output) fprintf(stderr, "exported %d results to %s\n", count, output);
        }
    }
    tess_close(ctx);
    return st ? cli_fail_status(st) : EXIT_OK;
}
