/* session.h - resolving what a user asked for (operator, shape, dtype,
 * backend) into a task on a probed device; shared by the public API and the
 * command-line tool. */
#ifndef TESS_SESSION_H
#define TESS_SESSION_H

#include <stdbool.h>
#include "core/backend.h"
#include "core/op.h"
#include "core/records.h"

typedef struct tess_session {
    const tess_op *op;
    const tess_backend_ops *be;
    tess_task task;
    tess_device device;
    char task_key[TESS_KEY_MAX];
    char device_key[TESS_KEY_MAX];
} tess_session;

/* backend NULL or "": the best backend present for the operator. */
tess_status tess_session_resolve(const char *op, const int64_t *shape, int ndim, const char *dtype,
                                 const char *backend, tess_session *s);
/* Loads the device's ceilings from the records, calibrating (and storing
 * them) first when none are stored. */
tess_status tess_session_ceilings(tess_records *db, tess_session *s, bool *measured_now);
/* The records store behind a context (borrowed). */
tess_records *tess_context_records(tess_context *ctx);

#endif
