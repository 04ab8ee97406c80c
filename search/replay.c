/* replay.c - the replay evaluator: answers from Kernel Tuner cache files,
 * T4 result files and tessera's JSON-lines record export. */
#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "core/error.h"
#include "search/replay.h"

/* Field names of tessera's JSON-lines record export. */
#define EXPORT_TASK "task"
#define EXPORT_DEVICE "device"
#define EXPORT_CONFIG "params"      /* the config as an object: name -> value */
#define EXPORT_DEVICE_KEY "key"
#define EXPORT_STATUS "status"
#define EXPORT_TIME "time_ms"
#define EXPORT_STRATEGY "strategy"   /* who proposed the config; the template's default is */
#define EXPORT_DEFAULT "default"     /* measured first and marked so */

/* ---- the loaded recording ---------------------------------------------- */

/* One recorded configuration before its values are mapped to indices. */
typedef struct entry {
    json_t *config;          /* object: parameter name -> value (a reference we hold) */
    tess_outcome status;
    double time_ms, min_ms, max_ms;
    int reps;
} entry;

/* A parameter's values: numbers, or labels when any value is a string. */
typedef struct rparam {
    char name[TESS_PARAM_NAME_MAX];
    char key[256];           /* the name as the file spells it */
    bool given;              /* the file lists the values up front, in this order */
    bool labels;
    int n;
    double num[TESS_MAX_VALUES];
    char *lab[TESS_MAX_VALUES];
} rparam;

typedef struct recording {
    const char *path;
    int np;
    rparam *p;               /* TESS_MAX_PARAMS of them */
    entry *e;
    size_t n, cap;
    char task[TESS_OP_NAME_MAX];
    char device[128];
    int64_t shape[TESS_MAX_DIMS];
    int ndim;
    long default_entry;      /* the entry of the template's default, -1 if not recorded */
} recording;

/* One recorded point, as the evaluator keeps it (sorted by config). */
typedef struct point {
    tess_config config;
    tess_outcome status;
    double time_ms, min_ms, max_ms;
    int reps;
} point;

struct tess_replay {
    tess_space *space;       /* the recorded configs */
    point *points;
    size_t n;
    double best_ms;
    bool has_default;        /* the space's default is the recorded template default */
    tess_task task;          /* as the recording names it ("replay" when it does not) */
    char device[128];
};
typedef struct tess_replay replay;

static void recording_free(recording *r) {
    for (size_t i = 0; i < r->n; i++) json_decref(r->e[i].config);
    free(r->e);
    if (r->p)
        for (int i = 0; i < r->np; i++)
            for (int j = 0; j < r->p[i].n; j++) free(r->p[i].lab[j]);
    free(r->p);
}

/* ---- reading ------------------------------------------------------------ */

/* Reads a whole file, gunzipping when it is compressed (zlib reads plain files as they are). */
static tess_status read_file(const char *path, char **text, size_t *len) {
    gzFile f = gzopen(path, "rb");
    if (!f) return tess_error(TESS_ERR_IO, "cannot open %s", path);
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            gzclose(f);
            return tess_error(TESS_ERR_NOMEM, "no memory to read %s", path);
        }
        int got = gzread(f, buf + n, (unsigned)(cap - n - 1));
        if (got < 0) {
            int err;
            const char *msg = gzerror(f, &err);
            tess_status st = tess_error(TESS_ERR_IO, "cannot read %s: %s", path, msg);
            free(buf);
            gzclose(f);
            return st;
        }
        if (got == 0) break;
        n += (size_t)got;
        if (cap - n - 1 == 0) {
            char *grown = realloc(buf, cap * 2);
            if (!grown) free(buf);
            buf = grown;
            cap *= 2;
        }
    }
    gzclose(f);
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return TESS_OK;
}

/* Parameter names become identifiers: anything else turns into '_'. */
static void copy_name(char *dst, const char *src) {
    snprintf(dst, TESS_PARAM_NAME_MAX, "%s", src);
    for (char *c = dst; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '_') *c = '_';
    if (isdigit((unsigned char)dst[0])) dst[0] = '_';
}

