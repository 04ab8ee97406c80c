/*
 * ljforce.c - the Lennard-Jones force operator (see ljforce.h): task checks,
 * buffers, verification inputs and the float64 reference.
 *
 * Verification compares each output with |out - ref| <= tolerance * (scale
 * + |ref|), the scale being the mean over atoms of the summed magnitudes of
 * their pair terms: a kernel that rounds its sums in f32, or counts a pair
 * that lies within rounding of the cut-off on the other side of it, stays
 * well inside; one that drops a pair well inside the cut-off does not.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/host_parallel.h"
#include "ljforce.h"

enum { B_POS, B_NBR, B_COUNT, B_FORCE, B_EV };

static const tess_attr_spec lj_attrs[] = {
    {"rc", TESS_ATTR_REAL, "2.5", NULL, "cut-off radius (sigma)"},
    {"shift", TESS_ATTR_BOOL, "0", NULL, "subtract the pair energy at the cut-off"},
    {"layout", TESS_ATTR_WORD, "rows", "rows,cols", "neighbour list: a row per atom, or transposed"},
    {"density", TESS_ATTR_REAL, "0.8442", NULL, "atoms per sigma^3 of the verification inputs and default box"},
    {"skin", TESS_ATTR_REAL, "0.3", NULL, "list radius beyond rc of the verification inputs"},
};

tess_status tess_lj_params_get(const tess_task *t, tess_lj_params *p) {
    memset(p, 0, sizeof *p);
    int64_t shift = 0;
    tess_status st = tess_task_attr_real(t, "rc", 2.5, &p->rc);
    if (!st) st = tess_task_attr_real(t, "density", 0.8442, &p->density);
    if (!st) st = tess_task_attr_real(t, "skin", 0.3, &p->skin);
    if (!st) st = tess_task_attr_int(t, "shift", 0, &shift);
    if (st) return st;
    const char *layout = tess_task_attr(t, "layout");
    p->shift = shift != 0;
    p->cols = layout && strcmp(layout, "cols") == 0;
    p->n = t->ndim == 2 ? (long long)t->shape[0] : 0;
    p->m = t->ndim == 2 ? (long long)t->shape[1] : 0;
    return TESS_OK;
}

double tess_lj_box(const tess_lj_params *p) { return cbrt((double)p->n / p->density); }

double tess_lj_energy_shift(const tess_lj_params *p) {
    if (!p->shift) return 0;
    double ir6 = 1 / pow(p->rc, 6);
    return 4 * ir6 * (ir6 - 1);
}

static tess_status lj_check(const tess_op *op, const tess_task *t) {
    (void)op;
    if (t->dtype != TESS_F32 && t->dtype != TESS_F64)
        return tess_error(TESS_ERR_ARG, "ljforce supports f32 and f64, not %s", tess_dtype_name(t->dtype));
    if (t->ndim != 2) return tess_error(TESS_ERR_ARG, "ljforce takes a shape NxM (atoms x list width)");
    tess_lj_params p;
    tess_status st = tess_lj_params_get(t, &p);
    if (st) return st;
    if (!(p.rc > 0 && p.density > 0 && p.skin >= 0))
        return tess_error(TESS_ERR_ARG, "ljforce: rc and density must be positive and skin not negative");
    if (p.n < 2) return tess_error(TESS_ERR_ARG, "ljforce: at least 2 atoms");
    /* The minimum image is the only image within the list radius. */
    double box = tess_lj_box(&p);
    if (box < 2 * (p.rc + p.skin))
        return tess_error(TESS_ERR_ARG,
                          "ljforce: %lld atoms at density %g fill a box of %.3g, less than twice rc + skin (%.3g)",
                          p.n, p.density, box, p.rc + p.skin);
    if (p.n * p.m > INT32_MAX) return tess_error(TESS_ERR_ARG, "ljforce: N*M must fit in 32 bits");
    return TESS_OK;
}

static tess_status lj_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out) {
    (void)op;
    const int64_t n = t->shape[0], m = t->shape[1];
    tess_status st = tess_buffer_list_add(out, "pos", TESS_BUF_IN, t->dtype, 4 * n);
    if (!st) st = tess_buffer_list_add(out, "nbr", TESS_BUF_IN, TESS_I32, n * m);
    if (!st) st = tess_buffer_list_add(out, "count", TESS_BUF_IN, TESS_I32, n);
    if (!st) st = tess_buffer_list_add(out, "force", TESS_BUF_OUT, t->dtype, 3 * n);
    return st ? st : tess_buffer_list_add(out, "ev", TESS_BUF_OUT, TESS_F64, 2 * n);
}

