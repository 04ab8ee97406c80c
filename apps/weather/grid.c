/*
 * grid.c - geometry of the latitude-longitude finite-volume grid.
 */
#include "grid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double deg(double d) { return d * M_PI / 180.0; }

int grid_init(grid *g, int nz, int nlat, const double *lat_deg, int nlon, double lon0_deg) {
    memset(g, 0, sizeof *g);
    g->nz = nz;
    g->nlat = nlat;
    g->nlon = nlon;
    g->dlon = 2 * M_PI / nlon;
    g->lat = malloc(sizeof(double) * (size_t)nlat);
    g->lat_edge = malloc(sizeof(double) * (size_t)(nlat + 1));
    g->area = malloc(sizeof(double) * (size_t)nlat);
    g->lon = malloc(sizeof(double) * (size_t)nlon);
    if (!g->lat || !g->lat_edge || !g->area || !g->lon) {
        grid_free(g);
        return -1;
    }
    for (int j = 0; j < nlat; j++) {
        g->lat[j] = deg(lat_deg[j]);
        g->lat_edge[j] = j ? deg(0.5 * (lat_deg[j - 1] + lat_deg[j])) : 0;
    }
    double first = nlat > 1 ? deg(lat_deg[1] - lat_deg[0]) : M_PI;
    double last = nlat > 1 ? deg(lat_deg[nlat - 1] - lat_deg[nlat - 2]) : M_PI;
    g->lat_edge[0] = fmax(-M_PI / 2, deg(lat_deg[0]) - 0.5 * first);
    g->lat_edge[nlat] = fmin(M_PI / 2, deg(lat_deg[nlat - 1]) + 0.5 * last);
    /* a grid whose outer edges lie within a thousandth of a row of the poles covers them */
    g->global = g->lat_edge[0] <= -M_PI / 2 + 1e-3 * first && g->lat_edge[nlat] >= M_PI / 2 - 1e-3 * last;
    if (g->global) {
        g->lat_edge[0] = -M_PI / 2;
        g->lat_edge[nlat] = M_PI / 2;
    }
    for (int j = 0; j < nlat; j++) g->area[j] = g->dlon * (sin(g->lat_edge[j + 1]) - sin(g->lat_edge[j]));
    for (int i = 0; i < nlon; i++) g->lon[i] = deg(lon0_deg) + i * g->dlon;
    return 0;
}

int grid_init_global(grid *g, int nz, int nlat) {
    double *lat = calloc((size_t)nlat, sizeof(double));
    if (!lat) return -1;
    for (int j = 0; j < nlat; j++) lat[j] = -90.0 + 180.0 * (j + 0.5) / nlat;
    int rc = grid_init(g, nz, nlat, lat, 2 * nlat, 180.0 / (2 * nlat));
    free(lat);
    return rc;
}

void grid_free(grid *g) {
    free(g->lat);
    free(g->lat_edge);
    free(g->lon);
    free(g->area);
    memset(g, 0, sizeof *g);
}

void grid_task_shape(const grid *g, int64_t shape[3]) {
    shape[0] = g->nz;
    shape[1] = g->nlat + 2 * GRID_PAD;
    shape[2] = g->nlon;
}

int64_t grid_padded_2d(const grid *g) { return (int64_t)(g->nlat + 2 * GRID_PAD) * g->nlon; }
int64_t grid_padded_3d(const grid *g) { return g->nz * grid_padded_2d(g); }

int64_t grid_at(const grid *g, int k, int j, int i) {
    return ((int64_t)k * (g->nlat + 2 * GRID_PAD) + j + GRID_PAD) * g->nlon + i;
}
