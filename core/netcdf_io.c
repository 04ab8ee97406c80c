/*
 * netcdf_io.c - fields on a regular grid to and from netCDF files, with CF
 * conventions (tessera.h: tess_netcdf_read, tess_netcdf_write). Reading
 * checks what a simulation relies on: a numeric variable on the grid's
 * dimensions (by name or CF axis), every point present (no _FillValue or
 * missing_value), CF packing undone (scale_factor, add_offset).
 */
#include <ctype.h>
#include <math.h>
#include <netcdf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "task.h"
#include "types.h"

#define NC_MAX_FIELDS 16
#define NC_MAX_MISSING 8

static tess_status nc_fail(int rc, const char *path, const char *what) {
    return tess_error(rc == NC_ENOTNC ? TESS_ERR_FORMAT : TESS_ERR_IO, "%s: %s: %s", path, what, nc_strerror(rc));
}

static tess_status real_dtype(const char *text, tess_dtype *t) {
    tess_status st = tess_dtype_parse(text ? text : "", t);
    if (st || (*t != TESS_F32 && *t != TESS_F64))
        return tess_error(TESS_ERR_ARG, "netCDF fields are f32 or f64, not '%s'", text ? text : "(none)");
    return TESS_OK;
}

static bool is_integer_type(nc_type t) {
    return t == NC_BYTE || t == NC_UBYTE || t == NC_SHORT || t == NC_USHORT || t == NC_INT || t == NC_UINT ||
           t == NC_INT64 || t == NC_UINT64;
}

static const char *type_name(nc_type t) {
    static const char *const names[] = {"nat", "byte", "char", "short", "int", "float", "double",
                                        "ubyte", "ushort", "uint", "int64", "uint64", "string"};
    return t >= 0 && t <= NC_STRING ? names[t] : "a user-defined type";
}

/* The netCDF default fill value of a type: what unwritten points hold. */
static double default_fill(nc_type t) {
    switch (t) {
    case NC_BYTE: return NC_FILL_BYTE;
    case NC_UBYTE: return NC_FILL_UBYTE;
    case NC_SHORT: return NC_FILL_SHORT;
    case NC_USHORT: return NC_FILL_USHORT;
    case NC_INT: return NC_FILL_INT;
    case NC_UINT: return NC_FILL_UINT;
    case NC_INT64: return (double)NC_FILL_INT64;
    case NC_UINT64: return (double)NC_FILL_UINT64;
    case NC_FLOAT: return NC_FILL_FLOAT;
    default: return NC_FILL_DOUBLE;
    }
}

/* A numeric attribute of up to cap values; *n = 0 when absent. */
static void numeric_att(int nc, int var, const char *att, double *values, int cap, int *n) {
    size_t len;
    nc_type type;
    *n = 0;
    if (nc_inq_att(nc, var, att, &type, &len) || type == NC_CHAR || type == NC_STRING || len == 0 || len > (size_t)cap)
        return;
    if (nc_get_att_double(nc, var, att, values) == NC_NOERR) *n = (int)len;
}

/* Whether dimension dim is grid axis `want`: by its name, or by the CF axis
 * attribute of its coordinate variable. */
static bool dim_is_axis(int nc, const char *dim_name, const char *want) {
    if (strcmp(dim_name, want) == 0) return true;
    int coord;
    char axis[8] = "";
    size_t len;
    if (nc_inq_varid(nc, dim_name, &coord) || nc_inq_attlen(nc, coord, "axis", &len) || len >= sizeof axis ||
        nc_get_att_text(nc, coord, "axis", axis))
        return false;
    axis[len] = '\0';
    return strlen(want) == 1 && len == 1 && axis[0] == toupper((unsigned char)want[0]);
}

