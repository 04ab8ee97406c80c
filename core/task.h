/* task.h - what to tune: an operator, its named extents, its typed
 * attributes and its dtypes per role (the device is kept beside it, see
 * device.h). Task keys are stable strings used by the records store:
 *
 *     op:DTYPES:EXTENTS[:ATTRS]
 *     heat3d:f32:256x256x256
 *     gemm:bf16,f32,bf16:4096x4096x4096:layout=tn
 *
 * DTYPES is the input dtype, or "input,accumulate,output" when they differ;
 * EXTENTS are in the order the operator declares them (op.h: `extents`,
 * slowest-varying first); ATTRS are name=value pairs sorted by name. A task
 * of one dtype and no attributes keeps the key it had before tasks had
 * either, so records written then still name the same tasks. */
#ifndef TESS_TASK_H
#define TESS_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "types.h"

#define TESS_MAX_DIMS 8
#define TESS_MAX_ATTRS 8
#define TESS_OP_NAME_MAX 32
#define TESS_DIM_NAME_MAX 8
#define TESS_ATTR_NAME_MAX 16
#define TESS_ATTR_VALUE_MAX 32
#define TESS_KEY_MAX 320

/* The roles a dtype plays in a task. */
typedef enum tess_dtype_role {
    TESS_ROLE_INPUT = 0,   /* the operands the kernel reads */
    TESS_ROLE_ACCUMULATE,  /* sums and products inside the kernel */
    TESS_ROLE_OUTPUT,      /* what the kernel writes */
    TESS_ROLE_COUNT
} tess_dtype_role;

typedef struct tess_attr {
    char name[TESS_ATTR_NAME_MAX];
    char value[TESS_ATTR_VALUE_MAX];   /* canonical text of its typed value (op.h) */
} tess_attr;

typedef struct tess_task {
    char op[TESS_OP_NAME_MAX];
    tess_dtype dtype;                  /* the input dtype: the one dtype of most operators */
    tess_dtype acc_dtype, out_dtype;   /* equal to dtype unless set */
    int ndim;
    int64_t shape[TESS_MAX_DIMS];      /* slowest-varying extent first */
    char dim[TESS_MAX_DIMS][TESS_DIM_NAME_MAX];   /* the extents' names ("z", "M", "Skv"); "" if unnamed */
    int nattrs;
    tess_attr attr[TESS_MAX_ATTRS];    /* sorted by name */
} tess_task;

/* Parses "256x256x256" (also "256"); each extent 1..2^31, at most TESS_MAX_DIMS. */
tess_status tess_shape_parse(const char *text, int64_t *shape, int *ndim);
/* "256x256x256" */
tess_status tess_shape_format(const int64_t *shape, int ndim, char *buf, size_t len);
int64_t tess_shape_elements(const int64_t *shape, int ndim);

/* A task of one dtype in every role, unnamed extents and no attributes. */
tess_status tess_task_init(tess_task *t, const char *op, tess_dtype dtype,
                           const int64_t *shape, int ndim);
/* Sets the accumulate and output dtypes. */
void tess_task_set_dtypes(tess_task *t, tess_dtype acc, tess_dtype out);
/* Names the extents from a comma-separated list ("z,y,x"): a task of lower
 * rank takes the trailing names (a 2D stencil is "y,x"). TESS_ERR_ARG when
 * the list is shorter than the rank or a name is malformed. */
tess_status tess_task_name_extents(tess_task *t, const char *names);
/* The extent named `name`, or -1. */
int64_t tess_task_extent(const tess_task *t, const char *name);
/* Sets (or replaces) an attribute, keeping them sorted. The value is stored
 * as given: callers canonicalize it (tess_op_make_task does). */
tess_status tess_task_set_attr(tess_task *t, const char *name, const char *value);
/* The text of an attribute, or NULL. Borrowed from t. */
const char *tess_task_attr(const tess_task *t, const char *name);
/* Typed reads of an attribute: the default when it is absent, TESS_ERR_FORMAT
 * when its text is not of the type. */
tess_status tess_task_attr_int(const tess_task *t, const char *name, int64_t dflt, int64_t *out);
tess_status tess_task_attr_real(const tess_task *t, const char *name, double dflt, double *out);

/* "heat3d:f32:256x256x256" (see the top of this file) */
tess_status tess_task_key(const tess_task *t, char *buf, size_t len);
/* "f32" or "bf16,f32,bf16" */
tess_status tess_task_dtypes_format(const tess_task *t, char *buf, size_t len);
/* Parses "f32" or "bf16,f32,bf16" into the three roles. */
tess_status tess_task_dtypes_parse(const char *text, tess_dtype out[TESS_ROLE_COUNT]);
/* "layout=tn,causal=1" ("" when there are none) */
tess_status tess_task_attrs_format(const tess_task *t, char *buf, size_t len);
/* "z,y,x" ("" when unnamed) */
tess_status tess_task_extents_format(const tess_task *t, char *buf, size_t len);
/* Inverse of tess_task_key, without extent names (the operator knows them). */
tess_status tess_task_parse_key(const char *key, tess_task *t);
/* Whether two tasks are the same task (their keys are equal). */
bool tess_task_equal(const tess_task *a, const tess_task *b);

#endif
