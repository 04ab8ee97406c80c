/*
 * cf.h - fields of CF netCDF files on regular latitude-longitude grids.
 *
 * The reader finds a variable by name or standard_name and its axes by their
 * coordinate variables' CF attributes (units degrees_north/degrees_east,
 * standard_name, axis, positive, "UNITS since ..."), in any dimension order;
 * time is taken by index; _FillValue/missing_value points become missing;
 * scale_factor/add_offset unpack packed integers. What it cannot represent
 * it refuses, naming the variable and the reason: 2D (curvilinear)
 * coordinates, rotated poles and other map projections, dimensions that are
 * no axis (unstructured meshes), unevenly spaced latitudes, longitudes that
 * do not go round the globe. A grid that does not reach both poles is run
 * as a regional grid with closed edges (no flux through them).
 */
#ifndef WEATHER_CF_H
#define WEATHER_CF_H

#include <stddef.h>
#include <stdint.h>

#include "grid.h"

typedef struct cf_field {
    grid g;                      /* from the file's coordinates (owned) */
    double *q;                   /* padded 3D, rows south to north, 0 where missing (owned) */
    unsigned char *missing;      /* padded 3D, 1 where missing (owned) */
    int64_t nmissing;
    int packed;                  /* integers unpacked by scale_factor/add_offset */
    char var[260];               /* the variable read (netCDF names have at most 256 bytes) */
    char lat[260], lon[260], lev[260], time[260];   /* coordinate variables ("" where absent) */
    double *levels;              /* nz values of the vertical coordinate (owned; NULL without one) */
    double time_value;           /* of the record read (0 without time) */
    char time_units[128];        /* "" without time */
} cf_field;

/* Reads variable `name` (or the one whose standard_name is name) at time
 * index `time` of the file. Returns 0, or -1 with the reason in err (file,
 * variable, what is wrong). */
int cf_read(const char *path, const char *name, long time, cf_field *out, char *err, size_t errlen);
void cf_field_free(cf_field *f);

/* A CF file being written: a time series of fields on a grid. */
typedef struct cf_out {
    int nc, time_var, nvars;
    int var[8];
    const grid *g;
    size_t records;
} cf_out;

typedef struct cf_var_desc {
    const char *name, *standard_name, *long_name, *units;   /* NULL: none */
} cf_var_desc;

/* Creates path with time (unlimited), lev (when g->nz > 1 or like carries
 * one), lat and lon, and float variables on them (fill value
 * NC_FILL_FLOAT). like (may be NULL) is a field read from another file whose
 * coordinates' and variable's attributes are copied; time_units NULL:
 * seconds since the start. Returns 0 or -1 with the reason in err. */
int cf_out_create(cf_out *o, const char *path, const grid *g, const cf_field *like, const char *like_path,
                  const cf_var_desc *vars, int nvars, const char *time_units, const char *title, const char *history,
                  char *err, size_t errlen);
/* Appends a record at time t (in the file's time units): fields[v] padded 3D,
 * missing (may be NULL) marks points written as fill values. */
int cf_out_write(cf_out *o, double t, const double *const *fields, const unsigned char *missing, char *err,
                 size_t errlen);
int cf_out_close(cf_out *o, char *err, size_t errlen);

#endif
