/*
 * op.h - the operator contract every family implements.
 *
 * An operator is a parameterized tiled kernel: for a task (task.h: named
 * extents, typed attributes, dtypes per role) it builds a parameter space
 * per backend, for a config it emits source (C/OpenMP or CUDA C) with its
 * launch geometry, and it keeps a reference implementation, FLOP and byte
 * counts and tolerances. Operators never time anything and never touch the
 * records store. Every callback receives the operator itself, so a family
 * that registers many operators (one per stencil spec) finds its state in
 * op->data instead of looking it up by name.
 *
 * Kernel ABI. The operator declares its buffers (tess_buffer_list); a
 * kernel receives, in this order:
 *   cpu:  void ENTRY(void *const *buffers)                  without scalars
 *         void ENTRY(void *const *buffers, const void *const *scalars)
 *         (scalars: one pointer to each value, in order; generated C, OpenMP inside)
 *   cuda: __global__ void ENTRY(T0 *b0, T1 *b1, ...,        one pointer per buffer
 *                               S0 s0, S1 s1, ...,          the source's scalars, in order
 *                               const __grid_constant__ CUtensorMap m0, ...)   the tensor maps
 * Extents are compiled into the source unless the kernel source lists them
 * in runtime_extents: each such extent is then also a scalar (TESS_SCALAR_I64,
 * named as the extent), one binary serves every task that differs only in
 * them, and the caller sets them per run by name, up to the task's extent
 * (the capacity buffers and tables are sized by).
 */
#ifndef TESS_OP_H
#define TESS_OP_H

#include <stdbool.h>
#include <stdint.h>
#include "device.h"
#include "space.h"
#include "task.h"
#include "types.h"

#define TESS_MAX_LAUNCHES 4
#define TESS_MAX_SCALARS 16
#define TESS_MAX_TENSOR_MAPS 4
#define TESS_BUFFER_NAME_MAX 24

typedef enum tess_buffer_role {
    TESS_BUF_IN,       /* read by the kernel, filled with inputs */
    TESS_BUF_OUT,      /* written by the kernel, verified against the reference */
    TESS_BUF_SCRATCH,  /* workspace the kernel may use; neither filled nor verified */
    TESS_BUF_INOUT     /* filled with inputs, updated in place, verified (an in-place update) */
} tess_buffer_role;

typedef struct tess_buffer_spec {
    char name[TESS_BUFFER_NAME_MAX];
    tess_buffer_role role;
    tess_dtype dtype;
    int64_t count;     /* elements */
    /* Outputs: accepted error |out - ref| <= tolerance * (scale + |ref|);
     * 0: the operator's tolerance for the task. */
    double tolerance;
    /* What a multi-step run needs (left zero by operators without time levels): */
    char advances[TESS_BUFFER_NAME_MAX];  /* an output: the input it is the next time level of ("" if none) */
    int rank;          /* the buffer spans the task's last `rank` axes (0: all of them) */
    double lo, hi;     /* an input: the range fill_input draws from (both 0: [-1, 1]) */
} tess_buffer_spec;

/* The buffers of a task, as many as the operator needs. */
typedef struct tess_buffer_list {
    tess_buffer_spec *spec;   /* owned */
    int n, cap;
} tess_buffer_list;

/* Appends a buffer (tolerance 0: the operator's). TESS_ERR_ARG for a name
 * that is empty or too long, or a negative count. */
tess_status tess_buffer_list_add(tess_buffer_list *l, const char *name, tess_buffer_role role,
                                 tess_dtype dtype, int64_t count);
void tess_buffer_list_free(tess_buffer_list *l);
size_t tess_buffer_bytes(const tess_buffer_spec *b);
/* Whether the kernel reads the buffer's initial contents / they are verified. */
bool tess_buffer_is_input(const tess_buffer_spec *b);
bool tess_buffer_is_output(const tess_buffer_spec *b);

typedef struct tess_launch {
    char entry[64];              /* symbol: C function or __global__ kernel */
    unsigned grid[3], block[3];  /* cuda only */
    unsigned cluster[3];         /* thread-block cluster (sm_90); 0s: none */
    unsigned shared_bytes;       /* dynamic shared memory, cuda only; above 48 KB the backend opts in */
} tess_launch;

typedef enum tess_scalar_type {
    TESS_SCALAR_I32,
    TESS_SCALAR_I64,
    TESS_SCALAR_F32,
    TESS_SCALAR_F64
} tess_scalar_type;

/* A kernel argument passed by value after the buffers; its value here is
 * the one emit chose, and a caller may change it per run by name. */
typedef struct tess_scalar {
    char name[24];
    tess_scalar_type type;
    union {
        int32_t i32;
        int64_t i64;
        float f32;
        double f64;
    } value;
} tess_scalar;

/* A TMA descriptor the cuda backend encodes on the host with
 * cuTensorMapEncodeTiled for a buffer's device address, and passes by value
 * (a __grid_constant__ CUtensorMap) after the run-time extents. */
