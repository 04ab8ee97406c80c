/* spec_buf.c - a growable text buffer. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "spec_buf.h"

static bool reserve(tess_sbuf *b, size_t extra) {
    if (b->failed) return false;
    if (b->len + extra + 1 <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + extra + 1) cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) {
        b->failed = true;
        return false;
    }
    b->data = d;
    b->cap = cap;
    return true;
}

void tess_sbuf_printf(tess_sbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(b, (size_t)n)) {
        b->failed = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void tess_sbuf_puts(tess_sbuf *b, const char *s) {
    size_t n = strlen(s);
    if (!reserve(b, n)) return;
    memcpy(b->data + b->len, s, n + 1);
    b->len += n;
}

tess_status tess_sbuf_finish(tess_sbuf *b, char **out) {
    *out = NULL;
    if (b->failed || !reserve(b, 0)) {
        tess_sbuf_free(b);
        return tess_error(TESS_ERR_NOMEM, "out of memory writing text");
    }
    b->data[b->len] = '\0';
    *out = b->data;
    memset(b, 0, sizeof *b);
    return TESS_OK;
}

void tess_sbuf_free(tess_sbuf *b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}
