/*
 * op.h - the template interface every operator family implements.
 *
 * An operator is a parameterized tiled kernel: for a task it builds a
 * parameter space, for a config it emits source (C/OpenMP or CUDA C) with
 * its launch geometry, and it keeps a reference implementation, FLOP and
 * byte counts and a tolerance. Operators never time anything and never
 * touch the records store.
 *
 * Kernel ABI. The operator declares its buffers (tess_buffer_spec); a
 * kernel receives them in that order:
 *   cpu:  void ENTRY(void *const *buffers)           (generated C, OpenMP inside)
 *   cuda: __global__ void ENTRY(T0 *b0, T1 *b1, ...)  (one pointer per buffer)
 * Shapes are compiled into the source, so one binary serves one task.
 */
#ifndef TESS_OP_H
#define TESS_OP_H

#include <stdbool.h>
#include <stdint.h>
#include "device.h"
#include "space.h"
#include "task.h"
#include "types.h"

#define TESS_MAX_BUFFERS 8
#define TESS_MAX_LAUNCHES 4

typedef enum tess_buffer_role {
    TESS_BUF_IN,       /* read by the kernel, filled with inputs */
    TESS_BUF_OUT,      /* written by the kernel, verified against the reference */
    TESS_BUF_SCRATCH   /* workspace the kernel may use; neither filled nor verified */
} tess_buffer_role;

typedef struct tess_buffer_spec {
    char name[24];
    tess_buffer_role role;
    tess_dtype dtype;
    int64_t count;     /* elements */
} tess_buffer_spec;

typedef struct tess_launch {
    char entry[64];            /* symbol: C function or __global__ kernel */
    unsigned grid[3], block[3];  /* cuda only */
    unsigned shared_bytes;       /* dynamic shared memory, cuda only */
} tess_launch;

/* Generated source for one config on one backend, with how to run it. */
typedef struct tess_kernel_source {
    char *code;                  /* owned; NUL-terminated */
    char options[256];           /* extra compiler options, space separated */
    int nlaunches;               /* launches run in order, all with the same buffers */
    tess_launch launch[TESS_MAX_LAUNCHES];
    bool hopper_only;            /* cuda: needs sm_90a */
    bool fast_math;              /* compile with fast-math */
} tess_kernel_source;

void tess_kernel_source_free(tess_kernel_source *k);

typedef struct tess_op {
    const char *name;          /* "heat3d" */
    const char *family;        /* "stencils", "reductions", "gemm", "attention" */
    const char *summary;       /* one line for `tessera ops` */
    const char *default_shape; /* "256x256x256" */
    /* Backends this operator generates code for ("cpu", "cuda"), NULL-terminated. */
    const char *const *backends;

    /* Accepts or rejects a task (rank, extents, dtype) with a message. */
    tess_status (*check_task)(const tess_task *t);
    /* Builds the space for a task on a device (dev->backend picks the language). */
    tess_status (*space)(const tess_task *t, const tess_device *dev, tess_space **out);
    /* Declares the kernel's buffers. */
    tess_status (*buffers)(const tess_task *t, tess_buffer_spec *specs, int *n);
    /* Fills input buffer `index` (NULL: uniform random in [-1, 1]). */
    tess_status (*fill_input)(const tess_task *t, int index, void *host, uint64_t seed);
    /* Source for a config. */
    tess_status (*emit)(const tess_task *t, const tess_device *dev, const tess_space *s,
                        const tess_config *c, tess_kernel_source *out);
    /* Computes the outputs from the inputs on the host, accumulating in double. */
    tess_status (*reference)(const tess_task *t, void *const *host_buffers);
    double (*flops)(const tess_task *t);
    /* Compulsory bytes: each input read once, each output written once. */
    double (*bytes)(const tess_task *t);
    /* Accepted error: |out - ref| <= tol * (scale + |ref|), scale from verify_scale. */
    double (*tolerance)(const tess_task *t);
    /* Magnitude that absolute errors are measured against (NULL: 1). A sum
     * of n terms uses the sum of their magnitudes. */
    double (*verify_scale)(const tess_task *t, void *const *host_buffers);
    /* Optional: the compute unit whose rate bounds the flops (the tensor
     * cores of a dtype for GEMM and attention); NULL: the FMA rate of the
     * dtype (tess_op_compute_unit). */
    tess_ceiling_kind (*compute_unit)(const tess_task *t);
} tess_op;

/* Registry (by name, as PETSc registers solver types). */
tess_status tess_op_register(const tess_op *op);
const tess_op *tess_op_find(const char *name);
int tess_op_count(void);
const tess_op *tess_op_at(int i);
bool tess_op_supports_backend(const tess_op *op, const char *backend);

#endif
