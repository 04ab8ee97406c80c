/*
 * tessera.h - the public C API of tessera, an auto-tuner for tiled kernels.
 *
 * A simulation code opens a context (the records database), asks for the
 * kernel of an operator on its shape, optionally tunes it with a budget, and
 * runs the chosen kernel on its own arrays:
 *
 *     tess_context *ctx;
 *     if (tess_open(&ctx, NULL) != TESS_OK) { puts(tess_errmsg()); ... }
 *     tess_tune_options opt = tess_tune_options_default();
 *     opt.budget = 30;
 *     tess_tune(ctx, "heat3d", shape, 3, "f32", "cpu", &opt, NULL);
 *     tess_kernel *k;
 *     tess_kernel_get(ctx, "heat3d", shape, 3, "f32", "cpu", &k);
 *     void *arrays[] = {in, out};
 *     tess_kernel_run(k, arrays, 2);
 *     tess_kernel_destroy(k);
 *     tess_close(ctx);
 *
 * Every function returns a tess_status; on failure tess_errmsg() returns a
 * message for the calling thread that says what went wrong and where.
 * Library code never prints and never exits.
 */
#ifndef TESSERA_H
#define TESSERA_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TESSERA_VERSION "0.1.0"

typedef enum tess_status {
    TESS_OK = 0,
    TESS_ERR_ARG,          /* invalid argument or unsupported request */
    TESS_ERR_NOMEM,        /* allocation failed */
    TESS_ERR_IO,           /* file or process I/O failed */
    TESS_ERR_DB,           /* records database error */
    TESS_ERR_FORMAT,       /* malformed input (JSON, spec, netCDF) */
    TESS_ERR_NOTFOUND,     /* no such operator, record, device, ... */
    TESS_ERR_UNAVAILABLE,  /* backend or device not present here */
    TESS_ERR_COMPILE,      /* a kernel failed to compile */
    TESS_ERR_RUNTIME,      /* a kernel failed at run time */
    TESS_ERR_VERIFY,       /* a kernel produced wrong results */
    TESS_ERR_INTERNAL
} tess_status;

/* Message of the last failure in the calling thread ("" if none). */
const char *tess_errmsg(void);
/* Short name of a status code ("ok", "io error", ...). */
const char *tess_status_name(tess_status st);

/* Registers the built-in operators, strategies and backends, and the
 * stencils of $TESSERA_STENCIL_PATH, once per process (tess_open and
 * tess_open_readonly do it too); later calls return the first call's status. */
tess_status tess_init(void);

typedef struct tess_context tess_context;

/* Opens the records database at db_path (NULL: $TESSERA_DB, else
 * $XDG_DATA_HOME/tessera/records.db), creating it and its directory when
 * missing, and registers the built-ins (tess_init). A database this process
 * cannot write (a read-only file or directory, such as an installed kernel
 * library) is opened for reading only, as tess_open_readonly does: then
 * kernels, dispatch, listing and export work, and tuning, calibrating and
 * importing fail with TESS_ERR_DB. On failure *ctx is NULL. */
tess_status tess_open(tess_context **ctx, const char *db_path);
/* Opens an existing records database for reading only: never creates a
 * file or a directory (TESS_ERR_NOTFOUND when there is no database at the
 * path) and never writes. A tuner writing the database at the same time is
 * seen as it commits, except by a process that may write neither the file
 * nor its directory while no writer has it open: that one reads the file as
 * it is (SQLite's immutable mode), and sees later results after reopening. */
tess_status tess_open_readonly(tess_context **ctx, const char *db_path);
/* NULL-safe. Kernels returned by tess_dispatch are destroyed with it. */
void tess_close(tess_context *ctx);
/* The path of the context's records database (borrowed, valid until tess_close). */
const char *tess_db_path(tess_context *ctx);

typedef void (*tess_progress_fn)(int done, int budget, double best_ms,
                                 double elapsed_s, void *user);

