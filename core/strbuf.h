/* strbuf.h - a growing string for code generators. */
#ifndef TESS_STRBUF_H
#define TESS_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include "tessera.h"

typedef struct tess_strbuf {
    char *data;
    size_t len, cap;
    bool failed;        /* an allocation failed; the text is incomplete */
} tess_strbuf;

void tess_strbuf_printf(tess_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tess_strbuf_puts(tess_strbuf *b, const char *text);
/* Hands the text over (caller frees) or reports the failed allocation. */
tess_status tess_strbuf_finish(tess_strbuf *b, char **out);
void tess_strbuf_free(tess_strbuf *b);

#endif
