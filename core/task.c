/* task.c - shapes, tasks and their keys. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "task.h"

tess_status tess_shape_parse(const char *text, int64_t *shape, int *ndim) {
    if (!text || !*text) return tess_error(TESS_ERR_ARG, "empty shape (expected e.g. 256x256x256)");
    int n = 0;
    const char *p = text;
    for (;;) {
        if (n == TESS_MAX_DIMS)
            return tess_error(TESS_ERR_ARG, "shape '%s' has more than %d dimensions", text, TESS_MAX_DIMS);
        if (*p < '0' || *p > '9')
            return tess_error(TESS_ERR_ARG, "malformed shape '%s' at column %d (expected e.g. 256x256x256)",
                              text, (int)(p - text) + 1);
        errno = 0;
        char *end;
        long long v = strtoll(p, &end, 10);
        if (errno || v < 1 || v > (1LL << 31))
            return tess_error(TESS_ERR_ARG, "shape '%s': extent at column %d out of range 1..2^31",
                              text, (int)(p - text) + 1);
        shape[n++] = v;
        p = end;
        if (*p == '\0') break;
        if (*p != 'x' && *p != 'X')
            return tess_error(TESS_ERR_ARG, "malformed shape '%s' at column %d (expected e.g. 256x256x256)",
                              text, (int)(p - text) + 1);
        p++;
    }
    *ndim = n;
    return TESS_OK;
}

tess_status tess_shape_format(const int64_t *shape, int ndim, char *buf, size_t len) {
    size_t used = 0;
    if (len) buf[0] = '\0';
    for (int i = 0; i < ndim; i++) {
        int w = snprintf(buf + used, len - used, i ? "x%lld" : "%lld", (long long)shape[i]);
        if (w < 0 || (size_t)w >= len - used) return tess_error(TESS_ERR_ARG, "shape text too long");
        used += (size_t)w;
    }
    return TESS_OK;
}

int64_t tess_shape_elements(const int64_t *shape, int ndim) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    return n;
}

tess_status tess_task_init(tess_task *t, const char *op, tess_dtype dtype, const int64_t *shape,
                           int ndim) {
    memset(t, 0, sizeof *t);
    if (!op || strlen(op) >= sizeof t->op) return tess_error(TESS_ERR_ARG, "bad operator name");
    if (ndim < 1 || ndim > TESS_MAX_DIMS)
        return tess_error(TESS_ERR_ARG, "shape rank %d out of range 1..%d", ndim, TESS_MAX_DIMS);
    strcpy(t->op, op);
    t->dtype = dtype;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 1) return tess_error(TESS_ERR_ARG, "shape extent %d is %lld", i, (long long)shape[i]);
        t->shape[i] = shape[i];
    }
    return TESS_OK;
}

tess_status tess_task_key(const tess_task *t, char *buf, size_t len) {
    char shape[128];
    tess_status st = tess_shape_format(t->shape, t->ndim, shape, sizeof shape);
    if (st) return st;
    int w = snprintf(buf, len, "%s:%s:%s", t->op, tess_dtype_name(t->dtype), shape);
    if (w < 0 || (size_t)w >= len) return tess_error(TESS_ERR_ARG, "task key too long");
    return TESS_OK;
}

tess_status tess_task_parse_key(const char *key, tess_task *t) {
    char op[TESS_OP_NAME_MAX], dtype[16], shape_text[128];
    if (sscanf(key, "%31[^:]:%15[^:]:%127s", op, dtype, shape_text) != 3)
        return tess_error(TESS_ERR_FORMAT, "malformed task key '%s' (expected op:dtype:shape)", key);
    tess_dtype dt;
    int64_t shape[TESS_MAX_DIMS];
    int ndim;
    tess_status st = tess_dtype_parse(dtype, &dt);
    if (!st) st = tess_shape_parse(shape_text, shape, &ndim);
    if (!st) st = tess_task_init(t, op, dt, shape, ndim);
    if (st) return tess_error_context(TESS_ERR_FORMAT, "task key '%s'", key);
    return TESS_OK;
}
