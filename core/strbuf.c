/* strbuf.c - a growing string for code generators. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "strbuf.h"

static bool reserve(tess_strbuf *b, size_t extra) {
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

void tess_strbuf_printf(tess_strbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void tess_strbuf_puts(tess_strbuf *b, const char *text) {
    size_t n = strlen(text);
    if (!reserve(b, n)) return;
    memcpy(b->data + b->len, text, n + 1);
    b->len += n;
}

tess_status tess_strbuf_finish(tess_strbuf *b, char **out) {
    if (b->failed || !b->data) {
        tess_strbuf_free(b);
        return tess_error(TESS_ERR_NOMEM, "generating source");
    }
    *out = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    return TESS_OK;
}

void tess_strbuf_free(tess_strbuf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = false;
}
