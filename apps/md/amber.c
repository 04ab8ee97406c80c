/* amber.c - AMBER NetCDF restarts and trajectories (amber.h). */
#include <math.h>
#include <netcdf.h>
#include <stdlib.h>
#include <string.h>
#include "amber.h"

#define SIGMA_ANGSTROM 3.405
#define EPSILON_KELVIN 119.8
#define MASS_DALTON 39.948

/* The reduced time unit sigma * sqrt(m / epsilon) in picoseconds. */
static double tau_ps(void) {
    const double m = MASS_DALTON * 1.66053906660e-27, eps = EPSILON_KELVIN * 1.380649e-23;
    return SIGMA_ANGSTROM * 1e-10 * sqrt(m / eps) * 1e12;
}

#define NC_TRY(call, what)                                                                  \
    do {                                                                                    \
        int rc_ = (call);                                                                   \
        if (rc_ != NC_NOERR) {                                                              \
            snprintf(err, errlen, "%s: %s: %s", path, what, nc_strerror(rc_));              \
            goto fail;                                                                      \
        }                                                                                   \
    } while (0)

/* The text attribute `name` of variable var (NC_GLOBAL for the file) into buf, "" when absent. */
static void text_attr(int ncid, int var, const char *name, char *buf, size_t len) {
    size_t n = 0;
    nc_type type;
    buf[0] = 0;
    if (nc_inq_att(ncid, var, name, &type, &n) || type != NC_CHAR || n >= len) return;
    if (nc_get_att_text(ncid, var, name, buf) == NC_NOERR) buf[n] = 0;
    while (n > 0 && (buf[n - 1] == 0 || buf[n - 1] == ' ')) buf[--n] = 0;
}

/* Variable `name` of the dimensions `dims` (NULL-terminated), with units `units` (NULL: any). */
static int find_var(int ncid, const char *path, const char *name, const char *const *dims, const char *units,
                    int *var, char *err, size_t errlen) {
    if (nc_inq_varid(ncid, name, var) != NC_NOERR) {
        snprintf(err, errlen, "%s: no variable '%s'", path, name);
        return 1;
    }
    int ndims = 0, dimids[NC_MAX_VAR_DIMS], want = 0;
    while (dims[want]) want++;
    nc_inq_varndims(ncid, *var, &ndims);
    nc_inq_vardimid(ncid, *var, dimids);
    bool ok = ndims == want;
    for (int d = 0; ok && d < ndims; d++) {
        char dname[NC_MAX_NAME + 1];
        nc_inq_dimname(ncid, dimids[d], dname);
        ok = strcmp(dname, dims[d]) == 0;
    }
    if (!ok) {
        snprintf(err, errlen, "%s: variable '%s' must have the dimensions (%s%s%s)", path, name, dims[0],
                 want > 1 ? ", " : "", want > 1 ? dims[1] : "");
        return 1;
    }
    char u[64];
    text_attr(ncid, *var, "units", u, sizeof u);
    if (units && strcmp(u, units) != 0) {
        snprintf(err, errlen, "%s: variable '%s' has units '%s', the AMBER conventions' are '%s'", path, name, u,
                 units);
        return 1;
    }
    return 0;
}

