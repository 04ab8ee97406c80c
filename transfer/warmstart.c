/* warmstart.c - warm starts from the nearest tuned tasks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "warmstart.h"

/* 1 for on/true/yes, 0 for off/false/no, -1 otherwise: switches are labels
 * in some spaces and 0/1 in others. */
static int truth(const char *text) {
    static const char *const words[][2] = {{"off", "on"}, {"false", "true"}, {"no", "yes"}, {"0", "1"}};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        for (int v = 0; v < 2; v++)
            if (strcmp(text, words[i][v]) == 0) return v;
    return -1;
}

/* Nearest legal value of parameter p to a value written as text; *exact
 * says whether it is that value. */
static int snap(const tess_space *s, int p, const char *text, bool *exact) {
    int n = tess_space_param_size(s, p);
    *exact = true;
    if (tess_space_param_label(s, p, 0)) {
        for (int i = 0; i < n; i++)
            if (strcmp(tess_space_param_label(s, p, i), text) == 0) return i;
        for (int i = 0; i < n; i++)
            if (truth(text) >= 0 && truth(tess_space_param_label(s, p, i)) == truth(text)) return i;
        *exact = false;
        return -1;
    }
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end) {
        if (truth(text) < 0) return -1;
        v = truth(text);
    }
    int best = -1;
    double best_d = INFINITY;
    for (int i = 0; i < n; i++) {
        double u = tess_space_param_value(s, p, i);
        double d = u > 0 && v > 0 ? fabs(log(u) - log(v)) : fabs(u - v);
        if (d < best_d) {
            best_d = d;
            best = i;
        }
    }
    *exact = best >= 0 && tess_space_param_value(s, p, best) == v;
    return best;
}

/* Names that spaces spell differently for one idea: heat3d's hand-written
 * CUDA space against the spaces generated from stencil specs. */
static int param_index(const tess_space *s, const char *name) {
    static const char *const synonyms[][2] = {{"zstream", "stream"}, {"chunk_z", "chunk"}, {"items_x", "ppt_x"}};
    int p = tess_space_param_index(s, name);
    for (size_t i = 0; p < 0 && i < sizeof synonyms / sizeof synonyms[0]; i++)
        for (int k = 0; k < 2; k++)
            if (strcmp(name, synonyms[i][k]) == 0) p = tess_space_param_index(s, synonyms[i][1 - k]);
    return p;
}

/* Each parameter the text names at its nearest legal value; returns whether
 * every value was found as written. The result may be illegal. */
static bool map_values(const tess_space *space, const char *text, tess_config *out) {
    bool faithful = true;
    /* Parameters the text does not name: the default, or for an optional
     * one what its absence means (a config recorded before it existed). */
    tess_space_default(space, out);
    tess_space_fill_absent(space, out);
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", text);
    for (char *save = NULL, *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) continue;
        *eq = '\0';
        int p = param_index(space, item);
        if (p < 0) continue;
        bool same;
        int idx = snap(space, p, eq + 1, &same);
        if (idx >= 0) out->v[p] = (uint16_t)idx;
        faithful = faithful && same;
    }
    return faithful;
}

tess_status tess_config_map(const tess_space *space, const char *text, tess_config *out, bool *exact) {
    bool faithful = map_values(space, text, out);
    bool valid = tess_space_valid(space, out);
    if (exact) *exact = faithful && valid;
    if (valid) return TESS_OK;
    tess_config nb[256];
    int n = 0;
    const tess_neighborhood kinds[] = {TESS_NEIGH_ADJACENT, TESS_NEIGH_HAMMING};
    for (int k = 0; k < 2; k++)
        if (tess_space_neighbors(space, out, kinds[k], nb, 256, &n) == TESS_OK && n > 0) {
            *out = nb[0];
            return TESS_OK;
        }
    return tess_error(TESS_ERR_NOTFOUND, "no legal config near '%s'", text);
}

bool tess_warm_row_measures(const tess_space *space, const tess_record_row *row, const tess_config *c) {
    /* called on every row of a source: no repair of an illegal mapping, which is not exact anyway */
    tess_config mapped;
    return row->status == TESS_RESULT_OK && map_values(space, row->config, &mapped) &&
           tess_config_equal(&mapped, c) && tess_space_valid(space, &mapped);
}

typedef struct candidate {
    tess_task_summary summary;
    double similarity;
} candidate;

typedef struct gather {
    const tess_task_profile *target;
    candidate *c;
    int n, cap;
} gather;

