/*
 * svg.c - maps of fields as SVG.
 */
#include "svg.h"

#include <math.h>
#include <stdio.h>

#define MAP_W 360
#define MAP_H 180
#define MAX_COLS 180

/* White through blue to dark red, the field's fraction t in [0, 1]. */
static void colour(double t, int rgb[3]) {
    static const int stops[4][3] = {{255, 255, 255}, {70, 130, 220}, {30, 160, 80}, {180, 30, 30}};
    t = fmax(0, fmin(1, t)) * 3;
    int s = t >= 3 ? 2 : (int)t;
    double f = t - s;
    for (int c = 0; c < 3; c++) rgb[c] = (int)lround(stops[s][c] + f * (stops[s + 1][c] - stops[s][c]));
}

static void panel(FILE *f, const svg_panel *p, double x0, double y0, double lo, double hi) {
    const grid *g = p->g;
    int step = (g->nlon + MAX_COLS - 1) / MAX_COLS;   /* grid cells per drawn cell, each way */
    for (int j = 0; j < g->nlat; j += step)
        for (int i = 0; i < g->nlon; i += step) {
            double sum = 0;
            int n = 0, missing = 0;
            for (int jj = j; jj < j + step && jj < g->nlat; jj++)
                for (int ii = i; ii < i + step && ii < g->nlon; ii++) {
                    int64_t at = grid_at(g, 0, jj, ii);
                    if (p->mask && p->mask[at]) missing++;
                    else sum += p->q[at], n++;
                }
            double lat0 = g->lat_edge[j], lat1 = g->lat_edge[j + step < g->nlat ? j + step : g->nlat];
            double x = x0 + MAP_W * (double)i / g->nlon, w = MAP_W * (double)step / g->nlon + 0.05;
            double y = y0 + MAP_H * (0.5 - lat1 / M_PI), h = MAP_H * (lat1 - lat0) / M_PI + 0.05;
            int rgb[3] = {160, 160, 160};
            if (n > missing) colour((sum / n - lo) / (hi - lo), rgb);
            if (rgb[0] == 255 && rgb[1] == 255 && rgb[2] == 255) continue;
            fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#%02x%02x%02x\"/>\n", x, y, w,
                    h, rgb[0], rgb[1], rgb[2]);
        }
    fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>\n", x0, y0, MAP_W,
            MAP_H);
    fprintf(f, "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n", x0, y0 - 6, p->label);
}

int svg_write_maps(const char *path, const char *title, const svg_panel *panels, int n, int columns, double lo,
                   double hi) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    int rows = (n + columns - 1) / columns;
    int width = 40 + columns * (MAP_W + 30), height = 70 + rows * (MAP_H + 40) + 40;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
            "font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
            "<text x=\"20\" y=\"24\" font-size=\"15\">%s</text>\n", width, height, title);
    for (int p = 0; p < n; p++)
        panel(f, &panels[p], 20 + (p % columns) * (MAP_W + 30), 60 + (p / columns) * (MAP_H + 40), lo, hi);
    double by = 60 + rows * (MAP_H + 40);
    for (int s = 0; s < 100; s++) {
        int rgb[3];
        colour(s / 99.0, rgb);
        fprintf(f, "<rect x=\"%.1f\" y=\"%.0f\" width=\"2.1\" height=\"10\" fill=\"#%02x%02x%02x\"/>\n", 20 + 2.0 * s, by,
                rgb[0], rgb[1], rgb[2]);
    }
    fprintf(f, "<rect x=\"20\" y=\"%.0f\" width=\"200\" height=\"10\" fill=\"none\" stroke=\"#444\"/>\n"
            "<text x=\"20\" y=\"%.0f\">%g</text><text x=\"200\" y=\"%.0f\">%g</text>\n</svg>\n", by, by + 24, lo, by + 24,
            hi);
    return fclose(f) ? -1 : 0;
}