int md_restart_read(const char *path, md_system *s, int *has_velocities, char *err, size_t errlen) {
    int ncid = -1, var;
    size_t natoms = 0, nspatial = 0;
    double lengths[3], angles[3];
    memset(s, 0, sizeof *s);
    NC_TRY(nc_open(path, NC_NOWRITE, &ncid), "cannot open as netCDF");
    char conv[128];
    text_attr(ncid, NC_GLOBAL, "Conventions", conv, sizeof conv);
    if (!strstr(conv, "AMBER")) {
        snprintf(err, errlen, "%s: global attribute Conventions is '%s', not AMBERRESTART or AMBER", path, conv);
        goto fail;
    }
    int dim;
    NC_TRY(nc_inq_dimid(ncid, "atom", &dim), "dimension 'atom'");
    NC_TRY(nc_inq_dimlen(ncid, dim, &natoms), "dimension 'atom'");
    NC_TRY(nc_inq_dimid(ncid, "spatial", &dim), "dimension 'spatial'");
    NC_TRY(nc_inq_dimlen(ncid, dim, &nspatial), "dimension 'spatial'");
    if (nspatial != 3 || natoms < 2) {
        snprintf(err, errlen, "%s: %zu atoms in %zu dimensions; at least 2 atoms in 3 are needed", path, natoms,
                 nspatial);
        goto fail;
    }
    static const char *const atom_spatial[] = {"atom", "spatial", NULL};
    static const char *const cell_spatial[] = {"cell_spatial", NULL}, *const cell_angular[] = {"cell_angular", NULL};
    if (find_var(ncid, path, "cell_lengths", cell_spatial, "angstrom", &var, err, errlen)) goto fail;
    NC_TRY(nc_get_var_double(ncid, var, lengths), "reading cell_lengths");
    if (find_var(ncid, path, "cell_angles", cell_angular, "degree", &var, err, errlen)) goto fail;
    NC_TRY(nc_get_var_double(ncid, var, angles), "reading cell_angles");
    for (int d = 0; d < 3; d++)
        if (!(fabs(angles[d] - 90) < 1e-6) || !(fabs(lengths[d] - lengths[0]) <= 1e-9 * lengths[0]) ||
            !(lengths[0] > 0)) {
            snprintf(err, errlen, "%s: the cell (%g %g %g, angles %g %g %g) is not a cube, which tessera-md needs",
                     path, lengths[0], lengths[1], lengths[2], angles[0], angles[1], angles[2]);
            goto fail;
        }
    if (md_system_alloc(s, (long)natoms)) {
        snprintf(err, errlen, "%s: cannot allocate %zu atoms", path, natoms);
        goto fail;
    }
    s->box = lengths[0] / SIGMA_ANGSTROM;
    if (find_var(ncid, path, "coordinates", atom_spatial, "angstrom", &var, err, errlen)) goto fail;
    NC_TRY(nc_get_var_double(ncid, var, s->x), "reading coordinates");
    *has_velocities = nc_inq_varid(ncid, "velocities", &var) == NC_NOERR;
    if (*has_velocities) {
        if (find_var(ncid, path, "velocities", atom_spatial, "angstrom/picosecond", &var, err, errlen)) goto fail;
        NC_TRY(nc_get_var_double(ncid, var, s->v), "reading velocities");
        double scale = 1;
        nc_get_att_double(ncid, var, "scale_factor", &scale);
        for (long i = 0; i < 3 * s->n; i++) s->v[i] *= scale * tau_ps() / SIGMA_ANGSTROM;
    }
    if (nc_inq_varid(ncid, "time", &var) == NC_NOERR) {
        double t = 0;
        if (nc_get_var_double(ncid, var, &t) == NC_NOERR) s->time = t / tau_ps();
    }
    for (long i = 0; i < 3 * s->n; i++) {
        if (!isfinite(s->x[i]) || !isfinite(s->v[i])) {
            snprintf(err, errlen, "%s: atom %ld has a coordinate or velocity that is not finite", path, i / 3);
            goto fail;
        }
        const double x = s->x[i] / SIGMA_ANGSTROM;
        s->x[i] = x - s->box * floor(x / s->box);
    }
    nc_close(ncid);
    return 0;
fail:
    if (ncid >= 0) nc_close(ncid);
    md_system_free(s);
    return 1;
}

