/* space.c - parameter spaces: values, constraints, enumeration, sampling,
 * neighbourhoods, feature encoding, config text and config sets. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "space.h"

/* Products up to this size may be enumerated once to sample from a space
 * whose constraints reject most random points. */
#define SAMPLE_CACHE_MAX_PRODUCT 5e6
/* Rejection sampling switches to the cached legal list when fewer than
 * 1 in SAMPLE_MIN_ACCEPT_INV draws are legal (judged after SAMPLE_WARMUP draws). */
#define SAMPLE_WARMUP 200
#define SAMPLE_MIN_ACCEPT_INV 20
/* Give up on rejection sampling after this many consecutive illegal draws. */
#define SAMPLE_MAX_DRAWS 2000000L

typedef struct param {
    char name[TESS_PARAM_NAME_MAX];
    int n;
    double *values;
    char **labels;          /* NULL for numeric parameters */
    int default_index;
    bool log_scale;         /* all values positive: encode by log position */
    double enc_lo, enc_hi;  /* log range used by the encoding */
    int absent_index;       /* optional: the value a config text that leaves it out means; -1 if required */
    int exact_index;        /* a shortcut: the value that computes exactly; -1 if it is no shortcut */
} param;

typedef struct constraint {
    tess_constraint_fn fn;
    void *user;
    bool owned;   /* user is the space's copy */
    char *what;
} constraint;

struct tess_space {
    int np;
    param p[TESS_MAX_PARAMS];
    constraint *cons;
    int ncons, cap_cons;
    /* Explicit points (replayed spaces): the list and a set for membership. */
    tess_config *points;
    size_t npoints;
    tess_config_set *point_set;
    /* Legal points, built on demand for sampling; see tess_space_sample. */
    tess_config *legal;
    size_t nlegal;
    bool legal_built;
    long sample_draws, sample_hits;
    /* Pinned parameters keep their default value (tess_space_pin). */
    bool pinned[TESS_MAX_PARAMS];
    char pin_what[256];
};

/* ---- creation -------------------------------------------------------------- */

tess_space *tess_space_create(void) { return calloc(1, sizeof(tess_space)); }

static void drop_legal_cache(tess_space *s) {
    free(s->legal);
    s->legal = NULL;
    s->nlegal = 0;
    s->legal_built = false;
    s->sample_draws = s->sample_hits = 0;
}

void tess_space_destroy(tess_space *s) {
    if (!s) return;
    for (int i = 0; i < s->np; i++) {
        free(s->p[i].values);
        if (s->p[i].labels)
            for (int j = 0; j < s->p[i].n; j++) free(s->p[i].labels[j]);
        free(s->p[i].labels);
    }
    for (int i = 0; i < s->ncons; i++) {
        free(s->cons[i].what);
        if (s->cons[i].owned) free(s->cons[i].user);
    }
    free(s->cons);
    free(s->points);
    tess_config_set_destroy(s->point_set);
    free(s->legal);
    free(s);
}

/* Names go into "name=value,..." text, so they must be plain identifiers. */
static bool is_identifier(const char *t) {
    if (!t || !(isalpha((unsigned char)*t) || *t == '_')) return false;
    for (; *t; t++)
        if (!(isalnum((unsigned char)*t) || *t == '_')) return false;
    return true;
}

static tess_status check_new_param(const tess_space *s, const char *name, int n, int default_index) {
    if (!s) return tess_error(TESS_ERR_ARG, "space: NULL space");
    if (!is_identifier(name))
        return tess_error(TESS_ERR_ARG, "space: parameter name '%s' is not an identifier",
                          name ? name : "(null)");
    if (strlen(name) >= TESS_PARAM_NAME_MAX)
        return tess_error(TESS_ERR_ARG, "space: parameter name '%s' is longer than %d characters",
                          name, TESS_PARAM_NAME_MAX - 1);
    if (s->np == TESS_MAX_PARAMS)
        return tess_error(TESS_ERR_ARG, "space: cannot add '%s': at most %d parameters", name,
                          TESS_MAX_PARAMS);
    if (s->npoints)
        return tess_error(TESS_ERR_ARG, "space: cannot add '%s' after the point list was set", name);
    if (tess_space_param_index(s, name) >= 0)
        return tess_error(TESS_ERR_ARG, "space: parameter '%s' is defined twice", name);
    if (n < 1 || n > TESS_MAX_VALUES)
        return tess_error(TESS_ERR_ARG, "space: parameter '%s' has %d values (allowed 1..%d)", name,
                          n, TESS_MAX_VALUES);
    if (default_index < 0 || default_index >= n)
        return tess_error(TESS_ERR_ARG, "space: parameter '%s': default index %d is out of range 0..%d",
                          name, default_index, n - 1);
    return TESS_OK;
}

