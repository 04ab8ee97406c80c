/*
 * backend.h - the interface between the evaluator and the hardware.
 *
 * A backend compiles generated source to a binary, and runs binaries on
 * buffers it owns. Compilation happens in a pool of worker processes
 * (compile_pool.h); execution happens in an isolated runner process
 * (runner.h) that owns the backend context, so a kernel that faults or hangs
 * never takes the tuner down. The same ops also run a chosen kernel inside
 * a user's process (tess_kernel_run).
 *
 * Backends register by name; "cpu" is always present, "cuda" when the CUDA
 * driver and NVRTC can be loaded at run time.
 */
#ifndef TESS_BACKEND_H
#define TESS_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include "device.h"
#include "op.h"

/* A compiled kernel: a shared object's path (cpu) or a cubin (cuda). */
typedef struct tess_blob {
    void *data;
    size_t size;
} tess_blob;

void tess_blob_free(tess_blob *b);

/* Resource data of a loaded kernel (first launch); -1 where unknown. */
typedef struct tess_kernel_metrics {
    int registers;             /* per thread */
    int smem_static;           /* bytes per block */
    int smem_dynamic;
    int local_bytes;           /* per thread; > 0 means spills or local arrays */
    double occupancy;          /* active warps / max warps per SM, 0..1 */
    double power_w;            /* average board power while timing; -1 if unknown */
    /* The largest error verification saw, over every output and input set:
     * max |out - ref| / (scale + |ref|), the unit of the tolerance; -1 if
     * unknown (not verified elementwise, or not verified yet). */
    double max_error;
} tess_kernel_metrics;

/* One kernel's outcome in a batch compilation. */
typedef struct tess_compile_result {
    tess_status status;
    tess_blob binary;          /* owned by the caller when status is TESS_OK */
    char *log;                 /* compiler output (malloc'd, may be NULL) */
    /* Added to every entry name of the source to find its kernels in the
     * binary ("" when the names are unchanged). */
    char symbol_suffix[16];
} tess_compile_result;

typedef struct tess_backend_ops {
    const char *name;          /* "cpu" */
    const char *summary;
    int default_batch;         /* candidates per batch that keep the compiler busy */
    /* Timing needs the host's cores (cpu): the evaluator then never compiles
     * while a candidate is being timed. */
    bool exclusive_timing;

    /* Whether the backend can run here; fills the descriptor (not the
     * ceilings). Must not leave state that breaks fork(): no GPU context. */
    tess_status (*probe)(tess_device *dev);
    /* Compiles one kernel. Runs in a compile worker process. On a compile
     * error returns TESS_ERR_COMPILE with the compiler's log in *log. */
    tess_status (*compile)(const tess_device *dev, const tess_kernel_source *src,
                           tess_blob *bin, char **log);
    /* Optional: compiles n kernels at once, which amortizes the compiler's
     * fixed cost per program, and fills out[0..n). Each kernel's outcome is
     * its own: a batch that fails is compiled again kernel by kernel. */
    void (*compile_batch)(const tess_device *dev, const tess_kernel_source *src, int n,
                          tess_compile_result *out);

    /* Execution context, opened in the process that runs kernels. */
    tess_status (*open)(const tess_device *dev, void **ctx);
    void (*close)(void *ctx);
    tess_status (*alloc)(void *ctx, size_t bytes, void **dptr);
    void (*release)(void *ctx, void *dptr);
    tess_status (*upload)(void *ctx, void *dptr, const void *host, size_t bytes);
    tess_status (*download)(void *ctx, void *host, const void *dptr, size_t bytes);
    /* Sets every byte to 0xFF: NaN in f16, bf16, f32 and f64, so elements a
     * kernel leaves unwritten are found. */
    tess_status (*poison)(void *ctx, void *dptr, size_t bytes);
    tess_status (*load)(void *ctx, const tess_blob *bin, const tess_kernel_source *src,
                        void **module, tess_kernel_metrics *metrics);
    void (*unload)(void *ctx, void *module);
    /* Runs every launch of the kernel once and waits for completion. */
    tess_status (*run)(void *ctx, void *module, void *const *dbufs, int nbufs);
    /* Takes `reps` samples of `launches` runs of the kernel back to back and
     * stores each sample's time per run in ms. Run k (counting over all the
     * samples) uses buffer set k % nsets (rotation defeats warm caches). May
     * fill metrics->power_w from readings taken while timing. */
    tess_status (*time)(void *ctx, void *module, void *const *const *dbuf_sets, int nsets,
                        int nbufs, int reps, int launches, double *ms, tess_kernel_metrics *metrics);
    /* Measures every ceiling of the device (device.h): rates[k] for
     * tess_ceiling_kind k in GB/s or GFLOP/s, 0 for a unit it does not have. */
    tess_status (*calibrate)(void *ctx, double *rates);
    /* Optional: compares n elements of an output with a reference, both in
     * the backend's memory, by the test of tess_problem_verify. counts[0]:
     * unwritten elements (NaN where the reference is not), counts[1]: the
     * first one's index; counts[2], counts[3]: the same for wrong elements
     * (INT64_MAX when there is none); *max_error: the largest error of an
     * element, as tess_problem_error measures it. TESS_ERR_ARG for a dtype
     * it cannot compare (cuda: other than f32, f64, bf16, f16): the caller
     * then compares on the host. */
    tess_status (*compare)(void *ctx, const void *got, const void *want, tess_dtype dtype, int64_t n,
                           double tol, double scale, int64_t counts[4], double *max_error);
    /* Optional: sets scalar argument `index` of a loaded module (value has
     * the type the source declared for it) for the runs that follow; a
     * module starts with the values emit chose. TESS_ERR_ARG for an index
     * or type that does not match the source. NULL: scalars keep emit's values. */
    tess_status (*set_scalar)(void *ctx, void *module, int index, const tess_scalar *value);
    /* Optional: queues every launch of the kernel on `stream` (cuda: a
     * CUstream the caller owns; NULL: the default stream) and returns
     * without waiting. NULL: the backend runs only synchronously (run). */
    tess_status (*run_async)(void *ctx, void *module, void *const *dbufs, int nbufs, void *stream);
} tess_backend_ops;

tess_status tess_backend_register(const tess_backend_ops *ops);
const tess_backend_ops *tess_backend_find(const char *name);
int tess_backend_count(void);
const tess_backend_ops *tess_backend_at(int i);
/* The preferred available backend for an operator (cuda before cpu). */
tess_status tess_backend_best(const tess_op *op, const tess_backend_ops **ops, tess_device *dev);

/* 32 hex digits identifying the concatenation of parts (source, options,
 * compiler version, architecture), for cache file names. */
void tess_cache_key(const char *const *parts, int n, char out[33]);

/* Directory of the compiled-kernel cache: $TESSERA_CACHE, else
 * $XDG_CACHE_HOME/tessera, else ~/.cache/tessera; created if missing. */
tess_status tess_cache_dir(char *buf, size_t len);
/* Whether the cache directory exists (or can be made) and can be written,
 * with a message naming it when not: checked before a search, whose every
 * candidate would otherwise fail to compile. */
tess_status tess_cache_check(void);

#endif
