/* gp.c - Gaussian-process regression with a Matérn 5/2 ARD kernel. */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multimin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "search/gp.h"

#define SQRT5 2.23606797749979
/* Bounds of the log hyperparameters: length scales, signal variance, noise variance. */
#define LOG_L_MIN (-3.0)
#define LOG_L_MAX 3.0
#define LOG_SF2_MIN (-3.0)
#define LOG_SF2_MAX 3.0
#define LOG_SN2_MIN (-9.0)
#define LOG_SN2_MAX (-0.5)
#define FIT_ITERATIONS 20

struct tess_gp {
    int d;
    double *log_l;          /* d length scales (log) */
    double log_sf2, log_sn2;
    int n;
    double *x;              /* n x d */
    double y_mean, y_sd;
    gsl_matrix *L;          /* Cholesky factor of K + noise */
    gsl_vector *alpha;      /* (K + noise)^-1 y, standardized y */
    bool fitted;
};

tess_gp *tess_gp_create(int nfeat) {
    tess_gp *gp = calloc(1, sizeof *gp);
    if (!gp) return NULL;
    gp->d = nfeat;
    gp->log_l = malloc((size_t)(nfeat ? nfeat : 1) * sizeof *gp->log_l);
    if (!gp->log_l) {
        free(gp);
        return NULL;
    }
    for (int j = 0; j < nfeat; j++) gp->log_l[j] = log(0.5);
    gp->log_sf2 = 0;
    gp->log_sn2 = log(1e-3);
    return gp;
}

void tess_gp_destroy(tess_gp *gp) {
    if (!gp) return;
    free(gp->log_l);
    free(gp->x);
    if (gp->L) gsl_matrix_free(gp->L);
    if (gp->alpha) gsl_vector_free(gp->alpha);
    free(gp);
}

