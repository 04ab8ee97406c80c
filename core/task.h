/* task.h - what to tune: operator + shape + dtype (the device is kept beside
 * it, see device.h). Task keys are stable strings used by the records store. */
#ifndef TESS_TASK_H
#define TESS_TASK_H

#include <stddef.h>
#include <stdint.h>
#include "types.h"

#define TESS_MAX_DIMS 4
#define TESS_OP_NAME_MAX 32
#define TESS_KEY_MAX 256

typedef struct tess_task {
    char op[TESS_OP_NAME_MAX];
    tess_dtype dtype;
    int ndim;
    int64_t shape[TESS_MAX_DIMS];   /* slowest-varying dimension first: z, y, x */
} tess_task;

/* Parses "256x256x256" (also "256"); each extent 1..2^31. */
tess_status tess_shape_parse(const char *text, int64_t *shape, int *ndim);
/* "256x256x256" */
tess_status tess_shape_format(const int64_t *shape, int ndim, char *buf, size_t len);
int64_t tess_shape_elements(const int64_t *shape, int ndim);

tess_status tess_task_init(tess_task *t, const char *op, tess_dtype dtype,
                           const int64_t *shape, int ndim);
/* "heat3d:f32:256x256x256" */
tess_status tess_task_key(const tess_task *t, char *buf, size_t len);
/* Inverse of tess_task_key. */
tess_status tess_task_parse_key(const char *key, tess_task *t);

#endif
