/*
 * api_records.c - the public API's records calls (tessera.h): tuned tasks,
 * device keys, JSON-lines export and import, kernel libraries. Thin: the
 * records store (core/records.c) and the library format (library.c) do the
 * work.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/error.h"
#include "core/records.h"
#include "library.h"
#include "request.h"

const char *tess_db_path(tess_context *ctx) { return tess_records_path(tess_context_records(ctx)); }

typedef struct list_state {
    tess_db_task_fn fn;
    void *user;
} list_state;

static void copy_summary(const tess_task_summary *s, tess_db_task *t) {
    memset(t, 0, sizeof *t);
    snprintf(t->task, sizeof t->task, "%s", s->task_key);
    snprintf(t->device, sizeof t->device, "%s", s->device_key);
    t->evaluations = s->evaluations;
    t->ok = s->ok;
    t->best_ms = s->best_ms;
    snprintf(t->best_config, sizeof t->best_config, "%s", s->best_config);
}

static int list_one(const tess_task_summary *s, void *user) {
    const list_state *ls = user;
    tess_db_task t;
    copy_summary(s, &t);
    return ls->fn(&t, ls->user);
}

tess_status tess_db_list(tess_context *ctx, tess_db_task_fn fn, void *user) {
    list_state ls = {fn, user};
    return tess_records_list(tess_context_records(ctx), list_one, &ls);
}

/* tess_db_task_get's search of the listing: out already holds the keys. */
static int match_task(const tess_task_summary *s, void *user) {
    tess_db_task *out = user;
    if (strcmp(s->task_key, out->task) != 0 || strcmp(s->device_key, out->device) != 0) return 0;
    copy_summary(s, out);
    return 1;
}

tess_status tess_db_task_get(tess_context *ctx, const char *op, const int64_t *shape, int ndim,
                             const char *dtype, const char *backend, tess_db_task *out) {
    tess_request s;
    tess_status st = tess_request_resolve(op, shape, ndim, dtype, backend, &s);
    if (st) return st;
    memset(out, 0, sizeof *out);
    snprintf(out->task, sizeof out->task, "%s", s.task_key);
    snprintf(out->device, sizeof out->device, "%s", s.device_key);
    out->best_ms = INFINITY;
    return tess_records_list(tess_context_records(ctx), match_task, out);
}

/* Device keys in the records that contain `text` (an exact key wins). */
typedef struct device_match {
    const char *text;
    char key[TESS_KEY_MAX];
    int matches;
    bool exact;
} device_match;

static int match_device(const tess_task_summary *s, void *user) {
    device_match *m = user;
    if (m->exact || !strstr(s->device_key, m->text) || strcmp(s->device_key, m->key) == 0) return 0;
    m->exact = strcmp(s->device_key, m->text) == 0;
    if (m->exact) m->matches = 0;
    snprintf(m->key, sizeof m->key, "%s", s->device_key);
    m->matches++;
    return 0;
}

tess_status tess_db_find_device(tess_context *ctx, const char *text, char *key, size_t len) {
    device_match m = {.text = text ? text : ""};
    tess_status st = tess_records_list(tess_context_records(ctx), match_device, &m);
    if (st) return st;
    if (m.matches == 0)
        return tess_error(TESS_ERR_NOTFOUND, "no device in %s matches '%s' (see tessera db list)",
                          tess_db_path(ctx), m.text);
    if (m.matches > 1) return tess_error(TESS_ERR_ARG, "'%s' matches several devices; give more of the key", m.text);
    snprintf(key, len, "%s", m.key);
    return TESS_OK;
}

tess_status tess_db_export(tess_context *ctx, FILE *out, const char *task, const char *device, int *count) {
    return tess_records_export_jsonl(tess_context_records(ctx), out, task, device, count);
}

tess_status tess_db_export_library(tess_context *ctx, const char *device, FILE *out, int *count) {
    return tess_library_export(tess_context_records(ctx), device, out, count);
}

tess_status tess_db_import(tess_context *ctx, const char *path, int *count) {
    *count = 0;
    FILE *in = fopen(path, "r");
    if (!in) return tess_error(TESS_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    char head[4096];
    size_t got = fread(head, 1, sizeof head - 1, in);
    head[got] = '\0';
    rewind(in);
    tess_records *db = tess_context_records(ctx);
    tess_status st = tess_library_detect(head) ? tess_library_import(db, in, path, count)
                                               : tess_records_import_jsonl(db, in, path, count);
    fclose(in);
    return st;
}