typedef struct tess_tune_options {
    const char *strategy;   /* NULL: the default strategy */
    int budget;             /* evaluations; 0: no limit (then seconds must be set) */
    double seconds;         /* wall-clock limit; 0: none */
    uint64_t seed;          /* reproducible runs */
    int batch;              /* candidates per batch; 0: backend default */
    int window;             /* stop after this many evaluations without improvement; 0: never */
    /* Warm start from similar tuned tasks: "auto" (the records of this
     * context), "off", or the path of another records database or an exported
     * .jsonl file. NULL: "auto". */
    const char *transfer;
    /* 1: time every candidate fully (as `tessera record` does, for spaces
     * replayed later); 0: stop timing a candidate after a few runs once it
     * is clearly slower than the best so far. */
    int full_timing;
    /* Parameters pinned to one value ("name=value,..."); NULL: none. */
    const char *fix;
    /* Seconds a kernel may compile before it is stopped and counts as a
     * compile error; 0: the default (60), < 0: no limit. */
    double compile_timeout_s;
    /* The extra error, relative to the float64 reference, added to the
     * tolerance exact results are verified against (as the operator
     * measures it; a shortcut may also use the exact tolerance's rounding
     * slack, so the report gives both configs' measured errors); > 0 adds the operator's shortcut
     * parameters (fast intrinsics, approximations with guarded exact paths)
     * to the search, each kept only when it passes on random and on typical
     * inputs. It is the task's attribute error_budget, so shortcut results
     * are recorded under their own task. 0: exact variants only. */
    double error_budget;
    tess_progress_fn progress;  /* called after each result; may be NULL */
    void *progress_user;
    /* When non-NULL and set non-zero (from a signal handler, say), the
     * search stops after the candidates in flight: their results are
     * recorded, the run ends with stop reason "interrupted" and the report
     * covers what was measured. tessera installs no signal handler itself. */
    const volatile sig_atomic_t *cancel;
} tess_tune_options;

tess_tune_options tess_tune_options_default(void);

typedef struct tess_tune_report {
    char best_config[512];   /* "name=value,..." */
    double best_ms;          /* median time of the best config */
    double best_gbps, best_gflops;
    double default_ms;       /* the template's default config, measured in the same run (0 if failed) */
    /* The device's calibrated ceilings that apply (0 if not calibrated): the
     * copy bandwidth, and the rate of the compute unit the task runs on. */
    double ceiling_gbps, ceiling_gflops;
    /* The one that bounds the task, its bytes at the copy bandwidth or its
     * flops at the unit's rate, whichever gives the longer time: its name
     * ("copy bandwidth", "fp32 FMA rate", "bf16 tensor-core rate"; "" if not
     * calibrated) and that least time. */
    char bound[32];
    double bound_ms;
    double fraction_of_ceiling;   /* bound_ms / best_ms (0 if either is unknown) */
    int evaluations;
    double elapsed_s;        /* wall-clock time of the search */
    int status_counts[6];    /* indexed by tess_outcome */
    char stop_reason[96];
    char device[320];        /* device key */
    int warm_configs;        /* configs taken from similar tasks */
    char transfer_from[1024];/* the prior tasks used, with their similarity ("" if none) */
    /* How far to trust the times: the interquartile spread of the best
     * config's and the default's timed runs, over their medians (0.1: 10%),
     * and the bytes the kernel moves per run beside the device's last-level
     * cache (L2 on GPUs): a working set that fits is timed from the cache,
     * so its bandwidth is no fraction of the memory's. */
    double best_spread, default_spread;
    double working_set_bytes, cache_bytes;
    /* The largest error the best config's verification saw, in the
     * tolerance's unit: max |out - ref| / (scale + |ref|) over its outputs
     * and input sets; -1 if unknown (an operator that verifies otherwise). */
    double best_error;
    /* The best config of this run that takes no shortcut (every shortcut
     * parameter at its exact value; every config, without an error budget),
     * its time and largest error: beside the best, what the shortcuts gain
     * and cost. "" and INFINITY when none ran correctly. */
    char best_exact_config[512];
    double best_exact_ms, best_exact_error;
} tess_tune_report;

/* The name of outcome i of tess_tune_report.status_counts ("ok",
 * "compile_error", "runtime_error", "wrong_result", "timeout", "invalid");
 * NULL past the end. */
const char *tess_outcome_label(int i);

/* Tunes op on the given shape and dtype ("f32", "f64", ...) on a backend
 * ("cpu", "cuda"; NULL: the best present). Every result is committed to the
 * records database as it arrives. report may be NULL. */
tess_status tess_tune(tess_context *ctx, const char *op, const int64_t *shape, int ndim,
                      const char *dtype, const char *backend,
                      const tess_tune_options *opt, tess_tune_report *report);

typedef struct tess_kernel tess_kernel;

/* Returns the kernel to run for a task: the best recorded config for this
 * device, else the template's default. The kernel is compiled (or loaded
 * from the disk cache) once. */
tess_status tess_kernel_get(tess_context *ctx, const char *op, const int64_t *shape, int ndim,
                            const char *dtype, const char *backend, tess_kernel **out);
/* The config a kernel runs ("name=value,...") and where it came from:
 * "exact" (tuned for this task on this device), "transfer" (predicted from
 * the most similar tuned tasks), "default" (the template's default) or
 * "fallback" (the default, after the chosen config failed verification; the
 * note says why). Borrowed strings, valid as long as the kernel. */