/* Fills the encoding range once the values are known. */
static void finish_param(param *q) {
    bool positive = !q->labels;
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < q->n && positive; i++) {
        if (!(q->values[i] > 0)) positive = false;
        lo = fmin(lo, q->values[i]);
        hi = fmax(hi, q->values[i]);
    }
    q->log_scale = positive;
    q->enc_lo = positive ? log(lo) : 0;
    q->enc_hi = positive ? log(hi) : 0;
}

/* Completes parameter q (its values, and labels if any, already set) and adds it to s. */
static tess_status commit_param(tess_space *s, param *q, const char *name, int n, int default_index) {
    snprintf(q->name, sizeof q->name, "%s", name);
    q->n = n;
    q->default_index = default_index;
    q->absent_index = -1;
    q->exact_index = -1;
    finish_param(q);
    s->np++;
    drop_legal_cache(s);
    return TESS_OK;
}

tess_status tess_space_add(tess_space *s, const char *name, int n, const double *values,
                           int default_index) {
    tess_status st = check_new_param(s, name, n, default_index);
    if (st) return st;
    for (int i = 0; i < n; i++) {
        if (!isfinite(values[i]))
            return tess_error(TESS_ERR_ARG, "space: parameter '%s': value %d is not finite", name, i);
        for (int j = 0; j < i; j++)
            if (values[j] == values[i])
                return tess_error(TESS_ERR_ARG, "space: parameter '%s': value %g is listed twice",
                                  name, values[i]);
    }
    param *q = &s->p[s->np];
    memset(q, 0, sizeof *q);
    q->values = malloc((size_t)n * sizeof(double));
    if (!q->values) return tess_error(TESS_ERR_NOMEM, "space: no memory for parameter '%s'", name);
    memcpy(q->values, values, (size_t)n * sizeof(double));
    return commit_param(s, q, name, n, default_index);
}

static bool is_pow2(long v) { return v > 0 && (v & (v - 1)) == 0; }

tess_status tess_space_add_pow2(tess_space *s, const char *name, long lo, long hi, long dflt) {
    if (!is_pow2(lo) || !is_pow2(hi) || lo > hi)
        return tess_error(TESS_ERR_ARG, "space: parameter '%s': %ld..%ld is not a range of powers of two",
                          name ? name : "(null)", lo, hi);
    if (!is_pow2(dflt) || dflt < lo || dflt > hi)
        return tess_error(TESS_ERR_ARG, "space: parameter '%s': default %ld is not a power of two in %ld..%ld",
                          name ? name : "(null)", dflt, lo, hi);
    double values[64];
    int n = 0, d = 0;
    for (long v = lo; v <= hi; v *= 2) {
        if (v == dflt) d = n;
        values[n++] = (double)v;
        if (v > hi / 2) break;   /* no overflow past hi */
    }
    return tess_space_add(s, name, n, values, d);
}

static bool is_label(const char *t) {
    if (!t || !*t) return false;
    for (; *t; t++)
        if (*t == ',' || *t == '=' || isspace((unsigned char)*t)) return false;
    return true;
}

