/* error.h - status codes with a per-thread message, as sqlite3_errmsg does. */
#ifndef TESS_ERROR_H
#define TESS_ERROR_H

#include "tessera.h"

/* Records a formatted message for the calling thread and returns st, so that
 * failures read: `return tess_error(TESS_ERR_IO, "cannot open %s: %s", ...)`. */
tess_status tess_error(tess_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prefixes the current message with context: "loading x: <old message>". */
tess_status tess_error_context(tess_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void tess_error_clear(void);

#endif