const char *tess_kernel_config(const tess_kernel *k);
const char *tess_kernel_origin(const tess_kernel *k);
const char *tess_kernel_note(const tess_kernel *k);
typedef struct tess_dispatch_options {
    int online_budget;       /* evaluations of light tuning for a task with no record
                                on this device (the result is stored: the next call is
                                an exact hit); 0: none */
    double online_seconds;   /* or a time limit for it; 0: none */
    int verify;              /* verify the kernel's first use in this process against
                                the reference on random inputs (default 1) */
} tess_dispatch_options;

tess_dispatch_options tess_dispatch_options_default(void);

/* Run-time dispatch: the kernel for a task on this device, cached in the
 * context, so calls after the first cost a hash lookup. The first call
 * chooses the config (exact record, else transfer prediction, else default;
 * with an online budget it tunes first), compiles it once (or loads it from
 * the disk cache) and, with verify, checks it on random inputs, falling back
 * to the default config on a mismatch. The kernel belongs to the context
 * (do not destroy it). With the cuda backend, tune before the first kernel
 * runs in a process: tuning forks processes that cannot use a CUDA context
 * created before. */
tess_status tess_dispatch(tess_context *ctx, const char *op, const int64_t *shape, int ndim,
                          const char *dtype, const char *backend, const tess_dispatch_options *opt,
                          tess_kernel **out);

/* Runs the kernel on the caller's arrays, in the operator's buffer order
 * (`tessera ops` lists it): host pointers for cpu, device pointers for cuda. */
tess_status tess_kernel_run(tess_kernel *k, void *const *arrays, int narrays);
void tess_kernel_destroy(tess_kernel *k);

/* Kernel arguments set per run. A kernel may take scalar arguments (a
 * coefficient, a time step) that start at the values its generator chose,
 * and extents it takes at run time instead of compiling them in, so one
 * binary serves every length. A value set stays for the kernel's later runs
 * (a kernel from tess_dispatch is shared through the context). */

/* Sets the scalar argument `name`, converted to its type; TESS_ERR_ARG for
 * a name the kernel does not take (the message lists those it takes) or a
 * value an integer argument cannot hold exactly. */
tess_status tess_kernel_set_scalar(tess_kernel *k, const char *name, double value);
/* Sets the extent `name` ("n", "x") of the following runs; the arrays
 * passed must then have its sizes. Only for an extent the kernel takes at
 * run time, from 1 up to its size in the task the kernel was got for (a
 * capacity: the kernel's tables and scratch are sized by it): TESS_ERR_ARG
 * for one compiled into it, an unknown name or a value outside that range. */
tess_status tess_kernel_set_extent(tess_kernel *k, const char *name, int64_t value);
/* Like tess_kernel_run, but on the caller's stream. cuda: stream is a
 * CUstream the caller owns (NULL: the default stream); the launches are
 * queued and the call returns without waiting (synchronize the stream
 * before reading the outputs). cpu: stream must be NULL, and it runs
 * synchronously. */
tess_status tess_kernel_run_on_stream(tess_kernel *k, void *const *arrays, int narrays, void *stream);

/* Device memory in the kernel's execution context, for the arrays a kernel
 * runs on: device memory for cuda, host memory for cpu. Allocates bytes
 * (TESS_ERR_NOMEM, TESS_ERR_RUNTIME); release with tess_kernel_free, before
 * the kernel is destroyed. Upload copies host to device, download device to
 * host, both complete on return. The memory is not cleared; with
 * TESSERA_POISON=1 in the environment every byte is set to 0xFF (NaN in
 * every floating-point type), to find reads of what was never written. */
tess_status tess_kernel_alloc(tess_kernel *k, size_t bytes, void **ptr);
void tess_kernel_free(tess_kernel *k, void *ptr);
tess_status tess_kernel_upload(tess_kernel *k, void *dst, const void *host, size_t bytes);
tess_status tess_kernel_download(tess_kernel *k, void *host, const void *src, size_t bytes);

/* ---- operators, their buffers and their float64 reference -----------------
 *
 * What a program needs to drive an operator's kernel over many time steps
 * itself (`tessera run` uses nothing else): the buffers of a task, the grid's
 * axes, the ping-pong of time levels, and the reference to compare with. */

/* tess_op_check: whether operator `name` can be used. TESS_OK when it is
 * registered; otherwise a message that says why: TESS_ERR_FORMAT for a
 * stencil file of $TESSERA_STENCIL_PATH defining it that does not parse
 * (file:line:col), TESS_ERR_ARG for a user stencil that takes a built-in's
 * name (refused: the built-in keeps it) and for a name nothing defines (the
 * message then also names the first $TESSERA_STENCIL_PATH failure, such as a
 * directory that does not exist, if there is one). A user stencil
 * file that fails breaks only the commands that need it or the list of all
 * operators: tess_op_check(NULL) returns the first such failure. */
tess_status tess_op_check(const char *name);

