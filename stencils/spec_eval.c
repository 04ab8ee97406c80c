/* spec_eval.c - the float64 reference interpreter and the counts derived
 * from a spec. The interpreter walks the lowered instances at every point,
 * so intermediates are computed once per point, as in generated code. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/host_parallel.h"
#include "spec_eval.h"

/* Fields as double arrays while the interpreter runs. */
typedef struct grid_state {
    const tess_spec *s;
    int64_t n[TESS_SPEC_MAX_RANK];
    bool wrap[TESS_SPEC_MAX_RANK];   /* periodic axes */
    const double *field[TESS_SPEC_MAX_FIELDS];
} grid_state;

/* The interpreter's inner loop: indices wrap by adding or subtracting the
 * extent (an offset may exceed a small extent), not by division. */
static double read_field(const grid_state *g, const tess_expr *e, const int64_t *p) {
    const tess_spec *s = g->s;
    int64_t idx = 0;
    for (int a = s->rank - s->field[e->index].rank; a < s->rank; a++) {
        int64_t c = p[a] + e->off[a], n = g->n[a];
        if (g->wrap[a]) {
            while (c < 0) c += n;
            while (c >= n) c -= n;
        }
        idx = idx * n + c;
    }
    return g->field[e->index][idx];
}

/* Value of a lowered expression at p; with mags, also its magnitude. */
static double eval(const grid_state *g, const tess_expr *e, const int64_t *p, const double *vals,
                   const double *mags, double *mag) {
    double a[3], m[3] = {0, 0, 0}, v;
    switch (e->kind) {
    case TESS_EXPR_NUM:
        v = e->num;
        if (mags) *mag = fabs(v);
        return v;
    case TESS_EXPR_REF:
        if (e->ref == TESS_REF_INST) {
            if (mags) *mag = mags[e->index];
            return vals[e->index];
        }
        v = e->ref == TESS_REF_PARAM ? g->s->param[e->index].value : read_field(g, e, p);
        if (mags) *mag = fabs(v);
        return v;
    default:
        break;
    }
    for (int i = 0; i < e->nargs; i++) a[i] = eval(g, e->arg[i], p, vals, mags, &m[i]);
    v = tess_spec_apply(e, a);
    if (!mags) return v;
    if (e->kind == TESS_EXPR_NEG) *mag = m[0];
    else if (e->kind == TESS_EXPR_NOT) *mag = 0;
    else if (e->kind == TESS_EXPR_BIN) {
        switch ((tess_binop)e->op) {
        case TESS_BIN_ADD: case TESS_BIN_SUB: *mag = m[0] + m[1]; break;
        case TESS_BIN_MUL: *mag = m[0] * m[1]; break;
        case TESS_BIN_DIV: *mag = m[0] / fabs(a[1]); break;
        default: *mag = 0; break;   /* comparisons and logic: exact 0 or 1 */
        }
    } else {
        switch ((tess_fn)e->op) {
        case TESS_FN_SQRT: *mag = sqrt(m[0]); break;
        case TESS_FN_ABS: *mag = m[0]; break;
        case TESS_FN_SELECT: *mag = fmax(m[1], m[2]); break;
        default: *mag = fmax(m[0], m[1]); break;
        }
    }
    return v;
}

bool tess_spec_on_boundary(const tess_spec *s, const int64_t *shape, const int64_t *p) {
    for (int a = 0; a < s->rank; a++)
        if (!tess_spec_periodic(s, a) && (p[a] < s->lo[a] || p[a] >= shape[a] - s->hi[a])) return true;
    return false;
}

int64_t tess_spec_interior_points(const tess_spec *s, const int64_t *shape) {
    int64_t n = 1;
    for (int a = 0; a < s->rank; a++) {
        int64_t e = tess_spec_periodic(s, a) ? shape[a] : shape[a] - s->lo[a] - s->hi[a];
        n *= e > 0 ? e : 0;
    }
    return n;
}

static void load(double *dst, const void *src, tess_dtype t, int64_t n) {
    if (t == TESS_F32)
        for (int64_t i = 0; i < n; i++) dst[i] = ((const float *)src)[i];
    else
        memcpy(dst, src, (size_t)n * sizeof *dst);
}