tess_status tess_space_add_labels(tess_space *s, const char *name, int n,
                                  const char *const *labels, int default_index) {
    tess_status st = check_new_param(s, name, n, default_index);
    if (st) return st;
    for (int i = 0; i < n; i++) {
        if (!is_label(labels[i]))
            return tess_error(TESS_ERR_ARG,
                              "space: parameter '%s': label '%s' is empty or holds ',', '=' or spaces",
                              name, labels[i] ? labels[i] : "(null)");
        for (int j = 0; j < i; j++)
            if (strcmp(labels[i], labels[j]) == 0)
                return tess_error(TESS_ERR_ARG, "space: parameter '%s': label '%s' is listed twice",
                                  name, labels[i]);
    }
    param *q = &s->p[s->np];
    memset(q, 0, sizeof *q);
    size_t count = (size_t)n & (TESS_MAX_VALUES * 2 - 1);   /* n is 1..TESS_MAX_VALUES here */
    q->values = malloc(count * sizeof(double));
    q->labels = calloc(count, sizeof(char *));
    bool ok = q->values && q->labels;
    for (int i = 0; ok && i < n; i++) {
        q->values[i] = i;
        ok = (q->labels[i] = strdup(labels[i])) != NULL;
    }
    if (!ok) {
        if (q->labels)
            for (int i = 0; i < n; i++) free(q->labels[i]);
        free(q->labels);
        free(q->values);
        return tess_error(TESS_ERR_NOMEM, "space: no memory for parameter '%s'", name);
    }
    return commit_param(s, q, name, n, default_index);
}

static tess_status add_constraint(tess_space *s, tess_constraint_fn fn, void *user, bool owned, const char *what) {
    if (s->ncons == s->cap_cons) {
        int cap = s->cap_cons ? 2 * s->cap_cons : 8;
        constraint *c = realloc(s->cons, (size_t)cap * sizeof *c);
        if (!c) return tess_error(TESS_ERR_NOMEM, "space: no memory for a constraint");
        s->cons = c;
        s->cap_cons = cap;
    }
    char *w = strdup(what ? what : "constraint");
    if (!w) return tess_error(TESS_ERR_NOMEM, "space: no memory for a constraint");
    s->cons[s->ncons++] = (constraint){fn, user, owned, w};
    drop_legal_cache(s);
    return TESS_OK;
}

tess_status tess_space_set_optional(tess_space *s, const char *name, double absent) {
    int p = tess_space_param_index(s, name);
    if (p < 0) return tess_error(TESS_ERR_ARG, "space: no parameter '%s' to make optional", name ? name : "(null)");
    int i = tess_space_value_index(s, p, absent);
    if (i < 0) return tess_error(TESS_ERR_ARG, "space: %g is not a value of '%s'", absent, name);
    s->p[p].absent_index = i;
    return TESS_OK;
}

tess_status tess_space_set_shortcut(tess_space *s, const char *name, double exact) {
    int p = tess_space_param_index(s, name);
    if (p < 0) return tess_error(TESS_ERR_ARG, "space: no parameter '%s' to mark as a shortcut", name ? name : "(null)");
    int i = tess_space_value_index(s, p, exact);
    if (i < 0) return tess_error(TESS_ERR_ARG, "space: %g is not a value of '%s'", exact, name);
    s->p[p].exact_index = i;
    return TESS_OK;
}

bool tess_space_config_exact(const tess_space *s, const tess_config *c) {
    for (int p = 0; p < s->np; p++)
        if (s->p[p].exact_index >= 0 && c->v[p] != s->p[p].exact_index) return false;
    return true;
}

void tess_space_fill_absent(const tess_space *s, tess_config *c) {
    for (int p = 0; p < s->np; p++)
        if (s->p[p].absent_index >= 0) c->v[p] = (uint16_t)s->p[p].absent_index;
}

tess_status tess_space_add_constraint(tess_space *s, tess_constraint_fn fn, void *user,
                                      const char *what) {
    if (!s || !fn) return tess_error(TESS_ERR_ARG, "space: NULL space or constraint function");
    return add_constraint(s, fn, user, false, what);
}

tess_status tess_space_add_constraint_copy(tess_space *s, tess_constraint_fn fn, const void *data, size_t size,
                                           const char *what) {
    if (!s || !fn || !data || !size) return tess_error(TESS_ERR_ARG, "space: NULL space, constraint or data");
    void *copy = malloc(size);
    if (!copy) return tess_error(TESS_ERR_NOMEM, "space: no memory for a constraint's data");
    memcpy(copy, data, size);
    tess_status st = add_constraint(s, fn, copy, true, what);
    if (st) free(copy);
    return st;
}

