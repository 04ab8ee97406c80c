/* spec_eval.c - the float64 reference interpreter and the counts derived
 * from a spec. The interpreter runs the lowered instances at every point,
 * so intermediates are computed once per point, as in generated code: as one
 * flat program, each node a loop over a run of points along x. */
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

/* The lowered instances as one flat program, compiled once per sweep: each
 * node that computes or reads a value writes its own slot, arguments first
 * (the order of a recursive walk, so the values are the same), references to
 * instances read the slot of that instance's root, and numbers and
 * parameters are slots set once. A point away from every edge, periodic
 * ones included, reads a field at a fixed distance from its own index. */
typedef struct flat_op {
    const tess_expr *e;
    int out, arg[3];
    int64_t delta;   /* field reads: the read's distance from the point's index in the field */
} flat_op;

typedef struct flat_prog {
    flat_op *op;          /* the nodes evaluated at every point, in order */
    int nop, nslot;
    int inst_slot[TESS_SPEC_MAX_INSTANCES];
    double *konst;        /* values of the constant slots (others 0) */
} flat_prog;

static int flat_count(const tess_expr *e) {
    if (e->kind == TESS_EXPR_REF && e->ref == TESS_REF_INST) return 0;
    int n = 1;
    for (int i = 0; i < e->nargs; i++) n += flat_count(e->arg[i]);
    return n;
}

/* Appends e's nodes to the program; returns the slot holding its value. */
static int flat_add(const grid_state *g, flat_prog *fp, const tess_expr *e) {
    if (e->kind == TESS_EXPR_REF && e->ref == TESS_REF_INST) return fp->inst_slot[e->index];
    int arg[3] = {0, 0, 0};
    for (int i = 0; i < e->nargs; i++) arg[i] = flat_add(g, fp, e->arg[i]);
    int slot = fp->nslot++;
    if (e->kind == TESS_EXPR_NUM || (e->kind == TESS_EXPR_REF && e->ref == TESS_REF_PARAM)) {
        fp->konst[slot] = e->kind == TESS_EXPR_NUM ? e->num : g->s->param[e->index].value;
        return slot;
    }
    flat_op *o = &fp->op[fp->nop++];
    *o = (flat_op){.e = e, .out = slot, .arg = {arg[0], arg[1], arg[2]}};
    if (e->kind == TESS_EXPR_REF) {
        const tess_spec *s = g->s;
        int64_t stride = 1;
        for (int a = s->rank - 1; a >= s->rank - s->field[e->index].rank; a--) {
            o->delta += e->off[a] * stride;
            stride *= g->n[a];
        }
    }
    return slot;
}

static void flat_free(flat_prog *fp) {
    free(fp->op);
    free(fp->konst);
}

static tess_status flat_compile(const grid_state *g, flat_prog *fp) {
    const tess_spec *s = g->s;
    int n = 0;
    for (int i = 0; i < s->ninst; i++) n += flat_count(s->inst[i].expr);
    memset(fp, 0, sizeof *fp);
    fp->op = malloc((size_t)(n > 0 ? n : 1) * sizeof *fp->op);
    fp->konst = calloc((size_t)(n > 0 ? n : 1), sizeof *fp->konst);
    if (!fp->op || !fp->konst) {
        flat_free(fp);
        return tess_error(TESS_ERR_NOMEM, "out of memory evaluating stencil '%s'", s->name);
    }
    for (int i = 0; i < s->ninst; i++) fp->inst_slot[i] = flat_add(g, fp, s->inst[i].expr);
    return TESS_OK;
}

/* Points of a run along x evaluated together (slots of RUN values). */
enum { RUN = 64 };

/* Runs the program at n <= RUN consecutive points along x, the first at
 * linear index idx (r within its plane of the inner axes): slot k's values at
 * V + k * RUN, with M (if not NULL) their magnitude bounds. Each node is one
 * loop over the points. With p (the position of the one point, n = 1) reads
 * wrap along periodic axes; without, the points' reads must all lie inside
 * the grid without wrapping. */