static int param_index(const recording *r, const char *name) {
    char clean[TESS_PARAM_NAME_MAX];
    copy_name(clean, name);
    for (int i = 0; i < r->np; i++)
        if (strcmp(r->p[i].name, clean) == 0) return i;
    return -1;
}

static tess_status add_param(recording *r, const char *name) {
    if (param_index(r, name) >= 0) return TESS_OK;
    if (r->np == TESS_MAX_PARAMS)
        return tess_error(TESS_ERR_FORMAT, "%s: more than %d parameters", r->path, TESS_MAX_PARAMS);
    rparam *q = &r->p[r->np++];
    memset(q, 0, sizeof *q);
    copy_name(q->name, name);
    snprintf(q->key, sizeof q->key, "%s", name);
    return TESS_OK;
}

/* Labels hold no ',', '=' or spaces, so that configs print as name=value lists. */
static char *clean_label(const char *text) {
    char *l = strdup(*text ? text : "_");
    if (l)
        for (char *c = l; *c; c++)
            if (*c == ',' || *c == '=' || isspace((unsigned char)*c)) *c = '_';
    return l;
}

/* Index of value v among q's values, adding it if absent (and allowed); -1 if not found. */
static int value_index(rparam *q, const json_t *v, bool may_add) {
    char text[64];
    const char *label = NULL;
    double num = 0;
    if (json_is_string(v)) label = json_string_value(v);
    else if (json_is_number(v)) num = json_number_value(v);
    else if (json_is_boolean(v)) num = json_is_true(v);
    else return -1;
    if (!q->labels) {
        if (label) return -1;   /* parameters holding strings are made categorical first */
        for (int i = 0; i < q->n; i++)
            if (q->num[i] == num) return i;
        if (!may_add || q->n == TESS_MAX_VALUES) return -1;
        q->num[q->n] = num;
        return q->n++;
    }
    if (!label) {   /* a number among labels: compare its text */
        snprintf(text, sizeof text, "%.17g", num);
        label = text;
    }
    char *clean = clean_label(label);
    if (!clean) return -1;
    int found = -1;
    for (int i = 0; i < q->n && found < 0; i++)
        if (strcmp(clean, q->lab[i]) == 0) found = i;
    if (found >= 0 || !may_add || q->n == TESS_MAX_VALUES) {
        free(clean);
        return found;
    }
    q->lab[q->n] = clean;
    return q->n++;
}

/* A parameter whose values mix numbers and strings becomes categorical:
 * its numbers are turned into labels. */
static bool make_labels(rparam *q) {
    if (q->labels) return true;
    for (int i = 0; i < q->n; i++) {
        char text[64];
        snprintf(text, sizeof text, "%.17g", q->num[i]);
        if (!(q->lab[i] = strdup(text))) return false;
    }
    q->labels = true;
    return true;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static tess_status add_entry(recording *r, json_t *config, tess_outcome status, double time_ms,
                             const json_t *times) {
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 1024;
        entry *grown = realloc(r->e, cap * sizeof *grown);
        if (!grown) return tess_error(TESS_ERR_NOMEM, "%s: no memory for %zu entries", r->path, cap);
        r->e = grown;
        r->cap = cap;
    }
    entry *e = &r->e[r->n++];
    e->config = json_incref(config);
    e->status = status;
    bool ok = status == TESS_RESULT_OK && isfinite(time_ms);
    if (status == TESS_RESULT_OK && !ok) e->status = TESS_RESULT_RUNTIME_ERROR;
    e->time_ms = e->min_ms = e->max_ms = ok ? time_ms : INFINITY;
    e->reps = 0;
    size_t i;
    json_t *t;
    if (ok && json_is_array(times))
        json_array_foreach(times, i, t) {
            if (!json_is_number(t)) continue;
            double v = json_number_value(t);
            if (e->reps++ == 0) e->min_ms = e->max_ms = v;
            e->min_ms = fmin(e->min_ms, v);
            e->max_ms = fmax(e->max_ms, v);
        }
    return TESS_OK;
}

