/*
 * records_json.c - JSON lines export and import of stored results, one
 * result per line:
 *
 *   {"task": "heat3d:f32:256x256x256", "family": "stencil",
 *    "device": {"key": ..., "backend": ..., every descriptor field,
 *               "copy_gbps": 4100.5, "copy_gbps_at": "2025-01-31T11:00:00.000Z", ...},
 *    "config": "block_x=32,block_y=4", "params": {"block_x": 32, "block_y": 4},
 *    "status": "ok", "message": "", "time_ms": 1.25, ...,
 *    "metrics": {"registers": 32, ...}, "strategy": "random",
 *    "created_at": "2025-01-31T12:00:00.123Z"}
 *
 * Non-finite numbers are written as null. "params" is the config text
 * parsed for other tools; an import reads the config text only. Imported
 * results belong to no run (run_id NULL); a device already stored keeps its
 * descriptor and ceilings. Files written before the ceilings per unit name
 * the copy bandwidth "ceiling_gbps" and the fp32 FMA rate "ceiling_gflops".
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "error.h"
#include "records_internal.h"

/* ---- export --------------------------------------------------------------- */

/* A JSON string for text that may not be UTF-8 (compiler logs): if it is
 * not, bytes outside ASCII become '?'. */
static json_t *json_text(const char *text) {
    json_t *j = json_string(text);
    if (j) return j;
    char *ascii = strdup(text);
    if (!ascii) return NULL;
    for (char *p = ascii; *p; p++)
        if ((unsigned char)*p >= 0x80) *p = '?';
    j = json_string(ascii);
    free(ascii);
    return j;
}

static json_t *column_to_json(const tess_column *c, const void *base) {
    const char *field = (const char *)base + c->offset;
    switch (c->kind) {
    case TESS_COL_TEXT: return json_text(field);
    case TESS_COL_INT: return json_integer(*(const int *)field);
    case TESS_COL_INT64: return json_integer(*(const int64_t *)field);
    case TESS_COL_REAL:
    case TESS_COL_MS: {
        double v = *(const double *)field;
        return isfinite(v) ? json_real(v) : json_null();
    }
    case TESS_COL_OUTCOME: return json_string(tess_outcome_name(*(const tess_outcome *)field));
    }
    return NULL;
}

/* Adds the columns' fields to obj, metrics under obj's "metrics" object
 * (created at the first metric). Non-zero when out of memory. */
static int columns_to_json(json_t *obj, const tess_column *cols, int n, const void *base) {
    json_t *metrics = NULL;
    int failed = 0;
    for (int i = 0; i < n; i++) {
        json_t *target = obj;
        if (cols[i].flags & TESS_COL_METRIC) {
            if (!metrics) {
                metrics = json_object();
                failed |= json_object_set_new(obj, "metrics", metrics);
            }
            target = metrics;
        }
        failed |= json_object_set_new(target, cols[i].name, column_to_json(&cols[i], base));
    }
    return failed;
}

/* A config value as a JSON number when it reads as one, else as a string. */
static json_t *param_value(const char *text) {
    char *end;
    errno = 0;
    long long i = strtoll(text, &end, 10);
    if (*text && !*end && !errno) return json_integer(i);
    double d = strtod(text, &end);
    if (*text && !*end && isfinite(d)) return json_real(d);
    return json_text(text);
}

/* {"block_x": 32, ...} from "block_x=32,..."; items without '=' are left out. */
static json_t *config_params(const char *config) {
    json_t *params = json_object();
    char *copy = strdup(config), *save = NULL;
    if (!params || !copy) {
        json_decref(params);
        free(copy);
        return NULL;
    }
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) continue;
        *eq = '\0';
        json_object_set_new(params, item, param_value(eq + 1));
    }
    free(copy);
    return params;
}

