/*
 * gbt.h - gradient-boosted regression trees (squared loss) on features in
 * [0, 1], split on a fixed grid of bins: a small, fast learned cost model.
 */
#ifndef TESS_SEARCH_GBT_H
#define TESS_SEARCH_GBT_H

#include "tessera.h"

typedef struct tess_gbt tess_gbt;

tess_gbt *tess_gbt_create(int nfeat, int ntrees, int depth, double rate);
void tess_gbt_destroy(tess_gbt *m);
/* Fits n points (n x nfeat features in [0, 1], targets y), replacing the previous fit. */
tess_status tess_gbt_fit(tess_gbt *m, const double *x, const double *y, int n);
double tess_gbt_predict(const tess_gbt *m, const double *x);

#endif
