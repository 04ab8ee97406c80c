/* thermo.c - thermo samples, log, averages, drift and the SVG picture (thermo.h). */
#include <gsl/gsl_fit.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "thermo.h"

int md_thermo_add(md_thermo *t, const md_sample *s) {
    if (t->n == t->cap) {
        long cap = t->cap ? 2 * t->cap : 256;
        md_sample *p = realloc(t->s, (size_t)cap * sizeof *p);
        if (!p) return 1;
        t->s = p;
        t->cap = cap;
    }
    t->s[t->n++] = *s;
    return 0;
}

void md_thermo_free(md_thermo *t) {
    free(t->s);
    memset(t, 0, sizeof *t);
}

void md_thermo_header(FILE *f) {
    fprintf(f, "%10s %12s %12s %12s %12s %12s %12s\n", "step", "time", "temp", "pe/atom", "ke/atom", "etotal/atom",
            "press");
}

void md_thermo_print(FILE *f, const md_sample *s) {
    fprintf(f, "%10ld %12.4f %12.7f %12.7f %12.7f %12.7f %12.7f\n", s->step, s->time, s->temperature, s->pe, s->ke,
            s->total, s->pressure);
}

int md_thermo_average(const md_thermo *t, long from, int which, double reweight, double *mean, double *error,
                      double *ess) {
    long first = 0;
    while (first < t->n && t->s[first].step < from) first++;
    const long n = t->n - first, blocks = 10;
    if (n < 2 * blocks) return 1;
    /* the weights relative to the mean pair count, so that exp() stays near 1 */
    double ref = 0;
    for (long i = first; reweight != 0 && i < t->n; i++) {
        if (t->s[i].pairs < 0) return 1;
        ref += t->s[i].pairs / (double)n;
    }
    double block_mean[10], sw = 0, sw2 = 0;
    for (long b = 0; b < blocks; b++) {
        const long lo = first + b * n / blocks, hi = first + (b + 1) * n / blocks;
        double sum = 0, wsum = 0;
        for (long i = lo; i < hi; i++) {
            const double w = reweight != 0 ? exp(-reweight * (t->s[i].pairs - ref)) : 1;
            sum += w * (which ? t->s[i].pressure : t->s[i].pe);
            wsum += w;
            sw2 += w * w;
        }
        block_mean[b] = sum / wsum;
        sw += wsum;
    }
    *mean = gsl_stats_mean(block_mean, 1, blocks);
    *error = gsl_stats_sd(block_mean, 1, blocks) / sqrt((double)blocks);
    if (ess) *ess = sw * sw / ((double)n * sw2);
    return 0;
}

void md_thermo_drift(const md_thermo *t, double *max_dev, double *slope) {
    *max_dev = *slope = 0;
    if (t->n < 2) return;
    double *x = malloc((size_t)t->n * sizeof *x), *y = malloc((size_t)t->n * sizeof *y);
    if (!x || !y) {
        free(x);
        free(y);
        return;
    }
    for (long i = 0; i < t->n; i++) {
        x[i] = t->s[i].time;
        y[i] = t->s[i].total;
        if (fabs(y[i] - y[0]) > *max_dev) *max_dev = fabs(y[i] - y[0]);
    }
    double c0, c1, cov00, cov01, cov11, sumsq;
    gsl_fit_linear(x, 1, y, 1, (size_t)t->n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
    *slope = c1;
    free(x);
    free(y);
}

/* One panel: the series of samples (offsets into md_sample) against time, in [top, top + h). */
typedef struct series {
    size_t offset;
    const char *name, *colour;
} series;

static double value(const md_sample *s, size_t offset) { return *(const double *)((const char *)s + offset); }

static void panel(FILE *f, const md_thermo *t, const series *ser, int nser, double top, double h, const char *ylabel) {
    const double left = 80, w = 560;
    double lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < nser; k++)
        for (long i = 0; i < t->n; i++) {
            double v = value(&t->s[i], ser[k].offset);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    if (!(hi > lo)) {
        lo -= 0.5;
        hi += 0.5;
    }
    const double pad = 0.05 * (hi - lo), t0 = t->s[0].time, t1 = t->s[t->n - 1].time > t0 ? t->s[t->n - 1].time : t0 + 1;
    lo -= pad;
    hi += pad;
    fprintf(f, "<rect x='%g' y='%g' width='%g' height='%g' fill='none' stroke='#888'/>\n", left, top, w, h);
    fprintf(f, "<text x='%g' y='%g' font-size='12' text-anchor='end'>%.4g</text>\n", left - 4, top + 10, hi);
    fprintf(f, "<text x='%g' y='%g' font-size='12' text-anchor='end'>%.4g</text>\n", left - 4, top + h, lo);
    fprintf(f, "<text x='14' y='%g' font-size='12' transform='rotate(-90 14 %g)' text-anchor='middle'>%s</text>\n",
            top + h / 2, top + h / 2, ylabel);
    for (int k = 0; k < nser; k++) {
        fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='1.2' points='", ser[k].colour);
        /* at most about 2000 points: more than the picture has pixels across */
        const long stride = t->n / 2000 + 1;
        for (long i = 0; i < t->n; i += stride)
            fprintf(f, "%.1f,%.1f ", left + w * (t->s[i].time - t0) / (t1 - t0),
                    top + h * (hi - value(&t->s[i], ser[k].offset)) / (hi - lo));
        fprintf(f, "'/>\n<text x='%g' y='%g' font-size='12' fill='%s'>%s</text>\n", left + w + 6,
                top + 14 + 14 * k, ser[k].colour, ser[k].name);
    }
}

int md_thermo_svg(const md_thermo *t, const char *path, const char *title) {
    if (t->n == 0) return 1;
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    fprintf(f, "<svg xmlns='http://www.w3.org/2000/svg' width='760' height='560' font-family='sans-serif'>\n"
               "<rect width='100%%' height='100%%' fill='white'/>\n"
               "<text x='380' y='22' font-size='15' text-anchor='middle'>%s</text>\n", title);
    const series energy[] = {{offsetof(md_sample, total), "total", "#000"},
                             {offsetof(md_sample, pe), "potential", "#1f77b4"},
                             {offsetof(md_sample, ke), "kinetic", "#d62728"}};
    const series temp[] = {{offsetof(md_sample, temperature), "T", "#2ca02c"}};
    const series total[] = {{offsetof(md_sample, total), "total", "#000"}};
    panel(f, t, energy, 3, 40, 170, "energy per atom");
    panel(f, t, total, 1, 230, 120, "total energy per atom");
    panel(f, t, temp, 1, 370, 140, "temperature");
    fprintf(f, "<text x='360' y='548' font-size='12' text-anchor='middle'>time (reduced units)</text>\n</svg>\n");
    return fclose(f) != 0;
}