static json_t *device_to_json(const char *key, const tess_device *d) {
    json_t *obj = json_object();
    if (!obj) return NULL;
    int failed = json_object_set_new(obj, "key", json_text(key));
    failed |= columns_to_json(obj, tess_device_columns, tess_device_ncolumns, d);
    for (int k = 0; k < TESS_CEILING_COUNT; k++) {
        const tess_ceiling *c = &d->ceiling[k];
        char at[48];
        snprintf(at, sizeof at, "%s_at", tess_ceiling_name((tess_ceiling_kind)k));
        failed |= json_object_set_new(obj, tess_ceiling_name((tess_ceiling_kind)k), json_real(c->value));
        failed |= json_object_set_new(obj, at, c->calibrated_at[0] ? json_text(c->calibrated_at) : json_null());
    }
    if (failed) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}

static json_t *row_to_json(const tess_record_row *row, const tess_device *dev) {
    json_t *obj = json_object();
    if (!obj) return NULL;
    int failed = json_object_set_new(obj, "task", json_text(row->task_key));
    failed |= json_object_set_new(obj, "family", json_text(row->family));
    failed |= json_object_set_new(obj, "device", device_to_json(row->device_key, dev));
    failed |= json_object_set_new(obj, "config", json_text(row->config));
    failed |= json_object_set_new(obj, "params", config_params(row->config));
    failed |= columns_to_json(obj, tess_result_columns, tess_result_ncolumns, row);
    if (failed) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}

typedef struct export_state {
    tess_records *r;
    FILE *out;
    int count;
    tess_status st;
} export_state;

static int export_row(const tess_record_row *row, void *user) {
    export_state *x = user;
    tess_device dev;
    bool found;
    x->st = tess_records_find_device(x->r, row->device_key, &dev, NULL, &found);
    if (x->st) return 1;
    if (!found) {
        x->st = tess_error(TESS_ERR_INTERNAL, "device %s of result %lld is missing", row->device_key,
                           (long long)row->id);
        return 1;
    }
    json_t *obj = row_to_json(row, &dev);
    if (!obj) {
        x->st = tess_error(TESS_ERR_NOMEM, "out of memory exporting result %lld", (long long)row->id);
        return 1;
    }
    int failed = json_dumpf(obj, x->out, JSON_COMPACT) != 0 || fputc('\n', x->out) == EOF;
    json_decref(obj);
    if (failed) {
        x->st = tess_error(TESS_ERR_IO, "writing JSON lines: %s", strerror(errno));
        return 1;
    }
    x->count++;
    return 0;
}

tess_status tess_records_export_jsonl(tess_records *r, FILE *out, const char *task_key,
                                      const char *device_key, int *count) {
    export_state x = {r, out, 0, TESS_OK};
    tess_status st = tess_records_foreach(r, task_key, device_key, export_row, &x);
    if (!st) st = x.st;
    if (!st && (fflush(out) != 0 || ferror(out)))
        st = tess_error(TESS_ERR_IO, "writing JSON lines: %s", strerror(errno));
    if (count) *count = x.count;
    return st;
}

/* ---- import --------------------------------------------------------------- */

/* Reads obj[name] into the text buffer dst; absent or null gives "" unless required. */
static tess_status text_from_json(json_t *obj, const char *name, bool required, char *dst, size_t size) {
    json_t *v = json_object_get(obj, name);
    if (!v || json_is_null(v)) {
        dst[0] = '\0';
        return required ? tess_error(TESS_ERR_FORMAT, "missing \"%s\"", name) : TESS_OK;
    }
    if (!json_is_string(v)) return tess_error(TESS_ERR_FORMAT, "\"%s\" must be a string", name);
    if (json_string_length(v) >= size)
        return tess_error(TESS_ERR_FORMAT, "\"%s\" is longer than %zu characters", name, size - 1);
    memcpy(dst, json_string_value(v), json_string_length(v) + 1);
    return TESS_OK;
}

