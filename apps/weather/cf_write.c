/*
 * cf_write.c - writing fields on the app's grid as a CF netCDF time series.
 */
#include <math.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf.h"

#define CHECK(call)                                                                                                    \
    do {                                                                                                               \
        int st_ = (call);                                                                                              \
        if (st_) {                                                                                                     \
            snprintf(err, errlen, "%s: %s", path, nc_strerror(st_));                                                  \
            goto fail;                                                                                                 \
        }                                                                                                              \
    } while (0)

static int put_text(int nc, int var, const char *name, const char *text) {
    return text ? nc_put_att_text(nc, var, name, strlen(text), text) : NC_NOERR;
}

/* Copies every attribute of variable `name` of the file `from` but those
 * tessera writes itself (packing and fill values: the output is float). */
static int copy_atts(int from, const char *name, int to, int var) {
    int fv, natts;
    if (from < 0 || nc_inq_varid(from, name, &fv) || nc_inq_varnatts(from, fv, &natts)) return NC_NOERR;
    static const char *const skip[] = {"scale_factor", "add_offset", "_FillValue", "missing_value", "valid_range",
                                       "valid_min", "valid_max", "actual_range", 0};
    for (int a = 0; a < natts; a++) {
        char an[NC_MAX_NAME + 1];
        nc_inq_attname(from, fv, a, an);
        int skipped = 0;
        for (const char *const *s = skip; *s; s++) skipped |= !strcmp(an, *s);
        int st = skipped ? NC_NOERR : nc_copy_att(from, fv, an, to, var);
        if (st) return st;
    }
    return NC_NOERR;
}

static int coord(int nc, int from, const char *like_name, const char *name, int dim, const char *sn, const char *units,
                 const char *axis, int *var) {
    int st = nc_def_var(nc, name, NC_DOUBLE, 1, &dim, var);
    if (!st && from >= 0 && *like_name) return copy_atts(from, like_name, nc, *var);
    if (!st) st = put_text(nc, *var, "standard_name", sn);
    if (!st) st = put_text(nc, *var, "units", units);
    if (!st) st = put_text(nc, *var, "axis", axis);
    return st;
}

