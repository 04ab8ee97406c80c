/*
 * library.c - kernel libraries, built on the records' JSON-lines format:
 * an export keeps each task's best line; an import turns the entries back
 * into lines and merges them like any JSON-lines file.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "library.h"

#define LIBRARY_TAG "tessera_library"
#define LIBRARY_FORMAT 1

bool tess_library_detect(const char *head) { return strstr(head, "\"" LIBRARY_TAG "\"") != NULL; }

/* Keeps, per task, the line with the fastest ok result. */
static tess_status best_lines(FILE *lines, json_t *best_by_task, json_t **device) {
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    tess_status st = TESS_OK;
    while (!st && (len = getline(&line, &cap, lines)) > 0) {
        json_error_t err;
        json_t *obj = json_loadb(line, (size_t)len, 0, &err);
        if (!obj) {
            st = tess_error(TESS_ERR_FORMAT, "re-reading the export: %s", err.text);
            break;
        }
        const char *task = json_string_value(json_object_get(obj, "task"));
        const char *status = json_string_value(json_object_get(obj, "status"));
        json_t *time = json_object_get(obj, "time_ms");
        if (task && status && strcmp(status, "ok") == 0 && json_is_number(time)) {
            json_t *prev = json_object_get(best_by_task, task);
            if (!prev || json_number_value(time) < json_number_value(json_object_get(prev, "time_ms")))
                json_object_set(best_by_task, task, obj);
            if (!*device) *device = json_incref(json_object_get(obj, "device"));
        }
        json_decref(obj);
    }
    free(line);
    return st;
}

tess_status tess_library_export(tess_records *db, const char *device_key, FILE *out, int *count) {
    *count = 0;
    if (!device_key || !*device_key)
        return tess_error(TESS_ERR_ARG, "a kernel library is per device: name one with --device KEY");
    char *text = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&text, &size);
    if (!mem) return tess_error(TESS_ERR_NOMEM, "library export");
    int n;
    tess_status st = tess_records_export_jsonl(db, mem, NULL, device_key, &n);
    fclose(mem);
    json_t *best = json_object(), *device = NULL, *doc = NULL;
    if (!st && n == 0) st = tess_error(TESS_ERR_NOTFOUND, "no records for device '%s' (see tessera db list)", device_key);
    if (!st) {
        FILE *lines = fmemopen(text, size, "r");
        st = lines ? best_lines(lines, best, &device) : tess_error(TESS_ERR_NOMEM, "library export");
        if (lines) fclose(lines);
    }
    if (!st && !device) st = tess_error(TESS_ERR_NOTFOUND, "no successful result on device '%s'", device_key);
    if (!st) {
        json_t *kernels = json_array();
        const char *task;
        json_t *line;
        json_object_foreach(best, task, line) {
            json_t *entry = json_pack("{s:s, s:O, s:O, s:O, s:O, s:O, s:O}", "task", task, "family",
                                      json_object_get(line, "family"), "config", json_object_get(line, "config"),
                                      "time_ms", json_object_get(line, "time_ms"), "gbps",
                                      json_object_get(line, "gbps"), "gflops", json_object_get(line, "gflops"),
                                      "created_at", json_object_get(line, "created_at"));
            if (entry) json_array_append_new(kernels, entry);
        }
        *count = (int)json_array_size(kernels);
        doc = json_pack("{s:i, s:s, s:O, s:o}", LIBRARY_TAG, LIBRARY_FORMAT, "tessera_version",
                        TESSERA_VERSION, "device", device, "kernels", kernels);
        if (!doc || json_dumpf(doc, out, JSON_INDENT(1) | JSON_SORT_KEYS) != 0 || fputc('\n', out) == EOF)
            st = tess_error(TESS_ERR_IO, "writing the library");
    }
    json_decref(doc);
    json_decref(device);
    json_decref(best);
    free(text);
    return st;
}

tess_status tess_library_import(tess_records *db, FILE *in, const char *source_name, int *count) {
    *count = 0;
    json_error_t err;
    json_t *doc = json_loadf(in, 0, &err);
    if (!doc)
        return tess_error(TESS_ERR_FORMAT, "%s:%d:%d: %s", source_name, err.line, err.column, err.text);
    tess_status st = TESS_OK;
    json_t *device = json_object_get(doc, "device"), *kernels = json_object_get(doc, "kernels");
    if (json_integer_value(json_object_get(doc, LIBRARY_TAG)) != LIBRARY_FORMAT)
        st = tess_error(TESS_ERR_FORMAT, "%s: not a tessera kernel library of format %d", source_name, LIBRARY_FORMAT);
    else if (!json_is_object(device) || !json_is_array(kernels))
        st = tess_error(TESS_ERR_FORMAT, "%s: a library needs a \"device\" object and a \"kernels\" array", source_name);
    /* Each entry becomes one line of the records' JSON-lines format. */
    char *text = NULL;
    size_t size = 0;
    FILE *mem = st ? NULL : open_memstream(&text, &size);
    if (!st && !mem) st = tess_error(TESS_ERR_NOMEM, "library import");
    size_t i;
    json_t *k;
    json_array_foreach(kernels, i, k) {
        if (st) break;
        json_t *line = json_deep_copy(k);
        if (!json_is_object(line)) {
            json_decref(line);
            st = tess_error(TESS_ERR_FORMAT, "%s: kernel %zu is not an object", source_name, i + 1);
            break;
        }
        json_object_set(line, "device", device);
        json_object_set_new(line, "status", json_string("ok"));
        json_object_set_new(line, "strategy", json_string("library"));
        if (json_dumpf(line, mem, JSON_COMPACT) != 0 || fputc('\n', mem) == EOF)
            st = tess_error(TESS_ERR_IO, "library import");
        json_decref(line);
    }
    if (mem) fclose(mem);
    if (!st && size > 0) {   /* an empty library imports nothing */
        FILE *lines = fmemopen(text, size, "r");
        st = lines ? tess_records_import_jsonl(db, lines, source_name, count)
                   : tess_error(TESS_ERR_NOMEM, "library import");
        if (lines) fclose(lines);
    }
    free(text);
    json_decref(doc);
    return st;
}