static void flat_run(const grid_state *g, const flat_prog *fp, const int64_t *p, int64_t idx, int64_t r, int n,
                     double *V, double *M) {
    const tess_spec *s = g->s;
    for (int k = 0; k < fp->nop; k++) {
        const flat_op *o = &fp->op[k];
        const tess_expr *e = o->e;
        double *restrict out = V + (int64_t)o->out * RUN;   /* a node writes a slot of its own */
        if (e->kind == TESS_EXPR_REF) {
            if (p) out[0] = read_field(g, e, p);
            else
                memcpy(out, g->field[e->index] + (s->field[e->index].rank < s->rank ? r : idx) + o->delta,
                       (size_t)n * sizeof *out);
            if (M)
                for (int j = 0; j < n; j++) M[(int64_t)o->out * RUN + j] = fabs(out[j]);
            continue;
        }
        const double *restrict x = V + (int64_t)o->arg[0] * RUN, *restrict y = V + (int64_t)o->arg[1] * RUN,
                               *restrict z = V + (int64_t)o->arg[2] * RUN;
#define RUN_CASE(code, value)                    \
    case code:                                   \
        for (int j = 0; j < n; j++) out[j] = value; \
        break;
        switch (tess_spec_opcode(e)) {
            TESS_SPEC_OPERATORS(RUN_CASE, x[j], y[j], z[j])
        default:
            for (int j = 0; j < n; j++) out[j] = NAN;
            break;
        }
#undef RUN_CASE
        if (!M) continue;
        /* the magnitude bounds: of a sum, the sum of the bounds; of a product,
         * the product; comparisons and logic are exact 0 or 1 */
        const double *restrict mx = M + (int64_t)o->arg[0] * RUN, *restrict my = M + (int64_t)o->arg[1] * RUN,
                               *restrict mz = M + (int64_t)o->arg[2] * RUN;
        double *restrict mo = M + (int64_t)o->out * RUN;
        switch (tess_spec_opcode(e)) {
        case TESS_OP_NEG: case TESS_OP_CALL + TESS_FN_ABS:
            for (int j = 0; j < n; j++) mo[j] = mx[j];
            break;
        case TESS_OP_BIN + TESS_BIN_ADD: case TESS_OP_BIN + TESS_BIN_SUB:
            for (int j = 0; j < n; j++) mo[j] = mx[j] + my[j];
            break;
        case TESS_OP_BIN + TESS_BIN_MUL:
            for (int j = 0; j < n; j++) mo[j] = mx[j] * my[j];
            break;
        case TESS_OP_BIN + TESS_BIN_DIV:
            for (int j = 0; j < n; j++) mo[j] = mx[j] / fabs(y[j]);
            break;
        case TESS_OP_CALL + TESS_FN_SQRT:
            for (int j = 0; j < n; j++) mo[j] = sqrt(mx[j]);
            break;
        case TESS_OP_CALL + TESS_FN_SELECT:
            for (int j = 0; j < n; j++) mo[j] = fmax(my[j], mz[j]);
            break;
        case TESS_OP_CALL + TESS_FN_MIN: case TESS_OP_CALL + TESS_FN_MAX:
            for (int j = 0; j < n; j++) mo[j] = fmax(mx[j], my[j]);
            break;
        default:
            for (int j = 0; j < n; j++) mo[j] = 0;
            break;
        }
    }
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
    const flat_prog *fp;
    double *const *out;
    bool magnitudes;     /* compute the magnitude bound instead of values */
    int failed;          /* a part could not allocate its slots */
    double smax[TESS_HOST_MAX_PARTS];   /* the bound over each part's planes */
} sweep_job;

/* The point at linear index idx (position p): the boundary copy or the
 * program (a run's slots V and bounds M, of which it uses the first). */
static void sweep_point(sweep_job *w, int part, const int64_t *p, int64_t idx, double *V, double *M) {
    const grid_state *g = w->g;
    const tess_spec *s = g->s;
    if (tess_spec_on_boundary(s, g->n, p)) {
        for (int f = 0; f < s->nfields; f++) {
            if (s->field[f].role != TESS_FIELD_OUT) continue;
            int src = s->field[f].advances;
            double x = src >= 0 ? g->field[src][idx] : 0;
            if (w->magnitudes) w->smax[part] = fmax(w->smax[part], fabs(x));
            else w->out[f][idx] = x;
        }
        return;
    }
    flat_run(g, w->fp, p, idx, 0, 1, V, w->magnitudes ? M : NULL);
    for (int f = 0; f < s->nfields; f++) {
        if (s->out_inst[f] < 0) continue;
        const size_t slot = (size_t)w->fp->inst_slot[s->out_inst[f]] * RUN;
        if (w->magnitudes) w->smax[part] = fmax(w->smax[part], M[slot]);
        else w->out[f][idx] = V[slot];
    }
}

