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
    if (!op || !*op || strlen(op) >= sizeof t->op || strchr(op, ':'))
        return tess_error(TESS_ERR_ARG, "bad operator name '%s'", op ? op : "");
    if (ndim < 1 || ndim > TESS_MAX_DIMS)
        return tess_error(TESS_ERR_ARG, "shape rank %d out of range 1..%d", ndim, TESS_MAX_DIMS);
    strcpy(t->op, op);
    t->dtype = t->acc_dtype = t->out_dtype = dtype;
    t->ndim = ndim;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 1) return tess_error(TESS_ERR_ARG, "shape extent %d is %lld", i, (long long)shape[i]);
        t->shape[i] = shape[i];
    }
    return TESS_OK;
}

void tess_task_set_dtypes(tess_task *t, tess_dtype acc, tess_dtype out) {
    t->acc_dtype = acc;
    t->out_dtype = out;
}

/* Names and values live in keys between ':', ',' and '=': letters, digits
 * and the few marks a number or a word needs. */
static bool word_ok(const char *w, size_t max, bool value) {
    size_t n = strlen(w);
    if (n == 0 || n >= max) return false;
    for (const char *p = w; *p; p++) {
        bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                  *p == '_' || (value && (*p == '.' || *p == '-' || *p == '+'));
        if (!ok) return false;
    }
    return value || !(w[0] >= '0' && w[0] <= '9');
}

tess_status tess_task_name_extents(tess_task *t, const char *names) {
    char list[TESS_MAX_DIMS * TESS_DIM_NAME_MAX * 2];
    if (!names || strlen(names) >= sizeof list)
        return tess_error(TESS_ERR_ARG, "malformed extent names '%s'", names ? names : "");
    strcpy(list, names);
    char *name[TESS_MAX_DIMS + 1];
    int n = 0;
    for (char *save = NULL, *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (n == TESS_MAX_DIMS || !word_ok(w, TESS_DIM_NAME_MAX, false))
            return tess_error(TESS_ERR_ARG, "malformed extent names '%s'", names);
        name[n++] = w;
    }
    if (n < t->ndim)
        return tess_error(TESS_ERR_ARG, "%s takes at most %d extents (%s), got %d", t->op, n, names, t->ndim);
    for (int i = 0; i < t->ndim; i++) strcpy(t->dim[i], name[n - t->ndim + i]);
    return TESS_OK;
}

int64_t tess_task_extent(const tess_task *t, const char *name) {
    for (int i = 0; i < t->ndim; i++)
        if (strcmp(t->dim[i], name) == 0) return t->shape[i];
    return -1;
}

tess_status tess_task_set_attr(tess_task *t, const char *name, const char *value) {
    if (!name || !word_ok(name, TESS_ATTR_NAME_MAX, false))
        return tess_error(TESS_ERR_ARG, "malformed attribute name '%s'", name ? name : "");
    if (!value || !word_ok(value, TESS_ATTR_VALUE_MAX, true))
        return tess_error(TESS_ERR_ARG, "attribute %s: malformed value '%s' (letters, digits, . - + _; at most %d)",
                          name, value ? value : "", TESS_ATTR_VALUE_MAX - 1);
    int i = 0;
    while (i < t->nattrs && strcmp(t->attr[i].name, name) < 0) i++;
    if (i == t->nattrs || strcmp(t->attr[i].name, name) != 0) {
        if (t->nattrs == TESS_MAX_ATTRS)
            return tess_error(TESS_ERR_ARG, "more than %d attributes", TESS_MAX_ATTRS);
        memmove(&t->attr[i + 1], &t->attr[i], (size_t)(t->nattrs - i) * sizeof t->attr[0]);
        t->nattrs++;
        strcpy(t->attr[i].name, name);
    }
    strcpy(t->attr[i].value, value);
    return TESS_OK;
}

const char *tess_task_attr(const tess_task *t, const char *name) {
    for (int i = 0; i < t->nattrs; i++)
        if (strcmp(t->attr[i].name, name) == 0) return t->attr[i].value;
    return NULL;
}

tess_status tess_task_attr_int(const tess_task *t, const char *name, int64_t dflt, int64_t *out) {
    const char *v = tess_task_attr(t, name);
    *out = dflt;
    if (!v) return TESS_OK;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || *end) return tess_error(TESS_ERR_FORMAT, "attribute %s=%s is not an integer", name, v);
    *out = x;
    return TESS_OK;
}

tess_status tess_task_attr_real(const tess_task *t, const char *name, double dflt, double *out) {
    const char *v = tess_task_attr(t, name);
    *out = dflt;
    if (!v) return TESS_OK;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || *end) return tess_error(TESS_ERR_FORMAT, "attribute %s=%s is not a number", name, v);
    *out = x;
    return TESS_OK;
}

tess_status tess_task_dtypes_format(const tess_task *t, char *buf, size_t len) {
    int w;
    if (t->acc_dtype == t->dtype && t->out_dtype == t->dtype)
        w = snprintf(buf, len, "%s", tess_dtype_name(t->dtype));
    else
        w = snprintf(buf, len, "%s,%s,%s", tess_dtype_name(t->dtype), tess_dtype_name(t->acc_dtype),
                     tess_dtype_name(t->out_dtype));
    if (w < 0 || (size_t)w >= len) return tess_error(TESS_ERR_ARG, "dtype text too long");
    return TESS_OK;
}

