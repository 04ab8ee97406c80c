/*
 * svg.c - the run's picture: the speed field (the middle plane of a 3D
 * run), coarsened to at most 64 squares a side, and each profile as a line
 * with the reference points as circles.
 */
#include <math.h>
#include <stdio.h>
#include "fluid.h"

#define PANEL 360
#define MARGIN 50
#define FIELD_MAX 64

/* Text with XML's special characters escaped. */
static void svg_escaped(FILE *fp, const char *text) {
    for (; *text; text++) {
        if (*text == '&') fputs("&amp;", fp);
        else if (*text == '<') fputs("&lt;", fp);
        else if (*text == '>') fputs("&gt;", fp);
        else fputc(*text, fp);
    }
}

/* A blue-white-red ramp of t in [0, 1]. */
static void ramp(double t, int *r, int *g, int *b) {
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double s = t < 0.5 ? t * 2 : (t - 0.5) * 2;
    if (t < 0.5) {
        *r = (int)(40 + 215 * s);
        *g = (int)(70 + 185 * s);
        *b = 255;
    } else {
        *r = 255;
        *g = (int)(255 - 200 * s);
        *b = (int)(255 - 215 * s);
    }
}

static void svg_field(FILE *fp, const fluid_case *c, const fluid_fields *f, double x0, double y0) {
    const int d = c->ndim;
    const int64_t ny = c->shape[d - 2], nx = c->shape[d - 1], z = d == 3 ? c->shape[0] / 2 : 0;
    const int64_t big = nx > ny ? nx : ny, step = (big + FIELD_MAX - 1) / FIELD_MAX;
    const double cell = (double)PANEL / (double)big;
    double vmax = 1e-30;
    for (int64_t k = 0; k < c->cells; k++)
        vmax = fmax(vmax, sqrt(f->u[0][k] * f->u[0][k] + f->u[1][k] * f->u[1][k] + f->u[2][k] * f->u[2][k]));
    fprintf(fp, "<text x=\"%g\" y=\"%g\" font-size=\"14\">speed |u| / U%s (0 blue, %.2f red)</text>\n", x0,
            y0 - 8, d == 3 ? ", middle plane" : "", vmax / c->velocity);
    for (int64_t y = 0; y < ny; y += step)
        for (int64_t x = 0; x < nx; x += step) {
            double s = 0;
            int n = 0;
            for (int64_t yy = y; yy < y + step && yy < ny; yy++)
                for (int64_t xx = x; xx < x + step && xx < nx; xx++) {
                    int64_t k = (z * ny + yy) * nx + xx;
                    s += sqrt(f->u[0][k] * f->u[0][k] + f->u[1][k] * f->u[1][k] + f->u[2][k] * f->u[2][k]);
                    n++;
                }
            int r, g, b;
            ramp(s / n / vmax, &r, &g, &b);
            /* y grows upwards in the flow, downwards in SVG */
            fprintf(fp, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"rgb(%d,%d,%d)\"/>\n",
                    x0 + x * cell, y0 + (ny - y - step) * cell, step * cell + 0.3, step * cell + 0.3, r, g, b);
        }
}

static void svg_profile(FILE *fp, const fluid_profile *p, double x0, double y0) {
    double lo = 0, hi = 0;
    for (int i = 0; i < p->n; i++) lo = fmin(lo, p->val[i]), hi = fmax(hi, p->val[i]);
    for (int j = 0; j < p->nref; j++) lo = fmin(lo, p->ref_val[j]), hi = fmax(hi, p->ref_val[j]);
    double pad = 0.05 * (hi - lo + 1e-12);
    lo -= pad;
    hi += pad;
#define PX(v) (x0 + (v) * PANEL)
#define PY(v) (y0 + PANEL - ((v) - lo) / (hi - lo) * PANEL)
    fprintf(fp, "<text x=\"%g\" y=\"%g\" font-size=\"14\">", x0, y0 - 8);
    svg_escaped(fp, p->title);
    fputs("</text>\n", fp);
    fprintf(fp, "<rect x=\"%g\" y=\"%g\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>\n", x0, y0,
            PANEL, PANEL);
    fprintf(fp, "<line x1=\"%g\" y1=\"%.1f\" x2=\"%g\" y2=\"%.1f\" stroke=\"#bbb\"/>\n", x0, PY(0), x0 + PANEL,
            PY(0));
    fprintf(fp, "<text x=\"%g\" y=\"%g\" font-size=\"12\">%s</text>\n", x0 + PANEL / 2 - 15, y0 + PANEL + 30,
            p->xlabel);
    fprintf(fp, "<text x=\"%g\" y=\"%g\" font-size=\"12\">%s (%.2f .. %.2f)</text>\n", x0, y0 + PANEL + 15,
            p->ylabel, lo, hi);
    fprintf(fp, "<polyline fill=\"none\" stroke=\"#c22\" stroke-width=\"1.5\" points=\"");
    for (int i = 0; i < p->n; i++) fprintf(fp, "%.1f,%.1f ", PX(p->pos[i]), PY(p->val[i]));
    fprintf(fp, "\"/>\n");
    /* a point the table misprints, grey and dashed */
    for (int j = 0; j < p->nref; j++)
        fprintf(fp, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"none\" stroke=\"%s\"%s/>\n",
                PX(p->ref_pos[j]), PY(p->ref_val[j]), j == p->ref_excluded ? "#999" : "#126",
                j == p->ref_excluded ? " stroke-dasharray=\"2,2\"" : "");
    if (p->nref) {
        fprintf(fp, "<text x=\"%g\" y=\"%g\" font-size=\"11\" fill=\"#126\">o ", x0, y0 + PANEL + 45);
        svg_escaped(fp, p->ref_name);
        fputs("; line: this run</text>\n", fp);
    }
#undef PX
#undef PY
}

int fluid_svg_write(const char *path, const fluid_case *c, const fluid_fields *f, const fluid_validation *v,
                    char *err, size_t errlen) {
    FILE *fp = fopen(path, "w");
    if (!fp) {
        snprintf(err, errlen, "%s: cannot be written", path);
        return FLUID_FAIL;
    }
    const int panels = 1 + v->nprofiles;
    fprintf(fp, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\">\n",
            panels * (PANEL + MARGIN) + MARGIN, PANEL + 2 * MARGIN + 60);
    fprintf(fp, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    svg_field(fp, c, f, MARGIN, MARGIN);
    for (int k = 0; k < v->nprofiles; k++) svg_profile(fp, &v->prof[k], MARGIN + (k + 1) * (PANEL + MARGIN), MARGIN);
    fprintf(fp, "</svg>\n");
    if (fclose(fp) != 0) {
        snprintf(err, errlen, "%s: write failed", path);
        return FLUID_FAIL;
    }
    return FLUID_OK;
}