enum { TESS_BUFFER_INPUT, TESS_BUFFER_OUTPUT, TESS_BUFFER_SCRATCH, TESS_BUFFER_INOUT };

typedef struct tess_buffer_info {
    char name[24];        /* "u", "coeff", "u_out", ...: netCDF variables of the same names */
    int role;             /* TESS_BUFFER_INPUT, _OUTPUT, _SCRATCH, _INOUT (updated in place) */
    char dtype[8];        /* "f32", "f64" */
    size_t elem_bytes;
    int64_t count;        /* elements */
    int rank;             /* it spans the task's last `rank` axes (a 2D field of a 3D grid: 2) */
    int advances;         /* an output: index of the input it is the next time level of, else -1 */
    int advanced;         /* an input: 1 if an output advances it (state), 0 if not (a coefficient) */
    double lo, hi;        /* an input: the range the operator's test values are drawn from */
} tess_buffer_info;

/* The buffers of op's kernel for a task, in the order tess_kernel_run takes
 * them. At most cap entries are written; *n gets their number. TESS_ERR_ARG
 * (unknown operator, bad shape or dtype, cap too small), or tess_op_check's
 * status. */
tess_status tess_op_list_buffers(const char *op, const int64_t *shape, int ndim, const char *dtype,
                                 tess_buffer_info *out, int cap, int *n);
/* The names the operator gives a task's extents, slowest first ("z", "y",
 * "x" for a 3D stencil; "y", "x" in 2D): the dimensions of its netCDF
 * fields. names[i] gets each ("" for an unnamed extent). */
#define TESS_EXTENT_NAME_MAX 16
tess_status tess_op_extent_names(const char *op, const int64_t *shape, int ndim,
                                 char (*names)[TESS_EXTENT_NAME_MAX]);
/* Compulsory bytes of one application, its operations, and the relative
 * tolerance of its outputs (|got - ref| <= tol * (1 + |ref|) per step).
 * Any pointer may be NULL. */
tess_status tess_op_counts(const char *op, const int64_t *shape, int ndim, const char *dtype,
                           double *bytes, double *flops, double *tolerance);
/* Fills input buffer `index` (buffer order) with the inputs the operator is
 * verified on: its own generator (valid cell kinds, a neighbour list, ...),
 * or uniform random in [-1, 1]; the same seed gives the same values.
 * host holds the buffer's count elements of its dtype. */
tess_status tess_op_fill_input(const char *op, const int64_t *shape, int ndim, const char *dtype, int index,
                               void *host, uint64_t seed);
/* After one application: each output trades places with the input it
 * advances (arrays in buffer order), so that arrays again holds the inputs
 * of the next step. */
void tess_op_advance(const tess_buffer_info *bufs, int n, void **arrays);

/* Called after each step of a multi-step run. */
typedef void (*tess_step_fn)(long done, long steps, double elapsed_s, void *user);

/* Runs `steps` applications of op's float64 reference on host arrays: the
 * buffers of the task of dtype "f64" (tess_op_list_buffers), in order, inputs
 * filled; calls tess_op_advance after each, so arrays ends holding the last
 * time level in the inputs' places. The reference is exact and deterministic
 * (every point computed in double on all cores the same way whatever their
 * number). progress may be NULL. */
tess_status tess_reference_steps(const char *op, const int64_t *shape, int ndim, void **arrays, int narrays,
                                 long steps, tess_step_fn progress, void *user);

typedef struct tess_comparison {
    double max_diff;      /* largest |got - ref| / (1 + max |ref|); INFINITY with non-finite points */
    int64_t worst;        /* index of the first non-finite point, else of the largest difference */
    int64_t nonfinite;    /* points where got is NaN or infinite */
    int64_t ref_nonfinite;/* points where the reference is */
} tess_comparison;

/* Compares n values of dtype ("f32", "f64") with a float64 reference.
 * A NaN or infinity in either makes max_diff infinite: a comparison never
 * passes over them. */
tess_status tess_reference_compare(const char *dtype, const void *got, const double *ref, int64_t n,
                                   tess_comparison *out);

/* ---- a stencil run split into slabs --------------------------------------
 *
 * A multi-step stencil run whose grid is cut along its slowest axis into one
 * slab per rank, each rank holding its slab and halos as deep as the
 * stencil's reach along that axis times the steps one application fuses
 * (times exchange_every). After an exchange of halos is posted, each rank
 * computes the planes that need no halo (its interior); once the halos have
 * arrived, the planes next to its neighbours (its boundary). Each launch is
 * the task's kernel on a window of consecutive planes, so every point is
 * computed by the same code as in a run of the whole grid: for stencils
 * whose arithmetic does not depend on the config, the split run equals the
 * single run bit for bit. With the cuda backend a GPU's interior kernel runs
 * while NCCL moves the halos on a stream of their own. */