typedef struct tess_tensor_map {
    int buffer;                 /* index into the task's buffers */
    tess_dtype dtype;           /* its elements' type (the buffer's) */
    int rank;                   /* 1..5 */
    uint64_t dims[5];           /* elements per dimension, fastest first */
    uint64_t strides[4];        /* bytes between elements of dimensions 1..rank-1 */
    uint32_t box[5];            /* elements per copy, fastest first */
    uint32_t step[5];           /* the copy's traversal stride per dimension (0: 1): it takes every step-th of
                                   box elements, box / step in all; 1 in dimension 0 */
    int swizzle;                /* 0, 32, 64 or 128 (bytes) */
} tess_tensor_map;

/* Generated source for one config on one backend, with how to run it. */
typedef struct tess_kernel_source {
    char *code;                  /* owned; NUL-terminated */
    char options[256];           /* extra compiler options, space separated */
    int nlaunches;               /* launches run in order, all with the same arguments */
    tess_launch launch[TESS_MAX_LAUNCHES];
    char min_arch[16];           /* cuda: "sm_90a" for arch-specific features (wgmma, TMA, setmaxnreg); "" otherwise */
    bool fast_math;              /* compile with fast-math */
    int nscalars;
    tess_scalar scalar[TESS_MAX_SCALARS];
    uint32_t runtime_extents;    /* bit i: the task's extent i is a scalar argument, not compiled in */
    int ntensor_maps;
    tess_tensor_map tensor_map[TESS_MAX_TENSOR_MAPS];
} tess_kernel_source;

void tess_kernel_source_free(tess_kernel_source *k);
/* Appends a one-dimensional launch: `grid` blocks of `block` threads with
 * `shared_bytes` of dynamic shared memory. TESS_ERR_ARG when there are
 * TESS_MAX_LAUNCHES or the entry name does not fit. */
tess_status tess_kernel_source_add_launch(tess_kernel_source *k, const char *entry, unsigned grid, unsigned block,
                                          unsigned shared_bytes);
/* Appends a scalar argument; TESS_ERR_ARG when there are TESS_MAX_SCALARS. */
tess_status tess_kernel_source_add_scalar(tess_kernel_source *k, const char *name, tess_scalar_type type,
                                          double value);
/* Stores value in s, converted to s's type (integers truncate toward zero). */
void tess_scalar_assign(tess_scalar *s, double value);
/* The index of the scalar named `name`, or -1. */
int tess_kernel_source_find_scalar(const tess_kernel_source *k, const char *name);

/* "sm_90a" -> 90, true; "sm_80" -> 80, false. TESS_ERR_ARG for other text. */
tess_status tess_arch_parse(const char *arch, int *cc, bool *arch_specific);

typedef struct tess_op tess_op;
typedef struct tess_result tess_result;   /* result.h */

