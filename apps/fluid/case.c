/*
 * case.c - the flows tessera-fluid knows (lid-driven cavities, a plane
 * channel) and their input files: the cell mask as a CF flag variable and
 * the run's parameters as global attributes.
 */
#include <math.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fluid.h"

static const fluid_lattice lattices[] = {
    {"d2q9", "lbm_d2q9", 2, 9,
     {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {-1, 0, 0}, {0, -1, 0}, {1, 1, 0}, {-1, 1, 0}, {-1, -1, 0}, {1, -1, 0}}},
    {"d3q19", "lbm_d3q19", 3, 19,
     {{0, 0, 0}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}, {1, 1, 0}, {-1, -1, 0},
      {1, -1, 0}, {-1, 1, 0}, {1, 0, 1}, {-1, 0, -1}, {1, 0, -1}, {-1, 0, 1}, {0, 1, 1}, {0, -1, -1}, {0, 1, -1},
      {0, -1, 1}}},
};

const fluid_lattice *fluid_lattice_find(const char *name) {
    for (size_t i = 0; i < sizeof lattices / sizeof lattices[0]; i++)
        if (strcmp(lattices[i].name, name) == 0) return &lattices[i];
    return NULL;
}

double fluid_omega(const fluid_case *c) {
    double nu = c->velocity * c->length / c->reynolds;
    return 1.0 / (3.0 * nu + 0.5);
}

void fluid_case_free(fluid_case *c) {
    free(c->mask);
    c->mask = NULL;
}

static int fluid_case_alloc(fluid_case *c, char *err, size_t errlen) {
    c->cells = 1;
    for (int a = 0; a < c->ndim; a++) c->cells *= c->shape[a];
    c->mask = calloc((size_t)c->cells, sizeof *c->mask);
    if (!c->mask) {
        snprintf(err, errlen, "out of memory for a mask of %lld cells", (long long)c->cells);
        return FLUID_FAIL;
    }
    return FLUID_OK;
}

/* The parameters every case must have in range, whoever made it. */
static int fluid_case_check(const fluid_case *c, const char *where, char *err, size_t errlen) {
    if (!(c->reynolds > 0 && c->reynolds <= 1e5))
        snprintf(err, errlen, "%s: reynolds %g is outside (0, 1e5]", where, c->reynolds);
    else if (!(c->velocity > 0 && c->velocity <= 0.3))
        snprintf(err, errlen, "%s: velocity %g (lattice units) is outside (0, 0.3]", where, c->velocity);
    else if (!(c->length >= 2))
        snprintf(err, errlen, "%s: length %g is below 2 cells", where, c->length);
    else if (c->steps < 1 || c->interval < 1)
        snprintf(err, errlen, "%s: steps %ld and output_interval %ld must be at least 1", where, c->steps, c->interval);
    else if (!(c->tolerance >= 0))
        snprintf(err, errlen, "%s: tolerance %g is negative", where, c->tolerance);
    else if (!(fluid_omega(c) < 1.99))
        snprintf(err, errlen, "%s: Reynolds number %g at velocity %g on %g cells needs tau = %.4f, too close to 1/2"
                 " to be stable: use more cells or a higher velocity", where, c->reynolds, c->velocity, c->length,
                 1.0 / fluid_omega(c));
    else return FLUID_OK;
    return FLUID_USAGE;
}

int fluid_case_build(const char *name, long n, double re, double u, fluid_case *c, char *err, size_t errlen) {
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->reynolds = re;
    c->velocity = u;
    c->length = (double)n;
    c->tolerance = 1e-6;
    bool channel = strcmp(name, "channel") == 0;
    if (strcmp(name, "cavity2d") == 0 || channel) {
        c->lat = fluid_lattice_find("d2q9");
        c->ndim = 2;
        c->shape[0] = n + 2;
        c->shape[1] = channel ? 8 * n : n + 2;
    } else if (strcmp(name, "cavity3d") == 0) {
        c->lat = fluid_lattice_find("d3q19");
        c->ndim = 3;
        c->shape[0] = c->shape[1] = c->shape[2] = n + 2;
    } else {
        snprintf(err, errlen, "unknown case '%s' (cavity2d, cavity3d, channel)", name);
        return FLUID_USAGE;
    }
    if (n < 4 || n > 4096) {
        snprintf(err, errlen, "--size %ld is outside 4..4096", n);
        return FLUID_USAGE;
    }
    /* about 20 viscous times L^2 / nu at most; the run stops earlier once steady */
    double nu = u * n / re;
    c->steps = (long)fmin(2e7, ceil(20.0 * n * n / nu / 1000.0) * 1000.0);
    c->interval = 10000;
    int st = fluid_case_check(c, "--case", err, errlen);
    if (!st) st = fluid_case_alloc(c, err, errlen);
    if (st) return st;
    const int64_t nz = c->ndim == 3 ? c->shape[0] : 1, ny = c->shape[c->ndim - 2], nx = c->shape[c->ndim - 1];
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) {
                int32_t *m = &c->mask[(z * ny + y) * nx + x];
                bool side_y = y == 0 || y == ny - 1, side_x = x == 0 || x == nx - 1;
                bool side_z = c->ndim == 3 && (z == 0 || z == nz - 1);
                if (channel) {
                    /* walls along y; velocity inlet at x = 0, pressure outlet at the end */
                    *m = side_y ? CELL_WALL : x == 0 ? CELL_MOVING : x == nx - 1 ? CELL_OUTLET : CELL_FLUID;
                } else {
                    /* The lid is the whole top layer, corners included, so the
                     * momentum it gives the cells below sums to zero mass. */
                    *m = y == ny - 1 ? CELL_MOVING : side_x || side_y || side_z ? CELL_WALL : CELL_FLUID;
                }
            }
    return FLUID_OK;
}