static void store(void *dst, const double *src, tess_dtype t, int64_t n) {
    if (t == TESS_F32)
        for (int64_t i = 0; i < n; i++) ((float *)dst)[i] = (float)src[i];
    else
        memcpy(dst, src, (size_t)n * sizeof *src);
}

static tess_status check_dtype(const tess_spec *s, tess_dtype real) {
    if (!s->finished) return tess_error(TESS_ERR_ARG, "stencil '%s' is not finished", s->name);
    if (real != TESS_F32 && real != TESS_F64)
        return tess_error(TESS_ERR_ARG, "stencil '%s' supports f32 and f64, not %s", s->name, tess_dtype_name(real));
    return TESS_OK;
}

/* A sweep, shared by the threads that take planes of the outermost axis. */
typedef struct sweep_job {
    const grid_state *g;
    double *const *out;
    bool magnitudes;     /* compute the magnitude bound instead of values */
    double smax[TESS_HOST_MAX_PARTS];   /* the bound over each part's planes */
} sweep_job;

static void sweep_planes(void *arg, int part, int64_t lo, int64_t hi) {
    sweep_job *w = arg;
    const grid_state *g = w->g;
    const tess_spec *s = g->s;
    int64_t nplane = 1;
    for (int a = 1; a < s->rank; a++) nplane *= g->n[a];
    double vals[TESS_SPEC_MAX_INSTANCES], mags[TESS_SPEC_MAX_INSTANCES];
    int64_t p[TESS_SPEC_MAX_RANK];
    for (int64_t outer = lo; outer < hi; outer++)
        for (int64_t r = 0; r < nplane; r++) {
            int64_t rest = r, idx = outer * nplane + r;
            p[0] = outer;
            for (int a = s->rank - 1; a >= 1; a--) {
                p[a] = rest % g->n[a];
                rest /= g->n[a];
            }
            if (tess_spec_on_boundary(s, g->n, p)) {
                for (int f = 0; f < s->nfields; f++) {
                    if (s->field[f].role != TESS_FIELD_OUT) continue;
                    int src = s->field[f].advances;
                    double v = src >= 0 ? g->field[src][idx] : 0;
                    if (w->magnitudes) w->smax[part] = fmax(w->smax[part], fabs(v));
                    else w->out[f][idx] = v;
                }
                continue;
            }
            for (int i = 0; i < s->ninst; i++)
                vals[i] = eval(g, s->inst[i].expr, p, vals, w->magnitudes ? mags : NULL, &mags[i]);
            for (int f = 0; f < s->nfields; f++) {
                if (s->out_inst[f] < 0) continue;
                if (w->magnitudes) w->smax[part] = fmax(w->smax[part], mags[s->out_inst[f]]);
                else w->out[f][idx] = vals[s->out_inst[f]];
            }
        }
}

/* One update of every output into out[], from the fields in g; with
 * scale, the magnitude bound instead (host_parallel.h: plain threads). */
static void sweep(const grid_state *g, double *const *out, double *scale) {
    sweep_job job = {.g = g, .out = out, .magnitudes = scale != NULL};
    const int parts = tess_host_parallel(g->n[0], sweep_planes, &job);
    if (!scale) return;
    *scale = 0;
    for (int i = 0; i < parts; i++) *scale = fmax(*scale, job.smax[i]);
}

/* Copies the inputs of buffers into double arrays (owned[] frees them). */
static tess_status load_inputs(const tess_spec *s, tess_dtype real, const int64_t *shape,
                               void *const *buffers, grid_state *g, double **owned) {
    memset(g, 0, sizeof *g);
    g->s = s;
    memcpy(g->n, shape, (size_t)s->rank * sizeof *shape);
    for (int a = 0; a < s->rank; a++) g->wrap[a] = tess_spec_periodic(s, a);
    for (int f = 0; f < s->nfields; f++) {
        int64_t n = tess_spec_field_count(s, f, shape);
        owned[f] = malloc((size_t)n * sizeof(double));
        if (!owned[f]) return tess_error(TESS_ERR_NOMEM, "out of memory evaluating stencil '%s'", s->name);
        if (s->field[f].role != TESS_FIELD_OUT) load(owned[f], buffers[f], tess_spec_field_dtype(s, f, real), n);
        g->field[f] = owned[f];
    }
    return TESS_OK;
}