static bool in_range(const tess_space *s, const tess_config *c) {
    for (int p = 0; p < s->np; p++)
        if (c->v[p] >= s->p[p].n) return false;
    for (int p = s->np; p < TESS_MAX_PARAMS; p++)
        if (c->v[p] != 0) return false;
    return true;
}

tess_status tess_space_set_points(tess_space *s, const tess_config *points, size_t n) {
    if (!s || (n && !points)) return tess_error(TESS_ERR_ARG, "space: NULL space or point list");
    if (s->np == 0) return tess_error(TESS_ERR_ARG, "space: add parameters before the point list");
    tess_config *copy = malloc((n ? n : 1) * sizeof *copy);
    tess_config_set *set = tess_config_set_create();
    if (!copy || !set) {
        free(copy);
        tess_config_set_destroy(set);
        return tess_error(TESS_ERR_NOMEM, "space: no memory for %zu points", n);
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!in_range(s, &points[i])) {
            free(copy);
            tess_config_set_destroy(set);
            return tess_error(TESS_ERR_ARG, "space: point %zu has a value index out of range", i);
        }
        if (tess_config_set_add(set, &points[i])) copy[m++] = points[i];  /* drop repeats */
    }
    free(s->points);
    tess_config_set_destroy(s->point_set);
    s->points = copy;
    s->npoints = m;
    s->point_set = set;
    drop_legal_cache(s);
    return TESS_OK;
}

/* ---- queries ---------------------------------------------------------------- */

int tess_space_nparams(const tess_space *s) { return s->np; }

const char *tess_space_param_name(const tess_space *s, int p) {
    return p >= 0 && p < s->np ? s->p[p].name : NULL;
}

int tess_space_param_size(const tess_space *s, int p) { return p >= 0 && p < s->np ? s->p[p].n : 0; }

double tess_space_param_value(const tess_space *s, int p, int index) {
    if (p < 0 || p >= s->np || index < 0 || index >= s->p[p].n) return NAN;
    return s->p[p].values[index];
}

const char *tess_space_param_label(const tess_space *s, int p, int index) {
    if (p < 0 || p >= s->np || !s->p[p].labels || index < 0 || index >= s->p[p].n) return NULL;
    return s->p[p].labels[index];
}

int tess_space_param_index(const tess_space *s, const char *name) {
    if (!name) return -1;
    for (int p = 0; p < s->np; p++)
        if (strcmp(s->p[p].name, name) == 0) return p;
    return -1;
}

int tess_space_value_index(const tess_space *s, int p, double value) {
    if (p < 0 || p >= s->np) return -1;
    const param *q = &s->p[p];
    for (int i = 0; i < q->n; i++)
        if (q->values[i] == value) return i;
    /* Values read back from text may differ in the last bits. */
    for (int i = 0; i < q->n; i++)
        if (fabs(q->values[i] - value) <= 1e-9 * fmax(1.0, fabs(value))) return i;
    return -1;
}

double tess_space_cardinality(const tess_space *s) {
    double n = s->np ? 1 : 0;
    for (int p = 0; p < s->np; p++) n *= s->p[p].n;
    return n;
}

void tess_space_values(const tess_space *s, const tess_config *c, double *values) {
    for (int p = 0; p < s->np; p++) values[p] = s->p[p].values[c->v[p]];
}

const char *tess_space_violation(const tess_space *s, const tess_config *c) {
    if (!in_range(s, c)) return "value index out of range";
    if (s->point_set && !tess_config_set_contains(s->point_set, c)) return "not a recorded point";
    for (int p = 0; p < s->np; p++)
        if (s->pinned[p] && c->v[p] != s->p[p].default_index) return s->pin_what;
    if (s->ncons == 0) return NULL;
    double values[TESS_MAX_PARAMS];
    tess_space_values(s, c, values);
    for (int i = 0; i < s->ncons; i++)
        if (!s->cons[i].fn(values, s->cons[i].user)) return s->cons[i].what;
    return NULL;
}

bool tess_space_valid(const tess_space *s, const tess_config *c) {
    return tess_space_violation(s, c) == NULL;
}