enum { TESS_SPLIT_POST, TESS_SPLIT_INTERIOR, TESS_SPLIT_WAIT, TESS_SPLIT_BOUNDARY, TESS_SPLIT_WHOLE };
typedef void (*tess_split_event_fn)(int rank, int event, long application, void *user);

typedef struct tess_split_options {
    int ranks;               /* slabs, 1 to TESS_SPLIT_MAX_RANKS (default 2) */
    const char *transport;   /* NULL: the backend's. cpu: "local", the ranks in this process
                                one after another; cuda: "nccl", each rank a process of its
                                own on its own GPU (CUDA_VISIBLE_DEVICES: the rank's entry of
                                the list, else the GPU of its number), halos through NCCL */
    int overlap;             /* 1: interior while the halos are in flight, then the
                                boundary planes (default); 0: exchange, then each slab whole */
    int halo_chunks;         /* messages each halo is sent in (default 1) */
    int exchange_every;      /* applications between exchanges, the halo that much deeper (default 1) */
    tess_split_event_fn on_event;   /* optional: each post, wait and launch, in order (called
                                       in this process: the local transport only) */
    void *user;
} tess_split_options;

tess_split_options tess_split_options_default(void);
/* Sets o's overlap parameters from a config of their space,
 * "overlap=none|split,halo_chunks=1|2|4|8,exchange_every=1|2|4|8" (any may
 * be left out: the default), for a split of op's task into o->ranks slabs:
 * TESS_ERR_ARG naming the parameter or value, or the constraint (a halo
 * exchange_every applications deep must fit the thinnest slab). */
tess_status tess_split_options_parse(const char *op, const int64_t *shape, int ndim, const char *text,
                                     tess_split_options *o);

#define TESS_SPLIT_MAX_RANKS 64

typedef struct tess_split_report {
    int ranks;
    char axis[TESS_EXTENT_NAME_MAX];   /* the split axis ("z") */
    char transport[16];
    int depth;                         /* halo planes */
    int64_t lo[TESS_SPLIT_MAX_RANKS], hi[TESS_SPLIT_MAX_RANKS];   /* the planes each rank owns, [lo, hi) */
    long exchanges, messages;
    double halo_bytes;                 /* sent in all */
    double seconds, wait_seconds;      /* the applications (the slowest rank), and the waits for halos */
    int kernels;                       /* distinct window shapes compiled */
} tess_split_report;

/* Checks a split of op's task before anything runs: op a stencil whose
 * slowest axis is not periodic, a backend and transport that can split,
 * and a slab thick enough for the halo on every rank; TESS_ERR_ARG with a
 * message that says what and where. report (may be NULL) gets the plan. */
tess_status tess_split_check(const char *op, const int64_t *shape, int ndim, const char *backend,
                             const tess_split_options *o, tess_split_report *report);
/* Runs `applications` applications of op's dispatched kernel split as
 * tess_split_check allows. fields are the whole grid's arrays in buffer
 * order (tess_op_list_buffers), host memory, outputs holding the fixed
 * boundary values (copies of the inputs they advance), as for a run of the
 * whole grid. On return each input that an output advances holds the last
 * time level and the output the one before, as after tess_op_advance on
 * the whole grid. Each window's kernel is tess_dispatch's for its shape
 * (tuned, predicted or default; dispatched before the first runs). report
 * may be NULL. */
tess_status tess_split_run(tess_context *ctx, const char *op, const int64_t *shape, int ndim, const char *dtype,
                           const char *backend, const tess_split_options *o, void *const *fields, int nfields,
                           long applications, tess_split_report *report);

/* ---- fields in netCDF files (CF conventions) ----------------------------- */

/* Reads variable `name` of the netCDF file at path into data (dtype "f32" or
 * "f64"). The variable must have ndim dimensions of the given extents
 * (slowest first), each named dims[i] or with a coordinate variable whose CF
 * `axis` attribute is dims[i] in upper case ("Z" for "z"). Floating-point
 * variables are read as stored; integer ones only when CF-packed (with
 * scale_factor or add_offset), as value * scale_factor + add_offset. A point
 * that holds the variable's _FillValue or missing_value (without either, the
 * netCDF default fill value of its type) is missing, and a field with missing
 * points is refused, saying how many. TESS_ERR_IO when the file cannot be
 * read, TESS_ERR_FORMAT for anything else wrong, the message naming the
 * file, the variable and the reason. */
tess_status tess_netcdf_read(const char *path, const char *name, const char *dtype, int ndim,
                             const int64_t *shape, const char *const *dims, void *data);

