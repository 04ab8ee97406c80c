/* cli.c - shared pieces of the command-line tool. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "core/op.h"
#include "core/task.h"
#include "transfer/builtin.h"

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
    tess_status st = tess_register_builtin();
    if (!st) st = tess_op_check(t->op);
    if (st) return cli_fail_status(st);
    const tess_op *op = tess_op_find(t->op);
    const char *text = t->shape_text ? t->shape_text : op->default_shape;
    if (tess_shape_parse(text, t->shape, &t->ndim) != TESS_OK)
        return cli_usage_error(cmd, "--shape: %s", tess_errmsg());
    tess_shape_format(t->shape, t->ndim, t->shape_buf, sizeof t->shape_buf);
    t->shape_text = t->shape_buf;
    return EXIT_OK;
}

void cli_print_config_json(const char *config) {
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", config);
    bool first = true;
    for (char *save = NULL, *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) continue;
        *eq = '\0';
        const char *value = eq + 1;
        char *end;
        strtod(value, &end);
        bool numeric = *value && !*end;
        printf(numeric ? "%s\"%s\": %s" : "%s\"%s\": \"%s\"", first ? "" : ", ", item, value);
        first = false;
    }
}
