/*
 * output.c - the CF-style netCDF output of a run: velocity components,
 * density and vorticity at each output time (time unlimited, in steps),
 * the cell mask, and the convergence history written at the end.
 */
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fluid.h"

struct fluid_output {
    int nc, ndim, frames;
    int time_var, var[5];   /* u, v, w (3D), rho, vorticity */
    int hist_step, hist_res, hist_mass;
    size_t shape[3];
    char path[1024];
    float *buf;
    int64_t cells;
};

/* A text attribute of its own length (netCDF status). */
int fluid_put_text(int nc, int var, const char *name, const char *text) {
    return nc_put_att_text(nc, var, name, strlen(text), text);
}

#define NC_TRY(call)                                                                 \
    do {                                                                             \
        int nc_rc_ = (call);                                                         \
        if (nc_rc_ != NC_NOERR) {                                                    \
            snprintf(err, errlen, "%s: %s", o->path, nc_strerror(nc_rc_));          \
            goto fail;                                                               \
        }                                                                            \
    } while (0)

static int def_field(struct fluid_output *o, const int *dims, int ndims, const char *name, const char *long_name,
                     const char *units, int *var) {
    int rc = nc_def_var(o->nc, name, NC_FLOAT, ndims, dims, var);
    if (!rc) rc = fluid_put_text(o->nc, *var, "long_name", long_name);
    if (!rc) rc = fluid_put_text(o->nc, *var, "units", units);
    return rc;
}

int fluid_output_open(fluid_output **out, const char *path, const fluid_case *c, const char *history, char *err,
                      size_t errlen) {
    static const char *const names[3] = {"z", "y", "x"}, *const axes[3] = {"Z", "Y", "X"};
    struct fluid_output *o = calloc(1, sizeof *o);
    *out = NULL;
    if (!o) {
        snprintf(err, errlen, "%s: out of memory", path);
        return FLUID_FAIL;
    }
    snprintf(o->path, sizeof o->path, "%s", path);
    o->nc = -1;
    o->ndim = c->ndim;
    o->cells = c->cells;
    o->buf = malloc((size_t)c->cells * sizeof *o->buf);
    int dims[4], sample, cvar[3], mvar;
    if (!o->buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto fail;
    }
    NC_TRY(nc_create(path, NC_CLOBBER | NC_NETCDF4, &o->nc));
    NC_TRY(nc_def_dim(o->nc, "time", NC_UNLIMITED, &dims[0]));
    NC_TRY(nc_def_var(o->nc, "time", NC_DOUBLE, 1, &dims[0], &o->time_var));
    NC_TRY(fluid_put_text(o->nc, o->time_var, "units", "1"));
    NC_TRY(fluid_put_text(o->nc, o->time_var, "long_name", "time steps (lattice units)"));
    NC_TRY(fluid_put_text(o->nc, o->time_var, "axis", "T"));
    for (int a = 0; a < c->ndim; a++) {
        const char *nm = names[3 - c->ndim + a];
        o->shape[a] = (size_t)c->shape[a];
        NC_TRY(nc_def_dim(o->nc, nm, o->shape[a], &dims[a + 1]));
        NC_TRY(nc_def_var(o->nc, nm, NC_DOUBLE, 1, &dims[a + 1], &cvar[a]));
        NC_TRY(nc_put_att_text(o->nc, cvar[a], "axis", 1, axes[3 - c->ndim + a]));
        NC_TRY(fluid_put_text(o->nc, cvar[a], "units", "1"));
        NC_TRY(fluid_put_text(o->nc, cvar[a], "long_name", "cell centre (cell widths)"));
    }
    NC_TRY(def_field(o, dims, c->ndim + 1, "u", "x velocity", "cell widths per step", &o->var[0]));
    NC_TRY(def_field(o, dims, c->ndim + 1, "v", "y velocity", "cell widths per step", &o->var[1]));
    o->var[2] = -1;
    if (c->ndim == 3) NC_TRY(def_field(o, dims, 4, "w", "z velocity", "cell widths per step", &o->var[2]));
    NC_TRY(def_field(o, dims, c->ndim + 1, "rho", "density", "1", &o->var[3]));
    NC_TRY(def_field(o, dims, c->ndim + 1, "vorticity", c->ndim == 2 ? "z vorticity" : "vorticity magnitude",
                     "per step", &o->var[4]));
    NC_TRY(nc_def_var(o->nc, "mask", NC_INT, c->ndim, dims + 1, &mvar));
    NC_TRY(fluid_put_text(o->nc, mvar, "flag_meanings", "fluid wall moving_wall_or_inlet outlet"));
    NC_TRY(nc_def_dim(o->nc, "sample", NC_UNLIMITED, &sample));
    NC_TRY(nc_def_var(o->nc, "history_step", NC_INT64, 1, &sample, &o->hist_step));
    NC_TRY(nc_def_var(o->nc, "history_residual", NC_DOUBLE, 1, &sample, &o->hist_res));
    NC_TRY(fluid_put_text(o->nc, o->hist_res, "long_name", "max change of velocity over 1000 steps / lid speed"));
    NC_TRY(nc_def_var(o->nc, "history_mass", NC_DOUBLE, 1, &sample, &o->hist_mass));
    NC_TRY(fluid_put_text(o->nc, o->hist_mass, "long_name", "sum of density, fluid cells"));
    NC_TRY(fluid_put_text(o->nc, NC_GLOBAL, "Conventions", "CF-1.8"));
    NC_TRY(fluid_put_text(o->nc, NC_GLOBAL, "title", c->name));
    NC_TRY(fluid_put_text(o->nc, NC_GLOBAL, "source", "tessera-fluid (lattice Boltzmann)"));
    NC_TRY(fluid_put_text(o->nc, NC_GLOBAL, "history", history));
    NC_TRY(fluid_put_text(o->nc, NC_GLOBAL, "lattice", c->lat->name));
    NC_TRY(nc_put_att_double(o->nc, NC_GLOBAL, "reynolds", NC_DOUBLE, 1, &c->reynolds));
    NC_TRY(nc_put_att_double(o->nc, NC_GLOBAL, "velocity", NC_DOUBLE, 1, &c->velocity));
    NC_TRY(nc_put_att_double(o->nc, NC_GLOBAL, "length", NC_DOUBLE, 1, &c->length));
    NC_TRY(nc_enddef(o->nc));
    for (int a = 0; a < c->ndim; a++)
        for (size_t i = 0; i < o->shape[a]; i++) {
            double v = (double)i;
            NC_TRY(nc_put_var1_double(o->nc, cvar[a], &i, &v));
        }
    NC_TRY(nc_put_var_int(o->nc, mvar, c->mask));
    *out = o;
    return FLUID_OK;
fail:
    if (o->nc >= 0) nc_close(o->nc);
    free(o->buf);
    free(o);
    return FLUID_FAIL;
}