typedef struct tess_netcdf_var {
    const char *name;
    const char *long_name;  /* NULL: the name */
    const char *dtype;      /* "f32" or "f64" */
    int rank;               /* spans the grid's last rank axes (0: all) */
    const void *data;       /* slowest axis first */
} tess_netcdf_var;

/* Writes variables on one grid (ndim axes named dims, slowest first, with
 * index coordinate variables and CF axis attributes) as a new netCDF-4 file,
 * replacing path. TESS_ERR_IO with the file's name and netCDF's reason. */
tess_status tess_netcdf_write(const char *path, int ndim, const int64_t *shape, const char *const *dims,
                              const tess_netcdf_var *vars, int nvars, const char *title, const char *history);
/* Whether a file can be written at path, without creating anything: its
 * directory exists and is writable, and an existing file is a writable
 * regular file. TESS_ERR_IO naming the path and the reason. */
tess_status tess_output_check(const char *path);

/* ---- what is available here ------------------------------------------ */

#define TESS_KEY_LEN 320         /* task and device keys, with their NUL */
#define TESS_SHAPE_MAX 8         /* extents of a task at most */
#define TESS_DEVICE_CEILINGS 7   /* ceilings of a device: 2 bandwidths, 5 compute rates */

/* The calls below that need the registries call tess_init themselves. */

typedef struct tess_op_info {
    const char *name, *family, *summary;   /* borrowed, valid for the process */
    const char *default_shape;             /* "256x256x256" */
    char backends[64];                     /* "cpu,cuda" */
    const char *extents;                   /* names of the extents, slowest first: "z,y,x" (borrowed) */
    char attrs[256];                       /* declared attributes with their defaults: "eps=1e-05" ("" if none) */
} tess_op_info;

/* Operator i (0, 1, ...) in registration order; TESS_ERR_NOTFOUND past the end. */
tess_status tess_op_info_at(int i, tess_op_info *out);
/* The operator of that name; TESS_ERR_ARG (naming it) when there is none. */
tess_status tess_op_info_find(const char *name, tess_op_info *out);

typedef struct tess_strategy_info {
    const char *name, *summary;            /* borrowed, valid for the process */
    int is_default;                        /* the strategy tess_tune uses when none is named */
} tess_strategy_info;

/* Strategy i (0, 1, ...); TESS_ERR_NOTFOUND past the end. */
tess_status tess_strategy_info_at(int i, tess_strategy_info *out);

/* Parses "ZxYxX" (slowest extent first) into shape[0..*ndim) (room for
 * TESS_SHAPE_MAX); TESS_ERR_ARG with a message when malformed or out of range. */
tess_status tess_shape_from_text(const char *text, int64_t *shape, int *ndim);
/* Writes the shape as "ZxYxX". */
tess_status tess_shape_to_text(const int64_t *shape, int ndim, char *buf, size_t len);

/* A backend's device, as probed here. */
typedef struct tess_device_info {
    char backend[16];                      /* "cpu", "cuda" */
    int available;                         /* 0: the backend cannot run here; why says why */
    char why[512];
    char key[TESS_KEY_LEN];                /* the device's key in the records */
    char name[128], arch[32];
    int units;                             /* cores, or streaming multiprocessors */
    int cc_major, cc_minor;                /* compute capability (0 on CPUs) */
    double clock_mhz, mem_clock_mhz;
    int mem_bus_width;
    int64_t mem_bytes, cache_bytes;        /* memory; last-level cache (L2 on GPUs) */
    int64_t smem_per_block, smem_per_block_optin, smem_per_sm;
    int regs_per_block, regs_per_sm, max_threads_per_block, max_threads_per_sm, warp_size;
    /* The calibrated ceilings in the records, one per unit: bandwidths
     * (copy, read) and compute rates (FMA, tensor cores). */
    struct {
        const char *label;                 /* "copy bandwidth", "fp32 FMA rate", ... (static) */
        const char *unit;                  /* "GB/s" or "GFLOP/s" */
        double value;                      /* 0: not calibrated, or the unit is not present */
        int measured;                      /* 1 once calibrated: a value of 0 then means not present */
        char calibrated_at[32];            /* ISO 8601, UTC; "" if never */
    } ceiling[TESS_DEVICE_CEILINGS];
} tess_device_info;

/* The device of backend i (0, 1, ...), its ceilings read from ctx's records
 * (ctx may be NULL: none). A backend that cannot run here is TESS_OK with
 * available 0 and the reason; TESS_ERR_NOTFOUND past the end. */
tess_status tess_device_info_at(tess_context *ctx, int i, tess_device_info *out);
/* Measures the ceilings of backend's device (NULL: the best present) with
 * the backend's calibration kernels in an isolated process, stores them in
 * ctx's records and fills out with the device and its new ceilings. */
tess_status tess_device_calibrate(tess_context *ctx, const char *backend, tess_device_info *out);