static tess_status column_from_json(const tess_column *c, json_t *v, void *base) {
    char *field = (char *)base + c->offset;
    if (!v || json_is_null(v)) {
        tess_column_set_unknown(c, base);
        return c->flags & TESS_COL_REQUIRED ? tess_error(TESS_ERR_FORMAT, "missing \"%s\"", c->name)
                                            : TESS_OK;
    }
    switch (c->kind) {
    case TESS_COL_TEXT:
        if (!json_is_string(v)) break;
        if (json_string_length(v) >= c->size)
            return tess_error(TESS_ERR_FORMAT, "\"%s\" is longer than %zu characters", c->name, c->size - 1);
        memcpy(field, json_string_value(v), json_string_length(v) + 1);
        return TESS_OK;
    case TESS_COL_INT:
        if (!json_is_integer(v) || json_integer_value(v) < INT_MIN || json_integer_value(v) > INT_MAX)
            break;
        *(int *)field = (int)json_integer_value(v);
        return TESS_OK;
    case TESS_COL_INT64:
        if (!json_is_integer(v)) break;
        *(int64_t *)field = json_integer_value(v);
        return TESS_OK;
    case TESS_COL_REAL:
    case TESS_COL_MS:
        if (!json_is_number(v)) break;
        *(double *)field = json_number_value(v);
        return TESS_OK;
    case TESS_COL_OUTCOME:
        if (!json_is_string(v)) break;
        return tess_outcome_parse(json_string_value(v), (tess_outcome *)field);
    }
    static const char *const expected[] = {
        [TESS_COL_TEXT] = "a string", [TESS_COL_INT] = "an integer", [TESS_COL_INT64] = "an integer",
        [TESS_COL_REAL] = "a number", [TESS_COL_MS] = "a number", [TESS_COL_OUTCOME] = "a status name",
    };
    return tess_error(TESS_ERR_FORMAT, "\"%s\" must be %s", c->name, expected[c->kind]);
}

/* Reads the columns from obj, metrics from metrics (which may be NULL). */
static tess_status columns_from_json(json_t *obj, json_t *metrics, const tess_column *cols, int n,
                                     void *base) {
    for (int i = 0; i < n; i++) {
        json_t *src = cols[i].flags & TESS_COL_METRIC ? metrics : obj;
        tess_status st = column_from_json(&cols[i], src ? json_object_get(src, cols[i].name) : NULL, base);
        if (st) return st;
    }
    return TESS_OK;
}

/* Ceiling k from its keys, or from its name before the ceilings per unit
 * (legacy: NULL when it had none). */
static tess_status ceiling_from_json(json_t *obj, tess_ceiling_kind k, const char *legacy, tess_ceiling *out) {
    const char *name = tess_ceiling_name(k);
    json_t *v = json_object_get(obj, name);
    if (!v && legacy) name = legacy, v = json_object_get(obj, legacy);
    memset(out, 0, sizeof *out);
    if (v && !json_is_null(v)) {
        if (!json_is_number(v) || !(json_number_value(v) >= 0))
            return tess_error(TESS_ERR_FORMAT, "\"device\".\"%s\" must be a number >= 0", name);
        out->value = json_number_value(v);
    }
    char at[48];
    snprintf(at, sizeof at, "%s_at", tess_ceiling_name(k));
    return text_from_json(obj, at, false, out->calibrated_at, sizeof out->calibrated_at);
}

static tess_status device_from_json(json_t *obj, tess_device *d, char *key, size_t key_len) {
    if (!json_is_object(obj)) return tess_error(TESS_ERR_FORMAT, "missing \"device\" object");
    memset(d, 0, sizeof *d);
    char stated[TESS_KEY_MAX];
    tess_status st = columns_from_json(obj, NULL, tess_device_columns, tess_device_ncolumns, d);
    for (int k = 0; k < TESS_CEILING_COUNT && !st; k++)
        st = ceiling_from_json(obj, (tess_ceiling_kind)k,
                               k == TESS_CEILING_COPY ? "ceiling_gbps" : k == TESS_CEILING_FMA_F32 ? "ceiling_gflops" : NULL,
                               &d->ceiling[k]);
    if (!st) st = text_from_json(obj, "key", false, stated, sizeof stated);
    if (!st) st = tess_device_key(d, key, key_len);
    if (st) return tess_error_context(TESS_ERR_FORMAT, "\"device\"");
    if (stated[0] && strcmp(stated, key) != 0)
        return tess_error(TESS_ERR_FORMAT, "device key \"%s\" does not match its descriptor (%s)", stated, key);
    return TESS_OK;
}