static void read_problem_size(recording *r, const json_t *size) {
    size_t i;
    json_t *v;
    r->ndim = 0;
    if (json_is_integer(size)) {
        r->shape[r->ndim++] = json_integer_value(size);
        return;
    }
    if (json_is_array(size))
        json_array_foreach(size, i, v) {
            if (json_is_integer(v) && json_integer_value(v) > 0 && r->ndim < TESS_MAX_DIMS)
                r->shape[r->ndim++] = json_integer_value(v);
        }
}

/* Kernel Tuner's error strings in place of a time. */
static tess_outcome kernel_tuner_status(const char *error) {
    if (strstr(error, "Compil")) return TESS_RESULT_COMPILE_ERROR;
    if (strstr(error, "Invalid")) return TESS_RESULT_INVALID;
    return TESS_RESULT_RUNTIME_ERROR;
}

static tess_status load_kernel_tuner(recording *r, json_t *root) {
    json_t *params = json_object_get(root, "tune_params");
    json_t *cache = json_object_get(root, "cache");
    if (!json_is_object(params) || !json_is_object(cache))
        return tess_error(TESS_ERR_FORMAT, "%s: Kernel Tuner cache without tune_params or cache", r->path);
    const char *objective = json_string_value(json_object_get(root, "objective"));
    if (!objective) objective = "time";
    snprintf(r->task, sizeof r->task, "%s", json_string_value(json_object_get(root, "kernel_name"))
                                                ? json_string_value(json_object_get(root, "kernel_name"))
                                                : "replay");
    snprintf(r->device, sizeof r->device, "%s", json_string_value(json_object_get(root, "device_name"))
                                                    ? json_string_value(json_object_get(root, "device_name"))
                                                    : "unknown");
    read_problem_size(r, json_object_get(root, "problem_size"));

    const char *name;
    json_t *values;
    json_object_foreach(params, name, values) {
        tess_status st = add_param(r, name);
        if (st) return st;
        rparam *q = &r->p[param_index(r, name)];
        size_t i;
        json_t *v;
        if (!json_is_array(values))
            return tess_error(TESS_ERR_FORMAT, "%s: values of '%s' are not a list", r->path, name);
        json_array_foreach(values, i, v) {
            if (json_is_string(v) && !make_labels(q)) return tess_error(TESS_ERR_NOMEM, "%s: no memory", r->path);
        }
        json_array_foreach(values, i, v) {
            if (value_index(q, v, true) < 0)
                return tess_error(TESS_ERR_FORMAT, "%s: bad value %zu of '%s'", r->path, i, name);
        }
        q->given = true;
    }

    const char *key;
    json_t *rec;
    json_object_foreach(cache, key, rec) {
        json_t *t = json_object_get(rec, objective);
        tess_outcome status = TESS_RESULT_OK;
        double ms = INFINITY;
        if (json_is_number(t)) ms = json_number_value(t);
        else if (json_is_string(t)) status = kernel_tuner_status(json_string_value(t));
        else status = TESS_RESULT_RUNTIME_ERROR;
        tess_status st = add_entry(r, rec, status, ms, json_object_get(rec, "times"));
        if (st) return st;
    }
    return TESS_OK;
}

/* T4's invalidity field. */
static tess_outcome t4_status(const char *invalidity) {
    if (!invalidity || strcmp(invalidity, "correct") == 0) return TESS_RESULT_OK;
    if (strcmp(invalidity, "compile") == 0) return TESS_RESULT_COMPILE_ERROR;
    if (strcmp(invalidity, "constraints") == 0) return TESS_RESULT_INVALID;
    if (strcmp(invalidity, "correctness") == 0) return TESS_RESULT_WRONG_RESULT;
    if (strcmp(invalidity, "timeout") == 0) return TESS_RESULT_TIMEOUT;
    return TESS_RESULT_RUNTIME_ERROR;
}