/* Checks the variable's type, dimensions and extents against the grid. */
static tess_status check_variable(int nc, int var, const char *path, const char *name, int ndim,
                                  const int64_t *shape, const char *const *dims, nc_type *type, bool *packed) {
    int rank, dimid[NC_MAX_VAR_DIMS];
    int rc = nc_inq_var(nc, var, NULL, type, &rank, dimid, NULL);
    if (rc) return nc_fail(rc, path, name);
    double v[1];
    int nscale, noffset;
    numeric_att(nc, var, "scale_factor", v, 1, &nscale);
    numeric_att(nc, var, "add_offset", v, 1, &noffset);
    *packed = nscale || noffset;
    if (*type != NC_FLOAT && *type != NC_DOUBLE && !(is_integer_type(*type) && *packed))
        return tess_error(TESS_ERR_FORMAT, "%s: variable '%s' is of type %s: fields are float or double "
                          "(or CF-packed integers, with scale_factor or add_offset)", path, name, type_name(*type));
    if (rank != ndim)
        return tess_error(TESS_ERR_FORMAT, "%s: variable '%s' has %d dimensions, the grid has %d", path, name, rank, ndim);
    char names[NC_MAX_VAR_DIMS][NC_MAX_NAME + 1];
    size_t len[NC_MAX_VAR_DIMS];
    bool axes_match = true;
    for (int i = 0; i < rank; i++) {
        if ((rc = nc_inq_dim(nc, dimid[i], names[i], &len[i]))) return nc_fail(rc, path, name);
        axes_match = axes_match && dim_is_axis(nc, names[i], dims[i]);
    }
    if (!axes_match) {
        char have[256] = "", want[64] = "";
        for (int i = 0; i < rank; i++) {
            snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s", i ? ", " : "", names[i]);
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", i ? ", " : "", dims[i]);
        }
        return tess_error(TESS_ERR_FORMAT, "%s: variable '%s' has dimensions (%s), the grid's are (%s) "
                          "(by name, or by the CF axis attribute of their coordinate variables)", path, name, have, want);
    }
    for (int i = 0; i < rank; i++)
        if ((int64_t)len[i] != shape[i])
            return tess_error(TESS_ERR_FORMAT, "%s: variable '%s' has %zu points along '%s', the grid %lld", path,
                              name, len[i], names[i], (long long)shape[i]);
    return TESS_OK;
}

/* Refuses a field with missing points; values are as stored (packed). */
static tess_status check_missing(int nc, int var, const char *path, const char *name, nc_type type,
                                 const double *values, int64_t n) {
    double missing[NC_MAX_MISSING + 1];
    int nfill, nmiss;
    numeric_att(nc, var, "_FillValue", missing, 1, &nfill);
    numeric_att(nc, var, "missing_value", missing + nfill, NC_MAX_MISSING, &nmiss);
    const char *which = nfill ? "_FillValue" : nmiss ? "missing_value" : "the netCDF default fill value";
    if (!nfill && !nmiss) missing[nmiss++] = default_fill(type);
    int nm = nfill + nmiss;
    int64_t count = 0, first = -1;
    for (int64_t i = 0; i < n; i++)
        for (int k = 0; k < nm; k++)
            if (values[i] == missing[k] || (isnan(missing[k]) && isnan(values[i]))) {
                if (first < 0) first = i;
                count++;
                break;
            }
    if (!count) return TESS_OK;
    return tess_error(TESS_ERR_FORMAT, "%s: variable '%s': %lld of %lld points are missing (%s %g, first at index "
                      "%lld); a run needs a value at every point", path, name, (long long)count, (long long)n, which,
                      missing[0], (long long)first);
}

tess_status tess_netcdf_read(const char *path, const char *name, const char *dtype, int ndim,
                             const int64_t *shape, const char *const *dims, void *data) {
    tess_dtype t;
    tess_status st = real_dtype(dtype, &t);
    if (st) return st;
    int nc, var, rc = nc_open(path, NC_NOWRITE, &nc);
    if (rc) return nc_fail(rc, path, "cannot open");
    nc_type type;
    bool packed;
    if (nc_inq_varid(nc, name, &var) != NC_NOERR)
        st = tess_error(TESS_ERR_FORMAT, "%s: no variable '%s'", path, name);
    else
        st = check_variable(nc, var, path, name, ndim, shape, dims, &type, &packed);
    int64_t n = tess_shape_elements(shape, ndim);
    double *values = st ? NULL : t == TESS_F64 ? data : malloc((size_t)n * sizeof *values);
    if (!st && !values) st = tess_error(TESS_ERR_NOMEM, "%s: variable '%s': out of memory", path, name);
    if (!st && (rc = nc_get_var_double(nc, var, values))) st = nc_fail(rc, path, name);
    if (!st) st = check_missing(nc, var, path, name, type, values, n);
    if (!st) {
        double scale[1] = {1}, offset[1] = {0};
        int k;
        numeric_att(nc, var, "scale_factor", scale, 1, &k);
        if (!k) scale[0] = 1;
        numeric_att(nc, var, "add_offset", offset, 1, &k);
        if (!k) offset[0] = 0;
        for (int64_t i = 0; i < n; i++) tess_dtype_store(data, t, i, values[i] * scale[0] + offset[0]);
    }
    if (values != data) free(values);
    nc_close(nc);
    return st;
}

