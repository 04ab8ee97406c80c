/* netcdf_io.c - fields to and from netCDF files (CF conventions). */
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "netcdf_io.h"

static const char *const axis_names[3][3] = {{"x"}, {"y", "x"}, {"z", "y", "x"}};

static tess_status nc_fail(int rc, const char *path, const char *what) {
    return tess_error(rc == NC_ENOTNC ? TESS_ERR_FORMAT : TESS_ERR_IO, "%s: %s: %s", path, what, nc_strerror(rc));
}

tess_status tess_nc_read_field(const char *path, const char *name, tess_dtype t, int ndim,
                               const int64_t *shape, void *data) {
    int nc, var, rank, rc = nc_open(path, NC_NOWRITE, &nc);
    if (rc) return nc_fail(rc, path, "cannot open");
    tess_status st = TESS_OK;
    if (nc_inq_varid(nc, name, &var) != NC_NOERR) {
        st = tess_error(TESS_ERR_FORMAT, "%s: no variable '%s'", path, name);
    } else if ((rc = nc_inq_varndims(nc, var, &rank))) {
        st = nc_fail(rc, path, name);
    } else if (rank != ndim) {
        st = tess_error(TESS_ERR_FORMAT, "%s: variable '%s' has %d dimensions, the grid has %d", path, name, rank, ndim);
    } else {
        int dims[NC_MAX_VAR_DIMS];
        nc_inq_vardimid(nc, var, dims);
        for (int i = 0; i < rank && !st; i++) {
            size_t len;
            char dim_name[NC_MAX_NAME + 1];
            nc_inq_dim(nc, dims[i], dim_name, &len);
            if ((int64_t)len != shape[i])
                st = tess_error(TESS_ERR_FORMAT, "%s: variable '%s' has %zu points along '%s', the grid %lld",
                                path, name, len, dim_name, (long long)shape[i]);
        }
    }
    if (!st) {
        rc = t == TESS_F64 ? nc_get_var_double(nc, var, data)
           : t == TESS_F32 ? nc_get_var_float(nc, var, data)
                           : NC_EBADTYPE;
        if (rc) st = nc_fail(rc, path, name);
    }
    nc_close(nc);
    return st;
}

tess_status tess_nc_write_fields(const char *path, int ndim, const int64_t *shape, const tess_nc_field *fields,
                                 int nfields, const char *title, const char *history) {
    if (ndim < 1 || ndim > 3) return tess_error(TESS_ERR_ARG, "netCDF output: grids of 1 to 3 dimensions");
    int nc, rc = nc_create(path, NC_CLOBBER | NC_NETCDF4, &nc);
    if (rc) return nc_fail(rc, path, "cannot create");
    int dims[3], coords[3], vars[16];
    const char *const *axes = axis_names[ndim - 1];
    rc = nc_put_att_text(nc, NC_GLOBAL, "Conventions", 6, "CF-1.8");
    if (!rc) rc = nc_put_att_text(nc, NC_GLOBAL, "title", strlen(title), title);
    if (!rc) rc = nc_put_att_text(nc, NC_GLOBAL, "history", strlen(history), history);
    if (!rc) rc = nc_put_att_text(nc, NC_GLOBAL, "source", 7, "tessera");
    for (int i = 0; i < ndim && !rc; i++) {
        char long_name[64];
        snprintf(long_name, sizeof long_name, "grid index along %s", axes[i]);
        rc = nc_def_dim(nc, axes[i], (size_t)shape[i], &dims[i]);
        if (!rc) rc = nc_def_var(nc, axes[i], NC_INT, 1, &dims[i], &coords[i]);
        if (!rc) rc = nc_put_att_text(nc, coords[i], "long_name", strlen(long_name), long_name);
        if (!rc) rc = nc_put_att_text(nc, coords[i], "units", 1, "1");
        if (!rc) rc = nc_put_att_text(nc, coords[i], "axis", 1, axes[i][0] == 'x' ? "X" : axes[i][0] == 'y' ? "Y" : "Z");
    }
    for (int f = 0; f < nfields && f < 16 && !rc; f++) {
        nc_type type = fields[f].dtype == TESS_F64 ? NC_DOUBLE : NC_FLOAT;
        rc = nc_def_var(nc, fields[f].name, type, ndim, dims, &vars[f]);
        const char *ln = fields[f].long_name ? fields[f].long_name : fields[f].name;
        if (!rc) rc = nc_put_att_text(nc, vars[f], "long_name", strlen(ln), ln);
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
    for (int f = 0; f < nfields && f < 16 && !rc; f++)
        rc = fields[f].dtype == TESS_F64 ? nc_put_var_double(nc, vars[f], fields[f].data)
                                         : nc_put_var_float(nc, vars[f], fields[f].data);
    int close_rc = nc_close(nc);
    if (!rc) rc = close_rc;
    return rc ? nc_fail(rc, path, "writing") : TESS_OK;
}