static tess_status load_t4(recording *r, json_t *root) {
    json_t *results = json_object_get(root, "results");
    if (!json_is_array(results)) return tess_error(TESS_ERR_FORMAT, "%s: T4 file without results", r->path);
    json_t *meta = json_object_get(root, "metadata");
    snprintf(r->task, sizeof r->task, "%s",
             json_string_value(json_object_get(meta, "kernel_name")) ? json_string_value(json_object_get(meta, "kernel_name")) : "replay");
    snprintf(r->device, sizeof r->device, "%s",
             json_string_value(json_object_get(meta, "device_name")) ? json_string_value(json_object_get(meta, "device_name")) : "unknown");
    size_t i;
    json_t *res;
    json_array_foreach(results, i, res) {
        json_t *config = json_object_get(res, "configuration");
        if (!json_is_object(config))
            return tess_error(TESS_ERR_FORMAT, "%s: result %zu has no configuration", r->path, i);
        const char *name;
        json_t *v;
        json_object_foreach(config, name, v) {
            tess_status st = add_param(r, name);
            if (st) return st;
        }
        /* the objective: the first objective's measurement, else the mean runtime */
        const char *objective = json_string_value(json_array_get(json_object_get(res, "objectives"), 0));
        if (!objective) objective = "time";
        double ms = NAN;
        size_t j;
        json_t *m;
        json_array_foreach(json_object_get(res, "measurements"), j, m) {
            const char *mname = json_string_value(json_object_get(m, "name"));
            if (mname && strcmp(mname, objective) == 0 && json_is_number(json_object_get(m, "value")))
                ms = json_number_value(json_object_get(m, "value"));
        }
        json_t *runtimes = json_object_get(json_object_get(res, "times"), "runtimes");
        if (isnan(ms) && json_array_size(runtimes) > 0) {
            double sum = 0;
            json_array_foreach(runtimes, j, m) sum += json_number_value(m);
            ms = sum / (double)json_array_size(runtimes);
        }
        tess_outcome status = t4_status(json_string_value(json_object_get(res, "invalidity")));
        tess_status st = add_entry(r, config, status, isnan(ms) ? INFINITY : ms, runtimes);
        if (st) return st;
    }
    return TESS_OK;
}

/* One line of tessera's record export. Lines of another task or device
 * than the first line's are skipped: one recording is one space. */
static tess_status load_export_line(recording *r, json_t *line, size_t lineno) {
    const char *task = json_string_value(json_object_get(line, EXPORT_TASK));
    json_t *dev = json_object_get(line, EXPORT_DEVICE);
    const char *device = json_is_object(dev) ? json_string_value(json_object_get(dev, EXPORT_DEVICE_KEY))
                                             : json_string_value(dev);
    json_t *config = json_object_get(line, EXPORT_CONFIG);
    if (!json_is_object(config))
        return tess_error(TESS_ERR_FORMAT, "%s:%zu: no \"%s\" object", r->path, lineno, EXPORT_CONFIG);
    if (r->n == 0) {
        snprintf(r->task, sizeof r->task, "%s", task ? task : "replay");
        snprintf(r->device, sizeof r->device, "%s", device ? device : "unknown");
    } else if ((task && strcmp(task, r->task) != 0) || (device && strcmp(device, r->device) != 0)) {
        return TESS_OK;
    }
    const char *name;
    json_t *v;
    json_object_foreach(config, name, v) {
        tess_status st = add_param(r, name);
        if (st) return st;
    }
    tess_outcome status = TESS_RESULT_OK;
    const char *status_text = json_string_value(json_object_get(line, EXPORT_STATUS));
    if (status_text && tess_outcome_parse(status_text, &status) != TESS_OK)
        return tess_error(TESS_ERR_FORMAT, "%s:%zu: unknown status '%s'", r->path, lineno, status_text);
    const char *proposer = json_string_value(json_object_get(line, EXPORT_STRATEGY));
    if (proposer && strcmp(proposer, EXPORT_DEFAULT) == 0 && r->default_entry < 0) r->default_entry = (long)r->n;
    json_t *t = json_object_get(line, EXPORT_TIME);
    return add_entry(r, config, status, json_is_number(t) ? json_number_value(t) : INFINITY, NULL);
}

