/*
 * cf_read.c - reading a field of a CF netCDF file onto the app's grid.
 */
#include <math.h>
#include <netcdf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cf.h"

enum { AXIS_NONE, AXIS_LAT, AXIS_LON, AXIS_LEV, AXIS_TIME };

typedef struct reader {
    const char *path;
    int nc;
    char *err;
    size_t errlen;
} reader;

static int fail(reader *r, const char *fmt, ...) {
    va_list ap;
    int n = snprintf(r->err, r->errlen, "%s: ", r->path);
    va_start(ap, fmt);
    vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

/* A text attribute of a variable, "" where absent. */
static void text_att(int nc, int var, const char *name, char *buf, size_t len) {
    size_t n;
    nc_type t;
    buf[0] = 0;
    if (nc_inq_att(nc, var, name, &t, &n) || t != NC_CHAR || n >= len) return;
    if (nc_get_att_text(nc, var, name, buf)) n = 0;
    buf[n] = 0;
}

static int has_att(int nc, int var, const char *name) { return nc_inq_att(nc, var, name, NULL, NULL) == NC_NOERR; }

static int one_of(const char *s, const char *const *list) {
    for (; *list; list++)
        if (!strcmp(s, *list)) return 1;
    return 0;
}

/* What a coordinate variable is, by its CF attributes alone. */
static int axis_of(int nc, int var) {
    static const char *const north[] = {"degrees_north", "degree_north", "degree_N", "degrees_N", "degreeN", "degreesN", 0};
    static const char *const east[] = {"degrees_east", "degree_east", "degree_E", "degrees_E", "degreeE", "degreesE", 0};
    static const char *const vertical[] = {"air_pressure", "altitude", "height", "depth", "model_level_number",
                                           "atmosphere_hybrid_sigma_pressure_coordinate", "atmosphere_sigma_coordinate",
                                           "atmosphere_ln_pressure_coordinate", 0};
    char units[128], sn[128], axis[16];
    text_att(nc, var, "units", units, sizeof units);
    text_att(nc, var, "standard_name", sn, sizeof sn);
    text_att(nc, var, "axis", axis, sizeof axis);
    if (one_of(units, north) || !strcmp(sn, "latitude")) return AXIS_LAT;
    if (one_of(units, east) || !strcmp(sn, "longitude")) return AXIS_LON;
    if (!strcmp(axis, "T") || !strcmp(sn, "time") || strstr(units, " since ")) return AXIS_TIME;
    if (!strcmp(axis, "Z") || has_att(nc, var, "positive") || one_of(sn, vertical)) return AXIS_LEV;
    if (!strcmp(axis, "Y") || !strcmp(axis, "X")) return -1;   /* projected: no latitude or longitude */
    return AXIS_NONE;
}

static int find_var(reader *r, const char *name, int *var) {
    if (nc_inq_varid(r->nc, name, var) == NC_NOERR) return 0;
    int n;
    nc_inq_nvars(r->nc, &n);
    for (int v = 0; v < n; v++) {
        char sn[128];
        text_att(r->nc, v, "standard_name", sn, sizeof sn);
        if (!strcmp(sn, name)) {
            *var = v;
            return 0;
        }
    }
    return fail(r, "no variable '%s' (by name or standard_name)", name);
}

/* Refuses what the grid cannot represent: projections and 2D coordinates. */
static int check_grid_kind(reader *r, int var, const char *vname) {
    char mapping[128], coords[512];
    text_att(r->nc, var, "grid_mapping", mapping, sizeof mapping);
    int mv;
    if (*mapping && nc_inq_varid(r->nc, mapping, &mv) == NC_NOERR) {
        char kind[128];
        text_att(r->nc, mv, "grid_mapping_name", kind, sizeof kind);
        if (strcmp(kind, "latitude_longitude"))
            return fail(r, "variable '%s' is on a %s grid (grid_mapping '%s'): only regular latitude-longitude grids "
                        "are supported", vname, *kind ? kind : "projected", mapping);
    }
    text_att(r->nc, var, "coordinates", coords, sizeof coords);
    for (char *save, *t = strtok_r(coords, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        int cv, nd, ax;
        if (nc_inq_varid(r->nc, t, &cv) || nc_inq_varndims(r->nc, cv, &nd)) continue;
        ax = axis_of(r->nc, cv);
        if (nd >= 2 && (ax == AXIS_LAT || ax == AXIS_LON))
            return fail(r, "variable '%s' has 2D %s '%s' (a curvilinear grid): only regular latitude-longitude grids "
                        "are supported", vname, ax == AXIS_LAT ? "latitudes" : "longitudes", t);
    }
    return 0;
}

static int read_coord(reader *r, int var, size_t n, double **out) {
    *out = malloc(sizeof(double) * (n ? n : 1));
    if (!*out) return fail(r, "out of memory");
    int st = nc_get_var_double(r->nc, var, *out);
    return st ? fail(r, "cannot read a coordinate: %s", nc_strerror(st)) : 0;
}

/* Whether values are evenly spaced (to a millionth of their spacing). */
static int evenly_spaced(const double *v, size_t n) {
    for (size_t i = 2; i < n; i++)
        if (fabs((v[i] - v[i - 1]) - (v[1] - v[0])) > 1e-6 * fabs(v[1] - v[0]) + 1e-9) return 0;
    return n < 2 || v[1] != v[0];
}

/* The missing value test of a variable: _FillValue (or the type's default
 * fill value) and missing_value, compared with the stored values. */
typedef struct missing_test {
    double fill, miss[4];
    int nmiss;
} missing_test;

static void missing_init(int nc, int var, missing_test *m) {
    nc_type t;
    nc_inq_vartype(nc, var, &t);
    m->fill = NAN;
    union { double d; float f; int i; short s; signed char b; unsigned char ub; unsigned short us; unsigned ui;
            long long ll; unsigned long long ull; } fv;
    int no_fill;
    if (nc_inq_var_fill(nc, var, &no_fill, &fv) == NC_NOERR && !no_fill) {
        switch (t) {
        case NC_DOUBLE: m->fill = fv.d; break;
        case NC_FLOAT: m->fill = fv.f; break;
        case NC_INT: m->fill = fv.i; break;
        case NC_SHORT: m->fill = fv.s; break;
        case NC_BYTE: m->fill = fv.b; break;
        case NC_UBYTE: m->fill = fv.ub; break;
        case NC_USHORT: m->fill = fv.us; break;
        case NC_UINT: m->fill = fv.ui; break;
        default: break;
        }
    }
    size_t n = 0;
    m->nmiss = 0;
    if (nc_inq_attlen(nc, var, "missing_value", &n) == NC_NOERR && n >= 1 && n <= 4 &&
        nc_get_att_double(nc, var, "missing_value", m->miss) == NC_NOERR)
        m->nmiss = (int)n;
}

static int is_missing(const missing_test *m, double v) {
    if (isnan(v) || v == m->fill) return 1;
    for (int i = 0; i < m->nmiss; i++)
        if (v == m->miss[i]) return 1;
    return 0;
}

int cf_read(const char *path, const char *name, long time, cf_field *out, char *err, size_t errlen) {
    reader r = {path, -1, err, errlen};
    memset(out, 0, sizeof *out);
    int st = nc_open(path, NC_NOWRITE, &r.nc), var, ndims, dims[NC_MAX_VAR_DIMS], rc = -1;
    if (st) return fail(&r, "cannot open: %s", nc_strerror(st));
    double *lat = NULL, *lon = NULL, *raw = NULL;
    if (find_var(&r, name, &var)) goto done;
    nc_type type;
    nc_inq_var(r.nc, var, out->var, &type, &ndims, dims, NULL);
    if (type == NC_CHAR || type == NC_STRING || type >= NC_VLEN) {
        fail(&r, "variable '%s' is not numeric", out->var);
        goto done;
    }
    if (check_grid_kind(&r, var, out->var)) goto done;
    int role[NC_MAX_VAR_DIMS], at[5] = {-1, -1, -1, -1, -1};
    size_t len[NC_MAX_VAR_DIMS], start[NC_MAX_VAR_DIMS], count[NC_MAX_VAR_DIMS];
    for (int d = 0; d < ndims; d++) {
        char dname[NC_MAX_NAME + 1];
        int cv;
        nc_inq_dim(r.nc, dims[d], dname, &len[d]);
        role[d] = nc_inq_varid(r.nc, dname, &cv) == NC_NOERR ? axis_of(r.nc, cv) : AXIS_NONE;
        if (role[d] == -1) {
            fail(&r, "variable '%s' is on projected coordinates ('%s' has a CF axis but no latitude or longitude "
                 "units): only regular latitude-longitude grids are supported", out->var, dname);
            goto done;
        }
        if (role[d] == AXIS_NONE && len[d] > 1) {
            fail(&r, "variable '%s': dimension '%s' (%zu) is no latitude, longitude, vertical or time axis by its CF "
                 "attributes (an unstructured mesh or a curvilinear grid is not supported)", out->var, dname, len[d]);
            goto done;
        }
        if (role[d] != AXIS_NONE && at[role[d]] >= 0) {
            fail(&r, "variable '%s' has two %s dimensions", out->var, role[d] == AXIS_LAT ? "latitude" : role[d] == AXIS_LON ? "longitude" : "vertical or time");
            goto done;
        }
        if (role[d] != AXIS_NONE) {
            at[role[d]] = d;
            snprintf(role[d] == AXIS_LAT ? out->lat : role[d] == AXIS_LON ? out->lon : role[d] == AXIS_LEV ? out->lev : out->time,
                     260, "%s", dname);
        }
        start[d] = 0;
        count[d] = len[d];
    }
    if (at[AXIS_LAT] < 0 || at[AXIS_LON] < 0) {
        fail(&r, "variable '%s' has no %s dimension (a coordinate variable with units %s)", out->var,
             at[AXIS_LAT] < 0 ? "latitude" : "longitude", at[AXIS_LAT] < 0 ? "degrees_north" : "degrees_east");
        goto done;
    }
    if (at[AXIS_TIME] >= 0) {
        int d = at[AXIS_TIME], tv;
        if (time < 0 || (size_t)time >= len[d]) {
            fail(&r, "variable '%s': time index %ld is out of range (the file has %zu times)", out->var, time, len[d]);
            goto done;
        }
        start[d] = (size_t)time;
        count[d] = 1;
        nc_inq_varid(r.nc, out->time, &tv);
        nc_get_var1_double(r.nc, tv, &start[d], &out->time_value);
        text_att(r.nc, tv, "units", out->time_units, sizeof out->time_units);
    } else if (time != 0) {
        fail(&r, "variable '%s' has no time dimension, so no time index %ld", out->var, time);
        goto done;
    }
    size_t nlat = len[at[AXIS_LAT]], nlon = len[at[AXIS_LON]], nz = at[AXIS_LEV] >= 0 ? len[at[AXIS_LEV]] : 1;
    int lv, ov;
    nc_inq_varid(r.nc, out->lat, &lv);
    nc_inq_varid(r.nc, out->lon, &ov);
    if (read_coord(&r, lv, nlat, &lat) || read_coord(&r, ov, nlon, &lon)) goto done;
    if (nlat < 2 || !evenly_spaced(lat, nlat) || fabs(lat[0]) > 90 || fabs(lat[nlat - 1]) > 90) {
        fail(&r, "latitudes '%s' of '%s' are not evenly spaced within [-90, 90] (a Gaussian grid is not supported)",
             out->lat, out->var);
        goto done;
    }
    if (nlon < 4 || !evenly_spaced(lon, nlon) || fabs(fabs(lon[1] - lon[0]) * (double)nlon - 360) > 1e-3) {
        fail(&r, "longitudes '%s' of '%s' do not go evenly round the globe (%zu of them): the grid must be periodic in "
             "longitude", out->lon, out->var, nlon);
        goto done;
    }
    int flip_lat = lat[1] < lat[0], flip_lon = lon[1] < lon[0];
    double *lat_up = malloc(sizeof(double) * nlat);
    if (!lat_up) {
        fail(&r, "out of memory");
        goto done;
    }
    for (size_t j = 0; j < nlat; j++) lat_up[j] = flip_lat ? lat[nlat - 1 - j] : lat[j];
    int grc = grid_init(&out->g, (int)nz, (int)nlat, lat_up, (int)nlon, flip_lon ? lon[nlon - 1] : lon[0]);
    free(lat_up);
    if (grc) {
        fail(&r, "out of memory");
        goto done;
    }
    if (at[AXIS_LEV] >= 0) {
        int zv;
        nc_inq_varid(r.nc, out->lev, &zv);
        if (read_coord(&r, zv, nz, &out->levels)) goto done;
    }
    size_t total = nlat * nlon * nz;
    raw = malloc(sizeof(double) * total);
    out->q = calloc((size_t)grid_padded_3d(&out->g), sizeof(double));
    out->missing = calloc((size_t)grid_padded_3d(&out->g), 1);
    if (!raw || !out->q || !out->missing) {
        fail(&r, "out of memory");
        goto done;
    }
    if ((st = nc_get_vara_double(r.nc, var, start, count, raw))) {
        fail(&r, "cannot read variable '%s': %s", out->var, nc_strerror(st));
        goto done;
    }
    double scale = 1, offset = 0;
    out->packed = nc_get_att_double(r.nc, var, "scale_factor", &scale) == NC_NOERR;
    out->packed |= nc_get_att_double(r.nc, var, "add_offset", &offset) == NC_NOERR;
    missing_test m;
    missing_init(r.nc, var, &m);
    /* strides of the file's dimensions, slowest first, over the record read */
    size_t stride[NC_MAX_VAR_DIMS], s = 1;
    for (int d = ndims - 1; d >= 0; d--) {
        stride[d] = s;
        s *= count[d];
    }
    for (size_t k = 0; k < nz; k++)
        for (size_t j = 0; j < nlat; j++)
            for (size_t i = 0; i < nlon; i++) {
                size_t p = j * stride[at[AXIS_LAT]] + i * stride[at[AXIS_LON]];
                if (at[AXIS_LEV] >= 0) p += k * stride[at[AXIS_LEV]];
                int64_t q = grid_at(&out->g, (int)k, flip_lat ? (int)(nlat - 1 - j) : (int)j,
                                    flip_lon ? (int)(nlon - 1 - i) : (int)i);
                if (is_missing(&m, raw[p])) {
                    out->missing[q] = 1;
                    out->nmissing++;
                } else {
                    out->q[q] = raw[p] * scale + offset;
                }
            }
    rc = 0;
done:
    free(lat);
    free(lon);
    free(raw);
    nc_close(r.nc);
    if (rc) cf_field_free(out);
    return rc;
}

void cf_field_free(cf_field *f) {
    grid_free(&f->g);
    free(f->q);
    free(f->missing);
    free(f->levels);
    f->q = f->levels = NULL;
    f->missing = NULL;
}