/* The dimensions and labels both conventions share; frame: the unlimited frame dimension or -1. */
static int define_common(int ncid, long n, bool frame, int dims[6]) {
    int rc = nc_def_dim(ncid, "spatial", 3, &dims[0]);
    if (!rc) rc = nc_def_dim(ncid, "atom", (size_t)n, &dims[1]);
    if (!rc) rc = nc_def_dim(ncid, "cell_spatial", 3, &dims[2]);
    if (!rc) rc = nc_def_dim(ncid, "cell_angular", 3, &dims[3]);
    if (!rc) rc = nc_def_dim(ncid, "label", 5, &dims[4]);
    if (!rc && frame) rc = nc_def_dim(ncid, "frame", NC_UNLIMITED, &dims[5]);
    int v;
    if (!rc) rc = nc_def_var(ncid, "spatial", NC_CHAR, 1, &dims[0], &v);
    if (!rc) rc = nc_def_var(ncid, "cell_spatial", NC_CHAR, 1, &dims[2], &v);
    if (!rc) rc = nc_def_var(ncid, "cell_angular", NC_CHAR, 2, &dims[3], &v);
    if (!rc) rc = nc_put_att_text(ncid, NC_GLOBAL, "ConventionVersion", 3, "1.0");
    if (!rc) rc = nc_put_att_text(ncid, NC_GLOBAL, "program", 10, "tessera-md");
    if (!rc) rc = nc_put_att_text(ncid, NC_GLOBAL, "programVersion", 3, "0.1");
    static const char units[] = "Lennard-Jones argon: sigma 3.405 angstrom, epsilon/k 119.8 K, mass 39.948 u";
    if (!rc) rc = nc_put_att_text(ncid, NC_GLOBAL, "title", sizeof units - 1, units);
    return rc;
}

static int put_labels(int ncid) {
    int v, rc = nc_inq_varid(ncid, "spatial", &v);
    if (!rc) rc = nc_put_var_text(ncid, v, "xyz");
    if (!rc) rc = nc_inq_varid(ncid, "cell_spatial", &v);
    if (!rc) rc = nc_put_var_text(ncid, v, "abc");
    if (!rc) rc = nc_inq_varid(ncid, "cell_angular", &v);
    if (!rc) rc = nc_put_var_text(ncid, v, "alphabeta gamma");
    return rc;
}

static int def_units(int ncid, const char *name, nc_type type, int ndims, const int *dims, const char *units,
                     int *var) {
    int rc = nc_def_var(ncid, name, type, ndims, dims, var);
    return rc ? rc : nc_put_att_text(ncid, *var, "units", strlen(units), units);
}

int md_restart_write(const char *path, const md_system *s, char *err, size_t errlen) {
    int ncid = -1, dims[6], vt, vx, vv, vl, va;
    double *buf = malloc((size_t)s->n * 3 * sizeof *buf);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        return 1;
    }
    NC_TRY(nc_create(path, NC_CLOBBER | NC_64BIT_OFFSET, &ncid), "cannot create");
    NC_TRY(nc_put_att_text(ncid, NC_GLOBAL, "Conventions", 12, "AMBERRESTART"), "writing attributes");
    NC_TRY(define_common(ncid, s->n, false, dims), "defining dimensions");
    const int atom_spatial[2] = {dims[1], dims[0]};
    NC_TRY(def_units(ncid, "time", NC_DOUBLE, 0, NULL, "picosecond", &vt), "defining time");
    NC_TRY(def_units(ncid, "coordinates", NC_DOUBLE, 2, atom_spatial, "angstrom", &vx), "defining coordinates");
    NC_TRY(def_units(ncid, "velocities", NC_DOUBLE, 2, atom_spatial, "angstrom/picosecond", &vv),
           "defining velocities");
    NC_TRY(def_units(ncid, "cell_lengths", NC_DOUBLE, 1, &dims[2], "angstrom", &vl), "defining cell_lengths");
    NC_TRY(def_units(ncid, "cell_angles", NC_DOUBLE, 1, &dims[3], "degree", &va), "defining cell_angles");
    NC_TRY(nc_enddef(ncid), "ending definitions");
    NC_TRY(put_labels(ncid), "writing labels");
    const double t = s->time * tau_ps(), lengths[3] = {s->box * SIGMA_ANGSTROM, s->box * SIGMA_ANGSTROM,
                                                        s->box * SIGMA_ANGSTROM},
                 angles[3] = {90, 90, 90};
    NC_TRY(nc_put_var_double(ncid, vt, &t), "writing time");
    for (long i = 0; i < s->n; i++)
        for (int d = 0; d < 3; d++) buf[3 * s->id[i] + d] = s->x[3 * i + d] * SIGMA_ANGSTROM;
    NC_TRY(nc_put_var_double(ncid, vx, buf), "writing coordinates");
    for (long i = 0; i < s->n; i++)
        for (int d = 0; d < 3; d++) buf[3 * s->id[i] + d] = s->v[3 * i + d] * SIGMA_ANGSTROM / tau_ps();
    NC_TRY(nc_put_var_double(ncid, vv, buf), "writing velocities");
    NC_TRY(nc_put_var_double(ncid, vl, lengths), "writing cell_lengths");
    NC_TRY(nc_put_var_double(ncid, va, angles), "writing cell_angles");
    free(buf);
    buf = NULL;
    NC_TRY(nc_close(ncid), "closing");
    return 0;