static int collect_task(const tess_task_summary *s, void *user) {
    gather *g = user;
    if (s->ok == 0) return 0;
    if (strcmp(s->device_key, g->target->device_key) == 0) {
        char key[TESS_KEY_MAX];
        if (tess_task_key(&g->target->task, key, sizeof key) == TESS_OK && strcmp(key, s->task_key) == 0)
            return 0;
    }
    tess_task t;
    if (tess_task_parse_key(s->task_key, &t) != TESS_OK) return 0;
    tess_task_profile p;
    const tess_op *op = tess_op_find(t.op);
    if (op && (tess_task_name_extents(&t, op->extents) != TESS_OK || op->check_task(op, &t) != TESS_OK)) op = NULL;
    tess_task_profile_init(&p, &t, op, NULL, s->device_key);
    /* device features are only known for the target's device: reuse them, the
     * device term of the similarity accounts for a different device */
    memcpy(p.f + TESS_TASK_DEVICE_FEATURES, g->target->f + TESS_TASK_DEVICE_FEATURES,
           (TESS_TASK_NFEATURES - TESS_TASK_DEVICE_FEATURES) * sizeof(double));
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 32;
        candidate *nc = realloc(g->c, (size_t)cap * sizeof *nc);
        if (!nc) return 1;
        g->c = nc;
        g->cap = cap;
    }
    g->c[g->n++] = (candidate){*s, tess_task_similarity(g->target, &p)};
    return 0;
}

static int by_similarity(const void *a, const void *b) {
    double x = ((const candidate *)a)->similarity, y = ((const candidate *)b)->similarity;
    return (x < y) - (x > y);
}

typedef struct top_results {
    tess_record_row *rows;
    int n, max;
    /* the fastest result for the target's default config, if any */
    const tess_space *space;
    tess_config dflt;
    tess_record_row dflt_row;
    bool has_dflt;
} top_results;

/* Keeps the `max` fastest ok results of one task (insertion into a sorted
 * list), and its fastest for the target's default. */
static int keep_fastest(const tess_record_row *row, void *user) {
    top_results *t = user;
    if (row->status != TESS_RESULT_OK) return 0;
    if ((!t->has_dflt || row->time_ms < t->dflt_row.time_ms) && tess_warm_row_measures(t->space, row, &t->dflt)) {
        t->dflt_row = *row;
        t->has_dflt = true;
    }
    int pos = t->n;
    while (pos > 0 && t->rows[pos - 1].time_ms > row->time_ms) pos--;
    if (pos >= t->max) return 0;
    int last = t->n < t->max ? t->n : t->max - 1;
    memmove(&t->rows[pos + 1], &t->rows[pos], (size_t)(last - pos) * sizeof *t->rows);
    t->rows[pos] = *row;
    if (t->n < t->max) t->n++;
    return 0;
}

int tess_warm_rows_wanted(int per_source) {
    return per_source > TESS_WARM_PRIORS_PER_SOURCE ? per_source : TESS_WARM_PRIORS_PER_SOURCE;
}

