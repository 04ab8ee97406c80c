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

#include <stddef.h>
#include <stdint.h>

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

typedef struct tess_context tess_context;

/* Opens the records database at db_path (NULL: $TESSERA_DB, else
 * $XDG_DATA_HOME/tessera/records.db) and registers the built-in operators,
 * strategies and backends. */
tess_status tess_open(tess_context **ctx, const char *db_path);
void tess_close(tess_context *ctx);

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
    /* The extra error, relative to the float64 reference, that results may
     * have (as the operator measures it); > 0 adds the operator's shortcut
     * parameters (fast intrinsics, approximations with guarded exact paths)
     * to the search, each kept only when it passes on random and on typical
     * inputs. It is the task's attribute error_budget, so shortcut results
     * are recorded under their own task. 0: exact variants only. */
    double error_budget;
    tess_progress_fn progress;  /* called after each result; may be NULL */
    void *progress_user;
} tess_tune_options;

tess_tune_options tess_tune_options_default(void);

typedef struct tess_tune_report {
    char best_config[512];   /* "name=value,..." */
    double best_ms;          /* median time of the best config */
    double best_gbps, best_gflops;
    double default_ms;       /* the template's default config, measured in the same run (0 if failed) */
    double ceiling_gbps, ceiling_gflops;  /* the device's calibrated ceilings (0 if not calibrated) */
    int evaluations;
    double elapsed_s;        /* wall-clock time of the search */
    int status_counts[6];    /* indexed by tess_outcome */
    char stop_reason[96];
    char device[320];        /* device key */
    int warm_configs;        /* configs taken from similar tasks */
    char transfer_from[1024];/* the prior tasks used, with their similarity ("" if none) */
} tess_tune_report;

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

#ifdef __cplusplus
}
#endif
#endif
