/* result.c - candidate results. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "result.h"

void tess_result_init(tess_result *r, const tess_config *c) {
    memset(r, 0, sizeof *r);
    if (c) r->config = *c;
    r->status = TESS_RESULT_RUNTIME_ERROR;
    r->time_ms = r->min_ms = r->max_ms = INFINITY;
    r->metrics = (tess_kernel_metrics){-1, -1, -1, -1, -1, -1, -1};
}

void tess_result_fail(tess_result *r, tess_outcome status, const char *fmt, ...) {
    r->status = status;
    r->time_ms = r->min_ms = r->max_ms = INFINITY;
    r->metrics.max_error = -1;   /* what verified before the failure says nothing of the result */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
}