#define NC_TRY(call)                                                                                      \
    do {                                                                                                  \
        int nc_rc_ = (call);                                                                              \
        if (nc_rc_ != NC_NOERR) {                                                                         \
            snprintf(err, errlen, "%s: %s", path, nc_strerror(nc_rc_));                                  \
            goto fail;                                                                                    \
        }                                                                                                 \
    } while (0)

static const char *const dim_names[3] = {"z", "y", "x"};
static const char *const axis_names[3] = {"Z", "Y", "X"};

int fluid_case_write(const fluid_case *c, const char *path, char *err, size_t errlen) {
    int nc = -1, dims[3], var, cvar[3];
    const char *const *names = dim_names + 3 - c->ndim;
    NC_TRY(nc_create(path, NC_CLOBBER | NC_NETCDF4, &nc));
    for (int a = 0; a < c->ndim; a++) {
        NC_TRY(nc_def_dim(nc, names[a], (size_t)c->shape[a], &dims[a]));
        NC_TRY(nc_def_var(nc, names[a], NC_DOUBLE, 1, &dims[a], &cvar[a]));
        NC_TRY(nc_put_att_text(nc, cvar[a], "axis", 1, axis_names[3 - c->ndim + a]));
        NC_TRY(fluid_put_text(nc, cvar[a], "units", "1"));
        NC_TRY(fluid_put_text(nc, cvar[a], "long_name", "cell index"));
    }
    NC_TRY(nc_def_var(nc, "mask", NC_INT, c->ndim, dims, &var));
    const int flag_values[CELL_KINDS] = {CELL_FLUID, CELL_WALL, CELL_MOVING, CELL_OUTLET};
    const char *meanings = "fluid wall moving_wall_or_inlet outlet";
    NC_TRY(nc_put_att_int(nc, var, "flag_values", NC_INT, CELL_KINDS, flag_values));
    NC_TRY(fluid_put_text(nc, var, "flag_meanings", meanings));
    NC_TRY(fluid_put_text(nc, var, "long_name", "cell kind"));
    NC_TRY(fluid_put_text(nc, NC_GLOBAL, "Conventions", "CF-1.8"));
    NC_TRY(fluid_put_text(nc, NC_GLOBAL, "title", c->name));
    NC_TRY(fluid_put_text(nc, NC_GLOBAL, "lattice", c->lat->name));
    NC_TRY(nc_put_att_double(nc, NC_GLOBAL, "reynolds", NC_DOUBLE, 1, &c->reynolds));
    NC_TRY(nc_put_att_double(nc, NC_GLOBAL, "velocity", NC_DOUBLE, 1, &c->velocity));
    NC_TRY(nc_put_att_double(nc, NC_GLOBAL, "length", NC_DOUBLE, 1, &c->length));
    NC_TRY(nc_put_att_long(nc, NC_GLOBAL, "steps", NC_INT64, 1, &c->steps));
    NC_TRY(nc_put_att_long(nc, NC_GLOBAL, "output_interval", NC_INT64, 1, &c->interval));
    NC_TRY(nc_put_att_double(nc, NC_GLOBAL, "tolerance", NC_DOUBLE, 1, &c->tolerance));
    NC_TRY(nc_enddef(nc));
    for (int a = 0; a < c->ndim; a++) {
        double *idx = malloc((size_t)c->shape[a] * sizeof *idx);
        if (!idx) {
            snprintf(err, errlen, "%s: out of memory", path);
            goto fail;
        }
        for (int64_t i = 0; i < c->shape[a]; i++) idx[i] = (double)i;
        int rc = nc_put_var_double(nc, cvar[a], idx);
        free(idx);
        NC_TRY(rc);
    }
    NC_TRY(nc_put_var_int(nc, var, c->mask));
    NC_TRY(nc_close(nc));
    return FLUID_OK;
fail:
    if (nc >= 0) nc_close(nc);
    return FLUID_FAIL;
}