double tess_config_get(const tess_space *s, const tess_config *c, const char *name) {
    int p = tess_space_param_index(s, name);
    if (p < 0 || c->v[p] >= s->p[p].n) return NAN;
    return s->p[p].values[c->v[p]];
}

double tess_config_get_or(const tess_space *s, const tess_config *c, const char *name, double absent) {
    return tess_space_param_index(s, name) < 0 ? absent : tess_config_get(s, c, name);
}

void tess_space_default(const tess_space *s, tess_config *c) {
    memset(c, 0, sizeof *c);
    for (int p = 0; p < s->np; p++) c->v[p] = (uint16_t)s->p[p].default_index;
}

/* ---- enumeration ------------------------------------------------------------ */

static int compare_configs(const void *a, const void *b) {
    const tess_config *x = a, *y = b;
    for (int p = 0; p < TESS_MAX_PARAMS; p++)
        if (x->v[p] != y->v[p]) return x->v[p] < y->v[p] ? -1 : 1;
    return 0;
}

/* Collects legal points in order; fails with TESS_ERR_ARG past limit. The
 * list (when out is not NULL) grows as needed. */
typedef struct collector {
    size_t limit, count, cap;
    tess_config *list;   /* NULL when only counting */
    bool keep;
} collector;

static tess_status collect(collector *k, const tess_config *c) {
    if (k->count == k->limit)
        return tess_error(TESS_ERR_ARG, "space: more than %zu legal points", k->limit);
    if (k->keep) {
        if (k->count == k->cap) {
            size_t cap = k->cap ? 2 * k->cap : 1024;
            tess_config *grown = realloc(k->list, cap * sizeof *grown);
            if (!grown) return tess_error(TESS_ERR_NOMEM, "space: no memory for %zu points", cap);
            k->list = grown;
            k->cap = cap;
        }
        k->list[k->count] = *c;
    }
    k->count++;
    return TESS_OK;
}

/* Legal points of an explicit list, sorted. */
static tess_status walk_points(const tess_space *s, collector *k) {
    tess_config *sorted = malloc((s->npoints ? s->npoints : 1) * sizeof *sorted);
    if (!sorted) return tess_error(TESS_ERR_NOMEM, "space: no memory to sort %zu points", s->npoints);
    memcpy(sorted, s->points, s->npoints * sizeof *sorted);
    qsort(sorted, s->npoints, sizeof *sorted, compare_configs);
    tess_status st = TESS_OK;
    for (size_t i = 0; i < s->npoints && !st; i++)
        if (tess_space_valid(s, &sorted[i])) st = collect(k, &sorted[i]);
    free(sorted);
    return st;
}

/* Legal points of the product, by an odometer: the last parameter moves fastest. */
static tess_status walk_product(const tess_space *s, collector *k) {
    tess_config c;
    memset(&c, 0, sizeof c);
    for (;;) {
        if (tess_space_valid(s, &c)) {
            tess_status st = collect(k, &c);
            if (st) return st;
        }
        int p = s->np - 1;
        while (p >= 0 && ++c.v[p] == s->p[p].n) c.v[p--] = 0;
        if (p < 0) return TESS_OK;
    }
}

/* Visits legal points in lexicographic order; out may be NULL (counting only). */
static tess_status walk(const tess_space *s, size_t limit, tess_config **out, size_t *n) {
    if (out) *out = NULL;
    *n = 0;
    if (s->np == 0) return tess_error(TESS_ERR_ARG, "space: no parameters");
    collector k = {.limit = limit, .keep = out != NULL};
    tess_status st = s->point_set ? walk_points(s, &k) : walk_product(s, &k);
    if (st) {
        free(k.list);
        return st;
    }
    if (out) *out = k.list;
    *n = k.count;
    return TESS_OK;
}

tess_status tess_space_enumerate(const tess_space *s, size_t limit, tess_config **out, size_t *n) {
    return walk(s, limit, out, n);
}

tess_status tess_space_count(const tess_space *s, size_t limit, size_t *n) {
    return walk(s, limit, NULL, n);
}

/* ---- sampling --------------------------------------------------------------- */

static tess_status build_legal(tess_space *s) {
    size_t limit = s->point_set ? s->npoints : (size_t)SAMPLE_CACHE_MAX_PRODUCT;
    tess_status st = walk(s, limit, &s->legal, &s->nlegal);
    if (st) return st;
    s->legal_built = true;
    return TESS_OK;
}