tess_status tess_spec_reference(const tess_spec *s, tess_dtype real, const int64_t *shape,
                                void *const *buffers) {
    tess_status st = check_dtype(s, real);
    if (st) return st;
    grid_state g;
    double *owned[TESS_SPEC_MAX_FIELDS] = {NULL}, *next[TESS_SPEC_MAX_FIELDS] = {NULL};
    st = load_inputs(s, real, shape, buffers, &g, owned);
    /* Outputs are written to their own arrays; after a step each one swaps
     * places with the input it advances. */
    for (int f = 0; f < s->nfields && !st; f++) next[f] = owned[f];
    for (int step = 0; step < s->steps && !st; step++) {
        sweep(&g, next, NULL);
        for (int f = 0; f < s->nfields; f++) {
            int src = s->field[f].advances;
            if (src < 0 || step == s->steps - 1) continue;
            double *t = next[f];
            next[f] = next[src];
            next[src] = t;
            g.field[src] = t;
        }
    }
    for (int f = 0; f < s->nfields && !st; f++)
        if (s->field[f].role == TESS_FIELD_OUT)
            store(buffers[f], next[f], tess_spec_field_dtype(s, f, real), tess_spec_field_count(s, f, shape));
    for (int f = 0; f < s->nfields; f++) free(owned[f]);
    return st;
}

tess_status tess_spec_scale(const tess_spec *s, tess_dtype real, const int64_t *shape,
                            void *const *buffers, double *scale) {
    *scale = 1;
    tess_status st = check_dtype(s, real);
    if (st) return st;
    grid_state g;
    double *owned[TESS_SPEC_MAX_FIELDS] = {NULL};
    st = load_inputs(s, real, shape, buffers, &g, owned);
    double m = 0;
    if (!st) sweep(&g, NULL, &m);
    if (!st && m > 0 && isfinite(m)) *scale = m;
    for (int f = 0; f < s->nfields; f++) free(owned[f]);
    return st;
}

static int count_ops(const tess_expr *e) {
    int n = e->kind == TESS_EXPR_BIN || e->kind == TESS_EXPR_CALL;
    for (int i = 0; i < e->nargs; i++) n += count_ops(e->arg[i]);
    return n;
}

int tess_spec_point_flops(const tess_spec *s) {
    int n = 0;
    for (int k = 0; k < s->nstmts; k++) n += count_ops(s->stmt[k].expr);
    return n;
}

double tess_spec_flops(const tess_spec *s, const int64_t *shape) {
    return (double)tess_spec_point_flops(s) * (double)tess_spec_interior_points(s, shape) * s->steps;
}

double tess_spec_bytes(const tess_spec *s, tess_dtype real, const int64_t *shape) {
    double bytes = 0;
    for (int f = 0; f < s->nfields; f++)
        bytes += (double)tess_spec_field_count(s, f, shape) * (double)tess_dtype_size(tess_spec_field_dtype(s, f, real));
    return bytes;
}

/* Operations behind instance i with every intermediate inlined. */
static double inlined_ops(const tess_spec *s, const tess_expr *e, const double *memo) {
    double n = e->kind == TESS_EXPR_BIN || e->kind == TESS_EXPR_CALL || e->kind == TESS_EXPR_NEG;
    if (e->kind == TESS_EXPR_REF && e->ref == TESS_REF_INST) n += memo[e->index];
    for (int i = 0; i < e->nargs; i++) n += inlined_ops(s, e->arg[i], memo);
    return n;
}

double tess_spec_tolerance(const tess_spec *s, tess_dtype real) {
    double memo[TESS_SPEC_MAX_INSTANCES], ops = 0;
    for (int i = 0; i < s->ninst; i++) {
        memo[i] = inlined_ops(s, s->inst[i].expr, memo);
        ops = fmax(ops, memo[i]);
    }
    double eps = real == TESS_F64 ? DBL_EPSILON : FLT_EPSILON;
    /* Explicit f32 fields round the values stored in them. */
    for (int f = 0; f < s->nfields; f++)
        if (s->field[f].type == TESS_TYPE_F32) eps = FLT_EPSILON;
    return eps * (ops + 8) * s->steps;
}