/* Every buffer of one instance is made from the same positions: problem.c
 * seeds buffer i with base * 1000003 + i. */
static tess_status lj_fill(const tess_op *op, const tess_task *t, int index, void *host, uint64_t seed) {
    (void)op;
    tess_lj_params p;
    tess_status st = tess_lj_params_get(t, &p);
    if (st) return st;
    double *pos = malloc((size_t)p.n * 4 * sizeof *pos);
    if (!pos) return tess_error(TESS_ERR_NOMEM, "ljforce: positions of %lld atoms", p.n);
    st = tess_lj_make_positions(&p, seed - (uint64_t)index, pos);
    if (!st && index == B_POS) {
        for (long long i = 0; i < 4 * p.n; i++) tess_dtype_store(host, t->dtype, i, pos[i]);
    } else if (!st) {
        int32_t *nbr = malloc((size_t)(p.n * p.m) * sizeof *nbr), *count = malloc((size_t)p.n * sizeof *count);
        /* Positions rounded to the task's dtype, as the kernel sees them. */
        for (long long i = 0; i < 4 * p.n && t->dtype == TESS_F32; i++) pos[i] = (float)pos[i];
        if (!nbr || !count) st = tess_error(TESS_ERR_NOMEM, "ljforce: neighbour list of %lld atoms", p.n);
        if (!st) st = tess_lj_make_list(&p, pos, nbr, count);
        if (!st && index == B_NBR) memcpy(host, nbr, (size_t)(p.n * p.m) * sizeof *nbr);
        if (!st && index == B_COUNT) memcpy(host, count, (size_t)p.n * sizeof *count);
        free(nbr);
        free(count);
    }
    free(pos);
    return st;
}

/* The pair terms of atoms i and j: energy, force over r (f.r = fr * r2) */
typedef struct pair_term {
    double e, fr, r2, d[3];
    bool inside;
} pair_term;

static pair_term pair(const tess_task *t, const tess_lj_params *p, void *const *bufs, double box, long long i,
                      long long k) {
    pair_term q = {0};
    long long j = tess_dtype_load(bufs[B_NBR], TESS_I32, p->cols ? k * p->n + i : i * p->m + k);
    for (int a = 0; a < 3; a++) {
        double d = tess_dtype_load(bufs[B_POS], t->dtype, 4 * i + a) - tess_dtype_load(bufs[B_POS], t->dtype, 4 * j + a);
        q.d[a] = d - box * nearbyint(d / box);
        q.r2 += q.d[a] * q.d[a];
    }
    q.inside = q.r2 < p->rc * p->rc;
    if (q.inside) {
        double ir2 = 1 / q.r2, ir6 = ir2 * ir2 * ir2;
        q.e = 4 * ir6 * (ir6 - 1) - tess_lj_energy_shift(p);
        q.fr = 24 * ir6 * (2 * ir6 - 1) * ir2;
    }
    return q;
}

/* The reference's and the scale's loops over atoms, spread over the host's cores. */
typedef struct lj_job {
    const tess_task *t;
    tess_lj_params p;
    void *const *bufs;
    double box;
    double total[TESS_HOST_MAX_PARTS];   /* the scale's partial sums */
} lj_job;

static void reference_atoms(void *ctx, int part, int64_t first, int64_t end) {
    (void)part;
    const lj_job *j = ctx;
    for (long long i = first; i < end; i++) {
        double f[3] = {0, 0, 0}, e = 0, w = 0;
        const long long nk = (long long)tess_dtype_load(j->bufs[B_COUNT], TESS_I32, i);
        for (long long k = 0; k < nk; k++) {
            pair_term q = pair(j->t, &j->p, j->bufs, j->box, i, k);
            for (int a = 0; a < 3; a++) f[a] += q.fr * q.d[a];
            e += q.e;
            w += q.fr * q.r2;
        }
        for (int a = 0; a < 3; a++) tess_dtype_store(j->bufs[B_FORCE], j->t->dtype, 3 * i + a, f[a]);
        tess_dtype_store(j->bufs[B_EV], TESS_F64, 2 * i, 0.5 * e);
        tess_dtype_store(j->bufs[B_EV], TESS_F64, 2 * i + 1, 0.5 * w);
    }
}

