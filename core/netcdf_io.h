/*
 * netcdf_io.h - fields on a regular grid to and from netCDF files, with CF
 * conventions: dimensions z, y, x (slowest first), index coordinate
 * variables, and one variable per field, matched by name when reading.
 */
#ifndef TESS_NETCDF_IO_H
#define TESS_NETCDF_IO_H

#include <stdint.h>
#include "types.h"

/* Reads variable `name` of `path` into data (dtype t), checking that its
 * rank and extents are exactly `shape`; a missing file or variable, a wrong
 * rank or shape gets a message naming the file and the variable. */
tess_status tess_nc_read_field(const char *path, const char *name, tess_dtype t, int ndim,
                               const int64_t *shape, void *data);

typedef struct tess_nc_field {
    const char *name;
    const char *long_name;
    tess_dtype dtype;       /* f32 or f64 */
    const void *data;       /* shape elements, slowest axis first */
} tess_nc_field;

/* Writes the fields on one grid as a new netCDF-4 file (replacing path). */
tess_status tess_nc_write_fields(const char *path, int ndim, const int64_t *shape, const tess_nc_field *fields,
                                 int nfields, const char *title, const char *history);

#endif
