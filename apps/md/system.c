/* system.c - allocation, the fcc lattice with its velocities, kinetic energy and temperature. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "md.h"

int md_system_alloc(md_system *s, long n) {
    memset(s, 0, sizeof *s);
    s->n = n;
    s->x = calloc((size_t)n * 3, sizeof *s->x);
    s->v = calloc((size_t)n * 3, sizeof *s->v);
    s->id = calloc((size_t)n, sizeof *s->id);
    if (!s->x || !s->v || !s->id) {
        md_system_free(s);
        return 1;
    }
    for (long i = 0; i < n; i++) s->id[i] = i;
    return 0;
}

void md_system_free(md_system *s) {
    free(s->x);
    free(s->v);
    free(s->id);
    memset(s, 0, sizeof *s);
}

double md_kinetic(const md_system *s) {
    double k = 0;
    for (long i = 0; i < 3 * s->n; i++) k += s->v[i] * s->v[i];
    return 0.5 * k;
}

double md_temperature(const md_system *s) { return 2 * md_kinetic(s) / (double)(3 * s->n - 3); }

int md_lattice_fcc(md_system *s, long cells, double density, double temperature, uint64_t seed,
                   char *err, size_t errlen) {
    if (cells < 1 || !(density > 0) || !(temperature >= 0)) {
        snprintf(err, errlen, "--cells must be at least 1, --density positive and --temperature not negative");
        return 2;
    }
    static const double basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
    if (md_system_alloc(s, 4 * cells * cells * cells)) {
        snprintf(err, errlen, "cannot allocate %ld atoms", 4 * cells * cells * cells);
        return 1;
    }
    const double a = cbrt(4 / density);
    s->box = a * (double)cells;
    long i = 0;
    for (long z = 0; z < cells; z++)
        for (long y = 0; y < cells; y++)
            for (long x = 0; x < cells; x++)
                for (int b = 0; b < 4; b++, i++) {
                    s->x[3 * i] = (x + basis[b][0]) * a;
                    s->x[3 * i + 1] = (y + basis[b][1]) * a;
                    s->x[3 * i + 2] = (z + basis[b][2]) * a;
                }
    return md_draw_velocities(s, temperature, seed, err, errlen);
}

int md_draw_velocities(md_system *s, double temperature, uint64_t seed, char *err, size_t errlen) {
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng) {
        snprintf(err, errlen, "cannot allocate a random number generator");
        return 1;
    }
    gsl_rng_set(rng, (unsigned long)seed);
    double mean[3] = {0, 0, 0};
    for (long j = 0; j < s->n; j++)
        for (int d = 0; d < 3; d++) {
            s->v[3 * j + d] = gsl_ran_gaussian(rng, 1.0);
            mean[d] += s->v[3 * j + d] / (double)s->n;
        }
    gsl_rng_free(rng);
    for (long j = 0; j < s->n; j++)
        for (int d = 0; d < 3; d++) s->v[3 * j + d] -= mean[d];
    const double t = md_temperature(s), scale = t > 0 ? sqrt(temperature / t) : 0;
    for (long j = 0; j < 3 * s->n; j++) s->v[j] *= scale;
    return 0;
}

long md_pairs_within(const md_system *s, double r) {
    const double r2 = r * r, box = s->box, half = 0.5 * box;
    long count = 0;
    for (long i = 0; i < s->n; i++)
        for (long j = i + 1; j < s->n; j++) {
            double d2 = 0;
            for (int d = 0; d < 3; d++) {
                double x = s->x[3 * i + d] - s->x[3 * j + d];
                x = x > half ? x - box : x < -half ? x + box : x;   /* positions are within [0, box) */
                d2 += x * x;
            }
            count += d2 < r2;
        }
    return count;
}