/* ---- the records -------------------------------------------------------- */

/* One tuned task on one device. */
typedef struct tess_db_task {
    char task[TESS_KEY_LEN];               /* "heat3d:f32:256x256x256" */
    char device[TESS_KEY_LEN];
    int evaluations, ok;                   /* results stored; how many ran correctly */
    double best_ms;                        /* INFINITY when none ran correctly */
    char best_config[1024];
} tess_db_task;

/* Returns non-zero to stop the listing. */
typedef int (*tess_db_task_fn)(const tess_db_task *t, void *user);
/* Calls fn for every task and device with results, by task then device key. */
tess_status tess_db_list(tess_context *ctx, tess_db_task_fn fn, void *user);
/* The records of one task on a backend's device (probed here; backend NULL:
 * the best present for the operator, as tess_tune chooses), filled as
 * tess_db_list fills them: the task's and the device's keys, and
 * evaluations 0 and best_ms INFINITY when the task has no results there.
 * Writes nothing; fails as tess_tune would on the same request (an unknown
 * operator or attribute, a bad shape or dtype, a backend not present). */
tess_status tess_db_task_get(tess_context *ctx, const char *op, const int64_t *shape, int ndim,
                             const char *dtype, const char *backend, tess_db_task *out);
/* The device key in the records that is text, or the only one containing
 * it, copied to key; TESS_ERR_NOTFOUND when none matches, TESS_ERR_ARG when
 * several do. */
tess_status tess_db_find_device(tess_context *ctx, const char *text, char *key, size_t len);
/* Writes the results as JSON lines (one result per line, with its task,
 * device descriptor and config) to out, filtered by exact task and device
 * keys (NULL: all); *count: the lines written. */
tess_status tess_db_export(tess_context *ctx, FILE *out, const char *task, const char *device,
                           int *count);
/* Writes a kernel library (the best config of every task tuned on the
 * device, its descriptor and the tessera version; one JSON document) to
 * out; *count: its entries. TESS_ERR_NOTFOUND when the device has no records. */
tess_status tess_db_export_library(tess_context *ctx, const char *device, FILE *out, int *count);
/* Merges a JSON-lines file or a kernel library (told apart by content);
 * results already present are skipped and *count says how many were added.
 * A malformed file fails with its line, having added nothing. */
tess_status tess_db_import(tess_context *ctx, const char *path, int *count);

/* ---- generated source ------------------------------------------------- */

typedef struct tess_source_options {
    const char *config;      /* "name=value,..."; NULL: the best recorded, else the default */
    /* cuda: generate for this architecture ("sm_90") with a typical device
     * of it, so no GPU is needed; NULL: the device probed here. */
    const char *arch;
    int compile;             /* also compile it (cuda: with NVRTC) and report the outcome */
} tess_source_options;

typedef struct tess_source {
    char task[TESS_KEY_LEN], device[TESS_KEY_LEN];
    char backend[16];
    char config[1024];
    char origin[160];        /* "best recorded, 0.12 ms", "given", "the template's default" */
    char options[256];       /* extra compiler options */
    int nlaunches;
    struct {
        char entry[64];
        unsigned grid[3], block[3], shared_bytes;   /* cuda only */
    } launch[4];
    char *code;              /* the exact source; owned, tess_source_free */
    /* With compile: 1 when it compiled, and the compiler's log or error
     * (owned, may be NULL). The binary goes to the compile cache. */
    int compiled;
    char *compile_log;
} tess_source;

/* The config tessera would run for a task (or the one given) and its
 * generated source. ctx may be NULL (no records: the template's default).
 * A config that is malformed, unknown or illegal is TESS_ERR_ARG; a compile
 * error with compile set is TESS_OK with compiled 0 and the log. */
tess_status tess_source_get(tess_context *ctx, const char *op, const int64_t *shape, int ndim,
                            const char *dtype, const char *backend, const tess_source_options *opt,
                            tess_source *out);
/* Frees what tess_source_get allocated; NULL-safe. */
void tess_source_free(tess_source *s);

/* ---- the compile cache ------------------------------------------------ */

/* Compiled kernels are kept by a hash of their source, options and
 * compiler in $TESSERA_CACHE, else $XDG_CACHE_HOME/tessera, else
 * ~/.cache/tessera: about 17 KB per CPU kernel (its source and shared
 * object), a few tens of KB per CUDA cubin. */
typedef struct tess_cache_info {
    char dir[4096];
    int64_t files, bytes;
} tess_cache_info;

/* The cache's directory and the kernel files in it; creates nothing. */
tess_status tess_cache_info_get(tess_cache_info *out);
/* Removes kernel files, least recently used first, until at most
 * keep_bytes remain (0: all of them); fills removed and kept (either may be
 * NULL). Only files named like tessera's kernels are touched. A tuner
 * running meanwhile compiles again what it misses. */
