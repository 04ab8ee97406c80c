/* spec_buf.h - a growable text buffer for the printer and the code
 * generators. Appends never fail loudly: the first failure is remembered and
 * reported once by tess_sbuf_finish. */
#ifndef TESS_SPEC_BUF_H
#define TESS_SPEC_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include "core/tessera.h"

typedef struct tess_sbuf {
    char *data;
    size_t len, cap;
    bool failed;
} tess_sbuf;

void tess_sbuf_printf(tess_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tess_sbuf_puts(tess_sbuf *b, const char *s);
/* Hands the text to *out (the caller frees it), or fails if an append did. */
tess_status tess_sbuf_finish(tess_sbuf *b, char **out);
void tess_sbuf_free(tess_sbuf *b);

#endif