int fluid_output_frame(fluid_output *o, long step, const fluid_fields *f, char *err, size_t errlen) {
    size_t start[4] = {(size_t)o->frames, 0, 0, 0}, count[4] = {1, 0, 0, 0};
    for (int a = 0; a < o->ndim; a++) count[a + 1] = o->shape[a];
    const double *src[5] = {f->u[0], f->u[1], f->u[2], f->rho, f->vort};
    double t = (double)step;
    NC_TRY(nc_put_var1_double(o->nc, o->time_var, start, &t));
    for (int v = 0; v < 5; v++) {
        if (o->var[v] < 0) continue;
        for (int64_t k = 0; k < o->cells; k++) o->buf[k] = (float)src[v][k];
        NC_TRY(nc_put_vara_float(o->nc, o->var[v], start, count, o->buf));
    }
    o->frames++;
    return FLUID_OK;
fail:
    return FLUID_FAIL;
}

int fluid_output_close(fluid_output *o, const long *steps, const double *residual, const double *mass, int n,
                       char *err, size_t errlen) {
    int st = FLUID_FAIL;
    size_t start = 0, count = (size_t)n;
    if (n > 0) {
        long long *s = malloc((size_t)n * sizeof *s);
        if (!s) {
            snprintf(err, errlen, "%s: out of memory", o->path);
            goto fail;
        }
        for (int i = 0; i < n; i++) s[i] = steps[i];
        int rc = nc_put_vara_longlong(o->nc, o->hist_step, &start, &count, s);
        free(s);
        NC_TRY(rc);
        NC_TRY(nc_put_vara_double(o->nc, o->hist_res, &start, &count, residual));
        NC_TRY(nc_put_vara_double(o->nc, o->hist_mass, &start, &count, mass));
    }
    st = FLUID_OK;
fail:
    if (nc_close(o->nc) != NC_NOERR && st == FLUID_OK) {
        snprintf(err, errlen, "%s: could not be closed", o->path);
        st = FLUID_FAIL;
    }
    free(o->buf);
    free(o);
    return st;
}