static tess_status sample_from_legal(const tess_space *s, gsl_rng *rng, tess_config *out) {
    if (s->nlegal == 0) return tess_error(TESS_ERR_NOTFOUND, "space: no legal point");
    *out = s->legal[gsl_rng_uniform_int(rng, (unsigned long)s->nlegal)];
    return TESS_OK;
}

tess_status tess_space_sample(const tess_space *s, gsl_rng *rng, tess_config *out) {
    /* The legal-point cache and acceptance counters are kept in the space. */
    tess_space *m = (tess_space *)s;
    if (s->np == 0) return tess_error(TESS_ERR_ARG, "space: no parameters");
    if (!m->legal_built && m->point_set) {
        tess_status st = build_legal(m);
        if (st) return st;
    }
    if (m->legal_built) return sample_from_legal(s, rng, out);

    bool may_cache = tess_space_cardinality(s) <= SAMPLE_CACHE_MAX_PRODUCT;
    tess_config c;
    memset(&c, 0, sizeof c);
    for (long draw = 0; draw < SAMPLE_MAX_DRAWS; draw++) {
        for (int p = 0; p < s->np; p++) c.v[p] = (uint16_t)gsl_rng_uniform_int(rng, (unsigned long)s->p[p].n);
        m->sample_draws++;
        if (tess_space_valid(s, &c)) {
            m->sample_hits++;
            *out = c;
            return TESS_OK;
        }
        if (may_cache && m->sample_draws >= SAMPLE_WARMUP &&
            m->sample_hits * SAMPLE_MIN_ACCEPT_INV < m->sample_draws) {
            tess_status st = build_legal(m);
            if (st) return st;
            return sample_from_legal(s, rng, out);
        }
    }
    return tess_error(TESS_ERR_NOTFOUND, "space: no legal point in %ld random draws", SAMPLE_MAX_DRAWS);
}

/* ---- neighbourhoods and encoding --------------------------------------------- */

tess_status tess_space_neighbors(const tess_space *s, const tess_config *c,
                                 tess_neighborhood kind, tess_config *out, int max, int *n) {
    *n = 0;
    if (!in_range(s, c)) return tess_error(TESS_ERR_ARG, "space: neighbours of an out-of-range config");
    if (kind != TESS_NEIGH_ADJACENT && kind != TESS_NEIGH_HAMMING)
        return tess_error(TESS_ERR_ARG, "space: unknown neighbourhood %d", (int)kind);
    for (int p = 0; p < s->np; p++) {
        int cur = c->v[p];
        for (int i = 0; i < s->p[p].n; i++) {
            if (i == cur) continue;
            if (kind == TESS_NEIGH_ADJACENT && abs(i - cur) != 1) continue;
            if (*n == max) return TESS_OK;
            tess_config d = *c;
            d.v[p] = (uint16_t)i;
            if (tess_space_valid(s, &d)) out[(*n)++] = d;
        }
    }
    return TESS_OK;
}

int tess_space_nfeatures(const tess_space *s) { return s->np; }

void tess_space_encode(const tess_space *s, const tess_config *c, double *features) {
    for (int p = 0; p < s->np; p++) {
        const param *q = &s->p[p];
        int i = c->v[p];
        if (q->log_scale && q->enc_hi > q->enc_lo)
            features[p] = (log(q->values[i]) - q->enc_lo) / (q->enc_hi - q->enc_lo);
        else if (!q->log_scale && q->n > 1)
            features[p] = (double)i / (q->n - 1);
        else
            features[p] = 0;
    }
}

/* ---- text form ---------------------------------------------------------------- */