tess_status tess_warm_start_from(const tess_space *space, const tess_warm_input *in, int nsrc, int per_source,
                                 tess_warm_start *out) {
    memset(out, 0, sizeof *out);
    if (nsrc > TESS_WARM_MAX_SOURCES)
        return tess_error(TESS_ERR_ARG, "warm start: more than %d sources", TESS_WARM_MAX_SOURCES);
    int nrows = 0;
    for (int i = 0; i < nsrc; i++) {
        out->sources[i] = in[i].source;
        nrows += in[i].n;
    }
    out->nsources = nsrc;
    out->configs = malloc((size_t)(nsrc * per_source + 1) * sizeof *out->configs);
    out->priors = malloc((size_t)(nrows + nsrc + 1) * sizeof *out->priors);
    int *taken = calloc((size_t)(nsrc ? nsrc : 1), 2 * sizeof *taken), *next = taken ? taken + nsrc : NULL;
    tess_config_set *seen = tess_config_set_create();
    tess_status st = TESS_OK;
    if (!out->configs || !out->priors || !taken || !seen) st = tess_error(TESS_ERR_NOMEM, "warm start");
    /* nsrc * per_source slots, shared among the sources in proportion to
     * their similarity (D'Hondt: the next slot goes to the source with the
     * largest similarity / (slots taken + 1)); each source gives its fastest
     * configs not yet taken, none much slower than its best. */
    while (!st && out->n < nsrc * per_source) {
        int pick = -1;
        for (int i = 0; i < nsrc; i++)
            if (next[i] < in[i].n && (pick < 0 || in[i].source.similarity / (taken[i] + 1) >
                                                       in[pick].source.similarity / (taken[pick] + 1)))
                pick = i;
        if (pick < 0) break;
        const tess_record_row *row = &in[pick].rows[next[pick]++];
        tess_config c;
        if (row->time_ms > TESS_WARM_MAX_SLOWDOWN * in[pick].rows[0].time_ms) {
            next[pick] = in[pick].n;
        } else if (tess_config_map(space, row->config, &c, NULL) == TESS_OK && tess_config_set_add(seen, &c)) {
            out->configs[out->n++] = c;
            taken[pick]++;
        }
    }
    /* Priors: every measurement of a config this space holds as it was
     * measured, timed relative to its task's best; the fastest where several
     * name one config. A config that had to be snapped to other values or
     * repaired is another point, and its time no evidence about that one
     * (between two sampled heat3d4 recordings whose ppt_x differs, such
     * priors steered the search away from the target's optimum: 42
     * evaluations to 5% warm against 24 cold). */
    tess_config_set_destroy(seen);
    seen = st ? NULL : tess_config_set_create();
    if (!st && !seen) st = tess_error(TESS_ERR_NOMEM, "warm start");
    for (int i = 0; i < nsrc && !st; i++)
        for (int k = 0; k <= in[i].n; k++) {
            const tess_record_row *row = k < in[i].n ? &in[i].rows[k] : in[i].dflt;
            tess_prior *p = &out->priors[out->npriors];
            bool exact;
            if (!row || tess_config_map(space, row->config, &p->config, &exact) != TESS_OK || !exact ||
                !tess_config_set_add(seen, &p->config))
                continue;
            p->rel_log_time = log(row->time_ms / in[i].rows[0].time_ms);
            p->weight = in[i].source.similarity;
            out->npriors++;
        }
    free(taken);
    tess_config_set_destroy(seen);
    if (st) tess_warm_start_free(out);
    return st;
}

tess_status tess_warm_start_build(tess_records *db, const tess_task_profile *target,
                                  const tess_space *space, int max_sources, int per_source,
                                  tess_warm_start *out) {
    memset(out, 0, sizeof *out);
    if (max_sources > TESS_WARM_MAX_SOURCES) max_sources = TESS_WARM_MAX_SOURCES;
    gather g = {.target = target};
    tess_status st = tess_records_list(db, collect_task, &g);
    if (st) {
        free(g.c);
        return st;
    }
    if (g.n > 1) qsort(g.c, (size_t)g.n, sizeof *g.c, by_similarity);
    int nsrc = 0;   /* tasks of other families are no guide: they fall under the threshold */
    while (nsrc < g.n && nsrc < max_sources && g.c[nsrc].similarity >= TESS_WARM_MIN_SIMILARITY) nsrc++;
    int keep = tess_warm_rows_wanted(per_source);
    top_results *tops = calloc(TESS_WARM_MAX_SOURCES, sizeof *tops);
    if (!tops) st = tess_error(TESS_ERR_NOMEM, "warm start");
    tess_warm_input in[TESS_WARM_MAX_SOURCES];
    for (int i = 0; i < nsrc && !st; i++) {
        tops[i].max = keep;
        tops[i].space = space;
        tess_space_default(space, &tops[i].dflt);
        tops[i].rows = calloc((size_t)keep, sizeof *tops[i].rows);
        if (!tops[i].rows) st = tess_error(TESS_ERR_NOMEM, "warm start");
        if (!st) st = tess_records_foreach(db, g.c[i].summary.task_key, g.c[i].summary.device_key,
                                           keep_fastest, &tops[i]);
        tess_warm_source *src = &in[i].source;
        snprintf(src->task_key, sizeof src->task_key, "%s", g.c[i].summary.task_key);
        snprintf(src->device_key, sizeof src->device_key, "%s", g.c[i].summary.device_key);
        src->similarity = g.c[i].similarity;
        src->best_ms = g.c[i].summary.best_ms;
        in[i].rows = tops[i].rows;
        in[i].n = tops[i].n;
        in[i].dflt = tops[i].has_dflt ? &tops[i].dflt_row : NULL;
    }
    if (!st) st = tess_warm_start_from(space, in, nsrc, per_source, out);
    for (int i = 0; tops && i < nsrc; i++) free(tops[i].rows);
    free(tops);
    free(g.c);
    return st;
}