static tess_status load_export(recording *r, const char *text) {
    size_t lineno = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        lineno++;
        const char *c = line;
        while (c < line + len && isspace((unsigned char)*c)) c++;
        if (c < line + len) {
            json_error_t err;
            json_t *obj = json_loadb(line, len, 0, &err);
            if (!obj) return tess_error(TESS_ERR_FORMAT, "%s:%zu: %s", r->path, lineno, err.text);
            tess_status st = json_is_object(obj) ? load_export_line(r, obj, lineno)
                                                 : tess_error(TESS_ERR_FORMAT, "%s:%zu: not an object", r->path, lineno);
            json_decref(obj);
            if (st) return st;
        }
        line = end ? end + 1 : line + len;
    }
    return TESS_OK;
}

/* Collects the values of parameters the file did not list, numbers sorted. */
static tess_status gather_values(recording *r) {
    for (int p = 0; p < r->np; p++) {
        rparam *q = &r->p[p];
        if (q->given) continue;
        for (size_t i = 0; i < r->n; i++) {
            json_t *v = json_object_get(r->e[i].config, q->key);
            if (json_is_string(v) && !make_labels(q)) return tess_error(TESS_ERR_NOMEM, "%s: no memory", r->path);
        }
        for (size_t i = 0; i < r->n; i++) {
            json_t *v = json_object_get(r->e[i].config, q->key);
            if (v && value_index(q, v, true) < 0)
                return tess_error(TESS_ERR_FORMAT, "%s: entry %zu: bad value of '%s' (or more than %d values)",
                                  r->path, i, q->name, TESS_MAX_VALUES);
        }
        if (!q->labels) qsort(q->num, (size_t)q->n, sizeof(double), compare_double);
    }
    return TESS_OK;
}

static int compare_points(const void *a, const void *b) {
    const point *x = a, *y = b;
    for (int p = 0; p < TESS_MAX_PARAMS; p++)
        if (x->config.v[p] != y->config.v[p]) return x->config.v[p] < y->config.v[p] ? -1 : 1;
    return 0;
}

