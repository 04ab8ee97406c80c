/* fsutil.h - small file-system helpers. */
#ifndef TESS_FSUTIL_H
#define TESS_FSUTIL_H

#include <stddef.h>
#include "tessera.h"

/* Creates a directory and its parents (like mkdir -p). */
tess_status tess_mkdir_p(const char *path);
/* Reads a whole file into a malloc'd, NUL-terminated buffer. */
tess_status tess_read_file(const char *path, char **data, size_t *size);
/* Writes data to path atomically (temporary file + rename), so concurrent
 * writers and readers never see a partial file. */
tess_status tess_write_file_atomic(const char *path, const void *data, size_t size);

#endif