tess_status tess_task_dtypes_parse(const char *text, tess_dtype out[TESS_ROLE_COUNT]) {
    char list[64];
    if (!text || strlen(text) >= sizeof list) return tess_error(TESS_ERR_ARG, "malformed dtypes '%s'", text ? text : "");
    strcpy(list, text);
    int n = 0;
    for (char *save = NULL, *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (n == TESS_ROLE_COUNT)
            return tess_error(TESS_ERR_ARG, "dtypes '%s': one dtype, or input,accumulate,output", text);
        tess_status st = tess_dtype_parse(w, &out[n++]);
        if (st) return st;
    }
    if (n == 1) out[1] = out[2] = out[0];
    else if (n != TESS_ROLE_COUNT)
        return tess_error(TESS_ERR_ARG, "dtypes '%s': one dtype, or input,accumulate,output", text);
    return TESS_OK;
}

/* Joins n "name" or "name=value" items with ','. */
static tess_status join(char *buf, size_t len, int n, const char *(*item)(const tess_task *, int, char *, size_t),
                        const tess_task *t) {
    size_t used = 0;
    if (len) buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        char one[TESS_ATTR_NAME_MAX + TESS_ATTR_VALUE_MAX + 2];
        int w = snprintf(buf + used, len - used, i ? ",%s" : "%s", item(t, i, one, sizeof one));
        if (w < 0 || (size_t)w >= len - used) return tess_error(TESS_ERR_ARG, "task text too long");
        used += (size_t)w;
    }
    return TESS_OK;
}

static const char *attr_item(const tess_task *t, int i, char *buf, size_t len) {
    snprintf(buf, len, "%s=%s", t->attr[i].name, t->attr[i].value);
    return buf;
}

static const char *dim_item(const tess_task *t, int i, char *buf, size_t len) {
    (void)buf, (void)len;
    return t->dim[i];
}

tess_status tess_task_attrs_format(const tess_task *t, char *buf, size_t len) {
    return join(buf, len, t->nattrs, attr_item, t);
}

tess_status tess_task_extents_format(const tess_task *t, char *buf, size_t len) {
    if (!t->dim[0][0]) {
        if (len) buf[0] = '\0';
        return TESS_OK;
    }
    return join(buf, len, t->ndim, dim_item, t);
}

tess_status tess_task_key(const tess_task *t, char *buf, size_t len) {
    char shape[160], dtypes[32], attrs[TESS_MAX_ATTRS * (TESS_ATTR_NAME_MAX + TESS_ATTR_VALUE_MAX + 1)];
    tess_status st = tess_shape_format(t->shape, t->ndim, shape, sizeof shape);
    if (!st) st = tess_task_dtypes_format(t, dtypes, sizeof dtypes);
    if (!st) st = tess_task_attrs_format(t, attrs, sizeof attrs);
    if (st) return st;
    int w = snprintf(buf, len, "%s:%s:%s%s%s", t->op, dtypes, shape, attrs[0] ? ":" : "", attrs);
    if (w < 0 || (size_t)w >= len) return tess_error(TESS_ERR_ARG, "task key too long");
    return TESS_OK;
}

tess_status tess_task_parse_key(const char *key, tess_task *t) {
    char op[TESS_OP_NAME_MAX], dtypes[64], shape_text[160], attrs[TESS_KEY_MAX];
    attrs[0] = '\0';
    int n = sscanf(key, "%31[^:]:%63[^:]:%159[^:]:%319s", op, dtypes, shape_text, attrs);
    if (n < 3) return tess_error(TESS_ERR_FORMAT, "malformed task key '%s' (expected op:dtype:shape)", key);
    tess_dtype dt[TESS_ROLE_COUNT];
    int64_t shape[TESS_MAX_DIMS];
    int ndim;
    tess_status st = tess_task_dtypes_parse(dtypes, dt);
    if (!st) st = tess_shape_parse(shape_text, shape, &ndim);
    if (!st) st = tess_task_init(t, op, dt[0], shape, ndim);
    if (!st) tess_task_set_dtypes(t, dt[1], dt[2]);
    for (char *save = NULL, *a = n == 4 ? strtok_r(attrs, ",", &save) : NULL; a && !st;
         a = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(a, '=');
        if (!eq) st = tess_error(TESS_ERR_FORMAT, "attribute '%s' without a value", a);
        else *eq = '\0', st = tess_task_set_attr(t, a, eq + 1);
    }
    if (st) return tess_error_context(TESS_ERR_FORMAT, "task key '%s'", key);
    return TESS_OK;
}

bool tess_task_equal(const tess_task *a, const tess_task *b) {
    char ka[TESS_KEY_MAX], kb[TESS_KEY_MAX];
    return tess_task_key(a, ka, sizeof ka) == TESS_OK && tess_task_key(b, kb, sizeof kb) == TESS_OK &&
           strcmp(ka, kb) == 0;
}