/* A global attribute of the input, required. */
static int fluid_att_double(int nc, const char *path, const char *name, double *v, char *err, size_t errlen) {
    int rc = nc_get_att_double(nc, NC_GLOBAL, name, v);
    if (rc == NC_NOERR) return FLUID_OK;
    snprintf(err, errlen, "%s: global attribute '%s': %s", path, name, nc_strerror(rc));
    return FLUID_FAIL;
}

int fluid_case_read(const char *path, fluid_case *c, char *err, size_t errlen) {
    memset(c, 0, sizeof *c);
    int nc = -1, var, ndims, dimids[NC_MAX_VAR_DIMS];
    nc_type type;
    NC_TRY(nc_open(path, NC_NOWRITE, &nc));
    char text[64] = "";
    size_t len = 0;
    if (nc_inq_attlen(nc, NC_GLOBAL, "lattice", &len) != NC_NOERR || len == 0 || len >= sizeof text ||
        nc_get_att_text(nc, NC_GLOBAL, "lattice", text) != NC_NOERR) {
        snprintf(err, errlen, "%s: no text attribute 'lattice' (d2q9 or d3q19)", path);
        goto fail;
    }
    text[len] = 0;
    c->lat = fluid_lattice_find(text);
    if (!c->lat) {
        snprintf(err, errlen, "%s: lattice '%s' is neither d2q9 nor d3q19", path, text);
        goto fail;
    }
    len = 0;
    if (nc_inq_attlen(nc, NC_GLOBAL, "title", &len) == NC_NOERR && len < sizeof c->name &&
        nc_get_att_text(nc, NC_GLOBAL, "title", c->name) == NC_NOERR)
        c->name[len] = 0;
    else snprintf(c->name, sizeof c->name, "input");
    double steps = 0, interval = 0;
    if (fluid_att_double(nc, path, "reynolds", &c->reynolds, err, errlen) ||
        fluid_att_double(nc, path, "velocity", &c->velocity, err, errlen) ||
        fluid_att_double(nc, path, "length", &c->length, err, errlen) ||
        fluid_att_double(nc, path, "steps", &steps, err, errlen) ||
        fluid_att_double(nc, path, "output_interval", &interval, err, errlen))
        goto fail;
    if (nc_get_att_double(nc, NC_GLOBAL, "tolerance", &c->tolerance) != NC_NOERR) c->tolerance = 0;
    if (!(steps >= 1 && steps <= 1e12 && interval >= 1 && interval <= 1e12)) {
        snprintf(err, errlen, "%s: steps %g and output_interval %g must be whole numbers from 1", path, steps,
                 interval);
        goto fail;
    }
    c->steps = (long)steps;
    c->interval = (long)interval;
    if (fluid_case_check(c, path, err, errlen)) goto fail;
    if (nc_inq_varid(nc, "mask", &var) != NC_NOERR) {
        snprintf(err, errlen, "%s: no variable 'mask' (the cell kinds)", path);
        goto fail;
    }
    NC_TRY(nc_inq_var(nc, var, NULL, &type, &ndims, dimids, NULL));
    if (ndims != c->lat->dim || (type != NC_INT && type != NC_BYTE && type != NC_SHORT && type != NC_UBYTE)) {
        snprintf(err, errlen, "%s: variable 'mask' must be an integer field of %d dimensions for %s", path,
                 c->lat->dim, c->lat->name);
        goto fail;
    }
    c->ndim = ndims;
    for (int a = 0; a < ndims; a++) {
        size_t n;
        NC_TRY(nc_inq_dimlen(nc, dimids[a], &n));
        if (n < 3 || n > 65536) {
            snprintf(err, errlen, "%s: dimension %d of 'mask' has %zu cells, outside 3..65536", path, a, n);
            goto fail;
        }
        c->shape[a] = (int64_t)n;
    }
    if (fluid_case_alloc(c, err, errlen)) goto fail;
    NC_TRY(nc_get_var_int(nc, var, c->mask));
    for (int64_t i = 0; i < c->cells; i++)
        if (c->mask[i] < 0 || c->mask[i] >= CELL_KINDS) {
            snprintf(err, errlen, "%s: mask value %d at cell %lld is not a cell kind (0 fluid, 1 wall, 2 moving wall"
                     " or inlet, 3 outlet)", path, (int)c->mask[i], (long long)i);
            goto fail;
        }
    nc_close(nc);
    return FLUID_OK;
fail:
    if (nc >= 0) nc_close(nc);
    fluid_case_free(c);
    return FLUID_FAIL;
}
