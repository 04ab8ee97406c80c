/*
 * svg.h - maps of a field on the latitude-longitude grid as an SVG picture:
 * panels side by side and in rows, each a coloured cell per grid cell
 * (averaged to at most 180 columns), with a colour bar.
 */
#ifndef WEATHER_SVG_H
#define WEATHER_SVG_H

#include "grid.h"

typedef struct svg_panel {
    const grid *g;
    const double *q;          /* padded 3D, level 0 drawn */
    const unsigned char *mask;/* padded 2D, 1 where a point is missing (drawn grey); may be NULL */
    const char *label;
} svg_panel;

/* Writes panels (columns per row) on a common colour scale lo..hi; 0 or -1 (errno set). */
int svg_write_maps(const char *path, const char *title, const svg_panel *panels, int n, int columns, double lo,
                   double hi);

#endif
