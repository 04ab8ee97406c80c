/*
 * make_samples.c - writes the sample inputs of data/samples/: one small CF
 * netCDF file per stencil with fields, tessera run --input reads them by
 * name. Classic netCDF format, so the same program writes the same bytes.
 *
 *     make_samples DIR       (cmake --build build --target samples: data/samples)
 *
 * Each field is float, on dimensions z, y, x (slowest first; y, x in 2D)
 * with index coordinate variables carrying CF axis attributes, and values
 * inside the range that keeps its stencil stable (stencils/templates).
 */
#include <math.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 3

typedef double (*field_fn)(double z, double y, double x);   /* coordinates in [0, 1) */

typedef struct sample {
    const char *file, *stencil, *title;
    int ndim;
    size_t shape[3];
    int nfields;
    struct {
        const char *name, *long_name;
        field_fn value;
    } field[MAX_FIELDS];
} sample;

static double bump(double z, double y, double x, double cz, double cy, double cx, double w) {
    double r2 = (z - cz) * (z - cz) + (y - cy) * (y - cy) + (x - cx) * (x - cx);
    return exp(-r2 / (2 * w * w));
}

/* hdiff: a front along x and two blobs on every level, with a coefficient in [0, 0.025]. */
static double hdiff_u(double z, double y, double x) {
    return 0.5 * tanh(12 * (y - 0.5)) + bump(0, y, x, 0, 0.3, 0.25 + 0.5 * z, 0.08) -
           0.7 * bump(0, y, x, 0, 0.7, 0.7, 0.06);
}
static double hdiff_coeff(double z, double y, double x) {
    (void)z;
    return 0.0125 * (1 + sin(2 * M_PI * x) * cos(2 * M_PI * y));
}

/* heat3d: a hot cube in a cold box (a discontinuity the diffusion smooths). */
static double heat3d_u(double z, double y, double x) {
    return fabs(z - 0.5) < 0.2 && fabs(y - 0.5) < 0.2 && fabs(x - 0.5) < 0.2 ? 1 : 0;
}

/* varcoef3d: a warm blob in layers of conductivity between 0.1 and 1. */
static double varcoef3d_u(double z, double y, double x) { return bump(z, y, x, 0.5, 0.5, 0.5, 0.12); }
static double varcoef3d_k(double z, double y, double x) {
    (void)y;
    (void)x;
    return 0.55 + 0.45 * cos(6 * M_PI * z);
}

/* advect2d: a cosine bell in a cellular wind; u varies along y only and v
 * along x only, so the wind is divergence-free (periodic in both), |u|, |v| <= 1. */
static double advect2d_q(double z, double y, double x) {
    (void)z;
    double r = sqrt((y - 0.3) * (y - 0.3) + (x - 0.3) * (x - 0.3)) / 0.15;
    return r < 1 ? 0.5 * (1 + cos(M_PI * r)) : 0;
}
static double advect2d_u(double z, double y, double x) {
    (void)z;
    (void)x;
    return sin(2 * M_PI * y);
}
static double advect2d_v(double z, double y, double x) {
    (void)z;
    (void)y;
    return -sin(2 * M_PI * x);
}

static const sample samples[] = {
    {"hdiff.nc", "hdiff", "hdiff sample: a front and two blobs per level", 3, {8, 64, 64}, 2,
     {{"u", "diffused field", hdiff_u}, {"coeff", "diffusion coefficient", hdiff_coeff}}},
    {"heat3d.nc", "heat3d", "heat3d sample: a hot cube in a cold box", 3, {32, 32, 32}, 1,
     {{"u", "temperature", heat3d_u}}},
    {"varcoef3d.nc", "varcoef3d", "varcoef3d sample: a warm blob in layered conductivity", 3, {24, 32, 32}, 2,
     {{"u", "temperature", varcoef3d_u}, {"k", "conductivity", varcoef3d_k}}},
    {"advect2d.nc", "advect2d", "advect2d sample: a cosine bell in a cellular wind", 2, {128, 128}, 3,
     {{"q", "tracer", advect2d_q}, {"u", "wind through west faces", advect2d_u},
      {"v", "wind through south faces", advect2d_v}}},
};

