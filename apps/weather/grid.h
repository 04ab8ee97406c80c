/*
 * grid.h - a regular latitude-longitude grid of finite-volume cells on the
 * sphere, as the weather app's stencils see it: rows south to north, two rows
 * beyond each edge (the stencils' reach; never counted), longitude periodic.
 * Lengths are in units of the sphere's radius, areas in radius squared.
 */
#ifndef WEATHER_GRID_H
#define WEATHER_GRID_H

#include <stdint.h>

#define GRID_PAD 2   /* rows beyond each edge of the grid in the kernels' arrays */

typedef struct grid {
    int nz, nlat, nlon;
    double dlon;            /* radians */
    double *lat;            /* nlat cell centres, radians, south to north (owned) */
    double *lat_edge;       /* nlat + 1 row edges (owned); at most +-pi/2 */
    double *lon;            /* nlon cell centres, radians (owned) */
    double *area;           /* nlat cell areas of each row (owned) */
    int global;             /* the edges reach both poles */
} grid;

/* A grid of nz levels on nlat rows of centres lat (degrees, ascending) and
 * nlon columns from lon0 (degrees), dlon = 360 / nlon apart; row edges halfway
 * between centres, the outer ones half a spacing out (clamped to the poles).
 * Returns 0, or -1 when out of memory. */
int grid_init(grid *g, int nz, int nlat, const double *lat_deg, int nlon, double lon0_deg);
/* The Williamson test grid: nlat rows of cells covering the sphere, 2 nlat columns. */
int grid_init_global(grid *g, int nz, int nlat);
void grid_free(grid *g);

/* The kernels' task shape: nz x (nlat + 2 GRID_PAD) x nlon. */
void grid_task_shape(const grid *g, int64_t shape[3]);
/* Points of a padded 2D (y, x) and 3D array. */
int64_t grid_padded_2d(const grid *g);
int64_t grid_padded_3d(const grid *g);
/* Index in a padded array of level k, row j (0 .. nlat-1), column i. */
int64_t grid_at(const grid *g, int k, int j, int i);

#endif
