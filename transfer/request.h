/* request.h - resolving what a user asked for (operator, shape, dtype,
 * backend) into a task on a probed device; shared by the public API and the
 * command-line tool. */
#ifndef TESS_REQUEST_H
#define TESS_REQUEST_H

#include <stdbool.h>
#include "core/backend.h"
#include "core/op.h"
#include "core/records.h"

typedef struct tess_request {
    const tess_op *op;
    const tess_backend_ops *be;
    tess_task task;
    tess_device device;
    char task_key[TESS_KEY_MAX];
    char device_key[TESS_KEY_MAX];
} tess_request;

/* backend NULL or "": the best backend present for the operator. */
tess_status tess_request_resolve(const char *op, const int64_t *shape, int ndim, const char *dtype,
                                 const char *backend, tess_request *s);
/* The same on a given device of its backend, not probed (a typical device
 * of an architecture, say). */
tess_status tess_request_resolve_on(const char *op, const int64_t *shape, int ndim, const char *dtype,
                                    const tess_device *dev, tess_request *s);
/* Loads the device's ceilings from the records, calibrating (and storing
 * them) first when none are stored. */
tess_status tess_request_ceilings(tess_records *db, tess_request *s, bool *measured_now);
/* The records store behind a context (borrowed). */
tess_records *tess_context_records(tess_context *ctx);

#endif