static double clamp(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Scaled distance between two points: r^2 = sum ((a - b) / l)^2. */
static double scaled_r2(const double *a, const double *b, const double *inv_l, int d) {
    double r2 = 0;
    for (int j = 0; j < d; j++) {
        double t = (a[j] - b[j]) * inv_l[j];
        r2 += t * t;
    }
    return r2;
}

static double matern52(double r2) {
    double r = sqrt(r2);
    return (1 + SQRT5 * r + 5.0 / 3.0 * r2) * exp(-SQRT5 * r);
}

/* ---- marginal likelihood ------------------------------------------------------- */

typedef struct fit_data {
    const tess_gp *gp;
    const double *x, *y;
    int n, d;
    gsl_matrix *K, *Kinv;
    gsl_vector *alpha;
    double *inv_l;
} fit_data;

static void unpack(const gsl_vector *v, int d, double *log_l, double *log_sf2, double *log_sn2) {
    for (int j = 0; j < d; j++) log_l[j] = clamp(gsl_vector_get(v, (size_t)j), LOG_L_MIN, LOG_L_MAX);
    *log_sf2 = clamp(gsl_vector_get(v, (size_t)d), LOG_SF2_MIN, LOG_SF2_MAX);
    *log_sn2 = clamp(gsl_vector_get(v, (size_t)d + 1), LOG_SN2_MIN, LOG_SN2_MAX);
}

/* Negative log marginal likelihood and (when grad is not NULL) its gradient.
 * Out-of-bounds parameters are clamped, with a quadratic penalty so the
 * optimizer comes back. */
static double nll(const gsl_vector *v, void *params, gsl_vector *grad) {
    fit_data *f = params;
    int n = f->n, d = f->d;
    double log_l[64], log_sf2, log_sn2;
    unpack(v, d, log_l, &log_sf2, &log_sn2);
    double penalty = 0;
    for (int j = 0; j < d + 2; j++) {
        double diff = gsl_vector_get(v, (size_t)j) - (j < d ? log_l[j] : j == d ? log_sf2 : log_sn2);
        penalty += diff * diff;
        if (grad) gsl_vector_set(grad, (size_t)j, 2 * diff);
    }
    double sf2 = exp(log_sf2), sn2 = exp(log_sn2);
    for (int j = 0; j < d; j++) f->inv_l[j] = exp(-log_l[j]);
    for (int a = 0; a < n; a++) {
        gsl_matrix_set(f->K, (size_t)a, (size_t)a, sf2 + sn2 + 1e-8);
        for (int b = 0; b < a; b++) {
            double k = sf2 * matern52(scaled_r2(f->x + a * d, f->x + b * d, f->inv_l, d));
            gsl_matrix_set(f->K, (size_t)a, (size_t)b, k);
            gsl_matrix_set(f->K, (size_t)b, (size_t)a, k);
        }
    }
    if (gsl_linalg_cholesky_decomp1(f->K) != GSL_SUCCESS) {
        if (grad) gsl_vector_set_zero(grad);
        return 1e10;
    }
    gsl_vector_const_view yv = gsl_vector_const_view_array(f->y, (size_t)n);
    gsl_linalg_cholesky_solve(f->K, &yv.vector, f->alpha);
    double value = 0.5 * n * log(2 * M_PI);
    for (int a = 0; a < n; a++) value += log(gsl_matrix_get(f->K, (size_t)a, (size_t)a));
    double yKy;
    gsl_blas_ddot(&yv.vector, f->alpha, &yKy);
    value += 0.5 * yKy + penalty;
    if (!grad) return value;

    /* dNLL/dtheta = -1/2 tr((alpha alpha^T - K^-1) dK/dtheta) */
    gsl_matrix_memcpy(f->Kinv, f->K);
    gsl_linalg_cholesky_invert(f->Kinv);
    double g_sf2 = 0, g_sn2 = 0, g_l[64] = {0};
    for (int a = 0; a < n; a++) {
        double aa = gsl_vector_get(f->alpha, (size_t)a);
        double w_diag = aa * aa - gsl_matrix_get(f->Kinv, (size_t)a, (size_t)a);
        g_sf2 += w_diag * sf2;
        g_sn2 += w_diag * sn2;
        for (int b = 0; b < a; b++) {
            double w = 2 * (aa * gsl_vector_get(f->alpha, (size_t)b) - gsl_matrix_get(f->Kinv, (size_t)a, (size_t)b));
            const double *xa = f->x + a * d, *xb = f->x + b * d;
            double r2 = scaled_r2(xa, xb, f->inv_l, d), r = sqrt(r2), e = exp(-SQRT5 * r);
            g_sf2 += w * sf2 * (1 + SQRT5 * r + 5.0 / 3.0 * r2) * e;
            double common = w * sf2 * 5.0 / 3.0 * (1 + SQRT5 * r) * e;
            for (int j = 0; j < d; j++) {
                double t = (xa[j] - xb[j]) * f->inv_l[j];
                g_l[j] += common * t * t;
            }
        }
    }
    for (int j = 0; j < d; j++) gsl_vector_set(grad, (size_t)j, gsl_vector_get(grad, (size_t)j) - 0.5 * g_l[j]);
    gsl_vector_set(grad, (size_t)d, gsl_vector_get(grad, (size_t)d) - 0.5 * g_sf2);
    gsl_vector_set(grad, (size_t)d + 1, gsl_vector_get(grad, (size_t)d + 1) - 0.5 * g_sn2);
    return value;
}

static double nll_f(const gsl_vector *v, void *params) { return nll(v, params, NULL); }
static void nll_df(const gsl_vector *v, void *params, gsl_vector *g) { nll(v, params, g); }
static void nll_fdf(const gsl_vector *v, void *params, double *value, gsl_vector *g) {
    *value = nll(v, params, g);
}

/* Standardizes y into ys; returns the mean and sd used. */
static void standardize(const double *y, int n, double *ys, double *mean_out, double *sd_out) {
    double mean = 0, var = 0;
    for (int i = 0; i < n; i++) mean += y[i];
    mean /= n;
    for (int i = 0; i < n; i++) var += (y[i] - mean) * (y[i] - mean);
    double sd = n > 1 && var > 0 ? sqrt(var / (n - 1)) : 1;
    for (int i = 0; i < n; i++) ys[i] = (y[i] - mean) / sd;
    *mean_out = mean;
    *sd_out = sd;
}

void tess_gp_optimize(tess_gp *gp, const double *x, const double *y_raw, int n) {
    gsl_set_error_handler_off();
    int d = gp->d;
    if (n < 3 || d > 64) return;
    double *y = malloc((size_t)n * sizeof *y), mean, sd;
    if (!y) return;
    standardize(y_raw, n, y, &mean, &sd);
    fit_data f = {gp, x, y, n, d, gsl_matrix_alloc((size_t)n, (size_t)n),
                  gsl_matrix_alloc((size_t)n, (size_t)n), gsl_vector_alloc((size_t)n),
                  malloc((size_t)d * sizeof(double))};
    gsl_vector *v = gsl_vector_alloc((size_t)d + 2);
    gsl_multimin_fdfminimizer *m = gsl_multimin_fdfminimizer_alloc(gsl_multimin_fdfminimizer_vector_bfgs2,
                                                                   (size_t)d + 2);
    if (f.K && f.Kinv && f.alpha && f.inv_l && v && m) {
        for (int j = 0; j < d; j++) gsl_vector_set(v, (size_t)j, gp->log_l[j]);
        gsl_vector_set(v, (size_t)d, gp->log_sf2);
        gsl_vector_set(v, (size_t)d + 1, gp->log_sn2);
        gsl_multimin_function_fdf fn = {nll_f, nll_df, nll_fdf, (size_t)d + 2, &f};
        double start = nll_f(v, &f);
        if (start < 1e10 && gsl_multimin_fdfminimizer_set(m, &fn, v, 0.1, 0.1) == GSL_SUCCESS) {
            for (int it = 0; it < FIT_ITERATIONS; it++) {
                if (gsl_multimin_fdfminimizer_iterate(m) != GSL_SUCCESS) break;
                if (gsl_multimin_test_gradient(m->gradient, 1e-3) == GSL_SUCCESS) break;
            }
            if (m->f < start) unpack(m->x, d, gp->log_l, &gp->log_sf2, &gp->log_sn2);
        }
    }
    if (m) gsl_multimin_fdfminimizer_free(m);
    if (v) gsl_vector_free(v);
    if (f.K) gsl_matrix_free(f.K);
    if (f.Kinv) gsl_matrix_free(f.Kinv);
    if (f.alpha) gsl_vector_free(f.alpha);
    free(f.inv_l);
    free(y);
}

tess_status tess_gp_fit(tess_gp *gp, const double *x, const double *y, int n) {
    gsl_set_error_handler_off();
    if (n < 1) return tess_error(TESS_ERR_ARG, "gp: no training points");
    if (gp->d > 64) return tess_error(TESS_ERR_ARG, "gp: at most 64 features");
    double *xc = malloc((size_t)n * (size_t)gp->d * sizeof *xc);
    double *ys = malloc((size_t)n * sizeof *ys);
    if (!xc || !ys) {
        free(xc);
        free(ys);
        return tess_error(TESS_ERR_NOMEM, "gp: no memory for %d points", n);
    }
    memcpy(xc, x, (size_t)n * (size_t)gp->d * sizeof *xc);
    free(gp->x);
    gp->x = xc;
    gp->n = n;
    standardize(y, n, ys, &gp->y_mean, &gp->y_sd);

    /* the factor used by predictions */
    if (gp->L) gsl_matrix_free(gp->L);
    if (gp->alpha) gsl_vector_free(gp->alpha);
    gp->L = gsl_matrix_alloc((size_t)n, (size_t)n);
    gp->alpha = gsl_vector_alloc((size_t)n);
    gp->fitted = false;
    if (!gp->L || !gp->alpha) {
        free(ys);
        return tess_error(TESS_ERR_NOMEM, "gp: no memory for %d points", n);
    }
    double inv_l[64], sf2 = exp(gp->log_sf2), sn2 = exp(gp->log_sn2);
    for (int j = 0; j < gp->d; j++) inv_l[j] = exp(-gp->log_l[j]);
    for (double jitter = 1e-8; jitter < 1; jitter *= 100) {
        for (int a = 0; a < n; a++) {
            gsl_matrix_set(gp->L, (size_t)a, (size_t)a, sf2 + sn2 + jitter);
            for (int b = 0; b < a; b++) {
                double k = sf2 * matern52(scaled_r2(xc + a * gp->d, xc + b * gp->d, inv_l, gp->d));
                gsl_matrix_set(gp->L, (size_t)a, (size_t)b, k);
                gsl_matrix_set(gp->L, (size_t)b, (size_t)a, k);
            }
        }
        if (gsl_linalg_cholesky_decomp1(gp->L) == GSL_SUCCESS) {
            gp->fitted = true;
            break;
        }
    }
    if (!gp->fitted) {
        free(ys);
        return tess_error(TESS_ERR_INTERNAL, "gp: kernel matrix is not positive definite");
    }
    gsl_vector_view yv = gsl_vector_view_array(ys, (size_t)n);
    gsl_linalg_cholesky_solve(gp->L, &yv.vector, gp->alpha);
    free(ys);
    return TESS_OK;
}

void tess_gp_predict(const tess_gp *gp, const double *x, int m, double *mean, double *sd) {
    int n = gp->n, d = gp->d;
    double inv_l[64], sf2 = exp(gp->log_sf2);
    for (int j = 0; j < d; j++) inv_l[j] = exp(-gp->log_l[j]);
    double *k = malloc((size_t)(n ? n : 1) * sizeof *k);
    for (int i = 0; i < m; i++) {
        if (!gp->fitted || !k) {
            mean[i] = gp->y_mean;
            sd[i] = gp->y_sd;
            continue;
        }
        const double *xi = x + (size_t)i * (size_t)d;
        for (int a = 0; a < n; a++) k[a] = sf2 * matern52(scaled_r2(xi, gp->x + a * d, inv_l, d));
        gsl_vector_view kv = gsl_vector_view_array(k, (size_t)n);
        double mu;
        gsl_blas_ddot(&kv.vector, gp->alpha, &mu);
        /* v = L^-1 k; variance = sf2 - v.v */
        gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, gp->L, &kv.vector);
        double vv;
        gsl_blas_ddot(&kv.vector, &kv.vector, &vv);
        double var = sf2 - vv;
        mean[i] = gp->y_mean + gp->y_sd * mu;
        sd[i] = gp->y_sd * sqrt(var > 1e-12 ? var : 1e-12);
    }
    free(k);
}

double tess_gp_correlation(const tess_gp *gp, const double *a, const double *b) {
    double inv_l[64];
    for (int j = 0; j < gp->d; j++) inv_l[j] = exp(-gp->log_l[j]);
    return matern52(scaled_r2(a, b, inv_l, gp->d));
}

double tess_gp_expected_improvement(double mean, double sd, double best, double xi) {
    if (sd <= 0) return fmax(best - mean - xi, 0);
    double z = (best - mean - xi) / sd;
    double cdf = 0.5 * erfc(-z / M_SQRT2), pdf = exp(-0.5 * z * z) / sqrt(2 * M_PI);
    return (best - mean - xi) * cdf + sd * pdf;
}