/* Rows along x of planes [lo, hi) of the outermost axis: points near an
 * edge one by one, the runs between them RUN points at a time. */
static void sweep_planes(void *arg, int part, int64_t lo, int64_t hi) {
    sweep_job *w = arg;
    const grid_state *g = w->g;
    const tess_spec *s = g->s;
    const flat_prog *fp = w->fp;
    const int ax = s->rank - 1;
    const int64_t nx = g->n[ax];
    int64_t nplane = 1;
    for (int a = 1; a < s->rank; a++) nplane *= g->n[a];
    const size_t nslot = (size_t)(fp->nslot > 0 ? fp->nslot : 1);
    double *V = malloc(nslot * 2 * RUN * sizeof *V), *M = V + nslot * RUN;   /* a run's slots and bounds */
    if (!V) {
        __atomic_store_n(&w->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    for (size_t k = 0; k < nslot; k++)
        for (int j = 0; j < RUN; j++) {
            V[k * RUN + j] = k < (size_t)fp->nslot ? fp->konst[k] : 0;
            M[k * RUN + j] = fabs(V[k * RUN + j]);
        }
    int64_t p[TESS_SPEC_MAX_RANK];
    for (int64_t outer = lo; outer < hi; outer++)
        for (int64_t row = 0; row < nplane / nx; row++) {
            int64_t rest = row;
            p[0] = outer;
            for (int a = ax - 1; a >= 1; a--) {
                p[a] = rest % g->n[a];
                rest /= g->n[a];
            }
            bool inner = true;   /* the row's reads lie inside the grid but along x */
            for (int a = 0; a < ax; a++) inner = inner && p[a] >= s->lo[a] && p[a] < g->n[a] - s->hi[a];
            const int64_t x0 = inner ? s->lo[ax] : nx, x1 = inner && nx - s->hi[ax] > x0 ? nx - s->hi[ax] : x0;
            const int64_t first = outer * nplane + row * nx;
            for (int64_t x = 0; x < nx; x++) {
                if (x == x0 && x < x1) {   /* the run: no reads wrap, none leaves the grid */
                    for (; x < x1; x += RUN) {
                        const int n = x1 - x < RUN ? (int)(x1 - x) : RUN;
                        const int64_t idx = first + x;
                        flat_run(g, fp, NULL, idx, row * nx + x, n, V, w->magnitudes ? M : NULL);
                        for (int f = 0; f < s->nfields; f++) {
                            if (s->out_inst[f] < 0) continue;
                            const int slot = fp->inst_slot[s->out_inst[f]];
                            if (w->magnitudes)
                                for (int j = 0; j < n; j++) w->smax[part] = fmax(w->smax[part], M[(size_t)slot * RUN + j]);
                            else
                                memcpy(&w->out[f][idx], &V[(size_t)slot * RUN], (size_t)n * sizeof *V);
                        }
                    }
                    x = x1 - 1;
                    continue;
                }
                p[ax] = x;
                sweep_point(w, part, p, first + x, V, M);
            }
        }
    free(V);
}

/* One update of every output into out[], from the fields in g; with
 * scale, the magnitude bound instead (host_parallel.h: plain threads). */
static tess_status sweep(const grid_state *g, double *const *out, double *scale) {
    flat_prog fp;
    tess_status st = flat_compile(g, &fp);
    if (st) return st;
    sweep_job job = {.g = g, .fp = &fp, .out = out, .magnitudes = scale != NULL};
    const int parts = tess_host_parallel(g->n[0], sweep_planes, &job);
    flat_free(&fp);
    if (job.failed) return tess_error(TESS_ERR_NOMEM, "out of memory evaluating stencil '%s'", g->s->name);
    if (!scale) return TESS_OK;
    *scale = 0;
    for (int i = 0; i < parts; i++) *scale = fmax(*scale, job.smax[i]);
    return TESS_OK;
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
        st = sweep(&g, next, NULL);
        if (st) break;
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
    if (!st) st = sweep(&g, NULL, &m);
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