static tess_status row_from_json(json_t *obj, tess_task *task, tess_record_row *row) {
    memset(row, 0, sizeof *row);
    json_t *metrics = json_object_get(obj, "metrics");
    if (metrics && !json_is_object(metrics) && !json_is_null(metrics))
        return tess_error(TESS_ERR_FORMAT, "\"metrics\" must be an object");
    tess_status st = text_from_json(obj, "task", true, row->task_key, sizeof row->task_key);
    if (!st) st = tess_task_parse_key(row->task_key, task);
    if (!st) st = text_from_json(obj, "family", false, row->family, sizeof row->family);
    if (!st) st = text_from_json(obj, "config", true, row->config, sizeof row->config);
    if (!st) st = columns_from_json(obj, json_is_object(metrics) ? metrics : NULL, tess_result_columns,
                                    tess_result_ncolumns, row);
    if (!st && row->status != TESS_RESULT_OK) row->time_ms = INFINITY;   /* as when stored */
    return st;
}

/* Stores one parsed line unless the same result is already present. */
static tess_status import_object(tess_records *r, json_t *obj, bool *added) {
    tess_task task;
    tess_device dev;
    tess_record_row row;
    int64_t task_id = 0, device_id = 0;
    bool found;
    *added = false;
    if (!json_is_object(obj)) return tess_error(TESS_ERR_FORMAT, "expected a JSON object");
    tess_status st = row_from_json(obj, &task, &row);
    if (!st) st = device_from_json(json_object_get(obj, "device"), &dev, row.device_key, sizeof row.device_key);
    if (!st) st = tess_records_find_device(r, row.device_key, NULL, &device_id, &found);
    if (!st && !found) st = tess_records_put_device(r, &dev, &device_id);
    if (!st) st = tess_records_put_task(r, &task, row.family, &task_id);
    if (!st) st = tess_records_has_result(r, task_id, device_id, row.config, row.created_at, &found);
    if (st || found) return st;
    st = tess_records_insert_row(r, 0, task_id, device_id, &row);
    *added = !st;
    return st;
}

static bool blank(const char *line) {
    return line[strspn(line, " \t")] == '\0';
}

tess_status tess_records_import_jsonl(tess_records *r, FILE *in, const char *source_name,
                                      int *count) {
    const char *src = source_name ? source_name : "(input)";
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, imported = 0;
    if (count) *count = 0;
    tess_status st = tess_records_begin(r);
    ssize_t len;
    while (!st && (len = getline(&line, &cap, in)) >= 0) {
        lineno++;
        /* Without the line end, jansson's column points into the line even
         * when the line stops short. */
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (blank(line)) continue;
        json_error_t err;
        json_t *obj = json_loads(line, 0, &err);
        if (!obj) {
            st = tess_error(TESS_ERR_FORMAT, "%s:%d:%d: %s", src, lineno, err.column, err.text);
            break;
        }
        bool added;
        st = import_object(r, obj, &added);
        json_decref(obj);
        if (st) st = tess_error_context(st, "%s:%d", src, lineno);
        imported += added;
    }
    if (!st && ferror(in)) st = tess_error(TESS_ERR_IO, "reading %s: %s", src, strerror(errno));
    free(line);
    if (st) {
        tess_records_rollback(r);
        return st;
    }
    st = tess_records_commit(r);
    if (!st && count) *count = imported;
    return st;
}