fail:
    free(buf);
    if (ncid >= 0) nc_close(ncid);
    return 1;
}

int md_trajectory_create(md_trajectory *tr, const char *path, long n, char *err, size_t errlen) {
    int ncid = -1, dims[6];
    memset(tr, 0, sizeof *tr);
    tr->ncid = -1;
    snprintf(tr->path, sizeof tr->path, "%s", path);
    NC_TRY(nc_create(path, NC_CLOBBER | NC_64BIT_OFFSET, &ncid), "cannot create");
    NC_TRY(nc_put_att_text(ncid, NC_GLOBAL, "Conventions", 5, "AMBER"), "writing attributes");
    NC_TRY(define_common(ncid, n, true, dims), "defining dimensions");
    const int coords[3] = {dims[5], dims[1], dims[0]}, lengths[2] = {dims[5], dims[2]}, angles[2] = {dims[5], dims[3]};
    NC_TRY(def_units(ncid, "time", NC_FLOAT, 1, &dims[5], "picosecond", &tr->time), "defining time");
    NC_TRY(def_units(ncid, "coordinates", NC_FLOAT, 3, coords, "angstrom", &tr->coords), "defining coordinates");
    NC_TRY(def_units(ncid, "cell_lengths", NC_DOUBLE, 2, lengths, "angstrom", &tr->cell_lengths),
           "defining cell_lengths");
    NC_TRY(def_units(ncid, "cell_angles", NC_DOUBLE, 2, angles, "degree", &tr->cell_angles), "defining cell_angles");
    NC_TRY(nc_enddef(ncid), "ending definitions");
    NC_TRY(put_labels(ncid), "writing labels");
    if (!(tr->buf = malloc((size_t)n * 3 * sizeof *tr->buf))) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto fail;
    }
    tr->ncid = ncid;
    return 0;
fail:
    if (ncid >= 0) nc_close(ncid);
    return 1;
}

int md_trajectory_append(md_trajectory *tr, const md_system *s, char *err, size_t errlen) {
    const char *path = tr->path;
    for (long i = 0; i < s->n; i++)
        for (int d = 0; d < 3; d++) tr->buf[3 * s->id[i] + d] = (float)(s->x[3 * i + d] * SIGMA_ANGSTROM);
    const size_t start[3] = {tr->frame, 0, 0}, count[3] = {1, (size_t)s->n, 3}, cell[2] = {1, 3};
    const float t = (float)(s->time * tau_ps());
    const double lengths[3] = {s->box * SIGMA_ANGSTROM, s->box * SIGMA_ANGSTROM, s->box * SIGMA_ANGSTROM},
                 angles[3] = {90, 90, 90};
    NC_TRY(nc_put_vara_float(tr->ncid, tr->coords, start, count, tr->buf), "writing coordinates");
    NC_TRY(nc_put_vara_float(tr->ncid, tr->time, start, count, &t), "writing time");
    NC_TRY(nc_put_vara_double(tr->ncid, tr->cell_lengths, start, cell, lengths), "writing cell_lengths");
    NC_TRY(nc_put_vara_double(tr->ncid, tr->cell_angles, start, cell, angles), "writing cell_angles");
    tr->frame++;
    return 0;
fail:
    return 1;
}

int md_trajectory_close(md_trajectory *tr, char *err, size_t errlen) {
    const char *path = tr->path;
    free(tr->buf);
    tr->buf = NULL;
    if (tr->ncid < 0) return 0;
    int ncid = tr->ncid;
    tr->ncid = -1;
    NC_TRY(nc_close(ncid), "closing");
    return 0;
fail:
    return 1;
}
