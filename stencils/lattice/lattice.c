/*
 * lattice.c - the D2Q9 and D3Q19 lattices and the float64 reference step of
 * the stream-collide operators (lattice.h): the definition every generated
 * kernel is verified against.
 */
#include <math.h>
#include <string.h>
#include "core/error.h"
#include "core/host_parallel.h"
#include "lattice.h"

const lbm_lattice lbm_d2q9 = {
    .name = "d2q9",
    .dim = 2,
    .q = 9,
    .c = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {-1, 0, 0}, {0, -1, 0}, {1, 1, 0}, {-1, 1, 0}, {-1, -1, 0}, {1, -1, 0}},
    .w = {4.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 9, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36},
    .opp = {0, 3, 4, 1, 2, 7, 8, 5, 6},
};

const lbm_lattice lbm_d3q19 = {
    .name = "d3q19",
    .dim = 3,
    .q = 19,
    .c = {{0, 0, 0},  {1, 0, 0},  {-1, 0, 0}, {0, 1, 0},  {0, -1, 0}, {0, 0, 1},   {0, 0, -1},
          {1, 1, 0},  {-1, -1, 0}, {1, -1, 0}, {-1, 1, 0}, {1, 0, 1},  {-1, 0, -1}, {1, 0, -1},
          {-1, 0, 1}, {0, 1, 1},  {0, -1, -1}, {0, 1, -1}, {0, -1, 1}},
    .w = {1.0 / 3,  1.0 / 18, 1.0 / 18, 1.0 / 18, 1.0 / 18, 1.0 / 18, 1.0 / 18,
          1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36,
          1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36, 1.0 / 36},
    .opp = {0, 2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11, 14, 13, 16, 15, 18, 17},
};

/* TRT's magic parameter (1/omega - 1/2)(1/omega_minus - 1/2): 3/16 puts
 * bounce-back walls exactly half-way between nodes for Poiseuille flow. */
#define LBM_TRT_MAGIC (3.0 / 16.0)

tess_status lbm_params_get(const tess_op *op, const tess_task *t, lbm_params *p) {
    memset(p, 0, sizeof *p);
    p->lat = op->data;
    const int d = p->lat->dim;
    if (t->ndim != d)
        return tess_error(TESS_ERR_ARG, "%s needs a %dD shape (%s), got %d dimensions", op->name, d, op->extents,
                          t->ndim);
    p->nz = d == 3 ? t->shape[0] : 1;
    p->ny = t->shape[d - 2];
    p->nx = t->shape[d - 1];
    p->cells = p->nz * p->ny * p->nx;
    const char *axes[3] = {"ux", "uy", "uz"};
    tess_status st = tess_task_attr_real(t, "omega", 1.6, &p->omega);
    for (int a = 0; a < d && !st; a++) st = tess_task_attr_real(t, axes[a], 0, &p->u_wall[a]);
    if (st) return st;
    const char *coll = tess_task_attr(t, "collision"), *layout = tess_task_attr(t, "layout");
    p->trt = coll && strcmp(coll, "trt") == 0;
    p->aos = layout && strcmp(layout, "aos") == 0;
    if (!(p->omega > 0 && p->omega < 2))
        return tess_error(TESS_ERR_ARG, "%s: omega %g is outside (0, 2), where the collision is stable", op->name,
                          p->omega);
    double speed = sqrt(p->u_wall[0] * p->u_wall[0] + p->u_wall[1] * p->u_wall[1] + p->u_wall[2] * p->u_wall[2]);
    if (!(speed < 0.4))
        return tess_error(TESS_ERR_ARG, "%s: the wall velocity %g (lattice units) is not below 0.4, the lattice's"
                          " limit for weakly compressible flow", op->name, speed);
    p->omega_minus = p->trt ? 1.0 / (0.5 + LBM_TRT_MAGIC / (1.0 / p->omega - 0.5)) : p->omega;
    return TESS_OK;
}

/* Index of population i of cell n in the task's layout. */
static int64_t lbm_index(const lbm_params *p, int i, int64_t n) {
    return p->aos ? n * p->lat->q + i : (int64_t)i * p->cells + n;
}