static tess_status lj_reference(const tess_op *op, const tess_task *t, void *const *bufs) {
    (void)op;
    lj_job j = {.t = t, .bufs = bufs};
    tess_status st = tess_lj_params_get(t, &j.p);
    if (st) return st;
    j.box = tess_lj_box(&j.p);
    tess_host_parallel(j.p.n, reference_atoms, &j);
    return TESS_OK;
}

static void scale_atoms(void *ctx, int part, int64_t first, int64_t end) {
    lj_job *j = ctx;
    double total = 0;
    for (long long i = first; i < end; i++) {
        const long long nk = (long long)tess_dtype_load(j->bufs[B_COUNT], TESS_I32, i);
        for (long long k = 0; k < nk; k++) {
            pair_term q = pair(j->t, &j->p, j->bufs, j->box, i, k);
            total += fabs(q.e) + fabs(q.fr) * (sqrt(q.r2) + q.r2);
        }
    }
    j->total[part] = total;
}

static double lj_verify_scale(const tess_op *op, const tess_task *t, void *const *bufs) {
    (void)op;
    lj_job j = {.t = t, .bufs = bufs};
    if (tess_lj_params_get(t, &j.p)) return 1;
    j.box = tess_lj_box(&j.p);
    const int parts = tess_host_parallel(j.p.n, scale_atoms, &j);
    double total = 0;
    for (int q = 0; q < parts; q++) total += j.total[q];
    return total / (double)j.p.n > 1 ? total / (double)j.p.n : 1;
}

/* Pairs each atom's list holds on average: those within rc + skin at the density. */
static double mean_neighbours(const tess_lj_params *p) {
    double r = p->rc + p->skin, mean = 4.0 / 3.0 * M_PI * r * r * r * p->density;
    return mean < (double)p->m ? mean : (double)p->m;
}

/* Per listed pair: a distance (9 flops), its test, and inside the cut-off
 * about 20 more; counted as 30. */
static double lj_flops(const tess_op *op, const tess_task *t) {
    (void)op;
    tess_lj_params p;
    if (tess_lj_params_get(t, &p)) return 0;
    return 30.0 * (double)p.n * mean_neighbours(&p);
}

/* Each atom's position, count, force and ev once, and the listed entries
 * (not the padding past count); the neighbours' positions come from cache. */
static double lj_bytes(const tess_op *op, const tess_task *t) {
    (void)op;
    tess_lj_params p;
    if (tess_lj_params_get(t, &p)) return 0;
    const double real = (double)tess_dtype_size(t->dtype);
    return (double)p.n * (4 * real + 4 + 3 * real + 16 + 4 * mean_neighbours(&p));
}

static double lj_tolerance(const tess_op *op, const tess_task *t) {
    (void)op;
    /* f32: 3e-4 of a scale of about 200 (0.06) passes a pair within rounding
     * of rc counted on the other side (its virial half 0.02 unshifted), and
     * fails a pair dropped inside r = 2 (0.18). */
    return t->dtype == TESS_F64 ? 1e-9 : 3e-4;
}

static const tess_op_backend lj_impl[] = {
    {.backend = "cpu", .space = tess_ljforce_cpu_space, .emit = tess_ljforce_cpu_emit},
    {.backend = "cuda", .space = tess_ljforce_cuda_space, .emit = tess_ljforce_cuda_emit},
};

const tess_op tess_op_ljforce = {
    .name = "ljforce",
    .family = "reductions",
    .summary = "Lennard-Jones forces over a neighbour list (buffers: pos, nbr, count, force, ev; scalar box)",
    .default_shape = "32000x128",
    .extents = "N,M",
    .attrs = lj_attrs,
    .nattrs = sizeof lj_attrs / sizeof lj_attrs[0],
    .impl = lj_impl,
    .nimpl = 2,
    .check_task = lj_check,
    .buffers = lj_buffers,
    .fill_input = lj_fill,
    .reference = lj_reference,
    .flops = lj_flops,
    .bytes = lj_bytes,
    .tolerance = lj_tolerance,
    .verify_scale = lj_verify_scale,
};
