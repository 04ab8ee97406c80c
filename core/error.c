/* error.c - per-thread error messages. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "error.h"

static _Thread_local char last_message[2048];

tess_status tess_error(tess_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    return st;
}

tess_status tess_error_context(tess_status st, const char *fmt, ...) {
    char prefix[512], old[sizeof last_message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, last_message, sizeof old);
    snprintf(last_message, sizeof last_message, "%s: %.1500s", prefix, old);
    return st;
}

void tess_error_clear(void) { last_message[0] = '\0'; }

const char *tess_errmsg(void) { return last_message; }

const char *tess_status_name(tess_status st) {
    static const char *const names[] = {
        [TESS_OK] = "ok",
        [TESS_ERR_ARG] = "invalid argument",
        [TESS_ERR_NOMEM] = "out of memory",
        [TESS_ERR_IO] = "i/o error",
        [TESS_ERR_DB] = "database error",
        [TESS_ERR_FORMAT] = "malformed input",
        [TESS_ERR_NOTFOUND] = "not found",
        [TESS_ERR_UNAVAILABLE] = "unavailable",
        [TESS_ERR_COMPILE] = "compile error",
        [TESS_ERR_RUNTIME] = "runtime error",
        [TESS_ERR_VERIFY] = "wrong result",
        [TESS_ERR_INTERNAL] = "internal error",
    };
    if ((unsigned)st < sizeof names / sizeof names[0] && names[st]) return names[st];
    return "unknown status";
}
