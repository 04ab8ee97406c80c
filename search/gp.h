/*
 * gp.h - a Gaussian-process regressor with a Matérn 5/2 kernel and one
 * length scale per feature (ARD), hyperparameters by maximum marginal
 * likelihood (GSL multimin, analytic gradient), Cholesky factor kept between
 * predictions.
 */
#ifndef TESS_SEARCH_GP_H
#define TESS_SEARCH_GP_H

#include <stdbool.h>
#include "tessera.h"

typedef struct tess_gp tess_gp;

tess_gp *tess_gp_create(int nfeat);
void tess_gp_destroy(tess_gp *gp);

/* Fits the hyperparameters to n points (starting from the current ones);
 * a subset of the training data keeps this fast. */
void tess_gp_optimize(tess_gp *gp, const double *x, const double *y, int n);

/* Sets the training data (copied): n points of nfeat features, targets y
 * (standardized inside), and factors the kernel matrix. */
tess_status tess_gp_fit(tess_gp *gp, const double *x, const double *y, int n);

/* Posterior mean and standard deviation, in the units of y, at m points. */
void tess_gp_predict(const tess_gp *gp, const double *x, int m, double *mean, double *sd);

/* The kernel's correlation (0..1) between two points under the fitted length scales. */
double tess_gp_correlation(const tess_gp *gp, const double *a, const double *b);

/* Expected improvement below `best` (units of y) for a prediction. */
double tess_gp_expected_improvement(double mean, double sd, double best, double xi);

#endif
