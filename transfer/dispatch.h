/* dispatch.h - building the kernel to run for a task inside this process,
 * and the per-context cache that makes repeated dispatch a hash lookup. */
#ifndef TESS_DISPATCH_H
#define TESS_DISPATCH_H

#include <stdbool.h>
#include "request.h"

/* Chooses (exact, transfer, default), compiles and loads; with verify,
 * checks the first run and falls back to the default on a mismatch. */
tess_status tess_kernel_create(tess_records *db, const tess_request *s, bool verify, tess_kernel **out);

typedef struct tess_kernel_cache tess_kernel_cache;
tess_kernel_cache *tess_kernel_cache_create(void);
/* Destroys the cache and every kernel in it. */
void tess_kernel_cache_destroy(tess_kernel_cache *c);
/* The cached kernel of a request, or NULL. */
tess_kernel *tess_kernel_cache_find(const tess_kernel_cache *c, const char *op, const int64_t *shape,
                                    int ndim, const char *dtype, const char *backend);
/* Adds a kernel (the cache owns it from now on). */
tess_status tess_kernel_cache_add(tess_kernel_cache *c, const char *op, const int64_t *shape, int ndim,
                                  const char *dtype, const char *backend, tess_kernel *k);

#endif