/* The equilibrium part of g_i = f_i - w_i at density 1 + drho and velocity u. */
static double lbm_geq(const lbm_lattice *L, int i, double drho, const double *u) {
    double cu = 3.0 * (L->c[i][0] * u[0] + L->c[i][1] * u[1] + L->c[i][2] * u[2]);
    double usq = 1.5 * (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    return L->w[i] * (drho + (1.0 + drho) * (cu + 0.5 * cu * cu - usq));
}

/* Density deviation and velocity of populations g. */
static void lbm_moments(const lbm_lattice *L, const double *g, double *drho, double *u) {
    double d = 0, j[3] = {0, 0, 0};
    for (int i = 0; i < L->q; i++) {
        d += g[i];
        for (int a = 0; a < 3; a++) j[a] += L->c[i][a] * g[i];
    }
    *drho = d;
    for (int a = 0; a < 3; a++) u[a] = j[a] / (1.0 + d);
}

static int64_t lbm_wrap(int64_t v, int64_t n) { return v < 0 ? v + n : v >= n ? v - n : v; }

/* One step of cell (x, y, z): gather, boundary rules, collision. */
static void lbm_reference_cell(const lbm_params *p, tess_dtype dt, const void *g, const uint8_t *flags, void *go,
                               int64_t x, int64_t y, int64_t z) {
    const lbm_lattice *L = p->lat;
    const int64_t c = (z * p->ny + y) * p->nx + x;
    if (flags[c] != LBM_FLUID) {
        for (int i = 0; i < L->q; i++)
            tess_dtype_store(go, dt, lbm_index(p, i, c), tess_dtype_load(g, dt, lbm_index(p, i, c)));
        return;
    }
    double f[LBM_MAX_Q], own[LBM_MAX_Q];
    bool outlet[LBM_MAX_Q] = {false}, any_outlet = false;
    for (int i = 0; i < L->q; i++) {
        own[i] = tess_dtype_load(g, dt, lbm_index(p, i, c));
        int64_t n = (lbm_wrap(z - L->c[i][2], p->nz) * p->ny + lbm_wrap(y - L->c[i][1], p->ny)) * p->nx +
                    lbm_wrap(x - L->c[i][0], p->nx);
        switch (flags[n]) {
        case LBM_FLUID: f[i] = tess_dtype_load(g, dt, lbm_index(p, i, n)); break;
        case LBM_OUTLET: outlet[i] = any_outlet = true; break;
        default: {   /* LBM_WALL, LBM_MOVING */
            /* half-way bounce-back; Ladd: a moving wall adds 2 w_i rho0 (c_i . u_w) / cs^2 */
            double cu = L->c[i][0] * p->u_wall[0] + L->c[i][1] * p->u_wall[1] + L->c[i][2] * p->u_wall[2];
            f[i] = tess_dtype_load(g, dt, lbm_index(p, L->opp[i], c)) +
                   (flags[n] == LBM_MOVING ? 6.0 * L->w[i] * cu : 0.0);
            break;
        }
        }
    }
    double drho, u[3];
    if (any_outlet) {
        /* the cell's own populations after its last collision carry its velocity */
        lbm_moments(L, own, &drho, u);
        for (int i = 0; i < L->q; i++)
            if (outlet[i]) f[i] = lbm_geq(L, i, 0.0, u);
    }
    lbm_moments(L, f, &drho, u);
    double neq[LBM_MAX_Q];
    for (int i = 0; i < L->q; i++) neq[i] = f[i] - lbm_geq(L, i, drho, u);
    for (int i = 0; i < L->q; i++) {
        double sym = 0.5 * (neq[i] + neq[L->opp[i]]), anti = 0.5 * (neq[i] - neq[L->opp[i]]);
        tess_dtype_store(go, dt, lbm_index(p, i, c), f[i] - p->omega * sym - p->omega_minus * anti);
    }
}

typedef struct lbm_rows {
    const lbm_params *p;
    tess_dtype dt;
    void *const *bufs;
} lbm_rows;

/* Rows [first, end), a row being z * ny + y. */
static void lbm_reference_rows(void *arg, int part, int64_t first, int64_t end) {
    (void)part;
    const lbm_rows *r = arg;
    for (int64_t row = first; row < end; row++)
        for (int64_t x = 0; x < r->p->nx; x++)
            lbm_reference_cell(r->p, r->dt, r->bufs[0], r->bufs[1], r->bufs[2], x, row % r->p->ny, row / r->p->ny);
}

/* Rows are shared among the host's cores (host_parallel.h: plain threads). */
tess_status lbm_reference(const tess_op *op, const tess_task *t, void *const *bufs) {
    lbm_params p;
    tess_status st = lbm_params_get(op, t, &p);
    if (st) return st;
    const uint8_t *flags = bufs[1];
    for (int64_t c = 0; c < p.cells; c++)
        if (flags[c] >= LBM_KINDS)
            return tess_error(TESS_ERR_ARG, "%s: cell %lld has kind %d, not one of 0 (fluid), 1 (wall), 2 (moving"
                              " wall or inlet), 3 (outlet)", op->name, (long long)c, (int)flags[c]);
    lbm_rows rows = {&p, t->dtype, bufs};
    tess_host_parallel(p.nz * p.ny, lbm_reference_rows, &rows);
    return TESS_OK;
}