tess_status tess_cache_clean(int64_t keep_bytes, tess_cache_info *removed, tess_cache_info *kept);

/* ---- search benchmarks on recorded spaces ---------------------------- */

/* A recorded tuning space opened for replay: a Kernel Tuner cache file, a
 * T4 results file or a `tessera record` export (gzip or plain). */
typedef struct tess_recording tess_recording;

typedef struct tess_recording_info {
    char name[128];              /* file name without directories and extensions */
    size_t configs, ok;          /* recorded (legal) configs, and of those the successful */
    double best_ms;              /* the optimum */
    size_t within_5pct, within_1pct;   /* ok configs within 5% / 1% of the optimum */
} tess_recording_info;

/* Opens a recording; TESS_ERR_FORMAT naming the file when it is malformed or
 * holds no successful config. On failure *out is NULL. */
tess_status tess_recording_open(const char *path, tess_recording **out);
void tess_recording_close(tess_recording *r);   /* NULL-safe */
void tess_recording_info_get(const tess_recording *r, tess_recording_info *out);

/* Expected evaluations of uniform random sampling without replacement until
 * one of K good configs among N is drawn: (N + 1) / (K + 1). */
double tess_bench_random_expectation(size_t n, size_t k);
/* The exact median of the same count: the fewest evaluations t with
 * P(T <= t) >= 1/2, where P(T > t) = C(N-t, K) / C(N, K). INFINITY when K is 0. */
double tess_bench_random_median(size_t n, size_t k);

#define TESS_BENCH_NBUDGETS 4
/* Budgets at which the mean optimum/best ratio is reported. */
extern const int tess_bench_budgets[TESS_BENCH_NBUDGETS];   /* 20, 50, 100, 200 */

typedef struct tess_bench_options {
    int budget;                  /* evaluations per run */
    int repeats;                 /* runs per strategy and space, seeds seed, seed+1, ... */
    int batch;                   /* configs asked for per propose call */
    uint64_t seed;
} tess_bench_options;

tess_bench_options tess_bench_options_default(void);   /* 200, 20, 8, 1 */

/* One strategy on one recording, over all repeats. */
typedef struct tess_bench_result {
    char space[128];
    char strategy[32];
    int runs;
    int budget;
    double evals_to_5pct_median; /* INFINITY when most runs never got there */
    double evals_to_1pct_median;
    int reached_5pct, reached_1pct;   /* runs that got there within the budget */
    double random_expected_5pct, random_expected_1pct;
    double random_median_5pct, random_median_1pct;
    double score_at[TESS_BENCH_NBUDGETS];   /* mean optimum/best; NAN past the budget */
    double *curve;               /* mean optimum/best after each evaluation, budget entries (owned) */
    double propose_ms_max;       /* slowest propose call seen */
    double seconds;              /* wall time of all runs */
} tess_bench_result;

/* Runs the named strategy o->repeats times on the recording through the
 * search loop tuning uses (the template's default first when the recording
 * names it). TESS_ERR_ARG for an unknown strategy (the message lists the
 * known ones); TESS_ERR_INTERNAL when the strategy proposes a config twice,
 * an illegal one or more than asked. Free the result with
 * tess_bench_result_free. */
tess_status tess_bench_recording(tess_recording *r, const char *strategy, const tess_bench_options *o,
                                 tess_bench_result *out);
void tess_bench_result_free(tess_bench_result *r);

/* Writes the convergence curves of results for one space as an SVG plot. */
tess_status tess_bench_write_svg(const char *path, const char *title, const tess_bench_result *results, int n);

typedef struct tess_transfer_bench_result {
    char source[128], target[128];
    int runs, budget, nwarm, npriors;
    double cold_median;          /* evaluations to within 5%; INFINITY if most runs never got there */
    double warm_median;
    double best_only_median;     /* with only the source's best config reused, then a cold search */
    double cold_median_1pct, warm_median_1pct, best_only_median_1pct;   /* the same to within 1% */
    double best_only_ratio;      /* target optimum / time of the source's best config on the target */
    double target_optimum_ms;
    double random_expected;      /* uniform random sampling's exact expectation */
} tess_transfer_bench_result;

/* Cold against warm searches: runs `strategy` `repeats` times (seeds
 * 1..repeats) on the target recording in each of three modes: cold; warm,
 * from up to `top` configs of the source recording with its fastest
 * measurements as cost-model priors (the warm start tuning builds); and from
 * the source's best config alone. */
tess_status tess_transfer_bench(const char *source_path, const char *target_path, const char *strategy,
                                int repeats, int budget, int top, tess_transfer_bench_result *out);

#ifdef __cplusplus
}
#endif
#endif
