/*
 * fields.c - density, velocity and vorticity from the populations of a run
 * (g_i = f_i - w_i in the operators' direction order and layout).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "fluid.h"

int fluid_fields_alloc(fluid_fields *f, int64_t cells) {
    memset(f, 0, sizeof *f);
    f->cells = cells;
    for (int a = 0; a < 3; a++) f->u[a] = calloc((size_t)cells, sizeof(double));
    f->rho = calloc((size_t)cells, sizeof(double));
    f->vort = calloc((size_t)cells, sizeof(double));
    if (f->u[0] && f->u[1] && f->u[2] && f->rho && f->vort) return FLUID_OK;
    fluid_fields_free(f);
    return FLUID_FAIL;
}

void fluid_fields_free(fluid_fields *f) {
    for (int a = 0; a < 3; a++) free(f->u[a]);
    free(f->rho);
    free(f->vort);
    memset(f, 0, sizeof *f);
}

/* IEEE half bits as a double. */
static double half_to_double(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

static double load(const void *g, const char *dtype, int64_t i) {
    if (strcmp(dtype, "f64") == 0) return ((const double *)g)[i];
    if (strcmp(dtype, "f16") == 0) return half_to_double(((const uint16_t *)g)[i]);
    return ((const float *)g)[i];
}

void fluid_fields_compute(const fluid_case *c, const void *g, const char *dtype, bool aos, fluid_fields *f) {
    const fluid_lattice *L = c->lat;
    const int64_t n = c->cells;
    for (int64_t k = 0; k < n; k++) {
        double d = 0, j[3] = {0, 0, 0};
        for (int i = 0; i < L->q; i++) {
            double v = load(g, dtype, aos ? k * L->q + i : (int64_t)i * n + k);
            d += v;
            for (int a = 0; a < 3; a++) j[a] += L->c[i][a] * v;
        }
        /* boundary cells keep their populations: show their prescribed state */
        bool fluid = c->mask[k] == CELL_FLUID;
        f->rho[k] = fluid ? 1.0 + d : 1.0;
        for (int a = 0; a < 3; a++) f->u[a][k] = fluid ? j[a] / (1.0 + d) : 0.0;
        if (c->mask[k] == CELL_MOVING) f->u[0][k] = c->velocity;
    }
    const int64_t nz = c->ndim == 3 ? c->shape[0] : 1, ny = c->shape[c->ndim - 2], nx = c->shape[c->ndim - 1];
    const int64_t sy = nx, sz = nx * ny;
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) {
                int64_t k = (z * ny + y) * nx + x;
                f->vort[k] = 0;
                if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) continue;
                double wz = 0.5 * (f->u[1][k + 1] - f->u[1][k - 1]) - 0.5 * (f->u[0][k + sy] - f->u[0][k - sy]);
                if (c->ndim == 2) {
                    f->vort[k] = wz;
                    continue;
                }
                if (z == 0 || z == nz - 1) continue;
                double wx = 0.5 * (f->u[2][k + sy] - f->u[2][k - sy]) - 0.5 * (f->u[1][k + sz] - f->u[1][k - sz]);
                double wy = 0.5 * (f->u[0][k + sz] - f->u[0][k - sz]) - 0.5 * (f->u[2][k + 1] - f->u[2][k - 1]);
                f->vort[k] = sqrt(wx * wx + wy * wy + wz * wz);
            }
}

double fluid_mass(const fluid_case *c, const fluid_fields *f) {
    double m = 0;
    for (int64_t k = 0; k < c->cells; k++)
        if (c->mask[k] == CELL_FLUID) m += f->rho[k];
    return m;
}
