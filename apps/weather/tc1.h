/*
 * tc1.h - Williamson et al. (1992), "A standard test set for numerical
 * approximations to the shallow water equations in spherical geometry",
 * J. Comput. Phys. 102, 211-224: test case 1, a cosine bell advected once
 * around the sphere (12 days) by solid-body rotation about an axis tilted
 * by alpha from the pole, and the normalized error norms of its section 2.
 */
#ifndef WEATHER_TC1_H
#define WEATHER_TC1_H

#include "grid.h"

#define TC1_RADIUS 6.37122e6              /* m */
#define TC1_PERIOD (12.0 * 86400.0)       /* s, one revolution */
#define TC1_H0 1000.0                     /* m, the bell's height */

/* The bell (m) at every cell centre of the padded 3D array q (0 beyond the edges). */
void tc1_bell(const grid *g, double *q);
/* Winds (m/s) of the solid-body rotation at a point. */
void tc1_wind(double lon, double lat, double alpha, double *u, double *v);
/* Mass fluxes per second (radius-squared units) through the west and south
 * faces, from the stream function at the cells' corners: the discrete flow
 * is exactly non-divergent. Padded 3D arrays. */
void tc1_fluxes(const grid *g, double alpha, double *mx, double *my);

typedef struct tc1_norms {
    double l1, l2, linf;        /* normalized, as in Williamson et al. eq. (82)-(84) */
    double mass_change;         /* (final - initial) / initial global integral */
    double min0, max0, min, max;/* extrema before and after */
} tc1_norms;

/* Norms of q against the exact solution qt (both padded 3D, level 0), and
 * extrema and mass against q0. */
void tc1_measure(const grid *g, const double *q, const double *qt, const double *q0, tc1_norms *out);

#endif