/* Builds the space and the sorted point table; a config recorded twice keeps its fastest ok result. */
static tess_status build(recording *r, tess_space **space_out, replay *rp) {
    tess_space *s = tess_space_create();
    if (!s) return tess_error(TESS_ERR_NOMEM, "%s: no memory", r->path);
    tess_status st = TESS_OK;
    /* the template's default, when the recording marks it, is the space's default */
    int dflt[TESS_MAX_PARAMS] = {0};
    rp->has_default = r->default_entry >= 0;
    for (int p = 0; p < r->np && rp->has_default; p++) {
        json_t *v = json_object_get(r->e[r->default_entry].config, r->p[p].key);
        dflt[p] = v ? value_index(&r->p[p], v, false) : -1;
        rp->has_default = dflt[p] >= 0;
    }
    if (!rp->has_default) memset(dflt, 0, sizeof dflt);
    for (int p = 0; p < r->np && !st; p++) {
        rparam *q = &r->p[p];
        if (q->n == 0) st = tess_error(TESS_ERR_FORMAT, "%s: parameter '%s' has no values", r->path, q->name);
        else if (q->labels) st = tess_space_add_labels(s, q->name, q->n, (const char *const *)q->lab, dflt[p]);
        else st = tess_space_add(s, q->name, q->n, q->num, dflt[p]);
    }
    point *pts = st ? NULL : malloc((r->n ? r->n : 1) * sizeof *pts);
    if (!st && !pts) st = tess_error(TESS_ERR_NOMEM, "%s: no memory", r->path);
    for (size_t i = 0; i < r->n && !st; i++) {
        point *pt = &pts[i];
        memset(&pt->config, 0, sizeof pt->config);
        for (int p = 0; p < r->np && !st; p++) {
            json_t *v = json_object_get(r->e[i].config, r->p[p].key);
            int k = v ? value_index(&r->p[p], v, false) : -1;
            if (k < 0)
                st = tess_error(TESS_ERR_FORMAT, "%s: entry %zu: %s value of '%s'", r->path, i,
                                v ? "unlisted" : "no", r->p[p].name);
            else pt->config.v[p] = (uint16_t)k;
        }
        pt->status = r->e[i].status;
        pt->time_ms = r->e[i].time_ms;
        pt->min_ms = r->e[i].min_ms;
        pt->max_ms = r->e[i].max_ms;
        pt->reps = r->e[i].reps;
    }
    size_t m = 0;
    if (!st) {
        qsort(pts, r->n, sizeof *pts, compare_points);
        for (size_t i = 0; i < r->n; i++) {
            if (m > 0 && compare_points(&pts[m - 1], &pts[i]) == 0) {
                if (pts[i].time_ms < pts[m - 1].time_ms) pts[m - 1] = pts[i];
                continue;
            }
            pts[m++] = pts[i];
        }
        tess_config *configs = malloc((m ? m : 1) * sizeof *configs);
        if (!configs) st = tess_error(TESS_ERR_NOMEM, "%s: no memory", r->path);
        for (size_t i = 0; !st && i < m; i++) configs[i] = pts[i].config;
        if (!st) st = tess_space_set_points(s, configs, m);
        free(configs);
    }
    if (!st && m == 0) st = tess_error(TESS_ERR_FORMAT, "%s: no recorded configurations", r->path);
    if (st) {
        free(pts);
        tess_space_destroy(s);
        return st;
    }
    rp->points = pts;
    rp->n = m;
    rp->best_ms = INFINITY;
    for (size_t i = 0; i < m; i++)
        if (pts[i].status == TESS_RESULT_OK) rp->best_ms = fmin(rp->best_ms, pts[i].time_ms);
    *space_out = s;
    return TESS_OK;
}

/* ---- the evaluator ------------------------------------------------------- */

static const point *find(const replay *rp, const tess_config *c) {
    point key;
    key.config = *c;
    return bsearch(&key, rp->points, rp->n, sizeof *rp->points, compare_points);
}

static tess_status replay_evaluate(tess_evaluator *ev, const tess_config *configs, int n,
                                   tess_result_fn on_result, void *user) {
    const replay *rp = ev->impl;
    for (int i = 0; i < n; i++) {
        tess_result r;
        tess_result_init(&r, &configs[i]);
        const point *pt = find(rp, &configs[i]);
        if (!pt) {
            tess_result_fail(&r, TESS_RESULT_INVALID, "config was not recorded");
        } else if (pt->status != TESS_RESULT_OK) {
            tess_result_fail(&r, pt->status, "failed in the recording (%s)", tess_outcome_name(pt->status));
        } else {
            r.status = TESS_RESULT_OK;
            r.time_ms = pt->time_ms;
            r.min_ms = pt->reps ? pt->min_ms : pt->time_ms;
            r.max_ms = pt->reps ? pt->max_ms : pt->time_ms;
            r.reps = pt->reps ? pt->reps : 1;
        }
        if (on_result) on_result(&r, user);
    }
    return TESS_OK;
}


/* The recording belongs to the evaluator's creator: nothing to destroy. */
static const tess_evaluator_ops replay_ops = {replay_evaluate, NULL};

