/*
 * tc1.c - Williamson's test case 1: initial bell, winds and error norms.
 */
#include "tc1.h"

#include <math.h>
#include <string.h>

void tc1_bell(const grid *g, double *q) {
    const double lonc = 1.5 * M_PI, latc = 0, r0 = 1.0 / 3.0;   /* the bell's centre and radius (of R) */
    memset(q, 0, sizeof(double) * (size_t)grid_padded_3d(g));
    for (int k = 0; k < g->nz; k++)
        for (int j = 0; j < g->nlat; j++)
            for (int i = 0; i < g->nlon; i++) {
                double c = sin(latc) * sin(g->lat[j]) + cos(latc) * cos(g->lat[j]) * cos(g->lon[i] - lonc);
                double r = acos(fmax(-1, fmin(1, c)));
                q[grid_at(g, k, j, i)] = r < r0 ? 0.5 * TC1_H0 * (1 + cos(M_PI * r / r0)) : 0;
            }
}

static double u0(void) { return 2 * M_PI * TC1_RADIUS / TC1_PERIOD; }

void tc1_wind(double lon, double lat, double alpha, double *u, double *v) {
    *u = u0() * (cos(lat) * cos(alpha) + sin(lat) * cos(lon) * sin(alpha));
    *v = -u0() * sin(lon) * sin(alpha);
}

/* The stream function over R^2 (per second): u = -dpsi/dlat, v = dpsi/dlon / cos(lat), in units of R. */
static double psi(double lon, double lat, double alpha) {
    double s = sin(lat), c = fabs(lat) >= M_PI / 2 ? 0 : cos(lat);
    return -u0() / TC1_RADIUS * (s * cos(alpha) - cos(lon) * c * sin(alpha));
}

void tc1_fluxes(const grid *g, double alpha, double *mx, double *my) {
    memset(mx, 0, sizeof(double) * (size_t)grid_padded_3d(g));
    memset(my, 0, sizeof(double) * (size_t)grid_padded_3d(g));
    for (int k = 0; k < g->nz; k++)
        for (int j = 0; j <= g->nlat; j++)
            for (int i = 0; i < g->nlon; i++) {
                double lw = g->lon[i] - 0.5 * g->dlon, le = lw + g->dlon;
                double s = g->lat_edge[j];
                int64_t p = grid_at(g, k, j, i);   /* row nlat: the first row beyond the north edge */
                if (j < g->nlat) mx[p] = -(psi(lw, g->lat_edge[j + 1], alpha) - psi(lw, s, alpha));
                /* no flux through a pole: the face has no length */
                my[p] = j == 0 || j == g->nlat ? 0 : psi(le, s, alpha) - psi(lw, s, alpha);
            }
}

void tc1_measure(const grid *g, const double *q, const double *qt, const double *q0, tc1_norms *out) {
    double i1 = 0, i1t = 0, i2 = 0, i2t = 0, dmax = 0, tmax = 0, m = 0, mass0 = 0;
    out->min = out->min0 = INFINITY;
    out->max = out->max0 = -INFINITY;
    for (int j = 0; j < g->nlat; j++)
        for (int i = 0; i < g->nlon; i++) {
            int64_t p = grid_at(g, 0, j, i);
            double a = g->area[j], d = q[p] - qt[p];
            i1 += a * fabs(d);
            i1t += a * fabs(qt[p]);
            i2 += a * d * d;
            i2t += a * qt[p] * qt[p];
            dmax = fmax(dmax, fabs(d));
            tmax = fmax(tmax, fabs(qt[p]));
            m += a * q[p];
            mass0 += a * q0[p];
            out->min = fmin(out->min, q[p]);
            out->max = fmax(out->max, q[p]);
            out->min0 = fmin(out->min0, q0[p]);
            out->max0 = fmax(out->max0, q0[p]);
        }
    out->l1 = i1 / i1t;
    out->l2 = sqrt(i2 / i2t);
    out->linf = dmax / tmax;
    out->mass_change = (m - mass0) / mass0;
}