int cf_out_create(cf_out *o, const char *path, const grid *g, const cf_field *like, const char *like_path,
                  const cf_var_desc *vars, int nvars, const char *time_units, const char *title, const char *history,
                  char *err, size_t errlen) {
    memset(o, 0, sizeof *o);
    o->nc = -1;
    o->g = g;
    o->nvars = nvars;
    if (nvars < 1 || nvars > (int)(sizeof o->var / sizeof o->var[0])) {
        snprintf(err, errlen, "%s: %d variables (1 to 8 can be written)", path, nvars);
        return -1;
    }
    int from = -1, dims[4], lat_var, lon_var, lev_var = -1, nd = 0;
    if (like_path && nc_open(like_path, NC_NOWRITE, &from)) from = -1;
    const char *lat_name = like && *like->lat ? like->lat : "lat", *lon_name = like && *like->lon ? like->lon : "lon";
    const char *lev_name = like && *like->lev ? like->lev : "lev", *time_name = like && *like->time ? like->time : "time";
    int with_lev = g->nz > 1 || (like && *like->lev);
    CHECK(nc_create(path, NC_CLOBBER | NC_NETCDF4, &o->nc));
    CHECK(nc_def_dim(o->nc, time_name, NC_UNLIMITED, &dims[nd++]));
    if (with_lev) CHECK(nc_def_dim(o->nc, lev_name, (size_t)g->nz, &dims[nd++]));
    CHECK(nc_def_dim(o->nc, lat_name, (size_t)g->nlat, &dims[nd++]));
    CHECK(nc_def_dim(o->nc, lon_name, (size_t)g->nlon, &dims[nd++]));
    CHECK(nc_def_var(o->nc, time_name, NC_DOUBLE, 1, &dims[0], &o->time_var));
    CHECK(put_text(o->nc, o->time_var, "standard_name", "time"));
    CHECK(put_text(o->nc, o->time_var, "units", time_units ? time_units : "seconds since 2000-01-01 00:00:00"));
    CHECK(put_text(o->nc, o->time_var, "axis", "T"));
    if (with_lev) CHECK(coord(o->nc, from, like ? like->lev : "", lev_name, dims[1], "model_level_number", "1", "Z", &lev_var));
    CHECK(coord(o->nc, from, like ? like->lat : "", lat_name, dims[nd - 2], "latitude", "degrees_north", "Y", &lat_var));
    CHECK(coord(o->nc, from, like ? like->lon : "", lon_name, dims[nd - 1], "longitude", "degrees_east", "X", &lon_var));
    for (int v = 0; v < nvars; v++) {
        CHECK(nc_def_var(o->nc, vars[v].name, NC_FLOAT, nd, dims, &o->var[v]));
        if (from >= 0 && like && !strcmp(vars[v].name, like->var)) CHECK(copy_atts(from, like->var, o->nc, o->var[v]));
        else {
            CHECK(put_text(o->nc, o->var[v], "standard_name", vars[v].standard_name));
            CHECK(put_text(o->nc, o->var[v], "long_name", vars[v].long_name));
            CHECK(put_text(o->nc, o->var[v], "units", vars[v].units));
        }
        float fill = NC_FILL_FLOAT;
        CHECK(nc_put_att_float(o->nc, o->var[v], "_FillValue", NC_FLOAT, 1, &fill));
    }
    char old[4096] = "";
    size_t hl;
    if (from >= 0 && nc_inq_attlen(from, NC_GLOBAL, "history", &hl) == NC_NOERR && hl < sizeof old - 1) {
        nc_get_att_text(from, NC_GLOBAL, "history", old);
        old[hl] = 0;
    }
    if (from >= 0) {   /* the input's global attributes, history extended below */
        int natts;
        nc_inq_natts(from, &natts);
        for (int a = 0; a < natts; a++) {
            char an[NC_MAX_NAME + 1];
            nc_inq_attname(from, NC_GLOBAL, a, an);
            if (strcmp(an, "history")) CHECK(nc_copy_att(from, NC_GLOBAL, an, o->nc, NC_GLOBAL));
        }
    } else {
        CHECK(put_text(o->nc, NC_GLOBAL, "Conventions", "CF-1.8"));
        CHECK(put_text(o->nc, NC_GLOBAL, "title", title));
    }
    char *hist = malloc(strlen(old) + strlen(history) + 2);
    if (!hist) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto fail;
    }
    sprintf(hist, "%s%s%s", history, *old ? "\n" : "", old);   /* newest first, as CF asks */
    int hst = put_text(o->nc, NC_GLOBAL, "history", hist);
    free(hist);
    CHECK(hst);
    CHECK(nc_enddef(o->nc));
    double *c = malloc(sizeof(double) * (size_t)(g->nlat > g->nlon ? g->nlat : g->nlon) + sizeof(double) * (size_t)g->nz);
    if (!c) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto fail;
    }
    for (int j = 0; j < g->nlat; j++) c[j] = g->lat[j] * 180 / M_PI;
    int st = nc_put_var_double(o->nc, lat_var, c);
    for (int i = 0; i < g->nlon && !st; i++) c[i] = g->lon[i] * 180 / M_PI;
    if (!st) st = nc_put_var_double(o->nc, lon_var, c);
    for (int k = 0; k < g->nz && !st && with_lev; k++) c[k] = like && like->levels ? like->levels[k] : k + 1;
    if (!st && with_lev) st = nc_put_var_double(o->nc, lev_var, c);
    free(c);
    CHECK(st);
    if (from >= 0) nc_close(from);
    return 0;
fail:
    if (from >= 0) nc_close(from);
    if (o->nc >= 0) nc_close(o->nc);
    o->nc = -1;
    return -1;
}

int cf_out_write(cf_out *o, double t, const double *const *fields, const unsigned char *missing, char *err,
                 size_t errlen) {
    const grid *g = o->g;
    const char *path = "output";
    size_t n = (size_t)g->nz * g->nlat * g->nlon;
    float *buf = malloc(sizeof(float) * n);
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int with_lev = 0, nd;
    nc_inq_varndims(o->nc, o->var[0], &nd);
    with_lev = nd == 4;
    size_t start[4] = {o->records, 0, 0, 0}, count[4] = {1, (size_t)g->nz, (size_t)g->nlat, (size_t)g->nlon};
    if (!with_lev) count[1] = (size_t)g->nlat, count[2] = (size_t)g->nlon;
    CHECK(nc_put_var1_double(o->nc, o->time_var, &o->records, &t));
    for (int v = 0; v < o->nvars; v++) {
        size_t p = 0;
        for (int k = 0; k < g->nz; k++)
            for (int j = 0; j < g->nlat; j++)
                for (int i = 0; i < g->nlon; i++, p++) {
                    int64_t at = grid_at(g, k, j, i);
                    buf[p] = missing && missing[at] ? NC_FILL_FLOAT : (float)fields[v][at];
                }
        CHECK(nc_put_vara_float(o->nc, o->var[v], start, count, buf));
    }
    free(buf);
    o->records++;
    return 0;
fail:
    free(buf);
    return -1;
}

int cf_out_close(cf_out *o, char *err, size_t errlen) {
    const char *path = "output";
    if (o->nc < 0) return 0;
    int st = nc_close(o->nc);
    o->nc = -1;
    if (st) snprintf(err, errlen, "%s: %s", path, nc_strerror(st));
    return st ? -1 : 0;
}
