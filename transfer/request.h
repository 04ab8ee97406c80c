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

/* "op" or "op:attr=value,...": copies the operator's name into name and
 * points *attrs (may be NULL) at the attributes, NULL when there are none. */
tess_status tess_op_spec_name(const char *spec, char name[TESS_OP_NAME_MAX], const char **attrs);
/* The task an operator spec names on shape, with dtype "f32" or
 * "input,accumulate,output" (NULL: f32): the operator checked (tess_op_check),
 * its attributes typed and canonical, the task checked by the operator. */
tess_status tess_task_resolve(const char *spec, const int64_t *shape, int ndim, const char *dtype,
                              const tess_op **op, tess_task *t);

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