/* Shortest %g form that reads back as the same double. */
static void format_number(double v, char *buf, size_t len) {
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

tess_status tess_config_format(const tess_space *s, const tess_config *c, char *buf, size_t len) {
    if (!buf || len == 0) return tess_error(TESS_ERR_ARG, "config format: empty buffer");
    if (!in_range(s, c)) return tess_error(TESS_ERR_ARG, "config format: value index out of range");
    size_t used = 0;
    buf[0] = '\0';
    for (int p = 0; p < s->np; p++) {
        char value[64];
        const param *q = &s->p[p];
        if (q->labels)
            snprintf(value, sizeof value, "%s", q->labels[c->v[p]]);
        else
            format_number(q->values[c->v[p]], value, sizeof value);
        int w = snprintf(buf + used, len - used, "%s%s=%s", p ? "," : "", q->name, value);
        if (w < 0 || (size_t)w >= len - used)
            return tess_error(TESS_ERR_ARG, "config format: buffer of %zu bytes is too small", len);
        used += (size_t)w;
    }
    return TESS_OK;
}

/* Copies [b, e) with surrounding spaces removed into out (size len). */
static bool copy_trimmed(const char *b, const char *e, char *out, size_t len) {
    while (b < e && isspace((unsigned char)*b)) b++;
    while (e > b && isspace((unsigned char)e[-1])) e--;
    if ((size_t)(e - b) >= len) return false;
    memcpy(out, b, (size_t)(e - b));
    out[e - b] = '\0';
    return true;
}

static int parse_value(const param *q, const tess_space *s, int p, const char *text) {
    if (q->labels) {
        for (int i = 0; i < q->n; i++)
            if (strcmp(q->labels[i], text) == 0) return i;
        return -1;
    }
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end || errno) return -1;
    return tess_space_value_index(s, p, v);
}

static void describe_values(const param *q, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < q->n && used + 1 < len; i++) {
        char value[64];
        if (q->labels)
            snprintf(value, sizeof value, "%s", q->labels[i]);
        else
            format_number(q->values[i], value, sizeof value);
        int w = snprintf(buf + used, len - used, "%s%s", i ? " " : "", value);
        if (w < 0 || (size_t)w >= len - used) {
            snprintf(buf + (len > 5 ? len - 5 : 0), len > 5 ? 5 : len, " ...");
            return;
        }
        used += (size_t)w;
    }
}

/* Reads the items "name=value,..." of text into c (zeroed first), marking
 * each parameter given in seen (TESS_MAX_PARAMS entries; at most once each). */
static tess_status parse_items(const tess_space *s, const char *text, tess_config *c, bool *seen) {
    if (!text) return tess_error(TESS_ERR_ARG, "config parse: NULL text");
    memset(c, 0, sizeof *c);
    memset(seen, 0, TESS_MAX_PARAMS * sizeof *seen);
    const char *item = text;
    while (*item) {
        const char *end = strchr(item, ',');
        if (!end) end = item + strlen(item);
        const char *eq = memchr(item, '=', (size_t)(end - item));
        char name[TESS_PARAM_NAME_MAX + 16], value[128];
        if (!eq)
            return tess_error(TESS_ERR_FORMAT, "config '%s': item '%.*s' is not name=value", text,
                              (int)(end - item), item);
        if (!copy_trimmed(item, eq, name, sizeof name))
            return tess_error(TESS_ERR_FORMAT, "config '%s': parameter name too long", text);
        if (!copy_trimmed(eq + 1, end, value, sizeof value))
            return tess_error(TESS_ERR_FORMAT, "config '%s': value of '%s' too long", text, name);
        int p = tess_space_param_index(s, name);
        if (p < 0) return tess_error(TESS_ERR_ARG, "config '%s': unknown parameter '%s'", text, name);
        if (seen[p]) return tess_error(TESS_ERR_ARG, "config '%s': parameter '%s' given twice", text, name);
        int i = parse_value(&s->p[p], s, p, value);
        if (i < 0) {
            char allowed[256];
            describe_values(&s->p[p], allowed, sizeof allowed);
            return tess_error(TESS_ERR_ARG, "config '%s': '%s' is not a value of '%s' (allowed: %s)",
                              text, value, name, allowed);
        }
        c->v[p] = (uint16_t)i;
        seen[p] = true;
        item = *end ? end + 1 : end;
    }
    return TESS_OK;
}

