/*
 * thermo.h - thermodynamic output: the samples of a run (kept for the
 * summary and the picture), the thermo log, and an SVG of energy and
 * temperature against time.
 */
#ifndef MD_THERMO_H
#define MD_THERMO_H

#include <stdio.h>

typedef struct md_sample {
    long step;
    double time, temperature, pe, ke, total, pressure;   /* energies per atom */
    double pairs;   /* pairs within the cut-off (md_pairs_within), or -1 where not counted */
} md_sample;

typedef struct md_thermo {
    md_sample *s;
    long n, cap;
} md_thermo;

int md_thermo_add(md_thermo *t, const md_sample *s);
void md_thermo_free(md_thermo *t);
void md_thermo_header(FILE *f);
void md_thermo_print(FILE *f, const md_sample *s);

/* Mean of pe or pressure (which: 0 or 1) over the samples from step
 * `from`, with its standard error from 10 block averages; 1 when fewer
 * than 20 samples. With reweight != 0 each sample counts with the weight
 * exp(-reweight * pairs) (each block's mean a ratio of weighted sums;
 * 1 when a sample has no pair count), and *ess, where not NULL, is the
 * effective sample fraction (sum w)^2 / (n sum w^2). */
int md_thermo_average(const md_thermo *t, long from, int which, double reweight, double *mean, double *error,
                      double *ess);
/* Total energy per atom: largest |E - E(0)| and the slope of a least-squares line, per unit time. */
void md_thermo_drift(const md_thermo *t, double *max_dev, double *slope);

int md_thermo_svg(const md_thermo *t, const char *path, const char *title);

#endif