/* One backend's half of an operator: its space and its code generator. */
typedef struct tess_op_backend {
    const char *backend;        /* "cpu", "cuda" */
    /* cuda: the oldest architecture its kernels run on ("sm_80", "sm_90a"),
     * NULL: any the backend supports. A device below it gets
     * TESS_ERR_UNAVAILABLE before the space is built. */
    const char *min_arch;
    /* Builds the space for a task on a device of this backend. */
    tess_status (*space)(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
    /* Source for a config of that space. */
    tess_status (*emit)(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                        const tess_config *c, tess_kernel_source *out);
} tess_op_backend;

typedef enum tess_attr_type {
    TESS_ATTR_INT,    /* "128" */
    TESS_ATTR_REAL,   /* "1e-05" */
    TESS_ATTR_BOOL,   /* "0" or "1" (also given as true/false) */
    TESS_ATTR_WORD    /* one of `choices` */
} tess_attr_type;

/* An attribute an operator accepts. Every task carries each declared
 * attribute, with its default unless given, so keys are canonical. */
typedef struct tess_attr_spec {
    const char *name;           /* "causal" */
    tess_attr_type type;
    const char *dflt;           /* default value's text */
    const char *choices;        /* TESS_ATTR_WORD: "nn,nt,tn,tt" */
    const char *help;           /* one line for `tessera ops` */
} tess_attr_spec;

struct tess_op {
    const char *name;          /* "heat3d" */
    const char *family;        /* "stencils", "reductions", "gemm", "attention" */
    const char *summary;       /* one line for `tessera ops` */
    const char *default_shape; /* "256x256x256" */
    /* Names of the extents, slowest first ("z,y,x", "M,N,K", "B,H,Sq,Skv,D");
     * a task of lower rank takes the trailing names. */
    const char *extents;
    /* Whether tasks may give accumulate and output dtypes other than the
     * input's (a GEMM accumulating bf16 in f32); otherwise all three must be
     * the input's, which the core checks before check_task. */
    bool dtype_roles;
    const tess_attr_spec *attrs;   /* may be NULL when nattrs is 0 */
    int nattrs;
    /* Family state for the callbacks (a stencil's spec); borrowed, valid as
     * long as the operator is registered. */
    const void *data;
    const tess_op_backend *impl;   /* the backends it generates code for */
    int nimpl;

    /* Accepts or rejects a task (rank, extents, dtypes, attributes) with a message. */
    tess_status (*check_task)(const tess_op *op, const tess_task *t);
    /* Declares the kernel's buffers, appending to out (empty on entry). */
    tess_status (*buffers)(const tess_op *op, const tess_task *t, tess_buffer_list *out);
    /* Optional: fills input buffer `index` (NULL: uniform random in [-1, 1]). */
    tess_status (*fill_input)(const tess_op *op, const tess_task *t, int index, void *host, uint64_t seed);
    /* Optional: fills input buffer `index` with typical inputs, the
     * statistics real data has where random inputs miss them (logits of
     * magnitude 100, near-constant rows, one huge outlier, denormals).
     * Every candidate is verified on these as well, so a shortcut that fits
     * uniform inputs only is rejected. */
    tess_status (*fill_typical)(const tess_op *op, const tess_task *t, int index, void *host, uint64_t seed);
    /* Computes the outputs from the inputs on the host, accumulating in
     * double. host_buffers[i]: inputs for IN, the input to update for INOUT,
     * the output to fill for OUT. */
    tess_status (*reference)(const tess_op *op, const tess_task *t, void *const *host_buffers);
    double (*flops)(const tess_op *op, const tess_task *t);
    /* Compulsory bytes: each input read once, each output written once. */
    double (*bytes)(const tess_op *op, const tess_task *t);
    /* The default accepted error of outputs (see tess_buffer_spec.tolerance). */
    double (*tolerance)(const tess_op *op, const tess_task *t);
    /* Optional: the magnitude absolute errors are measured against (NULL: 1).
     * A sum of n terms uses the sum of their magnitudes. */
    double (*verify_scale)(const tess_op *op, const tess_task *t, void *const *host_buffers);
    /* Optional: checks output buffer b itself instead of the elementwise
     * test (a log-sum-exp, an output defined up to permutation): true when
     * acceptable, else false with res failed and its message set. */
    bool (*verify)(const tess_op *op, const tess_task *t, int b, const void *got, const void *want,
                   tess_result *res);
    /* Optional: the compute unit whose rate bounds the flops (the tensor
     * cores of a dtype for GEMM and attention); NULL: the FMA rate of the
     * dtype (tess_op_compute_unit). */
    tess_ceiling_kind (*compute_unit)(const tess_op *op, const tess_task *t);
};

/* Registry (by name, as PETSc registers solver types). Refuses operators
 * without a required slot (saying which) and names already taken. */
tess_status tess_op_register(const tess_op *op);
/* TESS_OK when every required slot is set, else TESS_ERR_ARG naming the first missing one. */
tess_status tess_op_check_complete(const tess_op *op);
const tess_op *tess_op_find(const char *name);
/* An operator that could not be registered: its name ("" when the failure
 * concerns no single name, as a missing directory of them), status and
 * message, kept so that using it later says why (op_failures.c). */
void tess_op_register_failure(const char *name, tess_status st, const char *message);
/* The failure kept for name (NULL: the first of any), with its message; TESS_OK if none. */
tess_status tess_op_failure(const char *name);
int tess_op_count(void);
const tess_op *tess_op_at(int i);
/* The operator's half for a backend, or NULL. */
const tess_op_backend *tess_op_backend_find(const tess_op *op, const char *backend);
bool tess_op_supports_backend(const tess_op *op, const char *backend);

/* The task of an operator: dtypes per role (acc, out: the input dtype if
 * TESS_DTYPE_COUNT), extents named by the operator, attributes from text
 * ("causal=1,eps=1e-5"; NULL or "": defaults) checked against the
 * operator's declarations and canonicalized, then op->check_task. */
tess_status tess_op_make_task(const tess_op *op, tess_dtype in, tess_dtype acc, tess_dtype out,
                              const int64_t *shape, int ndim, const char *attrs, tess_task *t);

/* Whether the operator generates code for dev's backend and architecture
 * (TESS_ERR_UNAVAILABLE with the reason if not). */
tess_status tess_op_check_device(const tess_op *op, const tess_device *dev);

/* The operator's callbacks through one door each: backend dispatch, the
 * minimum architecture, optional slots. */
tess_status tess_op_space(const tess_op *op, const tess_task *t, const tess_device *dev, tess_space **out);
tess_status tess_op_emit(const tess_op *op, const tess_task *t, const tess_device *dev, const tess_space *s,
                         const tess_config *c, tess_kernel_source *out);
tess_status tess_op_buffers(const tess_op *op, const tess_task *t, tess_buffer_list *out);
/* The accepted error of buffer b. */
double tess_op_buffer_tolerance(const tess_op *op, const tess_task *t, const tess_buffer_spec *b);

#endif