static int fail(int rc, const char *path) {
    fprintf(stderr, "make_samples: %s: %s\n", path, nc_strerror(rc));
    return 1;
}

static int put_text(int nc, int var, const char *name, const char *text) {
    return nc_put_att_text(nc, var, name, strlen(text), text);
}

static int write_sample(const char *dir, const sample *s) {
    static const char *const axes[3] = {"z", "y", "x"}, *const cf_axes[3] = {"Z", "Y", "X"};
    char path[4096], history[128];
    snprintf(path, sizeof path, "%s/%s", dir, s->file);
    snprintf(history, sizeof history, "make_samples (tessera data/make_samples.c); tessera run %s --input %s",
             s->stencil, s->file);
    int nc, dim[3], coord[3], var[MAX_FIELDS], rc = nc_create(path, NC_CLOBBER, &nc);
    if (rc) return fail(rc, path);
    const char *const *names = axes + 3 - s->ndim, *const *cf = cf_axes + 3 - s->ndim;
    rc = put_text(nc, NC_GLOBAL, "Conventions", "CF-1.8");
    if (!rc) rc = put_text(nc, NC_GLOBAL, "title", s->title);
    if (!rc) rc = put_text(nc, NC_GLOBAL, "history", history);
    if (!rc) rc = put_text(nc, NC_GLOBAL, "source", "tessera sample inputs");
    for (int a = 0; a < s->ndim && !rc; a++) {
        char long_name[32];
        snprintf(long_name, sizeof long_name, "grid index along %s", names[a]);
        rc = nc_def_dim(nc, names[a], s->shape[a], &dim[a]);
        if (!rc) rc = nc_def_var(nc, names[a], NC_INT, 1, &dim[a], &coord[a]);
        if (!rc) rc = put_text(nc, coord[a], "long_name", long_name);
        if (!rc) rc = put_text(nc, coord[a], "units", "1");
        if (!rc) rc = put_text(nc, coord[a], "axis", cf[a]);
    }
    for (int f = 0; f < s->nfields && !rc; f++) {
        rc = nc_def_var(nc, s->field[f].name, NC_FLOAT, s->ndim, dim, &var[f]);
        if (!rc) rc = put_text(nc, var[f], "long_name", s->field[f].long_name);
        if (!rc) rc = put_text(nc, var[f], "units", "1");
    }
    if (!rc) rc = nc_enddef(nc);
    size_t n = 1;
    for (int a = 0; a < s->ndim; a++) n *= s->shape[a];
    float *data = malloc(n * sizeof *data);
    int *index = malloc(n * sizeof *index);
    if (!data || !index) rc = NC_ENOMEM;
    for (int a = 0; a < s->ndim && !rc; a++) {
        for (size_t i = 0; i < s->shape[a]; i++) index[i] = (int)i;
        rc = nc_put_var_int(nc, coord[a], index);
    }
    for (int f = 0; f < s->nfields && !rc; f++) {
        for (size_t i = 0; i < n; i++) {
            double c[3] = {0, 0, 0};
            size_t rest = i;
            for (int a = s->ndim - 1; a >= 0; a--) {
                c[3 - s->ndim + a] = (double)(rest % s->shape[a]) / (double)s->shape[a];
                rest /= s->shape[a];
            }
            data[i] = (float)s->field[f].value(c[0], c[1], c[2]);
        }
        rc = nc_put_var_float(nc, var[f], data);
    }
    free(data);
    free(index);
    int close_rc = nc_close(nc);
    if (!rc) rc = close_rc;
    if (rc) return fail(rc, path);
    printf("%s: %s on ", path, s->stencil);
    for (int a = 0; a < s->ndim; a++) printf("%s%zu", a ? "x" : "", s->shape[a]);
    printf("\n");
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: make_samples DIR\n");
        return 2;
    }
    int rc = 0;
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) rc |= write_sample(argv[1], &samples[i]);
    return rc;
}