tess_status tess_config_parse(const tess_space *s, const char *text, tess_config *out) {
    tess_config c;
    bool seen[TESS_MAX_PARAMS];
    tess_status st = parse_items(s, text, &c, seen);
    if (st) return st;
    for (int p = 0; p < s->np; p++) {
        if (!seen[p] && s->p[p].absent_index >= 0) c.v[p] = (uint16_t)s->p[p].absent_index;
        else if (!seen[p]) return tess_error(TESS_ERR_ARG, "config '%s': parameter '%s' is missing", text, s->p[p].name);
    }
    const char *why = tess_space_violation(s, &c);
    if (why) return tess_error(TESS_ERR_ARG, "config '%s' is not legal: %s", text, why);
    *out = c;
    return TESS_OK;
}

tess_status tess_space_pin(tess_space *s, const char *text) {
    if (!s) return tess_error(TESS_ERR_ARG, "space pin: NULL space");
    tess_config c;
    bool seen[TESS_MAX_PARAMS];
    tess_status st = parse_items(s, text, &c, seen);
    if (st) return st;
    for (int p = 0; p < s->np; p++)
        if (seen[p]) {
            s->pinned[p] = true;
            s->p[p].default_index = c.v[p];
        }
    size_t used = strlen(s->pin_what);
    snprintf(s->pin_what + used, sizeof s->pin_what - used, "%s%s", used ? "," : "pinned: ", text);
    drop_legal_cache(s);
    return TESS_OK;
}

bool tess_config_equal(const tess_config *a, const tess_config *b) {
    return memcmp(a->v, b->v, sizeof a->v) == 0;
}

uint64_t tess_config_hash(const tess_config *c) {
    /* splitmix64 finalizer over the index vector, four indices per word */
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int w = 0; w < TESS_MAX_PARAMS; w += 4) {
        uint64_t x = (uint64_t)c->v[w] | (uint64_t)c->v[w + 1] << 16 | (uint64_t)c->v[w + 2] << 32 |
                     (uint64_t)c->v[w + 3] << 48;
        h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
        h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
        h ^= h >> 31;
    }
    return h;
}

/* ---- config set ------------------------------------------------------------- */

struct tess_config_set {
    tess_config *slots;
    unsigned char *used;
    size_t cap;    /* power of two */
    size_t size;
};

tess_config_set *tess_config_set_create(void) {
    tess_config_set *set = calloc(1, sizeof *set);
    if (!set) return NULL;
    set->cap = 64;
    set->slots = malloc(set->cap * sizeof *set->slots);
    set->used = calloc(set->cap, 1);
    if (!set->slots || !set->used) {
        tess_config_set_destroy(set);
        return NULL;
    }
    return set;
}

void tess_config_set_destroy(tess_config_set *set) {
    if (!set) return;
    free(set->slots);
    free(set->used);
    free(set);
}

static size_t find_slot(const tess_config_set *set, const tess_config *c) {
    size_t mask = set->cap - 1, i = (size_t)tess_config_hash(c) & mask;
    while (set->used[i] && !tess_config_equal(&set->slots[i], c)) i = (i + 1) & mask;
    return i;
}

static bool grow(tess_config_set *set) {
    size_t cap = set->cap * 2;
    tess_config *slots = malloc(cap * sizeof *slots);
    unsigned char *used = calloc(cap, 1);
    if (!slots || !used) {
        free(slots);
        free(used);
        return false;
    }
    tess_config_set bigger = {slots, used, cap, set->size};
    for (size_t i = 0; i < set->cap; i++)
        if (set->used[i]) {
            size_t j = find_slot(&bigger, &set->slots[i]);
            slots[j] = set->slots[i];
            used[j] = 1;
        }
    free(set->slots);
    free(set->used);
    *set = bigger;
    return true;
}

bool tess_config_set_add(tess_config_set *set, const tess_config *c) {
    /* Keep the load below one half so probes stay short; a failed grow
     * only matters once the table is full. */
    if (2 * (set->size + 1) > set->cap && !grow(set) && set->size + 1 >= set->cap) return false;
    size_t i = find_slot(set, c);
    if (set->used[i]) return false;
    set->slots[i] = *c;
    set->used[i] = 1;
    set->size++;
    return true;
}

bool tess_config_set_contains(const tess_config_set *set, const tess_config *c) {
    return set->used[find_slot(set, c)] != 0;
}

size_t tess_config_set_size(const tess_config_set *set) { return set->size; }