static tess_status load(recording *r, const char *text, size_t len) {
    json_error_t err;
    json_t *root = json_loadb(text, len, 0, &err);
    tess_status st;
    if (root && json_is_object(root) && json_object_get(root, "cache"))
        st = load_kernel_tuner(r, root);
    else if (root && json_is_object(root) && json_object_get(root, "results"))
        st = load_t4(r, root);
    else if (!root || (json_is_object(root) && json_object_get(root, EXPORT_CONFIG)))
        st = load_export(r, text);   /* JSON lines (a single line parses as one object) */
    else
        st = tess_error(TESS_ERR_FORMAT, "%s: neither a Kernel Tuner cache, a T4 file nor a record export",
                        r->path);
    json_decref(root);   /* entries hold their own references */
    if (!st) st = gather_values(r);
    return st;
}

tess_status tess_replay_open(const char *path, tess_replay **out) {
    *out = NULL;
    if (!path) return tess_error(TESS_ERR_ARG, "replay: no file given");
    char *text = NULL;
    size_t len = 0;
    tess_status st = read_file(path, &text, &len);
    if (st) return st;
    recording r = {.path = path, .default_entry = -1};
    r.p = calloc(TESS_MAX_PARAMS, sizeof *r.p);
    replay *rp = calloc(1, sizeof *rp);
    if (!r.p || !rp) st = tess_error(TESS_ERR_NOMEM, "replay: no memory for %s", path);
    if (!st) st = load(&r, text, len);
    free(text);
    if (!st) st = build(&r, &rp->space, rp);
    if (!st) {
        /* a record export names its task by key; other files by a kernel name and a problem size */
        int64_t one = 1;
        if (tess_task_parse_key(r.task, &rp->task) &&
            tess_task_init(&rp->task, r.task, TESS_F32, r.ndim ? r.shape : &one, r.ndim ? r.ndim : 1))
            tess_task_init(&rp->task, "replay", TESS_F32, &one, 1);
        snprintf(rp->device, sizeof rp->device, "%s", r.device);
    }
    recording_free(&r);
    if (st) {
        free(rp);
        return st;
    }
    *out = rp;
    return TESS_OK;
}

void tess_replay_close(tess_replay *rp) {
    if (!rp) return;
    tess_space_destroy(rp->space);
    free(rp->points);
    free(rp);
}

const tess_space *tess_replay_space(const tess_replay *rp) { return rp->space; }

const tess_task *tess_replay_task(const tess_replay *rp) { return &rp->task; }

tess_status tess_evaluator_create_replay(const tess_replay *rp, tess_evaluator **out) {
    tess_evaluator *ev = calloc(1, sizeof *ev);
    if (!ev) return tess_error(TESS_ERR_NOMEM, "replay evaluator");
    ev->ops = &replay_ops;
    ev->impl = (void *)rp;   /* only read */
    ev->space = rp->space;
    ev->op = NULL;
    ev->batch = 16;
    ev->task = rp->task;
    snprintf(ev->device.backend, sizeof ev->device.backend, "replay");
    snprintf(ev->device.name, sizeof ev->device.name, "%s", rp->device);
    *out = ev;
    return TESS_OK;
}

size_t tess_replay_size(const tess_replay *rp) { return rp->n; }

void tess_replay_point(const tess_replay *rp, size_t i, tess_config *c, tess_outcome *status,
                       double *time_ms) {
    const point *pt = &rp->points[i];
    if (c) *c = pt->config;
    if (status) *status = pt->status;
    if (time_ms) *time_ms = pt->time_ms;
}

bool tess_replay_lookup(const tess_replay *rp, const tess_config *c, tess_outcome *status,
                        double *time_ms) {
    const point *pt = find(rp, c);
    if (!pt) return false;
    if (status) *status = pt->status;
    if (time_ms) *time_ms = pt->time_ms;
    return true;
}

double tess_replay_best_time(const tess_replay *rp) { return rp->best_ms; }

bool tess_replay_default(const tess_replay *rp, tess_config *c) {
    if (rp->has_default && c) tess_space_default(rp->space, c);
    return rp->has_default;
}
