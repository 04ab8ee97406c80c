/* cli.c - shared pieces of the command-line tool. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

int cli_fail(const char *what) {
    fprintf(stderr, "tessera: error: %s\n", what);
    return EXIT_FAIL;
}

int cli_fail_status(tess_status st) {
    const char *msg = tess_errmsg();
    fprintf(stderr, "tessera: error: %s\n", msg && *msg ? msg : tess_status_name(st));
    return st == TESS_ERR_ARG ? EXIT_USAGE : EXIT_FAIL;
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tessera %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see tessera %s --help)\n", cmd);
    va_end(ap);
    return EXIT_USAGE;
}

bool cli_parse_int(const char *cmd, const char *opt, const char *text, long lo, long hi, long *out) {
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi) {
        cli_usage_error(cmd, "%s expects an integer in %ld..%ld, not '%s'", opt, lo, hi, text);
        return false;
    }
    *out = v;
    return true;
}

bool cli_parse_double(const char *cmd, const char *opt, const char *text, double lo, double *out) {
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v >= lo)) {
        cli_usage_error(cmd, "%s expects a number >= %g, not '%s'", opt, lo, text);
        return false;
    }
    *out = v;
    return true;
}

int cli_task_shape(const char *cmd, cli_task *t) {
    tess_op_info op;
    tess_status st = tess_op_info_find(t->op, &op);
    if (st) return cli_fail_status(st);
    const char *text = t->shape_text ? t->shape_text : op.default_shape;
    if (tess_shape_from_text(text, t->shape, &t->ndim) != TESS_OK)
        return cli_usage_error(cmd, "--shape: %s", tess_errmsg());
    tess_shape_to_text(t->shape, t->ndim, t->shape_buf, sizeof t->shape_buf);
    t->shape_text = t->shape_buf;
    return EXIT_OK;
}

/* Ctrl-C: the search stops after the candidates in flight; a second one
 * ends the process (the handler is installed for one signal only). */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig) {
    (void)sig;
    interrupted = 1;
    static const char note[] = "\ntessera: stopping after the candidates in flight (Ctrl-C again to quit now)\n";
    ssize_t w = write(STDERR_FILENO, note, sizeof note - 1);
    (void)w;
}

void cli_catch_interrupt(tess_tune_options *opt) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    opt->cancel = &interrupted;
}

bool cli_interrupted(void) { return interrupted != 0; }

const char *cli_plural(long n, const char *word, const char *words) { return n == 1 ? word : words; }

json_t *cli_config_json(const char *config) {
    json_t *obj = json_object();
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", config);
    for (char *save = NULL, *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) continue;
        *eq = '\0';
        const char *value = eq + 1;
        char *end;
        double v = strtod(value, &end);
        bool numeric = *value && !*end;
        json_t *j = !numeric ? json_string(value) : v == (double)(json_int_t)v ? json_integer((json_int_t)v) : json_real(v);
        json_object_set_new(obj, item, j);
    }
    return obj;
}

/* Exports the records (or, with library, the device's kernel library) to
 * output, else standard output; a file left unfinished is removed. An exit code. */
int cli_export(tess_context *ctx, const char *output, const char *task, const char *device_key,
                bool library) {
    FILE *out = output ? fopen(output, "w") : stdout;
    if (!out) {
        fprintf(stderr, "tessera: error: cannot write %s: %s\n", output, strerror(errno));
        return EXIT_FAIL;
    }
    int count = 0;
    tess_status st = library ? tess_db_export_library(ctx, device_key, out, &count)
                             : tess_db_export(ctx, out, task, device_key, &count);
    bool write_failed = output ? fclose(out) != 0 : fflush(out) != 0;
    if (output && (st || write_failed)) unlink(output);
    if (st) return cli_fail_status(st);
    if (write_failed) {
        fprintf(stderr, "tessera: error: cannot write %s\n", output ? output : "standard output");
        return EXIT_FAIL;
    }
    if (library)
        fprintf(stderr, "exported a library of %d kernels for %s to %s\n", count, device_key, output);
    else if (output)
        fprintf(stderr, "exported %d results to %s\n", count, output);
    return EXIT_OK;
}

int cli_print_json(json_t *doc) {
    int rc = json_dumpf(doc, stdout, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    json_decref(doc);
    if (rc != 0) return cli_fail("cannot write the JSON output");
    putchar('\n');
    return EXIT_OK;
}