tess_status tess_netcdf_write(const char *path, int ndim, const int64_t *shape, const char *const *dims,
                              const tess_netcdf_var *vars, int nvars, const char *title, const char *history) {
    if (ndim < 1 || ndim > 3) return tess_error(TESS_ERR_ARG, "%s: netCDF output: grids of 1 to 3 dimensions", path);
    if (nvars > NC_MAX_FIELDS) return tess_error(TESS_ERR_ARG, "%s: at most %d variables", path, NC_MAX_FIELDS);
    tess_dtype types[NC_MAX_FIELDS];
    for (int f = 0; f < nvars; f++) {
        tess_status st = real_dtype(vars[f].dtype, &types[f]);
        if (st) return st;
        if (vars[f].rank < 0 || vars[f].rank > ndim)
            return tess_error(TESS_ERR_ARG, "%s: variable '%s' of rank %d on a grid of %d", path, vars[f].name,
                              vars[f].rank, ndim);
    }
    int nc, rc = nc_create(path, NC_CLOBBER | NC_NETCDF4, &nc);
    if (rc) return nc_fail(rc, path, "cannot create");
    int dimid[3], coords[3], varid[NC_MAX_FIELDS];
    rc = nc_put_att_text(nc, NC_GLOBAL, "Conventions", 6, "CF-1.8");
    if (!rc) rc = nc_put_att_text(nc, NC_GLOBAL, "title", strlen(title), title);
    if (!rc) rc = nc_put_att_text(nc, NC_GLOBAL, "history", strlen(history), history);
    if (!rc) rc = nc_put_att_text(nc, NC_GLOBAL, "source", 7, "tessera");
    for (int i = 0; i < ndim && !rc; i++) {
        char long_name[64], axis[2] = {(char)toupper((unsigned char)dims[i][0]), '\0'};
        snprintf(long_name, sizeof long_name, "grid index along %s", dims[i]);
        rc = nc_def_dim(nc, dims[i], (size_t)shape[i], &dimid[i]);
        if (!rc) rc = nc_def_var(nc, dims[i], NC_INT, 1, &dimid[i], &coords[i]);
        if (!rc) rc = nc_put_att_text(nc, coords[i], "long_name", strlen(long_name), long_name);
        if (!rc) rc = nc_put_att_text(nc, coords[i], "units", 1, "1");
        if (!rc) rc = nc_put_att_text(nc, coords[i], "axis", 1, axis);
    }
    for (int f = 0; f < nvars && !rc; f++) {
        int rank = vars[f].rank ? vars[f].rank : ndim;
        rc = nc_def_var(nc, vars[f].name, types[f] == TESS_F64 ? NC_DOUBLE : NC_FLOAT, rank, dimid + ndim - rank,
                        &varid[f]);
        const char *ln = vars[f].long_name ? vars[f].long_name : vars[f].name;
        if (!rc) rc = nc_put_att_text(nc, varid[f], "long_name", strlen(ln), ln);
    }
    if (!rc) rc = nc_enddef(nc);
    for (int i = 0; i < ndim && !rc; i++) {
        int *index = malloc((size_t)shape[i] * sizeof *index);
        if (!index) {
            rc = NC_ENOMEM;
            break;
        }
        for (int64_t k = 0; k < shape[i]; k++) index[k] = (int)k;
        rc = nc_put_var_int(nc, coords[i], index);
        free(index);
    }
    for (int f = 0; f < nvars && !rc; f++)
        rc = types[f] == TESS_F64 ? nc_put_var_double(nc, varid[f], vars[f].data)
                                  : nc_put_var_float(nc, varid[f], vars[f].data);
    int close_rc = nc_close(nc);
    if (!rc) rc = close_rc;
    return rc ? nc_fail(rc, path, "writing") : TESS_OK;
}
